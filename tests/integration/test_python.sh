#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Python functions in the stack (issue 27), against the interpreter's own
# view: tests/fixtures/py_oracle.py samples its main thread's Python stack
# with sys._current_frames() while bpfsym records it
# (tests/integration/py_compare.py compares).
#
#   python_oracle_3.11/3.12/3.13  Debian's /usr/bin/python3 (3.11), pyenv's
#       3.12 and 3.13 (skipped where not installed), the "mixed" workload
#       recorded with -p: of the main thread's samples with Python frames,
#       the share whose innermost Python function is leaf_a, leaf_b,
#       key_fn, default_fn or another within PY_LEAF_POINTS (3) points of
#       the oracle's; those in leaf_a/leaf_b have the chain
#       <module>;run;main;outer;middle;leaf_X in at least PY_CHAIN_MIN
#       (99) %; key_fn (called by sorted, a C function) and default_fn
#       (called by json's C encoder) have the oracle's Python frames with
#       a native frame between the caller and the callback, as often; and
#       at least half the samples the fixture's CPU time gives.  Under TCG
#       (tests/kernel/) shares and rates are timings: the frames only.
#   python_threads     in the 3.11 recording, the oracle's own sampling
#       thread (a second Python thread, mostly asleep): its samples with
#       Python frames have its chain, Thread.run then sampler among its
#       Python frames (C between them: Thread.run calls its target through
#       PyObject_Call), in at least PY_CHAIN_MIN %.
#   python_no_interp   --no-interp: not one Python frame, the eval
#       function's frames still there.
#   python_late        `record -- python3 py_oracle.py`: a process started
#       by the recording has its Python frames, the chain as above.
#   python_all         -a with two Python processes at once, started once
#       the recording runs: both have the chain in their main thread's
#       samples.
#   python_mntns       the interpreter copied into a tmpfs mounted in a
#       private mount namespace (the path exists only there): the chain.
#   python_perf_3.12   3.12 run with -X perf, perf recording it beside
#       bpfsym: the innermost Python function's shares within
#       PY_LEAF_POINTS of perf's (its py:: map names).
. "$(dirname "$0")/lib.sh"
lib_init integration/python_oracle_3.11 integration/python_oracle_3.12 \
	integration/python_oracle_3.13 integration/python_threads integration/python_no_interp integration/python_late \
	integration/python_all integration/python_mntns integration/python_perf_3.12

PY_LEAF_POINTS=3
PY_CHAIN_MIN=99
PY_CPU=6
PY_FREQ=999
ORACLE=$FIXTURES/py_oracle.py
COMPARE="/usr/bin/python3 $BPFSYM_TOP/tests/integration/py_compare.py"

[ "$(uname -m)" = x86_64 ] || skip_all "the Python walker is x86-64 only"
[ -x /usr/bin/python3 ] || skip_all "Debian's /usr/bin/python3 is not installed"

# pyenv's interpreter of minor version $1 (3.12 ...), or nothing.
pyenv_bin() {
	for d in /root/.pyenv/versions/"$1".*; do
		[ -x "$d/bin/python$1" ] && { echo "$d/bin/python$1"; return; }
	done
}

# start_oracle PYTHON OUT MODE: the fixture, in $OPID once it runs.
start_oracle() {
	bg_start "$1" "$ORACLE" "$PY_CPU" "$2" "$3"
	OPID=$BG_PID
	wait_until 20 oracle_running || return 1
}
oracle_running() {
	[ "$(cpu_ms "$OPID")" -gt 100 ] || ! alive "$OPID"
}

# check DATA OUT MODE [TID]: bpfsym's view of the oracle's main thread (or
# thread TID) against the oracle's own; what is wrong in $WHY (empty: all
# holds), the comparison in DATA.cmp.
check() {
	data=$1 out=$2 mode=$3
	WHY=
	if [ ! -s "$out" ]; then
		WHY="the fixture wrote no oracle ($out)"
		return
	fi
	tid=${4:-$(awk '$1 == "tid" { print $2 }' "$out")}
	run_to 60 "$BPFSYM" report "$data" --tid "$tid" --folded > "$data.folded" 2> "$data.folded.err"
	$COMPARE "$data.folded" "$out" "$mode" > "$data.cmp"
	note "$(basename "$data"): $(grep -v '^bad' "$data.cmp" | tr '\n' ' ')"
	n=$(awk '$1 == "py_samples" { print $2 }' "$data.cmp")
	worst=$(awk '$1 == "worst_leaf_diff" { print $2 }' "$data.cmp")
	set -- $(awk '$1 == "chain" { print $2, $3 }' "$data.cmp")
	cok=${1:-0} call=${2:-0}
	set -- $(awk '$1 == "mixed" { print $2, $3 }' "$data.cmp")
	mok=${1:-0} mn=${2:-0}
	cpu=$(awk '$1 == "cpu_ms" { print $2 }' "$out")
	want=$(want_samples "${cpu:-0}" $PY_FREQ)
	[ "${n:-0}" -gt 0 ] || WHY="no sample with a Python frame;"
	# Under TCG a thread's CPU clock counts time its vCPU did not run while
	# the sampling timer fires late (lib.sh, want_samples): shares and
	# rates are timings there; the frames themselves are still held.
	if [ "${BPFSYM_VM_ACCEL:-}" = tcg ]; then
		note "under TCG: leaf shares (worst ${worst} points) and the rate not compared"
	else
		[ "${n:-0}" -ge "$want" ] ||
			WHY="$WHY $n samples with Python frames, fewer than the $want its ${cpu} ms give;"
		fcmp "${worst:-100}" le $PY_LEAF_POINTS ||
			WHY="$WHY a leaf's share is ${worst} points from the oracle's;"
	fi
	[ "$call" -gt 0 ] && [ $((cok * 100)) -ge $((call * PY_CHAIN_MIN)) ] ||
		WHY="$WHY the chain in $cok of $call leaf samples;"
	if [ "$mode" = mixed ]; then
		[ "$mn" -gt 0 ] && [ $((mok * 100)) -ge $((mn * PY_CHAIN_MIN)) ] ||
			WHY="$WHY callbacks through C in $mok of $mn;"
	fi
	if [ -n "$WHY" ]; then
		grep '^bad' "$data.cmp" | show
		show "$data.folded.err"
	fi
}

# verdict NAME: PASS, or FAIL with $WHY.
verdict() {
	if [ -n "$WHY" ]; then
		fail "$1" "$WHY"
	else
		pass "$1"
	fi
}

# oracle_run NAME PYTHON: the mixed workload under -p.
oracle_run() {
	on=$1 py=$2
	if [ -z "$py" ] || [ ! -x "$py" ]; then
		skip "$on" "no such interpreter installed"
		return
	fi
	d=$T/$(basename "$on")
	if ! start_oracle "$py" "$d.out" mixed; then
		fail "$on" "the fixture did not start"
		return
	fi
	if ! bg_record "$d.data" -F $PY_FREQ -p "$OPID"; then
		fail "$on" "the recording did not start: $(head -1 "$d.data.err")"
		stop "$OPID"
		return
	fi
	wait_exit "$OPID" 120
	reap "$OPID"
	end_record
	if [ "$REC_RC" -ne 0 ]; then
		fail "$on" "bpfsym record exited with $REC_RC"
		show "$d.data.err"
		return
	fi
	check "$d.data" "$d.out" mixed
	verdict "$on"
}

oracle_run integration/python_oracle_3.11 /usr/bin/python3
oracle_run integration/python_oracle_3.12 "$(pyenv_bin 3.12)"
oracle_run integration/python_oracle_3.13 "$(pyenv_bin 3.13)"

# ---- the second thread of the 3.11 recording
name=integration/python_threads
d=$T/python_oracle_3.11
stid=$(awk '$1 == "sampler_tid" { print $2 }' "$d.out" 2> /dev/null)
if [ ! -s "$d.data" ] || [ -z "$stid" ]; then
	fail $name "no 3.11 recording or no sampler thread id"
else
	"$BPFSYM" report "$d.data" --tid "$stid" --folded > "$d.thr" 2> /dev/null
	tp=$(folded_count "$d.thr" '_\[p\]')
	# Its Python frames alone (Thread.run calls its target through C).
	tc=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); s = ""
		for (i = 1; i <= k; i++) if (f[i] ~ /_\[p\] *$/) s = s ";" f[i]
		if (s ~ /;Thread\.run_\[p\];sampler_\[p\]/) c += n } END { print c + 0 }' "$d.thr")
	note "sampler thread $stid: $tp samples with Python frames, $tc with Thread.run;sampler"
	if [ "$tp" -gt 0 ] && [ $((tc * 100)) -ge $((tp * PY_CHAIN_MIN)) ]; then
		pass $name
	else
		fail $name "$tc of the second thread's $tp samples with Python frames have Thread.run;sampler"
		awk '{ print $NF " " substr($0, length($0) - 200) }' "$d.thr" | sort -nr | head -5 | show
	fi
fi

# ---- --no-interp
name=integration/python_no_interp
# A fixture that outlives the recording: under TCG the recorder took 5-9 s
# to start, longer than a fixture of PY_CPU seconds lived.
bg_start /usr/bin/python3 "$ORACLE" 120 "$T/ni.out" pure
OPID=$BG_PID
if wait_until 20 oracle_running && bg_record "$T/ni.data" -F $PY_FREQ --no-interp -p "$OPID"; then
	sleep 2
	end_record
	stop "$OPID"
	"$BPFSYM" report "$T/ni.data" --folded > "$T/ni.folded" 2> /dev/null
	np=$(folded_count "$T/ni.folded" '_\[p\]')
	ne=$(folded_count "$T/ni.folded" '_PyEval_EvalFrameDefault')
	note "no-interp: $np samples with a Python frame, $ne with the eval function"
	if [ "$np" -eq 0 ] && [ "$ne" -gt 0 ]; then
		pass $name
	else
		fail $name "$np samples with a Python frame, $ne with _PyEval_EvalFrameDefault"
	fi
else
	fail $name "the fixture or the recording did not start"
	stop "$OPID"
fi

# ---- a process the recording starts
name=integration/python_late
if run_to 120 "$BPFSYM" record -q -F $PY_FREQ -o "$T/late.data" -- /usr/bin/python3 "$ORACLE" 3 "$T/late.out" pure \
	> /dev/null 2> "$T/late.err"; then
	check "$T/late.data" "$T/late.out" pure
	verdict $name
else
	fail $name "bpfsym record -- python3 failed"
	show "$T/late.err"
fi

# ---- -a, two interpreters at once
name=integration/python_all
second=$(pyenv_bin 3.12)
second=${second:-/usr/bin/python3}
# Started once the recording runs (under TCG it took 5-9 s to start,
# longer than the fixtures lived): found as they map their interpreters.
if bg_record "$T/all.data" -F $PY_FREQ -a; then
	bg_start /usr/bin/python3 "$ORACLE" "$PY_CPU" "$T/all1.out" pure
	P1=$BG_PID
	bg_start "$second" "$ORACLE" "$PY_CPU" "$T/all2.out" pure
	P2=$BG_PID
	wait_exit "$P1" 120
	wait_exit "$P2" 120
	reap "$P1"
	reap "$P2"
	end_record
	check "$T/all.data" "$T/all1.out" pure
	w1=$WHY
	check "$T/all.data" "$T/all2.out" pure
	WHY="${w1:+first: $w1 }${WHY:+second: $WHY}"
	verdict $name
else
	fail $name "the recording did not start"
fi

# ---- an interpreter only a private mount namespace has
name=integration/python_mntns
if ! unshare -m --propagation private true 2> /dev/null; then
	skip $name "unshare -m is not permitted here"
else
	mkdir -p "$T/ns"
	# The copy is on a tmpfs only the namespace sees: the recorder finds it through the process.
	bg_start unshare -m --propagation private sh -c \
		'mount -t tmpfs tmpfs "$1" && cp /usr/bin/python3.11 "$1/python3.11" && exec "$1/python3.11" "$2" "$3" "$4" pure' \
		sh "$T/ns" "$ORACLE" "$PY_CPU" "$T/ns.out"
	NSP=$BG_PID
	ns_running() { grep -q "$T/ns/python3.11" "/proc/$NSP/maps" 2> /dev/null || ! alive "$NSP"; }
	if wait_until 20 ns_running && [ ! -e "$T/ns/python3.11" ] && bg_record "$T/ns.data" -F $PY_FREQ -p "$NSP"; then
		wait_exit "$NSP" 120
		reap "$NSP"
		end_record
		check "$T/ns.data" "$T/ns.out" pure
		verdict $name
	else
		fail $name "the namespace's interpreter did not start, is seen from here, or the recording did not"
		stop "$NSP"
	fi
fi

# ---- perf's own names for 3.12's functions (-X perf) in the same run
name=integration/python_perf_3.12
PY312=$(pyenv_bin 3.12)
if [ -z "$PY312" ]; then
	skip $name "no Python 3.12 installed"
elif ! command -v perf > /dev/null; then
	skip $name "perf is not installed"
elif timed $name "leaf shares against perf's"; then
	bg_start "$PY312" -X perf "$ORACLE" "$PY_CPU" "$T/perf.out" pure
	OPID=$BG_PID
	if wait_until 20 oracle_running && bg_record "$T/pp.data" -F $PY_FREQ -p "$OPID"; then
		# DWARF: 3.12's libpython has no frame pointers, perf's way to the
		# trampoline (py::NAME in its perf map) above the eval function.
		perf record -q -F $PY_FREQ --call-graph dwarf -p "$OPID" -o "$T/perf.data" > "$T/perf.rec.out" 2>&1 &
		PERF=$!
		wait_exit "$OPID" 120
		reap "$OPID"
		end_record
		wait $PERF
		tid=$(awk '$1 == "tid" { print $2 }' "$T/perf.out")
		# perf's innermost py:: frame of each sample of the main thread, as an oracle file.
		perf script -i "$T/perf.data" --tid "$tid" -F ip,sym 2> /dev/null | awk '
			/^$/ { if (leaf != "") c[leaf]++; leaf = ""; seen = 0; next }
			!seen && $2 ~ /^py::/ { s = $2; sub(/^py::/, "", s); sub(/:.*/, "", s); leaf = s; seen = 1 }
			END { if (leaf != "") c[leaf]++; for (k in c) print "stack", c[k], k }' > "$T/perf.leaves"
		check "$T/pp.data" "$T/perf.leaves" pure "$tid"
		pn=$(awk '{ s += $2 } END { print s + 0 }' "$T/perf.leaves")
		note "perf: $pn samples of the main thread with a py:: frame"
		# Only the shares are perf's to say: its stacks stop at the trampolines' frames.
		WHY=$(echo "$WHY" | tr ';' '\n' | grep -e "points from" -e "no sample" | tr '\n' ';')
		[ "$pn" -ge "$(want_samples "$(awk '$1 == "cpu_ms" { print $2 }' "$T/perf.out")" $PY_FREQ)" ] ||
			WHY="$WHY perf named $pn samples' Python functions: too few to compare;"
		verdict $name
	else
		fail $name "3.12 -X perf or the recording did not start"
		stop "$OPID"
	fi
fi
lib_done
