#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Off-CPU time (issue 28): `bpfsym record --off-cpu` against the clocks of
# the threads that waited (tests/fixtures/offcpu.c) and against a bpftrace
# program on the same tracepoint in the same run (tests/fixtures/offcpu.bt).
#
# The fixture makes and names its threads, then waits for SIGUSR1: the
# recorders attach to the named threads, then it runs SECS seconds and
# writes, per blocking function and thread, the time inside its calls that
# the thread was not running (wall time around each call minus the thread's
# CPU time over it: nothing to do with rates, so it holds under load), and
# per thread its wall and CPU time from the go to its end.  Every interval
# the recorders see begins and ends within that span.
#
#   offcpu_sleep, offcpu_pipe, offcpu_mutex, offcpu_odirect
#       one recording, `record --off-cpu -F 999 -p PID` of all four kinds
#       of waits (bpftrace beside it): `report --off-cpu --folded` has
#       within 5 % of the fixture's time in sleep_nap (nanosleep), pipe_wait
#       (a pipe read), mutex_wait (a contended pthread mutex) in [sleeping],
#       and in disk_read (O_DIRECT preads) in [disk].  O_DIRECT needs a
#       directory whose file system reads from the device: $T, else a
#       directory made under /var/tmp; tmpfs serves it from memory (the
#       fixture's -P probe), and with no such directory offcpu_odirect and
#       offcpu_state_d SKIP.
#   offcpu_burn_samples
#       the same recording's CPU samples (`report --folded`) through
#       sleep_burn in off_sleep: at least want_samples of its CPU time at
#       999 Hz, at most 1.5 times what that CPU time gives.
#   offcpu_bpftrace_clock
#       the oracle checked against the clock: bpftrace's off-CPU time per
#       thread within 5 % of the thread's wall minus CPU time, and its S and
#       D time of each thread within 5 % of the fixture's functions that
#       wait in that state.  Runs without bpfsym's off-CPU recording.
#   offcpu_bpftrace_totals, offcpu_bpftrace_stacks
#       bpfsym against bpftrace: per thread the off-CPU totals within 5 %;
#       the thread's top kernel stack (frames from the root to the one
#       before __schedule, bpftrace's offsets dropped) the same, and its
#       time within 5 %.
#   offcpu_wall
#       `report --wall --folded` of the recording: per thread, CPU samples
#       (1e9/999 ns each) plus off-CPU time within 5 % of the thread's wall
#       time from the go to its end.
#   offcpu_pprof
#       `report --pprof` of the recording read by go tool pprof
#       -sample_index=off_cpu: each blocking function's cum time within 5 %
#       of the fixture's, and the profile carries a "state" label.
#   offcpu_state_d
#       `record --off-cpu --off-cpu-state=D -a` while the fixture runs: every
#       off-CPU line is [disk], disk_read's time within 5 % of the fixture's,
#       sleep_nap (a nanosleep: S) has none.
#   offcpu_thresh
#       `record --off-cpu --off-cpu-thresh=10ms`: sleep_nap, holder_nap,
#       mutex_wait (70, 50, ~45 ms waits), mutex_gap and holder_gap (5 and
#       2 ms) each within 5 % (of the function's time) of the fixture's time
#       in its calls off the CPU 10 ms or more (-t); the header counts the
#       dropped intervals, at least the fixture's 5 and 2 ms calls under
#       10 ms.
#   offcpu_command
#       `record --off-cpu -- offcpu 3 sleep,pipe` (no go signal: the whole
#       life): each thread's off-CPU time, all stacks, within 5 % of its
#       wall minus CPU time (its first waits' stacks may stop short: the
#       tables are not built yet)
#   offcpu_cgroup
#       `record --off-cpu -G CGROUP` with the fixture in a cgroup of the
#       test's and a second one outside it: the inside one's sleep_nap and
#       pipe_wait within 5 %, nothing of the outside one.
#   offcpu_twins
#       `record -v --off-cpu -p` of the fixture's twins: twin_a and twin_b
#       wait in one function called from the same depth, so the thread
#       leaves the CPU with the same registers in both and only the return
#       address on its stack differs.  Each within 5 % of the fixture's
#       time, and -v says switch-outs kept their user side from the last
#       (a thread blocking where it blocked lately is not walked again:
#       its stack words are checked, and these twins are what the check
#       must tell apart).
#   offcpu_korc_check
#       `record --off-cpu -a -v` with BPFSYM_KORC_CHECK=1 while the fixture
#       runs: at each switch-in the kernel unwinder (bpf/korc.bpf.h) unwinds
#       the task's saved stack, and its frames but the first must be
#       bpf_get_stack's at that task's switch-out, the kernel's own
#       unwinder in the same run: none otherwise, at least as many compared
#       as the fixture's waits, at most 1 % not compared (a frame in no
#       table, a stop short of the end).  SKIP on a kernel without ORC
#       tables in kallsyms.
#   offcpu_fallback
#       the first recording again with BPFSYM_FORCE_FALLBACK=all (the 6.1
#       path on this kernel): the four functions within 5 %.
#
# What the bpfsym side assumes of the feature (issue 28's contract, written
# before it landed): folded lines begin with the thread's comm, as CPU
# samples' do; an interval runs from the switch-out to the switch-in (so
# the wait on the run queue after a wake-up counts, under the switch-out's
# state, as bcc's offcputime and perf count it); the `report --header-only`
# line about --off-cpu-thresh has the count of dropped intervals next to a
# word with "short" in it (hdr_dropped).
#
# The fixture's OFF_NS carries the tracers' own time at each switch-in as
# CPU time (the scheduler starts the thread's clock before the tracepoint),
# ~20 us a switch each here: the waits are milliseconds long, so that stays
# under 1 %.
. "$(dirname "$0")/lib.sh"
lib_init integration/offcpu_sleep integration/offcpu_pipe integration/offcpu_mutex \
	integration/offcpu_odirect integration/offcpu_burn_samples integration/offcpu_bpftrace_clock \
	integration/offcpu_bpftrace_totals integration/offcpu_bpftrace_stacks integration/offcpu_wall \
	integration/offcpu_pprof integration/offcpu_state_d integration/offcpu_thresh \
	integration/offcpu_command integration/offcpu_cgroup integration/offcpu_twins \
	integration/offcpu_korc_check integration/offcpu_fallback

need_fixture offcpu offcpu
SECS=4		# the fixture's run after the go
TOL=5		# per cent
FREQ=999

# ---- where O_DIRECT reads reach the device: $T, else a directory of our
# own under /var/tmp (removed by the clean-up).
ODIR= OWN_ODIR= ODIR_WHY=
for d in "$T" /var/tmp; do
	[ -d "$d" ] || continue
	if [ "$d" != "$T" ]; then
		d=$(mktemp -d "$d/bpfsym-offcpu.XXXXXX" 2>/dev/null) || continue
		OWN_ODIR=$d
	fi
	"$T/offcpu" -P "$d" 2> "$T/probe.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		ODIR=$d
		break
	fi
	ODIR_WHY="${ODIR_WHY:+$ODIR_WHY; }$(head -1 "$T/probe.err")"
done
if [ -n "$ODIR" ]; then
	MODES=all
	note "O_DIRECT reads in $ODIR ($(stat -f -c %T "$ODIR"))"
else
	MODES=sleep,pipe,mutex
	note "no directory reads O_DIRECT from a device: $ODIR_WHY"
fi

CG=
offcpu_cleanup() {
	[ -n "$OWN_ODIR" ] && rm -rf "$OWN_ODIR"
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	n=0
	while ! rmdir "$CG" 2>/dev/null && [ $n -lt 50 ]; do
		for q in $(cat "$CG/cgroup.procs" 2>/dev/null); do
			kill -KILL "$q" 2>/dev/null
		done
		sleep 0.1
		n=$((n + 1))
	done
	[ -d "$CG" ] && echo "# could not remove $CG"
}
LIB_CLEANUP=offcpu_cleanup

# ---- the fixture

# fx_start OUT MODES: start the fixture waiting for its go (-w), results
# to OUT, with $FX_ARGS when set; $FX its pid once its threads are named.
# False when it did not get there.
fx_start() {
	bg_start "$T/offcpu" -w ${FX_ARGS:-} -D "${ODIR:-.}" -o "$1" "$SECS" "$2" > "$1.ready" 2> "$1.err"
	FX=$BG_PID
	wait_until 30 fx_ready "$1.ready" && grep -q "^ready $FX\$" "$1.ready"
}
fx_ready() {
	grep -q '^ready' "$1" || ! alive "$FX"
}

# fx_finish PID OUT: let it wait for its go no more, reap it; false (with
# what it said) when it did not end well.
fx_finish() {
	kill -USR1 "$1" 2>/dev/null
	reap "$1"
	if [ "$REAP_RC" -ne 0 ] || ! grep -q '^end_ms' "$2"; then
		FX_WHY="the fixture ended with status $REAP_RC: $(tail -1 "$2.err")"
		return 1
	fi
	return 0
}

# fx_off OUT FUNC: the fixture's OFF_NS of FUNC, every thread.
fx_off() {
	awk -v f="$2" '$1 == f && NF == 5 { s += $3 } END { printf "%.0f\n", s }' "$1"
}

# fx_ge OUT FUNC: OFF_NS and CALLS of FUNC's calls off the CPU at least
# the fixture's -t NS (its "ge" lines), every thread.
fx_ge() {
	awk -v f="$2" '$1 == "ge" && $2 == f { s += $4; c += $5 } END { printf "%.0f %.0f\n", s, c }' "$1"
}

# fx_calls OUT FUNC: the fixture's CALLS of FUNC, every thread.
fx_calls() {
	awk -v f="$2" '$1 == f && NF == 5 { s += $4 } END { printf "%.0f\n", s }' "$1"
}

# fx_field OUT KEY NAME N: field N of the line "KEY NAME ...".
fx_field() {
	awk -v k="$2" -v n="$3" -v i="$4" '$1 == k && $2 == n { print $i; exit }' "$1"
}

# ---- comparisons

# within GOT WANT: |GOT - WANT| <= TOL % of WANT (WANT > 0).
within() {
	awk -v a="$1" -v b="$2" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * t / 100) }'
}

# dev GOT WANT: the difference in per cent of WANT, signed.
dev() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (b > 0) ? 100 * (a - b) / b : 0 }'
}

# ns_us NS: to microseconds (the folded unit).
ns_us() {
	awk -v n="$1" 'BEGIN { printf "%.0f\n", n / 1000 }'
}

# off_us FOLDED COMM FUNC [STATE]: microseconds of the off-CPU lines
# ("COMM;ROOT;...;LEAF;[state] US") of thread COMM (any when empty) with
# the frame FUNC (any when empty) and, when given, the pseudo frame STATE.
off_us() {
	awk -v comm="$2" -v fn="$3" -v st="${4:-}" '
	{
		n = $NF
		k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
		if (comm != "" && f[1] != comm)
			next
		if (st != "" && f[k] != st)
			next
		hit = (fn == "")
		for (i = 2; i < k && !hit; i++)
			hit = (f[i] == fn)
		if (hit)
			s += n
	}
	END { printf "%.0f\n", s }' "$1"
}

# report_to NAME DATA OUT ARGS...: `bpfsym report DATA ARGS > OUT`; FAIL
# NAME and false when it fails.
report_to() {
	rt_name=$1 rt_data=$2 rt_out=$3
	shift 3
	run_to 60 "$BPFSYM" report "$rt_data" "$@" > "$rt_out" 2> "$rt_out.err"
	rt_rc=$?
	if [ $rt_rc -ne 0 ]; then
		fail "$rt_name" "bpfsym report $* exited with status $rt_rc: $(tail -1 "$rt_out.err")"
		return 1
	fi
	return 0
}

# check_fn NAME FOLDED FXOUT COMM FUNC STATE: FUNC's off-CPU time in
# thread COMM, in STATE, within TOL % of the fixture's; a note with the
# time in the other states.  Sets CHECK_WHY, true when it holds.
check_fn() {
	cf_want=$(ns_us "$(fx_off "$3" "$5")")
	cf_got=$(off_us "$2" "$4" "$5" "$6")
	cf_all=$(off_us "$2" "$4" "$5")
	note "$1: $5 in $4: $cf_got us in $6 ($(dev "$cf_got" "$cf_want")), $((cf_all - cf_got)) us in other states; the fixture's clock: $cf_want us"
	CHECK_WHY=
	if [ "$cf_want" -le 0 ]; then
		CHECK_WHY="the fixture measured no time in $5"
	elif ! within "$cf_got" "$cf_want"; then
		CHECK_WHY="$5 in $4: $cf_got us off the CPU in $6 ($((cf_all - cf_got)) us in other states), the fixture measured $cf_want us ($(dev "$cf_got" "$cf_want"), more than $TOL %)"
	fi
	[ -z "$CHECK_WHY" ]
}

# The four waits: test, thread, function, state frame.
WAITS="offcpu_sleep:off_sleep:sleep_nap:[sleeping]
offcpu_pipe:off_pipe:pipe_wait:[sleeping]
offcpu_mutex:off_mutex:mutex_wait:[sleeping]
offcpu_odirect:off_disk:disk_read:[disk]"

# ---- bpftrace (tests/fixtures/offcpu.bt)

BT_WHY=
if ! command -v bpftrace > /dev/null 2>&1; then
	BT_WHY="bpftrace is not installed (Debian's bpftrace: the oracle)"
fi

# bt_start OUT PID: start the program on process PID; $BT its pid, true
# once it is attached (BEGIN runs after the probes are).
bt_start() {
	bg_start bpftrace -B line -e "BEGIN { printf(\"attached\\n\"); } $(cat "$FIXTURES/offcpu.bt")" \
		"$2" > "$1" 2> "$1.err"
	BT=$BG_PID
	wait_until 60 bt_ready "$1" && grep -q '^attached' "$1"
}
bt_ready() {
	grep -q '^attached' "$1" || ! alive "$BT"
}

# bt_stop OUT: SIGINT it (it prints its map) and reap it.
bt_stop() {
	kill -INT "$BT" 2>/dev/null
	reap "$BT"
}

# bt_rows OUT: bpftrace's @off entries as "COMM TID STATE NS STACK", STACK
# the kernel frames from the root, ';'-separated, offsets dropped.
bt_rows() {
	awk '
	/^@off\[$/ { inkey = 1; k = ""; next }
	inkey && /^, / {
		# ", COMM, TID, STATE]: NS"
		split(substr($0, 3), a, ", ")
		v = a[3]
		sub(/\]:.*/, "", a[3])
		sub(/.*\]: */, "", v)
		print a[1], a[2], a[3], v, (k == "") ? "-" : k
		inkey = 0
		next
	}
	inkey {
		fr = $1
		sub(/\+[0-9]+$/, "", fr)
		k = (k == "") ? fr : fr ";" k
	}' "$1"
}

# norm_stack: the kernel frames of a stack ("A;B;C", root first) from the
# root to the one before __schedule (what the tracers add above it is not
# the wait); unchanged without __schedule.  Reads and writes one per line.
NORM_AWK='
function norm(s,    n, f, i, o) {
	n = split(s, f, ";")
	o = ""
	for (i = 1; i <= n; i++) {
		if (f[i] == "__schedule")
			break
		o = (o == "") ? f[i] : o ";" f[i]
	}
	return (o == "") ? "-" : o
}'

# bt_threads ROWS: "COMM TOTAL_NS S_NS D_NS TOPSTACK TOPSTACK_NS" per comm.
bt_threads() {
	awk "$NORM_AWK"'
	{
		tot[$1] += $4
		if ($3 == 1) s[$1] += $4
		if ($3 == 2) d[$1] += $4
		st = norm($5)
		by[$1 " " st] += $4
	}
	END {
		for (x in by) {
			split(x, p, " ")
			if (by[x] > top[p[1]]) { top[p[1]] = by[x]; tops[p[1]] = p[2] }
		}
		for (c in tot)
			printf "%s %.0f %.0f %.0f %s %.0f\n", c, tot[c], s[c], d[c], tops[c], top[c]
	}' "$1"
}

# bs_threads FOLDED: the same from bpfsym's off-CPU folded lines ("COMM
# TOTAL_US - - TOPSTACK TOPSTACK_US"): kernel frames end in _[k].
bs_threads() {
	awk "$NORM_AWK"'
	{
		n = $NF
		k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
		ks = ""
		for (i = 2; i <= k; i++)
			if (f[i] ~ /_\[k\]$/) {
				fr = substr(f[i], 1, length(f[i]) - 4)
				ks = (ks == "") ? fr : ks ";" fr
			}
		tot[f[1]] += n
		by[f[1] " " norm(ks)] += n
	}
	END {
		for (x in by) {
			split(x, p, " ")
			if (by[x] > top[p[1]]) { top[p[1]] = by[x]; tops[p[1]] = p[2] }
		}
		for (c in tot)
			printf "%s %.0f - - %s %.0f\n", c, tot[c], tops[c], top[c]
	}' "$1"
}

# ---- the first recording: -p, every kind of wait, bpftrace beside it.
# Threads and what they wait on, S and D (for offcpu_bpftrace_clock).
THREADS="off_sleep:sleep_nap:
off_pipe:pipe_wait:
off_writer:writer_nap:
off_mutex:mutex_wait,mutex_gap:
off_holder:holder_nap,holder_gap:
off_disk:disk_pause:disk_read"

REC_FREQ=$FREQ
REC_WHY=
BT_RAN=0
if ! fx_start "$T/main.fx" "$MODES"; then
	fail_all "the fixture did not start: $(tail -1 "$T/main.fx.err")"
fi
if ! bg_record "$T/main.data" --off-cpu -p "$FX"; then
	REC_WHY="bpfsym record --off-cpu -p did not start: $(tail -1 "$T/main.data.err")"
fi
if [ -z "$BT_WHY" ]; then
	if bt_start "$T/main.bt" "$FX"; then
		BT_RAN=1
	else
		BT_WHY="bpftrace did not attach: $(grep -v RLIMIT_MEMLOCK "$T/main.bt.err" | tail -1)"
		bt_stop
	fi
fi
sleep 0.5	# both attached: the go
fx_ok=1
fx_finish "$FX" "$T/main.fx" || fx_ok=0
[ -n "$REC_WHY" ] || end_record
[ "$BT_RAN" = 1 ] && bt_stop
if [ $fx_ok = 0 ]; then
	fail_all "$FX_WHY"
fi
if [ -z "$REC_WHY" ]; then
	note "bpfsym record --off-cpu -p: status $REC_RC: $(tail -1 "$T/main.data.err")"
	if [ "$REC_RC" -ne 0 ]; then
		REC_WHY="bpfsym record --off-cpu -p exited with status $REC_RC: $(tail -1 "$T/main.data.err")"
	elif ! report_to integration/offcpu_sleep "$T/main.data" "$T/main.off" --off-cpu --folded; then
		REC_WHY="bpfsym report --off-cpu --folded failed: $(tail -1 "$T/main.off.err")"
	fi
fi

# ---- the four waits
printf '%s\n' "$WAITS" | while IFS=: read -r t comm fn st; do
	name=integration/$t
	if [ "$t" = offcpu_odirect ] && [ -z "$ODIR" ]; then
		skip "$name" "no directory here reads O_DIRECT from a device: $ODIR_WHY"
	elif [ -n "$REC_WHY" ]; then
		fail "$name" "$REC_WHY"
	elif check_fn "$name" "$T/main.off" "$T/main.fx" "$comm" "$fn" "$st"; then
		pass "$name"
	else
		fail "$name" "$CHECK_WHY"
		grep "^$comm;" "$T/main.off" | sort -t' ' -k2,2nr | head -5 | show
	fi
done

# ---- CPU samples of the burning function
name=integration/offcpu_burn_samples
if [ -n "$REC_WHY" ]; then
	fail "$name" "$REC_WHY"
elif folded "$name" "$T/main.data" "$T/main.cpu"; then
	cpu_ms=$(awk '$1 == "cpu" && $2 == "sleep_burn" { printf "%d\n", $4 / 1e6 }' "$T/main.fx")
	got=$(fn_count "$T/main.cpu" off_sleep sleep_burn)
	max=$(awk -v c="$cpu_ms" -v f="$FREQ" 'BEGIN { printf "%d\n", 1.5 * c * f / 1000 }')
	note "sleep_burn: $got CPU samples for its $cpu_ms ms of CPU time (~$(samples_for "$cpu_ms" $FREQ) at $FREQ Hz)"
	if ! samples_ok "$name" "sleep_burn in off_sleep" "$got" "$cpu_ms" $FREQ; then
		:
	elif [ "$got" -gt "$max" ]; then
		fail "$name" "sleep_burn: $got CPU samples, more than 1.5 times the $(samples_for "$cpu_ms" $FREQ) its $cpu_ms ms of CPU time give at $FREQ Hz (off-CPU time counted as CPU?)"
	else
		pass "$name"
	fi
fi

# ---- bpftrace against the fixture's clock (the oracle's own check)
name=integration/offcpu_bpftrace_clock
if [ "$BT_RAN" = 0 ]; then
	skip "$name" "$BT_WHY"
else
	bt_rows "$T/main.bt" > "$T/main.bt.rows"
	bt_threads "$T/main.bt.rows" > "$T/main.bt.threads"
	why=
	for x in $THREADS; do
		comm=${x%%:*} rest=${x#*:}
		sfn=${rest%%:*} dfn=${rest#*:}
		wall=$(fx_field "$T/main.fx" thread "$comm" 4)
		[ -n "$wall" ] || continue	# not in this run's modes
		cpu=$(fx_field "$T/main.fx" thread "$comm" 5)
		want=$((wall - cpu))
		set -- $(awk -v c="$comm" '$1 == c { print $2, $3, $4 }' "$T/main.bt.threads") 0 0 0
		ws=0
		for f in $(echo "$sfn" | tr , ' '); do ws=$((ws + $(fx_off "$T/main.fx" "$f"))); done
		wd=0
		for f in $(echo "$dfn" | tr , ' '); do wd=$((wd + $(fx_off "$T/main.fx" "$f"))); done
		note "bpftrace $comm: off $1 ns ($(dev "$1" "$want") from wall - CPU $want), S $2 ns ($(dev "$2" "$ws") from $sfn)${dfn:+, D $3 ns ($(dev "$3" "$wd") from $dfn)}"
		within "$1" "$want" || why="${why:+$why; }$comm: $1 ns off the CPU, the thread's clocks $want ns ($(dev "$1" "$want"))"
		within "$2" "$ws" || why="${why:+$why; }$comm: $2 ns in S, its $sfn $ws ns ($(dev "$2" "$ws"))"
		[ -z "$dfn" ] || within "$3" "$wd" || why="${why:+$why; }$comm: $3 ns in D, its $dfn $wd ns ($(dev "$3" "$wd"))"
	done
	if [ ! -s "$T/main.bt.threads" ]; then
		fail "$name" "bpftrace printed no off-CPU time"
		show "$T/main.bt.err"
	elif [ -n "$why" ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
fi

# ---- bpfsym against bpftrace
if [ "$BT_RAN" = 0 ]; then
	skip integration/offcpu_bpftrace_totals "$BT_WHY"
	skip integration/offcpu_bpftrace_stacks "$BT_WHY"
elif [ -n "$REC_WHY" ]; then
	fail integration/offcpu_bpftrace_totals "$REC_WHY"
	fail integration/offcpu_bpftrace_stacks "$REC_WHY"
else
	bs_threads "$T/main.off" > "$T/main.bs.threads"
	twhy= swhy=
	for x in $THREADS; do
		comm=${x%%:*}
		[ -n "$(fx_field "$T/main.fx" thread "$comm" 3)" ] || continue
		set -- $(awk -v c="$comm" '$1 == c { print $2, $5, $6 }' "$T/main.bt.threads") - - -
		bt_tot=$(ns_us "$1") bt_top=$2 bt_topus=$(ns_us "$3")
		set -- $(awk -v c="$comm" '$1 == c { print $2, $5, $6 }' "$T/main.bs.threads") 0 - 0
		note "$comm: bpfsym $1 us off the CPU, bpftrace $bt_tot us ($(dev "$1" "$bt_tot")); top kernel stacks: bpfsym $2 ($3 us), bpftrace $bt_top ($bt_topus us)"
		within "$1" "$bt_tot" || twhy="${twhy:+$twhy; }$comm: bpfsym $1 us, bpftrace $bt_tot us ($(dev "$1" "$bt_tot"))"
		if [ "$2" != "$bt_top" ]; then
			swhy="${swhy:+$swhy; }$comm: bpfsym's top kernel stack $2, bpftrace's $bt_top"
		elif ! within "$3" "$bt_topus"; then
			swhy="${swhy:+$swhy; }$comm: $2: bpfsym $3 us, bpftrace $bt_topus us ($(dev "$3" "$bt_topus"))"
		fi
	done
	if [ -n "$twhy" ]; then fail integration/offcpu_bpftrace_totals "$twhy"; else pass integration/offcpu_bpftrace_totals; fi
	if [ -n "$swhy" ]; then fail integration/offcpu_bpftrace_stacks "$swhy"; else pass integration/offcpu_bpftrace_stacks; fi
fi

# ---- --wall: CPU samples plus off-CPU time, per thread
name=integration/offcpu_wall
if [ -n "$REC_WHY" ]; then
	fail "$name" "$REC_WHY"
elif report_to "$name" "$T/main.data" "$T/main.wall" --wall --folded; then
	why=
	for x in $THREADS; do
		comm=${x%%:*}
		wall=$(fx_field "$T/main.fx" thread "$comm" 4)
		[ -n "$wall" ] || continue
		cpu=$(fx_field "$T/main.fx" thread "$comm" 5)
		want=$(ns_us "$wall")
		got=$(awk -v c="$comm" '{ split($0, f, ";") } f[1] == c { s += $NF } END { printf "%.0f\n", s }' "$T/main.wall")
		off=$(off_us "$T/main.off" "$comm" "")
		note "--wall $comm: $got us ($(dev "$got" "$want")); its clock: wall $want us, CPU $(ns_us "$cpu") us; --off-cpu $off us"
		within "$got" "$want" || why="${why:+$why; }$comm: $got us, its wall time $want us ($(dev "$got" "$want"))"
	done
	if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
fi

# ---- pprof: off_cpu/nanoseconds per function
name=integration/offcpu_pprof
if ! command -v go > /dev/null 2>&1; then
	skip "$name" "go is not installed (golang-go: go tool pprof is the oracle)"
elif [ -n "$REC_WHY" ]; then
	fail "$name" "$REC_WHY"
elif report_to "$name" "$T/main.data" "$T/main.report" --pprof "$T/main.pb.gz"; then
	# pprof offline and self-contained (test_pprof.sh).
	pprof() {
		env HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off \
			GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin" \
			timeout -k 5 60 go tool pprof "$@" 2> "$T/pprof.err"
	}
	if ! pprof -top -cum -nodecount=10000 -nodefraction=0 -edgefraction=0 -sample_index=off_cpu -unit=us "$T/main.pb.gz" > "$T/main.top"; then
		fail "$name" "go tool pprof -sample_index=off_cpu failed: $(head -1 "$T/pprof.err")"
	elif ! pprof -tags -sample_index=off_cpu "$T/main.pb.gz" > "$T/main.tags"; then
		fail "$name" "go tool pprof -tags failed: $(head -1 "$T/pprof.err")"
	else
		why=
		printf '%s\n' "$WAITS" > "$T/waits"
		while IFS=: read -r t comm fn st; do
			[ "$t" = offcpu_odirect ] && [ -z "$ODIR" ] && continue
			want=$(ns_us "$(fx_off "$T/main.fx" "$fn")")
			# "FLAT FLAT% SUM% CUM CUM% NAME", CUM in us (-unit=us).
			got=$(awk -v f="$fn" 'rows && $6 == f { v = $4; sub(/us$/, "", v); printf "%.0f\n", v } $1 == "flat" { rows = 1 }' "$T/main.top")
			note "pprof off_cpu: $fn cum ${got:-none} us ($(dev "${got:-0}" "$want")), the fixture's $want us"
			within "${got:-0}" "$want" || why="${why:+$why; }$fn: pprof cum ${got:-none} us off the CPU, the fixture $want us"
		done < "$T/waits"
		grep -q 'state:' "$T/main.tags" || why="${why:+$why; }no 'state' label (pprof -tags)"
		if [ -n "$why" ]; then
			fail "$name" "$why"
			show "$T/main.top"
		else
			pass "$name"
		fi
	fi
fi

# ---- the other recordings

# rec_run NAME TAG MODES RECORD_ARGS...: the fixture (MODES) started, then
# `bpfsym record --off-cpu -F FREQ ARGS -o $T/TAG.data` (ARGS may name
# $FX as @FX), the go, the end; `report --off-cpu --folded` into
# $T/TAG.off.  The fixture's results in $T/TAG.fx.  False (NAME failed)
# when any step did.
rec_run() {
	rr_name=$1 rr_tag=$2 rr_modes=$3
	shift 3
	if ! fx_start "$T/$rr_tag.fx" "$rr_modes"; then
		fail "$rr_name" "the fixture did not start: $(tail -1 "$T/$rr_tag.fx.err")"
		return 1
	fi
	rr_fx=$FX
	rr_args=
	for a in "$@"; do
		[ "$a" = @FX ] && a=$rr_fx
		rr_args="$rr_args $a"
	done
	if ! bg_record "$T/$rr_tag.data" --off-cpu $rr_args; then
		fail "$rr_name" "bpfsym record --off-cpu$rr_args did not start: $(tail -1 "$T/$rr_tag.data.err")"
		stop "$rr_fx"
		return 1
	fi
	sleep 0.5
	if ! fx_finish "$rr_fx" "$T/$rr_tag.fx"; then
		end_record
		fail "$rr_name" "$FX_WHY"
		return 1
	fi
	end_record
	note "bpfsym record --off-cpu$rr_args: status $REC_RC: $(tail -1 "$T/$rr_tag.data.err")"
	if [ "$REC_RC" -ne 0 ]; then
		fail "$rr_name" "bpfsym record --off-cpu$rr_args exited with status $REC_RC: $(tail -1 "$T/$rr_tag.data.err")"
		return 1
	fi
	report_to "$rr_name" "$T/$rr_tag.data" "$T/$rr_tag.off" --off-cpu --folded
}

# check_fns NAME TAG COMM:FUNC:STATE...: check_fn of each; PASS or FAIL NAME.
check_fns() {
	cs_name=$1 cs_tag=$2
	shift 2
	cs_why=
	for x in "$@"; do
		IFS=: read -r comm fn st <<-EOF
		$x
		EOF
		check_fn "$cs_name" "$T/$cs_tag.off" "$T/$cs_tag.fx" "$comm" "$fn" "$st" ||
			cs_why="${cs_why:+$cs_why; }$CHECK_WHY"
	done
	if [ -n "$cs_why" ]; then
		fail "$cs_name" "$cs_why"
		sort -t' ' -k2,2nr "$T/$cs_tag.off" | head -8 | show
	else
		pass "$cs_name"
	fi
}

# ---- -a --off-cpu-state=D: only the waits in D
name=integration/offcpu_state_d
if [ -z "$ODIR" ]; then
	skip "$name" "no directory here reads O_DIRECT from a device: $ODIR_WHY"
elif rec_run "$name" stated "$MODES" -a --off-cpu-state=D; then
	others=$(awk '{ k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";"); if (f[k] != "[disk]") s += $NF } END { printf "%.0f\n", s }' "$T/stated.off")
	sleepers=$(off_us "$T/stated.off" off_sleep sleep_nap)
	note "-a --off-cpu-state=D: $(off_us "$T/stated.off" "" "") us off the CPU in all, $others us of it not [disk], sleep_nap $sleepers us"
	if [ "$others" -ne 0 ]; then
		fail "$name" "$others us off the CPU in other states than [disk]"
		awk '{ k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";"); if (f[k] != "[disk]") print }' "$T/stated.off" | sort -t' ' -k2,2nr | head -5 | show
	elif [ "$sleepers" -ne 0 ]; then
		fail "$name" "sleep_nap, a nanosleep (S), has $sleepers us in [disk]"
	else
		check_fns "$name" stated "off_disk:disk_read:[disk]"
	fi
fi

# ---- --off-cpu-thresh=10ms
# hdr_dropped HEADER: the count of intervals dropped as short, from the
# report's "# off-CPU: ...; dropped as short: N intervals (S s); ..." line.
hdr_dropped() {
	awk 'match($0, /dropped as short: *[0-9]+/) {
		s = substr($0, RSTART, RLENGTH)
		sub(/.*[^0-9]/, "", s)
		print s
		exit
	}' "$1"
}
name=integration/offcpu_thresh
# The fixture says which of its calls were off the CPU 10 ms or more
# (-t): what the threshold keeps of each function.  The 5 and 2 ms waits
# are mostly dropped, but not all: on a busy machine a 5 ms nanosleep can
# wait 5 ms more for a CPU.
FX_ARGS="-t 10000000"
if rec_run "$name" thresh sleep,mutex -p @FX --off-cpu-thresh=10ms &&
   report_to "$name" "$T/thresh.data" "$T/thresh.hdr" --off-cpu --header-only; then
	why= short=0
	for x in off_sleep:sleep_nap:70 off_holder:holder_nap:50 off_mutex:mutex_wait:45 \
		 off_mutex:mutex_gap:5 off_holder:holder_gap:2; do
		IFS=: read -r comm fn ms <<-EOF
		$x
		EOF
		set -- $(fx_ge "$T/thresh.fx" "$fn")
		want=$(ns_us "$1") all=$(fx_off "$T/thresh.fx" "$fn")
		[ "$ms" -lt 10 ] && short=$((short + $(fx_calls "$T/thresh.fx" "$fn") - $2))
		got=$(off_us "$T/thresh.off" "$comm" "$fn")
		note "--off-cpu-thresh=10ms: $fn (${ms} ms waits): $got us kept; the fixture: $want us in its $2 calls of 10 ms or more, of $(ns_us "$all") us"
		# Within TOL % of the function's whole time (a wait at the
		# threshold may fall either side of it).
		awk -v a="$got" -v b="$want" -v w="$(ns_us "$all")" -v t="$TOL" \
			'BEGIN { d = a - b; if (d < 0) d = -d; exit !(w > 0 && d <= w * t / 100) }' ||
			why="${why:+$why; }$fn (${ms} ms waits): $got us kept, the fixture's calls of 10 ms or more $want us (of $(ns_us "$all") us)"
	done
	dropped=$(hdr_dropped "$T/thresh.hdr")
	note "--off-cpu-thresh=10ms: the header counts ${dropped:-no} intervals dropped as short; the fixture's 5 and 2 ms waits: $short calls under 10 ms"
	if [ -z "$dropped" ]; then
		why="${why:+$why; }the report header does not count intervals dropped as short"
		show "$T/thresh.hdr"
	elif [ "$dropped" -lt "$short" ]; then
		why="${why:+$why; }the header counts $dropped intervals dropped as short, fewer than the fixture's $short calls of 5 and 2 ms under 10 ms"
		show "$T/thresh.hdr"
	fi
	if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
fi
FX_ARGS=

# ---- -- COMMAND: the whole life of the fixture
name=integration/offcpu_command
rm -f "$T/cmd.data"
run_to 60 "$BPFSYM" record -q --off-cpu -F $FREQ -o "$T/cmd.data" -- \
	"$T/offcpu" -o "$T/cmd.fx" 3 sleep,pipe > /dev/null 2> "$T/cmd.data.err"
rc=$?
note "bpfsym record --off-cpu -- offcpu 3 sleep,pipe: status $rc: $(tail -1 "$T/cmd.data.err")"
if ! record_ok "$name" "$T/cmd.data" "$T/cmd.data.err" $rc; then
	:
elif ! grep -q '^end_ms' "$T/cmd.fx" 2>/dev/null; then
	fail "$name" "the fixture wrote no results under bpfsym record -- COMMAND"
elif report_to "$name" "$T/cmd.data" "$T/cmd.off" --off-cpu --folded; then
	# The whole life of each thread, whatever its stacks: a new program's
	# first waits come before its files' call-frame tables are built, so
	# their user stacks stop short of the waiting function (docs/cli.md,
	# --off-cpu), 2 % of pipe_wait here and 8 % under TCG; the functions'
	# shares are checked with -p above, on threads past their start.
	why=
	for comm in off_sleep off_pipe; do
		want=$(awk -v c="$comm" '$1 == "thread" && $2 == c { printf "%.0f\n", ($4 - $5) / 1000 }' "$T/cmd.fx")
		got=$(off_us "$T/cmd.off" "$comm" "")
		fn=$(off_us "$T/cmd.off" "$comm" "$([ $comm = off_sleep ] && echo sleep_nap || echo pipe_wait)")
		note "$name: thread $comm: $got us off the CPU in all ($(dev "$got" "${want:-0}")), $fn us through its waiting function; its wall minus CPU time: ${want:-?} us"
		if [ -z "$want" ] || ! within "$got" "$want"; then
			why="${why:+$why; }thread $comm: $got us off the CPU, its wall minus CPU time ${want:-unknown} us ($(dev "$got" "${want:-0}"), more than $TOL %)"
		fi
	done
	if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
fi

# ---- -G CGROUP: the fixture in a cgroup of ours, another outside
name=integration/offcpu_cgroup
root=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ -d "$d" ] && [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then
		root=$d
		break
	fi
done
if [ -z "$root" ]; then
	skip "$name" "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
elif ! mkdir "$root/bpfsym-offcpu-$$" 2> "$T/mkdir.err"; then
	skip "$name" "cannot create a cgroup under $root: $(head -1 "$T/mkdir.err")"
else
	CG=$root/bpfsym-offcpu-$$
	if ! fx_start "$T/out.fx" sleep,pipe; then
		fail "$name" "the fixture did not start: $(tail -1 "$T/out.fx.err")"
	else
		outside=$FX
		if ! fx_start "$T/cg.fx" sleep,pipe; then
			fail "$name" "the fixture did not start: $(tail -1 "$T/cg.fx.err")"
		elif ! echo "$FX" > "$CG/cgroup.procs" 2> "$T/move.err"; then
			skip "$name" "cannot move a process into $CG: $(head -1 "$T/move.err")"
		else
			inside=$FX
			if ! bg_record "$T/cg.data" --off-cpu -G "$CG"; then
				fail "$name" "bpfsym record --off-cpu -G did not start: $(tail -1 "$T/cg.data.err")"
				stop "$outside"
				stop "$inside"
			else
				sleep 0.5
				ok=1
				fx_finish "$outside" "$T/out.fx" || ok=0
				fx_finish "$inside" "$T/cg.fx" || ok=0
				end_record
				note "bpfsym record --off-cpu -G $CG: status $REC_RC: $(tail -1 "$T/cg.data.err")"
				if [ $ok = 0 ]; then
					fail "$name" "$FX_WHY"
				elif [ "$REC_RC" -ne 0 ]; then
					fail "$name" "bpfsym record --off-cpu -G exited with status $REC_RC: $(tail -1 "$T/cg.data.err")"
				elif report_to "$name" "$T/cg.data" "$T/cg.off" --off-cpu --folded --pid "$inside" &&
				     report_to "$name" "$T/cg.data" "$T/cgout.off" --off-cpu --folded --pid "$outside"; then
					if [ -s "$T/cgout.off" ]; then
						fail "$name" "$(off_us "$T/cgout.off" "" "") us off the CPU of the fixture outside the cgroup"
						show "$T/cgout.off"
					else
						check_fns "$name" cg "off_sleep:sleep_nap:[sleeping]" "off_pipe:pipe_wait:[sleeping]"
					fi
				fi
			fi
		fi
	fi
fi

# ---- twins: one wait under two callers, the same registers at both
name=integration/offcpu_twins
if rec_run "$name" twins twins -v -p @FX; then
	kept=$(sed -n 's/.*switch-outs taken (\([0-9]*\) user sides kept.*/\1/p' "$T/twins.data.err" | tail -1)
	note "twins: ${kept:-no} switch-outs kept their user side from the last"
	if [ "${kept:-0}" -le 0 ]; then
		fail "$name" "no switch-out kept its user side from the last, so the check of kept ones did not run: $(grep 'off-CPU:' "$T/twins.data.err" | tail -1)"
	else
		check_fns "$name" twins "off_twins:twin_a:[sleeping]" "off_twins:twin_b:[sleeping]"
	fi
fi

# ---- the kernel unwinder against the kernel's, in the same run
name=integration/offcpu_korc_check
export BPFSYM_KORC_CHECK=1
rec_run "$name" korc "$MODES" -v -a && kc_ok=1 || kc_ok=0
unset BPFSYM_KORC_CHECK
if [ $kc_ok = 1 ]; then
	line=$(grep 'kernel unwinder check:' "$T/korc.data.err" | tail -1)
	note "${line:-no check line}"
	set -- $(echo "$line" | sed -n 's/.*check: \([0-9]*\) the same.* (\([0-9]*\) through a module), \([0-9]*\) not; not compared: \([0-9]*\) met.*, \([0-9]*\) stopped short.*/\1 \2 \3 \4 \5/p')
	calls=0
	for f in sleep_nap pipe_wait mutex_wait; do
		calls=$((calls + $(fx_calls "$T/korc.fx" "$f")))
	done
	if grep -q 'BPFSYM_KORC_CHECK: no kernel unwinder tables' "$T/korc.data.err"; then
		skip "$name" "this kernel has no ORC tables in /proc/kallsyms (another unwinder, or kptr_restrict): $(grep 'kernel unwinder:' "$T/korc.data.err" | head -1)"
	elif [ $# -ne 5 ]; then
		fail "$name" "no check line from record -v: ${line:-none}"
		grep '^bpfsym: ' "$T/korc.data.err" | tail -5 | show
	elif [ "$3" -ne 0 ]; then
		fail "$name" "$3 kernel stacks unwound otherwise than bpf_get_stack at the switch-out: $line"
	elif [ "$1" -lt "$calls" ]; then
		fail "$name" "$1 stacks compared, fewer than the fixture's $calls waits: $line"
	elif [ $(( ($4 + $5) * 100 )) -gt "$1" ]; then
		fail "$name" "more than 1 % of the unwinds stopped short of the kernel's end: $line"
	else
		pass "$name"
	fi
fi

# ---- the older kernels' path
name=integration/offcpu_fallback
set --
while IFS=: read -r t comm fn st; do
	[ "$t" = offcpu_odirect ] && [ -z "$ODIR" ] && continue
	set -- "$@" "$comm:$fn:$st"
done <<-EOF
$WAITS
EOF
export BPFSYM_FORCE_FALLBACK=all
rec_run "$name" fallback "$MODES" -p @FX && fb_ok=1 || fb_ok=0
unset BPFSYM_FORCE_FALLBACK
if [ $fb_ok = 1 ]; then
	check_fns "$name" fallback "$@"
fi

lib_done
