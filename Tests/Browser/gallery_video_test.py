#!/usr/bin/env python3
"""Browser tests of videos in the gallery (GET /), in headless Chromium.

The library holds one photo and two clips made here by Debian's ffmpeg (testsrc2, H.264):
a 6 s one and a 75 s one at low resolution.

- video_cells_show_their_duration: each video cell carries a duration badge as the listing's
  duration_ms gives it (0:06, 1:15), the photo's cell none, and every cell's thumbnail (the
  videos' poster frames) loads at the grid's size.

Run through Tests/Browser/run.sh, or alone: gallery_video_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import subprocess

from harness import PHOTOS, Server, browser, check, main, wait_for


def clip(path, seconds):
    subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=320x240:rate=10:duration=%d" % seconds, "-c:v", "libx264",
                    "-preset", "veryfast", "-pix_fmt", "yuv420p", path], check=True)


def photo_and_clips(library):
    shutil.copyfile(os.path.join(PHOTOS, "Landscape_1.jpg"), os.path.join(library, "photo.jpg"))
    clip(os.path.join(library, "short.mp4"), 6)
    clip(os.path.join(library, "long.mov"), 75)


def video_cells_show_their_duration(binary, profile):
    server = Server(binary, photo_and_clips)
    driver = browser(profile)
    try:
        listed = {item["path"]: item for item in server.assets()}
        check(listed["short.mp4"]["duration_ms"] == 6000 and listed["long.mov"]["duration_ms"] == 75000,
              "the listing's durations: %s" % {p: i["duration_ms"] for p, i in listed.items()})
        driver.get(server.base + "/")
        script = """
            return [...document.querySelectorAll('#grid .cell')].filter(c => c.dataset.url).map(c => {
                const img = c.querySelector('img'), badge = c.querySelector('.duration');
                return {alt: img.alt, state: c.dataset.state, width: img.naturalWidth, height: img.naturalHeight,
                        badge: badge ? badge.textContent : null};
            });
        """

        def loaded():
            cells = driver.execute_script(script)
            return cells if len(cells) == 3 and all(c["state"] == "loaded" for c in cells) else None
        cells = {c["alt"]: c for c in wait_for("three cells loaded", 30, loaded)}
        check(cells["short.mp4"]["badge"] == "0:06", "short.mp4's badge: %r" % cells["short.mp4"]["badge"])
        check(cells["long.mov"]["badge"] == "1:15", "long.mov's badge: %r" % cells["long.mov"]["badge"])
        check(cells["photo.jpg"]["badge"] is None, "the photo has a badge: %r" % cells["photo.jpg"]["badge"])
        # Grid 3 (the page's default) is a 393 cover that never enlarges: the clips' 240 square.
        for name in ["short.mp4", "long.mov"]:
            check((cells[name]["width"], cells[name]["height"]) == (240, 240),
                  "%s's poster is %dx%d, not 240x240" % (name, cells[name]["width"], cells[name]["height"]))
    finally:
        driver.quit()
        server.stop()


TESTS = [video_cells_show_their_duration]

if __name__ == "__main__":
    main(TESTS)
