#!/usr/bin/env bash
# A flood of bad signatures costs no disk access (issue 17): runs thumbd with signing on, attaches
# `strace -f -c` to it once it serves, sends N thumbnail requests signed with a wrong key (to
# photos that exist and paths that do not), detaches, and prints the file-system system calls it
# saw; then the same for N correctly signed requests to the same paths, to show that the count
# would see them. Usage: Tests/Scripts/signature-flood-strace.sh [BINARY] [N]   (needs strace, python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/thumbd}
count=${2:-2000}
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
secret=$(python3 -c 'print("7e" * 32)')
"$binary" --library Tests/Fixtures/photos --cache-dir "$work/cache" --port 0 --host 127.0.0.1 \
  --signing-keys "live:$secret" >"$work/log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q 'serving' "$work/log" && break; sleep 0.1; done
port=$(sed -n 's/.*http:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p' "$work/log" | head -1)
flood() {   # $1: the secret to sign with; prints the statuses seen
  python3 - "$port" "$count" "$1" <<'PY'
import base64, collections, hashlib, hmac, http.client, sys, time
port, count, secret = int(sys.argv[1]), int(sys.argv[2]), bytes.fromhex(sys.argv[3])
names = ["Landscape_1.jpg", "Landscape_6.jpg", "missing.jpg", "dir/deeper/none.jpg"]
conn, seen, exp = http.client.HTTPConnection("127.0.0.1", port), collections.Counter(), int(time.time()) + 600
for i in range(count):
    name = names[i % len(names)]
    sig = base64.urlsafe_b64encode(hmac.new(secret, f"3\n{name}\n{exp}".encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    conn.request("GET", f"/thumbnails/3/{name}?exp={exp}&kid=live&sig={sig}")
    response = conn.getresponse(); response.read(); seen[response.status] += 1
print(" ".join(f"{status}x{n}" for status, n in sorted(seen.items())))
PY
}
for run in wrong right; do
  [ "$run" = wrong ] && key=$(python3 -c 'print("7f" * 32)') || key=$secret
  strace -f -c -e trace=%file,%desc -o "$work/strace-$run" -p "$server" 2>/dev/null &
  tracer=$!
  sleep 1   # strace attaches to every thread
  echo "$run key, $count requests: $(flood "$key")"
  sleep 0.5
  kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
  grep -E 'stat|open|access|readlink|total' "$work/strace-$run" || echo "  (no file-system calls at all)"
done
