#!/usr/bin/env bash
# Builds livebind_<version>_amd64.deb with dpkg-deb from a release livebind-server.
# Usage: DEB_MAINTAINER='Name <address>' deploy/build-deb.sh BINARY VERSION OUTPUT_DIR
# (`make deb` passes the version constant and the Makefile's DEB_MAINTAINER)
# Depends: is computed by dpkg-shlibdeps from the binary's shared libraries, so it names exactly the
# Debian packages whose libraries the binary loads (libc6, libmicrohttpd12, libsqlite3-0, …).
set -euo pipefail
BINARY=${1:?usage: build-deb.sh BINARY VERSION OUTPUT_DIR}
VERSION=${2:?version}
OUT=${3:?output dir}
# The Maintainer field and changelog signature: DEB_MAINTAINER, which `make deb` exports from the
# Makefile's one definition (override it there or on make's command line).
MAINTAINER=${DEB_MAINTAINER:?set DEB_MAINTAINER to "Name <address>" (make deb sets it from the Makefile)}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PKG="$WORK/livebind"

install -d "$PKG/DEBIAN" "$PKG/usr/bin" "$PKG/lib/systemd/system" "$PKG/etc/livebind" \
           "$PKG/usr/share/doc/livebind" "$PKG/usr/share/man/man1"
install -m 0755 "$BINARY" "$PKG/usr/bin/livebind-server"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$PKG/usr/bin/livebind-server"
# The manual page is the binary's own --help, so it cannot fall behind the flags.
help2man --no-info --no-discard-stderr --version-string="$VERSION" \
  --name="serve live JSON models over HTTP and Server-Sent Events" "$PKG/usr/bin/livebind-server" \
  | gzip -9n > "$PKG/usr/share/man/man1/livebind-server.1.gz"
install -m 0644 "$HERE/livebind.service" "$PKG/lib/systemd/system/livebind.service"
install -m 0644 "$HERE/livebind.conf" "$PKG/etc/livebind/livebind.conf"
install -m 0644 "$HERE/debian/copyright" "$PKG/usr/share/doc/livebind/copyright"
install -m 0644 "$ROOT/README.md" "$PKG/usr/share/doc/livebind/README.md"
install -m 0644 "$ROOT/docs/HTTP.md" "$PKG/usr/share/doc/livebind/HTTP.md"
# A native package's changelog (Debian format), compressed as policy asks.
{
  echo "livebind ($VERSION) unstable; urgency=medium"
  echo
  echo "  * Release $VERSION; see CHANGELOG.md in the source for what changed."
  echo
  echo " -- $MAINTAINER  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$PKG/usr/share/doc/livebind/changelog.gz"
for script in postinst prerm postrm; do install -m 0755 "$HERE/debian/$script" "$PKG/DEBIAN/$script"; done
echo /etc/livebind/livebind.conf > "$PKG/DEBIAN/conffiles"

# dpkg-shlibdeps wants a source package's layout to run in.
mkdir -p "$WORK/shlibs/debian"
printf 'Source: livebind\n\nPackage: livebind\nArchitecture: amd64\n' > "$WORK/shlibs/debian/control"
DEPENDS=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O "$PKG/usr/bin/livebind-server" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || { echo "dpkg-shlibdeps found no dependencies for $BINARY" >&2; exit 1; }
SIZE=$(du -k -s --exclude=DEBIAN "$PKG" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@DEPENDS@/$DEPENDS/" -e "s/@SIZE@/$SIZE/" -e "s|@MAINTAINER@|$MAINTAINER|" \
    "$HERE/debian/control.in" > "$PKG/DEBIAN/control"
# Conffiles are left out of md5sums, as dh_md5sums does: dpkg tracks them on its own.
(cd "$PKG" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
  > "$PKG/DEBIAN/md5sums"

mkdir -p "$OUT"
DEB="$OUT/livebind_${VERSION}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null
echo "$DEB"
echo "Depends: adduser, $DEPENDS" >&2
