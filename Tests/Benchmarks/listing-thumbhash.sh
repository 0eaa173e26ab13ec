#!/usr/bin/env bash
# The listing's placeholders at scale: a library of COUNT (10,000) photos, hard links of the
# corpus photos under distinct names in 100 folders. Prints
#   - the backfill of every placeholder: its wall time, rate and cost per photo (/stats);
#   - GET /assets?limit=10000 (and limit=100) latency, median and p90 of RUNS (30) requests,
#     with every thumbhash null (backfill off, fresh cache) and with every one known;
#   - the listing's bytes per item with and without a thumbhash;
#   - with BASELINE=PATH (an older thumbd, e.g. main's .build/release/thumbd), its latency too.
# Latency on a shared machine is noisy: compare the medians, run it twice.
# Usage: Tests/Benchmarks/listing-thumbhash.sh
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18437}
COUNT=${COUNT:-10000}
RUNS=${RUNS:-30}
LIB="$WORK/library"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
for n in $(seq 0 $((COUNT - 1))); do
  d=$(printf '%02d' $((n / (COUNT / 100 > 0 ? COUNT / 100 : 1) % 100)))
  mkdir -p "$LIB/$d"
  ln "${PHOTOS[$((n % ${#PHOTOS[@]}))]}" "$LIB/$d/IMG_$(printf '%05d' "$n").jpg"
done
stat_of() { curl -fs "http://127.0.0.1:$PORT/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_listed() { until [ "$(curl -fs "http://127.0.0.1:$PORT/assets?limit=0" | sed -E 's/.*"total":([0-9]+).*/\1/')" = "$COUNT" ]; do sleep 0.1; done; }

# latency LABEL LIMIT: median and p90 of RUNS GETs of the first page of LIMIT items, and its bytes.
latency() {
  local label="$1" limit="$2" times
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/assets?limit=$limit"   # warm
  times=$(for _ in $(seq "$RUNS"); do curl -fs -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/assets?limit=$limit"; done | sort -n)
  local bytes; bytes=$(curl -fs "http://127.0.0.1:$PORT/assets?limit=$limit" | wc -c)
  printf '%-44s limit=%-6s median %7.1f ms  p90 %7.1f ms  %9s bytes (%s per item)\n' "$label" "$limit" \
    "$(echo "$times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] * 1000}')" \
    "$(echo "$times" | awk '{a[NR]=$1} END {print a[int(NR*0.9)] * 1000}')" "$bytes" "$((bytes / limit))"
}

if [ -n "${BASELINE:-}" ]; then
  saved="$THUMBD"; THUMBD="$BASELINE"
  start_server "$LIB" "$PORT"; wait_listed
  latency "baseline ($BASELINE)" "$COUNT"; latency "baseline" 100
  stop_server; THUMBD="$saved"
fi

start_server "$LIB" "$PORT" --no-thumbhash-backfill; wait_listed
latency "every thumbhash null" "$COUNT"; latency "every thumbhash null" 100
stop_server

s=$(now_ms)
start_server "$LIB" "$PORT"; wait_listed
until [ "$(stat_of "d['placeholders']['backfill']['passes']")" -ge 1 ]; do sleep 1; done
wall=$(( $(now_ms) - s ))
printf 'backfill of %s photos: %s s from start; %s\n' "$COUNT" "$((wall / 1000))" \
  "$(stat_of "'%d renders, %.1f per second, %.1f ms per photo (shrink %.2f ms, hash %.2f ms), %d known' % (d['placeholders']['backfill']['renders'], d['placeholders']['backfill']['per_second'], d['placeholders']['backfill']['ms_per_asset'], d['placeholders']['shrink_ms_mean'], d['placeholders']['encode_ms_mean'], d['placeholders']['known'])")"
latency "every thumbhash known" "$COUNT"; latency "every thumbhash known" 100
stop_server
