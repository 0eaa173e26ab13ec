# Shared set-up for the benchmark scripts: release build, corpus location, a server launcher.
# Sourced, not run. Every load targets 127.0.0.1 only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CORPUS="${THUMBD_CORPUS:-$ROOT/../shared/corpus}"
[ -d "$CORPUS/photos" ] || { echo "needs the corpus at $CORPUS (or THUMBD_CORPUS)" >&2; exit 2; }
command -v vipsthumbnail >/dev/null || { echo "needs libvips-tools (vipsthumbnail)" >&2; exit 2; }
# THUMBD_BINARY=PATH measures that binary as it is (an older build, for a before/after in one run).
if [ -n "${THUMBD_BINARY:-}" ]; then
  THUMBD="$THUMBD_BINARY"
  unset THUMBD_BINARY   # not passed on: thumbd refuses THUMBD_* variables it does not know
else
  (cd "$ROOT" && swift build -c release --product thumbd >/dev/null 2>&1) || { echo "release build failed" >&2; exit 2; }
  THUMBD="$ROOT/.build/release/thumbd"
fi
WORK="$(mktemp -d /tmp/thumbd-bench.XXXXXX)"
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# start_server LIBRARY PORT [extra flags...]: starts thumbd with a fresh cache and waits for /healthz.
start_server() {
  local library="$1" port="$2"; shift 2
  (cd "$WORK" && exec "$THUMBD" --library "$library" --port "$port" --cache-dir "$WORK/cache-$port" "$@") \
    >"$WORK/server-$port.log" 2>&1 &   # from $WORK: config/thumbd.json is not read
  SERVER_PID=$!
  # Up to 30 s: a loaded machine with a large library was seen to take more than 10.
  for _ in $(seq 300); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "thumbd did not start:" >&2; cat "$WORK/server-$port.log" >&2; exit 2
}

stop_server() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; }

# now_ms: wall clock in ms.
now_ms() { date +%s%3N; }
