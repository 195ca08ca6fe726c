#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/sampling.sh: sampling overhead, losses and report size of
# `bpfsym record -a` against `perf record -a -g -e cpu-clock`, measured in
# the same run on the same workload (bench/spin.c: one busy process per
# CPU, each counting the units of work it finishes).
#
#   sudo bench/sampling.sh                 # from the repository root
#   DURATION=10 REPS=5 sudo -E bench/sampling.sh
#
# For every frequency in FREQS and every repetition, each configuration
# runs once, in forward order on odd repetitions and reverse order on even
# ones (so drift does not favour one side):
#   base    no profiler
#   perf    perf record -a -g -e cpu-clock -F HZ
#   perfz   the same with -z (zstd), if perf has zstd
#   dwarf   perf record -a --call-graph dwarf -e cpu-clock -F HZ (at DWARF_FREQ only)
#   bpfsym  ./bpfsym record -a -F HZ (or $BPFSYM): its default, --call-graph dwarf
# The profiler starts LEAD s before the workload and stops TAIL s after it,
# so the workload only sees steady-state sampling; the profiler's CPU time
# (/usr/bin/time, user+sys) is for its whole life, start-up and
# finalisation included.  bpfsym's BPF time per sample is the delta of
# run_time_ns/run_cnt of its perf_event program (bpftool prog show, with
# kernel.bpf_stats_enabled=1) over the workload's window.
#
# Output: raw per-run lines, then a Markdown table per frequency with
# medians and the bpfsym/perf ratio.  Environment: DURATION (workload
# seconds, default 5), REPS (3), FREQS ("99 999"), WORKERS (online CPUs),
# DEPTH (call depth of the workload, 8), LEAD (1), TAIL (1), QUIET_MAX (s
# to wait before a run for the machine to be idle, 20), BPFSYM (the binary
# to measure, default ./bpfsym), NOISE_MAX (CPUs of other load that make a
# run noisy, 0.1), DWARF_FREQ (the one frequency perf --call-graph dwarf
# runs at, 99: at 999 Hz it writes ~16 MB/s), RAW (a file to keep the raw
# results in); FROM_RAW=FILE
# prints the tables of such a file again without measuring.
#
# Noise: before each run the script waits (up to QUIET_MAX s) until the
# machine is idle; during the workload it measures the CPU time used by
# anything but the workload and the profiler ("other CPU") and the
# hypervisor's steal time, and reports both.  "units per workload CPU-s"
# is the workload's work over its own CPU time: with tick-based CPU
# accounting (no CONFIG_IRQ_TIME_ACCOUNTING) the sampling interrupt, perf's
# callchain walk and bpfsym's BPF program are charged to the workload, but
# the profiler process and other processes are not, so its slowdown is the
# in-kernel per-sample cost alone, and robust to other load.

set -u

DURATION=${DURATION:-5}
REPS=${REPS:-3}
FREQS=${FREQS:-"99 999"}
WORKERS=${WORKERS:-$(getconf _NPROCESSORS_ONLN)}
DEPTH=${DEPTH:-8}
LEAD=${LEAD:-1}
TAIL=${TAIL:-1}
QUIET_MAX=${QUIET_MAX:-20}
NOISE_MAX=${NOISE_MAX:-0.1}
DWARF_FREQ=${DWARF_FREQ:-99}

me=sampling.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

# The summary of a raw file (lines "hz config rep metric value"; "0 meta 0
# KEY VALUE" lines carry the settings).  A run is noisy when other
# processes used more than NOISE_MAX CPUs during its workload window; the
# medians leave noisy runs out (all runs are used for a configuration that
# has no quiet run, and the table says so).  Slowdowns compare the medians
# of each configuration with the median of the quiet baselines.
summarize() { # RAWFILE
	raw=$1
	eval "$(awk '$2 == "meta" { v = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", v); printf "%s=%s\n", toupper($4), v }' "$raw")"
	awk -v d="$DURATION" -v nmax="$NOISE_MAX" '
	FNR == NR { if ($4 == "other" && $5 / d > nmax) bad[$1 " " $2 " " $3] = 1; next }
	$2 == "meta" { next }
	{ k = $1 " " $2 " " $4; r = $1 " " $2 " " $3
	  an[k]++; av[k, an[k]] = $5
	  if (!(r in bad)) { n[k]++; v[k, n[k]] = $5 }
	  if ($4 == "rate") { runs[$1 " " $2]++; if (!(r in bad)) quiet[$1 " " $2]++ } }
	function median(arr, key, m,   i, j, t, a) {
		for (i = 1; i <= m; i++) a[i] = arr[key, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m/2] + a[m/2 + 1]) / 2 }
	END {
		for (k in an) print k, (n[k] > 0 ? median(v, k, n[k]) : median(av, k, an[k]))
		for (c in runs) print c, "runs", (quiet[c] + 0) "/" runs[c] (quiet[c] > 0 ? "" : " (all noisy: medians of all)")
	}' "$raw" "$raw" >"$T/med"
	awk '{ m[$1 " " $2 " " $3] = $4 }
	END { for (k in m) { split(k, a, " ")
		b = m[a[1] " base rate"]; bc = m[a[1] " base cpurate"]
		if (a[3] == "rate" && a[2] != "base" && b > 0) printf "%s %s slow %.2f\n", a[1], a[2], 100 * (1 - m[k] / b)
		if (a[3] == "cpurate" && a[2] != "base" && bc > 0) printf "%s %s slow_cpu %.2f\n", a[1], a[2], 100 * (1 - m[k] / bc) } }' \
		"$T/med" >>"$T/med"
	noisy=$(awk -v d="$DURATION" -v nmax="$NOISE_MAX" '$4 == "other" { n++; if ($5 / d > nmax) b++ } END { printf "%d of %d", b, n }' "$raw")
	echo "noisy runs (other processes above $NOISE_MAX CPU during the workload; left out of the medians): $noisy"
	echo
	case $noisy in
	0\ of*) ;;
	*) log "$noisy runs were noisy (other processes above $NOISE_MAX CPU during the workload): left out of the medians" ;;
	esac

	for hz in $FREQS; do
		echo "## -F $hz, $WORKERS workers x ${DURATION}s, median of the quiet runs of $REPS"
		echo
		awk -v hz="$hz" -v dur="$DURATION" -v tot="$TOTAL" -v ncpu="$WORKERS" '
		$1 == hz { x = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", x); m[$2, $3] = x; have[$2] = 1 }
		function f(x, p) { return x == "" ? "-" : sprintf(p, x) }
		function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0 || a ~ /\//) ? "-" : sprintf("%.2f", a / b) }
		function row(name, key, p, bps) {
			line = "| " name " | " f(m["perf", key], p) " | " f(m["bpfsym", key], p) " | " ratio(m["bpfsym", key], m["perf", key])
			line = line " | " (have["perfz"] ? f(m["perfz", key], p) : "-") " | " (have["dwarf"] ? f(m["dwarf", key], p) : "-") " |"
			print line }
		END {
			for (c in have) {
				if (m[c, "samples"] > 0) m[c, "bps"] = m[c, "bytes"] / m[c, "samples"]
				if (m[c, "cpu"] != "") m[c, "cpupct"] = 100 * m[c, "cpu"] / tot
			}
			print "| metric | perf -g | bpfsym | bpfsym/perf | perf -g -z | perf dwarf |"
			print "|---|---|---|---|---|---|"
			printf "| workload rate, units/s (baseline %.0f) |", m["base", "rate"]
			printf " %s | %s | %s | %s | %s |\n", f(m["perf", "rate"], "%.0f"), f(m["bpfsym", "rate"], "%.0f"),
				ratio(m["bpfsym", "rate"], m["perf", "rate"]), f(m["perfz", "rate"], "%.0f"), f(m["dwarf", "rate"], "%.0f")
			row("workload slowdown vs baseline, %", "slow", "%.2f")
			printf "| units per workload CPU-s (baseline %.0f) |", m["base", "cpurate"]
			printf " %s | %s | %s | %s | %s |\n", f(m["perf", "cpurate"], "%.0f"), f(m["bpfsym", "cpurate"], "%.0f"),
				ratio(m["bpfsym", "cpurate"], m["perf", "cpurate"]), f(m["perfz", "cpurate"], "%.0f"), f(m["dwarf", "cpurate"], "%.0f")
			row("slowdown per workload CPU-s (in-kernel cost), %", "slow_cpu", "%.2f")
			row("profiler CPU, user+sys s (whole run, " tot " s)", "cpu", "%.2f")
			row("profiler CPU, % of one CPU", "cpupct", "%.2f")
			row("profiler max RSS, KiB", "rss_kb", "%d")
			row("context switches of the profiler, voluntary", "vcsw", "%d")
			row("samples", "samples", "%d")
			row("samples of the workload (expected " sprintf("%.0f", ncpu * dur * hz) ")", "wsamples", "%d")
			row("samples of the profiler itself (comm perf / bpfsym)", "selfsamples", "%d")
			row("lost samples", "lost", "%d")
			row("bytes written", "bytes", "%d")
			row("bytes per sample", "bps", "%.1f")
			row("BPF ns per sample (perf_event prog)", "bpf_ns", "%.0f")
			row("quiet runs in the medians", "runs", "%s")
			row("other CPU in window, s (noise)", "other", "%.2f")
			row("steal in window, s (noise)", "steal", "%.2f")
			printf "| baseline: quiet runs; other CPU / steal in window, s | %s; %.2f / %.2f | | | | |\n", m["base", "runs"], m["base", "other"], m["base", "steal"]
		}' "$T/med"
		echo
	done

	# Marginal bytes per sample: the size difference between two frequencies
	# over the sample difference, which removes fixed costs (perf's synthesized
	# mmap events and headers, bpfsym's symbol tables).
	set -- $FREQS
	if [ $# -ge 2 ]; then
		echo "## marginal bytes per sample between -F $1 and -F $2 (fixed costs removed)"
		echo
		awk -v lo="$1" -v hi="$2" '{ m[$1, $2, $3] = $4 }
		END {
			print "| config | bytes/sample |"; print "|---|---|"
			n = split("perf perfz bpfsym", c, " ")
			for (i = 1; i <= n; i++) {
				ds = m[hi, c[i], "samples"] - m[lo, c[i], "samples"]
				if (ds > 0) printf "| %s | %.1f |\n", c[i], (m[hi, c[i], "bytes"] - m[lo, c[i], "bytes"]) / ds
			} }' "$T/med"
		echo
	fi
}

# FROM_RAW=FILE: only print the tables of a raw file kept with RAW=FILE.
if [ -n "${FROM_RAW:-}" ]; then
	[ -r "$FROM_RAW" ] || die "cannot read $FROM_RAW"
	T=$(mktemp -d /tmp/bpfsym-bench.XXXXXX) || die "mktemp failed"
	trap 'rm -rf "$T"' EXIT
	summarize "$FROM_RAW"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root (perf -a and BPF need it)"
case ${BPFSYM:-} in "" | /*) ;; *) BPFSYM=$(pwd)/$BPFSYM ;; esac
cd "$(dirname "$0")/.." || die "cannot cd to the repository root"
# BPFSYM: the binary to measure (default ./bpfsym, built if missing).
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
HAVE_BPFTOOL=0
command -v bpftool >/dev/null 2>&1 && HAVE_BPFTOOL=1
HAVE_Z=0
perf version --build-options 2>/dev/null | grep -q 'zstd: \[ on' && HAVE_Z=1

T=$(mktemp -d /tmp/bpfsym-bench.XXXXXX) || die "mktemp failed"
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
OLD_RATE=$(sysctl -n kernel.perf_event_max_sample_rate)
BG=""

# Stop what we started (the /usr/bin/time wrapper and the profiler under
# it), restore the sysctls, remove the temporary files.
cleanup() {
	for p in $BG; do
		for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
			kill -TERM "$c" 2>/dev/null
		done
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	now_rate=$(sysctl -n kernel.perf_event_max_sample_rate)
	if [ "$now_rate" != "$OLD_RATE" ]; then
		log "kernel lowered perf_event_max_sample_rate to $now_rate during the run; restoring $OLD_RATE"
		sysctl -q -w kernel.perf_event_max_sample_rate="$OLD_RATE" >/dev/null 2>&1
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -o "$T/spin" bench/spin.c || die "cannot build bench/spin.c"
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"

RAW=${RAW:-}
RAWF=$T/raw
: >"$RAWF"
TOTAL=$(awk -v a="$LEAD" -v b="$DURATION" -v c="$TAIL" 'BEGIN { print a + b + c }')

# Busy and steal jiffies of the whole machine (/proc/stat, USER_HZ).
cpustat() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat; }
# utime+stime ticks of a process.
proc_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# run_time_ns and run_cnt of the perf_event (type 7) programs that process
# PID holds: the program ids come from /proc/PID/fdinfo, the numbers from
# bpftool prog show (fdinfo's own counters if bpftool is missing).
bpf_stats() {
	ns=0 cnt=0
	for f in /proc/"$1"/fdinfo/*; do
		set -- $(awk '/^prog_type:/ { t = $2 } /^prog_id:/ { id = $2 }
			/^run_time_ns:/ { ns = $2 } /^run_cnt:/ { c = $2 }
			END { if (t == 7) print id, ns, c }' "$f" 2>/dev/null)
		[ $# -eq 3 ] || continue
		if [ "$HAVE_BPFTOOL" = 1 ]; then
			set -- $(bpftool prog show id "$1" 2>/dev/null |
				awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns") n = $(i+1); if ($i == "run_cnt") c = $(i+1) } }
				END { print "x", n + 0, c + 0 }')
		fi
		ns=$((ns + $2)) cnt=$((cnt + $3))
	done
	echo "$ns $cnt"
}

# Wait until the machine has been idle (under 0.1 CPU busy) for 0.5 s.
wait_quiet() {
	waited=0
	while :; do
		a=$(cpustat); sleep 0.5; b=$(cpustat)
		busy=$(echo "$a $b $(getconf CLK_TCK)" | awk '{ print ($3 - $1) / $5 / 0.5 }')
		awk -v b="$busy" 'BEGIN { exit !(b < 0.1) }' && return 0
		if [ "$waited" -ge "$QUIET_MAX" ]; then
			log "machine still busy ($busy CPUs) after ${QUIET_MAX}s; measuring anyway"
			return 0
		fi
		[ "$waited" -eq 0 ] && log "machine busy ($busy CPUs): waiting up to ${QUIET_MAX}s"
		sleep 1
		waited=$((waited + 1))
	done
}

put() { echo "$1 $2 $3 $4 $5" >>"$RAWF"; }

run_one() { # CONFIG HZ REP
	cfg=$1 hz=$2 rep=$3
	out=$T/$cfg.$hz.$rep.data
	case $cfg in
	base) set -- ;;
	perf) set -- perf record -a -g -e cpu-clock -F "$hz" -o "$out" -- sleep "$TOTAL" ;;
	perfz) set -- perf record -z -a -g -e cpu-clock -F "$hz" -o "$out" -- sleep "$TOTAL" ;;
	dwarf) set -- perf record -a --call-graph dwarf -e cpu-clock -F "$hz" -o "$out" -- sleep "$TOTAL" ;;
	bpfsym) set -- "$BPFSYM" record -f -a -F "$hz" -d "$TOTAL" -q -o "$out" ;;
	esac
	tp="" pp=""
	wait_quiet
	if [ $# -gt 0 ]; then
		/usr/bin/time -f '%U %S %M %w %c' -o "$T/time" "$@" >"$T/out" 2>"$T/err" &
		tp=$!
		BG=$tp
	fi
	sleep "$LEAD"
	if [ -n "$tp" ]; then
		pp=$(ps -o pid= --ppid "$tp" | awk 'NR == 1 { print $1 }')
		[ -n "$pp" ] || { cat "$T/err" >&2; die "$cfg did not start"; }
	fi
	pt0=0 b0="0 0"
	[ -n "$pp" ] && pt0=$(proc_ticks "$pp")
	[ "$cfg" = bpfsym ] && b0=$(bpf_stats "$pp")
	s0=$(cpustat)
	"$T/spin" "$DURATION" "$WORKERS" "$DEPTH" >"$T/spin.out" || die "workload failed"
	s1=$(cpustat)
	[ "$cfg" = bpfsym ] && b1=$(bpf_stats "$pp")
	pt1=0
	[ -n "$pp" ] && pt1=$(proc_ticks "$pp")
	if [ -n "$tp" ]; then
		wait "$tp" || { cat "$T/err" >&2; die "$cfg exited with an error"; }
		BG=""
	fi
	read -r _ units _ _ _ secs _ rate _ wcpu <"$T/spin.out"
	put "$hz" "$cfg" "$rep" rate "$rate"
	put "$hz" "$cfg" "$rep" cpurate "$(awk -v u="$units" -v c="$wcpu" 'BEGIN { if (c > 0) printf "%.1f", u / c; else print 0 }')"
	# CPU used in the workload's window by anything but the workload and
	# the profiler (other processes, our own shell): a noise indicator.
	hzt=$(getconf CLK_TCK)
	echo "$s0 $s1 $pt0 $pt1 $wcpu $hzt $secs" | awk '{
		busy = ($3 - $1) / $8; steal = ($4 - $2) / $8
		other = busy - $7 - ($6 - $5) / $8
		printf "other %.2f\nsteal %.2f\n", other < 0 ? 0 : other, steal }' |
	while read -r k v; do put "$hz" "$cfg" "$rep" "$k" "$v"; done
	[ -n "$tp" ] || return 0
	read -r u s rss vcs ics <"$T/time"
	put "$hz" "$cfg" "$rep" cpu "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')"
	put "$hz" "$cfg" "$rep" rss_kb "$rss"
	put "$hz" "$cfg" "$rep" vcsw "$vcs"
	put "$hz" "$cfg" "$rep" icsw "$ics"
	put "$hz" "$cfg" "$rep" bytes "$(wc -c <"$out" | tr -d ' ')"
	if [ "$cfg" = bpfsym ]; then
		line=$(grep '^bpfsym: ' "$T/err" | tail -n 1)
		set -- $(echo "$line" | awk '{ for (i = 2; i <= NF; i++) {
			if ($i ~ /^samples,?$/) s = $(i-1); if ($i ~ /^lost/) l = $(i-1) } }
			END { print s + 0, l + 0 }')
		put "$hz" "$cfg" "$rep" samples "$1"
		put "$hz" "$cfg" "$rep" lost "$2"
		"$BPFSYM" report "$out" --folded 2>/dev/null | awk '{ split($0, f, ";"); c[f[1]] += $NF }
			END { print "wsamples", c["spin"] + 0; print "selfsamples", c["bpfsym"] + 0 }' |
		while read -r k v; do put "$hz" "$cfg" "$rep" "$k" "$v"; done
		set -- $b0 $b1
		put "$hz" "$cfg" "$rep" bpf_ns "$(awk -v n="$(($3 - $1))" -v c="$(($4 - $2))" \
			'BEGIN { if (c > 0) printf "%.0f", n / c; else print "nan" }')"
		put "$hz" "$cfg" "$rep" bpf_cnt "$(($4 - $2))"
	else
		set -- $(perf report --stats -i "$out" 2>/dev/null | awk '
			/^Aggregated stats:/ { ev = 0; next }
			/ stats:$/ { ev = 1; next }
			ev && /SAMPLE events:/ && !/LOST/ { s += $3 }
			ev && /LOST_SAMPLES events:/ { l += $3 }
			END { print s + 0, l + 0 }')
		put "$hz" "$cfg" "$rep" samples "$1"
		put "$hz" "$cfg" "$rep" lost "$2"
		perf script -i "$out" -F comm 2>/dev/null | awk '{ c[$1]++ }
			END { print "wsamples", c["spin"] + 0; print "selfsamples", c["perf"] + 0 }' |
		while read -r k v; do put "$hz" "$cfg" "$rep" "$k" "$v"; done
	fi
	put "$hz" "$cfg" "$rep" maxrate "$(sysctl -n kernel.perf_event_max_sample_rate)"
	rm -f "$out"
}

configs_for() { # HZ
	c="base perf"
	[ "$HAVE_Z" = 1 ] && c="$c perfz"
	[ "$1" = "$DWARF_FREQ" ] && c="$c dwarf"
	echo "$c bpfsym"
}
reverse() { r=""; for w in "$@"; do r="$w${r:+ $r}"; done; echo "$r"; }

log "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $WORKERS workers, ${DURATION}s per run, $REPS reps, -F $FREQS"
log "$BPFSYM (repository at $(git describe --always --dirty 2>/dev/null || echo '?')), $(perf --version)"
rep=1
while [ "$rep" -le "$REPS" ]; do
	freqs=$FREQS
	[ $((rep % 2)) -eq 0 ] && freqs=$(reverse $FREQS)
	for hz in $freqs; do
		list=$(configs_for "$hz")
		[ $((rep % 2)) -eq 0 ] && list=$(reverse $list)
		for cfg in $list; do
			log "rep $rep -F $hz $cfg"
			run_one "$cfg" "$hz" "$rep"
		done
	done
	rep=$((rep + 1))
done

{
	echo "0 meta 0 duration $DURATION"
	echo "0 meta 0 reps $REPS"
	echo "0 meta 0 freqs \"$FREQS\""
	echo "0 meta 0 workers $WORKERS"
	echo "0 meta 0 total $TOTAL"
} >>"$RAWF"
[ -n "$RAW" ] && cp "$RAWF" "$RAW"
echo "## raw (hz config rep metric value)"
echo
sort -k1,1n -k2,2 -k3,3n -k4,4 "$RAWF" | sed 's/^/    /'
echo
summarize "$RAWF"
