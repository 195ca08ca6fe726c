#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/unwind.sh: the table-driven unwinder (issue 14) against the
# frame-pointer walk and against perf, in the same run on the same
# workloads:
#   bdwarf  bpfsym record --call-graph dwarf -F HZ (tables, FP fallback: the default)
#   bfp     bpfsym record --call-graph fp -F HZ
#   bnoint  bpfsym record --no-interp -F HZ (tables, no Python frames: what
#           the Python walk costs is bdwarf's BPF time over this one's)
#   pdwarf  perf record --call-graph dwarf -e cpu-clock -F HZ (8 KiB of stack a sample)
#   pfp     perf record -g -e cpu-clock -F HZ
#   base    no profiler (the workload's own rate, for the slowdown)
#
#   sudo bench/unwind.sh                 # from the repository root
#   DURATION=10 REPS=5 FREQ=999 sudo -E bench/unwind.sh
#
# Workloads (WORKLOADS, default all), each the profiled command
# (`PROFILER -- WORKLOAD`: both profilers follow its forks and see it from
# exec, tables built for a new process included):
#   spin       bench/spin.c, -fno-omit-frame-pointer (as bench/sampling.sh):
#              WORKERS processes, DEPTH frames deep, counting units of work
#   spin-nofp  the same built -fomit-frame-pointer: what Debian's libraries look like
#   chain      tests/fixtures/unw_chain.c, -fomit-frame-pointer, one thread
#   qsort      tests/fixtures/unw_qsort.c: a callback under glibc's qsort
#   threads    tests/fixtures/unw_threads.c: two pthreads
#   python     Debian's /usr/bin/python3 running a pure-Python loop
# spin runs DURATION s of wall time; the others DURATION s of CPU time each
# (tests/fixtures/cpu_budget.h).  Then a whole-machine run (`-a -d
# DURATION`, skipped with SYSTEM=0) while spin-nofp (one worker), python
# and qsort run, with the unwinder's table memory and build time.
#
# Each repetition runs every configuration once per workload, in forward
# order on odd repetitions and reverse order on even ones; the tables show
# medians.  Metrics:
#   BPF ns per run / per recorded sample: delta of run_time_ns and run_cnt
#     of bpfsym's perf_event programs (/proc/PID/fdinfo, with
#     kernel.bpf_stats_enabled=1, restored after), polled every 0.2 s while
#     it runs (the last 0.2 s are missed; the ratio is not).  A run is one
#     tick on a CPU, of the target or not (filtered in BPF); a recorded
#     sample is one in the report: the BPF time of the whole recording over
#     its samples, the cost of the ticks filtered out included.
#   bytes per sample: the recording's size over its samples (bpfsym: the
#     report header's "# samples:", perf: its SAMPLE events), fixed costs
#     included.
#   completeness: share of the workload's samples whose stack has a root
#     frame (_start, __libc_start_call_main, __libc_start_main,
#     start_thread, clone3, clone: what tests/integration/test_unwind.sh
#     counts), from `bpfsym report --folded` and `perf script`.
#   recorder CPU: /usr/bin/time's user+sys of the profiler and its
#     children minus the workload's own CPU time (what it reports); max
#     RSS is the largest of the profiler and the workload (rusage of
#     children): read it for the -a run, where the workload is not a child.
#   slowdown (spin, spin-nofp): units of work per second and per workload
#     CPU-second against the baseline's, as in bench/sampling.sh (the
#     in-kernel cost of a sample, BPF unwinding or perf's 8 KiB copy, is
#     charged to the workload).
#   BPF map memory: memlock of the maps bpfsym holds (/proc/PID/fdinfo),
#     largest seen while it runs: the unwind tables' shards live there.
# A configuration that fails (today's bpfsym has no --call-graph) is
# logged and shows "-" in the tables.
#
# Noise: before each run the script waits (up to QUIET_MAX s) until the
# machine is idle, and it notes the CPU time used meanwhile by anything but
# the run ("other CPU, s" in the tables: a noisy run has more than a tenth
# of a CPU of it; compare with bench/sampling.sh, which drops such runs).
#
# Environment: DURATION (5), REPS (3), FREQ (999), WORKLOADS (all, in the
# order above), WORKERS (spin's processes, online CPUs), DEPTH (spin's
# call depth, 8), SYSTEM (1: the -a run), QUIET_MAX (10), BPFSYM (default ./bpfsym, built
# if missing), PYTHON (/usr/bin/python3, Debian's), RAW (a file to keep the
# raw results in).
#
# The -a run prints the report header's line about the unwind tables
# (docs/cli.md), and any "bpfsym: ... unwind tables ..." line of the
# recorder's stderr, verbatim, and puts its numbers in the table:
#   # unwind tables: 12 files (11 built, 1 without call-frame information, 0 unreadable, 0 not built when recording ended), 96013 rows, 1.0 MiB of BPF maps, built in 41 ms of CPU (longest file 19 ms)

set -u

DURATION=${DURATION:-5}
REPS=${REPS:-3}
FREQ=${FREQ:-999}
WORKLOADS=${WORKLOADS:-"spin spin-nofp chain qsort threads python"}
WORKERS=${WORKERS:-$(getconf _NPROCESSORS_ONLN)}
DEPTH=${DEPTH:-8}
SYSTEM=${SYSTEM:-1}
QUIET_MAX=${QUIET_MAX:-10}
PYTHON=${PYTHON:-/usr/bin/python3}
CONFIGS="base bdwarf bfp bnoint pdwarf pfp"
ROOTS='_start __libc_start_call_main __libc_start_main __libc_start_main_impl start_thread clone3 clone __clone __clone3'

me=unwind.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF and perf -a need it)"
case ${BPFSYM:-} in "" | /*) ;; *) BPFSYM=$(pwd)/$BPFSYM ;; esac
cd "$(dirname "$0")/.." || die "cannot cd to the repository root"
if [ -z "${BPFSYM:-}" ]; then
	if [ ! -x ./bpfsym ]; then
		log "./bpfsym missing: make bpfsym"
		make bpfsym >&2 || die "make bpfsym failed"
	fi
	BPFSYM=$(pwd)/bpfsym
fi
[ -x "$BPFSYM" ] || die "$BPFSYM is not an executable"
command -v perf >/dev/null 2>&1 || die "perf not found (apt-get install linux-perf)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
command -v cc >/dev/null 2>&1 || die "cc not found"
case " $WORKLOADS " in *" python "*) [ -x "$PYTHON" ] || die "$PYTHON not found (WORKLOADS without python?)" ;; esac

T=$(mktemp -d /tmp/bpfsym-unwbench.XXXXXX) || die "mktemp failed"
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
BG=""
cleanup() {
	for p in $BG; do
		for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
			for g in $(ps -o pid= --ppid "$c" 2>/dev/null); do
				kill -TERM "$g" 2>/dev/null	# spin's workers
			done
			kill -TERM "$c" 2>/dev/null
		done
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

NOFP="-O2 -g -fno-inline -fno-optimize-sibling-calls -fomit-frame-pointer -fasynchronous-unwind-tables -pthread"
cc -O2 -g -fno-omit-frame-pointer -o "$T/spin" bench/spin.c || die "cannot build bench/spin.c"
cc $NOFP -o "$T/spin-nofp" bench/spin.c || die "cannot build bench/spin.c without frame pointers"
for f in unw_chain unw_qsort unw_threads; do
	cc $NOFP -o "$T/$f" "tests/fixtures/$f.c" || die "cannot build tests/fixtures/$f.c"
done
cat >"$T/loop.py" <<'EOF'
import sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def middle(n):
    return leaf(n)
end = time.process_time() + float(sys.argv[1])
units = 0
while time.process_time() < end:
    middle(2000)
    units += 1
print("units", units, "cpu %.3f" % time.process_time())
EOF
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"

RAWF=$T/raw
: >"$RAWF"
put() { echo "$1 $2 $3 $4 $5" >>"$RAWF"; }	# WORKLOAD CONFIG REP METRIC VALUE

# The workload's command line ("$@" of the caller) and its comm.
wl_comm() {
	case $1 in
	spin) echo spin ;;
	spin-nofp) echo spin-nofp ;;
	chain) echo unw_chain ;;
	qsort) echo unw_qsort ;;
	threads) echo unw_threads ;;
	python) basename "$PYTHON" | cut -c1-15 ;;	# exec by the symlink: comm python3
	esac
}

# bpf_poll PID OUT: until PID exits, every 0.2 s, the sums of run_time_ns
# and run_cnt of its perf_event programs (prog_type 7) and the memlock of
# its maps, one "NS CNT MEMLOCK" line each.  The counters only grow while
# the programs live: the reading with the largest count is the last whole
# one (a reading while bpfsym exits may miss programs already closed).
bpf_poll() {
	while kill -0 "$1" 2>/dev/null; do
		for f in /proc/"$1"/fdinfo/*; do
			awk '/^prog_type:/ { t = $2 } /^map_type:/ { m = 1 } /^memlock:/ { ml = $2 }
			     /^run_time_ns:/ { n = $2 } /^run_cnt:/ { c = $2 }
			     END { if (t == 7) print n + 0, c + 0, 0; else if (m) print 0, 0, ml + 0 }' "$f" 2>/dev/null
		done | awk '{ n += $1; c += $2; m += $3 } END { if (NR) print n + 0, c + 0, m + 0 }' >>"$2"
		sleep 0.2
	done
}

# Busy jiffies of the whole machine (/proc/stat, USER_HZ).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
# utime+stime ticks of the processes PIDS and their children (running, and
# reaped: cutime, cstime).
tree_ticks() {
	for p in "$@" $(for q in "$@"; do ps -o pid= --ppid "$q" 2>/dev/null; done); do
		awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$p/stat" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

# Wait until the machine has been idle (under 0.1 CPU busy) for 0.5 s.
wait_quiet() {
	waited=0
	while :; do
		a=$(busy_ticks); sleep 0.5; b=$(busy_ticks)
		busy=$(echo "$a $b $(getconf CLK_TCK)" | awk '{ print ($2 - $1) / $3 / 0.5 }')
		awk -v b="$busy" 'BEGIN { exit !(b < 0.1) }' && return 0
		if [ "$waited" -ge "$QUIET_MAX" ]; then
			log "machine still busy ($busy CPUs) after ${QUIET_MAX}s; measuring anyway"
			return 0
		fi
		sleep 1
		waited=$((waited + 1))
	done
}

# profiler_pid TIMEPID: the profiler /usr/bin/time runs (its child), once
# it is there (2 s at most); empty when it never was.
profiler_pid() {
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		p=$(ps -o pid= --ppid "$1" 2>/dev/null | awk 'NR == 1 { print $1 }')
		[ -n "$p" ] && { echo "$p"; return; }
		kill -0 "$1" 2>/dev/null || return
		sleep 0.1
	done
}

# completeness FILE KIND COMM: "SAMPLES COMPLETE" of COMM's samples; KIND
# folded (bpfsym report --folded) or script (perf script -F comm,ip,sym).
completeness() {
	if [ "$2" = folded ]; then
		awk -v comm="$3" -v roots="$ROOTS" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
		{
			c = $NF
			stack = substr($0, 1, length($0) - length($NF) - 1)
			k = split(stack, f, ";")
			if (f[1] != comm)
				next
			t += c
			for (i = 2; i <= k; i++) {
				s = f[i]
				sub(/@.*/, "", s)
				if (s in root) { ok += c; break }
			}
		}
		END { print t + 0, ok + 0 }' "$1"
	else
		awk -v comm="$3" -v roots="$ROOTS" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
		function flush() { if (want) { t++; if (hit) ok++ } want = 0; hit = 0 }
		/^[^ \t]/ { flush(); want = ($1 == comm); next }
		want && /^[ \t]/ { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); sub(/@.*/, "", s); if (s in root) hit = 1 }
		END { flush(); print t + 0, ok + 0 }' "$1"
	fi
}

# run_one WORKLOAD CONFIG REP
run_one() {
	wl=$1 cfg=$2 rep=$3
	out=$T/$wl.$cfg.$rep.data
	cpuf=$T/$wl.cpu
	rm -f "$cpuf" "$out"
	case $wl in
	spin) set -- "$T/spin" "$DURATION" "$WORKERS" "$DEPTH" ;;
	spin-nofp) set -- "$T/spin-nofp" "$DURATION" "$WORKERS" "$DEPTH" ;;
	chain) set -- "$T/unw_chain" "$DURATION" "$cpuf" ;;
	qsort) set -- "$T/unw_qsort" "$DURATION" "$cpuf" ;;
	threads) set -- "$T/unw_threads" "$DURATION" "$cpuf" ;;
	python) set -- "$PYTHON" "$T/loop.py" "$DURATION" ;;
	esac
	case $cfg in
	base) ;;
	bdwarf) set -- "$BPFSYM" record -f -q -F "$FREQ" --call-graph dwarf -o "$out" -- "$@" ;;
	bfp) set -- "$BPFSYM" record -f -q -F "$FREQ" --call-graph fp -o "$out" -- "$@" ;;
	bnoint) set -- "$BPFSYM" record -f -q -F "$FREQ" --no-interp -o "$out" -- "$@" ;;
	pdwarf) set -- perf record -q -N --call-graph dwarf -e cpu-clock -F "$FREQ" -o "$out" -- "$@" ;;
	pfp) set -- perf record -q -N -g -e cpu-clock -F "$FREQ" -o "$out" -- "$@" ;;
	esac
	log "$wl rep $rep $cfg"
	wait_quiet
	: >"$T/poll"
	s0=$(busy_ticks)
	/usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" >"$T/wl.out" 2>"$T/err" &
	tp=$!
	BG=$tp
	case $cfg in
	bdwarf | bfp | bnoint)
		pp=$(profiler_pid "$tp")
		[ -n "$pp" ] && bpf_poll "$pp" "$T/poll" ;;
	esac
	wait "$tp"
	rc=$?
	s1=$(busy_ticks)
	BG=""
	if [ $rc -ne 0 ]; then
		log "$wl $cfg failed (status $rc): $(grep -v '^Command exited' "$T/err" | head -1)"
		put "$wl" "$cfg" "$rep" failed 1
		return
	fi
	read -r wall u s rss <"$T/time"
	# Other CPU: the machine's busy time over the run minus the run's own
	# (/usr/bin/time: the profiler and the workload, its children).
	put "$wl" "$cfg" "$rep" other "$(awk -v a="$s0" -v b="$s1" -v hz="$(getconf CLK_TCK)" -v u="$u" -v s="$s" \
		'BEGIN { o = (b - a) / hz - u - s; printf "%.2f", o < 0 ? 0 : o }')"
	# The workload's own CPU time and work.
	case $wl in
	spin | spin-nofp)
		read -r _ units _ _ _ _ _ rate _ wcpu <"$T/wl.out"
		put "$wl" "$cfg" "$rep" rate "$rate"
		put "$wl" "$cfg" "$rep" cpurate "$(awk -v u="$units" -v c="$wcpu" 'BEGIN { if (c > 0) printf "%.1f", u / c; else print 0 }')" ;;
	python)
		wcpu=$(awk '$1 == "units" { print $4 }' "$T/wl.out") ;;
	*)
		wcpu=$(awk '{ s += $2 } END { printf "%.3f", s }' "$cpuf" 2>/dev/null) ;;
	esac
	put "$wl" "$cfg" "$rep" wall "$wall"
	put "$wl" "$cfg" "$rep" wcpu "${wcpu:-0}"
	[ "$cfg" = base ] && return
	put "$wl" "$cfg" "$rep" cpu "$(awk -v u="$u" -v s="$s" -v w="${wcpu:-0}" 'BEGIN { c = u + s - w; printf "%.3f", c < 0 ? 0 : c }')"
	put "$wl" "$cfg" "$rep" rss_kb "$rss"
	bytes=$(wc -c <"$out" | tr -d ' ')
	put "$wl" "$cfg" "$rep" bytes "$bytes"
	comm=$(wl_comm "$wl")
	case $cfg in
	bdwarf | bfp | bnoint)
		"$BPFSYM" report "$out" --limit 1 >"$T/rep" 2>/dev/null || log "bpfsym report $out failed"
		samples=$(sed -n 's/^# samples: \([0-9]*\).*/\1/p' "$T/rep" | head -1)
		"$BPFSYM" report "$out" --folded >"$T/folded" 2>/dev/null
		set -- $(completeness "$T/folded" folded "$comm")
		grep '^# user stacks ended:' "$T/rep" | sed "s/^/$me: $wl $cfg: /" >&2
		if [ -s "$T/poll" ]; then
			set -- $(head -1 "$T/poll") $(sort -k2,2n "$T/poll" | tail -1) "$@"
			put "$wl" "$cfg" "$rep" bpf_ns_run "$(awk -v n="$(($4 - $1))" -v c="$(($5 - $2))" 'BEGIN { if (c > 0) printf "%.0f", n / c; else print "nan" }')"
			put "$wl" "$cfg" "$rep" bpf_ns_sample "$(awk -v n="$(($4 - $1))" -v c="${samples:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c; else print "nan" }')"
			put "$wl" "$cfg" "$rep" memlock "$(sort -k3,3n "$T/poll" | tail -1 | awk '{ print $3 }')"
			shift 6
		fi ;;
	*)
		perf script -i "$out" -F comm,ip,sym 2>/dev/null >"$T/script"
		samples=$(grep -c '^[^ 	]' "$T/script")
		set -- $(completeness "$T/script" script "$comm") ;;
	esac
	put "$wl" "$cfg" "$rep" samples "${samples:-0}"
	put "$wl" "$cfg" "$rep" bps "$(awk -v b="$bytes" -v n="${samples:-0}" 'BEGIN { if (n > 0) printf "%.1f", b / n; else print "nan" }')"
	put "$wl" "$cfg" "$rep" wsamples "$1"
	put "$wl" "$cfg" "$rep" complete "$(awk -v t="$1" -v c="$2" 'BEGIN { if (t > 0) printf "%.1f", 100 * c / t; else print "nan" }')"
	rm -f "$out"
}

# run_system CONFIG REP: the whole machine for DURATION s while a mix runs.
run_system() {
	cfg=$1 rep=$2 wl=system
	out=$T/system.$cfg.$rep.data
	rm -f "$out"
	case $cfg in
	bdwarf) set -- "$BPFSYM" record -f -q -a -F "$FREQ" --call-graph dwarf -d "$DURATION" -o "$out" ;;
	bfp) set -- "$BPFSYM" record -f -q -a -F "$FREQ" --call-graph fp -d "$DURATION" -o "$out" ;;
	bnoint) set -- "$BPFSYM" record -f -q -a -F "$FREQ" --no-interp -d "$DURATION" -o "$out" ;;
	pdwarf) set -- perf record -q -N -a --call-graph dwarf -e cpu-clock -F "$FREQ" -o "$out" -- sleep "$DURATION" ;;
	pfp) set -- perf record -q -N -a -g -e cpu-clock -F "$FREQ" -o "$out" -- sleep "$DURATION" ;;
	esac
	log "system rep $rep $cfg"
	wait_quiet
	long=$((DURATION * 3 + 10))
	"$T/spin-nofp" "$long" 1 "$DEPTH" >/dev/null &
	m1=$!
	"$PYTHON" "$T/loop.py" "$long" >/dev/null &
	m2=$!
	"$T/unw_qsort" "$long" >/dev/null &
	m3=$!
	BG="$m1 $m2 $m3"
	sleep 1
	: >"$T/poll"
	s0=$(busy_ticks) t0=$(tree_ticks $m1 $m2 $m3)
	/usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" >"$T/out" 2>"$T/err" &
	tp=$!
	BG="$BG $tp"
	case $cfg in
	bdwarf | bfp | bnoint)
		pp=$(profiler_pid "$tp")
		[ -n "$pp" ] && bpf_poll "$pp" "$T/poll" ;;
	esac
	wait "$tp"
	rc=$?
	s1=$(busy_ticks) t1=$(tree_ticks $m1 $m2 $m3)
	# spin's workers first: they outlive their parent
	for p in $(ps -o pid= --ppid "$m1" 2>/dev/null) $m1 $m2 $m3; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $m1 $m2 $m3; do
		wait "$p" 2>/dev/null
	done
	BG=""
	if [ $rc -ne 0 ]; then
		log "system $cfg failed (status $rc): $(grep -v '^Command exited' "$T/err" | head -1)"
		put system "$cfg" "$rep" failed 1
		return
	fi
	read -r wall u s rss <"$T/time"
	put system "$cfg" "$rep" other "$(awk -v a="$s0" -v b="$s1" -v ta="$t0" -v tb="$t1" -v hz="$(getconf CLK_TCK)" -v u="$u" -v s="$s" \
		'BEGIN { o = (b - a - (tb - ta)) / hz - u - s; printf "%.2f", o < 0 ? 0 : o }')"
	put system "$cfg" "$rep" cpu "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')"
	put system "$cfg" "$rep" rss_kb "$rss"
	bytes=$(wc -c <"$out" | tr -d ' ')
	put system "$cfg" "$rep" bytes "$bytes"
	case $cfg in
	bdwarf | bfp | bnoint)
		"$BPFSYM" report "$out" --limit 1 >"$T/rep" 2>/dev/null || log "bpfsym report $out failed"
		samples=$(sed -n 's/^# samples: \([0-9]*\).*/\1/p' "$T/rep" | head -1)
		"$BPFSYM" report "$out" --folded >"$T/folded" 2>/dev/null
		c1=$(completeness "$T/folded" folded spin-nofp)
		c2=$(completeness "$T/folded" folded "$(wl_comm python)")
		c3=$(completeness "$T/folded" folded unw_qsort)
		# The recorder's lines about its unwind tables (see the top of
		# this file), shown verbatim and parsed.
		{ grep -Ei '^bpfsym: .*unwind[ -]tables?' "$T/err"; grep -Ei '^# .*unwind[ -]tables?' "$T/rep"; } >"$T/tables"
		sed "s/^/$me: system $cfg: /" "$T/tables" >&2
		grep '^# user stacks ended:' "$T/rep" | sed "s/^/$me: system $cfg: /" >&2
		if [ -s "$T/tables" ]; then
			awk '
			# "X UNIT" right before the first match of RE in the line, as a number
			function before(line, re,   p, w, n) {
				p = match(line, re)
				if (!p) return ""
				n = split(substr(line, 1, p - 1), w, " ")
				return (n >= 1 && w[n] ~ /^[0-9.]+$/) ? w[n] + 0 : ""
			}
			function after(line, re,   p, w) {
				p = match(line, re)
				if (!p) return ""
				split(substr(line, p + RLENGTH), w, " ")
				return (w[1] ~ /^[0-9.]+$/) ? w[1] + 0 : ""
			}
			{
				l = $0
				if ((v = before(l, " files? \\(")) != "") files = v
				if ((v = before(l, " not built")) != "") notbuilt = v
				if ((v = before(l, " rows?[,;]")) != "") rows = v
				if ((v = before(l, " KiB")) != "") mib = v / 1024
				if ((v = before(l, " MiB")) != "") mib = v
				if ((v = before(l, " GiB")) != "") mib = v * 1024
				if ((v = after(l, "built in ")) != "") { ms = v; if (l ~ /built in [0-9.]+ s[ ,;)]/) ms *= 1000 }
				if ((v = after(l, "longest file ")) != "") { lms = v; if (l ~ /longest file [0-9.]+ s[ ,;)]/) lms *= 1000 }
			}
			END {
				if (files != "") print "tab_files", files
				if (notbuilt != "") print "tab_notbuilt", notbuilt
				if (rows != "") print "tab_rows", rows
				if (mib != "") printf "tab_mib %.2f\n", mib
				if (ms != "") printf "tab_ms %.1f\n", ms
				if (lms != "") printf "tab_longest_ms %.1f\n", lms
			}' "$T/tables" | while read -r k v; do put system "$cfg" "$rep" "$k" "$v"; done
		fi
		if [ -s "$T/poll" ]; then
			set -- $(head -1 "$T/poll") $(sort -k2,2n "$T/poll" | tail -1)
			put system "$cfg" "$rep" bpf_ns_run "$(awk -v n="$(($4 - $1))" -v c="$(($5 - $2))" 'BEGIN { if (c > 0) printf "%.0f", n / c; else print "nan" }')"
			put system "$cfg" "$rep" bpf_ns_sample "$(awk -v n="$(($4 - $1))" -v c="${samples:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c; else print "nan" }')"
			put system "$cfg" "$rep" memlock "$(sort -k3,3n "$T/poll" | tail -1 | awk '{ print $3 }')"
		fi ;;
	*)
		perf script -i "$out" -F comm,ip,sym 2>/dev/null >"$T/script"
		samples=$(grep -c '^[^ 	]' "$T/script")
		c1=$(completeness "$T/script" script spin-nofp)
		c2=$(completeness "$T/script" script "$(wl_comm python)")
		c3=$(completeness "$T/script" script unw_qsort) ;;
	esac
	put system "$cfg" "$rep" samples "${samples:-0}"
	put system "$cfg" "$rep" bps "$(awk -v b="$bytes" -v n="${samples:-0}" 'BEGIN { if (n > 0) printf "%.1f", b / n; else print "nan" }')"
	set -- $c1 $c2 $c3
	put system "$cfg" "$rep" wsamples "$(($1 + $3 + $5))"
	put system "$cfg" "$rep" complete "$(awk -v t="$(($1 + $3 + $5))" -v c="$(($2 + $4 + $6))" 'BEGIN { if (t > 0) printf "%.1f", 100 * c / t; else print "nan" }')"
	rm -f "$out"
}

reverse() { r=""; for w in "$@"; do r="$w${r:+ $r}"; done; echo "$r"; }

log "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs, -F $FREQ, ${DURATION}s, $REPS reps"
log "$BPFSYM (repository at $(git describe --always --dirty 2>/dev/null || echo '?')), $(perf --version), $("$PYTHON" --version 2>&1)"
rep=1
while [ "$rep" -le "$REPS" ]; do
	list=$CONFIGS
	[ $((rep % 2)) -eq 0 ] && list=$(reverse $list)
	for wl in $WORKLOADS; do
		for cfg in $list; do
			run_one "$wl" "$cfg" "$rep"
		done
	done
	if [ "$SYSTEM" = 1 ]; then
		for cfg in $list; do
			[ "$cfg" = base ] || run_system "$cfg" "$rep"
		done
	fi
	rep=$((rep + 1))
done
[ -n "${RAW:-}" ] && cp "$RAWF" "$RAW"

# ---- tables: medians over the repetitions that did not fail
echo "## raw (workload config rep metric value)"
echo
sort -k1,1 -k2,2 -k3,3n -k4,4 "$RAWF" | sed 's/^/    /'
echo
awk '
$4 != "failed" && $5 != "nan" { k = $1 " " $2 " " $4; n[k]++; v[k, n[k]] = $5 }
$4 == "failed" { failed[$1 " " $2]++ }
function median(key, m,   i, j, t, a) {
	for (i = 1; i <= m; i++) a[i] = v[key, i]
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m/2] + a[m/2 + 1]) / 2
}
END {
	for (k in n) print k, median(k, n[k])
	for (k in failed) print k, "failed", failed[k]
}' "$RAWF" >"$T/med"

cell() { # WORKLOAD CONFIG METRIC FORMAT
	awk -v k="$1 $2 $3" -v p="$4" -v f="$1 $2 failed" '
	{ key = $1 " " $2 " " $3 } key == k { v = $4 } key == f { bad = $4 }
	END { if (v != "") printf p, v; else if (bad) printf "failed"; else printf "-" }' "$T/med"
}
slow() { # WORKLOAD CONFIG METRIC: % below the baseline
	awk -v w="$1" -v c="$2" -v m="$3" '
	$1 == w && $2 == "base" && $3 == m { b = $4 } $1 == w && $2 == c && $3 == m { x = $4 }
	END { if (b > 0 && x != "") printf "%.2f", 100 * (1 - x / b); else printf "-" }' "$T/med"
}
row() { # LABEL WORKLOAD METRIC FORMAT
	printf "| %s |" "$1"
	for c in bdwarf bfp bnoint pdwarf pfp; do printf " %s |" "$(cell "$2" "$c" "$3" "$4")"; done
	echo
}

for wl in $WORKLOADS; do
	echo "## $wl, -F $FREQ, median of $REPS"
	echo
	echo "| metric | bpfsym dwarf | bpfsym fp | bpfsym --no-interp | perf dwarf | perf -g |"
	echo "|---|---|---|---|---|---|"
	row "completeness, % of the workload's stacks reaching the root" "$wl" complete "%.1f"
	row "BPF ns per run (perf_event prog)" "$wl" bpf_ns_run "%.0f"
	row "BPF ns per recorded sample" "$wl" bpf_ns_sample "%.0f"
	row "samples" "$wl" samples "%d"
	row "samples of the workload" "$wl" wsamples "%d"
	row "bytes per sample" "$wl" bps "%.1f"
	row "recorder CPU, s (user+sys, the workload's own removed)" "$wl" cpu "%.2f"
	row "max RSS, KiB (recorder or workload)" "$wl" rss_kb "%d"
	row "BPF map memory (memlock), bytes" "$wl" memlock "%d"
	row "other CPU during the run, s (noise)" "$wl" other "%.2f"
	case $wl in
	spin | spin-nofp)
		printf "| workload rate, units/s (baseline %s) |" "$(cell "$wl" base rate "%.0f")"
		for c in bdwarf bfp bnoint pdwarf pfp; do printf " %s |" "$(cell "$wl" "$c" rate "%.0f")"; done
		echo
		printf "| slowdown vs baseline, %% |"
		for c in bdwarf bfp bnoint pdwarf pfp; do printf " %s |" "$(slow "$wl" "$c" rate)"; done
		echo
		printf "| slowdown per workload CPU-s (in-kernel cost), %% |"
		for c in bdwarf bfp bnoint pdwarf pfp; do printf " %s |" "$(slow "$wl" "$c" cpurate)"; done
		echo ;;
	*)
		printf "| wall time of the command, s, profiler start-up and end included (baseline %s) |" "$(cell "$wl" base wall "%.2f")"
		for c in bdwarf bfp bnoint pdwarf pfp; do printf " %s |" "$(cell "$wl" "$c" wall "%.2f")"; done
		echo ;;
	esac
	echo
done

if [ "$SYSTEM" = 1 ]; then
	echo "## record -a, ${DURATION}s, -F $FREQ, spin-nofp (1 worker) + python + qsort running, median of $REPS"
	echo
	echo "| metric | bpfsym dwarf | bpfsym fp | bpfsym --no-interp | perf dwarf | perf -g |"
	echo "|---|---|---|---|---|---|"
	row "completeness of the mix's stacks, %" system complete "%.1f"
	row "BPF ns per run (perf_event prog)" system bpf_ns_run "%.0f"
	row "BPF ns per recorded sample" system bpf_ns_sample "%.0f"
	row "samples" system samples "%d"
	row "bytes per sample" system bps "%.1f"
	row "recorder CPU, s (user+sys)" system cpu "%.2f"
	row "recorder max RSS, KiB" system rss_kb "%d"
	row "BPF map memory (memlock), bytes" system memlock "%d"
	row "other CPU during the run, s (noise; the mix excluded)" system other "%.2f"
	row "unwind tables: files (header)" system tab_files "%d"
	row "unwind tables: files not built when recording ended (header)" system tab_notbuilt "%d"
	row "unwind tables: rows (header)" system tab_rows "%d"
	row "unwind tables: MiB of BPF maps (header)" system tab_mib "%.2f"
	row "unwind tables: build CPU time, ms (header)" system tab_ms "%.1f"
	row "unwind tables: longest file, ms (header)" system tab_longest_ms "%.1f"
	echo
fi
