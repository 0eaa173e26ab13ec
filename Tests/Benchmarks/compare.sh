#!/usr/bin/env bash
# thumbd next to its peers, on the same corpus photos, and one table of medians at the end:
#  1. hits:     wrk -t2 -c64 -d10s rotating (Lua script) over the grid-3 thumbnails of ~20 corpus
#               photos: thumbd memory hits, thumbd disk hits (--memory-cache-bytes 0), and nginx
#               serving the very same thumbnail bytes as static files. Requests/s, and the
#               server's CPU time per request (from /proc/PID/stat).
#  2. misses:   every photo in photos/ rendered once at grid 3 (393x393, centre crop, Q80), two at a
#               time: thumbd (fresh cache, one curl process with 2 parallel transfers), thumbor
#               (PIL engine, no storage/result storage, so every request is a real render) and
#               vipsthumbnail (2 processes with half the files each, VIPS_CONCURRENCY=1). Wall s
#               and images/s. thumbd's misses are timed SETTLE_S (0.5) s after its listing, once
#               its first scan's embedded previews are read (~2 ms a photo): a render then makes
#               no placeholder a photo's preview gave, and the backfill (1 s of quiet) has not begun
#               (SETTLE_S=0: a cold server's, previews and all).
#  3. stampede: 100 concurrent requests for one uncached 12 MP photo at grid 1 on a fresh thumbd:
#               wall time and renders run, next to one request on a fresh thumbd.
#  4. memory:   thumbd's peak resident memory (VmHWM) in each scenario, plus the memory-tier
#               thumbnails it holds in memfds (not mapped, so not in RSS).
# Every figure is the median of 3 rounds, the systems taking turns within each round.
# Peers are installed when missing (Debian: nginx, wrk, libvips-tools; PyPI: thumbor in a venv at
# Tests/Benchmarks/.venv). Every load targets 127.0.0.1, ports 18600-18699. Takes ~3-4 minutes.
# Usage: Tests/Benchmarks/compare.sh      (needs ../shared/corpus or THUMBD_CORPUS; run as root
#        for the installs, or install the peers beforehand)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
ROUNDS=${ROUNDS:-3}
SETTLE_S=${SETTLE_S:-0.5}   # before the misses are timed (a fresh server reads its photos' previews first)
HIT_SECONDS=${HIT_SECONDS:-10}

# ---- peers (idempotent) ------------------------------------------------------------------------
apt_pkgs=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_pkgs+=(nginx)
command -v wrk >/dev/null || apt_pkgs+=(wrk)
command -v vipsthumbnail >/dev/null || apt_pkgs+=(libvips-tools)
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_pkgs+=(python3-venv)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  echo "installing ${apt_pkgs[*]} (apt-get)..." >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null \
    || { echo "apt-get install ${apt_pkgs[*]} failed" >&2; exit 2; }
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
if [ ! -x "$VENV/bin/thumbor" ]; then
  echo "installing thumbor into $VENV (pip)..." >&2
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check thumbor >&2 \
    || { echo "pip install thumbor failed" >&2; exit 2; }
fi

# ---- release build, corpus, $WORK (common.sh) --------------------------------------------------
source "$HERE/common.sh"
PHOTOS="$(cd "$CORPUS/photos" && pwd -P)"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export VIPS_WARNING=0

die() { echo "compare.sh: $*" >&2; exit 1; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null || die "port $1 is taken"; }
wait_http() { for _ in $(seq 150); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done; return 1; }
forget_pid() { local keep=() p; for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; PIDS=("${keep[@]}"); }
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; forget_pid "$1"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
# thumbd_kb PID: peak RSS plus the memory-tier thumbnails held in memfds (not mapped, so not in
# RSS, but memory all the same), KiB
thumbd_kb() {
  local f memfd=0
  for f in /proc/"$1"/fd/*; do
    case "$(readlink "$f" 2>/dev/null)" in /memfd:thumbd-thumbnail*) memfd=$((memfd + $(stat -L -c %s "$f" 2>/dev/null || echo 0)));; esac
  done
  echo $(( $(hwm_kb "$1") + memfd / 1024 ))
}
rss_parts() { awk '/^Rss(Anon|File|Shmem):/ {printf "%s%s %.0f MiB", (n++ ? ", " : ""), $1, $2 / 1024}' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
maxof() { printf '%s\n' "$@" | sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2fx", a / b }'; }
# tstat PORT a.b.c: one number from thumbd's /stats
tstat() { curl -fs "http://127.0.0.1:$1/stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d[k]
print(d)' "$2"; }

# launch_thumbd PORT CACHE_DIR [flags...]: sets TPID; returns once /healthz answers and the
# library index lists every photo (so the first scan does not overlap a measurement).
launch_thumbd() {
  local port=$1 cache=$2; shift 2
  port_free "$port"
  # From $WORK: no config/thumbd.json is read (an older THUMBD_BINARY may not know its keys).
  (cd "$WORK" && exec "$THUMBD" --library "$PHOTOS" --port "$port" --cache-dir "$cache" "$@") >"$WORK/thumbd-$port.log" 2>&1 &
  TPID=$!; PIDS+=("$TPID")
  wait_http "http://127.0.0.1:$port/healthz" || { cat "$WORK/thumbd-$port.log" >&2; die "thumbd did not start on $port"; }
  for _ in $(seq 150); do
    [ "$(curl -fs "http://127.0.0.1:$port/assets?limit=0" | sed -E 's/.*"total":([0-9]+).*/\1/')" = "$NPHOTOS" ] && return 0
    sleep 0.1
  done
  die "thumbd on $port did not list the $NPHOTOS photos"
}

# ---- inputs ------------------------------------------------------------------------------------
mapfile -t NAMES < <(cd "$PHOTOS" && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n' | LC_ALL=C sort)
for n in "${NAMES[@]}"; do [[ "$n" =~ ^[A-Za-z0-9._-]+$ ]] || die "photo name needs URL-encoding: $n"; done
NPHOTOS=${#NAMES[@]}
HOT=(); for i in "${!NAMES[@]}"; do [ $((i % 2)) -eq 0 ] && HOT+=("${NAMES[$i]}"); done  # every other photo
cat "$PHOTOS"/* >/dev/null  # page cache warm for everyone
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus: $NPHOTOS photos in $PHOTOS; hits rotate over ${#HOT[@]} of them; $ROUNDS rounds" >&2

# ---- 1. hits -----------------------------------------------------------------------------------
P_MEM=18600 P_DISK=18601 P_NGINX=18602
{ echo "-- generated: rotate over the hot thumbnails, each wrk thread on its own"
  echo "local paths = {"; for n in "${HOT[@]}"; do echo "  \"/thumbnails/3/$n\","; done; echo "}"
  echo 'local i = 0'
  echo 'request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end'
} >"$WORK/rotate.lua"

launch_thumbd "$P_MEM" "$WORK/cache-mem"; MEM_PID=$TPID
launch_thumbd "$P_DISK" "$WORK/cache-disk" --memory-cache-bytes 0; DISK_PID=$TPID
STATIC="$WORK/static"; mkdir -p "$STATIC/thumbnails/3"
for n in "${HOT[@]}"; do
  curl -fs -o "$STATIC/thumbnails/3/$n" "http://127.0.0.1:$P_MEM/thumbnails/3/$n"   # miss: render
  xc=$(curl -fs -o /dev/null -D - "http://127.0.0.1:$P_MEM/thumbnails/3/$n" | tr -d '\r' | sed -n 's/^X-Cache: //ip')
  [ "$xc" = HIT-MEMORY ] || die "expected HIT-MEMORY for $n, got '$xc'"
  curl -fs -o /dev/null "http://127.0.0.1:$P_DISK/thumbnails/3/$n"                    # miss: render to disk
  xc=$(curl -fs -o /dev/null -D - "http://127.0.0.1:$P_DISK/thumbnails/3/$n" | tr -d '\r' | sed -n 's/^X-Cache: //ip')
  [ "$xc" = HIT-DISK ] || die "expected HIT-DISK for $n, got '$xc'"
done
MEM_LIMIT=$(tstat "$P_MEM" memory_cache.limit_bytes)
DISK_MEM_LIMIT=$(tstat "$P_DISK" memory_cache.limit_bytes)
DISK_MEMHITS_BEFORE=$(tstat "$P_DISK" memory_cache.hits)
chmod 755 "$WORK"; chmod -R a+rX "$STATIC"   # nginx workers run as nobody
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 2;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 75s;
  keepalive_requests 100000000;
  open_file_cache max=1000 inactive=60s;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  server {
    listen 127.0.0.1:$P_NGINX;
    root $STATIC;
    location / { add_header Cache-Control "public, max-age=31536000, immutable"; }
  }
}
EOF
port_free "$P_NGINX"
"$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx/stdout.log" 2>&1 &
NGINX_PID=$!; PIDS+=("$NGINX_PID")
wait_http "http://127.0.0.1:$P_NGINX/thumbnails/3/${HOT[0]}" || { cat "$WORK/nginx/"*.log >&2; die "nginx did not start"; }
cmp -s <(curl -fs "http://127.0.0.1:$P_NGINX/thumbnails/3/${HOT[0]}") <(curl -fs "http://127.0.0.1:$P_MEM/thumbnails/3/${HOT[0]}") \
  || die "nginx and thumbd bytes differ"

WRK_ERRORS=""
# cpu_ticks PID: user + system clock ticks of PID and its children (nginx's workers)
cpu_ticks() { local t=0 q; for q in "$1" $(pgrep -P "$1" || true); do t=$((t + $(awk '{print $14 + $15}' "/proc/$q/stat"))); done; echo "$t"; }
run_wrk() {  # run_wrk PORT LABEL PID: prints "requests/s server-CPU-us-per-request"
  local out c0 c1; c0=$(cpu_ticks "$3")
  out=$(wrk -t2 -c64 -d"${HIT_SECONDS}s" -s "$WORK/rotate.lua" "http://127.0.0.1:$1/")
  c1=$(cpu_ticks "$3")
  grep -qE 'Non-2xx|Socket errors' <<<"$out" && WRK_ERRORS+="$2: $(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr -s ' ' | tr '\n' ';') "
  awk -v ticks=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n = $1} /^Requests\/sec:/ {r = $2}
    END {printf "%s %.1f\n", r, ticks * 1e6 / hz / n}' <<<"$out"
}
H_MEM=() H_DISK=() H_NGINX=() C_MEM=() C_DISK=() C_NGINX=()
for r in $(seq "$ROUNDS"); do
  echo "hits round $r/$ROUNDS..." >&2
  read -r v c < <(run_wrk "$P_MEM" "thumbd memory" "$MEM_PID"); H_MEM+=("$v"); C_MEM+=("$c")
  read -r v c < <(run_wrk "$P_DISK" "thumbd disk" "$DISK_PID"); H_DISK+=("$v"); C_DISK+=("$c")
  read -r v c < <(run_wrk "$P_NGINX" nginx "$NGINX_PID"); H_NGINX+=("$v"); C_NGINX+=("$c")
done
DISK_MEMHITS_AFTER=$(tstat "$P_DISK" memory_cache.hits)
DISK_DISKHITS=$(tstat "$P_DISK" disk_cache.hits)
[ "$DISK_MEMHITS_AFTER" = "$DISK_MEMHITS_BEFORE" ] || WRK_ERRORS+="disk server served $((DISK_MEMHITS_AFTER - DISK_MEMHITS_BEFORE)) memory hits "
HWM_MEM=$(thumbd_kb "$MEM_PID"); HWM_DISK=$(thumbd_kb "$DISK_PID")
RSS_MEM=$(rss_parts "$MEM_PID"); RSS_DISK=$(rss_parts "$DISK_PID")
NGINX_HWM=0; for p in "$NGINX_PID" $(pgrep -P "$NGINX_PID" || true); do NGINX_HWM=$((NGINX_HWM + $(hwm_kb "$p"))); done
stop_pid "$MEM_PID"; stop_pid "$DISK_PID"; stop_pid "$NGINX_PID"

# ---- 2. misses ---------------------------------------------------------------------------------
P_THUMBOR=18603
cat >"$WORK/thumbor.conf" <<EOF
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = '$PHOTOS'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
RESPECT_ORIENTATION = True
QUALITY = 80
PROGRESSIVE_JPEG = False
AUTO_WEBP = False
ENGINE_THREADPOOL_SIZE = 2
EOF
port_free "$P_THUMBOR"
"$VENV/bin/thumbor" -i 127.0.0.1 -p "$P_THUMBOR" -c "$WORK/thumbor.conf" -l warning >"$WORK/thumbor.log" 2>&1 &
THUMBOR_PID=$!; PIDS+=("$THUMBOR_PID")
wait_http "http://127.0.0.1:$P_THUMBOR/healthcheck" || { cat "$WORK/thumbor.log" >&2; die "thumbor did not start"; }
curl -fs -o /dev/null "http://127.0.0.1:$P_THUMBOR/unsafe/236x236/${NAMES[0]}"   # warm-up, not grid 3

# curl_list FILE URL_PREFIX URL_SUFFIX...: a curl config that fetches every photo
curl_list() { local f=$1 pre=$2; : >"$f"; for n in "${NAMES[@]}"; do printf 'url = "%s%s"\noutput = "/dev/null"\n' "$pre" "$n" >>"$f"; done; }
curl_list "$WORK/thumbor.cfg" "http://127.0.0.1:$P_THUMBOR/unsafe/393x393/filters:no_upscale()/"
# fetch2 CONFIG: every URL, 2 transfers at a time (one curl process); prints "ms ok_count"
fetch2() {
  local s e ok; s=$(now_ms)
  ok=$(curl -s -Z --parallel-max 2 -K "$1" -w '%{http_code}\n' 2>/dev/null | grep -c '^200$' || true)
  e=$(now_ms); echo "$((e - s)) $ok"
}
MISS_ERRORS=""
M_THUMBD=() M_THUMBOR=() M_VIPS=() HWM_MISS=()
for r in $(seq "$ROUNDS"); do
  echo "misses round $r/$ROUNDS..." >&2
  port=$((18609 + r))
  launch_thumbd "$port" "$WORK/cache-miss-$r"; pid=$TPID
  curl -fs -o /dev/null "http://127.0.0.1:$port/thumbnails/5/${NAMES[0]}"          # warm-up, not grid 3
  sleep "$SETTLE_S"   # the first scan's embedded previews read: renders of a settled server
  curl_list "$WORK/thumbd-$r.cfg" "http://127.0.0.1:$port/thumbnails/3/"
  before=$(tstat "$port" renders.total)
  read -r ms ok < <(fetch2 "$WORK/thumbd-$r.cfg")
  renders=$(( $(tstat "$port" renders.total) - before ))
  [ "$ok" = "$NPHOTOS" ] && [ "$renders" = "$NPHOTOS" ] || MISS_ERRORS+="thumbd round $r: $ok x 200, $renders renders; "
  M_THUMBD+=("$ms"); HWM_MISS+=("$(thumbd_kb "$pid")"); stop_pid "$pid"

  read -r ms ok < <(fetch2 "$WORK/thumbor.cfg")
  [ "$ok" = "$NPHOTOS" ] || MISS_ERRORS+="thumbor round $r: $ok x 200; "
  M_THUMBOR+=("$ms")

  out="$WORK/vips-$r"; mkdir -p "$out"; s=$(now_ms); vpids=()
  for k in 0 1; do
    part=(); for j in "${!NAMES[@]}"; do [ $((j % 2)) -eq "$k" ] && part+=("$PHOTOS/${NAMES[$j]}"); done
    VIPS_CONCURRENCY=1 vipsthumbnail "${part[@]}" -s '393x393>' --smartcrop centre -o "$out/%s.jpg[Q=80,strip]" 2>/dev/null &
    vpids+=($!)
  done
  for p in "${vpids[@]}"; do wait "$p" || MISS_ERRORS+="vipsthumbnail exited non-zero; "; done
  M_VIPS+=("$(( $(now_ms) - s ))")
  n=$(find "$out" -type f | wc -l); [ "$n" = "$NPHOTOS" ] || MISS_ERRORS+="vipsthumbnail round $r: $n outputs; "
done
THUMBOR_HWM=$(hwm_kb "$THUMBOR_PID")
stop_pid "$THUMBOR_PID"

# ---- 3. stampede -------------------------------------------------------------------------------
BIG=${STAMPEDE_PHOTO:-google-pixel-12mp-gps.jpg}
[ -f "$PHOTOS/$BIG" ] || die "no $BIG in $PHOTOS"
: >"$WORK/stampede.cfg"; for _ in $(seq 100); do printf 'url = "http://127.0.0.1:PORT/thumbnails/1/%s"\noutput = "/dev/null"\n' "$BIG" >>"$WORK/stampede.cfg"; done
S_ONE=() S_100=() S_RENDERS=() S_COALESCED=() HWM_ONE=() HWM_100=() STAMPEDE_ERRORS=""
for r in $(seq "$ROUNDS"); do
  echo "stampede round $r/$ROUNDS..." >&2
  port=$((18619 + r))
  launch_thumbd "$port" "$WORK/cache-one-$r"; pid=$TPID
  s=$(now_ms); curl -fs -o /dev/null "http://127.0.0.1:$port/thumbnails/1/$BIG" || STAMPEDE_ERRORS+="single request failed; "
  S_ONE+=("$(( $(now_ms) - s ))"); HWM_ONE+=("$(thumbd_kb "$pid")"); stop_pid "$pid"

  port=$((18629 + r))
  launch_thumbd "$port" "$WORK/cache-100-$r"; pid=$TPID
  sed "s/PORT/$port/" "$WORK/stampede.cfg" >"$WORK/stampede-$r.cfg"
  s=$(now_ms)
  ok=$(curl -s -Z --parallel-immediate --parallel-max 100 -K "$WORK/stampede-$r.cfg" -w '%{http_code}\n' 2>/dev/null | grep -c '^200$' || true)
  S_100+=("$(( $(now_ms) - s ))")
  [ "$ok" = 100 ] || STAMPEDE_ERRORS+="round $r: $ok x 200; "
  S_RENDERS+=("$(tstat "$port" renders.total)"); S_COALESCED+=("$(tstat "$port" renders.coalesced)")
  HWM_100+=("$(thumbd_kb "$pid")"); stop_pid "$pid"
done

# ---- table -------------------------------------------------------------------------------------
rps() { awk -v v="$1" 'BEGIN { printf "%.0f req/s", v }'; }
ips() { awk -v ms="$1" -v n="$NPHOTOS" 'BEGIN { printf "%.1f img/s (%.2f s)", n / (ms / 1000), ms / 1000 }'; }
rate() { awk -v ms="$1" -v n="$NPHOTOS" 'BEGIN { printf "%.4f", n / (ms / 1000) }'; }
ok_if() { awk -v v="${1%x}" -v op="$2" -v t="$3" 'BEGIN { r = (op == ">=") ? v >= t : v <= t; print (r ? "yes" : "NO") }'; }
row() { printf '%-34s %-24s %-22s %-24s %-9s %-17s %s\n' "$@"; }

m_mem=$(median "${H_MEM[@]}"); m_disk=$(median "${H_DISK[@]}"); m_nginx=$(median "${H_NGINX[@]}")
m_th=$(median "${M_THUMBD[@]}"); m_tb=$(median "${M_THUMBOR[@]}"); m_vi=$(median "${M_VIPS[@]}")
m_one=$(median "${S_ONE[@]}"); m_100=$(median "${S_100[@]}")
r_mem=$(ratio "$m_mem" "$m_nginx"); r_disk=$(ratio "$m_disk" "$m_nginx")
r_vi=$(ratio "$(rate "$m_th")" "$(rate "$m_vi")"); r_tb=$(ratio "$(rate "$m_th")" "$(rate "$m_tb")")
r_st=$(ratio "$m_100" "$m_one")
renders_max=$(maxof "${S_RENDERS[@]}")
lim_mib=$(mib $((MEM_LIMIT / 1024))); dlim_mib=$(mib $((DISK_MEM_LIMIT / 1024)))
mem_row() {  # mem_row LABEL KB LIMIT_MIB: thumbd's peak RSS against its memory-cache limit + 150 MiB
  local used; used=$(mib "$2")
  row "$1" "$used MiB" "cache limit + 150 MiB" "$(($3 + 150)) MiB" "$(ratio "$used" $(($3 + 150)))" "<= $(($3 + 150)) MiB" "$(ok_if "$used" "<=" $(($3 + 150)))"
}

echo
echo "thumbd vs peers: medians of $ROUNDS rounds ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); load avg at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg) (shared machine: figures may be noisy)"
echo "peers: $("$NGINX" -v 2>&1 | sed 's/.*: //'), thumbor $("$VENV/bin/thumbor" --version 2>/dev/null | awk '{print $2}') (PIL $("$VENV/bin/python" -c 'import PIL; print(PIL.__version__)')), vipsthumbnail $(vips --version 2>/dev/null | sed 's/vips-//'), $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}')"
echo
row "scenario" "thumbd" "peer" "peer value" "thumbd/peer" "target" "met"
row "hits, memory (wrk -t2 -c64 ${HIT_SECONDS}s)" "$(rps "$m_mem")" "nginx static" "$(rps "$m_nginx")" "$r_mem" ">= 1.0x" "$(ok_if "$r_mem" ">=" 1.0)"
row "hits, disk (memory cache 0)" "$(rps "$m_disk")" "nginx static" "$(rps "$m_nginx")" "$r_disk" ">= 0.8x" "$(ok_if "$r_disk" ">=" 0.8)"
row "misses, $NPHOTOS photos grid 3, conc 2" "$(ips "$m_th")" "vipsthumbnail 2 procs" "$(ips "$m_vi")" "$r_vi" ">= 0.9x (img/s)" "$(ok_if "$r_vi" ">=" 0.9)"
row "misses, same" "$(ips "$m_th")" "thumbor (PIL)" "$(ips "$m_tb")" "$r_tb" "-" "-"
row "stampede: 100 concurrent, grid 1" "$m_100 ms" "1 request, fresh" "$m_one ms" "$r_st" "<= 1.2x" "$(ok_if "$r_st" "<=" 1.2)"
row "stampede: renders run (max)" "$renders_max (coalesced $(median "${S_COALESCED[@]}"))" "-" "-" "-" "= 1" "$([ "$renders_max" = 1 ] && echo yes || echo NO)"
mem_row "thumbd RSS+memfds, memory hits" "$HWM_MEM" "$lim_mib"
mem_row "thumbd RSS+memfds, disk hits" "$HWM_DISK" "$dlim_mib"
mem_row "thumbd RSS+memfds, misses (max)" "$(maxof "${HWM_MISS[@]}")" "$lim_mib"
mem_row "thumbd RSS+memfds, stampede" "$(maxof "${HWM_100[@]}")" "$lim_mib"
mem_row "thumbd RSS+memfds, 1 request" "$(maxof "${HWM_ONE[@]}")" "$lim_mib"
echo
echo "rounds (thumbd / peer): hits memory ${H_MEM[*]} | disk ${H_DISK[*]} | nginx ${H_NGINX[*]} req/s"
echo "server CPU per hit (us, medians; less sensitive to the shared machine than req/s): thumbd memory $(median "${C_MEM[@]}"), thumbd disk $(median "${C_DISK[@]}"), nginx $(median "${C_NGINX[@]}")"
echo "                        misses ms: thumbd ${M_THUMBD[*]} | thumbor ${M_THUMBOR[*]} | vipsthumbnail ${M_VIPS[*]}"
echo "                        stampede ms: 100 concurrent ${S_100[*]} | single ${S_ONE[*]}; renders ${S_RENDERS[*]}"
echo "thumbd RSS after the hit runs (current, not peak): memory-hit server $RSS_MEM; disk-hit server $RSS_DISK"
echo "peers' peak RSS (info): nginx master + 2 workers $(mib "$NGINX_HWM") MiB in total; thumbor $(mib "$THUMBOR_HWM") MiB"
echo "stampede photo: $BIG; misses: thumbor /unsafe/393x393/filters:no_upscale()/NAME, vipsthumbnail -s '393x393>' --smartcrop centre [Q=80,strip]"
echo "hits: Lua script rotating over ${#HOT[@]} URLs; the disk-hit server answered $DISK_DISKHITS disk hits and $((DISK_MEMHITS_AFTER - DISK_MEMHITS_BEFORE)) memory hits under load"
[ -z "$WRK_ERRORS$MISS_ERRORS$STAMPEDE_ERRORS" ] || echo "PROBLEMS: $WRK_ERRORS$MISS_ERRORS$STAMPEDE_ERRORS"
