#!/usr/bin/env bash
# The listing's placeholders at scale: a library of COUNT (10,000) photos, hard links of the
# corpus photos under distinct names in 100 folders. Prints
#   - the backfill of every placeholder from a fresh start: wall time, rate, cost per photo;
#     with SEED=1 instead, every photo's placeholder is written into the index directly (the
#     same 24-byte hash for all; the backfill of 50,000 would take hours) and the servers
#     start over that index, the backfill and previews off;
#   - GET /assets?limit=BIG (COUNT, at most 10,000: the largest page) and ?limit=100 with every
#     thumbhash known (that server) against every one null (a second server, backfill off, fresh
#     cache), and with BASELINE=PATH an older thumbd as a third (e.g. main's
#     .build/release/thumbd; with SEED, over a copy of the seeded index): RUNS (60) requests to
#     each, interleaved so that the machine's load falls on all alike, timed by each server's
#     access log (request in to response written); min, p10 and median, and the bytes per item.
# Usage: Tests/Benchmarks/listing-thumbhash.sh   (COUNT=N RUNS=N BASELINE=PATH SEED=1)
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18437}
COUNT=${COUNT:-10000}
RUNS=${RUNS:-60}
LIB="$WORK/library"
python3 - "$CORPUS/photos" "$LIB" "$COUNT" <<'PY'
import glob, os, sys
photos, lib, count = sorted(glob.glob(sys.argv[1] + "/*.jpg")), sys.argv[2], int(sys.argv[3])
for n in range(count):
    folder = os.path.join(lib, "%02d" % (n * 100 // count))
    os.makedirs(folder, exist_ok=True)
    os.link(photos[n % len(photos)], os.path.join(folder, "IMG_%05d.jpg" % n))
PY
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; cleanup' EXIT
# serve NAME PORT BINARY [flags...]: a server with an access log in $WORK/NAME.log, once it lists COUNT.
serve() {
  local name="$1" port="$2" binary="$3"; shift 3
  (cd "$WORK" && exec "$binary" --library "$LIB" --port "$port" --cache-dir "$WORK/cache-$name" --access-log "$@") \
    >>"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  until [ "$(curl -fs "http://127.0.0.1:$port/assets?limit=0" 2>/dev/null | sed -E 's/.*"total":([0-9]+).*/\1/')" = "$COUNT" ]; do sleep 0.1; done
}
stat_of() { curl -fs "http://127.0.0.1:$1/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

s=$(now_ms)
KEEP=()   # with SEED: nothing made or read while measured
if [ -n "${SEED:-}" ]; then
  KEEP=(--no-thumbhash-backfill --no-thumbhash-previews)
  serve known "$PORT" "$THUMBD" "${KEEP[@]}"
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  unset 'PIDS[-1]'   # gone: the trap's kill of it would fail and end the trap (set -e) before the others
  python3 - "$WORK/cache-known/index.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
hash = bytes.fromhex("1dd70915824d3c89af68988a95888656c240021d15000000")   # 24 bytes, as these photos' are
db.execute("INSERT OR REPLACE INTO thumbhashes SELECT path, bytes, mtime_ns, ? FROM assets WHERE is_image = 1", (hash,))
db.commit()
PY
  if [ -n "${BASELINE:-}" ]; then cp -a "$WORK/cache-known" "$WORK/cache-baseline"; fi
  serve known "$PORT" "$THUMBD" "${KEEP[@]}"
  printf 'placeholders of %s photos seeded into the index in %s s: %s known\n' "$COUNT" "$(( ($(now_ms) - s) / 1000 ))" \
    "$(stat_of "$PORT" "d['placeholders']['known']")"
else
  serve known "$PORT" "$THUMBD"
  until [ "$(stat_of "$PORT" "d['placeholders']['backfill']['passes']")" -ge 1 ]; do sleep 1; done
  printf 'backfill of %s photos: %s s from start; %s\n' "$COUNT" "$(( ($(now_ms) - s) / 1000 ))" \
    "$(stat_of "$PORT" "'%d renders, %.1f per second, %.1f ms per photo (shrink %.2f ms, hash %.2f ms), %d known' % (d['placeholders']['backfill']['renders'], d['placeholders']['backfill']['per_second'], d['placeholders']['backfill']['ms_per_asset'], d['placeholders']['shrink_ms_mean'], d['placeholders']['encode_ms_mean'], d['placeholders']['known'])")"
fi
servers=("known $PORT" "null $((PORT + 1))")
serve null $((PORT + 1)) "$THUMBD" --no-thumbhash-backfill --no-thumbhash-previews
if [ -n "${BASELINE:-}" ]; then servers+=("baseline $((PORT + 2))"); serve baseline $((PORT + 2)) "$BASELINE" "${KEEP[@]}"; fi

BIG=$(( COUNT < 10000 ? COUNT : 10000 ))   # the largest page (docs/API.md: limit at most 10,000)
for limit in "$BIG" 100; do
  for _ in $(seq "$RUNS"); do
    for server in "${servers[@]}"; do curl -fs -o /dev/null "http://127.0.0.1:${server#* }/assets?limit=$limit"; done
  done
  sleep 0.5   # the access logs are written from a queue
  for server in "${servers[@]}"; do
    name=${server% *}
    bytes=$(curl -fs "http://127.0.0.1:${server#* }/assets?limit=$limit" | wc -c)
    grep -F "/assets?limit=$limit " "$WORK/$name.log" | sed -E 's/.* ([0-9.]+)ms$/\1/' | sort -n | \
      awk -v name="$name" -v limit="$limit" -v bytes="$bytes" '{a[NR]=$1} END {
        printf "thumbhash %-8s limit=%-6s min %6.1f ms  p10 %6.1f ms  median %6.1f ms  (%d requests)  %d bytes, %d per item\n",
          name, limit, a[1], a[int(NR * 0.1) + 1], a[int((NR + 1) / 2)], NR, bytes, bytes / limit }'
  done
done
