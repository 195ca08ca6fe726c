#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Off-CPU kernel stacks through a module loaded while recording: the
# kernel unwinder's tables follow modules as they load and unload
# (user/record/korc.c's watcher, bpf/korc.bpf.h).
#
# Each recording (`record --off-cpu -a -v`) sees, once it samples: tun
# loaded, the fixture (tests/fixtures/tunwait.c: a thread asleep in tun's
# tun_ring_recv() until a 10 ms timer's signal) for SECS, tun unloaded,
# loaded again (elsewhere, or at the same address with other tables), the
# fixture again, tun unloaded.  The fixture starts once -v says the
# watcher described the modules again (it looks each second).
#
#   offcpu_module_stacks
#       the unwinder's path: tun_wait's off-CPU time within 5 % of what
#       the fixture measured, and at least 99 % of it under kernel stacks
#       that reach do_syscall_64 (without the module's table the unwind
#       ends at tun's first frame, far above it).
#   offcpu_module_check
#       the same with BPFSYM_KORC_CHECK=1: every kernel stack the unwinder
#       takes at a switch-in compared with bpf_get_stack's at the switch-out
#       (the kernel's own unwinder): none different, at least the fixture's
#       waits compared through a module, fewer than a tenth of them met
#       a frame in no table (without tun's table, each would), at most 1 %
#       of all met one or stopped short.
#
# SKIP on a kernel without loadable modules (no /proc/modules), without
# tun as a module, with tun in use, or without ORC tables.  tun is left
# loaded or not as it was found.
. "$(dirname "$0")/lib.sh"
lib_init integration/offcpu_module_stacks integration/offcpu_module_check

SECS=2
TOL=5

[ -r /proc/modules ] || skip_all "this kernel has no loadable modules (no /proc/modules)"
command -v modprobe >/dev/null 2>&1 || skip_all "no modprobe (kmod)"
TUN_WAS=0
if grep -q '^tun ' /proc/modules; then
	TUN_WAS=1
	modprobe -r tun 2> "$T/rmmod.err" ||
		skip_all "tun is loaded and cannot be unloaded: $(tail -1 "$T/rmmod.err")"
elif [ -d /sys/module/tun ]; then
	skip_all "tun is built into this kernel, not a module"
fi
if ! modprobe tun 2> "$T/modprobe.err"; then
	skip_all "no tun module to load: $(tail -1 "$T/modprobe.err")"
fi
modprobe -r tun
modules_cleanup() {
	if [ "$TUN_WAS" = 1 ]; then
		modprobe tun 2>/dev/null
	else
		modprobe -r tun 2>/dev/null
	fi
}
LIB_CLEANUP=modules_cleanup
need_fixture tunwait tunwait

# changes DATA: how many times the recorder's watcher described modules again.
changes() {
	grep -c 'kernel unwinder: modules changed' "$1.err"
}
changed_past() {
	[ "$(changes "$1")" -gt "$2" ] || ! alive "$REC"
}

# cycle TAG: the recording $T/TAG.data with tun loaded, used, unloaded,
# loaded, used, unloaded; the fixture's lines in $T/TAG.fx.  False (with
# $WHY) when a step failed.
cycle() {
	: > "$T/$1.fx"
	for round in 1 2; do
		was=$(changes "$T/$1.data")
		if ! modprobe tun 2> "$T/modprobe.err"; then
			WHY="modprobe tun: $(tail -1 "$T/modprobe.err")"
			return 1
		fi
		# Not a failure by itself: the stacks say whether the tables came.
		wait_until 10 changed_past "$T/$1.data" "$was" ||
			note "round $round: -v said nothing of the modules in 10 s after modprobe tun"
		if ! alive "$REC"; then
			WHY="the recorder ended: $(tail -1 "$T/$1.data.err")"
			return 1
		fi
		note "round $round: $(grep 'modules changed' "$T/$1.data.err" | tail -1); tun at $(cat /sys/module/tun/sections/.text 2>/dev/null)"
		if ! run_to 30 "$T/tunwait" "$SECS" >> "$T/$1.fx" 2> "$T/$1.fx.err"; then
			WHY="the fixture failed: $(tail -1 "$T/$1.fx.err")"
			return 1
		fi
		if ! modprobe -r tun 2> "$T/rmmod.err"; then
			WHY="modprobe -r tun: $(tail -1 "$T/rmmod.err")"
			return 1
		fi
		wait_until 10 changed_past "$T/$1.data" "$((was + 1))"
	done
	return 0
}

# record_cycle NAME TAG: cycle under `record --off-cpu -a -v`, then
# `report --off-cpu --folded` into $T/TAG.off.  False (NAME failed) when
# a step did.
record_cycle() {
	modprobe -r tun 2>/dev/null	# as the last cycle should have left it
	if ! bg_record "$T/$2.data" --off-cpu -a -v; then
		fail "$1" "bpfsym record --off-cpu -a did not start: $(tail -1 "$T/$2.data.err")"
		return 1
	fi
	if ! cycle "$2"; then
		end_record
		fail "$1" "$WHY"
		return 1
	fi
	end_record
	if [ "$REC_RC" -ne 0 ]; then
		fail "$1" "bpfsym record exited with status $REC_RC: $(tail -1 "$T/$2.data.err")"
		return 1
	fi
	if grep -q 'no kernel unwinder tables\|unwinder.*could not be made' "$T/$2.data.err" ||
	    ! grep -q 'kernel unwinder: [0-9]* ORC entries' "$T/$2.data.err"; then
		skip "$1" "no kernel unwinder here: $(grep 'kernel stacks\|kernel unwinder' "$T/$2.data.err" | head -1)"
		return 1
	fi
	if ! run_to 60 "$BPFSYM" report "$T/$2.data" --off-cpu --folded > "$T/$2.off" 2> "$T/$2.off.err"; then
		fail "$1" "bpfsym report --off-cpu --folded failed: $(tail -1 "$T/$2.off.err")"
		return 1
	fi
	return 0
}

# fx_sum FX FIELD: the sum of FIELD (3: OFF_NS, 4: CALLS) of the fixture's lines.
fx_sum() {
	awk -v i="$2" '$1 == "tun_wait" && NF == 5 { s += $i } END { printf "%.0f\n", s }' "$1"
}

# tun_us FOLDED [FRAME]: microseconds of tunwait's stacks with tun_wait
# (and FRAME, when given).
tun_us() {
	awk -v fn="${2:-}" '
	{
		n = $NF
		k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
		if (f[1] != "tunwait")
			next
		w = 0; h = (fn == "")
		for (i = 2; i <= k; i++) {
			if (f[i] == "tun_wait") w = 1
			if (f[i] == fn) h = 1
		}
		if (w && h)
			s += n
	}
	END { printf "%.0f\n", s }' "$1"
}

# ---- the unwinder's stacks
name=integration/offcpu_module_stacks
if record_cycle "$name" stacks; then
	want=$(awk -v n="$(fx_sum "$T/stacks.fx" 3)" 'BEGIN { printf "%.0f\n", n / 1000 }')
	got=$(tun_us "$T/stacks.off")
	whole=$(tun_us "$T/stacks.off" "do_syscall_64_[k]")
	note "tun_wait off the CPU: fixture ${want} us, bpfsym ${got} us, ${whole} us of it under do_syscall_64"
	grep '^tunwait;.*;tun_wait;' "$T/stacks.off" | sort -t' ' -k2 -n | tail -1 | show
	if ! awk -v a="$got" -v b="$want" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * t / 100) }'; then
		fail "$name" "tun_wait's off-CPU time ${got} us, the fixture's ${want} us: past $TOL %"
		grep '^tunwait;.*;tun_wait;' "$T/stacks.off" | sort -t' ' -k2 -n | tail -3 | show
	elif [ $((whole * 100)) -lt $((got * 99)) ]; then
		fail "$name" "only ${whole} of ${got} us of tun_wait's time under kernel stacks that reach do_syscall_64: the unwind stopped in the module"
		grep '^tunwait;.*;tun_wait;' "$T/stacks.off" | grep -v 'do_syscall_64_\[k\]' | sort -t' ' -k2 -n | tail -3 | show
	else
		pass "$name"
	fi
fi

# ---- the unwinder against the kernel's
name=integration/offcpu_module_check
export BPFSYM_KORC_CHECK=1
record_cycle "$name" check && ck_ok=1 || ck_ok=0
unset BPFSYM_KORC_CHECK
if [ $ck_ok = 1 ]; then
	line=$(grep 'kernel unwinder check:' "$T/check.data.err" | tail -1)
	note "${line:-no check line}"
	set -- $(echo "$line" | sed -n 's/.*check: \([0-9]*\) the same.* (\([0-9]*\) through a module), \([0-9]*\) not; not compared: \([0-9]*\) met.*, \([0-9]*\) stopped short.*/\1 \2 \3 \4 \5/p')
	calls=$(fx_sum "$T/check.fx" 4)
	if [ $# -ne 5 ]; then
		fail "$name" "no check line from record -v: ${line:-none}"
	elif [ "$3" -ne 0 ]; then
		fail "$name" "$3 kernel stacks unwound otherwise than bpf_get_stack at the switch-out: $line"
	elif [ "$2" -lt "$calls" ]; then
		fail "$name" "$2 stacks compared through a module, fewer than the fixture's $calls waits in tun: $line"
	elif [ $(( $4 * 10 )) -ge "$calls" ]; then
		fail "$name" "$4 unwinds met a frame in no table, against the fixture's $calls waits in tun: its table was not there: $line"
	elif [ $(( ($4 + $5) * 100 )) -gt "$1" ]; then
		fail "$name" "more than 1 % of the unwinds stopped short of the kernel's end: $line"
	else
		pass "$name"
	fi
fi

lib_done
