#!/usr/bin/env bash
# Soak test (hostile-input and overload issue): MINUTES (default 10) one-minute rounds of wrk at
# 256 connections on 127.0.0.1 mixing memory hits, misses (2,000 distinct photos x grids x
# formats), prefetch starts and stops, and bad requests. After each round it prints wrk's counts,
# thumbd's resident memory and a few /stats counters; resident memory must level off.
# Usage: Tests/Benchmarks/soak.sh [MINUTES]   (needs wrk and ../shared/corpus)
source "$(dirname "$0")/common.sh"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install -y wrk)" >&2; exit 2; }
MINUTES=${1:-10}
PORT=${PORT:-18434}
LIB="$WORK/library"; mkdir -p "$LIB"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
for i in $(seq 0 1999); do ln "${PHOTOS[$((i % ${#PHOTOS[@]}))]}" "$LIB/$(printf 's%04d' "$i").jpg"; done
start_server "$LIB" "$PORT" --memory-cache-bytes 67108864 --disk-cache-bytes 268435456
until [ "$(curl -fs "http://127.0.0.1:$PORT/assets?limit=0" | sed -E 's/.*"total":([0-9]+).*/\1/')" = 2000 ]; do sleep 0.2; done

cat > "$WORK/mix.lua" <<'LUA'
-- One request of the mix per call: 70% hits on 20 hot thumbnails, 20% misses over 2,000 photos,
-- 5% bad requests, 5% prefetch (start a small range, or stop everything).
math.randomseed(os.time())
local bad = { "/thumbnails/3/..%2f..%2fetc%2fpasswd", "/thumbnails/9/s0001.jpg", "/thumbnails/3/%zz",
              "/thumbnails/3/missing.jpg", "/assets?limit=-1" }
request = function()
  local r = math.random(100)
  if r <= 70 then
    return wrk.format("GET", string.format("/thumbnails/5/s%04d.jpg", math.random(0, 19)))
  elseif r <= 90 then
    local grids, formats = { "1", "3", "5" }, { "jpeg", "webp" }
    return wrk.format("GET", string.format("/thumbnails/%s/s%04d.jpg?format=%s",
      grids[math.random(3)], math.random(20, 1999), formats[math.random(2)]))
  elseif r <= 95 then
    return wrk.format("GET", bad[math.random(#bad)])
  elseif r <= 98 then
    local s = math.random(0, 1900)
    return wrk.format("POST", "/prefetch", { ["Content-Type"] = "application/json" },
      string.format('{"grid": "3", "start": %d, "end": %d}', s, s + 20))
  else
    return wrk.format("DELETE", "/prefetch")
  end
end
LUA
for i in $(seq 0 19); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/thumbnails/5/$(printf 's%04d' "$i").jpg"; done

rss() { awk '/VmRSS/ {print int($2 / 1024) " MB"}' "/proc/$SERVER_PID/status"; }
printf '%-6s %-10s %-9s %-12s %-16s %-9s %s\n' minute requests "req/s" "non-2xx/3xx" "socket errors" RSS "renders / refused / write_errors"
for m in $(seq 1 "$MINUTES"); do
  out=$(wrk -t2 -c256 -d60s --timeout 30s -s "$WORK/mix.lua" "http://127.0.0.1:$PORT" 2>&1)
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  rate=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}'); non2xx=${non2xx:-0}
  sockerr=$(echo "$out" | sed -nE 's/.*Socket errors: (.*)/\1/p'); sockerr=${sockerr:-none}
  stats=$(curl -fs "http://127.0.0.1:$PORT/stats")
  renders=$(echo "$stats" | sed -E 's/.*"renders":\{"total":([0-9]+).*/\1/')
  refused=$(echo "$stats" | sed -E 's/.*"refused":([0-9]+).*/\1/')
  writes=$(echo "$stats" | sed -E 's/.*"write_errors":([0-9]+).*/\1/')
  printf '%-6s %-10s %-9s %-12s %-16s %-9s %s / %s / %s\n' "$m" "$requests" "$rate" "$non2xx" "$sockerr" "$(rss)" "$renders" "$refused" "$writes"
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "server stopped answering" >&2; exit 1; }
done
echo "final /stats: $(curl -fs "http://127.0.0.1:$PORT/stats")"
