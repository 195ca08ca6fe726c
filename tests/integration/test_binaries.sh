#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A PIE, a non-PIE, a static and a static-PIE binary all resolve.
#
# burn.c (main -> burn_outer -> burn_inner) built four ways; each one is
# profiled twice: attached with -p (its mappings existed before the
# recording) and started with -- COMMAND (its mappings appear during it).
# burn_inner must be named, with its callers, in the folded stacks of each:
# not [unknown], not [MODULE+0xOFFSET], not some other function (which is
# what a wrong load bias or a pgoff mistake gives).
. "$(dirname "$0")/lib.sh"
KINDS="pie nopie static static_pie"
names=
for k in $KINDS; do
	names="$names integration/binary_${k}_pid integration/binary_${k}_cmd"
done
lib_init $names

# build KIND: the fixture built as KIND into $T/b_KIND; false, the reason
# in $BUILD_WHY, when cc fails or builds something else than asked.
build() {
	case $1 in
	pie) build_fixture burn b_pie -fPIE -pie ;;
	nopie) build_fixture burn b_nopie -fno-pie -no-pie ;;
	static) build_fixture burn b_static -static ;;
	static_pie) build_fixture burn b_static_pie -fPIE -static-pie ;;
	esac || return 1
	BUILD_WHY="readelf cannot read it"
	h=$(LC_ALL=C readelf -lh "$T/b_$1" 2>/dev/null) || return 1
	type=$(echo "$h" | awk '$1 == "Type:" { print $2; exit }')
	interp=$(echo "$h" | grep -c 'INTERP')
	dyn=$(echo "$h" | grep -c 'DYNAMIC')
	BUILD_WHY="cc built another kind: type $type, $interp PT_INTERP, $dyn PT_DYNAMIC"
	case $1 in
	pie) [ "$type" = DYN ] && [ "$interp" -gt 0 ] ;;
	nopie) [ "$type" = EXEC ] && [ "$interp" -gt 0 ] ;;
	static) [ "$type" = EXEC ] && [ "$interp" -eq 0 ] && [ "$dyn" -eq 0 ] ;;
	static_pie) [ "$type" = DYN ] && [ "$interp" -eq 0 ] ;;
	esac
}

# check NAME COMM FOLDED CPU_MS: burn_inner named, with main;burn_outer
# before it; at least half the samples CPU_MS of CPU time gives at 199 Hz.
check() {
	all=$(folded_count "$3" "^$2;")
	# The user stack is judged: a timer interrupt's kernel frames may sit
	# above burn_inner (more of them under TCG, where the kernel's part of
	# a tick costs more against the loop's).
	leaf=$(folded_count "$3" "^$2;(.*;)?burn_inner(;[^;]*_\\\\[k\\\\])*\$")
	chain=$(folded_count "$3" "^$2;(.*;)?main;burn_outer;burn_inner(;[^;]*_\\\\[k\\\\])*\$")
	note "$2: $all samples, $leaf in burn_inner, $chain with main;burn_outer;burn_inner; $4 ms of CPU time (~$(samples_for "$4" 199) samples)"
	# 0.75 s of CPU time: ~150 samples, plenty to tell 90% from the >99%
	# burn_inner this loop has.
	if ! cpu_enough "$1" "$2" "$4" 650; then
		:
	elif ! samples_ok "$1" "$2" "$all" "$4" 199; then
		show "$3"
	elif [ $((100 * leaf)) -lt $((90 * all)) ]; then
		fail "$1" "only $leaf of $all samples of '$2' end in burn_inner"
		sort -t' ' -k2,2nr "$3" | head -5 | show
	elif [ $((100 * chain)) -lt $((90 * leaf)) ]; then
		# Of the samples in burn_inner: those before the recorder has the
		# program's table (its first ms; ~0.2 s of its CPU under TCG)
		# have the leaf alone, and the leaf check counts the rest.
		fail "$1" "only $chain of the $leaf samples of '$2' in burn_inner have main;burn_outer above it"
		sort -t' ' -k2,2nr "$3" | head -5 | show
	else
		pass "$1"
	fi
}

for k in $KINDS; do
	# cc is there (lib_init): a kind it cannot build is a failure, unless
	# what is missing is the static C library (another package).
	if ! build $k; then
		show "$T/b_$k.build.log"
		for t in integration/binary_${k}_pid integration/binary_${k}_cmd; do
			case $BUILD_WHY in
			*"cannot find -lc:"*|*"cannot find -lc") skip $t "no static C library (libc.a): $BUILD_WHY" ;;
			*) fail $t "cannot build a $k binary: $BUILD_WHY" ;;
			esac
		done
		continue
	fi
	comm=b_$k

	# -p: recorded until the process had 0.75 s of CPU time.
	name=integration/binary_${k}_pid
	bg_start "$T/$comm" 600
	pid=$BG_PID
	wait_until 5 alive "$pid"
	if ! cpu_record "$T/$k.pid.data" 750 "$pid" -p "$pid"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/$k.pid.data.err"
	elif record_ok "$name" "$T/$k.pid.data" "$T/$k.pid.data.err" $REC_RC &&
	   folded "$name" "$T/$k.pid.data" "$T/$k.pid.folded"; then
		check "$name" "$comm" "$T/$k.pid.folded" "$REC_CPU"
	fi
	stop "$pid"

	# -- COMMAND: 2 s of CPU time, which burn writes to its CPU file.  Its
	# first samples come before the recorder has built the program's
	# unwind table (a few ms here, ~100 ms of the process's CPU time
	# under TCG in tests/kernel/'s VM, where userspace is slower against
	# the sampler): over 2 s they stay well under 10%.
	name=integration/binary_${k}_cmd
	rm -f "$T/$k.cmd.cpu"
	run_to 120 "$BPFSYM" record -F 199 -o "$T/$k.cmd.data" -q -- "$T/$comm" 2 "$T/$k.cmd.cpu" 2> "$T/$k.cmd.err"
	rc=$?
	if record_ok "$name" "$T/$k.cmd.data" "$T/$k.cmd.err" $rc &&
	   folded "$name" "$T/$k.cmd.data" "$T/$k.cmd.folded"; then
		check "$name" "$comm" "$T/$k.cmd.folded" "$(fixture_cpu "$T/$k.cmd.cpu" burn_inner)"
	fi
done

lib_done
