#!/usr/bin/env python3
"""Browser tests of an open gallery following the library (issue 28, item 8), in headless
Chromium, on 60 photos (Landscape_1.jpg, which has no EXIF date, so each sorts by its file time,
under 60 names an hour apart).

- the_open_page_follows_the_library: with the page open at the top, a photo in view is deleted
  and a new one (the newest) added on disk; within the page's refresh period (10 s) the deleted
  one's cell is gone, the new one is the first cell, and the header counts 60 photos, with no
  reload. Then, scrolled down the grid with the view's top inside a row, four more new photos are
  added and the page is shown again (visibilitychange): the cell at the top of the view stays
  where it was on screen, though its index moved by four (a row and a cell).

Run through Tests/Browser/run.sh, or alone: gallery_follow_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import time

from harness import PHOTOS, Server, browser, check, main, wait_for
from gallery_grid_test import Page

SOURCE = os.path.join(PHOTOS, "Landscape_1.jpg")


def sixty_photos(library):
    now = time.time()
    for i in range(60):
        path = os.path.join(library, "p%02d.jpg" % i)
        shutil.copyfile(SOURCE, path)
        os.utime(path, (now - 3600 * (i + 1), now - 3600 * (i + 1)))


def add_photo(server, name, seconds_ago=0):
    incoming = os.path.join(server.library, ".incoming")
    shutil.copyfile(SOURCE, incoming)
    os.utime(incoming, (time.time() - seconds_ago, time.time() - seconds_ago))
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


TESTS = [the_open_page_follows_the_library]

if __name__ == "__main__":
    main(TESTS)
