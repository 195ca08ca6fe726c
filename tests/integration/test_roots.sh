#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Whole user stacks under -a and under -p, on whatever kernel runs the
# tests (issue 24: on Debian 12's 6.1 in tests/kernel/'s VM as on 6.18).
#
# Two processes burn CPU in call chains that never leave their roots: the
# unw_chain fixture, built with -fomit-frame-pointer (only .eh_frame says
# where each caller is), and Debian's /usr/bin/python3 running a loop (its
# eval loop's frames, no frame pointers either).  Two recordings run at
# once, `bpfsym record -a` and `bpfsym record -p CHAIN,PYTHON`, until each
# process has had ROOTS_CPU_MS of CPU time.
#
#   roots_chain_a, roots_chain_p, roots_python_a, roots_python_p
#       of that process's samples with a user frame, at least ROOTS_MIN
#       (99) % have a root frame among them (_start,
#       __libc_start_call_main, __libc_start_main), and it has at least
#       half the samples its CPU time gives at the rate.  Neither program
#       runs a frame outside main's call tree: every stack that stops short
#       of the root is the unwinder's.  The message names where the short
#       stacks end, and the report header's reasons.
. "$(dirname "$0")/lib.sh"
lib_init integration/roots_chain_a integration/roots_chain_p \
	integration/roots_python_a integration/roots_python_p

ROOTS_MIN=99
ROOTS_CPU_MS=3000
PYTHON=/usr/bin/python3
ROOTS='_start __libc_start_call_main __libc_start_main __libc_start_main_impl'

[ "$(uname -m)" = x86_64 ] || skip_all "the unwinder is x86-64 only"
[ -x "$PYTHON" ] || skip_all "Debian's $PYTHON is not installed"
need_fixture unw_chain unw_chain -fomit-frame-pointer -fasynchronous-unwind-tables

bg_start "$T/unw_chain" 600
CHAIN=$BG_PID
bg_start "$PYTHON" "$FIXTURES/py_loop.py" 600
PY=$BG_PID
started() {
	[ "$(cat "/proc/$CHAIN/comm" 2> /dev/null)" = unw_chain ] &&
		grep -q '/python3' "/proc/$PY/maps" 2> /dev/null && [ "$(cpu_ms "$PY")" -gt 50 ]
}
wait_until 20 started || fail_all "the fixtures did not start"

if ! bg_record "$T/a.data" -a; then
	fail_all "bpfsym record -a did not start: $(head -1 "$T/a.data.err")"
fi
REC_A=$REC
if ! bg_record "$T/p.data" -p "$CHAIN,$PY"; then
	REC=$REC_A
	end_record
	fail_all "bpfsym record -p did not start: $(head -1 "$T/p.data.err")"
fi
REC_P=$REC
CPU_WAIT_EACH=1
cpu_wait $ROOTS_CPU_MS "$CPU_WAIT_MAX" "$CHAIN" "$PY"
set -- $CPU_EACH
CPU_CHAIN=$1 CPU_PY=$2
REC=$REC_P
end_record
RC_P=$REC_RC
REC=$REC_A
end_record
RC_A=$REC_RC
stop "$CHAIN"
stop "$PY"
note "CPU time while both recorded: unw_chain $CPU_CHAIN ms, python3 $CPU_PY ms"

# roots FOLDED COMM: "ALL WITHUSER ROOTED ENDS": COMM's samples, those with
# a user frame, those with a root frame among them, and the 3 most frequent
# outermost user frames of the others ("name(count),...").
roots() {
	awk -v comm="$2" -v roots="$ROOTS" '
	BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
	{
		c = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != comm)
			next
		all += c
		outer = ""
		hit = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			if (outer == "")
				outer = f[i]
			if (f[i] in root)
				hit = 1
		}
		if (outer == "")
			next
		user += c
		if (hit)
			rooted += c
		else
			end[outer] += c
	}
	END {
		s = ""
		for (j = 0; j < 3; j++) {
			best = ""
			for (e in end)
				if (best == "" || end[e] > end[best])
					best = e
			if (best == "")
				break
			s = s (s == "" ? "" : ",") best "(" end[best] ")"
			delete end[best]
		}
		print all + 0, user + 0, rooted + 0, s
	}' "$1"
}

# judge NAME DATA RC COMM CPU_MS
judge() {
	record_ok "$1" "$2" "$2.err" "$3" || return
	[ -s "$2.folded" ] || folded "$1" "$2" "$2.folded" || return
	header=$(run_to 60 "$BPFSYM" report "$2" --limit 1 2> /dev/null | grep '^# user stacks ended:')
	set -- "$1" "$4" "$5" $(roots "$2.folded" "$4")
	name=$1 comm=$2 cpu=$3 all=$4 user=$5 rooted=$6 ends=${7:-}
	note "$name: $comm: $all samples, $user with a user frame, $rooted reaching the root ($(pct "$rooted" "$user")%); short ones end in: ${ends:-none}; $header"
	if ! samples_ok "$name" "$comm" "$all" "$cpu" "$REC_FREQ"; then
		:
	elif [ "$user" -eq 0 ] || [ $((100 * rooted)) -lt $((ROOTS_MIN * user)) ]; then
		fail "$name" "$rooted of $user samples of $comm with a user frame reach the root ($ROOTS_MIN% wanted); the others end in ${ends:-?}"
	else
		pass "$name"
	fi
}

judge integration/roots_chain_a "$T/a.data" "$RC_A" unw_chain "$CPU_CHAIN"
judge integration/roots_python_a "$T/a.data" "$RC_A" python3 "$CPU_PY"
judge integration/roots_chain_p "$T/p.data" "$RC_P" unw_chain "$CPU_CHAIN"
judge integration/roots_python_p "$T/p.data" "$RC_P" python3 "$CPU_PY"
lib_done
