#!/usr/bin/env bash
# Installs thumbd's package into a fresh minimal Debian 12 and serves a thumbnail from there:
#
#   packaging/test-install.sh [path/to/thumbd.deb]   # builds the package when none is given
#
# 1. the unit passes `systemd-analyze verify` (with ExecStart pointed at the built binary);
# 2. `mmdebstrap --variant=minbase bookworm` makes a root from this machine's own apt sources and
#    installs the .deb into it with apt (so its Depends: are resolved from Debian alone);
# 3. in that root, `thumbd --version` runs, and the unit's own ExecStart command line serves a
#    sample photo as the unit's user, with the cache directory systemd would make: a thumbnail
#    fetched from outside with curl (a chroot shares the loopback) is checked as a JPEG of the
#    size `vipsthumbnail` gives the same photo.
# Needs root, mmdebstrap, curl, systemd (systemd-analyze), libvips-tools; the Debian mirror.
# Prints "test-install: passed (N s)" and exits 0, or says what failed and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
fail() { echo "test-install: FAILED: $*" >&2; exit 1; }
deb=${1:-$(packaging/build-deb.sh | tail -n 1)}
[ -f "$deb" ] || fail "no package at $deb"
echo "test-install: package $deb" >&2

work=$(mktemp -d /var/tmp/thumbd-install.XXXXXX)
root="$work/root"
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
    mountpoint -q "$root/proc" 2>/dev/null && umount "$root/proc"
    rm -rf "$work"
}
trap cleanup EXIT

# 1. The unit as systemd reads it (the binary path swapped for one that exists here).
unpacked="$work/unpacked"
dpkg-deb -x "$deb" "$unpacked"
sed "s|^ExecStart=/usr/bin/thumbd|ExecStart=$unpacked/usr/bin/thumbd|" "$unpacked/lib/systemd/system/thumbd.service" \
    > "$work/thumbd.service"
# Documentation=man:thumbd(8) is checked with man(1), against the package's own manual page.
verify=$(MANPATH="$unpacked/usr/share/man:" systemd-analyze verify "$work/thumbd.service" 2>&1) \
    || fail "systemd-analyze verify: $verify"
[ -z "$verify" ] || fail "systemd-analyze verify printed: $verify"

# 2. A fresh Debian 12 with the package installed by apt, from this machine's apt sources.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || fail "no apt sources in /etc/apt"
mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --customize-hook="copy-in $deb /tmp" \
    --customize-hook="chroot \"\$1\" apt-get install -y -q /tmp/$(basename "$deb")" \
    --customize-hook="rm -f \"\$1/tmp/$(basename "$deb")\"" \
    bookworm "$root" "${sources[@]}" >&2 || fail "mmdebstrap or the package's installation failed"
echo "test-install: root made and package installed in $(( $(date +%s) - started )) s" >&2

mount -t proc proc "$root/proc"
version=$(chroot "$root" thumbd --version) || fail "thumbd --version failed in the root"
echo "$version" | sed 's/^/test-install:   /' >&2
echo "$version" | sed -n 1p | grep -Eq '^thumbd [0-9][^ ]* \(commit [0-9a-f]{12}(-dirty)?\)$' \
    || fail "thumbd --version does not name a version and commit: $version"
chroot "$root" getent passwd thumbd >/dev/null || fail "the package made no thumbd user"
[ -f "$root/usr/share/man/man8/thumbd.8.gz" ] || fail "no manual page"
grep -q '^/etc/thumbd/thumbd.json$' "$root/var/lib/dpkg/info/thumbd.conffiles" || fail "thumbd.json is not a conffile"
# The group by number: the host's names for the root's ids are another system's.
group=$(chroot "$root" getent group thumbd | cut -d: -f3)
mode=$(stat -c %u:%g:%a "$root/etc/thumbd/thumbd.json")
[ "$mode" = "0:$group:640" ] || fail "thumbd.json, which holds secrets, is $mode (uid:gid:mode), not 0:$group:640 (root:thumbd)"

# 3. As an administrator would: the library set in the shipped config (and a free port), then
# the unit's ExecStart run as its user with its cache directory.
# sed reads all its input (head would leave sort writing to a closed pipe: SIGPIPE, and
# pipefail made the script exit 141 without a word once the list outgrew one 4 KiB write)
photo=$(find /work/shared/corpus/photos ../shared/corpus/photos samples -maxdepth 2 -name '*.jpg' 2>/dev/null | sort | sed -n 1p)
[ -n "$photo" ] || fail "no sample photo"
install -d "$root/srv/photos"
cp "$photo" "$root/srv/photos/sample.jpg"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -i -e 's|"library": "[^"]*"|"library": "/srv/photos"|' -e "s|\"port\": [0-9]*|\"port\": $port|" "$root/etc/thumbd/thumbd.json"
unit="$root/lib/systemd/system/thumbd.service"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
user=$(sed -n 's/^User=//p' "$unit")
cache=/var/cache/$(sed -n 's/^CacheDirectory=//p' "$unit")
chroot "$root" install -d -o "$user" -g "$user" -m 0750 "$cache"
# shellcheck disable=SC2086  # ExecStart is a command line, split as systemd splits it (no quotes in it)
chroot "$root" setpriv --reuid="$user" --regid="$user" --init-groups $exec_start > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || fail "the server exited: $(cat "$work/server.log")"
    sleep 0.1
done
for grid in 3 1; do
    curl -fsS -o "$work/grid$grid.jpg" "http://127.0.0.1:$port/thumbnails/$grid/sample.jpg" \
        || fail "GET /thumbnails/$grid/sample.jpg: $(cat "$work/server.log")"
    [ "$(head -c 3 "$work/grid$grid.jpg" | od -An -tx1 | tr -d ' ')" = ffd8ff ] || fail "grid $grid is not a JPEG"
done
size() { echo "$(vipsheader -f width "$1")x$(vipsheader -f height "$1")"; }
[ "$(size "$work/grid3.jpg")" = 393x393 ] || fail "grid 3 is $(size "$work/grid3.jpg"), not 393x393"
vipsthumbnail "$root/srv/photos/sample.jpg" --size 1179x2358 -o "$work/reference.jpg"
[ "$(size "$work/grid1.jpg")" = "$(size "$work/reference.jpg")" ] \
    || fail "grid 1 is $(size "$work/grid1.jpg"), vipsthumbnail makes $(size "$work/reference.jpg")"
[ -n "$(find "$root$cache/entries" -type f)" ] || fail "nothing was cached in $cache"
[ "$(stat -c %u "$root$cache/thumbd.lock")" = "$(chroot "$root" id -u "$user")" ] || fail "the cache is not $user's"
kill -TERM "$server"
wait "$server" || fail "the server did not exit 0 on SIGTERM: $(cat "$work/server.log")"
server=""
echo "test-install: passed ($(( $(date +%s) - started )) s)"
