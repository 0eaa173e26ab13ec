#!/usr/bin/env python3
"""Browser tests of when the gallery asks for what (issue 28), in headless Chromium.

- a_fling_asks_only_for_the_cells_it_stops_on: on a phone (390x844, 3 columns), a fling scripted
  as iOS scrolls one (a flick at 9,000 px/s slowing by 0.998 a ms, each frame) over 2,000
  photos; once it stopped, the thumbnail requests it caused are at most 2 per cell in view at
  the end (the cells a row beyond each edge of the view load too), and at most 10 were for
  cells it only flew past (neither in view nor a row from it at the end). Typically 1.3 and 0;
  the room is for a machine so loaded that a frame stalls for 100 ms mid-fling, which the page
  takes for a stop (main's gallery: 4.3 to 4.5 a cell, 36 to 49 flown past).
- a_503_listing_is_asked_again_soon: the page's first /assets answers 503 index_building with
  Retry-After: 1 (a fresh index's first scan; answered by a wrapper of the page's fetch, so it
  does not depend on how fast thumbd scans): the page asks again within 700 ms of the 503
  (150 ms and a frame; the room is for a loaded machine), not a second after it, and shows the grid.

Run through Tests/Browser/run.sh, or alone: gallery_loading_test.py PATH-TO-THUMBD.
"""

import time

from harness import NO_BACKFILL, Server, at_end, browser, check, main, wait_for
from gallery_grid_test import Page, photo_library
from gallery_layout_test import as_phone

FLING = """
    const done = arguments[arguments.length - 1], box = document.getElementById('scroller');
    let velocity = arguments[0], last = performance.now(), top = box.scrollTop;   // px/s
    function step(now) {
      const ms = now - last;
      last = now;
      top += velocity * ms / 1000;
      velocity *= Math.pow(0.998, ms);
      box.scrollTop = top;
      if (velocity > 10) requestAnimationFrame(step); else done(box.scrollTop);
    }
    requestAnimationFrame(step);
"""


class Photos:
    shared = None

    @classmethod
    def server(cls, binary):
        if cls.shared is None:
            cls.shared = Server(binary, photo_library(2000), arguments=NO_BACKFILL)
            at_end(cls.shared.stop)
        return cls.shared


def a_fling_asks_only_for_the_cells_it_stops_on(binary, profile):
    server = Photos.server(binary)
    driver = browser(profile)
    try:
        as_phone(driver)
        page = Page(server, driver)
        page.open()
        page.quiet()
        mark = page.mark()
        started = time.time()
        stop = driver.execute_async_script(FLING, 9000)
        flung = time.time() - started
        time.sleep(0.3)
        cells = page.loaded()
        time.sleep(0.5)
        asked = [r for r in page.since(mark, "GET", "/thumbnails/")]
        near = {c["url"].lstrip("/") for c in page.cells() if c["url"]}   # in view, and a row beyond each edge
        passed = [r for r in asked if r["url"].split("//", 1)[1].split("/", 1)[1] not in near]
        aborted = [r for r in asked if r["canceled"]]
        ratio = len(asked) / len(cells)
        print("  fling to %d px in %.1f s: %d thumbnail requests (%d aborted, %d for cells flown past: not in view nor a row from it) for %d cells in view:"
              " %.2f a cell" % (stop, flung, len(asked), len(aborted), len(passed), len(cells), ratio))
        check(stop > 3000, "the fling went only %d px" % stop)
        check(ratio <= 2, "a fling asked %d thumbnails for %d cells in view at its end (%.1f a cell; %d aborted)"
              % (len(asked), len(cells), ratio, len(aborted)))
        check(len(passed) <= 10, "a fling asked for %d thumbnails of cells it flew past" % len(passed))
    finally:
        driver.quit()


# The page's fetch, wrapped before its scripts run: the first /assets answers 503 as a fresh
# index does, 100 ms after it was asked (as from a server starting up: after the page's first
# layout); each /assets is timed.
FIRST_LISTING_503 = """
    window.listingAsked = [];
    const pageFetch = window.fetch.bind(window);
    window.fetch = (url, options) => {
      if (String(url).startsWith('/assets')) {
        window.listingAsked.push(performance.now());
        if (window.listingAsked.length === 1) {
          return new Promise(resolve => setTimeout(() => {
            window.refusedAt = performance.now();
            resolve(new Response(JSON.stringify({error: {code: 'index_building'}}),
                                 {status: 503, headers: {'Retry-After': '1', 'Content-Type': 'application/json'}}));
          }, 100));
        }
      }
      return pageFetch(url, options);
    };
"""


def a_503_listing_is_asked_again_soon(binary, profile):
    server = Photos.server(binary)
    driver = browser(profile)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_LISTING_503})
        page = Page(server, driver)
        page.open()
        asked, refused = page.js("return [window.listingAsked, window.refusedAt]")
        check(len(asked) >= 2, "the listing was asked %d times" % len(asked))
        print("  the listing was asked again %.0f ms after its 503" % (asked[1] - refused))
        check(asked[1] - refused <= 700, "after a 503 (Retry-After: 1) the page asked again %.0f ms later"
              % (asked[1] - refused))
    finally:
        driver.quit()


TESTS = [a_fling_asks_only_for_the_cells_it_stops_on, a_503_listing_is_asked_again_soon]

if __name__ == "__main__":
    main(TESTS)
