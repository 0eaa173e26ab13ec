#!/usr/bin/env python3
"""Browser tests of thumbd's gallery page (GET /) in headless Chromium, driven by Selenium.

Run through Tests/Browser/run.sh, which makes the venv and picks the binary. Each test starts the
thumbd binary given as the first argument on a temporary copy of a library, and:

- replaced_photo_shows_after_reload: the gallery shows p.jpg; the file is replaced by another
  photo of another size (renamed over it, as an editor saves); once /assets lists the new file,
  a reload shows the new photo. With every thumbnail URL the bare path and `immutable`, Chromium
  kept the old thumbnail for a year.
- unchanged_photo_is_not_fetched_again: a reload with nothing changed does not ask the server
  for the thumbnail again (its versioned URL is cached for good), so the fix is not "never cache".

Prints one PASS/FAIL line per test and a closing "N passed, M failed"; exits 1 on any failure.
Uses only Debian's chromium and chromium-driver: nothing is downloaded at run time.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

os.environ.setdefault("SE_OFFLINE", "true")   # Selenium Manager must not download a driver

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHOTOS = os.path.join(ROOT, "Tests", "Fixtures", "photos")
# Landscape_1.jpg: 1800x1200, a 393x393 thumbnail at grid 3 (cover).
FIRST = os.path.join(PHOTOS, "Landscape_1.jpg")
# sony-cybershot-small-orientation6.jpg: 450x311 as displayed, a centre square of 311 at grid 3.
SECOND = os.path.join(PHOTOS, "sony-cybershot-small-orientation6.jpg")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """thumbd on a temporary library holding p.jpg (a copy of FIRST), with an access log."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="thumbd-browser-")
        self.library = os.path.join(self.dir, "library")
        os.mkdir(self.library)
        shutil.copyfile(FIRST, os.path.join(self.library, "p.jpg"))
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.log_path = os.path.join(self.dir, "access.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "--library", self.library, "--cache-dir", os.path.join(self.dir, "cache"),
             "--port", str(self.port), "--index-rescan-seconds", "0.2", "--access-log"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.time() + 20
        while True:
            try:
                if self.assets():
                    break
            except OSError:
                pass
            check(self.process.poll() is None, "thumbd exited at start: " + self.output())
            check(time.time() < deadline, "thumbd did not answer /assets within 20 s: " + self.output())
            time.sleep(0.1)

    def assets(self):
        """The /assets items (an empty list while the index is being built)."""
        try:
            with urllib.request.urlopen(self.base + "/assets", timeout=5) as response:
                return json.load(response)["items"]
        except urllib.error.HTTPError as error:
            if error.code == 503:
                return []
            raise

    def output(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()[-2000:]

    def thumbnail_requests(self):
        """Access-log lines of thumbnail requests so far."""
        self.log.flush()
        time.sleep(0.2)   # the log is written from a queue
        with open(self.log_path) as f:
            return [line for line in f if " /thumbnails/" in line]

    def replace_photo(self, source):
        incoming = os.path.join(self.library, ".incoming")
        shutil.copyfile(source, incoming)
        os.rename(incoming, os.path.join(self.library, "p.jpg"))
        size = os.path.getsize(source)
        deadline = time.time() + 10
        while not any(item["path"] == "p.jpg" and item["bytes"] == size for item in self.assets()):
            check(time.time() < deadline, "/assets did not list the replaced p.jpg within 10 s")
            time.sleep(0.1)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1200,900", "--user-data-dir=" + profile]:
        options.add_argument(argument)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


def shown_photo(driver, alt="p.jpg", seconds=15):
    """(naturalWidth, naturalHeight, src) of the gallery's image of `alt` once it has loaded."""
    script = """
        const img = [...document.querySelectorAll('#grid img')].find(i => i.alt === arguments[0]);
        return img && img.complete && img.naturalWidth > 0 ? [img.naturalWidth, img.naturalHeight, img.src] : null;
    """
    deadline = time.time() + seconds
    while True:
        shown = driver.execute_script(script, alt)
        if shown:
            return shown
        check(time.time() < deadline, "the gallery showed no loaded image of %s within %d s" % (alt, seconds))
        time.sleep(0.1)


def replaced_photo_shows_after_reload(binary, profile):
    server = Server(binary)
    driver = browser(profile)
    try:
        driver.get(server.base + "/")
        width, height, src = shown_photo(driver)
        check((width, height) == (393, 393), "first load: expected the first photo (393x393), saw %dx%d from %s"
              % (width, height, src))
        server.replace_photo(SECOND)
        driver.refresh()
        width, height, src = shown_photo(driver)
        check((width, height) == (311, 311), "after replacing the photo and a reload: expected the new photo (311x311), "
              "saw %dx%d from %s (the old thumbnail, kept by the browser)" % (width, height, src))
    finally:
        driver.quit()
        server.stop()


def unchanged_photo_is_not_fetched_again(binary, profile):
    server = Server(binary)
    driver = browser(profile)
    try:
        driver.get(server.base + "/")
        shown_photo(driver)
        before = server.thumbnail_requests()
        check(len(before) >= 1, "the thumbnail request is not in the access log: " + server.output())
        driver.refresh()
        width, height, src = shown_photo(driver)
        check((width, height) == (393, 393), "reload: expected 393x393, saw %dx%d" % (width, height))
        after = server.thumbnail_requests()
        check(len(after) == len(before), "a reload with nothing changed asked for the thumbnail again: "
              + "".join(after[len(before):]).strip())
    finally:
        driver.quit()
        server.stop()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gallery_reload_test.py PATH-TO-THUMBD")
    binary = os.path.abspath(sys.argv[1])
    tests = [replaced_photo_shows_after_reload, unchanged_photo_is_not_fetched_again]
    passed = failed = 0
    for test in tests:
        profile = tempfile.mkdtemp(prefix="thumbd-chromium-")
        started = time.time()
        try:
            test(binary, profile)
            passed += 1
            print("PASS %s (%.1f s)" % (test.__name__, time.time() - started), flush=True)
        except Failure as failure:
            failed += 1
            print("FAIL %s: %s" % (test.__name__, failure), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s: error\n%s" % (test.__name__, traceback.format_exc()), flush=True)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
