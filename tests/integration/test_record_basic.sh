#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The record command line: errors, -d, the default verb, signals, SIGKILL.
. "$(dirname "$0")/lib.sh"
lib_init integration/cli_freq_zero integration/cli_freq_abc \
	integration/cli_duration_negative integration/cli_unknown_pid \
	integration/cli_unknown_option integration/cli_report_missing_file \
	integration/record_duration integration/record_default_verb \
	integration/record_sigint integration/record_sigterm \
	integration/record_sigkill_truncated

# ---- usage errors: status 2 and exactly one line on stderr.
# usage_error NAME ARGS...
usage_error() {
	name=$1
	shift
	run_to 30 "$BPFSYM" "$@" > "$T/usage.out" 2> "$T/usage.err"
	rc=$?
	lines=$(nlines "$T/usage.err")
	note "bpfsym $*: status $rc, stderr: $(head -3 "$T/usage.err")"
	if [ $rc -ne 2 ]; then
		fail "$name" "'bpfsym $*' exited with status $rc, expected 2"
		show "$T/usage.err"
	elif [ "$lines" -ne 1 ]; then
		fail "$name" "'bpfsym $*' printed $lines lines on stderr, expected exactly one"
		show "$T/usage.err"
	elif ! grep -q '[[:alnum:]]' "$T/usage.err"; then
		fail "$name" "'bpfsym $*' printed an empty error line"
	else
		pass "$name"
	fi
}

usage_error integration/cli_freq_zero record -F 0 -d 1 -q -o "$T/e.data"
usage_error integration/cli_freq_abc record -F abc -d 1 -q -o "$T/e.data"
usage_error integration/cli_duration_negative record -d -1 -q -o "$T/e.data"
# Above any pid_max (2^22), so no such process can exist.
usage_error integration/cli_unknown_pid record -p 999999999 -d 1 -q -o "$T/e.data"
usage_error integration/cli_unknown_option record --no-such-option -d 1 -q -o "$T/e.data"

name=integration/cli_report_missing_file
run_to 30 "$BPFSYM" report "$T/does-not-exist.data" > "$T/missing.out" 2> "$T/missing.err"
rc=$?
note "bpfsym report (missing file): status $rc, stderr: $(head -3 "$T/missing.err")"
if [ $rc -eq 0 ]; then
	fail "$name" "'bpfsym report' of a missing file exited with status 0"
elif [ $rc -ge 124 ]; then
	fail "$name" "'bpfsym report' of a missing file ended with status $rc (timeout or crash)"
	show "$T/missing.err"
elif ! grep -q '[[:alnum:]]' "$T/missing.err"; then
	fail "$name" "'bpfsym report' of a missing file exited $rc without a message on stderr"
else
	pass "$name"
fi

need_fixture burn burn
# One busy process for the recordings below to see (600 s of CPU time at
# most: stopped at the end).
bg_start "$T/burn" 600
burn=$BG_PID
wait_until 5 alive "$burn"

# window_rate SECS: burn's CPU time (ms) a wall ms over the next SECS s, or
# until the recorder $REC ends, whichever comes first, in $WINDOW_RATE.
window_rate() {
	wc_0=$(cpu_ms "$burn")
	wt_0=$(now_ms)
	wc_end=$((wt_0 + $1 * 1000))
	while alive "$REC" && [ "$(now_ms)" -lt "$wc_end" ]; do
		sleep 0.05
	done
	WINDOW_RATE=$(awk -v c="$(( $(cpu_ms "$burn") - wc_0 ))" -v t="$(( $(now_ms) - wt_0 ))" \
		'BEGIN { printf "%.4f", (t > 0) ? c / t : 0 }')
}

# rec_cpu DATA: burn's CPU time (ms) in the recording's own window: its
# rate from window_rate times the duration the header states.  The test's
# window is only near the recording's (it starts once the test sees the
# file, and its polling runs late under load, or under TCG by a second);
# the rate of a busy loop over it is what holds.
rec_cpu() {
	run_to 60 "$BPFSYM" report "$1" --limit 1 2> /dev/null |
		awk -v r="$WINDOW_RATE" '/^# started: .*duration: / {
			d = $0; sub(/.*duration: /, "", d); printf "%d\n", r * d * 1000; found = 1; exit }
			END { if (!found) print 0 }'
}

# readable NAME DATA CPU_MS FREQ: `bpfsym report DATA` works and the folded
# stacks have at least half the samples of the burn fixture that its
# CPU_MS of CPU time in the recorded window gives at FREQ Hz.  Output in
# DATA.report{,.err}.
readable() {
	run_to 60 "$BPFSYM" report "$2" > "$2.report" 2> "$2.report.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$1" "'bpfsym report' of the recording exited with status $rc"
		show "$2.report.err"
		return 1
	fi
	folded "$1" "$2" "$2.folded" || return 1
	n=$(folded_count "$2.folded" '^burn;(.*;)?burn_inner$')
	note "$(basename "$2"): $n samples of burn;...;burn_inner; $3 ms of its CPU time recorded (~$(samples_for "$3" "$4") at $4 Hz)"
	if ! samples_ok "$1" "the busy fixture 'burn' (burn_inner) in the report" "$n" "$3" "$4"; then
		show "$2.folded"
		return 1
	fi
	return 0
}

# ---- -d 1, the whole system (no target): ends by itself, status 0, a
# summary line about samples on stderr.  Its samples of burn: what burn's
# CPU time over the recording's duration (its header's) gives at the
# default 99 Hz.
name=integration/record_duration
rm -f "$T/d.data"
t0=$(now_ms)
bg_start "$BPFSYM" record -d 1 -q -o "$T/d.data" 2> "$T/d.err"
REC=$BG_PID
wait_until 30 sh -c "[ -s '$T/d.data' ] || ! kill -0 $REC 2>/dev/null"
window_rate 1
if ! wait_exit "$REC" 30; then
	stop "$REC"
	rc=124
else
	reap "$REC"
	rc=$REAP_RC
fi
t1=$(now_ms)
note "bpfsym record -d 1: status $rc after $((t1 - t0)) ms, stderr: $(cat "$T/d.err")"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	fail "$name" "'bpfsym record -d 1' did not stop by itself within 30 s of its start"
elif record_ok "$name" "$T/d.data" "$T/d.err" $rc; then
	if [ $((t1 - t0)) -lt 900 ]; then
		fail "$name" "'bpfsym record -d 1' returned after only $((t1 - t0)) ms"
	elif ! grep -qi 'sample' "$T/d.err"; then
		fail "$name" "no summary line mentioning samples on stderr"
		show "$T/d.err"
	elif readable "$name" "$T/d.data" "$(rec_cpu "$T/d.data")" 99; then
		pass "$name"
	fi
fi

# ---- "record" is the default verb.
name=integration/record_default_verb
rm -f "$T/dv.data"
bg_start "$BPFSYM" -p "$burn" -d 1 -q -o "$T/dv.data" 2> "$T/dv.err"
REC=$BG_PID
wait_until 30 sh -c "[ -s '$T/dv.data' ] || ! kill -0 $REC 2>/dev/null"
window_rate 1
reap "$REC"
if record_ok "$name" "$T/dv.data" "$T/dv.err" $REAP_RC && readable "$name" "$T/dv.data" "$(rec_cpu "$T/dv.data")" 99; then
	pass "$name"
fi

# ---- signals.  signal_stop NAME SIG DATA: record -p burn until SIG, sent
# once the file exists and burn had 0.5 s of CPU time since (in
# $WINDOW_CPU); the status in $REAP_RC.
signal_stop() {
	rm -f "$3"
	bg_start "$BPFSYM" record -p "$burn" -q -o "$3" 2> "$3.err"
	rec=$BG_PID
	if ! wait_until 20 file_nonempty "$3"; then
		fail "$1" "no output file 20 s after the start of the recording"
		show "$3.err"
		stop "$rec"
		return 1
	fi
	cpu_wait 500 "$CPU_WAIT_MAX" "$burn"
	WINDOW_CPU=$CPU_GOT
	if ! alive "$rec"; then
		reap "$rec"
		fail "$1" "the recording ended by itself (status $REAP_RC) before SIG$2"
		show "$3.err"
		return 1
	fi
	kill -"$2" "$rec"
	if ! wait_exit "$rec" 20; then
		fail "$1" "still running 20 s after SIG$2"
		stop "$rec"
		return 1
	fi
	reap "$rec"
	note "bpfsym record, SIG$2: status $REAP_RC, stderr: $(cat "$3.err")"
	return 0
}

for sig in INT TERM; do
	name=integration/record_sig$(echo $sig | tr A-Z a-z)
	data=$T/sig$sig.data
	signal_stop "$name" $sig "$data" || continue
	if [ "$REAP_RC" -ne 0 ]; then
		fail "$name" "the recording exited with status $REAP_RC after SIG$sig, expected 0"
		show "$data.err"
	elif readable "$name" "$data" "$WINDOW_CPU" 99; then
		if cat "$data.report" "$data.report.err" | grep -qi truncat; then
			fail "$name" "the report of a recording stopped by SIG$sig says it is truncated"
			grep -i truncat "$data.report" "$data.report.err" | show
		else
			pass "$name"
		fi
	fi
done

# ---- SIGKILL: blocks are flushed at least every second, so the file reads
# up to the last one and says it is truncated.  Killed once burn had 0.5 s
# of CPU time and the file then grew twice (two flushes: the second wrote
# everything read after the first, so all of that half second); what the
# report has of burn is then at least half of what that CPU time gives.
name=integration/record_sigkill_truncated
data=$T/sigkill.data
rm -f "$data"
bg_start "$BPFSYM" record -p "$burn" -q -o "$data" 2> "$data.err"
rec=$BG_PID
if ! wait_until 20 file_nonempty "$data"; then
	fail "$name" "no output file 20 s after the start of the recording"
	show "$data.err"
	stop "$rec"
else
	cpu_wait 500 "$CPU_WAIT_MAX" "$burn"
	WINDOW_CPU=$CPU_GOT
	wait_grown "$data" 2 30
	if ! alive "$rec"; then
		reap "$rec"
		fail "$name" "the recording ended by itself (status $REAP_RC) before SIGKILL"
		show "$data.err"
	else
		stop "$rec"
		note "SIGKILLed recording: $(wc -c < "$data") bytes, killed two flushes after burn had $WINDOW_CPU ms of CPU time"
		if readable "$name" "$data" "$WINDOW_CPU" 99; then
			if cat "$data.report" "$data.report.err" "$data.folded.err" | grep -qi truncat; then
				pass "$name"
			else
				fail "$name" "the report of a SIGKILLed recording does not say it is truncated"
				show "$data.report.err"
				head -5 "$data.report" | show
			fi
		fi
	fi
fi

stop "$burn"
lib_done
