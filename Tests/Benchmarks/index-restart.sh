#!/usr/bin/env bash
# Library index at scale: a library of 10,000 photos (hard links of the corpus photos under
# distinct names, in 100 folders). Prints how long the first full scan takes, then how long a
# restart takes to answer its first listing, and how many headers the restart read (should be 0).
# Usage: Tests/Benchmarks/index-restart.sh
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18433}
LIB="$WORK/library"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
for d in $(seq -w 0 99); do
  mkdir -p "$LIB/$d"
  for i in $(seq -w 0 99); do ln "${PHOTOS[$(( (10#$d * 100 + 10#$i) % ${#PHOTOS[@]} ))]}" "$LIB/$d/IMG_$d$i.jpg"; done
done
field() { sed -E "s/.*\"$1\":([0-9]+).*/\\1/"; }

s=$(now_ms)
start_server "$LIB" "$PORT"
until [ "$(curl -fs "http://127.0.0.1:$PORT/assets?limit=0" | field total)" = 10000 ]; do sleep 0.05; done
first=$(( $(now_ms) - s ))
reads=$(curl -fs "http://127.0.0.1:$PORT/stats" | sed -E 's/.*"header_reads":([0-9]+).*/\1/')
stop_server

s=$(now_ms)
"$THUMBD" --library "$LIB" --port "$PORT" --cache-dir "$WORK/cache-$PORT" >"$WORK/restart.log" 2>&1 &
SERVER_PID=$!
until [ "$(curl -fs "http://127.0.0.1:$PORT/assets?limit=100" 2>/dev/null | field total)" = 10000 ]; do sleep 0.01; done
again=$(( $(now_ms) - s ))
sleep 1   # let the restart's rescan (stat only) finish
rereads=$(curl -fs "http://127.0.0.1:$PORT/stats" | sed -E 's/.*"header_reads":([0-9]+).*/\1/')
printf '%-62s %6s ms  (%s header reads)\n' "fresh start: process start to a full listing of 10,000" "$first" "$reads"
printf '%-62s %6s ms  (%s header reads)\n' "restart: process start to the first listing of 10,000" "$again" "$rereads"
