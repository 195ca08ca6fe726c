#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# replay.sh [-t SECONDS] [-l LABEL] [TARGET...]: run each fuzz target (all
# every tests/fuzz/fuzz_*.c by default) over its corpus under ASan/UBSan, then let it fuzz for
# SECONDS more (default 10; 0: replay only), and print one line per target,
# as tests/run.sh counts them:
#   PASS fuzz/TARGET_LABEL: inputs replayed, runs, coverage, corpus growth
#   FAIL fuzz/TARGET_LABEL: what failed, and where the input that did it is
# then a last line with the totals: targets, runs, findings, seconds.
# LABEL defaults to "replay" (`make test`); `make fuzz` runs the same with
# FUZZ_SECONDS and "fuzz".
#
# Under build/fuzz: the targets fuzz_TARGET and seeds/TARGET (both made by
# `make fuzz-build`), corpus/TARGET (what fuzzing found: kept, grown by
# every run, minimized past MAX_CORPUS inputs), logs/, and artifacts/TARGET:
# a crash, leak, timeout (10 s per input) or out-of-memory (2 GiB) is saved
# there and fails every later run while it reproduces; once it no longer
# does, it moves to regress/TARGET, replayed every run and never minimized.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
fdir=$top/build/fuzz
secs=10
label=replay
while getopts t:l: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	l) label=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [-l LABEL] [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
# Default: every target there is a source for (tests/fuzz/fuzz_NAME.c).
if [ $# -eq 0 ]; then
	for f in "$top"/tests/fuzz/fuzz_*.c; do
		n=${f##*/fuzz_}
		set -- "$@" "${n%.c}"
	done
fi
case $secs in ''|*[!0-9]*) echo "replay.sh: -t wants whole seconds, not '$secs'" >&2; exit 2 ;; esac

# Bigger inputs only slow the fuzzer down: ELF seeds (elfsym, cfi) and
# reports are a few KiB to 64 KiB, a maps or kallsyms excerpt that shows every case far less.
max_len() {
	case $1 in
	elfsym|report|cfi|fileid|symfs|debugfile|pprof) echo 65536 ;;
	*) echo 16384 ;;
	esac
}
limits="-rss_limit_mb=2048 -timeout=10"
MAX_CORPUS=4096

status=0
toolchain=
total_runs=0
findings=0
ntargets=0
started=$(date +%s)
pass() { echo "PASS $1: $2"; }
fail() { echo "FAIL $1: $2"; status=1; findings=$((findings + 1)); }
# The verdict and the stack frames in bpfsym's own sources, as comment lines.
excerpt() {
	grep -E "ERROR: |SUMMARY: |runtime error: |check failed: |^ *#[0-9]+ 0x.* $top/" "$1" |
		head -n 20 | sed 's/^/#   /'
}
count() { find "$@" -type f 2>/dev/null | wc -l; }

for t in "$@"; do
	ntargets=$((ntargets + 1))
	name=fuzz/${t}_$label
	bin=$fdir/fuzz_$t
	corpus=$fdir/corpus/$t
	seeds=$fdir/seeds/$t
	art=$fdir/artifacts/$t
	regress=$fdir/regress/$t
	log=$fdir/logs/${t}_$label.log
	if [ ! -x "$bin" ]; then
		[ -n "$toolchain" ] || toolchain=$(sh "$top/tests/fuzz/check-toolchain.sh" && echo ok)
		if [ "$toolchain" = ok ]; then
			fail "$name" "$bin is not built (make fuzz-build)"
		else
			echo "SKIP $name: $toolchain"
		fi
		continue
	fi
	mkdir -p "$corpus" "$seeds" "$art" "$regress" "$fdir/logs" || { fail "$name" "cannot create $fdir"; continue; }

	# Failures saved by earlier runs first: fixed ones become regression inputs.
	fixed=0
	still=
	for a in "$art"/crash-* "$art"/leak-* "$art"/timeout-* "$art"/oom-*; do
		[ -f "$a" ] || continue
		# shellcheck disable=SC2086
		if "$bin" $limits "$a" > "$log" 2>&1; then
			mv "$a" "$regress/" && fixed=$((fixed + 1))
		else
			still=$a
			break
		fi
	done
	if [ -n "$still" ]; then
		fail "$name" "saved input $still still fails (log: $log)"
		excerpt "$log"
		continue
	fi

	before=$(count "$corpus")
	inputs=$((before + $(count "$seeds" "$regress")))
	if [ "$secs" -eq 0 ]; then
		budget=-runs=0
	else
		budget=-max_total_time=$secs
	fi
	# The first directory is where libFuzzer keeps what it finds.
	# shellcheck disable=SC2086
	"$bin" $budget $limits -max_len="$(max_len "$t")" -artifact_prefix="$art/" \
		-print_final_stats=1 "$corpus" "$seeds" "$regress" > "$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		what=$(grep -m 1 -E 'ERROR: |runtime error: |check failed: ' "$log" | sed 's/^==[0-9]*== *//')
		if grep -q 'INITED' "$log"; then
			when="found by fuzzing"
		else
			when="while replaying the corpus"
		fi
		fail "$name" "${what:-exit status $rc} ($when); input saved as ${unit:-(none)}; log: $log"
		excerpt "$log"
		continue
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	total_runs=$((total_runs + ${runs:-0}))
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	msg="$inputs inputs replayed clean"
	[ "$secs" -eq 0 ] || msg="$msg, then $secs s of fuzzing"
	msg="$msg: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus $before -> $(count "$corpus") inputs"
	[ $fixed -eq 0 ] || msg="$msg; $fixed saved failure(s) no longer fail, moved to $regress"
	# Every run adds inputs: past MAX_CORPUS keep only those that add
	# coverage, or the replay would slow down run after run.
	n=$(count "$corpus")
	# shellcheck disable=SC2086
	if [ "$n" -gt $MAX_CORPUS ] && rm -rf "$corpus.min" && mkdir "$corpus.min" &&
		"$bin" -merge=1 $limits -max_len="$(max_len "$t")" "$corpus.min" "$corpus" > "$log.merge" 2>&1; then
		msg="$msg; corpus minimized from $n to $(count "$corpus.min") inputs"
		rm -rf "$corpus" && mv "$corpus.min" "$corpus"
	fi
	pass "$name" "$msg"
done
echo "fuzz ($label): $ntargets targets, $total_runs runs, $findings finding(s), $(($(date +%s) - started)) s"
exit $status
