#!/usr/bin/env python3
"""Browser test of a cold server (issue 28, item 7), in headless Chromium at phone size.

- a_cold_server_shows_no_blank_cell: the page is opened while thumbd is still making its first
  scan of 300 photos (hard links of the corpus' three phone JPEGs whose EXIF preview has the
  photo's shape, and the fixtures' one), with a fresh cache. From the moment the page has its
  listing, every first-screen cell paints its placeholder within 300 ms (from the listing, or
  from the change feed when the preview is read after it). Once the other photos' previews are
  read (after the first screen's renders) and the page has heard of them, a fling of 60 rows: no
  cell that comes into view is ever blank (neither its placeholder nor its thumbnail painted,
  checked at every frame), and once the grid stops, the thumbnail requests it caused are at most
  1.2 per cell in view (the row the grid loads beyond each edge of the view not counted).

Run through Tests/Browser/run.sh, or alone: gallery_cold_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import socket
import time

from harness import PHOTOS, ROOT, Server, browser, check, main, wait_for
from gallery_grid_test import Page
from gallery_layout_test import as_phone

CORPUS = os.environ.get("THUMBD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
# Phone JPEGs whose EXIF thumbnail has the photo's shape (PreviewScanBenchmark's list).
WITH_PREVIEWS = [os.path.join(PHOTOS, "galaxy-s-orientation6-gps-vga.jpg")] + [
    os.path.join(CORPUS, "photos", name) for name in ["google-pixel-12mp-gps.jpg", "iphone5-orientation3-gps.jpg"]
    if os.path.exists(os.path.join(CORPUS, "photos", name))]
COUNT = 300
FIRST_SCREEN_MS = 300

# Before the page's scripts run: when the first /assets page arrived, and when each cell first
# painted its placeholder or its thumbnail (by its index), and the blank cells seen in view at
# each frame while `window.watching`.
WATCH = """
    window.listed = null;
    window.timeline = [];   // [ms, /assets or /assets/changes URL, status, items with a placeholder]
    window.painted = {};
    window.blank = [];
    window.frames = 0;
    const pageFetch = window.fetch.bind(window);
    window.fetch = async (url, options) => {
      const response = await pageFetch(url, options);
      if (String(url).startsWith('/assets?') && response.status === 200 && window.listed === null) window.listed = performance.now();
      if (String(url).startsWith('/assets')) {   // the timeline said when a check fails
        const at = performance.now();
        response.clone().json().then(body => window.timeline.push([Math.round(at), String(url).split('&wait')[0], response.status,
          (body.changed || body.items || []).filter(i => (i.item || i).thumbhash).length])).catch(() => {});
      }
      return response;
    };
    function look() {
      for (const cell of document.querySelectorAll('.cell')) {
        const index = cell.dataset.index;
        if (index !== undefined && window.painted[index] === undefined
            && (cell.dataset.placeholder === 'shown' || cell.dataset.state === 'loaded')) window.painted[index] = performance.now();
      }
      if (window.watching) {
        window.frames++;
        const view = document.getElementById('scroller').getBoundingClientRect();
        for (const cell of document.querySelectorAll('.cell')) {
          const r = cell.getBoundingClientRect();
          if (r.bottom <= view.top || r.top >= view.bottom) continue;
          if (cell.dataset.placeholder !== 'shown' && cell.dataset.state !== 'loaded') window.blank.push(cell.dataset.index);
        }
      }
      requestAnimationFrame(look);
    }
    requestAnimationFrame(look);
"""

FLING = """
    const done = arguments[arguments.length - 1], box = document.getElementById('scroller');
    const target = box.scrollTop + arguments[0];
    let last = performance.now(), top = box.scrollTop;
    window.watching = true;
    function step(now) {   // 60 rows in about 1.5 s, slowing down as a fling does
      const left = target - top;
      top += Math.max(2, left * Math.min(1, (now - last) / 250));
      last = now;
      box.scrollTop = Math.min(top, target);
      if (top < target) requestAnimationFrame(step); else setTimeout(() => { window.watching = false; done(box.scrollTop); }, 300);
    }
    requestAnimationFrame(step);
"""


def phone_photos(library):
    for i in range(COUNT):
        source = WITH_PREVIEWS[i % len(WITH_PREVIEWS)]
        os.link(source, os.path.join(library, "IMG_%04d%s" % (i, os.path.splitext(source)[1])))


def copy_sources(library):
    """Hard links need one file system: the sources are copied beside the library first."""
    sources = os.path.join(os.path.dirname(library), "sources")
    os.mkdir(sources)
    global WITH_PREVIEWS
    copies = []
    for source in WITH_PREVIEWS:
        copy = os.path.join(sources, os.path.basename(source))
        shutil.copyfile(source, copy)
        copies.append(copy)
    WITH_PREVIEWS = copies
    phone_photos(library)


def accepting(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def a_cold_server_shows_no_blank_cell(binary, profile):
    driver = browser(profile)
    server = None
    try:
        as_phone(driver)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
        server = Server(binary, copy_sources, wait=False)
        wait_for("thumbd accepting", 30, lambda: accepting(server.port), interval=0.01)
        page = Page(server, driver)
        page.open()
        listed, painted = page.js("return [window.listed, window.painted]")
        first = page.visible()
        check(listed is not None, "the page never had its listing")
        late = {c["index"]: (painted.get(str(c["index"]), float("inf")) - listed) for c in first}
        print("  %d first-screen cells: placeholder or thumbnail at most %.0f ms after the listing (%s)"
              % (len(first), max(late.values()), server.stats()["placeholders"]))
        check(all(ms <= FIRST_SCREEN_MS for ms in late.values()),
              "first-screen cells blank more than %d ms after the listing: %s; the page's listing at %.0f ms, then %s"
              % (FIRST_SCREEN_MS, {i: round(ms) for i, ms in late.items() if ms > FIRST_SCREEN_MS}, listed,
                 page.js("return window.timeline")))

        # The rest of the previews are read after the first screen's renders; the page hears of
        # them through the change feed. Then the fling.
        started = time.time()
        wait_for("every preview read", 60, lambda: server.stats()["placeholders"]["from_previews"] == COUNT)
        read = time.time() - started
        wait_for("the page at the server's generation", 30,
                 lambda: page.js("return library.generation") == server.listing(limit=0)["generation"])
        print("  the other %d previews read %.1f s after the first screen, and heard by the page %.1f s after"
              % (COUNT - len(first), read, time.time() - started - read))

        _, pitch, columns = page.geometry()
        mark = page.mark()
        stop = driver.execute_async_script(FLING, 60 * pitch)
        blank, frames = page.js("return [window.blank, window.frames]")
        cells = page.loaded()
        time.sleep(0.5)
        asked = page.since(mark, "GET", "/thumbnails/")
        # The grid loads a row beyond each edge of the view as its neighbours (not for the fling):
        # those are not counted; a request for a cell the fling flew past is.
        in_view = {c["url"].lstrip("/") for c in cells}
        beside = {c["url"].lstrip("/") for c in page.cells() if c["url"]} - in_view
        counted = [r for r in asked if r["url"].split("//", 1)[1].split("/", 1)[1] not in beside]
        ratio = len(counted) / len(cells)
        print("  a fling of 60 rows to %d px: %d frames, %d blank cell-frames; then %d thumbnail requests (%d for the rows beside the view)"
              " for %d cells in view: %.2f a cell" % (stop, frames, len(blank), len(asked), len(asked) - len(counted), len(cells), ratio))
        check(not blank, "cells blank in view during the fling: %s" % sorted(set(blank), key=int)[:20])
        check(ratio <= 1.2, "the fling asked %d thumbnails for %d cells in view (%.2f a cell)" % (len(counted), len(cells), ratio))
    finally:
        driver.quit()
        if server:
            server.stop()


TESTS = [a_cold_server_shows_no_blank_cell]

if __name__ == "__main__":
    main(TESTS)
