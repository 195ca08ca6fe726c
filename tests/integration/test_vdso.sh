#!/bin/sh
# The vdso: code the kernel maps into every process, with no file behind
# it.  It is a whole ELF image in memory; the symbolizer reads its own copy
# (the same image in every process of the ABI) and names [vdso] frames.
#
#   vdso_names   a loop on clock_gettime(): most leaves are
#                __vdso_clock_gettime (or another __vdso_ function), not
#                [vdso+0x..]
. "$(dirname "$0")/lib.sh"
lib_init integration/vdso_names

need_fixture vdso_burn vdso_burn
grep -q '\[vdso\]' /proc/self/maps || skip_all "no vdso in this kernel's processes"

name=integration/vdso_names
run_to 60 "$BPFSYM" record -q -F 199 -o "$T/v.data" -- "$T/vdso_burn" 1.5 > /dev/null 2> "$T/v.err"
rc=$?
if record_ok "$name" "$T/v.data" "$T/v.err" $rc && folded "$name" "$T/v.data" "$T/v.folded"; then
	tot=$(folded_count "$T/v.folded" '^vdso_burn;')
	named=$(folded_count "$T/v.folded" '^vdso_burn;(.*;)?(__vdso_[a-z_]+|clock_gettime|__clock_gettime)$')
	raw=$(folded_count "$T/v.folded" '^vdso_burn;(.*;)?\[\[?vdso\]?\+0x[0-9a-f]+\]$')
	note "$name: $tot samples; leaf a vdso function $named, [vdso+0x..] $raw"
	if [ "$tot" -lt 100 ]; then
		fail "$name" "only $tot samples of vdso_burn"
	elif [ $((100 * named)) -lt $((50 * tot)) ] || [ $((10 * raw)) -gt "$tot" ]; then
		fail "$name" "vdso frames are not named: $named named, $raw raw of $tot"
		uleaves "$T/v.folded" vdso_burn
	else
		pass "$name"
	fi
fi
lib_done
