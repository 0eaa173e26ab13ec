#!/usr/bin/env bash
# The two figures of the thumbnail-server issue, measured in one run:
#  1. a miss on a 12 MP JPEG at grid 3 (the render time thumbd reports in Server-Timing), next to
#     vipsthumbnail on the same file (one process; its start-up is timed on a 1x1 JPEG and shown);
#  2. memory-hit requests per second with wrk -t2 -c64 on 127.0.0.1 (needs wrk).
# Usage: Tests/Benchmarks/miss-and-hits.sh
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18432}
PHOTO="google-pixel-12mp-gps.jpg"   # 4048x3036, 4 MB
LIB="$WORK/library"; mkdir -p "$LIB"
for i in $(seq 0 9); do ln "$CORPUS/photos/$PHOTO" "$LIB/m$i-$PHOTO"; done
cp "$CORPUS/photos/Landscape_1.jpg" "$LIB/hot.jpg"

start_server "$LIB" "$PORT"
misses=()
for i in $(seq 0 9); do
  t=$(curl -fs -o /dev/null -D - "http://127.0.0.1:$PORT/thumbnails/3/m$i-$PHOTO" | tr -d '\r' \
      | sed -nE 's/^Server-Timing: render;dur=([0-9.]+)/\1/p')
  misses+=("$t")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "miss render times (ms, Server-Timing): ${misses[*]}"

vips_ms=()
for i in $(seq 0 9); do
  s=$(date +%s%N); vipsthumbnail "$LIB/m$i-$PHOTO" -s '393x393>' --smartcrop centre -o "$WORK/v$i.jpg[Q=80,strip]"
  vips_ms+=("$(( ($(date +%s%N) - s) / 1000000 ))")
done
start_ms=()
for i in $(seq 0 9); do
  s=$(date +%s%N); vipsthumbnail "$CORPUS/photos/iphone-xr-1x1-gps.jpg" -s '393x393>' -o "$WORK/one.jpg[Q=80,strip]"
  start_ms+=("$(( ($(date +%s%N) - s) / 1000000 ))")
done
printf '%-52s %s ms\n' "thumbd miss, 12 MP JPEG at grid 3 (median of 10)" "$(median "${misses[@]}")"
printf '%-52s %s ms\n' "vipsthumbnail, same file, whole process (median)" "$(median "${vips_ms[@]}")"
printf '%-52s %s ms\n' "vipsthumbnail start-up alone (1x1 JPEG, median)" "$(median "${start_ms[@]}")"

if command -v wrk >/dev/null; then
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/thumbnails/3/hot.jpg"
  curl -fs -o /dev/null -D - "http://127.0.0.1:$PORT/thumbnails/3/hot.jpg" | grep -i x-cache
  bytes=$(curl -fs "http://127.0.0.1:$PORT/thumbnails/3/hot.jpg" | wc -c)
  echo "memory hits: wrk -t2 -c64 -d10s, a $bytes-byte grid-3 thumbnail"
  wrk -t2 -c64 -d10s "http://127.0.0.1:$PORT/thumbnails/3/hot.jpg" | grep -E "Requests/sec|Latency|Non-2xx"
else
  echo "wrk not installed: apt-get install -y wrk"
fi
echo "server: $(curl -fs "http://127.0.0.1:$PORT/stats" | sed -E 's/.*"renders":\{([^}]*)\}.*/renders {\1}/')"
