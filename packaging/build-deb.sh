#!/usr/bin/env bash
# Builds thumbd's Debian 12 package; the last line it prints is the path of the .deb written.
#
#   packaging/build-deb.sh            # .build/deb/thumbd_<version>_<arch>.deb
#
# A release build with the Swift runtime linked in (--static-swift-stdlib), so the package needs
# only Debian 12's own libraries, which dpkg-shlibdeps works out from the binary (libvips,
# FFmpeg, SQLite, OpenSSL...). The version (packaging/VERSION) and the git commit are baked in
# through the CBuildInfo target's C macros (a generated header), so `thumbd --version`, /stats and /metrics name them.
# It builds in .build/deb (its own scratch path: a debug or release build beside it is left
# alone). The manual page is `thumbd --man`, generated from the options' own help texts.
# Needs: swift, dpkg-dev (dpkg-shlibdeps), git, gzip. Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d '[:space:]' < packaging/VERSION)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- Package.swift Sources 2>/dev/null; then
    commit="$commit-dirty"
fi
arch=$(dpkg --print-architecture)
scratch=.build/deb
started=$(date +%s)
# The version and commit, as a header CBuildInfo includes: the -I flag stays the same, so a new
# commit recompiles one C file and relinks (a changed -D would rebuild every module).
install -d "$scratch/buildinfo"
printf '#define THUMBD_VERSION "%s"\n#define THUMBD_COMMIT "%s"\n' "$version" "$commit" > "$scratch/buildinfo/new.h"
if cmp -s "$scratch/buildinfo/new.h" "$scratch/buildinfo/thumbd_build_info.h"; then
    rm "$scratch/buildinfo/new.h"
else
    mv "$scratch/buildinfo/new.h" "$scratch/buildinfo/thumbd_build_info.h"
fi
swift build -c release --static-swift-stdlib --scratch-path "$scratch" -Xcc -I -Xcc "$PWD/$scratch/buildinfo" >&2
binary="$scratch/release/thumbd"
echo "build-deb: release build took $(( $(date +%s) - started )) s" >&2

root="$scratch/root"
rm -rf "$root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/etc/thumbd" "$root/lib/systemd/system" "$root/usr/lib/sysusers.d" \
    "$root/usr/share/man/man8" "$root/usr/share/doc/thumbd/examples"
install -m 0755 "$binary" "$root/usr/bin/thumbd"
strip --strip-unneeded "$root/usr/bin/thumbd"
install -m 0644 packaging/thumbd.json "$root/etc/thumbd/thumbd.json"
install -m 0644 packaging/thumbd.service "$root/lib/systemd/system/thumbd.service"
install -m 0644 packaging/thumbd.sysusers "$root/usr/lib/sysusers.d/thumbd.conf"
"$root/usr/bin/thumbd" --man | gzip -9n > "$root/usr/share/man/man8/thumbd.8.gz"
for doc in README.md docs/deploying.md docs/configuration.md docs/API.md docs/stats.md docs/cache.md; do
    install -m 0644 "$doc" "$root/usr/share/doc/thumbd/"
done
install -m 0644 config/nginx/thumbd.conf "$root/usr/share/doc/thumbd/examples/nginx-thumbd.conf"
install -m 0644 samples/README.md "$root/usr/share/doc/thumbd/examples/samples-README.md"
for script in postinst prerm postrm; do install -m 0755 "packaging/$script" "$root/DEBIAN/$script"; done
echo /etc/thumbd/thumbd.json > "$root/DEBIAN/conffiles"

# Depends: what the binary links, as dpkg-shlibdeps reads it from the libraries' shlibs/symbols
# files (it wants a debian/control to run beside).
shlib_dir="$scratch/shlibdeps"
rm -rf "$shlib_dir"
install -d "$shlib_dir/debian"
printf 'Source: thumbd\n\nPackage: thumbd\nArchitecture: any\n' > "$shlib_dir/debian/control"
depends=$(cd "$shlib_dir" && dpkg-shlibdeps -O "$OLDPWD/$root/usr/bin/thumbd" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

cat > "$root/DEBIAN/control" <<CONTROL
Package: thumbd
Version: $version
Architecture: $arch
Maintainer: thumbd maintainers <thumbd@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends, passwd
Suggests: nginx-light
Section: web
Priority: optional
Description: image thumbnail cache server for photo-grid apps
 thumbd answers GET requests for thumbnails of a library of photos and videos
 at the grid sizes of a phone's photo grid, rendered with libvips, kept in a
 memory and a disk cache, and lists the library for paging and prefetch.
 Built from commit $commit. Set "library" in /etc/thumbd/thumbd.json, then
 systemctl enable --now thumbd.
CONTROL

deb="$scratch/thumbd_${version}_${arch}.deb"
# zstd (read by Debian 12's dpkg and apt): 2 s here, where xz took 70-150 s for 7 MB less.
dpkg-deb --build --root-owner-group -Zzstd "$root" "$deb" >&2
echo "build-deb: $(du -h "$deb" | cut -f1) package, $(( $(date +%s) - started )) s in all" >&2
echo "$PWD/$deb"
