#!/usr/bin/env bash
# Derived grids (docs/thumbnails.md, "Derived grids"): the render time of a grid-5 miss made from the cached
# grid-3 thumbnail, against a grid-5 miss rendered from the original, on the corpus' phone photos
# of 8 MP and more (each under 5 names, one request at a time, the time thumbd reports in
# Server-Timing), one server with derive_grids on and one with it off, in one run.
# Usage: Tests/Benchmarks/derive.sh
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18436}
LIB="$WORK/library"; mkdir -p "$LIB"
mapfile -t BIG < <(awk -F'\t' 'NR > 1 && $1 ~ /^photos\/.*\.jpg$/ && $3 * $4 >= 7900000 { print $1 }' "$CORPUS/MANIFEST.tsv")
names=()
for copy in 0 1 2 3 4; do
  for src in "${BIG[@]}"; do
    name="c$copy-$(basename "$src")"; ln "$CORPUS/$src" "$LIB/$name"; names+=("$name")
  done
done
render_ms() {  # render_ms URL: the Server-Timing render duration of a GET, ms
  curl -fs -o /dev/null -D - "$1" | tr -d '\r' | sed -nE 's/^Server-Timing: render;dur=([0-9.]+)/\1/p'
}
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }

declare -A five
for mode in on off; do
  # A port each: start_server gives each port its own fresh cache directory.
  if [ "$mode" = on ]; then start_server "$LIB" "$PORT"; else PORT=$((PORT + 1)); start_server "$LIB" "$PORT" --no-derive-grids; fi
  times=()
  for name in "${names[@]}"; do
    render_ms "http://127.0.0.1:$PORT/thumbnails/3/$name" >/dev/null   # the donor
    times+=("$(render_ms "http://127.0.0.1:$PORT/thumbnails/5/$name")")
  done
  derived=$(curl -fs "http://127.0.0.1:$PORT/stats" | sed -E 's/.*"derived":([0-9]+).*/\1/')
  five[$mode]="$(mean "${times[@]}") ms mean over ${#times[@]} (renders.derived $derived)"
  stop_server
done
printf 'derive: %d photos of 8 MP and more, %s, load %s\n' "${#names[@]}" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-42s %s\n' "grid 5 from the cached grid 3 (derived)" "${five[on]}" "grid 5 from the original" "${five[off]}"
