#!/usr/bin/env bash
# Soak test that judges itself (issue 33, item 2): SECONDS (default 600) of wrk at 256
# connections on 127.0.0.1 (Tests/Benchmarks/soak.lua: memory hits, 304s, WebP, misses over 2,000
# photos x grids x formats, bad requests, /assets pages, range prefetch starts and stops) with side
# clients (clients that go away mid-request, cursor paging through the listing, video posters when
# ffmpeg is there to make two clips, and photos replaced, renamed and deleted under the server),
# against a small memory tier (8 MiB) and disk tier (16 MiB) so that eviction runs all the time.
# An inotify observer (soak_observer.py) replays every file the disk tier creates, renames and
# deletes; soak.py samples the server every second and prints a table of each limit against what
# was measured, and exits 1 naming every limit crossed (the rules are at the top of soak.py).
#
# Usage: Tests/Benchmarks/soak.sh [SECONDS] [--binary PATH] [judge options...]
#   The binary: --binary PATH, else THUMBD_BINARY, else a release build (common.sh). CI runs
#   `Tests/Benchmarks/soak.sh 60 --binary .build/debug/thumbd`; one hour: `... soak.sh 3600`.
#   Judge options (soak.py), to see each check fail on purpose: --fake-disk-limit BYTES,
#   --fake-memory-limit BYTES, --memfd-slack -N, --rss-growth -0.5, --fd-slack -N,
#   --thread-slack -N, --fake-documented-503 (no 503 code counts as documented; with
#   SOAK_SERVER_ARGS="--render-queue-limit 1" to make 503s), --fake-stale (changes not made).
#   SOAK_SERVER_ARGS: extra thumbd flags. Needs wrk, python3, curl and ../shared/corpus.
SECONDS_ARG=600
BINARY=""
JUDGE=()
case "${1:-}" in [0-9]*) SECONDS_ARG="$1"; shift ;; esac
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY="$2"; shift 2 ;;
    *) JUDGE+=("$1"); shift ;;
  esac
done
# A relative binary is taken from the working directory (the server is started from another).
[ -n "$BINARY" ] && export THUMBD_BINARY="$BINARY"
if [ -n "${THUMBD_BINARY:-}" ]; then
  [ -x "$THUMBD_BINARY" ] || { echo "soak: no executable thumbd at $THUMBD_BINARY" >&2; exit 2; }
  THUMBD_BINARY="$(cd "$(dirname "$THUMBD_BINARY")" && pwd)/$(basename "$THUMBD_BINARY")"
fi
source "$(dirname "$0")/common.sh"
HERE="$ROOT/Tests/Benchmarks"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install -y wrk)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
PORT=${PORT:-18434}
t_setup=$(now_ms)

# The library, all on $WORK's file system: the corpus photos copied once (so nothing of the
# shared corpus is ever linked into a directory the test changes), then 2,000 hard links to them
# for the mix, a copy of each change photo under ref/ (the reference renders), and 12 photos
# under changing/ that the judge replaces, renames and deletes.
CHANGE_PHOTOS=(Landscape_0.jpg Portrait_0.jpg coolpix-p6000-gps.jpg galaxy-s-orientation6-gps-vga.jpg
               sony-cybershot-small-orientation6.jpg panasonic-lc70-progressive.jpg kodak-dc210-1998-vga.jpg
               fuji-sp2500-tiny-orientation6.jpg)
mkdir -p "$WORK/photos" "$WORK/library/ref" "$WORK/library/changing"
cp "$CORPUS"/photos/*.jpg "$WORK/photos/"
LIB="$WORK/library"
python3 - "$WORK/photos" "$LIB" "${CHANGE_PHOTOS[@]}" <<'PY'
import os, shutil, sys
src, lib, change = sys.argv[1], sys.argv[2], sys.argv[3:]
photos = sorted(p for p in os.listdir(src) if p.endswith(".jpg"))
for i in range(2000):
    os.link(f"{src}/{photos[i % len(photos)]}", f"{lib}/s{i:04d}.jpg")
for p in change:
    os.link(f"{src}/{p}", f"{lib}/ref/{p}")
for i in range(12):
    shutil.copyfile(f"{src}/{change[i % len(change)]}", f"{lib}/changing/c{i:02d}.jpg")
PY
VIDEOS=()
if command -v ffmpeg >/dev/null; then
  mkdir -p "$LIB/videos"
  for v in 1 2; do
    ffmpeg -loglevel error -f lavfi -i "testsrc2=size=640x360:rate=25" -t 1 -pix_fmt yuv420p "$LIB/videos/clip$v.mp4" \
      && VIDEOS+=("videos/clip$v.mp4")
  done
fi
EXPECTED=$((2000 + ${#CHANGE_PHOTOS[@]} + 12 + ${#VIDEOS[@]}))

# shellcheck disable=SC2086
start_server "$LIB" "$PORT" --memory-cache-bytes 8388608 --disk-cache-bytes 16777216 ${SOAK_SERVER_ARGS:-}
CACHE="$WORK/cache-$PORT"
until [ "$(curl -fs "http://127.0.0.1:$PORT/assets?limit=0" | sed -E 's/.*"total":([0-9]+).*/\1/')" = "$EXPECTED" ]; do sleep 0.2; done
# The 256 shards made before any write (the server makes each on its first write; an empty one
# is what it would make), so that inotify sees every file from its creation, as in
# DiskCacheLimitTests: inotify is not recursive, and a shard made later would be watched late.
# SOAK_NO_SHARDS=1 leaves them to the server: the observer then misses the files renamed into a
# shard before it watched it, and the judge says it was blind (the row "observer kept track").
[ -n "${SOAK_NO_SHARDS:-}" ] || for i in $(seq 0 255); do mkdir -p "$CACHE/entries/$(printf '%02x' "$i")"; done
python3 "$HERE/soak_observer.py" "$CACHE" "$WORK/events" "$WORK/observer.json" "$WORK/observer.ready" &
OBSERVER=$!
for _ in $(seq 100); do [ -f "$WORK/observer.ready" ] && break; sleep 0.1; done
[ -f "$WORK/observer.ready" ] || { echo "soak: the inotify observer did not start" >&2; exit 2; }

# The 20 hot thumbnails, rendered once in JPEG and in WebP (so that the front mix is all hits);
# their ETags for the 304s.
ETAGS=()
for i in $(seq 0 19); do
  url="http://127.0.0.1:$PORT/thumbnails/5/$(printf 's%04d' "$i").jpg"
  ETAGS+=("$(curl -fs -D - -o /dev/null "$url" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" {print $2}')")
  curl -fs -o /dev/null -H 'Accept: image/webp,image/*' "$url"
done
echo "soak: setup took $(( ($(now_ms) - t_setup) / 1000 )) s; ${SECONDS_ARG} s of load on $THUMBD ($(nproc) cores, load avg $(cut -d' ' -f1-3 /proc/loadavg))"
set +e
python3 "$HERE/soak.py" --port "$PORT" --pid "$SERVER_PID" --observer-pid "$OBSERVER" --library "$LIB" \
  --corpus "$WORK" --work "$WORK" --lua "$HERE/soak.lua" --duration "$SECONDS_ARG" \
  --change-photos "${CHANGE_PHOTOS[@]}" --videos "${VIDEOS[@]}" --etags "${ETAGS[@]}" "${JUDGE[@]}"
status=$?
set -e
kill "$OBSERVER" 2>/dev/null || true
if [ $status -ne 0 ]; then
  echo "soak: server log (last 20 lines):"; tail -20 "$WORK/server-$PORT.log"
fi
exit $status
