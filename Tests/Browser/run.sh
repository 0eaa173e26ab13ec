#!/usr/bin/env bash
# Browser tests of the gallery in headless Chromium (README, top): Debian's chromium and
# chromium-driver, Selenium from PyPI in Tests/Browser/.venv (made on first use).
# usage: Tests/Browser/run.sh [PATH-TO-THUMBD]   (default .build/debug/thumbd, built when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/thumbd}
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null || { echo "Tests/Browser: $tool is missing: apt-get install -y chromium chromium-driver python3-venv"; exit 1; }
done
[ -x "$binary" ] || swift build --product thumbd
venv=Tests/Browser/.venv
python=$(command -v /usr/bin/python3 || command -v python3)
if ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'selenium>=4.11,<5'
fi
exec "$venv/bin/python" Tests/Browser/all_tests.py "$binary"
