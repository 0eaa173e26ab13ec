#!/usr/bin/env bash
# Poster frames per second: thumbd (misses at grid 3, its helper processes) next to
# ffmpegthumbnailer and the ffmpeg CLI on the same clips, in one run, one at a time and two at
# once (2 video_decoders; xargs -P2 for the tools). Each tool takes the frame its own way
# (ffmpegthumbnailer: 10% in, its default; ffmpeg: -ss 10% before -i, a keyframe seek) and writes
# a 393 px JPEG. Clips are made here by ffmpeg (testsrc2): 1080p H.264 and HEVC, 30 s, 30 fps,
# a keyframe every 2 s, audio.
# Usage: Tests/Benchmarks/video-posters.sh [clips per codec, default 6]
source "$(dirname "$0")/common.sh"
PORT=${PORT:-18436}
N=${1:-6}
for tool in ffmpeg ffmpegthumbnailer; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install ffmpeg ffmpegthumbnailer)" >&2; exit 2; }
done
SRC="$WORK/src"; mkdir -p "$SRC"
ffmpeg -loglevel error -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=30 -f lavfi -i sine=duration=30 \
  -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac "$SRC/h264.mp4"
ffmpeg -loglevel error -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=30 -f lavfi -i sine=duration=30 \
  -c:v libx265 -preset veryfast -x265-params keyint=60:log-level=none -pix_fmt yuv420p -tag:v hvc1 -c:a aac "$SRC/hevc.mov"
# One library per contender run, each clip under its own name (hard links): every request a miss.
make_clips() {
  mkdir -p "$1"
  for i in $(seq 1 "$N"); do ln "$SRC/h264.mp4" "$1/c$i.mp4"; ln "$SRC/hevc.mov" "$1/c$i.mov"; done
}
count=$((2 * N))
rate() { awk -v n="$count" -v ms="$1" 'BEGIN { printf "%.2f", n * 1000 / ms }'; }

run_thumbd() {   # run_thumbd PARALLEL
  local lib="$WORK/lib-thumbd-$1"; make_clips "$lib"
  rm -rf "$WORK/cache-$PORT"   # a cold cache each run (the clips are hard links: one identity)
  start_server "$lib" "$PORT" --video-decoders 2 --render-workers 2
  local s; s=$(now_ms)
  (cd "$lib" && ls) | xargs -P "$1" -I{} curl -fs -o /dev/null "http://127.0.0.1:$PORT/thumbnails/3/{}"
  local ms=$(( $(now_ms) - s ))
  curl -fs "http://127.0.0.1:$PORT/stats" | python3 -c 'import json,sys; v=json.load(sys.stdin)["video"]; assert v["decoded"]=='"$count"', v'
  stop_server
  echo "$ms"
}
run_ffmpegthumbnailer() {
  local lib="$WORK/lib-fft-$1"; make_clips "$lib"
  local s; s=$(now_ms)
  (cd "$lib" && ls) | xargs -P "$1" -I{} ffmpegthumbnailer -i "$lib/{}" -o "$lib/{}.jpg" -s 393 -q 8 2>/dev/null
  echo $(( $(now_ms) - s ))
}
run_ffmpeg() {
  local lib="$WORK/lib-ffmpeg-$1"; make_clips "$lib"
  local s; s=$(now_ms)
  (cd "$lib" && ls) | xargs -P "$1" -I{} ffmpeg -loglevel error -ss 3 -i "$lib/{}" -frames:v 1 -vf scale=393:-2 -q:v 4 "$lib/{}.jpg"
  echo $(( $(now_ms) - s ))
}

echo "$count clips (1080p, 30 s: $N H.264 .mp4, $N HEVC .mov), posters per second:"
for p in 1 2; do
  t=$(run_thumbd "$p"); f=$(run_ffmpegthumbnailer "$p"); g=$(run_ffmpeg "$p")
  printf '%-36s %8s/s  (%s ms)\n' "thumbd, $p at once" "$(rate "$t")" "$t"
  printf '%-36s %8s/s  (%s ms)\n' "ffmpegthumbnailer, $p at once" "$(rate "$f")" "$f"
  printf '%-36s %8s/s  (%s ms)\n' "ffmpeg CLI, $p at once" "$(rate "$g")" "$g"
  awk -v t="$t" -v f="$f" -v p="$p" 'BEGIN { printf "thumbd vs ffmpegthumbnailer, %d at once: %.2fx\n", p, f / t }'
done
