# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared helpers of the integration tests (POSIX sh + awk; sourced).
#
#   . "$(dirname "$0")/lib.sh"
#   lib_init integration/name1 integration/name2 ...
#
# lib_init names every test of the file.  Each must then report exactly one
# result line, with pass, fail or skip:
#   PASS name
#   FAIL name: why
#   SKIP name: why
# A second fail of a failed test prints "#   name: also: why", not a second
# FAIL line.  When the file ends, by lib_done or any exit (an EXIT trap), a
# test that reported nothing, that reported twice (PASS and FAIL, SKIP and
# PASS...), or a name lib_init did not declare, is a FAIL of its own; then
# "# lib.sh checked: ..." closes the output (tests/run.sh wants that line:
# without it the file was cut short).  The exit status is 1 when anything
# failed.
#
# SKIP is for what this machine lacks (root, BTF, a tool, a kernel feature),
# never for what bpfsym did.  lib_init SKIPs every test and exits 0 when
# the machine cannot run them (not root, no $BPFSYM binary, no BTF, no C
# compiler), so a test is never reported as passing without having run.
# skip_all and fail_all do the same for the tests not reported yet, later;
# need_fixture builds a fixture or ends the file: SKIP without the compiler,
# FAIL (the compiler's last error line) when it is there and fails.
#
# Afterwards $T is a scratch directory for this test file, also its HOME
# (perf's build-id cache, Chromium's profile and the like stay in it), and
# its working directory; every process started with bg_start is killed on
# exit, then $LIB_CLEANUP is run (a command a test sets for what it must
# undo: mounts, cgroups), then the file's results are checked.  A test never
# sets its own EXIT trap.
#
# A test that loads no BPF (symbolize, report) sets LIB_ROOTLESS=1 before
# lib_init: it then runs without root and without BTF.
#
# Environment (set by tests/run.sh): BPFSYM, the binary under test;
# BPFSYM_TOP, the repository root; BPFSYM_TEST_TMP, a scratch directory.

set -u

BPFSYM_TOP=${BPFSYM_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BPFSYM=${BPFSYM:-$BPFSYM_TOP/build/san/bpfsym}
FIXTURES=$BPFSYM_TOP/tests/fixtures
# Sanitizer builds: a leak or UB report is a failure, and must show up.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Tests never reach the network: a user's debuginfod servers are not
# asked (test_debuginfod sets its own, on localhost).
unset DEBUGINFOD_URLS

LIB_TESTS=
LIB_PIDS=
LIB_FAILED=0
LIB_OWN_TMP=
LIB_REPORTS=	# one "STATUS NAME" line per result line printed
LIB_CHECKED=0
LIB_CHECK_RC=0
LIB_CLEANUP=
T=

# lib_report STATUS NAME: note a result of NAME; false when STATUS is FAIL
# and NAME has already failed (the caller then prints a continuation line).
# A file, not a variable: pass/fail/skip also count from subshells.
lib_report() {
	[ -n "$LIB_REPORTS" ] || return 0
	if [ "$1" = FAIL ] && [ -f "$LIB_REPORTS" ] && grep -Fqx "FAIL $2" "$LIB_REPORTS"; then
		return 1
	fi
	echo "$1 $2" >> "$LIB_REPORTS"
}

pass() { lib_report PASS "$1"; echo "PASS $1"; }
fail() {
	LIB_FAILED=1
	if lib_report FAIL "$1"; then
		echo "FAIL $1: $2"
	else
		echo "#   $1: also: $2"
	fi
}
skip() { lib_report SKIP "$1"; echo "SKIP $1: $2"; }

# Tests that measure speed (how soon, how fast, how many a second) do not
# run where timings mean nothing: under qemu's software emulation (TCG,
# tests/kernel/ sets BPFSYM_VM_ACCEL=tcg) the kernel's part of every tick,
# a fork, a page fault costs tens of times what it does on a CPU, against
# user code's few.  timed NAME WHAT: true when NAME is to run; else it
# reports "NOTRUN NAME: ..." (run.sh counts those apart, neither passed
# nor skipped: nothing about bpfsym or the kernel was learned) and is false.
#   if timed integration/load_99 "no sample lost at 99 Hz"; then ...; fi
timed() {
	[ "${BPFSYM_VM_ACCEL:-}" = tcg ] || return 0
	lib_report NOTRUN "$1"
	echo "NOTRUN $1: measures speed ($2); under TCG timings mean nothing"
	return 1
}

note() { echo "# $*"; }

# Print FILE (or stdin) as "# " comment lines, at most 40 of them.
show() {
	if [ $# -gt 0 ]; then
		[ -f "$1" ] || return 0
		sed -n '1,40s/^/#   /p' "$1"
	else
		sed -n '1,40s/^/#   /p'
	fi
}

# lib_unreported: the tests named in lib_init that have reported nothing yet.
lib_unreported() {
	{ [ -n "$LIB_REPORTS" ] && [ -f "$LIB_REPORTS" ] && cat "$LIB_REPORTS"; } |
		awk -v decl="$LIB_TESTS" '
		{ seen[$2] = 1 }
		END {
			n = split(decl, d, " ")
			for (i = 1; i <= n; i++)
				if (!(d[i] in seen) && !(d[i] in done)) {
					done[d[i]] = 1
					print d[i]
				}
		}'
}

# SKIP every test of this file that has not reported yet, and stop.  For
# what the machine lacks only.
skip_all() {
	for t in $(lib_unreported); do
		skip "$t" "$1"
	done
	exit 0
}

# FAIL every test of this file that has not reported yet, and stop.
fail_all() {
	for t in $(lib_unreported); do
		fail "$t" "$1"
	done
	exit 1
}

# Kill what bg_start started, then run $LIB_CLEANUP.  Idempotent.
lib_cleanup() {
	for p in $LIB_PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	if [ -n "$LIB_PIDS" ]; then
		sleep 0.2
		for p in $LIB_PIDS; do
			kill -KILL "$p" 2>/dev/null
		done
	fi
	LIB_PIDS=
	if [ -n "$LIB_CLEANUP" ]; then
		$LIB_CLEANUP
	fi
}

# lib_check: each test named in lib_init reported exactly once, and no other
# name reported; a FAIL line for each that did not, then the closing
# "# lib.sh checked: ..." line.  Runs once; false when anything failed.
lib_check() {
	if [ "$LIB_CHECKED" = 1 ]; then
		return "$LIB_CHECK_RC"
	fi
	LIB_CHECKED=1
	{ [ -n "$LIB_REPORTS" ] && [ -f "$LIB_REPORTS" ] && cat "$LIB_REPORTS"; } |
		awk -v decl="$LIB_TESTS" -v failed="$LIB_FAILED" '
		function problem(msg) {
			print "FAIL " msg
			bad++
		}
		{
			if (!($2 in cnt))
				order[++nrep] = $2
			cnt[$2]++
			how[$2] = how[$2] (cnt[$2] > 1 ? ", " : "") $1
			if ($1 == "FAIL")
				failed = 1
		}
		END {
			n = split(decl, d, " ")
			for (i = 1; i <= n; i++) {
				t = d[i]
				if (t in want) {
					problem(t ": declared twice in lib_init")
					continue
				}
				want[t] = 1
				ntests++
				if (!(t in cnt))
					problem(t ": reported nothing")
				else if (cnt[t] == 2)
					problem(t ": reported twice (" how[t] ")")
				else if (cnt[t] > 2)
					problem(t ": reported " cnt[t] " times (" how[t] ")")
			}
			for (i = 1; i <= nrep; i++)
				if (!(order[i] in want))
					problem(order[i] ": reported, but lib_init does not name it")
			tests = ntests " test" (ntests == 1 ? "" : "s") " declared"
			if (bad)
				print "# lib.sh checked: " tests ", " bad " wrong (above)"
			else
				print "# lib.sh checked: " tests ", each reported once"
			exit (bad > 0 || failed + 0 > 0)
		}'
	LIB_CHECK_RC=$?
	return "$LIB_CHECK_RC"
}

# The EXIT trap: clean up, check, remove a scratch directory of our own.
lib_exit() {
	lib_rc=$?
	lib_cleanup
	lib_check || lib_rc=1
	if [ -n "$LIB_OWN_TMP" ]; then
		cd / && rm -rf "$LIB_OWN_TMP"
	fi
	exit "$lib_rc"
}

lib_init() {
	LIB_TESTS="$*"
	trap lib_exit EXIT
	trap 'exit 1' INT TERM HUP
	LIB_NAME=$(basename "$0" .sh)
	# The scratch directory first: results are noted in it.
	if [ -n "${BPFSYM_TEST_TMP:-}" ] && [ -d "$BPFSYM_TEST_TMP" ]; then
		T=$BPFSYM_TEST_TMP/$LIB_NAME
		rm -rf "$T"
		mkdir -p "$T" || T=
	else
		LIB_OWN_TMP=$(mktemp -d "/tmp/bpfsym-$LIB_NAME.XXXXXX") || LIB_OWN_TMP=
		T=$LIB_OWN_TMP
	fi
	if [ -z "$T" ] || ! : > "$T/.lib-reports"; then
		for t in $LIB_TESTS; do
			echo "FAIL $t: cannot create a scratch directory"
		done
		echo "# lib.sh checked: nothing could run"
		LIB_CHECKED=1
		LIB_CHECK_RC=1
		exit 1
	fi
	LIB_REPORTS=$T/.lib-reports
	# Whatever a tool keeps under HOME (perf's ~/.debug, Chromium's ~/.pki,
	# caches) stays in $T.
	export HOME="$T" XDG_CACHE_HOME="$T/.cache" XDG_CONFIG_HOME="$T/.config" \
		XDG_DATA_HOME="$T/.local/share"
	# Background jobs must not see /tmp-relative surprises: work in $T.
	cd "$T" || fail_all "cannot enter '$T'"
	if [ "${LIB_ROOTLESS:-0}" != 1 ] && [ "$(id -u)" -ne 0 ]; then
		skip_all "needs root (real BPF programs)"
	fi
	if [ ! -x "$BPFSYM" ]; then
		skip_all "no bpfsym binary at '$BPFSYM' (build it: make build/san/bpfsym)"
	fi
	if [ "${LIB_ROOTLESS:-0}" != 1 ] && [ ! -r /sys/kernel/btf/vmlinux ]; then
		skip_all "kernel BTF (/sys/kernel/btf/vmlinux) missing"
	fi
	for tool in cc timeout awk env date; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			skip_all "'$tool' not installed"
		fi
	done
}

lib_done() {
	exit 0	# lib_exit (the EXIT trap) cleans up, checks and sets the status
}

# build_error LOG: the compiler's last error line in LOG (its last line when
# none looks like one), for a FAIL message.
build_error() {
	awk '!/^collect2: / && /error|undefined reference|cannot find|No such file/ { e = $0 }
	     NF { last = $0 }
	     END { print (e != "") ? e : (last != "") ? last : "(no output)" }' "$1" 2>/dev/null
}

# build_cmd LOG CMD...: run the build command CMD, its output into LOG.
# Status 0: built; 1: CMD failed, the compiler's last error line is in
# $BUILD_WHY; 2: the compiler (the first word of CMD) is not installed.
build_cmd() {
	lb_log=$1
	shift
	if ! command -v "$1" > /dev/null 2>&1; then
		BUILD_WHY="'$1' not installed"
		return 2
	fi
	if "$@" > "$lb_log" 2>&1; then
		return 0
	fi
	BUILD_WHY=$(build_error "$lb_log")
	return 1
}

# need_built WHAT LOG CMD...: build WHAT with CMD (build_cmd), or end this
# file: its unreported tests SKIP when the compiler is not installed, FAIL
# with the compiler's last error line when it is and the build failed.
need_built() {
	lb_what=$1
	lb_log=$2
	shift 2
	build_cmd "$lb_log" "$@"
	case $? in
	0) return 0 ;;
	2) skip_all "$BUILD_WHY (to build $lb_what)" ;;
	esac
	show "$lb_log"
	fail_all "cannot build $lb_what: $BUILD_WHY"
}

# build_fixture SRC OUT [CFLAGS...]: compile tests/fixtures/SRC.c into $T/OUT
# with frame pointers everywhere and no inlining or tail calls, so the
# call chains the tests expect exist.  Errors go to $T/OUT.build.log; the
# status is build_cmd's (2: no cc), the reason in $BUILD_WHY.
build_fixture() {
	lb_src=$FIXTURES/$1.c
	lb_out=$T/$2
	shift 2
	build_cmd "$lb_out.build.log" cc -O2 -g -fno-omit-frame-pointer -fno-inline \
		-fno-optimize-sibling-calls -o "$lb_out" "$lb_src" "$@" -pthread
}

# need_fixture SRC OUT [CFLAGS...]: build_fixture, or end this file: every
# test not reported yet SKIPs without cc, FAILs with cc's last error line
# when cc is there and the build failed.
need_fixture() {
	lb_name=$1
	build_fixture "$@"
	case $? in
	0) return 0 ;;
	2) skip_all "$BUILD_WHY (to build tests/fixtures/$lb_name.c)" ;;
	esac
	show "$lb_out.build.log"
	fail_all "cannot build tests/fixtures/$lb_name.c: $BUILD_WHY"
}

# run_to SECS CMD...: run CMD, killed (status 124, or 137) after SECS.
run_to() {
	secs=$1
	shift
	timeout -k 5 "$secs" "$@"
}

# bg_start CMD...: start CMD in the background with the default dispositions
# of SIGINT/SIGQUIT/SIGTERM (a non-interactive shell ignores SIGINT in its
# background jobs; a user's Ctrl-C does not), remember it for the clean-up.
# The pid is in $BG_PID.
bg_start() {
	env --default-signal=INT,QUIT,TERM "$@" &
	BG_PID=$!
	LIB_PIDS="$LIB_PIDS $BG_PID"
}

# alive PID: true while PID runs (a zombie does not count).
alive() {
	st=$(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_exit PID SECS: poll until PID has exited; false after SECS.
wait_exit() {
	n=$(awk -v s="$2" 'BEGIN { printf "%d", s * 10 }')
	while [ "$n" -gt 0 ]; do
		alive "$1" || return 0
		sleep 0.1
		n=$((n - 1))
	done
	! alive "$1"
}

# wait_until SECS CMD...: poll CMD every 0.1 s until it succeeds; false after SECS.
wait_until() {
	n=$(awk -v s="$1" 'BEGIN { printf "%d", s * 10 }')
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	"$@"
}

# reap PID: wait for a background child; its exit status in $REAP_RC.
# Kills it first when it is still running after 20 s.
reap() {
	if ! wait_exit "$1" 20; then
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1"
	REAP_RC=$?
	LIB_PIDS=$(echo "$LIB_PIDS" | awk -v p="$1" '{ for (i = 1; i <= NF; i++) if ($i != p) printf " %s", $i }')
}

# stop PID: kill a background child (fixture) and reap it.
stop() {
	kill -KILL "$1" 2>/dev/null
	reap "$1"
}

# nthreads PID: number of threads of PID.
nthreads() {
	ls "/proc/$1/task" 2>/dev/null | awk 'END { print NR }'
}

# file_nonempty FILE
file_nonempty() {
	[ -s "$1" ]
}

now_ms() {
	date +%s%3N
}

# nlines FILE: lines in FILE, an unterminated last line included.
nlines() {
	awk 'END { print NR }' "$1"
}

# Folded stacks ("COMM;ROOT;...;LEAF COUNT") to per-leaf sample counts:
# "LEAF COUNT" lines, then "TOTAL COUNT".  Only stacks of COMM when given.
folded_leaves() {
	awk -v comm="${2:-}" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		c = stack
		sub(/;.*/, "", c)
		if (comm != "" && c != comm)
			next
		leaf = stack
		sub(/.*;/, "", leaf)
		cnt[leaf] += n
		total += n
	}
	END {
		for (l in cnt)
			print l, cnt[l]
		print "TOTAL", total + 0
	}' "$1"
}

# perf script's output (stdin) to the same "LEAF COUNT" / "TOTAL COUNT" form.
script_leaves() {
	awk '
	/^[^ \t]/ { want = 1; total++; next }	# sample header line
	want && /^[ \t]/ {
		sym = $2
		sub(/\+0x[0-9a-f]+$/, "", sym)
		cnt[sym]++
		want = 0
	}
	END {
		for (l in cnt)
			print l, cnt[l]
		print "TOTAL", total + 0
	}'
}

# leaf_count LEAVESFILE LEAF: the count of LEAF (0 when absent).
leaf_count() {
	awk -v l="$2" '$1 == l { c = $2 } END { print c + 0 }' "$1"
}

# Sum of the counts of the folded stacks matching the awk regex RE
# (matched against "COMM;...;LEAF", the count excluded).
folded_count() {
	awk -v re="$2" '
	{
		stack = substr($0, 1, length($0) - length($NF) - 1)
		if (stack ~ re)
			c += $NF
	}
	END { print c + 0 }' "$1"
}

# pct PART WHOLE: a percentage with one decimal ("0.0" when WHOLE is 0).
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0) ? 100 * a / b : 0 }'
}

# fcmp A OP B: numeric comparison of decimals (OP: lt le gt ge).
fcmp() {
	awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {
		if (op == "lt") exit !(a < b)
		if (op == "le") exit !(a <= b)
		if (op == "gt") exit !(a > b)
		if (op == "ge") exit !(a >= b)
		exit 2
	}'
}

# record_ok NAME OUT.data ERRFILE RC: FAIL NAME unless the recording ended
# with status 0; prints what it said.  True when it did.
record_ok() {
	if [ "$4" -ne 0 ]; then
		fail "$1" "bpfsym record exited with status $4"
		show "$3"
		return 1
	fi
	if [ ! -s "$2" ]; then
		fail "$1" "bpfsym record wrote no file '$2'"
		show "$3"
		return 1
	fi
	return 0
}

# folded NAME DATA OUT: run `bpfsym report DATA --folded > OUT`; FAIL NAME
# and false when it fails.
folded() {
	run_to 60 "$BPFSYM" report "$2" --folded > "$3" 2> "$3.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$1" "bpfsym report --folded exited with status $rc"
		show "$3.err"
		return 1
	fi
	return 0
}

# ---- recording in the background, and what folded stacks say about a comm

exists() {
	[ -e "$1" ]
}

# ustats FOLDED COMMRE FN: over the stacks whose comm matches ^(COMMRE)$,
# prints "TOTAL USER NAMED FN UNKNOWN ANON NCOMMS": samples; samples with a
# user frame; those whose user leaf is a symbol name (not [...]); whose
# user leaf is FN; is [unknown]; is [anon+0x..]; distinct comms.
ustats() {
	awk -v cre="^($2)\$" -v fn="$3" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] !~ cre)
			next
		total += n
		comms[f[1]] += n
		leaf = ""
		for (i = 2; i <= k; i++)
			if (f[i] !~ /_\[k\]$/)
				leaf = f[i]
		if (leaf == "")
			next
		user += n
		if (leaf !~ /^\[/)
			named += n
		if (leaf == fn)
			hit += n
		if (leaf == "[unknown]")
			unk += n
		if (leaf ~ /^\[anon\+0x[0-9a-f]+\]$/)
			anon += n
	}
	END {
		nc = 0
		for (c in comms)
			nc++
		print total + 0, user + 0, named + 0, hit + 0, unk + 0, anon + 0, nc
	}' "$1"
}

# uleaves FOLDED COMMRE: the 10 most frequent user leaves of those stacks.
uleaves() {
	awk -v cre="^($2)\$" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] !~ cre)
			next
		leaf = "(no user frame)"
		for (i = 2; i <= k; i++)
			if (f[i] !~ /_\[k\]$/)
				leaf = f[i]
		c[leaf] += n
	}
	END { for (l in c) print l, c[l] }' "$1" | sort -k2,2nr | head -10 | show
}

# ustats into variables: S_TOTAL S_USER S_NAMED S_FN S_UNK S_ANON S_NCOMMS
ustats_set() {
	set -- $(ustats "$@")
	S_TOTAL=$1 S_USER=$2 S_NAMED=$3 S_FN=$4 S_UNK=$5 S_ANON=$6 S_NCOMMS=$7
}

# fn_count FOLDED COMMRE FN: samples of those comms with FN anywhere in the stack.
fn_count() {
	folded_count "$1" "^($2);(.*;)?$3(;|\$)"
}

# bg_record DATA ARGS...: start `bpfsym record -q -F $REC_FREQ -o DATA ARGS`
# in the background (stderr to DATA.err) and wait until it samples (it
# creates DATA once the sampler is attached).  $REC is its pid.  False
# (recorder stopped) when it never got there.
REC_FREQ=199
bg_record() {
	br_data=$1
	shift
	bg_record_cmd "$br_data" "$BPFSYM" record -q -F "$REC_FREQ" -o "$br_data" "$@"
}

# bg_record_cmd DATA CMD...: the same for a whole command line CMD (one
# that becomes bpfsym, as setpriv does, and writes DATA).
bg_record_cmd() {
	data=$1
	shift
	rm -f "$data"
	bg_start "$@" 2> "$data.err"
	REC=$BG_PID
	wait_until 30 rec_started
	if ! file_nonempty "$data"; then
		stop "$REC"
		return 1
	fi
	return 0
}

rec_started() {
	file_nonempty "$data" || ! alive "$REC"
}

# end_record: SIGINT the background recorder $REC (unless it already
# ended) and reap it; its status in $REC_RC.
end_record() {
	if alive "$REC"; then
		kill -INT "$REC" 2>/dev/null
	fi
	reap "$REC"
	REC_RC=$REAP_RC
}

# ---- CPU time: the oracle of how many samples a process should have
#
# A sampler at F Hz (cpu-clock, on every CPU) takes about F samples per
# second of CPU time a process gets, however busy the machine is; what the
# process gets in a second of wall time depends on everything else that
# runs (other test suites, busy loops).  So the fixtures burn an amount of
# CPU time (tests/fixtures/cpu_budget.h), the tests wait for CPU time, not
# for seconds, and every expected sample count derives from the CPU time
# the fixture had: read from the kernel (cpu_ms) or written by the fixture
# itself (fixture_cpu).  The bar (want_samples) is half of F samples per
# CPU second: at 100 expected samples that is five standard deviations of
# sampling noise away, and a target that is not recorded at all has none.

LIB_CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# cpu_ms PID...: CPU time (user + system, ms) the processes PID... have used
# so far, every thread, exited ones included (/proc/PID/stat, which a
# zombie still has); a process that is gone counts 0.
cpu_ms() {
	for cm_p in "$@"; do
		sed -n 's/^.*) //p' "/proc/$cm_p/stat" 2>/dev/null
	done | awk -v hz="$LIB_CLK_TCK" '{ t += $12 + $13 } END { printf "%d\n", t * 1000 / hz }'
}

# fixture_cpu FILE NAME: the CPU time (ms) a fixture wrote to its CPU file
# FILE for NAME ("NAME SECONDS" lines, summed); 0 when there is none.
fixture_cpu() {
	awk -v n="$2" '$1 == n { s += $2 } END { printf "%d\n", s * 1000 }' "$1" 2>/dev/null || echo 0
}

# samples_for CPU_MS FREQ: the samples FREQ Hz gives CPU_MS ms of CPU time.
samples_for() {
	awk -v c="$1" -v f="$2" 'BEGIN { printf "%d\n", c * f / 1000 }'
}

# want_samples CPU_MS FREQ: the fewest samples a recording at FREQ Hz may
# have of CPU_MS ms of CPU time: half of samples_for, at least 1.  Under
# TCG (tests/kernel/), a quarter: qemu runs the VM's vCPUs in turn on one
# host thread, a slice of up to 100 ms each, while the guest's clocks go
# on; a task's CPU clock then counts time its vCPU did not run, and the
# sampling hrtimer, firing late, takes one sample for the periods it
# missed.  With both vCPUs busy (the recorder on one) a burner's samples
# fall to about half of its clock's count, at times below it (seen: 99
# of 205, 391 of 881).  A quarter still catches a recorder that loses
# samples wholesale; speed itself is measured on the host (timed()).
want_samples() {
	awk -v c="$1" -v f="$2" -v d="$(want_div)" 'BEGIN { n = int(c * f / d); print (n < 1) ? 1 : n }'
}

# want_div: what CPU ms x Hz is divided by for want_samples' floor (1000
# for ms to s, times 2, or 4 under TCG), for tests that scale it further.
want_div() {
	if [ "${BPFSYM_VM_ACCEL:-}" = tcg ]; then echo 4000; else echo 2000; fi
}

# any_alive PID...: true while one of them runs.
any_alive() {
	for aa_p in "$@"; do
		alive "$aa_p" && return 0
	done
	return 1
}

# cpu_each PID...: cpu_ms of each PID, on one line.
cpu_each() {
	for ce_p in "$@"; do
		cpu_ms "$ce_p"
	done | paste -sd' ' -
}

# cpu_wait NEED_MS MAXSECS PID...: wait until the processes PID... have used
# NEED_MS ms of CPU time from now on; at most MAXSECS s, and only while one
# of them runs.  $CPU_GOT: the CPU time (ms) they used meanwhile;
# $CPU_EACH: the same for each PID, in order; $CPU_MIN: the least of
# those.  True when they had NEED_MS.  With CPU_WAIT_EACH=1, NEED_MS is
# for each of them (CPU_MIN >= NEED_MS).
CPU_WAIT_EACH=0
cpu_wait() {
	cw_need=$1
	cw_end=$(( $(now_ms) + $2 * 1000 ))
	shift 2
	cw_0=$(cpu_each "$@")
	while :; do
		CPU_EACH=$(echo "$cw_0 $(cpu_each "$@")" |
			awk '{ n = NF / 2; for (i = 1; i <= n; i++) printf "%s%d", (i > 1) ? " " : "", $(n + i) - $i; print "" }')
		set -- $(echo "$CPU_EACH" | awk '{ m = $1; for (i = 1; i <= NF; i++) { s += $i; if ($i < m) m = $i } } END { print s + 0, m + 0 }') "$@"
		CPU_GOT=$1 CPU_MIN=$2
		shift 2
		if [ "$CPU_WAIT_EACH" = 1 ]; then
			[ "$CPU_MIN" -ge "$cw_need" ] && return 0
		else
			[ "$CPU_GOT" -ge "$cw_need" ] && return 0
		fi
		# One of several gone: the others may still get there.
		if [ "$(now_ms)" -ge "$cw_end" ] || ! any_alive "$@"; then
			return 1
		fi
		sleep 0.1
	done
}

# CPU_WAIT_MAX: how long (s) a test waits for a fixture's CPU time before it
# gives up: long enough for a fixture that gets a twentieth of a CPU.
CPU_WAIT_MAX=120

# cpu_record DATA NEED_MS PIDS ARGS...: record (bg_record DATA ARGS) until
# the processes PIDS (comma-separated) have used NEED_MS ms of CPU time
# since the sampler was attached (at most CPU_WAIT_MAX s, only while one of
# them runs), then end_record.  $REC_CPU: the CPU time (ms) they used while
# it recorded (a lower bound: it recorded a little longer), $REC_CPU_EACH
# the same per process, $REC_RC the recorder's status.  False when the
# recording did not start.
cpu_record() {
	cr_data=$1 cr_need=$2 cr_pids=$3
	shift 3
	cpu_record_cmd "$cr_data" "$cr_need" "$cr_pids" "$BPFSYM" record -q -F "$REC_FREQ" -o "$cr_data" "$@"
}

# cpu_record_cmd DATA NEED_MS PIDS CMD...: the same for a whole command line
# (bg_record_cmd).
cpu_record_cmd() {
	cr_data=$1 cr_need=$2 cr_pids=$(echo "$3" | tr ',' ' ')
	shift 3
	REC_CPU=0 REC_CPU_EACH=
	bg_record_cmd "$cr_data" "$@" || return 1
	cpu_wait "$cr_need" "$CPU_WAIT_MAX" $cr_pids
	REC_CPU=$CPU_GOT REC_CPU_EACH=$CPU_EACH
	end_record
	return 0
}

# cpu_enough NAME WHAT CPU_MS NEED_MS: FAIL NAME and false when WHAT had less
# than NEED_MS ms of CPU time (within the waits above): the machine was too
# busy for the test to say anything.  Never a SKIP, never a PASS on too
# little.
cpu_enough() {
	if [ "$3" -lt "$4" ]; then
		fail "$1" "$2 had only $3 ms of CPU time ($4 needed to tell; the machine is too busy)"
		return 1
	fi
	return 0
}

# samples_ok NAME WHAT GOT CPU_MS FREQ: true when GOT samples of WHAT are at
# least want_samples CPU_MS FREQ; else FAIL NAME with what the CPU time
# predicts.
samples_ok() {
	so_want=$(want_samples "$4" "$5")
	if [ "$3" -lt "$so_want" ]; then
		fail "$1" "$2: $3 samples, where its $4 ms of CPU time at $5 Hz give ~$(samples_for "$4" "$5") (at least $so_want wanted)"
		return 1
	fi
	return 0
}

# file_size FILE: its size in bytes (0 when it is not there).
file_size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

# wait_grown FILE N SECS: wait until FILE has grown N times from now on;
# false after SECS s.  A recorder writes its blocks at least every second,
# reading the ring buffer just before: once the file grew twice,
# everything sampled before the first growth is in it.
wait_grown() {
	wg_last=$(file_size "$1") wg_n=0
	wg_end=$(( $(now_ms) + $3 * 1000 ))
	while [ "$wg_n" -lt "$2" ]; do
		[ "$(now_ms)" -ge "$wg_end" ] && return 1
		sleep 0.1
		wg_s=$(file_size "$1")
		if [ "$wg_s" -gt "$wg_last" ]; then
			wg_last=$wg_s
			wg_n=$((wg_n + 1))
		fi
	done
	return 0
}
