#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --perf-script` against real `perf script` output.
#
# perf record -a -g and bpfsym record -a sample the machine at the same
# time while the fixture hot.c burns both CPUs, so both recordings hold
# kernel frames, user frames of files and libraries, unnamed frames and
# several processes.  Then:
#
# perf_script_grammar: one set of regular expressions, applied to perf's
#   `perf script` and to bpfsym's --perf-script: every line is a sample
#   header, a frame line or empty, in the order header, frames, one empty
#   line.  The expressions are those of tests/unit/test_report_script.c.
#   Fields that are optional in the header, because perf prints them or
#   not depending on the recording and on -F:
#     /TID  (perf's default prints the TID alone; -F pid,tid prints PID/TID,
#           as bpfsym does)
#     [CPU] (only for recordings with the CPU: perf record -a)
#   and PID and TID may be -1 (perf's "unknown thread": ":-1    -1").
#     PERIOD (perf 6.1 prints it for these events; bpfsym always does)
#   The event may carry modifiers (perf's "cpu-clock:ppp:").  In a frame
#   line, SYM+0xOFF or [unknown] and a DSO in parentheses are required.
# perf_script_collapse: bpfsym's --perf-script collapsed the way FlameGraph's
#   stackcollapse-perf.pl does it (not packaged in Debian 12, so an awk
#   version here: COMM;ROOT;...;LEAF COUNT, +0xOFF dropped, [unknown]
#   becomes [DSO basename]) gives the same stacks and counts as
#   `bpfsym report --folded`, once the folded names lose their _[k]
#   suffix and the +0xOFF inside [MODULE+0xOFF], and Python's QUALNAME_[p]
#   reads py::QUALNAME as perf-script prints it.
# perf_script_filter: --pid keeps only that process, with as many samples
#   as --folded --pid counts.
. "$(dirname "$0")/lib.sh"
lib_init integration/perf_script_grammar integration/perf_script_collapse integration/perf_script_filter

if ! command -v perf >/dev/null 2>&1; then
	skip_all "perf is not installed (the grammar's oracle)"
fi
need_fixture hot hot

# hot runs for its wall-clock SECONDS: longer than any wait below.
bg_start "$T/hot" 600 2
hot=$BG_PID
hot_ready() { [ "$(nthreads "$hot")" -ge 2 ]; }
if ! wait_until 5 hot_ready; then
	fail_all "fixture hot did not start its threads"
fi

# Two frequencies that do not phase-lock (see test_oracle_perf.sh).
# -N: no copies of every sampled binary into a build-id cache.
bg_start perf record -N -a -g -e cpu-clock -F 499 -o "$T/perf.data" 2> "$T/perf.err"
perf=$BG_PID
wait_until 10 file_nonempty "$T/perf.data"
# Until hot had 1.5 s of CPU time (both threads): ~600 samples of it at 397 Hz.
REC_FREQ=397
if cpu_record "$T/bpfsym.data" 1500 "$hot" -a; then
	rc=$REC_RC
else
	rc=1
fi
HOT_CPU=$REC_CPU
mv "$T/bpfsym.data.err" "$T/record.err" 2>/dev/null
kill -INT "$perf" 2>/dev/null
reap "$perf"
stop "$hot"

if ! record_ok integration/perf_script_grammar "$T/bpfsym.data" "$T/record.err" $rc; then
	fail integration/perf_script_collapse "no bpfsym recording"
	fail integration/perf_script_filter "no bpfsym recording"
	lib_done
fi
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --perf-script > "$T/bpfsym.script" 2> "$T/script.err"
src=$?
perf script -i "$T/perf.data" > "$T/perf.script" 2> "$T/perf-script.err"
prc=$?
recorded=$(run_to 60 "$BPFSYM" report "$T/bpfsym.data" --limit 1 2>/dev/null |
	awk '/^# samples:/ { sub(/,$/, "", $3); print $3 + 0; exit }')

# grammar FILE: checks FILE's lines; prints "HEADERS FRAMES KERNEL BAD".
# The first bad lines go to FILE.bad.
grammar() {
	awk -v bad="$1.bad" '
	BEGIN {
		hdr = "^[^ \t].* +-?[0-9]+(\\/-?[0-9]+)? +(\\[[0-9]+\\] +)?[0-9]+\\.[0-9][0-9][0-9][0-9][0-9][0-9]: +([0-9]+ +)?[^ ]+: *$"
		frame = "^\t *[0-9a-f]+ (\\[unknown\\]|.+\\+0x[0-9a-f]+) \\(.+\\)$"
		state = "between"	# between samples, or "in" one
	}
	function wrong(why) {
		if (nbad++ < 5)
			printf "line %d (%s): %s\n", NR, why, $0 > bad
	}
	$0 ~ hdr {
		if (state == "in")
			wrong("header without the empty line before it")
		state = "in"
		headers++
		next
	}
	$0 ~ frame {
		if (state != "in")
			wrong("frame outside a sample")
		frames++
		if ($0 ~ /\(\[kernel\.kallsyms\]\)$/)
			kernel++
		next
	}
	$0 == "" {
		if (state != "in")
			wrong("second empty line")
		state = "between"
		next
	}
	{ wrong("matches no rule") }
	END {
		if (state == "in")
			wrong("no empty line after the last sample")
		print headers + 0, frames + 0, kernel + 0, nbad + 0
	}' "$1"
}

# ---- grammar
name=integration/perf_script_grammar
if [ $src -ne 0 ]; then
	fail "$name" "bpfsym report --perf-script exited with status $src"
	show "$T/script.err"
elif [ $prc -ne 0 ] || [ ! -s "$T/perf.script" ]; then
	fail "$name" "perf script (the oracle) gave nothing to compare with (status $prc)"
	show "$T/perf-script.err"
	show "$T/perf.err"
else
	set -- $(grammar "$T/perf.script")
	ph=$1 pf=$2 pk=$3 pbad=$4
	set -- $(grammar "$T/bpfsym.script")
	bh=$1 bf=$2 bk=$3 bbad=$4
	note "perf script: $ph samples, $pf frames ($pk kernel), $pbad lines outside the grammar"
	note "bpfsym --perf-script: $bh samples, $bf frames ($bk kernel), $bbad lines outside the grammar"
	if [ "$pbad" -ne 0 ]; then
		# The grammar is perf's: if perf breaks it, the regexes are wrong.
		fail "$name" "perf's own output breaks the grammar $pbad times"
		show "$T/perf.script.bad"
	elif [ "$ph" -lt 100 ] || [ "$pf" -lt "$ph" ]; then
		# 3 s of -a at 499 Hz, hot busy on two threads: thousands.
		fail "$name" "perf (the oracle) recorded too little to compare ($ph samples, $pf frames)"
		show "$T/perf.err"
	elif [ "$bbad" -ne 0 ]; then
		fail "$name" "$bbad lines of bpfsym's output are outside perf's grammar"
		show "$T/bpfsym.script.bad"
	elif [ "$bh" -ne "$recorded" ]; then
		fail "$name" "bpfsym printed $bh samples of the $recorded the table counts"
	elif [ "$bh" -lt 100 ] || [ "$bk" -lt 1 ] || [ "$bf" -le "$bk" ]; then
		fail "$name" "bpfsym printed too little: $bh samples, $bf frames, $bk kernel"
	else
		pass "$name"
	fi
	note "perf's first sample:"
	sed -n '1,6p' "$T/perf.script" | show
	note "bpfsym's first sample:"
	sed -n '1,6p' "$T/bpfsym.script" | show
fi

# ---- collapse: stackcollapse-perf.pl's rules over the perf-script text
name=integration/perf_script_collapse
collapse() {
	awk '
	function flush(   s, i) {
		if (!have)
			return
		s = comm
		for (i = nf; i >= 1; i--)
			s = s ";" f[i]
		if (!nf)
			s = s ";[unknown]"	# what --folded prints for an empty stack
		cnt[s]++
		have = 0
	}
	/^[^ \t]/ {
		flush()
		comm = $0
		sub(/ +-?[0-9]+(\/-?[0-9]+)? +(\[[0-9]+\] +)?[0-9]+\.[0-9]+: +([0-9]+ +)?[^ ]+: *$/, "", comm)
		gsub(/;/, ":", comm)
		have = 1
		nf = 0
		next
	}
	/^\t/ {
		line = $0
		sub(/^\t *[0-9a-f]+ /, "", line)
		n = split(line, p, / \(/)
		dso = p[n]
		sub(/\)$/, "", dso)
		sym = substr(line, 1, length(line) - length(p[n]) - 2)
		if (sym == "[unknown]") {
			if (dso != "[unknown]") {
				sub(/.*\//, "", dso)
				sym = (dso ~ /^\[.*\]$/) ? dso : "[" dso "]"
			}
		} else {
			sub(/\+0x[0-9a-f]+$/, "", sym)
		}
		gsub(/;/, ":", sym)
		f[++nf] = sym
		next
	}
	/^$/ { flush() }
	END {
		flush()
		for (s in cnt)
			print s, cnt[s]
	}' "$1"
}
# --folded, with _[k] and [MODULE+0xOFF]'s offset dropped, _[p] as py::,
# merged again.
folded_plain() {
	awk '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		s = f[1]
		for (i = 2; i <= k; i++) {
			x = f[i]
			sub(/_\[k\]$/, "", x)
			# A Python frame: perf-script names it py::QUALNAME, unnamed [interpreter].
			if (sub(/_\[p\]$/, "", x) && x !~ /^\[.*\]$/)
				x = "py::" x
			if (x ~ /^\[.*\+0x[0-9a-f]+\]$/)
				sub(/\+0x[0-9a-f]+\]$/, "]", x)
			s = s ";" x
		}
		cnt[s] += n
	}
	END {
		for (s in cnt)
			print s, cnt[s]
	}' "$1"
}
if [ $src -ne 0 ]; then
	fail "$name" "bpfsym report --perf-script exited with status $src"
elif ! folded "$name" "$T/bpfsym.data" "$T/folded"; then
	:
else
	collapse "$T/bpfsym.script" | LC_ALL=C sort > "$T/collapsed"
	folded_plain "$T/folded" | LC_ALL=C sort > "$T/folded.plain"
	stacks=$(nlines "$T/collapsed")
	samples=$(awk '{ s += $NF } END { print s + 0 }' "$T/collapsed")
	hot_samples=$(awk '/^hot;/ { s += $NF } END { print s + 0 }' "$T/collapsed")
	note "collapsed: $stacks distinct stacks, $samples samples, $hot_samples of them in hot; hot had $HOT_CPU ms of CPU time (~$(samples_for "$HOT_CPU" 397) samples)"
	if ! cpu_enough "$name" hot "$HOT_CPU" 1500 || ! samples_ok "$name" "hot in the collapsed stacks" "$hot_samples" "$HOT_CPU" 397; then
		grep '^hot;' "$T/collapsed" | head -5 | show
	elif ! cmp -s "$T/collapsed" "$T/folded.plain"; then
		fail "$name" "the collapsed --perf-script and --folded differ ($(diff "$T/collapsed" "$T/folded.plain" | grep -c '^[<>]') lines)"
		diff "$T/collapsed" "$T/folded.plain" | head -20 | show
	elif ! grep -q '^hot;.*;run_workload;dispatch;hot_a [0-9]*$' "$T/collapsed"; then
		fail "$name" "no collapsed stack of hot ends in run_workload;dispatch;hot_a"
		grep '^hot;' "$T/collapsed" | sort -t' ' -k2,2nr | head -5 | show
	else
		pass "$name"
	fi
fi

# ---- --pid: only that process, as many samples as --folded --pid counts
name=integration/perf_script_filter
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --perf-script --pid "$hot" > "$T/pid.script" 2> "$T/pid.err"
rc1=$?
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --folded --pid "$hot" > "$T/pid.folded" 2>> "$T/pid.err"
rc2=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
	fail "$name" "bpfsym report --pid exited with status $rc1 / $rc2"
	show "$T/pid.err"
else
	set -- $(awk -v pid="$hot" '
		/^[^ \t]/ {
			n++
			if ($0 !~ (" " pid "/[0-9]+ +\\[")) other++
		}
		END { print n + 0, other + 0 }' "$T/pid.script")
	n=$1 other=$2
	want=$(awk '{ s += $NF } END { print s + 0 }' "$T/pid.folded")
	note "--pid $hot: $n samples (--folded: $want), $other of another process"
	if [ "$n" -lt "$(want_samples "$HOT_CPU" 397)" ] || [ "$other" -ne 0 ] || [ "$n" -ne "$want" ]; then
		fail "$name" "--perf-script --pid $hot printed $n samples (hot's $HOT_CPU ms of CPU time give ~$(samples_for "$HOT_CPU" 397)), $other of other processes; --folded counts $want"
	else
		pass "$name"
	fi
fi

lib_done
