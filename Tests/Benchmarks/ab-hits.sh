#!/usr/bin/env bash
# A/B of the hit path: two thumbd binaries side by side in one run, memory hits (and disk hits,
# memory tier off) alternating round by round, as compare.sh measures them: wrk -t2 -c64 rotating
# over the grid-3 thumbnails of every other corpus photo, and the server's CPU time per request
# from /proc/PID/stat. Prints each round, the medians and new/old ratios. Loads 127.0.0.1 only.
#
# usage: Tests/Benchmarks/ab-hits.sh OLD_BINARY NEW_BINARY   (ROUNDS=5, HIT_SECONDS=10)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
OLD=$1 NEW=$2
ROUNDS=${ROUNDS:-5} HIT_SECONDS=${HIT_SECONDS:-10}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PHOTOS="${THUMBD_CORPUS:-$ROOT/../shared/corpus}/photos"
[ -d "$PHOTOS" ] || { echo "needs the corpus at $PHOTOS (or THUMBD_CORPUS)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "needs wrk (apt-get install -y wrk)" >&2; exit 2; }
WORK="$(mktemp -d /tmp/thumbd-ab.XXXXXX)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT

mapfile -t NAMES < <(cd "$PHOTOS" && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n' | LC_ALL=C sort)
HOT=(); for i in "${!NAMES[@]}"; do [ $((i % 2)) -eq 0 ] && HOT+=("${NAMES[$i]}"); done
{ echo "local paths = {"; for n in "${HOT[@]}"; do echo "  \"/thumbnails/3/$n\","; done; echo "}"
  echo 'local i = 0'
  echo 'request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end'
} >"$WORK/rotate.lua"

launch() {  # launch SIDE BINARY PORT [flags...]: PID[SIDE] once /healthz answers and every hot thumbnail is rendered
  local side=$1 binary=$2 port=$3; shift 3
  # From $WORK: neither binary may read this checkout's config/thumbd.json (an older one refuses newer keys).
  (cd "$WORK" && exec "$binary" --library "$PHOTOS" --port "$port" --cache-dir "$WORK/cache-$port" "$@" >"$WORK/log-$port" 2>&1) &
  local pid=$!
  PID[$side]=$pid PORT[$side]=$port; PIDS+=("$pid")
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null || { echo "$binary did not start:" >&2; cat "$WORK/log-$port" >&2; exit 2; }
  for n in "${HOT[@]}"; do curl -fs -o /dev/null "http://127.0.0.1:$port/thumbnails/3/$n"; curl -fs -o /dev/null "http://127.0.0.1:$port/thumbnails/3/$n"; done
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run_wrk() {  # run_wrk PORT PID: prints "requests/s CPU-us-per-request"
  local out c0 c1; c0=$(cpu_ticks "$2")
  out=$(wrk -t2 -c64 -d"${HIT_SECONDS}s" -s "$WORK/rotate.lua" "http://127.0.0.1:$1/")
  c1=$(cpu_ticks "$2")
  grep -qE 'Non-2xx|Socket errors' <<<"$out" && echo "errors on port $1: $(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr '\n' ' ')" >&2
  awk -v ticks=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n = $1} /^Requests\/sec:/ {r = $2}
    END {printf "%s %.2f\n", r, ticks * 1e6 / hz / n}' <<<"$out"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A PID PORT RPS CPU
launch old-memory "$OLD" 18700
launch new-memory "$NEW" 18701
launch old-disk "$OLD" 18702 --memory-cache-bytes 0
launch new-disk "$NEW" 18703 --memory-cache-bytes 0
echo "load avg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for side in old-memory new-memory old-disk new-disk; do
    read -r v c < <(run_wrk "${PORT[$side]}" "${PID[$side]}")
    RPS[$side]+="$v " CPU[$side]+="$c "
  done
done
printf '%-12s %-48s %-12s %s\n' side "req/s by round" "median" "CPU us/hit (median)"
for side in old-memory new-memory old-disk new-disk; do
  # shellcheck disable=SC2086
  printf '%-12s %-48s %-12s %s\n' "$side" "${RPS[$side]}" "$(median ${RPS[$side]})" "$(median ${CPU[$side]}) (${CPU[$side]% })"
done
for tier in memory disk; do
  # shellcheck disable=SC2086
  awk -v a="$(median ${RPS[old-$tier]})" -v b="$(median ${RPS[new-$tier]})" -v c="$(median ${CPU[old-$tier]})" -v d="$(median ${CPU[new-$tier]})" -v t="$tier" \
    'BEGIN {printf "%s hits: new/old req/s %.3fx, CPU per hit %.3fx\n", t, b / a, d / c}'
done
echo "load avg at end: $(cut -d' ' -f1-3 /proc/loadavg)"
