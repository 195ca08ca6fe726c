#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Prepare a Debian kernel to boot under qemu: prints the directory holding
# vmlinuz, initrd.img and the package's extracted /lib/modules/<release>.
#
#   KERNEL=<package>   a linux-image-* package (default: the newest Debian 12
#                      linux-image-6.1.0-N-amd64-unsigned apt knows)
#
# The kernel comes from apt (apt-get download, dpkg-deb -x), never from the
# host's /boot: the point is to test on another kernel than the one running.
# The initramfs holds only a static busybox, tests/kernel/init and the
# modules that mount the host's root over virtio-9p, and overlayfs, ext4
# (with crc32c, its checksums: without, its mount says ENOENT), the
# loop driver and fuse (test_hostile_fs's file system that never answers)
# for the tests that mount them (the VM has no /lib/modules of
# its own to modprobe from: the host's root is read-only and has none)
# (their order from modules.dep, which depmod -b makes: the package has
# none).  Everything goes to build/kernel/ (ignored by git).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
base=$top/build/kernel
msg() { echo "kernel.sh: $*" >&2; }
die() { msg "$*"; exit 1; }

# The host tools, installed the way scripts/install-deps.sh installs the
# project's: only what is missing, with apt.
need="qemu-system-x86 busybox-static kmod xz-utils zstd"
missing=
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root to install them)"
	msg "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >&2
fi

# The newest 6.1 package with an installable version (apt-cache search also
# lists names whose version is gone from the archive).
newest_61() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' |
		cut -d' ' -f1 | sort -rV | while read -r p; do
			if apt-cache policy "$p" | grep -q 'Candidate: [0-9]'; then
				echo "$p"
				break
			fi
		done
}
KERNEL=${KERNEL:-}
if [ -z "$KERNEL" ]; then
	KERNEL=$(newest_61)
	if [ -z "$KERNEL" ]; then
		apt-get update -q >&2 || true
		KERNEL=$(newest_61)
	fi
	[ -n "$KERNEL" ] || die "apt knows no linux-image-6.1.0-*-amd64-unsigned package (apt-get update?)"
fi
kdir=$base/$KERNEL
mkdir -p "$kdir"

# Download and extract once per package.
if [ ! -f "$kdir/extracted" ]; then
	rm -rf "$kdir/root" "$kdir"/*.deb
	msg "downloading $KERNEL"
	# apt's _apt user cannot write here: the warning about that is noise.
	(cd "$kdir" && apt-get download -q "$KERNEL" 2>&1 | grep -v 'unsandboxed' >&2) || true
	deb=$(ls "$kdir"/*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || die "apt-get download $KERNEL fetched nothing (is the name right? apt-cache search linux-image)"
	dpkg-deb -x "$deb" "$kdir/root"
	rel=$(ls "$kdir/root/lib/modules" | head -1)
	[ -n "$rel" ] || die "$KERNEL has no /lib/modules/<release>"
	depmod -b "$kdir/root" "$rel"
	cp "$kdir/root/boot/vmlinuz-$rel" "$kdir/vmlinuz"
	echo "$rel" > "$kdir/extracted"
fi
rel=$(cat "$kdir/extracted")
mods=$kdir/root/lib/modules/$rel

# The initramfs, again when init or this script changed.
if [ ! -f "$kdir/initrd.img" ] || [ "$top/tests/kernel/init" -nt "$kdir/initrd.img" ] ||
	[ "$0" -nt "$kdir/initrd.img" ]; then
	bb=$(command -v busybox || echo /bin/busybox)
	# A dynamic busybox (package busybox) would find no libc in the initramfs.
	! ldd "$bb" > /dev/null 2>&1 || die "$bb is not static (install busybox-static)"
	ird=$kdir/initrd.d
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/modules" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/lower" "$ird/rw" "$ird/newroot"
	cp "$bb" "$ird/bin/busybox"
	cp "$top/tests/kernel/init" "$ird/init"
	chmod 755 "$ird/init"
	# Each wanted module after its dependencies: modules.dep lists a
	# module's whole closure, deepest last (modprobe loads it backwards).
	# A module built into the kernel is in modules.builtin, not here.
	awk -v want="virtio_pci 9pnet_virtio 9p overlay loop ext4 crc32c_generic fuse" '
		{ sub(/:$/, "", $1); mod = $1; n = split(mod, p, "/"); name = p[n]
		  sub(/\.ko(\.[a-z]+)?$/, "", name); gsub(/-/, "_", name)
		  line[name] = $0 }
		END {
			nw = split(want, w, " ")
			for (i = 1; i <= nw; i++) {
				if (!(w[i] in line)) continue
				nf = split(line[w[i]], f, " ")
				for (j = nf; j >= 2; j--) emit(f[j])
				sub(/:$/, "", f[1]); emit(f[1])
			}
		}
		function emit(m) { if (!(m in seen)) { seen[m] = 1; print m } }
	' "$mods/modules.dep" > "$kdir/modules.list"
	for w in virtio_pci 9pnet_virtio 9p overlay loop ext4 crc32c_generic fuse; do
		grep -Eq "/$w\.ko" "$kdir/modules.list" "$mods/modules.builtin" ||
			die "$KERNEL has no module $w (modules.dep, modules.builtin)"
	done
	: > "$ird/modules/order"
	while read -r m; do
		out=$(basename "$m" | sed -E 's/\.ko\..*$/.ko/')
		case $m in
		*.ko.xz) xz -dc "$mods/$m" > "$ird/modules/$out" ;;
		*.ko.zst) zstd -qdc "$mods/$m" > "$ird/modules/$out" ;;
		*.ko.gz) gzip -dc "$mods/$m" > "$ird/modules/$out" ;;
		*) cp "$mods/$m" "$ird/modules/$out" ;;
		esac
		echo "$out" >> "$ird/modules/order"
	done < "$kdir/modules.list"
	(cd "$ird" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 > "$kdir/initrd.img.tmp"
	mv "$kdir/initrd.img.tmp" "$kdir/initrd.img"
	rm -rf "$ird"
fi
echo "$kdir"
