#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# same-skeleton.sh A.skel.h NAME_A B.skel.h NAME_B: exit 0 when the two
# bpftool skeletons declare the same object, NAME_A's and NAME_B's struct
# (maps, programs, links, global data and their layouts) being the same
# once the names are; else say how they differ, exit 1.  record/probes.c
# opens sampler_exec.bpf.o's bytes through sampler.skel.h's struct, which
# is only sound when they are.
set -u
[ $# -eq 4 ] || { echo "usage: $0 A.skel.h NAME_A B.skel.h NAME_B" >&2; exit 2; }
# What the loader relies on: the names of the maps and programs (libbpf
# finds each by name, so their order does not matter) and the layout of
# each global data section (written through the struct's offsets).
decl() {
	sed "s/$2/SKEL/g" "$1" | awk '
		/^struct SKEL \{/ { on = 1 }
		on && /^\tstruct SKEL__[a-z0-9_]+ \{/ { data = 1 }
		on && data { print; if (/^\t\} \*/) data = 0; next }
		on && /^\t\tstruct bpf_(map|program) \*/ { print | "sort" }
		on && /^\};/ { on = 0 }'
}
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
decl "$1" "$2" > "$a"
decl "$3" "$4" > "$b"
if ! cmp -s "$a" "$b"; then
	echo "same-skeleton: $3 ($4) does not declare what $1 ($2) does:" >&2
	diff "$a" "$b" >&2
	exit 1
fi
