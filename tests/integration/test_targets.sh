#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Targets: -- COMMAND (with its children, stopping when it exits), -p with
# several PIDs (those and no others), -p following threads created later.
. "$(dirname "$0")/lib.sh"
lib_init integration/cmd_children integration/cmd_stops integration/pid_multi integration/pid_new_threads

for f in forker burn threads_later; do
	need_fixture $f $f
done

# ---- -- COMMAND: forker runs parent_burn and, in a forked child,
# child_burn, FORK_CPU s of CPU time each (however long that takes on a
# busy machine), then writes their CPU times and the time it exits (ms) to
# $T/end.
FORK_CPU=1
t0=$(now_ms)
run_to 180 "$BPFSYM" record -F 199 -o "$T/cmd.data" -q -- "$T/forker" $FORK_CPU "$T/end" 2> "$T/cmd.err"
rc=$?
t1=$(now_ms)
note "bpfsym record -- forker: status $rc after $((t1 - t0)) ms: $(cat "$T/cmd.err")"
# bpfsym returning early would leave the command running: wait for its end.
has_end() { grep -q '^end_ms ' "$T/end" 2>/dev/null; }
wait_until 60 has_end
end_ms=$(awk '$1 == "end_ms" { print $2 }' "$T/end" 2>/dev/null)

name=integration/cmd_stops
if [ $rc -ne 0 ]; then
	fail "$name" "bpfsym record -- COMMAND exited with status $rc"
	show "$T/cmd.err"
elif [ -z "$end_ms" ]; then
	fail "$name" "the command did not run to its end (or got wrong arguments): no end_ms in '$T/end'"
else
	lag=$((t1 - end_ms))
	note "bpfsym exited $lag ms after the command"
	# A recorder that does not notice runs until run_to kills it; 15 s
	# leave an ASan build on a crowded machine room to flush and exit.
	if [ $lag -gt 15000 ]; then
		fail "$name" "bpfsym exited $lag ms after the command (more than 15 s)"
	elif [ $lag -lt 0 ]; then
		fail "$name" "bpfsym returned $((-lag)) ms before the command ended"
	else
		pass "$name"
	fi
fi

name=integration/cmd_children
if record_ok "$name" "$T/cmd.data" "$T/cmd.err" $rc &&
   folded "$name" "$T/cmd.data" "$T/cmd.folded"; then
	folded_leaves "$T/cmd.folded" forker > "$T/cmd.leaves"
	p=$(leaf_count "$T/cmd.leaves" parent_burn)
	c=$(leaf_count "$T/cmd.leaves" child_burn)
	pcpu=$(fixture_cpu "$T/end" parent_burn)
	ccpu=$(fixture_cpu "$T/end" child_burn)
	note "forker: parent_burn $p samples for $pcpu ms of CPU, child_burn $c for $ccpu ms (~$(samples_for "$pcpu" 199) and ~$(samples_for "$ccpu" 199) at 199 Hz)"
	# Both had the same CPU time: each must have at least half of what it
	# gives; a child that is not followed has none at all.
	if cpu_enough "$name" parent_burn "$pcpu" $((FORK_CPU * 900)) &&
	   cpu_enough "$name" "child_burn (the forked child)" "$ccpu" $((FORK_CPU * 900)) &&
	   samples_ok "$name" parent_burn "$p" "$pcpu" 199 &&
	   samples_ok "$name" "child_burn (the forked child)" "$c" "$ccpu" 199; then
		pass "$name"
	else
		sort -k2,2nr "$T/cmd.leaves" | head -10 | show
	fi
fi

# ---- -p PID,PID: three copies of burn (comms pa, pb, pc), two recorded
# until those two had 1 s of CPU time between them.
for c in pa pb pc; do
	cp "$T/burn" "$T/$c"
	bg_start "$T/$c" 600
	eval "pid_$c=\$BG_PID"
done
wait_until 5 alive "$pid_pc"
name=integration/pid_multi
started=1
if ! cpu_record "$T/multi.data" 1000 "$pid_pa,$pid_pb" -p "$pid_pa,$pid_pb"; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/multi.data.err"
	started=0
fi
stop "$pid_pa"; stop "$pid_pb"; stop "$pid_pc"
set -- $REC_CPU_EACH
cpu_a=${1:-0} cpu_b=${2:-0}

if [ $started -eq 0 ]; then
	:
elif record_ok "$name" "$T/multi.data" "$T/multi.data.err" $REC_RC &&
   folded "$name" "$T/multi.data" "$T/multi.folded"; then
	a=$(folded_count "$T/multi.folded" '^pa;(.*;)?burn_inner$')
	b=$(folded_count "$T/multi.folded" '^pb;(.*;)?burn_inner$')
	c=$(folded_count "$T/multi.folded" '^pc;')
	others=$(folded_count "$T/multi.folded" '^(pa|pb);' )
	all=$(folded_count "$T/multi.folded" '.')
	note "burn_inner samples: pa $a ($cpu_a ms of CPU while recorded), pb $b ($cpu_b ms); pc (not a target) $c; stacks of other processes: $((all - others))"
	# Each target at least half of what its CPU time gives at 199 Hz; a
	# target that is not followed has none.
	if cpu_enough "$name" "pa and pb" $((cpu_a + cpu_b)) 1000 &&
	   samples_ok "$name" "pa (-p $pid_pa,$pid_pb)" "$a" "$cpu_a" 199 &&
	   samples_ok "$name" "pb (-p $pid_pa,$pid_pb)" "$b" "$cpu_b" 199; then
		if [ "$all" -ne "$others" ]; then
			fail "$name" "$((all - others)) samples of processes other than the two targets (pc: $c)"
			grep -v '^p[ab];' "$T/multi.folded" | sort -t' ' -k2,2nr | head -10 | show
		else
			pass "$name"
		fi
	else
		sort -t' ' -k2,2nr "$T/multi.folded" | head -10 | show
	fi
fi

# ---- -p follows threads created after the start: threads_later burns in
# main_burn until $T/go exists, created once the recorder samples; only
# then it starts threads, one after another, each burning 0.1 s of its CPU
# time in late_burn, until they had LATE_CPU s together.  No thread
# running late_burn existed when the recording started: without new
# threads followed, late_burn has no sample.  Both counts against the CPU
# time the fixture says each function had.
LATE_CPU=1
rm -f "$T/go" "$T/threads.cpu"
bg_start "$T/threads_later" $LATE_CPU "$T/go" "$T/threads.cpu"
tl=$BG_PID
wait_until 5 alive "$tl"
name=integration/pid_new_threads
if ! bg_record "$T/threads.data" -p "$tl"; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/threads.data.err"
	stop "$tl"
else
	: > "$T/go"
	# The fixture's ceiling for 1 s of CPU time is 50 s.
	wait_exit "$tl" 120
	reap "$tl"
	tl_rc=$REAP_RC
	# The target is gone: the recording ends by itself.
	wait_exit "$REC" 20
	end_record
	m_cpu=$(fixture_cpu "$T/threads.cpu" main_burn)
	l_cpu=$(fixture_cpu "$T/threads.cpu" late_burn)
	nthr=$(awk '$1 == "threads" { print $2 }' "$T/threads.cpu" 2>/dev/null)
	note "threads_later: status $tl_rc; ${nthr:-no} late threads, late_burn $l_cpu ms of CPU, main_burn $m_cpu ms after $T/go"
	if [ "$tl_rc" -ne 0 ] || [ ! -s "$T/threads.cpu" ]; then
		fail "$name" "threads_later exited with status $tl_rc, CPU file: '$(cat "$T/threads.cpu" 2>/dev/null)'"
	elif record_ok "$name" "$T/threads.data" "$T/threads.data.err" $REC_RC &&
	     folded "$name" "$T/threads.data" "$T/threads.folded"; then
		folded_leaves "$T/threads.folded" threads_later > "$T/threads.leaves"
		m=$(leaf_count "$T/threads.leaves" main_burn)
		l=$(leaf_count "$T/threads.leaves" late_burn)
		note "threads_later: main_burn $m samples, late_burn (threads started later) $l samples"
		if cpu_enough "$name" "late_burn" "$l_cpu" $((LATE_CPU * 900)) &&
		   samples_ok "$name" "main_burn (the main thread)" "$m" "$m_cpu" 199 &&
		   samples_ok "$name" "late_burn (threads created after the start: missing?)" "$l" "$l_cpu" 199; then
			pass "$name"
		else
			sort -k2,2nr "$T/threads.leaves" | head -10 | show
		fi
	fi
fi

lib_done
