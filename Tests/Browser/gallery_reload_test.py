#!/usr/bin/env python3
"""Browser tests of thumbd's gallery page (GET /): reloads, in headless Chromium.

Each test starts the thumbd binary given as the first argument on a temporary library holding
p.jpg, and:

- replaced_photo_shows_after_reload: the gallery shows p.jpg; the file is replaced by another
  photo of another size (renamed over it, as an editor saves); once /assets lists the new file,
  a reload shows the new photo. With every thumbnail URL the bare path and `immutable`, Chromium
  kept the old thumbnail for a year.
- unchanged_photo_is_not_fetched_again: a reload with nothing changed does not ask the server
  for the thumbnail again (its versioned URL is cached for good), so the fix is not "never cache".

Run through Tests/Browser/run.sh, or alone: gallery_reload_test.py PATH-TO-THUMBD.
"""

import os
import shutil
import time

from harness import PHOTOS, Server, browser, check, main

# Landscape_1.jpg: 1800x1200, a 393x393 thumbnail at grid 3 (cover).
FIRST = os.path.join(PHOTOS, "Landscape_1.jpg")
# sony-cybershot-small-orientation6.jpg: 450x311 as displayed, a centre square of 311 at grid 3.
SECOND = os.path.join(PHOTOS, "sony-cybershot-small-orientation6.jpg")


def one_photo(library):
    shutil.copyfile(FIRST, os.path.join(library, "p.jpg"))


def replace_photo(server, source):
    incoming = os.path.join(server.library, ".incoming")
    shutil.copyfile(source, incoming)
    os.rename(incoming, os.path.join(server.library, "p.jpg"))
    size = os.path.getsize(source)
    deadline = time.time() + 10
    while not any(item["path"] == "p.jpg" and item["bytes"] == size for item in server.assets()):
        check(time.time() < deadline, "/assets did not list the replaced p.jpg within 10 s")
        time.sleep(0.1)


def shown_photo(driver, alt="p.jpg", seconds=15):
    """(naturalWidth, naturalHeight, url) of the gallery's image of `alt` once it has loaded."""
    script = """
        const img = [...document.querySelectorAll('#grid img')].find(i => i.alt === arguments[0]);
        return img && img.complete && img.naturalWidth > 0
            ? [img.naturalWidth, img.naturalHeight, img.parentElement.dataset.url] : null;
    """
    deadline = time.time() + seconds
    while True:
        shown = driver.execute_script(script, alt)
        if shown:
            return shown
        check(time.time() < deadline, "the gallery showed no loaded image of %s within %d s" % (alt, seconds))
        time.sleep(0.1)


def replaced_photo_shows_after_reload(binary, profile):
    server = Server(binary, one_photo)
    driver = browser(profile)
    try:
        driver.get(server.base + "/")
        width, height, url = shown_photo(driver)
        check((width, height) == (393, 393), "first load: expected the first photo (393x393), saw %dx%d from %s"
              % (width, height, url))
        replace_photo(server, SECOND)
        driver.refresh()
        width, height, url = shown_photo(driver)
        check((width, height) == (311, 311), "after replacing the photo and a reload: expected the new photo (311x311), "
              "saw %dx%d from %s (the old thumbnail, kept by the browser)" % (width, height, url))
    finally:
        driver.quit()
        server.stop()


def unchanged_photo_is_not_fetched_again(binary, profile):
    server = Server(binary, one_photo)
    driver = browser(profile)
    try:
        driver.get(server.base + "/")
        shown_photo(driver)
        before = server.thumbnail_requests()
        check(len(before) >= 1, "the thumbnail request is not in the access log: " + server.output())
        driver.refresh()
        width, height, url = shown_photo(driver)
        check((width, height) == (393, 393), "reload: expected 393x393, saw %dx%d" % (width, height))
        after = server.thumbnail_requests()
        check(len(after) == len(before), "a reload with nothing changed asked for the thumbnail again: "
              + "".join(after[len(before):]).strip())
    finally:
        driver.quit()
        server.stop()


TESTS = [replaced_photo_shows_after_reload, unchanged_photo_is_not_fetched_again]

if __name__ == "__main__":
    main(TESTS)
