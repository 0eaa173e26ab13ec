#!/usr/bin/env python3
"""Measures the gallery's cold start (issue 28, item 4), not a test: thumbd started on a fresh
library of 300 photos and 5 videos (gallery_layout_test's) with a fresh cache directory, the page
opened in headless Chromium as soon as /healthz answers 200, and, from the page's navigation
start: when the first /assets answered 200, how many answered before it (503 index_building),
and when every cell in view had its thumbnail.

usage: Tests/Browser/.venv/bin/python Tests/Browser/cold_start.py PATH-TO-THUMBD [RUNS]   (8 runs)
"""

import shutil
import sys
import tempfile
import time
import urllib.request

from harness import Server, browser
from gallery_grid_test import Page
from gallery_layout_test import photos_and_videos

LOADED_AT = "return performance.now()"   # ms since the navigation started


class ColdServer(Server):
    """thumbd ready as /healthz says, not waiting for its listing."""

    def _wait_until_listed(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        return True
            except OSError:
                pass
            if self.process.poll() is not None:
                return False
            time.sleep(0.005)
        return False


def main():
    binary, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
    profile = tempfile.mkdtemp(prefix="thumbd-chromium-")
    driver = browser(profile, 1400, 900)
    try:
        for run in range(runs):
            server = ColdServer(binary, photos_and_videos())
            try:
                page = Page(server, driver)
                mark = page.mark()
                driver.get(server.base + "/")
                page.loaded()
                loaded = page.js(LOADED_AT)
                document = page.since(mark, "GET", "/")[0]
                listings = page.since(mark, "GET", "/assets")
                ok = [r for r in listings if r["status"] == 200]
                refused = [r for r in listings if r["status"] == 503]
                print("run %d: listing at %4.0f ms after %d × 503; cells in view loaded by %4.0f ms"
                      % (run + 1, 1000 * (ok[0]["answered"] - document["sent"]), len(refused), loaded), flush=True)
            finally:
                server.stop()
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
