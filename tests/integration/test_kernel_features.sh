#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel's optional BPF features, probed at start: the variant chosen,
# said in the report header and with -v, forced away by
# BPFSYM_FORCE_FALLBACK, and refused when misspelt.  The oracle is the
# running kernel's own BTF (bpftool): a kfunc named there is one the
# verifier knows.
. "$(dirname "$0")/lib.sh"
lib_init integration/kfeat_header integration/kfeat_forced integration/kfeat_forced_all \
	integration/kfeat_pid integration/kfeat_verbose integration/kfeat_unknown
# The expectations below are this machine's, not a pass's forced ones.
unset BPFSYM_FORCE_FALLBACK

BPFTOOL=$(command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
[ -x "$BPFTOOL" ] || skip_all "bpftool not installed (package bpftool)"
"$BPFTOOL" btf dump file /sys/kernel/btf/vmlinux > "$T/btf.txt" 2> "$T/btf.err" ||
	skip_all "bpftool cannot read the kernel's BTF: $(head -1 "$T/btf.err")"
# has_kfunc NAME: "yes" when the kernel's BTF has function NAME, else "no".
has_kfunc() {
	if grep -q "FUNC '$1' " "$T/btf.txt"; then echo yes; else echo no; fi
}
tw=$(has_kfunc bpf_task_work_schedule_resume_impl)
vi=$(has_kfunc bpf_iter_task_vma_new)
rel=$(uname -r)
note "this kernel ($rel): task work $tw, VMA iterator $vi"

need_fixture burn burn
bg_start "$T/burn" 300
burn=$BG_PID
wait_until 5 alive "$burn"

# kline NAME DATA WANT: DATA's report header has the kernel line WANT.
kline() {
	if ! run_to 60 "$BPFSYM" report "$2" > "$2.report" 2> "$2.err"; then
		fail "$1" "'bpfsym report' of the recording failed"
		show "$2.err"
		return 1
	fi
	got=$(grep '^# kernel: ' "$2.report")
	note "$(basename "$2"): $got"
	if [ "$got" != "$3" ]; then
		fail "$1" "the header says '$got', expected '$3'"
		return 1
	fi
	return 0
}

# record NAME DATA ARGS...: record with ARGS into DATA; false (FAIL NAME) when it fails.
record() {
	n=$1 d=$2
	shift 2
	run_to 60 "$BPFSYM" record -q -o "$d" "$@" 2> "$d.rec.err"
	record_ok "$n" "$d" "$d.rec.err" $?
}

# ---- -a: a process is followed from its first sample, its mappings
# taken with the VMA iterator where the kernel has task work and it, from
# the lists the tracker keeps from exec otherwise.
name=integration/kfeat_header
if [ "$tw$vi" = yesyes ]; then how="mappings from each process's first sample"
else how="mappings from each process's first sample, kept from exec"; fi
if record "$name" "$T/a.data" -a -d 1 &&
   kline "$name" "$T/a.data" "# kernel: $rel; task work $tw, VMA iterator $vi -> $how"; then
	pass "$name"
fi

# ---- forced: each feature the kernel has says so, and the recording
# works: burn's samples are named through its own frames.  With -p every
# process is followed from its exec; with -a, from its first sample, by
# the lists the tracker keeps since exec (bpf/pend.bpf.h).
forced() { [ "$1" = yes ] && echo "no (forced)" || echo no; }
# forced_case NAME DATA HOW ARGS...: a forced recording with ARGS says HOW.
forced_case() {
	fc_name=$1 fc_data=$2 fc_how=$3
	shift 3
	if BPFSYM_FORCE_FALLBACK=all record "$fc_name" "$fc_data" "$@" &&
	   kline "$fc_name" "$fc_data" "# kernel: $rel; task work $(forced "$tw"), VMA iterator $(forced "$vi") -> $fc_how" &&
	   folded "$fc_name" "$fc_data" "$fc_data.folded"; then
		n=$(folded_count "$fc_data.folded" '^burn;(.*;)?burn_inner$')
		note "forced, $*: $n samples of burn;...;burn_inner"
		if [ "$n" -gt 0 ]; then
			pass "$fc_name"
		else
			fail "$fc_name" "no sample of burn;...;burn_inner with the fallbacks forced ($*)"
			show "$fc_data.folded"
		fi
	fi
}
forced_case integration/kfeat_forced "$T/f.data" "mappings followed from exec" -p "$burn" -d 1
forced_case integration/kfeat_forced_all "$T/fa.data" \
	"mappings from each process's first sample, kept from exec" -a -d 1

# ---- -p keeps the full history on any kernel.
name=integration/kfeat_pid
if record "$name" "$T/p.data" -p "$burn" -d 1 &&
   kline "$name" "$T/p.data" "# kernel: $rel; task work $tw, VMA iterator $vi -> mappings followed from exec"; then
	pass "$name"
fi

# ---- -v names them before anything is loaded.
name=integration/kfeat_verbose
run_to 60 "$BPFSYM" record -v -o "$T/v.data" -p "$burn" -d 0.2 > /dev/null 2> "$T/v.err"
line=$(grep '^bpfsym: kernel: ' "$T/v.err")
want="bpfsym: kernel: task work $tw, VMA iterator $vi -> mappings followed from exec"
if [ "$line" = "$want" ]; then
	pass "$name"
else
	fail "$name" "-v said '$line', expected '$want'"
fi

# ---- a misspelt feature: one line naming it, status 2, nothing loaded.
name=integration/kfeat_unknown
BPFSYM_FORCE_FALLBACK=task_work,vma-iter run_to 30 "$BPFSYM" record -q -o "$T/u.data" -p "$burn" -d 1 \
	> /dev/null 2> "$T/u.err"
rc=$?
if [ $rc -ne 2 ]; then
	fail "$name" "exited with status $rc, expected 2"
	show "$T/u.err"
elif [ "$(nlines "$T/u.err")" -ne 1 ] || ! grep -q "vma-iter" "$T/u.err"; then
	fail "$name" "expected one line naming 'vma-iter'"
	show "$T/u.err"
elif [ -e "$T/u.data" ]; then
	fail "$name" "a recording file was left"
else
	pass "$name"
fi
lib_done
