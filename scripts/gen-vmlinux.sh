#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# Run deliberately (and commit the result): the build never regenerates it,
# so every build sees the same kernel types and CO-RE relocates at load time.
set -eu
arch=${1:-x86}
btf=${BTF:-/sys/kernel/btf/vmlinux}
out="$(dirname "$0")/../vmlinux/$arch/vmlinux.h"
[ -r "$btf" ] || { echo "gen-vmlinux: '$btf' not readable" >&2; exit 1; }
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "gen-vmlinux: wrote $out ($(wc -l < "$out") lines) from $btf"
