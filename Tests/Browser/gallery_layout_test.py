#!/usr/bin/env python3
"""Browser tests of the gallery's layout at a phone's and a desktop's size (issue 28), in
headless Chromium, on a library of 300 photos (the fixture photos hard-linked under 300 names, a
day apart) and 5 videos (one clip made here by Debian's ffmpeg, hard-linked under 5 names). The
phone is Chromium's mobile emulation at 390x844 CSS px (an iPhone 14's), with touch.

- phone_grid_gets_most_of_the_screen: at 390x844 the stats panel is hidden at first and the grid
  gets at least 85% of the screen; the header is as tall in mid-scroll as at the top, and each
  of its texts keeps to one line; every button in it is at least 44x44 px; the header counts
  "300 photos, 5 videos" (the listing's types); the Stats button shows the panel, and a reload
  remembers it shown, then hidden.
- desktop_rows_fit_the_screen: at 1400x900 the panel is shown at first; the 3- and 5-column
  grids are square cells of which at least 3 whole rows fit the view; at 1 column each cell is
  its photo's shape (the listing's width/height), no taller than the view, and holds the whole
  thumbnail.

Run through Tests/Browser/run.sh, or alone: gallery_layout_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import subprocess
import time

from harness import NO_BACKFILL, PHOTOS, Server, at_end, browser, check, main, wait_for
from gallery_grid_test import Page

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}


def photos_and_videos(photos=300, videos=5):
    """`photos` hard links of the fixture photos and `videos` of one 2 s clip."""
    def fill(library):
        sources = os.path.join(os.path.dirname(library), "sources")
        os.mkdir(sources)
        names = sorted(os.listdir(PHOTOS))
        for name in names:
            shutil.copyfile(os.path.join(PHOTOS, name), os.path.join(sources, name))
        for i in range(photos):
            os.link(os.path.join(sources, names[i % len(names)]), os.path.join(library, "photo-%03d.jpg" % i))
        clip = os.path.join(sources, "clip.mp4")
        subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10:duration=2",
                        "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", clip], check=True)
        for i in range(videos):
            os.link(clip, os.path.join(library, "video-%d.mp4" % i))
    return fill


class Library:
    """One thumbd on the 300 photos and 5 videos, shared by the layout tests."""
    shared = None

    @classmethod
    def server(cls, binary):
        if cls.shared is None:
            cls.shared = Server(binary, photos_and_videos(), arguments=NO_BACKFILL)
            at_end(cls.shared.stop)
        return cls.shared


def as_phone(driver):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})


HEADER = """
    const header = document.querySelector('header');
    const box = e => { const r = e.getBoundingClientRect(); return {top: r.top, height: r.height, width: r.width,
                       shown: r.width > 0 && r.height > 0, lines: e.scrollHeight <= e.clientHeight + 1}; };
    const panel = document.getElementById('panel');
    return {header: box(header), total: box(document.getElementById('total')), status: box(document.getElementById('status')),
            statusText: document.getElementById('status').textContent,
            totalText: document.getElementById('total').textContent,
            buttons: [...header.querySelectorAll('button')].map(b => Object.assign(box(b), {text: b.textContent})),
            scroller: box(document.getElementById('scroller')), panel: box(panel),
            screen: window.innerHeight, screenWidth: window.innerWidth,
            stored: localStorage.getItem('thumbd.gallery.panel')};
"""


def phone_grid_gets_most_of_the_screen(binary, profile):
    server = Library.server(binary)
    driver = browser(profile)
    try:
        as_phone(driver)
        page = Page(server, driver)
        page.open()
        at_top = page.js(HEADER)
        check(at_top["screenWidth"] == 390 and at_top["screen"] == 844, "the phone's screen is %dx%d"
              % (at_top["screenWidth"], at_top["screen"]))
        check(not at_top["panel"]["shown"], "the stats panel is shown at first on a phone: %s" % at_top["panel"])
        share = at_top["scroller"]["height"] / at_top["screen"]
        print("  phone: the grid gets %.1f%% of the screen (%d of %d px; header %d px)"
              % (100 * share, at_top["scroller"]["height"], at_top["screen"], at_top["header"]["height"]))
        check(share >= 0.85, "the grid gets %.0f%% of the phone's screen (%d of %d px)"
              % (100 * share, at_top["scroller"]["height"], at_top["screen"]))
        for button in at_top["buttons"]:
            check(button["height"] >= 44 and button["width"] >= 44, "header button %r is %.0fx%.0f px, under 44x44"
                  % (button["text"], button["width"], button["height"]))
        wait_for("the header's counts by type", 10,
                 lambda: page.js(HEADER)["totalText"] == "300 photos, 5 videos")
        # Mid-scroll, at row numbers of two digits: the same header, every text on one line.
        height, pitch, _ = page.geometry()
        for y in [40 * pitch, 70 * pitch + 7, 95 * pitch]:
            page.scroll_to(y)
            time.sleep(0.3)
            now = page.js(HEADER)
            check("of 102" in now["statusText"], "the status says %r" % now["statusText"])
            check(now["header"]["height"] == at_top["header"]["height"] and now["scroller"]["top"] == at_top["scroller"]["top"],
                  "the header is %.1f px tall at the top, %.1f px at %d px (%r)"
                  % (at_top["header"]["height"], now["header"]["height"], y, now["statusText"]))
            for name in ["total", "status"]:
                check(now[name]["lines"] and now[name]["height"] <= 24, "the header's %s wraps: %s" % (name, now[name]))
        # The Stats button shows the panel, and the choice is remembered.
        page.click("#panel-toggle")
        shown = page.js(HEADER)
        check(shown["panel"]["shown"] and shown["stored"] == "open", "the Stats button did not show the panel: %s" % shown["panel"])
        page.open()
        check(page.js(HEADER)["panel"]["shown"], "a reload hid the panel shown before")
        page.click("#panel-toggle")
        page.open()
        again = page.js(HEADER)
        check(not again["panel"]["shown"] and again["stored"] == "closed", "a reload showed the panel hidden before")
    finally:
        driver.quit()


def desktop_rows_fit_the_screen(binary, profile):
    server = Library.server(binary)
    driver = browser(profile, 1400, 900)
    try:
        page = Page(server, driver)
        page.open()
        layout = page.js(HEADER)
        check(layout["panel"]["shown"], "the stats panel is hidden at first on a desktop")
        view = layout["scroller"]["height"]
        for columns in ["3", "5"]:
            page.click('[data-columns="%s"]' % columns)
            cells = wait_for("%s columns" % columns, 10, lambda: (lambda cells: cells if len(
                {round(c["left"]) for c in cells}) == int(columns) else None)(page.loaded()))
            for cell in cells:
                box = page.js("const r = document.querySelector('.cell[data-index=\"' + arguments[0] + '\"]')"
                              ".getBoundingClientRect(); return [r.width, r.height]", cell["index"])
                check(abs(box[0] - box[1]) <= 1, "%s columns: cell %d is %.1fx%.1f, not square" % (columns, cell["index"], *box))
            whole = len({round(c["top"]) for c in cells if c["top"] >= -0.5 and c["top"] + c["size"] <= view + 0.5})
            print("  desktop 1400x900: %s columns, cells of %.0f px, %d whole rows in %d px"
                  % (columns, cells[0]["size"], whole, view))
            check(whole >= 3, "%s columns at 1400x900: %d whole rows in view (cells %.0f px, view %d px)"
                  % (columns, whole, cells[0]["size"], view))
        page.click('[data-columns="1"]')
        wait_for("1 column", 10, lambda: len({round(c["left"]) for c in page.loaded()}) >= 1
                 and page.js("return document.getElementById('grid').classList.contains('one')"))
        pitch = page.geometry()[1]
        for row in range(12):   # the fixture photos twice over, each at the top of the view
            page.scroll_to(row * pitch)
            cells = page.loaded()
            first = min(c["index"] for c in cells)
            items = server.listing(offset=first, limit=len(cells) + 2)["items"]
            for cell in cells:
                item = items[cell["index"] - first]
                box = page.js("const r = document.querySelector('.cell[data-index=\"' + arguments[0] + '\"]')"
                              ".getBoundingClientRect(); return [r.width, r.height]", cell["index"])
                check(box[1] <= view + 0.5, "1 column: cell %d is %.0f px tall, the view %d px" % (cell["index"], box[1], view))
                wanted, shown = item["width"] / item["height"], box[0] / box[1]
                check(abs(shown / wanted - 1) < 0.01, "1 column: cell %d (%s, %dx%d) is %.0fx%.0f"
                      % (cell["index"], item["path"], item["width"], item["height"], *box))
                natural = cell["width"] / cell["height"]
                check(abs(natural / shown - 1) < 0.03, "1 column: cell %d holds a %dx%d thumbnail in a %.0fx%.0f box"
                      % (cell["index"], cell["width"], cell["height"], *box))
    finally:
        driver.quit()


TESTS = [phone_grid_gets_most_of_the_screen, desktop_rows_fit_the_screen]

if __name__ == "__main__":
    main(TESTS)
