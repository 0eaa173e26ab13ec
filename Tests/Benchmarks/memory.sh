#!/usr/bin/env bash
# Memory table (issue 33, item 4: "how much memory to give it"). For each configuration of
# render workers (1, 2, 4) x memory tier (--memory-cache-bytes 8 MiB, or the default 256 MiB) x
# malloc arenas (thumbd's own cap of 2, or MALLOC_ARENA_MAX=16, glibc's default on 2 cores), it
# starts a fresh server on a library of 2,000 hard links to the corpus photos and measures its
# resident memory:
#   idle  after start, the first listing scan and the placeholder backfill's pass over the library;
#   load  60 s of wrk (-t2 -c32, 127.0.0.1 only): 80% misses over the 2,000 photos at grids 1, 3, 5
#         in JPEG or WebP, 20% memory hits on 20 hot thumbnails; sampled every second: peak and end;
#   after 10 s after the load stopped.
# Resident memory is VmRSS from /proc/PID/status (RssAnon + RssFile + RssShmem, each also shown).
# The memory tier keeps thumbnails in memfds that thumbd does not map, so their pages are in no
# Rss* figure: the memfd column is /stats memory_cache.bytes (the entries' bytes; the pages, rounded
# to 4 KiB per entry, are shown after each row). Both count against a cgroup's memory limit.
# Also printed: libvips' tracked-allocation high-water (/stats process.vips_memory_highwater_bytes)
# and the number of malloc arenas seen in /proc/PID/maps (64 MiB heaps) at the end.
# Each server is stopped and its cache removed before the next starts.
# Usage: Tests/Benchmarks/memory.sh [--arenas-all]   (needs wrk, python3 and ../shared/corpus)
#   By default the MALLOC_ARENA_MAX=16 rows are run for 2 workers only (8 configurations, about
#   15-20 minutes); --arenas-all runs them for 1, 2 and 4 workers (12 configurations).
#   THUMBD_BINARY=PATH measures that binary instead of building one; LOAD_SECONDS=60 by default.
source "$(dirname "$0")/common.sh"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install -y wrk)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
ARENA16_WORKERS="2"
[ "${1:-}" = "--arenas-all" ] && ARENA16_WORKERS="1 2 4"
LOAD_SECONDS=${LOAD_SECONDS:-60}
PORT_BASE=${PORT:-18460}
MIB=1048576

LIB="$WORK/library"; mkdir -p "$LIB"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
for i in $(seq 0 1999); do ln "${PHOTOS[$((i % ${#PHOTOS[@]}))]}" "$LIB/$(printf 's%04d' "$i").jpg"; done

cat > "$WORK/mix.lua" <<'LUA'
-- 80% misses over 2,000 photos x grids 1, 3, 5 x JPEG/WebP; 20% memory hits on 20 hot thumbnails.
math.randomseed(os.time())
local grids, formats = { "1", "3", "5" }, { "jpeg", "webp" }
request = function()
  if math.random(100) <= 20 then
    return wrk.format("GET", string.format("/thumbnails/5/s%04d.jpg", math.random(0, 19)))
  end
  return wrk.format("GET", string.format("/thumbnails/%s/s%04d.jpg?format=%s",
    grids[math.random(3)], math.random(20, 1999), formats[math.random(2)]))
end
LUA

# status_kib PID: "VmRSS RssAnon RssFile RssShmem" in KiB.
status_kib() { awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2} /^RssShmem/ {s=$2} END {print r, a, f, s}' "/proc/$1/status"; }
stats() { curl -fs "http://127.0.0.1:$1/stats"; }
# json FIELD.PATH: reads one number from /stats JSON on stdin.
json() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k]
print(d if d is not None else 0)' "$1"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }   # KiB -> MiB
# memfd_pages PID: bytes of pages held by the process's memfds (st_blocks), and their count.
memfd_pages() { python3 - "$1" <<'PY'
import os, sys
d = f"/proc/{sys.argv[1]}/fd"; total = n = 0
for fd in os.listdir(d):
    try:
        if os.readlink(f"{d}/{fd}").startswith("/memfd:"):
            total += os.stat(f"{d}/{fd}").st_blocks * 512; n += 1
    except OSError: pass
print(total, n)
PY
}
# arenas PID: malloc arenas = 1 (main, on the brk heap) + 64 MiB-aligned anonymous heaps of 64 MiB.
arenas() { python3 - "$1" <<'PY'
import sys
maps = []
for line in open(f"/proc/{sys.argv[1]}/maps"):
    p = line.split()
    a, b = (int(x, 16) for x in p[0].split("-"))
    maps.append((a, b, p[1], len(p) > 5))
H = 64 << 20; n = 1; i = 0
while i < len(maps):
    a, b, perm, named = maps[i]
    if not named and a % H == 0 and perm.startswith("rw"):
        end, j = b, i + 1
        while j < len(maps) and maps[j][0] == end and not maps[j][3] and end < a + H:
            end = maps[j][1]; j += 1
        if end == a + H: n += 1; i = j; continue
    i += 1
print(n)
PY
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "thumbd memory table ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r); glibc $(ldd --version | head -1 | awk '{print $NF}'); load avg at start $(loadavg)"
echo "binary: $THUMBD; library: 2,000 hard links to $CORPUS/photos (${#PHOTOS[@]} photos); load: wrk -t2 -c32 ${LOAD_SECONDS}s, 80% misses (grids 1/3/5, JPEG/WebP), 20% memory hits"
echo "MiB; RSS = VmRSS = anon + file + shmem; memfd = /stats memory_cache.bytes (not in RSS); vips hw = libvips tracked high-water"
echo
HDR='| workers | tier | arenas | idle RSS (anon/file) | load peak RSS | load end RSS (anon/file) | load end memfd | after 10 s RSS (anon/file) | after memfd | peak RSS + memfd | vips hw | RSS growth, 2nd half of load | renders | req/s | non-2xx | load avg |'
echo "$HDR"
echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
DETAILS=()

run() {   # run WORKERS TIER(8|default) ARENAS(2|16)
  local workers=$1 tier=$2 arena=$3 port=$((PORT_BASE + ${#DETAILS[@]}))
  local flags=(--render-workers "$workers")
  [ "$tier" = 8 ] && flags+=(--memory-cache-bytes $((8 * MIB)))
  local t0; t0=$(now_ms)
  if [ "$arena" = 16 ]; then MALLOC_ARENA_MAX=16 start_server "$LIB" "$port" "${flags[@]}"
  else start_server "$LIB" "$port" "${flags[@]}"; fi
  local pid=$SERVER_PID base="http://127.0.0.1:$port"
  # Idle: the first scan has listed all 2,000, and the placeholder backfill has made its pass.
  until [ "$(stats "$port" | json library.assets)" = 2000 ]; do sleep 0.2; done
  local scan_ms=$(( $(now_ms) - t0 )) waited=0
  until [ "$(stats "$port" | json placeholders.backfill.passes)" -ge 1 ] || [ $waited -ge 300 ]; do sleep 1; waited=$((waited + 1)); done
  local backfill_s=$(( ($(now_ms) - t0) / 1000 ))
  sleep 5
  local idle; idle=($(status_kib "$pid"))
  # Warm the 20 hot thumbnails (grid 5) for the hits.
  for i in $(seq 0 19); do curl -fs -o /dev/null "$base/thumbnails/5/$(printf 's%04d' "$i").jpg"; done

  local samples="$WORK/samples-$port"; : > "$samples"
  ( for s in $(seq 1 "$LOAD_SECONDS"); do
      sleep 1
      echo "$s $(status_kib "$pid") $(stats "$port" | json memory_cache.bytes)" >> "$samples"
    done ) &
  local sampler=$!
  local out; out=$(wrk -t2 -c32 -d"${LOAD_SECONDS}s" --timeout 30s -s "$WORK/mix.lua" "$base" 2>&1)
  local end; end=($(status_kib "$pid")); local end_memfd; end_memfd=$(stats "$port" | json memory_cache.bytes)
  wait "$sampler" 2>/dev/null || true
  local rate non2xx; rate=$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}'); non2xx=${non2xx:-0}
  local sockerr; sockerr=$(echo "$out" | sed -nE 's/.*Socket errors: (.*)/\1/p')
  # Peak VmRSS, peak VmRSS + memfd, and the slope of VmRSS over the second half (MiB/min, least squares).
  local summary; summary=$(awk -v n="$LOAD_SECONDS" '
    { if ($2 > pk) pk = $2; if ($2 + $6 / 1024 > pkm) pkm = $2 + $6 / 1024
      if ($1 > n / 2) { c++; sx += $1; sy += $2; sxy += $1 * $2; sxx += $1 * $1 } }
    END { slope = (c > 1) ? (c * sxy - sx * sy) / (c * sxx - sx * sx) : 0
          printf "%.0f %.0f %+.0f", pk / 1024, pkm / 1024, slope * 60 / 1024 }' "$samples")
  local peak peakm slope; read -r peak peakm slope <<<"$summary"

  sleep 10
  local after; after=($(status_kib "$pid"))
  local st; st=$(stats "$port")
  local after_memfd hw renders refused; after_memfd=$(echo "$st" | json memory_cache.bytes)
  hw=$(echo "$st" | json process.vips_memory_highwater_bytes); renders=$(echo "$st" | json renders.total)
  refused=$(echo "$st" | json renders.refused)
  local pages; pages=($(memfd_pages "$pid")); local narenas; narenas=$(arenas "$pid")
  local vmsize; vmsize=$(awk '/^VmSize/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
  local la; la=$(loadavg)
  stop_server; rm -rf "$WORK/cache-$port"

  local tiername="8 MiB"; [ "$tier" = default ] && tiername="256 MiB (default)"
  local arenaname="2 (thumbd's cap)"; [ "$arena" = 16 ] && arenaname="16 (MALLOC_ARENA_MAX=16)"
  printf '| %s | %s | %s | %s (%s/%s) | %s | %s (%s/%s) | %s | %s (%s/%s) | %s | %s | %s | %s MiB/min | %s | %s | %s | %s |\n' \
    "$workers" "$tiername" "$arenaname" \
    "$(mib "${idle[0]}")" "$(mib "${idle[1]}")" "$(mib "${idle[2]}")" "$peak" \
    "$(mib "${end[0]}")" "$(mib "${end[1]}")" "$(mib "${end[2]}")" "$((end_memfd / MIB))" \
    "$(mib "${after[0]}")" "$(mib "${after[1]}")" "$(mib "${after[2]}")" "$((after_memfd / MIB))" \
    "$peakm" "$((hw / MIB))" "$slope" "$renders" "$rate" "$non2xx" "${la%% *}"
  DETAILS+=("workers $workers, tier $tiername, arenas $arenaname: listed 2,000 in ${scan_ms} ms, backfill pass done at ${backfill_s} s$([ $waited -ge 300 ] && echo ' (NOT done: gave up at 300 s)'); RssShmem idle/end/after $(mib "${idle[3]}")/$(mib "${end[3]}")/$(mib "${after[3]}") MiB; memfd pages after: $((pages[0] / MIB)) MiB in ${pages[1]} memfds; malloc arenas seen: $narenas; VmSize after: $vmsize MiB; renders refused: $refused; socket errors: ${sockerr:-none}; load avg at end: $la")
}

for workers in 1 2 4; do
  for tier in 8 default; do
    run "$workers" "$tier" 2
    case " $ARENA16_WORKERS " in *" $workers "*) run "$workers" "$tier" 16 ;; esac
  done
done
echo
for d in "${DETAILS[@]}"; do echo "- $d"; done
echo "load avg at end: $(loadavg)"
