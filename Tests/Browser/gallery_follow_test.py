#!/usr/bin/env python3
"""Browser tests of an open gallery following the library (issue 28, item 8), in headless
Chromium, on 60 photos (Landscape_1.jpg, which has no EXIF date, so each sorts by its file time,
under 60 names an hour apart).

- the_open_page_follows_the_library: with the page open at the top, a photo in view is deleted
  and a new one (the newest) added on disk; soon (15 s at most) the deleted one's cell is gone,
  the new one is the first cell, and the header counts 60 photos, with no reload. Then, scrolled down the grid with the view's top inside a row, four more new photos are
  added and the page is shown again (visibilitychange): the cell at the top of the view stays
  where it was on screen, though its index moved by four (a row and a cell).

- the_change_feed_followed_live: the page open and scrolled down the grid (the view's top inside
  a row); a photo is added above the view, one in view deleted, and one in view replaced (another
  file, the same date: the same place, another thumbnail URL), one at a time: each is shown
  within 2 s of the change on disk (the page follows the server's change feed, a long-poll, not a
  timer), with no reload, the scroll position kept (the cell at the top of the view where it was
  on screen), and the other cells in view kept.

Run through Tests/Browser/run.sh, or alone: gallery_follow_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import time

from harness import PHOTOS, Server, browser, check, main, wait_for
from gallery_grid_test import Page

SOURCE = os.path.join(PHOTOS, "Landscape_1.jpg")
OTHER = os.path.join(PHOTOS, "Landscape_6.jpg")   # another file, the same size as shown (EXIF orientation 6)


def sixty_photos(library):
    now = time.time()
    for i in range(60):
        path = os.path.join(library, "p%02d.jpg" % i)
        shutil.copyfile(SOURCE, path)
        os.utime(path, (now - 3600 * (i + 1), now - 3600 * (i + 1)))


def add_photo(server, name, seconds_ago=0, source=SOURCE, mtime=None):
    incoming = os.path.join(server.library, ".incoming")
    shutil.copyfile(source, incoming)
    when = mtime if mtime is not None else time.time() - seconds_ago
    os.utime(incoming, (when, when))
    os.rename(incoming, os.path.join(server.library, name))


def the_open_page_follows_the_library(binary, profile):
    server = Server(binary, sixty_photos)
    driver = browser(profile)
    try:
        page = Page(server, driver)
        cells = page.open()
        wait_for("the header's count", 10, lambda: page.js("return document.getElementById('total').textContent") == "60 photos")
        alts = [c["alt"] for c in sorted(cells, key=lambda c: c["index"])]
        check(alts[:5] == ["p00.jpg", "p01.jpg", "p02.jpg", "p03.jpg", "p04.jpg"], "the first cells: %s" % alts[:5])
        page.js("window.notReloaded = true")
        os.unlink(os.path.join(server.library, "p04.jpg"))
        add_photo(server, "new.jpg")
        changed = time.time()

        def followed():
            shown = sorted(page.cells(), key=lambda c: c["index"])
            names = [c["alt"] for c in shown]
            return shown if names[:1] == ["new.jpg"] and "p04.jpg" not in names and all(
                c["state"] == "loaded" for c in shown if c["visible"]) else None
        shown = wait_for("the deleted photo gone and the new one shown", 15, followed)
        print("  the page followed a delete and an add in %.1f s" % (time.time() - changed))
        check([c["alt"] for c in shown[:6]] == ["new.jpg", "p00.jpg", "p01.jpg", "p02.jpg", "p03.jpg", "p05.jpg"],
              "after the change the first cells are %s" % [c["alt"] for c in shown[:6]])
        check(page.js("return window.notReloaded === true"), "the page was reloaded")
        check(page.js("return document.getElementById('total').textContent") == "60 photos",
              "the header says %r" % page.js("return document.getElementById('total').textContent"))
        page.check_cells([c for c in shown if c["visible"]], "3")

        # Down the grid, the view's top 30 px into a row: two more photos at the top.
        height, pitch, _ = page.geometry()
        page.scroll_to(8 * pitch + 30)
        page.loaded()
        top = min((c for c in page.visible() if c["top"] > -pitch), key=lambda c: (c["top"], c["left"]))
        check(top["top"] < 0, "the view's top is not inside a row: %s" % top)
        for k in range(4):
            add_photo(server, "newer-%d.jpg" % k)
        wait_for("/assets lists 64", 10, lambda: server.listing(limit=0)["total"] == 64)
        page.js("document.dispatchEvent(new Event('visibilitychange'))")
        wait_for("the header's count of 64", 5,
                 lambda: page.js("return document.getElementById('total').textContent") == "64 photos")
        moved = [c for c in page.cells() if c["alt"] == top["alt"]]
        check(moved and moved[0]["index"] == top["index"] + 4, "cell %s was at %d, now %s"
              % (top["alt"], top["index"], [c["index"] for c in moved]))
        check(abs(moved[0]["top"] - top["top"]) <= 1, "cell %s was %.1f px from the view's top, now %.1f"
              % (top["alt"], top["top"], moved[0]["top"]))
        page.check_cells(page.loaded(), "3")
    finally:
        driver.quit()
        server.stop()


def the_change_feed_followed_live(binary, profile):
    server = Server(binary, sixty_photos)
    driver = browser(profile)
    try:
        page = Page(server, driver)
        page.open()
        wait_for("the header's count", 10, lambda: page.js("return document.getElementById('total').textContent") == "60 photos")
        page.js("window.notReloaded = true")
        _, pitch, columns = page.geometry()
        page.scroll_to(6 * pitch + 30)
        before = page.loaded()
        top = min(before, key=lambda c: (c["top"], c["left"]))
        check(top["top"] < 0, "the view's top is not inside a row: %s" % top)

        def scroll_top():
            return page.js("return document.getElementById('scroller').scrollTop")

        def follows(what, changed_on_disk, probe):
            """Waits (10 s at most) for `probe` to hold, then checks it held within 2 s of the change."""
            shown = wait_for(what, 10, probe, interval=0.02)
            took = time.time() - changed_on_disk
            print("  %s: shown in %.2f s" % (what, took))
            check(took <= 2, "%s: shown %.2f s after the change, not within 2 s" % (what, took))
            check(page.js("return window.notReloaded === true"), "the page was reloaded")
            return shown

        def top_kept(cells):
            """The cell at the top of the view (by name) is where it was on screen."""
            again = [c for c in cells if c["alt"] == top["alt"]]
            check(again and abs(again[0]["top"] - top["top"]) <= 1, "cell %s was %.1f px from the view's top, now %s"
                  % (top["alt"], top["top"], [c["top"] for c in again]))

        # Added above the view: every item moves one place on, the view stays on its items.
        add_photo(server, "new.jpg")
        added = time.time()
        cells = follows("a photo added above the view", added,
                        lambda: (lambda cs: cs if [c for c in cs if c["alt"] == top["alt"] and c["index"] == top["index"] + 1]
                                 else None)(page.cells()))
        check(page.js("return itemAt(0) && itemAt(0).path") == "new.jpg", "the first item is %r" % page.js("return itemAt(0) && itemAt(0).path"))
        top_kept(cells)
        moved = [c for c in cells if c["alt"] == top["alt"]]
        check(moved[0]["index"] == top["index"] + 1, "cell %s was at %d, now %d" % (top["alt"], top["index"], moved[0]["index"]))
        seen = {c["alt"] for c in before if c["visible"]}
        now_seen = {c["alt"] for c in cells if c["visible"]}
        check(len(seen & now_seen) >= len(seen) - columns, "the cells in view changed: %s, now %s" % (sorted(seen), sorted(now_seen)))
        page.loaded()

        # Deleted in view: it goes, those after it close up, the scroll position stays.
        shown = sorted(page.visible(), key=lambda c: c["index"])
        gone = shown[len(shown) // 2]
        position = scroll_top()
        os.unlink(os.path.join(server.library, gone["alt"]))
        deleted = time.time()
        cells = follows("a photo in view deleted", deleted,
                        lambda: (lambda cs: cs if cs and all(c["alt"] != gone["alt"] for c in cs) else None)(page.cells()))
        top_kept(cells)
        check(abs(scroll_top() - position) <= 1, "the scroll position was %s, now %s" % (position, scroll_top()))
        after = [c for c in sorted(cells, key=lambda c: c["index"]) if c["index"] >= gone["index"]]
        check(after and after[0]["alt"] == shown[len(shown) // 2 + 1]["alt"],
              "after the deleted %s comes %s" % (gone["alt"], after[0]["alt"] if after else None))

        # Replaced in view (another file, the same date): the same place, another thumbnail URL.
        shown = sorted(page.loaded(), key=lambda c: c["index"])
        replaced = shown[len(shown) // 2]
        position = scroll_top()
        mtime = os.stat(os.path.join(server.library, replaced["alt"])).st_mtime
        add_photo(server, replaced["alt"], source=OTHER, mtime=mtime)
        changed = time.time()
        cells = follows("a photo in view replaced", changed,
                        lambda: (lambda cs: cs if [c for c in cs if c["alt"] == replaced["alt"] and c["url"] and c["url"] != replaced["url"]]
                                 else None)(page.cells()))
        again = [c for c in cells if c["alt"] == replaced["alt"]][0]
        check(again["index"] == replaced["index"], "the replaced photo moved from %d to %d" % (replaced["index"], again["index"]))
        check(abs(scroll_top() - position) <= 1, "the scroll position was %s, now %s" % (position, scroll_top()))
        top_kept(cells)
        page.check_cells(page.loaded(), "3")
    finally:
        driver.quit()
        server.stop()


TESTS = [the_open_page_follows_the_library, the_change_feed_followed_live]

if __name__ == "__main__":
    main(TESTS)
