#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make deb`: bpfsym_VERSION_ARCH.deb in the checkout's top directory,
# built without network or debhelper: `make install` staged into
# build/deb/root (prefix /usr, the unit in /lib/systemd/system, not
# enabled: no maintainer scripts), the binary stripped, the man pages
# gzipped, Debian's copyright (packaging/copyright, DEP-5) in place of the
# LICENSE files, Depends computed by dpkg-shlibdeps from the binary's
# libraries, then dpkg-deb --root-owner-group.
# Usage: packaging/build-deb.sh [OUTDIR [WORKDIR]]  (WORKDIR: the staging
# tree, build/deb by default; the tests give one in their temp directory)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
out=${1:-$top}
work=${2:-$top/build/deb}
root=$work/root
doc=$root/usr/share/doc/bpfsym
arch=$(dpkg --print-architecture)
# The version: 0.1 and the commit's date and hash (a tree without git: today).
if hash=$(git -C "$top" rev-parse --short=8 HEAD 2>/dev/null); then
	when=$(git -C "$top" log -1 --format=%cd --date=format:%Y%m%d)
	stamp=$(git -C "$top" log -1 --format=%cD)
else
	hash=local when=$(date -u +%Y%m%d) stamp=$(date -R)
fi
version=0.1~git$when.$hash-1

rm -rf "$work"
mkdir -p "$root/DEBIAN"
make --no-print-directory -s install DESTDIR="$root" prefix=/usr \
	unitdir=/lib/systemd/system docdir=/usr/share/doc/bpfsym > /dev/null
# Debian policy 12.5: the license is in copyright, not in extra files.
rm -f "$doc/LICENSE" "$doc/LGPL-2.1" "$doc/BSD-2-Clause"
install -m 0644 packaging/copyright "$doc/copyright"
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
	"$root/usr/bin/bpfsym"
gzip -9n "$root"/usr/share/man/man1/*.1
gzip -9n "$doc/README.md"
# Built from a tree, not uploaded to Debian: no ITP bug to close.
mkdir -p "$root/usr/share/lintian/overrides"
echo "bpfsym: initial-upload-closes-no-bugs" > "$root/usr/share/lintian/overrides/bpfsym"
chmod 0644 "$root/usr/share/lintian/overrides/bpfsym"
{
	echo "bpfsym ($version) unstable; urgency=medium"
	echo
	echo "  * Built from the tree at commit $hash."
	echo
	echo " -- bpfsym maintainers <maintainers@users.noreply.a-seed-c3467a17.example>  $stamp"
} | gzip -9n > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# dpkg-shlibdeps reads debian/control of the directory it runs in.
mkdir -p "$work/src/debian"
printf 'Source: bpfsym\n\nPackage: bpfsym\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$root/usr/bin/bpfsym" 2> "$work/shlibdeps.err" |
	sed -n 's/^shlibs:Depends=//p')
if [ -z "$depends" ]; then
	echo "build-deb: dpkg-shlibdeps gave no Depends" >&2
	cat "$work/shlibdeps.err" >&2
	exit 1
fi
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" \
	-e "s|@DEPENDS@|$depends|" -e '/^#/d' packaging/control.in > "$root/DEBIAN/control"
(cd "$root" && find usr lib -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
deb=$out/bpfsym_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null
echo "$deb"
