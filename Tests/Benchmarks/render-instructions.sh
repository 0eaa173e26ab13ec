#!/usr/bin/env bash
# Instructions a miss's render costs, counted by callgrind (repeatable on a shared, noisy machine,
# where seconds swing by more than the few percent a change to the render path makes): every photo
# of the corpus' photos/ once at grid 3 (393x393 cover, JPEG Q80), three ways:
#   thumbd-placeholder  the header read and cvips_render with a placeholder (a photo without one)
#   thumbd              the same without the placeholder (a photo whose preview gave it)
#   vipsthumbnail       vipsthumbnail -s '393x393>' --smartcrop centre [Q=80,strip]'s pipeline
# A small C harness (render-instructions/harness.c) is built against Sources/CVipsShim as it is in
# the working tree, and with --against REV also as it is at REV, so both are counted in one run.
# VIPS_NOVECTOR=1: libvips' run-time vector code (orc) does not run under valgrind; the counts are
# of libvips' C paths, so read them as ratios, not as a release build's instructions.
# Usage: Tests/Benchmarks/render-instructions.sh [--against REV]   (~3 min a build; needs valgrind)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CORPUS="${THUMBD_CORPUS:-$ROOT/../shared/corpus}"
[ -d "$CORPUS/photos" ] || { echo "needs the corpus at $CORPUS (or THUMBD_CORPUS)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
AGAINST=""
[ "${1:-}" = --against ] && { AGAINST="${2:?--against needs a revision}"; }
WORK="$(mktemp -d /tmp/thumbd-instructions.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
LIBS="$(pkg-config --cflags --libs vips libwebp libwebpmux libexif)"

# build NAME SHIM_DIR: the harness against that copy of the shim
build() {
  gcc -O2 -w -I"$2/include" -I"$2" "$HERE/render-instructions/harness.c" "$2"/*.c -o "$WORK/$1" $LIBS
}
build current "$ROOT/Sources/CVipsShim"
BUILDS=(current)
if [ -n "$AGAINST" ]; then
  mkdir -p "$WORK/tree-against"
  (cd "$ROOT" && git archive "$AGAINST" Sources/CVipsShim) | tar -x -C "$WORK/tree-against"
  build against "$WORK/tree-against/Sources/CVipsShim"
  BUILDS=(against current)
fi

# count BUILD KIND: instructions of one run (every photo once)
count() {
  local out="$WORK/cg-$1-$2"
  VIPS_NOVECTOR=1 valgrind --tool=callgrind --callgrind-out-file="$out" "$WORK/$1" "$CORPUS/photos" "$2" >/dev/null 2>"$out.log" \
    || { tail -5 "$out.log" >&2; echo "callgrind of $1 $2 failed" >&2; exit 1; }
  awk '/^summary:/ {print $2}' "$out"
}
NPHOTOS=$(find "$CORPUS/photos" -maxdepth 1 -type f ! -name '.*' | wc -l)
echo "every photo of $CORPUS/photos ($NPHOTOS) at grid 3, once; instructions (callgrind, VIPS_NOVECTOR=1)" >&2
declare -A N
# Two counts at a time (callgrind runs one thread at a time; the machine has two cores).
jobs_for() { local b k; for b in "${BUILDS[@]}"; do for k in thumbd-placeholder thumbd; do echo "$b $k"; done; done; echo "current vipsthumbnail"; }
while read -r b k; do
  ( count "$b" "$k" >"$WORK/n-$b-$k" ) &
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do sleep 1; done
done < <(jobs_for)
wait
VIPS=$(cat "$WORK/n-current-vipsthumbnail")
per() { awk -v n="$1" -v p="$NPHOTOS" 'BEGIN { printf "%.1f M", n / p / 1e6 }'; }
rat() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
printf '%-9s %-20s %-16s %s\n' build kind "per photo" "x vipsthumbnail's"
for b in "${BUILDS[@]}"; do
  for k in thumbd-placeholder thumbd; do
    n=$(cat "$WORK/n-$b-$k"); printf '%-9s %-20s %-16s %s\n' "$b" "$k" "$(per "$n")" "$(rat "$n" "$VIPS")"
  done
done
printf '%-9s %-20s %-16s %s\n' "" vipsthumbnail "$(per "$VIPS")" "1.000"
[ -n "$AGAINST" ] && echo "against = $AGAINST ($(cd "$ROOT" && git rev-parse --short "$AGAINST")), current = the working tree"
exit 0
