#!/usr/bin/env python3
"""Browser test of the gallery's placeholders (GET /), in headless Chromium.

- placeholder_shows_before_a_slow_thumbnail: on a library whose placeholders the backfill has
  made (every /assets item has a thumbhash), the page is loaded with its thumbnail fetches held
  3 s (a wrapper of window.fetch installed before the page's scripts run: a slow thumbnail). While
  they are held, every cell of the page shows its placeholder (a canvas under the thumbnail,
  decoded from the listing's thumbhash, visible, covering the cell) and no thumbnail; then each
  thumbnail arrives and is shown over it, and the placeholder is hidden after the fade. The
  placeholder is of the same photo: its mean colour is within 20 levels (of 255) of the
  thumbnail's on each channel, and its size is the hash's: the backfill's whole photo, 32 px
  on its longer side at about the photo's aspect ratio (all three are landscape, 3:2 to 4:3 as
  shown: ThumbHash keeps the ratio to within its terms' counts).

- a_placeholder_taken_away_leaves_its_cell: a camera JPEG whose scan data is corrupt but whose
  EXIF thumbnail is sound (the corpus' broken/camera-jpeg-corrupt-scan-data.jpg, beside a good
  photo without one): its cell first shows the placeholder its preview gave; its thumbnail is
  refused (415),
  the listing takes the placeholder away (docs/API.md, "Change feed": a changed item whose
  thumbhash is null), and the open page's cell is left with no placeholder canvas, while the
  good photo keeps its thumbnail. Skipped without the corpus.

Run through Tests/Browser/run.sh, or alone: gallery_placeholder_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import time

from harness import NO_BACKFILL, PHOTOS, ROOT, Server, browser, check, main, wait_for

CORPUS = os.environ.get("THUMBD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
CORRUPT = os.path.join(CORPUS, "broken", "camera-jpeg-corrupt-scan-data.jpg")

NAMES = ["Landscape_1.jpg", "kodak-dc210-1998-vga.jpg", "sony-cybershot-small-orientation6.jpg"]

HOLD_THUMBNAILS = """
    const realFetch = window.fetch.bind(window);
    window.heldThumbnails = 0;
    window.fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input.url;
      if (!url.includes('/thumbnails/')) return realFetch(input, init);
      window.heldThumbnails++;
      return new Promise(resolve => setTimeout(resolve, 3000)).then(() => realFetch(input, init));
    };
"""

# Per cell: its state, whether its placeholder is painted, and the mean RGB of the placeholder
# and (once loaded) of the thumbnail, each drawn onto a canvas.
CELLS = """
    const done = arguments[arguments.length - 1];
    const mean = (source, width, height) => {
      const canvas = document.createElement('canvas');
      canvas.width = width; canvas.height = height;
      const context = canvas.getContext('2d');
      context.drawImage(source, 0, 0);
      const data = context.getImageData(0, 0, width, height).data;
      const sum = [0, 0, 0];
      for (let i = 0; i < data.length; i += 4) for (let c = 0; c < 3; c++) sum[c] += data[i + c];
      return sum.map(s => s / (data.length / 4));
    };
    const cells = [];
    for (const cell of document.querySelectorAll('#grid .cell')) {
      const img = cell.querySelector('img'), canvas = cell.querySelector('canvas');
      const box = cell.getBoundingClientRect(), drawn = canvas && canvas.getBoundingClientRect();
      const loaded = cell.dataset.state === 'loaded' && img.complete && img.naturalWidth > 0;
      cells.push({alt: img.alt, state: cell.dataset.state, painted: cell.dataset.placeholder,
                  placeholder: canvas && [canvas.width, canvas.height, mean(canvas, canvas.width, canvas.height)],
                  visible: !!canvas && getComputedStyle(canvas).visibility === 'visible',
                  covers: !!canvas && drawn.width === box.width && drawn.height === box.height,
                  thumbnail: loaded ? mean(img, img.naturalWidth, img.naturalHeight) : null});
    }
    done({cells, held: window.heldThumbnails});
"""


def three_photos(library):
    for name in NAMES:
        shutil.copyfile(os.path.join(PHOTOS, name), os.path.join(library, name))


def placeholder_shows_before_a_slow_thumbnail(binary, profile):
    server = Server(binary, three_photos)
    driver = browser(profile)
    try:
        wait_for("every /assets item's thumbhash from the backfill", 60,
                 lambda: len(server.assets()) == 3 and all(item["thumbhash"] for item in server.assets()))
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_THUMBNAILS})
        started = time.time()
        driver.get(server.base + "/")
        early = wait_for("three cells painted", 2.5, lambda: (lambda page: page if len(page["cells"]) == 3 and all(
            c["painted"] == "shown" for c in page["cells"]) else None)(driver.execute_async_script(CELLS)))
        check(time.time() - started < 3, "the check came after the thumbnails were let through")
        for cell in early["cells"]:
            check(cell["placeholder"] is not None, "%s: no placeholder canvas" % cell["alt"])
            check(cell["visible"] and cell["covers"], "%s: its placeholder is hidden or does not cover the cell: %r"
                  % (cell["alt"], cell))
            width, height = cell["placeholder"][:2]
            check(width == 32 and 20 <= height <= 25, "%s: placeholder %dx%d, not the whole photo's 32 x 21-24"
                  % (cell["alt"], width, height))
            check(cell["thumbnail"] is None and cell["state"] != "loaded",
                  "%s: its thumbnail showed while the fetches were held" % cell["alt"])
        check(early["held"] >= 1, "no thumbnail fetch was held: %r" % early)
        late = wait_for("three thumbnails shown", 20, lambda: (lambda page: page if all(
            c["thumbnail"] for c in page["cells"]) else None)(driver.execute_async_script(CELLS)))
        hidden = wait_for("placeholders hidden after the fade", 5, lambda: (lambda page: page if not any(
            c["visible"] for c in page["cells"]) else None)(driver.execute_async_script(CELLS)))
        check(len(hidden["cells"]) == 3, "cells changed: %r" % hidden)
        for cell in late["cells"]:
            placeholder, thumbnail = cell["placeholder"][2], cell["thumbnail"]
            worst = max(abs(a - b) for a, b in zip(placeholder, thumbnail))
            check(worst < 20, "%s: placeholder mean %r, thumbnail mean %r: not the same photo"
                  % (cell["alt"], [round(v) for v in placeholder], [round(v) for v in thumbnail]))
    finally:
        driver.quit()
        server.stop()


def corrupt_and_good(library):
    shutil.copyfile(CORRUPT, os.path.join(library, "corrupt.jpg"))
    shutil.copyfile(os.path.join(PHOTOS, "Landscape_1.jpg"), os.path.join(library, "good.jpg"))


# Per cell: its state, painted mark and placeholder canvases (only the corrupt photo can fail).
CELL_CANVASES = """
    return Array.from(document.querySelectorAll('#grid .cell')).map(cell => ({
      state: cell.dataset.state, painted: cell.dataset.placeholder,
      canvases: cell.querySelectorAll('canvas').length}));
"""


def a_placeholder_taken_away_leaves_its_cell(binary, profile):
    if not os.path.exists(CORRUPT):
        print("  skipped: no corpus at %s" % CORPUS)
        return
    server = Server(binary, corrupt_and_good, NO_BACKFILL)
    driver = browser(profile)
    try:
        wait_for("the corrupt photo's preview placeholder in the listing", 30,
                 lambda: any(item["path"] == "corrupt.jpg" and item["thumbhash"] for item in server.assets()))
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_THUMBNAILS})
        driver.get(server.base + "/")
        # The good photo has no placeholder yet (no preview, no backfill): one cell is painted.
        cells = wait_for("the corrupt photo's placeholder painted", 2.5, lambda: (lambda page: page if len(page) == 2 and [
            (c["painted"], c["canvases"]) for c in page].count(("shown", 1)) == 1 else None)(driver.execute_script(CELL_CANVASES)))
        check(all(c["state"] != "loaded" for c in cells), "a thumbnail showed while the fetches were held: %r" % cells)
        # The thumbnails are let through after 3 s: the corrupt one is refused, its placeholder
        # taken away and published, and the page follows the feed.
        after = wait_for("the corrupt cell failed with no placeholder, the good one loaded", 20, lambda: (lambda page: page if (
            any(c["state"] == "failed" and c["painted"] == "none" and c["canvases"] == 0 for c in page)
            and any(c["state"] == "loaded" for c in page))
            else None)(driver.execute_script(CELL_CANVASES)))
        check(len(after) == 2, "cells: %r" % after)
        check(not any(item["path"] == "corrupt.jpg" and item["thumbhash"] for item in server.assets()),
              "the listing still carries the corrupt photo's placeholder")
    finally:
        driver.quit()
        server.stop()


TESTS = [placeholder_shows_before_a_slow_thumbnail, a_placeholder_taken_away_leaves_its_cell]

if __name__ == "__main__":
    main(TESTS)
