#!/usr/bin/env bash
# Builds the container image thumbd:local from packaging/Containerfile and thumbd's package, on a
# Debian 12 base made locally (mmdebstrap | podman import: no registry is needed).
#   packaging/build-image.sh [path/to/thumbd.deb]
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(packaging/build-deb.sh | tail -n 1)}
if ! podman image exists debian:bookworm-local; then
    mmdebstrap --quiet --variant=minbase bookworm - | podman import - debian:bookworm-local >&2
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$deb" "$context/thumbd.deb"
# --isolation=chroot: the RUN step needs no OCI runtime (crun refuses to start where the host's
# cgroups are in hybrid mode); PODMAN_BUILD_OPTIONS replaces it.
# shellcheck disable=SC2086
podman build ${PODMAN_BUILD_OPTIONS---isolation=chroot} -f packaging/Containerfile -t thumbd:local "$context" >&2
echo thumbd:local
