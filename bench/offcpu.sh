#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/offcpu.sh: what recording off-CPU time costs at ~50k context
# switches a second on 2 CPUs (issue 28): `bpfsym record --off-cpu`
# against the bpftrace program of tests/fixtures/offcpu.bt (bcc
# offcputime's work: kernel stack at switch-out, time summed by stack and
# thread at switch-in, no user stack) on the same workload, in the same
# run, as a ratio.
#
#   sudo bench/offcpu.sh                  # from the repository root
#   RATE=50000 DURATION=10 REPS=3 MODES="a p" sudo -E bench/offcpu.sh
#
# The workload is tests/fixtures/offcpu.c's pingpong: two threads passing a
# byte over two pipes, paced to RATE context switches a second in total.
# Each tool runs on it in turn ("none" first, the workload alone), in
# MODES: "a" the whole system (bpfsym -a, bpftrace unfiltered), "p" the
# workload's process only (bpfsym -p, bpftrace filtered on its pid).  Over
# a window of DURATION seconds, after a second of warm-up:
#   - the workload's context switches (voluntary + involuntary, from
#     /proc/PID/task/*/status) and the system's (ctxt in /proc/stat);
#   - the BPF run time of every program the tool holds
#     (kernel.bpf_stats_enabled=1, restored after; run_time_ns and run_cnt
#     from /proc/TOOL/fdinfo), by program;
#   - the tool's own CPU time (/proc/TOOL/task/*/schedstat, ns);
#   - the machine's busy time (wall time x CPUs minus /proc/stat's idle and
#     iowait): all a tool costs, the work of its tracepoint outside its
#     program included (a classic tracepoint fills a perf record first);
# and prints, per tool and mode, the medians of REPS runs: BPF ns per run
# of each program, BPF + tool CPU per workload switch and per system
# switch, the busy time added over the workload alone per workload switch,
# and bpfsym's cost over bpftrace's by each.  With -a every
# switch on the machine runs the programs: when other work switches too
# (the system rate is far above the workload's), per system switch is the
# fairer of the two; with -p, per workload switch.  bpfsym also samples CPU (-F FREQ, default 99): its
# perf_event program's time is in its total and shown apart.
#
# Needs bpftrace (Debian's), a C compiler; BPFSYM: the binary to measure
# (default ./bpfsym, built if missing).  A bpfsym without --off-cpu is left
# out (its rows say so) and the bpftrace half still runs.

set -u

RATE=${RATE:-50000}
DURATION=${DURATION:-10}
REPS=${REPS:-3}
MODES=${MODES:-"a p"}
FREQ=${FREQ:-99}
TOOLS="none bpftrace bpfsym"

me=offcpu.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF needs it)"
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
command -v bpftrace >/dev/null 2>&1 || die "bpftrace is not installed (apt-get install bpftrace)"
HAVE_OFFCPU=1
"$BPFSYM" record --help 2>&1 | grep -q -- '--off-cpu' || HAVE_OFFCPU=0
[ $HAVE_OFFCPU = 1 ] || log "$BPFSYM has no --off-cpu: its half is left out"

T=$(mktemp -d /tmp/bpfsym-offcpu.XXXXXX) || die "mktemp failed"
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
BG=""
cleanup() {
	for p in $BG; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	-o "$T/offcpu" tests/fixtures/offcpu.c -pthread || die "cannot build tests/fixtures/offcpu.c"
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"

# progs PID: "ID RUN_TIME_NS RUN_CNT" of each BPF program process PID holds
# a file descriptor of (each program once).
progs() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ { i = $2 } /^run_time_ns:/ { n = $2 } /^run_cnt:/ { c = $2 }
			END { if (i != "") printf "%s %.0f %.0f\n", i, n, c }' "$f" 2>/dev/null
	done | sort -u -k1,1
}

# switch_runs PID: true once PID holds a sched_switch program that has run.
switch_runs() {
	progs "$1" | {
		while read -r id n c; do
			[ "$c" -gt 0 ] && case "$(prog_name "$id")" in on_switch/*) exit 0 ;; esac
		done
		exit 1
	}
}

# task_ns PID: CPU time (ns) of PID's threads (schedstat's first field).
task_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# switches PID: context switches of PID's threads so far.
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { printf "%.0f\n", s }'
}

sys_ctxt() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}

# idle_ms: the machine's idle and iowait time so far, all CPUs (ms; /proc/stat's
# idle is measured at each idle entry and exit under NOHZ, not sampled).
idle_ms() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.0f\n", ($5 + $6) * 1000 / hz; exit }' /proc/stat
}

# prog_name ID: the program's name and type, as bpftool shows them.
prog_name() {
	bpftool prog show id "$1" 2>/dev/null | awk 'NR == 1 { sub(/:$/, "", $2); print $4 "/" $2; exit }'
}

# run TOOL MODE REP: one window; appends to $T/raw
#   TOOL MODE REP fx_switches sys_ctxt tool_cpu_ns
#   and per program: "prog TOOL MODE REP NAME RUN_NS RUN_CNT"
run() {
	tool=$1 mode=$2 rep=$3 cpu0=0
	rm -f "$T/fx.ready"
	"$T/offcpu" -w -r "$RATE" $((DURATION + 60)) pingpong >"$T/fx.ready" 2>"$T/fx.err" &
	fx=$!
	BG=$fx
	n=0
	until grep -q "^ready $fx\$" "$T/fx.ready" 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 100 ] && die "the workload did not start: $(cat "$T/fx.err")"
		sleep 0.1
	done
	target=$fx
	[ "$mode" = a ] && target=0
	tp=
	case $tool in
	bpftrace)
		bpftrace -B line -e "BEGIN { printf(\"attached\\n\"); } $(cat tests/fixtures/offcpu.bt)" \
			"$target" >"$T/bt.out" 2>"$T/bt.err" &
		tp=$!
		;;
	bpfsym)
		rm -f "$T/b.data"
		if [ "$mode" = a ]; then
			"$BPFSYM" record -q --off-cpu -F "$FREQ" -a -o "$T/b.data" >/dev/null 2>"$T/bs.err" &
		else
			"$BPFSYM" record -q --off-cpu -F "$FREQ" -p "$fx" -o "$T/b.data" >/dev/null 2>"$T/bs.err" &
		fi
		tp=$!
		;;
	esac
	BG="$fx $tp"
	if [ -n "$tp" ]; then
		n=0
		while :; do
			[ "$tool" = bpftrace ] && grep -q '^attached' "$T/bt.out" 2>/dev/null && break
			# The file is made before anything loads: wait for the sched_switch program to run.
			[ "$tool" = bpfsym ] && switch_runs "$tp" && break
			kill -0 "$tp" 2>/dev/null || die "$tool did not start: $(tail -2 "$T/bt.err" "$T/bs.err" 2>/dev/null)"
			n=$((n + 1))
			[ $n -gt 600 ] && die "$tool did not attach within 60 s"
			sleep 0.1
		done
	fi
	kill -USR1 "$fx"
	sleep 1
	s0=$(switches "$fx") c0=$(sys_ctxt) i0=$(idle_ms) w0=$(date +%s%N)
	if [ -n "$tp" ]; then
		cpu0=$(task_ns "$tp")
		progs "$tp" >"$T/p0"
	fi
	sleep "$DURATION"
	s1=$(switches "$fx") c1=$(sys_ctxt) i1=$(idle_ms) w1=$(date +%s%N)
	cpu1=0
	if [ -n "$tp" ]; then
		cpu1=$(task_ns "$tp")
		progs "$tp" >"$T/p1"
	fi
	# The machine's busy time in the window: all it did, the tool's kernel
	# paths outside its programs (a tracepoint's own work) included.
	busy=$(awk -v w="$(( (w1 - w0) / 1000000 ))" -v i="$((i1 - i0))" -v n="$(nproc)" 'BEGIN { printf "%.0f", w * n - i }')
	echo "$tool $mode $rep $((s1 - s0)) $((c1 - c0)) $((cpu1 - cpu0)) $busy" >>"$T/raw"
	if [ -n "$tp" ]; then
		join "$T/p0" "$T/p1" | while read -r id n0 r0 n1 r1; do
			echo "prog $tool $mode $rep $(prog_name "$id") $((n1 - n0)) $((r1 - r0))"
		done >>"$T/raw"
		kill -INT "$tp" 2>/dev/null
	fi
	kill -TERM "$fx" 2>/dev/null
	wait "$fx" 2>/dev/null
	[ -n "$tp" ] && wait "$tp" 2>/dev/null
	BG=""
}

: >"$T/raw"
rep=1
while [ "$rep" -le "$REPS" ]; do
	for mode in $MODES; do
		for tool in $TOOLS; do
			[ "$tool" = bpfsym ] && [ $HAVE_OFFCPU = 0 ] && continue
			log "rep $rep, -$mode, $tool"
			run "$tool" "$mode" "$rep"
		done
	done
	rep=$((rep + 1))
done
[ -n "${RAW:-}" ] && cp "$T/raw" "$RAW"

# med: the median of the numbers on stdin.
med() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo "## Off-CPU recording at $RATE context switches a second (median of $REPS; ${DURATION} s windows; bpfsym -F $FREQ)"
echo
echo "| tool | target | workload switches/s | system switches/s | BPF ms | tool CPU ms | BPF + CPU per workload switch | per system switch | / bpftrace (per workload, per system switch) | machine busy ms | added per workload switch | / bpftrace |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for mode in $MODES; do
	bt_cost= bt_sys= bt_add= none_busy=
	for tool in $TOOLS; do
		if [ "$tool" = bpfsym ] && [ $HAVE_OFFCPU = 0 ]; then
			echo "| bpfsym | -$mode | (no --off-cpu in this binary) | | | | | | |"
			continue
		fi
		# Per rep: switches, BPF ns (all programs), CPU ns.
		awk -v t="$tool" -v m="$mode" '$1 == t && $2 == m { print $3, $4, $5, $6, $7 }' "$T/raw" >"$T/rows"
		awk -v t="$tool" -v m="$mode" '$1 == "prog" && $2 == t && $3 == m { b[$4] += $6 } END { for (r in b) printf "%s %.0f\n", r, b[r] }' \
			"$T/raw" >"$T/bpf"
		sort -k1,1 "$T/rows" >"$T/rows.s"; sort -k1,1 "$T/bpf" >"$T/bpf.s"
		join "$T/rows.s" "$T/bpf.s" 2>/dev/null >"$T/j" || true
		[ -s "$T/j" ] || awk '{ print $0, 0 }' "$T/rows" >"$T/j"
		sw=$(awk -v d="$DURATION" '{ print $2 / d }' "$T/j" | med)
		sy=$(awk -v d="$DURATION" '{ print $3 / d }' "$T/j" | med)
		bpf=$(awk '{ print (NF > 5 ? $6 : 0) / 1e6 }' "$T/j" | med)
		busy=$(awk '{ print $5 }' "$T/j" | med)
		[ "$tool" = none ] && none_busy=$busy
		add=$(awk -v nb="${none_busy:-0}" '{ print ($2 > 0) ? ($5 - nb) * 1e6 / $2 : 0 }' "$T/j" | med)
		cpu=$(awk '{ print $4 / 1e6 }' "$T/j" | med)
		per=$(awk '{ print ($2 > 0) ? ((NF > 5 ? $6 : 0) + $4) / $2 : 0 }' "$T/j" | med)
		persys=$(awk '{ print ($3 > 0) ? ((NF > 5 ? $6 : 0) + $4) / $3 : 0 }' "$T/j" | med)
		ratio=- aratio=-
		[ "$tool" = bpftrace ] && bt_cost=$per bt_sys=$persys bt_add=$add
		if [ "$tool" = bpfsym ] && [ -n "$bt_cost" ]; then
			ratio=$(awk -v a="$per" -v b="$bt_cost" -v c="$persys" -v d="$bt_sys" \
				'BEGIN { printf "%.2f, %.2f", (b > 0) ? a / b : 0, (d > 0) ? c / d : 0 }')
			aratio=$(awk -v a="$add" -v b="$bt_add" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
		fi
		if [ "$tool" = none ]; then
			echo "| (workload alone) | -$mode | $sw | $sy | | | | | | $busy | | |"
		else
			echo "| $tool | -$mode | $sw | $sy | $bpf | $cpu | $per ns | $persys ns | $ratio | $busy | $add ns | $aratio |"
		fi
	done
done
echo
echo "BPF programs (median of $REPS): ns per run, runs a second"
echo
echo "| tool | target | program | ns/run | runs/s |"
echo "|---|---|---|---|---|"
awk '$1 == "prog" { print $2, $3, $5 }' "$T/raw" | sort -u | while read -r tool mode name; do
	nsr=$(awk -v t="$tool" -v m="$mode" -v p="$name" '$1 == "prog" && $2 == t && $3 == m && $5 == p && $7 > 0 { print $6 / $7 }' "$T/raw" | med)
	rps=$(awk -v t="$tool" -v m="$mode" -v p="$name" -v d="$DURATION" '$1 == "prog" && $2 == t && $3 == m && $5 == p { print $7 / d }' "$T/raw" | med)
	echo "| $tool | -$mode | $name | $nsr | $rps |"
done
