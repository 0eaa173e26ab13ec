#!/usr/bin/env bash
# Prefetch throughput (issue: library listing and range prefetch).
# Prefetches 200 corpus photos at grid 3 (the 37 photos under 200 distinct names, hard links, so
# every item is a real render) and prints images per second, next to vipsthumbnail over the same
# 200 files, one libvips thread per process (VIPS_CONCURRENCY=1, as in thumbd), split over 1
# process (the parallelism prefetch gets with 2 workers: never every worker) and over 2 processes
# (the machine's ceiling on 2 cores).
# Usage: Tests/Benchmarks/prefetch-throughput.sh   (needs ../shared/corpus, wrk not needed)
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18431}
LIB="$WORK/library"; mkdir -p "$LIB"
mapfile -t PHOTOS < <(ls "$CORPUS/photos"/*.jpg)
for i in $(seq 0 199); do ln "${PHOTOS[$((i % ${#PHOTOS[@]}))]}" "$LIB/$(printf 'p%03d' "$i")-$(basename "${PHOTOS[$((i % ${#PHOTOS[@]}))]}")"; done

start_server "$LIB" "$PORT" --render-workers 2
for _ in $(seq 100); do  # wait for the first index scan
  total=$(curl -fs "http://127.0.0.1:$PORT/assets?limit=0" | sed -E 's/.*"total":([0-9]+).*/\1/')
  [ "$total" = 200 ] && break; sleep 0.1
done
start=$(now_ms)
job=$(curl -fs -X POST -d '{"grid": "3", "start": 0, "end": 200}' "http://127.0.0.1:$PORT/prefetch")
id=$(echo "$job" | sed -E 's/.*"id":([0-9]+).*/\1/')
while curl -fs "http://127.0.0.1:$PORT/prefetch/$id" | grep -q '"state":"running"'; do sleep 0.05; done
end=$(now_ms)
final=$(curl -fs "http://127.0.0.1:$PORT/prefetch/$id")
stop_server
thumbd_ms=$((end - start))

vips_run() {  # vips_run N: vipsthumbnail over the 200 files split into N processes
  local n=$1 out="$WORK/vips-$1"; mkdir -p "$out"
  mapfile -t files < <(ls "$LIB"/*.jpg)
  local s; s=$(now_ms)
  for k in $(seq 0 $((n - 1))); do
    part=(); for j in "${!files[@]}"; do [ $((j % n)) -eq "$k" ] && part+=("${files[$j]}"); done
    # VIPS_CONCURRENCY=1: one thread per process, as each thumbd render worker runs.
    VIPS_CONCURRENCY=1 vipsthumbnail "${part[@]}" -s '393x393>' --smartcrop centre -o "$out/%s.jpg[Q=80,strip]" 2>/dev/null &
  done
  wait
  echo $(( $(now_ms) - s ))
}
v1=$(vips_run 1); v2=$(vips_run 2)
rate() { awk -v ms="$1" 'BEGIN { printf "%.1f", 200 / (ms / 1000) }'; }
echo "prefetch job: $final"
printf '%-44s %8s %10s\n' "200 photos at grid 3" "ms" "images/s"
printf '%-44s %8d %10s\n' "thumbd prefetch (1 of 2 workers)" "$thumbd_ms" "$(rate "$thumbd_ms")"
printf '%-44s %8d %10s\n' "vipsthumbnail, 1 process, 1 thread" "$v1" "$(rate "$v1")"
printf '%-44s %8d %10s\n' "vipsthumbnail, 2 processes (ceiling)" "$v2" "$(rate "$v2")"
