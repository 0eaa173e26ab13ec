#!/usr/bin/env python3
"""Browser tests of the gallery's viewer (issue 28, item 5), in headless Chromium, on the layout
tests' library (300 photos, 5 videos).

- a_tapped_photo_opens_whole_and_back_closes_it: on a phone (390x844, touch), a tap on a cell
  shows its photo over the grid at the 1-column grid's size (the listing's versioned URL,
  decoded at the README's size: the whole photo), its placeholder at once; the phone's back
  button closes it and the grid is where it was; swipes and the arrow keys show the neighbours
  (in listing order, replacing the history entry), Escape and a tap close it.

Run through Tests/Browser/run.sh, or alone: gallery_viewer_test.py PATH-TO-THUMBD.
"""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import browser, check, main, wait_for
from gallery_grid_test import Page, expected_size
from gallery_layout_test import Library, as_phone

VIEWER = """
    const viewer = document.getElementById('viewer'), img = document.getElementById('viewer-image');
    if (!viewer) return {open: false};
    const r = img.getBoundingClientRect();
    return {open: !viewer.hidden, state: viewer.dataset.state || null, src: img.getAttribute('src'), alt: img.alt,
            width: img.naturalWidth, height: img.naturalHeight, complete: img.complete,
            box: [r.width, r.height], screen: [innerWidth, innerHeight], history: history.length,
            standIn: document.getElementById('viewer-stand-in').width};
"""


def swipe(driver, x0, y0, x1, y1):
    """A one-finger swipe on the touch screen (DevTools Input.dispatchTouchEvent), in 5 steps."""
    point = lambda x, y: [{"x": x, "y": y, "id": 1}]
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point(x0, y0)})
    for step in range(1, 6):
        driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": point(
            x0 + (x1 - x0) * step / 5, y0 + (y1 - y0) * step / 5)})
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def a_tapped_photo_opens_whole_and_back_closes_it(binary, profile):
    server = Library.server(binary)
    driver = browser(profile)
    try:
        as_phone(driver)
        page = Page(server, driver)
        page.open()
        page.scroll_to(20 * page.geometry()[1])
        cells = page.loaded()
        top = page.scroll_top()
        listing = server.listing(limit=400)["items"]
        tapped = sorted(cells, key=lambda c: c["index"])[4]
        before = page.js("return history.length")
        element = driver.find_element("css selector", '.cell[data-index="%d"]' % tapped["index"])
        ActionChains(driver).move_to_element(element).click().perform()
        opened = page.js(VIEWER)
        check(opened["open"], "a tap on cell %d opened no viewer" % tapped["index"])
        check(opened["standIn"] > 1, "the viewer showed nothing at once (no placeholder)")
        item = listing[tapped["index"]]
        check(opened["src"] == item["thumbnails"]["1"], "the viewer shows %s, the listing's 1-column URL is %s"
              % (opened["src"], item["thumbnails"]["1"]))
        shown = wait_for("the viewer's photo loaded", 15, lambda: (lambda v: v if v["state"] == "loaded" else None)(page.js(VIEWER)))
        wanted = expected_size("1", item["width"], item["height"])
        check(abs(shown["width"] - wanted[0]) <= 1 and abs(shown["height"] - wanted[1]) <= 1,
              "the viewer decoded %dx%d for %s (%dx%d): the 1-column grid gives %s"
              % (shown["width"], shown["height"], item["path"], item["width"], item["height"], wanted))
        check(shown["box"] == [390, 844] and shown["history"] == before + 1,
              "the viewer is %s on a %s screen, history %d → %d" % (shown["box"], shown["screen"], before, shown["history"]))
        # The phone's back button closes it, and the grid is where it was.
        driver.back()
        wait_for("back closed the viewer", 5, lambda: not page.js(VIEWER)["open"])
        check(page.js("return location.pathname") == "/" and abs(page.scroll_top() - top) < 2,
              "after back the page is %s at %s px, not / at %s" % (page.js("return location.pathname"), page.scroll_top(), top))
        # Neighbours: a swipe left shows the next item, ArrowLeft the one before; Escape closes.
        ActionChains(driver).move_to_element(element).click().perform()
        wait_for("the viewer open again", 5, lambda: page.js(VIEWER)["open"])
        viewer = driver.find_element("id", "viewer")
        swipe(driver, 300, 400, 140, 410)
        check(page.js(VIEWER)["src"] == listing[tapped["index"] + 1]["thumbnails"]["1"],
              "a swipe left shows %s, not the next item %s (tapped %s)" % (page.js(VIEWER)["src"],
              listing[tapped["index"] + 1]["thumbnails"]["1"], listing[tapped["index"]]["thumbnails"]["1"]))
        driver.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)
        driver.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)
        check(page.js(VIEWER)["src"] == listing[tapped["index"] - 1]["thumbnails"]["1"],
              "two ArrowLeft show %s, not the item before" % page.js(VIEWER)["src"])
        check(page.js(VIEWER)["history"] == before + 1, "the neighbours added history entries")
        driver.find_element("tag name", "body").send_keys(Keys.ESCAPE)
        wait_for("Escape closed the viewer", 5, lambda: not page.js(VIEWER)["open"])
        # A tap on the photo closes it too.
        ActionChains(driver).move_to_element(element).click().perform()
        wait_for("the viewer open again", 5, lambda: page.js(VIEWER)["open"])
        ActionChains(driver).move_to_element(viewer).click().perform()
        wait_for("a tap closed the viewer", 5, lambda: not page.js(VIEWER)["open"])
    finally:
        driver.quit()


TESTS = [a_tapped_photo_opens_whole_and_back_closes_it]

if __name__ == "__main__":
    main(TESTS)
