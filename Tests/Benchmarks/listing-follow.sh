#!/usr/bin/env bash
# The listing following the library: a library of N photos (default 100,000; hard links of the
# corpus photos under distinct names, 1,000 folders of N/1,000), a release thumbd with its
# default settings. Prints:
#   first scan      process start to a full listing, and its rate in headers/s
#   idle            CPU of the idle server over 10 s after the first scan (% of one core), RSS
#   changes         50 photos copied in and 50 deleted, one at a time: from the change to
#                   /stats library.assets saying so (p50, p99, max; polled every 5 ms)
#   bulk copy       a folder of B photos (default 10,000; copies of the corpus' smallest JPEG)
#                   copied in with cp -r: from the start of
#                   the copy to all of them listed (and how long the copy itself took), against
#                   the first scan's time for B
# Usage: Tests/Benchmarks/listing-follow.sh [N] [B]   (PORT=... to change the port, 18434)
source "$(dirname "$0")/common.sh"
N=${1:-100000}
B=${2:-10000}
PORT=${PORT:-18434}
URL="http://127.0.0.1:$PORT"
LIB="$WORK/library"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
per=$(( (N + 999) / 1000 ))
made=0
for d in $(seq 0 999); do
  [ $made -lt "$N" ] || break
  mkdir -p "$LIB/$d"
  for i in $(seq 0 $((per - 1))); do
    [ $made -lt "$N" ] || break
    ln "${PHOTOS[$((made % ${#PHOTOS[@]}))]}" "$LIB/$d/IMG_$made.jpg"
    made=$((made + 1))
  done
done
assets() { curl -fs "$URL/stats" | sed -E 's/.*"library":\{"assets":([0-9]+).*/\1/'; }
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

# One change at a time, each waited for; latencies in ms.
lat=()
wait_for() {  # wait_for COUNT: ms until library.assets is COUNT (at most 10 s)
  local start=$1 want=$2
  for _ in $(seq 2000); do
    [ "$(assets)" = "$want" ] && { lat+=($(( $(now_ms) - start ))); return; }
    sleep 0.005
  done
  lat+=(10000)
}
count=$N
mkdir -p "$LIB/incoming"
for i in $(seq 0 49); do
  s=$(now_ms); cp "${PHOTOS[$((i % ${#PHOTOS[@]}))]}" "$LIB/incoming/new-$i.jpg"; count=$((count + 1)); wait_for "$s" "$count"
done
for i in $(seq 0 49); do
  s=$(now_ms); rm "$LIB/incoming/new-$i.jpg"; count=$((count - 1)); wait_for "$s" "$count"
done
sorted=($(printf '%s\n' "${lat[@]}" | sort -n))
p50=${sorted[$(( ${#sorted[@]} / 2 ))]}
p99=${sorted[$(( ${#sorted[@]} * 99 / 100 ))]}
max=${sorted[$(( ${#sorted[@]} - 1 ))]}

# Bulk copy: B photos made outside the library (links of the corpus' smallest JPEG, so that the
# copy writes B small files, not gigabytes), then copied in with cp -r.
SMALLEST=$(ls -S "$CORPUS/photos"/*.jpg | tail -1)
mkdir -p "$WORK/bulk/album"
for i in $(seq 0 $((B - 1))); do ln "$SMALLEST" "$WORK/bulk/album/b-$i.jpg"; done
s=$(now_ms)
cp -r "$WORK/bulk/album" "$LIB/album"
copied=$(( $(now_ms) - s ))
until [ "$(assets)" = $((N + B)) ]; do sleep 0.02; done
bulk=$(( $(now_ms) - s ))
stop_server

printf 'listing-follow: %d photos in 1,000 folders, %s, load %s\n' "$N" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %8d ms  (%d headers/s)\n' "first scan: start to a full listing" "$first" $(( N * 1000 / (first > 0 ? first : 1) ))
printf '%-44s %8d ms of CPU in 10 s (%d.%d%% of a core); RSS %d MiB\n' "idle after the first scan" "$idle_ms" $((idle_ms / 100)) $((idle_ms % 100 / 10)) $((rss / 1024))
printf '%-44s p50 %d ms, p99 %d ms, max %d ms\n' "100 changes (50 copied in, 50 deleted)" "$p50" "$p99" "$max"
printf '%-44s %8d ms  (the copy itself %d ms; the first scan of %d would take about %d ms)\n' \
  "cp -r of $B photos: start to all listed" "$bulk" "$copied" "$B" $(( first * B / N ))
