#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/soak.sh: an always-on recording under process churn, beside perf,
# in the same run: does memory stay flat, do file descriptors, and what
# does the recorder cost?
#
#   sudo bench/soak.sh                       # from the repository root: 2 x 10 min
#   SOAK_SECONDS=60 WARMUP=20 RATES=50 sudo -E bench/soak.sh   # a quick check
#
# For each rate in RATES (programs started per second), for SOAK_SECONDS:
#   bench/churn.c starts RATE short programs a second, in turn
#     /bin/true, /bin/sh -c :, /usr/bin/python3 -c pass (PROGS overrides);
#   bpfsym record -q -a -F FREQ -o FILE    and
#   perf record -q -a -g -e cpu-clock -F FREQ -o FILE
# run side by side.  Every INTERVAL seconds both are sampled: VmRSS, open
# file descriptors, utime+stime (/proc/PID/stat), and for bpfsym the run
# time of its BPF programs (run_time_ns of each program fd in
# /proc/PID/fdinfo, with kernel.bpf_stats_enabled=1, restored after),
# plus the time its first samples' task work took (the task runs that
# work, so run_time_ns leaves it out: the stats map's
# BPFSYM_STAT_FIRST_NS, read with bpftool, is added to the BPF column
# and shown as its own row, "first-sample work").
# After WARMUP seconds: RSS growth (last sample against the one at
# WARMUP), fd range, CPU as % of one CPU over the rest of the run (user +
# sys, + BPF for bpfsym), and the BPF ns per run of each program.  Goals
# (issue 15): RSS < +5 %, fds flat, CPU <= 0.25 % at 50/s, <= 0.5 % at
# 300/s.  The load average is printed with every sample: the machine may
# be shared, and total CPU is less robust to that than ns per event.
#
# Environment: SOAK_SECONDS (600), WARMUP (120), INTERVAL (10), RATES
# ("50 300"), FREQ (19), RECORD_ARGS (more options for bpfsym record, e.g.
# "--switch-output=60s --switch-max-files=2"), PROGS, BPFSYM (the binary, default ./bpfsym, built
# if missing), KEEP=1 keeps the temporary directory (its path is printed).

set -u

SOAK_SECONDS=${SOAK_SECONDS:-600}
WARMUP=${WARMUP:-120}
INTERVAL=${INTERVAL:-10}
RATES=${RATES:-50 300}
FREQ=${FREQ:-19}
PROGS=${PROGS:-/bin/true|/bin/sh -c :|/usr/bin/python3 -c pass}

me=soak.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (perf -a and BPF need it)"
case $SOAK_SECONDS$WARMUP$INTERVAL$FREQ$(echo "$RATES" | tr -d ' ') in
*[!0-9]*) die "SOAK_SECONDS, WARMUP, INTERVAL, FREQ, RATES must be whole numbers" ;;
esac
[ "$WARMUP" -lt "$SOAK_SECONDS" ] || die "WARMUP must be less than SOAK_SECONDS"
# The summary starts at the sample taken at WARMUP and ends at SOAK_SECONDS.
[ $((WARMUP % INTERVAL)) -eq 0 ] && [ $((SOAK_SECONDS % INTERVAL)) -eq 0 ] ||
	die "WARMUP and SOAK_SECONDS must be multiples of INTERVAL ($INTERVAL)"
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
command -v cc >/dev/null 2>&1 || die "cc not found"

T=$(mktemp -d /tmp/bpfsym-soak.XXXXXX) || die "mktemp failed"
BG=""
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	for p in $BG; do
		kill -INT "$p" 2>/dev/null
	done
	for p in $BG; do
		wait "$p" 2>/dev/null
	done
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	if [ "${KEEP:-0}" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -o "$T/churn" bench/churn.c || die "cannot build bench/churn.c"
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"
CLK=$(getconf CLK_TCK)

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# run_time_ns summed over the BPF programs process $1 holds.
bpf_ns() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^run_time_ns:/ { n += $2 } END { printf "%.0f\n", n }'
}
# The index of BPFSYM_STAT_FIRST_NS in enum bpfsym_stat.
STAT_FIRST_NS=$(awk '/^enum bpfsym_stat [{]/ { on = 1; next }
	on && /^\tBPFSYM_STAT_[A-Z_]+,/ { sub(/^\t/, ""); sub(/,.*/, "")
		if ($0 == "BPFSYM_STAT_FIRST_NS") { print n; exit }; n++ }' include/bpfsym.h)
[ -n "$STAT_FIRST_NS" ] || die "no BPFSYM_STAT_FIRST_NS in include/bpfsym.h"
# The id of the "stats" map process $1 holds (empty if none).
stats_map() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^map_id:/ { print $2 }' "$f" 2>/dev/null
	done | sort -u | while read -r id; do
		bpftool -j map show id "$id" 2>/dev/null | grep -q '"name":"stats"' && { echo "$id"; break; }
	done
}
# ns of first samples' task work so far, in stats map $1 (0 without one).
first_ns() {
	[ -n "$1" ] || { echo 0; return; }
	bpftool -j map lookup id "$1" key "$STAT_FIRST_NS" 0 0 0 2>/dev/null |
		/usr/bin/python3 -c 'import json, sys
try:
    print(sum(v["value"] for v in json.load(sys.stdin)["formatted"]["values"]))
except Exception:
    print(0)'
}
# The name of BPF program id $1 (bpftool), or the id.
prog_name() {
	n=$(bpftool prog show id "$1" 2>/dev/null | awk 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "name") print $(i + 1) }')
	echo "${n:-id$1}"
}
# "prog_id:name run_time_ns run_cnt" of each BPF program process $1 holds.
bpf_progs() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ { id = $2 } /^run_time_ns:/ { n = $2 } /^run_cnt:/ { c = $2 }
			END { if (id != "" && c != "") print id, n, c }' "$f" 2>/dev/null
	done | sort -u | while read -r id n c; do
		echo "$id:$(prog_name "$id") $n $c"
	done
}

log "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -r)"
log "$BPFSYM (repository at $(git describe --always --dirty 2>/dev/null || echo '?')), $(perf --version)"
log "-F $FREQ, ${SOAK_SECONDS}s per rate, warm-up ${WARMUP}s, a sample every ${INTERVAL}s, rates: $RATES"

SUMMARY=$T/summary
: >"$SUMMARY"
for rate in $RATES; do
	# shellcheck disable=SC2086 # RECORD_ARGS: words, split on purpose
	"$BPFSYM" record -f -q -a -F "$FREQ" ${RECORD_ARGS:-} -o "$T/b.data" >/dev/null 2>"$T/b.err" &
	bp=$!
	perf record -q -a -g -e cpu-clock -F "$FREQ" -o "$T/perf.data" >/dev/null 2>"$T/perf.err" &
	pp=$!
	BG="$bp $pp"
	sleep 3
	kill -0 "$bp" 2>/dev/null || { cat "$T/b.err" >&2; die "bpfsym record did not start"; }
	kill -0 "$pp" 2>/dev/null || { cat "$T/perf.err" >&2; die "perf record did not start"; }
	smap=$(stats_map "$bp")
	old_ifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086
	set -- $PROGS
	IFS=$old_ifs
	"$T/churn" "$rate" "$SOAK_SECONDS" "$@" 2>"$T/churn.err" &
	cp=$!
	BG="$BG $cp"
	RAW=$T/raw.$rate
	: >"$RAW"
	t=0
	while :; do
		echo "$t $(rss "$bp") $(fds "$bp") $(ticks "$bp") $(($(bpf_ns "$bp") + $(first_ns "$smap"))) $(rss "$pp") $(fds "$pp") $(ticks "$pp") $(cut -d' ' -f1 /proc/loadavg) $(cut -d' ' -f1 /proc/uptime)" >>"$RAW"
		[ "$t" -eq "$WARMUP" ] && { bpf_progs "$bp"; echo "0:first-sample_work $(first_ns "$smap") 0"; } | sort >"$T/progs0.$rate"
		[ "$t" -ge "$SOAK_SECONDS" ] && break
		sleep "$INTERVAL"
		t=$((t + INTERVAL))
	done
	{ bpf_progs "$bp"; echo "0:first-sample_work $(first_ns "$smap") 0"; } | sort >"$T/progs1.$rate"
	wait "$cp" 2>/dev/null
	started=$(sed -n 's/^started //p' "$T/churn.err")
	kill -INT "$bp" "$pp" 2>/dev/null
	wait "$bp"
	bst=$?
	wait "$pp" 2>/dev/null
	BG=""
	[ "$bst" -eq 0 ] || { cat "$T/b.err" >&2; die "bpfsym record exited $bst"; }
	bsum=$(grep '^bpfsym: ' "$T/b.err" | tail -1)
	bbytes=$(cat "$T"/b.data* | wc -c)	# with --switch-output, the rotated files (kept ones)
	pbytes=$(wc -c <"$T/perf.data")

	echo
	echo "### $rate programs/s: samples every ${INTERVAL}s (RSS KiB, fds, CPU % of one CPU over the interval)"
	echo
	echo "| t s | bpfsym RSS | fds | user+sys % | BPF % | perf RSS | fds | user+sys % | load |"
	echo "|---|---|---|---|---|---|---|---|---|"
	awk -v clk="$CLK" '
	NR > 1 { dt = $10 - u0
		printf "| %d | %d | %d | %.3f | %.3f | %d | %d | %.3f | %s |\n", $1, $2, $3,
			($4 - bt) / clk / dt * 100, ($5 - bn) / 1e9 / dt * 100, $6, $7,
			($8 - pt) / clk / dt * 100, $9 }
	NR == 1 { printf "| %d | %d | %d | - | - | %d | %d | - | %s |\n", $1, $2, $3, $6, $7, $9 }
	{ u0 = $10; bt = $4; bn = $5; pt = $8 }' "$RAW"
	echo
	echo "BPF programs of bpfsym after the warm-up (ns per run, runs per second):"
	echo
	echo "| program | runs/s | ns/run | % of one CPU |"
	echo "|---|---|---|---|"
	dur=$((SOAK_SECONDS - WARMUP))
	join "$T/progs0.$rate" "$T/progs1.$rate" | while read -r id n0 c0 n1 c1; do
		[ "$c1" -gt "$c0" ] || [ "${id#*:}" = first-sample_work ] || continue
		echo "${id#*:} $((n1 - n0)) $((c1 - c0))"
	done | sort -k2 -n -r | awk -v d="$dur" '{ printf "| %s | %s | %s | %.4f |\n", $1,
		$3 ? sprintf("%.1f", $3 / d) : "-", $3 ? sprintf("%.0f", $2 / $3) : "-", $2 / 1e9 / d * 100 }'
	echo
	echo "bpfsym: $bsum"
	echo "started $started programs ($(awk -v s="$started" -v d="$SOAK_SECONDS" 'BEGIN { printf "%.1f", s / d }')/s); files: bpfsym $bbytes B, perf $pbytes B"
	awk -v clk="$CLK" -v w="$WARMUP" -v rate="$rate" -v bb="$bbytes" -v pb="$pbytes" '
	$1 == w { r0 = $2; t0 = $10; bt0 = $4; bn0 = $5; pr0 = $6; pt0 = $8; fmin = $3; fmax = $3; pfmin = $7; pfmax = $7; on = 1 }
	on { if ($3 < fmin) fmin = $3; if ($3 > fmax) fmax = $3; if ($7 < pfmin) pfmin = $7; if ($7 > pfmax) pfmax = $7
	     r1 = $2; t1 = $10; bt1 = $4; bn1 = $5; pr1 = $6; pt1 = $8; load += $9; nl++ }
	END { d = t1 - t0
		us = (bt1 - bt0) / clk / d * 100; bpf = (bn1 - bn0) / 1e9 / d * 100
		printf "%s %d %d %.2f %d %d %d %d %.3f %.3f %.3f %d %d %.2f %d %d %.3f %.2f %d %d\n",
			rate, r0, r1, (r1 - r0) * 100 / r0, fmin, fmax, pfmin, pfmax, us, bpf, us + bpf,
			pr0, pr1, (pr1 - pr0) * 100 / pr0, 0, 0, (pt1 - pt0) / clk / d * 100, load / nl, bb, pb }' "$RAW" >>"$SUMMARY"
done

echo
echo "### Summary: after the ${WARMUP}s warm-up, to ${SOAK_SECONDS}s (-F $FREQ)"
echo
echo "| programs/s | bpfsym RSS KiB | growth | fds | user+sys % | BPF % | total % | goal | perf RSS KiB | growth | fds | perf user+sys % | load avg | file bytes bpfsym / perf |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# Each goal on its own: CPU, RSS, and the fd range (files pinned for the
# processes alive at each sample come and go; growth is what matters).
awk '{ goal = $1 <= 50 ? 0.25 : 0.5
	if ($2 == 0) { ok = "**no data**" }
	else { ok = sprintf("CPU <= %.2f %%: %s; RSS < +5 %%: %s; fds %d-%d", goal,
		$11 <= goal ? "met" : "**not met**", $4 < 5 ? "met" : "**not met**", $5, $6) }
	printf "| %s | %d -> %d | %+.2f %% | %d-%d | %.3f | %.3f | **%.3f** | %s | %d -> %d | %+.2f %% | %d-%d | %.3f | %.2f | %d / %d |\n",
		$1, $2, $3, $4, $5, $6, $9, $10, $11, ok, $12, $13, $14, $7, $8, $17, $18, $19, $20 }' "$SUMMARY"
