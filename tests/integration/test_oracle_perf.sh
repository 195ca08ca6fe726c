#!/bin/sh
# bpfsym against perf on the same process in the same run.
#
# The fixture hot.c burns CPU in hot_a/hot_b/hot_c in 50/30/20 proportions
# on two threads.  perf record and bpfsym record sample it at the same time,
# both at 499 Hz on cpu-clock, and each function's share of the samples must
# agree within 5 percentage points (about 4000 samples a side: the standard
# error of a share is under 1 point).  The folded stacks must show the
# caller chain main -> run_workload -> dispatch -> hot_a.
. "$(dirname "$0")/lib.sh"
lib_init integration/perf_proportions integration/perf_call_chain

if ! command -v perf >/dev/null 2>&1; then
	skip_all "perf is not installed (the oracle)"
fi
if ! build_fixture hot hot; then
	show "$T/hot.build.log"
	skip_all "cannot build the fixture hot.c"
fi

# Two threads: one per CPU of this machine, twice the samples of one.
bg_start "$T/hot" 30 2
hot=$BG_PID
hot_ready() { [ "$(nthreads "$hot")" -ge 2 ]; }
if ! wait_until 5 hot_ready; then
	for t in $LIB_TESTS; do fail "$t" "fixture hot did not start its threads"; done
	lib_done
fi

# perf first, so that its window covers bpfsym's; stopped when bpfsym ends.
bg_start perf record -e cpu-clock -F 499 -g -p "$hot" -o "$T/perf.data" 2> "$T/perf.err"
perf=$BG_PID
wait_until 10 file_nonempty "$T/perf.data"
run_to 60 "$BPFSYM" record -p "$hot" -F 499 -d 4 -o "$T/bpfsym.data" -q 2> "$T/record.err"
rc=$?
kill -INT "$perf" 2>/dev/null
reap "$perf"
stop "$hot"

if ! record_ok integration/perf_proportions "$T/bpfsym.data" "$T/record.err" $rc ||
   ! folded integration/perf_proportions "$T/bpfsym.data" "$T/folded"; then
	fail integration/perf_call_chain "no bpfsym recording to read"
	lib_done
fi
note "bpfsym record: $(cat "$T/record.err")"

perf_leaves "$T/perf.data" > "$T/perf.leaves"
folded_leaves "$T/folded" hot > "$T/bpfsym.leaves"
ptotal=$(leaf_count "$T/perf.leaves" TOTAL)
btotal=$(leaf_count "$T/bpfsym.leaves" TOTAL)
note "samples of 'hot': perf $ptotal, bpfsym $btotal"

# ---- proportions
name=integration/perf_proportions
why=
if [ "$ptotal" -lt 1500 ]; then
	# The oracle itself failed: not bpfsym's fault, but nothing was compared.
	why="perf recorded only $ptotal samples of the fixture"
elif [ "$btotal" -lt 1500 ]; then
	# 2 threads x 499 Hz x 4 s is about 4000; 1500 is far below any
	# scheduling noise and far above what the default 99 Hz would give.
	why="bpfsym recorded only $btotal samples of the fixture at -F 499 -d 4 with 2 busy threads (expected ~4000)"
else
	for f in hot_a hot_b hot_c; do
		ps=$(pct "$(leaf_count "$T/perf.leaves" $f)" "$ptotal")
		bs=$(pct "$(leaf_count "$T/bpfsym.leaves" $f)" "$btotal")
		d=$(awk -v a="$ps" -v b="$bs" 'BEGIN { d = a - b; printf "%.1f", (d < 0) ? -d : d }')
		note "$f: perf $ps%, bpfsym $bs%, difference $d points"
		if fcmp "$ps" lt 10; then
			why="${why:+$why; }perf gives $f only $ps% (fixture broken?)"
		elif fcmp "$bs" lt 10; then
			why="${why:+$why; }bpfsym gives $f only $bs% (perf: $ps%)"
		elif fcmp "$d" gt 5; then
			why="${why:+$why; }$f: bpfsym $bs% vs perf $ps% (more than 5 points apart)"
		fi
	done
fi
if [ -n "$why" ]; then
	fail "$name" "$why"
	note "bpfsym leaves (top 10):"
	sort -k2,2nr "$T/bpfsym.leaves" | head -10 | show
	note "perf leaves (top 10):"
	sort -k2,2nr "$T/perf.leaves" | head -10 | show
else
	pass "$name"
fi

# ---- call chain
# Every hot_a sample of the main thread must read ...;main;run_workload;
# dispatch;hot_a (anything may come before main: _start,
# __libc_start_call_main...); the second thread has worker instead of main.
# A sample taken in hot_a's first instruction (before its frame is set up)
# legitimately loses dispatch, hence 90% rather than 100%.
name=integration/perf_call_chain
a=$(folded_count "$T/folded" '^hot;(.*;)?hot_a$')
main_chain=$(folded_count "$T/folded" '^hot;(.*;)?main;run_workload;dispatch;hot_a$')
worker_chain=$(folded_count "$T/folded" '^hot;(.*;)?worker;run_workload;dispatch;hot_a$')
note "hot_a samples: $a; with main;run_workload;dispatch;hot_a: $main_chain; with worker;run_workload;dispatch;hot_a: $worker_chain"
if [ "$a" -lt 200 ]; then
	fail "$name" "only $a samples end in hot_a"
elif [ $((100 * (main_chain + worker_chain))) -lt $((90 * a)) ]; then
	fail "$name" "only $((main_chain + worker_chain)) of $a hot_a stacks end in (main|worker);run_workload;dispatch;hot_a"
	note "hot_a stacks (most frequent first):"
	grep '^hot;.*hot_a [0-9]*$' "$T/folded" | sort -t' ' -k2,2nr | head -10 | show
elif [ $((100 * main_chain)) -lt $((25 * a)) ]; then
	# The main thread does half of the work.
	fail "$name" "only $main_chain of $a hot_a stacks end in main;run_workload;dispatch;hot_a"
	grep '^hot;.*hot_a [0-9]*$' "$T/folded" | sort -t' ' -k2,2nr | head -10 | show
else
	pass "$name"
fi

lib_done
