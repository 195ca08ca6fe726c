#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Print one line naming what the build needs and this machine lacks, with
# the Debian package of each, and exit 1; print nothing and exit 0 when
# everything is there.  The Makefile runs it before building, so a fresh
# machine hears "missing: ..." instead of a tool's exit status.
# Usage: check-deps.sh [BPFTOOL]
bpftool=${1:-bpftool}
missing=

need_cmd() {	# need_cmd CMD PACKAGE
	command -v "$1" > /dev/null 2>&1 || missing="$missing, $1 ($2)"
}

need_cmd cc gcc
need_cmd clang clang
need_cmd pkg-config pkg-config
need_cmd protoc-c protobuf-c-compiler
[ -x "$bpftool" ] || command -v "$bpftool" > /dev/null 2>&1 || missing="$missing, bpftool (bpftool)"
if command -v pkg-config > /dev/null 2>&1; then
	for m in libbpf:libbpf-dev libelf:libelf-dev libzstd:libzstd-dev liblzma:liblzma-dev \
		 zlib:zlib1g-dev libprotobuf-c:libprotobuf-c-dev; do
		pkg-config --exists "${m%%:*}" 2> /dev/null || missing="$missing, ${m%%:*} (${m#*:})"
	done
fi
[ -r /usr/include/libiberty/demangle.h ] || missing="$missing, libiberty (libiberty-dev)"
# Only the header: libdebuginfod is dlopen'd at run time (docs/ARCHITECTURE.md).
[ -r /usr/include/elfutils/debuginfod.h ] || missing="$missing, libdebuginfod (libdebuginfod-dev)"
[ -z "$missing" ] && exit 0
echo "bpfsym: missing ${missing#, }: run 'make deps' as root (scripts/install-deps.sh installs them)"
exit 1
