#!/usr/bin/env python3
"""Every browser test of the gallery, one PASS/FAIL line each and one closing "N passed, M
failed" (exit status 1 on a failure). run.sh runs this: all_tests.py PATH-TO-THUMBD."""

import gallery_cold_test
import gallery_follow_test
import gallery_grid_test
import gallery_layout_test
import gallery_loading_test
import gallery_placeholder_test
import gallery_reload_test
import gallery_video_test
import gallery_viewer_test
from harness import main

if __name__ == "__main__":
    main(gallery_reload_test.TESTS + gallery_grid_test.TESTS + gallery_placeholder_test.TESTS + gallery_video_test.TESTS
         + gallery_layout_test.TESTS + gallery_viewer_test.TESTS + gallery_loading_test.TESTS + gallery_follow_test.TESTS
         + gallery_cold_test.TESTS)
