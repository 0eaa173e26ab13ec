#!/usr/bin/env bash
# The listing following the library: a library of N photos (default 100,000; hard links of the
# corpus photos under distinct names, 1,000 folders of N/1,000), a release thumbd with its
# default settings. Prints:
#   first scan      process start to a full listing, and its rate in headers/s
#   idle            CPU of the idle server over 10 s after the first scan (% of one core), RSS
#   changes         100 changes, one at a time, 25 rounds of: a photo added, renamed, replaced
#                   (another photo moved over it) and deleted; each from the change to /assets
#                   showing it (p50, p99, max; polled every 5 ms)
#   bulk copy       a folder of B photos (default 10,000; copies of the corpus' smallest JPEG)
#                   copied in with cp -r: from the start of the copy to all of them listed (and
#                   how long the copy itself took), against a first scan of that same folder
#                   alone (another server, measured after)
# Usage: Tests/Benchmarks/listing-follow.sh [N] [B]   (PORT=... to change the port, 18434)
# Makes the library with Python (a shell loop of N `ln` takes minutes at 1,000,000).
source "$(dirname "$0")/common.sh"
N=${1:-100000}
B=${2:-10000}
PORT=${PORT:-18434}
URL="http://127.0.0.1:$PORT"
LIB="$WORK/library"
SMALLEST=$(ls -S "$CORPUS/photos"/*.jpg | tail -1)
python3 - "$CORPUS/photos" "$LIB" "$N" "$SMALLEST" "$WORK/bulk/album" "$B" <<'PY'
import glob, os, sys
photos, lib, n, smallest, bulk, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
photos = sorted(glob.glob(photos + '/*.jpg'))
per = (n + 999) // 1000
for i in range(n):
    d = f'{lib}/{i // per}'
    if i % per == 0: os.makedirs(d, exist_ok=True)
    os.link(photos[i % len(photos)], f'{d}/IMG_{i}.jpg')
os.makedirs(bulk)
for i in range(b): os.link(smallest, f'{bulk}/b-{i}.jpg')
PY
# Two photos without EXIF dates (listed by mtime, so a fresh copy is the newest item), of
# different sizes: the changes are seen at the top of /assets?sort=newest.
vipsthumbnail "$SMALLEST" --size 64 -o "$WORK/a.jpg[strip]"
vipsthumbnail "$SMALLEST" --size 48 -o "$WORK/b.jpg[strip]"
B_WIDTH=$(vipsheader -f width "$WORK/b.jpg")
assets() { curl -fs "$URL/stats" | sed -E 's/.*"library":\{"assets":([0-9]+).*/\1/'; }
newest() {  # the newest item's path and width (sed, not a JSON parser: a poll every 5 ms)
  curl -fs "$URL/assets?sort=newest&limit=1" | sed -E 's/.*"items":\[\{"path":"([^"]*)".*"width":([0-9]+).*/\1 \2/'
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

s=$(now_ms)
start_server "$LIB" "$PORT"
until [ "$(assets)" = "$N" ]; do sleep 0.05; done
first=$(( $(now_ms) - s ))
sleep 2
t0=$(cpu_ticks); sleep 10; t1=$(cpu_ticks)
hz=$(getconf CLK_TCK)
idle_ms=$(( (t1 - t0) * 1000 / hz ))
rss=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status")

# One change at a time, each waited for; latencies in ms, by kind.
declare -A lat
until_listed() {  # until_listed KIND START CONDITION...: ms until CONDITION holds (at most 10 s)
  local kind=$1 start=$2; shift 2
  for _ in $(seq 2000); do
    if "$@"; then lat[$kind]+="$(( $(now_ms) - start )) "; return; fi
    sleep 0.005
  done
  lat[$kind]+="10000 "
}
top_is() { [ "$(newest)" = "$1" ]; }
count_is() { [ "$(assets)" = "$1" ]; }
mkdir -p "$LIB/incoming"
A_WIDTH=$(vipsheader -f width "$WORK/a.jpg")
for i in $(seq 0 24); do
  s=$(now_ms); cp "$WORK/a.jpg" "$LIB/incoming/new-$i.jpg"; until_listed added "$s" top_is "incoming/new-$i.jpg $A_WIDTH"
  s=$(now_ms); mv "$LIB/incoming/new-$i.jpg" "$LIB/incoming/renamed-$i.jpg"; until_listed renamed "$s" top_is "incoming/renamed-$i.jpg $A_WIDTH"
  cp "$WORK/b.jpg" "$WORK/next.jpg"
  s=$(now_ms); mv "$WORK/next.jpg" "$LIB/incoming/renamed-$i.jpg"; until_listed replaced "$s" top_is "incoming/renamed-$i.jpg $B_WIDTH"
  s=$(now_ms); rm "$LIB/incoming/renamed-$i.jpg"; until_listed deleted "$s" count_is "$N"
done
stats() {  # stats LATENCIES...: p50 p99 max
  local sorted; sorted=($(printf '%s\n' "$@" | sort -n))
  echo "p50 ${sorted[$(( ${#sorted[@]} / 2 ))]} ms, p99 ${sorted[$(( ${#sorted[@]} * 99 / 100 ))]} ms, max ${sorted[$(( ${#sorted[@]} - 1 ))]} ms"
}

# Bulk copy: B small photos made outside the library (links of the corpus' smallest JPEG, so that
# the copy writes B small files, not gigabytes), then copied in with cp -r.
s=$(now_ms)
cp -r "$WORK/bulk/album" "$LIB/album"
copied=$(( $(now_ms) - s ))
until [ "$(assets)" = $((N + B)) ]; do sleep 0.02; done
bulk=$(( $(now_ms) - s ))
stop_server
# The same B photos scanned by a fresh server as a library of their own.
s=$(now_ms)
start_server "$WORK/bulk" "$PORT"
until [ "$(assets)" = "$B" ]; do sleep 0.02; done
alone=$(( $(now_ms) - s ))
stop_server

printf 'listing-follow: %d photos in 1,000 folders, %s, load %s, %s\n' "$N" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(git -C "$ROOT" log -1 --format=%h)"
printf '%-44s %8d ms  (%d headers/s)\n' "first scan: start to a full listing" "$first" $(( N * 1000 / (first > 0 ? first : 1) ))
printf '%-44s %8d ms of CPU in 10 s (%d.%d%% of a core); RSS %d MiB\n' "idle after the first scan" "$idle_ms" $((idle_ms / 100)) $((idle_ms % 100 / 10)) $((rss / 1024))
for kind in added renamed replaced deleted; do
  # shellcheck disable=SC2086
  printf '%-44s %s\n' "25 photos $kind, one at a time" "$(stats ${lat[$kind]})"
done
# shellcheck disable=SC2086
printf '%-44s %s\n' "all 100 changes" "$(stats ${lat[added]} ${lat[renamed]} ${lat[replaced]} ${lat[deleted]})"
printf '%-44s %8d ms  (the copy itself %d ms; a first scan of those %d alone: %d ms)\n' \
  "cp -r of $B photos: start to all listed" "$bulk" "$copied" "$B" "$alone"
