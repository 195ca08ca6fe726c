#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/report_time.sh: end-to-end report time for the same recording.
# perf record -a -g and bpfsym record -a run at the same time, at the same
# frequency, on the same workload (bench/spin.c, one busy process per CPU),
# so both files hold the same stretch of the same machine; then each
# report command is timed on its own file:
#
#   perf report --stdio -i perf.data            the anchor
#   perf report --stdio --no-children -g none   perf's flat profile (extra)
#   perf script -i perf.data                    what flame graphs start from (extra)
#   bpfsym report bpfsym.data                   the table
#   bpfsym report bpfsym.data --folded          folded stacks
#
# with hyperfine if it is installed (apt-get install -y hyperfine), else a
# loop timed with date +%s%N.  Output goes to /dev/null.  bpfsym names
# every frame while it records (that cost is in bench/sampling.sh's
# profiler CPU); perf names them at report time, so the script also prints
# each recorder's CPU time (user+sys, /usr/bin/time) and record CPU plus
# report time as the end-to-end cost.
#
#   sudo bench/report_time.sh               # from the repository root
#   FREQ=99 DURATION=20 RUNS=10 sudo -E bench/report_time.sh
#
# Environment: FREQ (999), DURATION (workload seconds, 10), RUNS (timed runs
# per command, 10), WARMUP (1), WORKERS (online CPUs), QUIET_MAX (s to wait
# for an idle machine before recording, 30), BPFSYM (the binary
# to measure, default ./bpfsym).

set -u

FREQ=${FREQ:-999}
DURATION=${DURATION:-10}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-1}
WORKERS=${WORKERS:-$(getconf _NPROCESSORS_ONLN)}

me=report_time.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

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
command -v cc >/dev/null 2>&1 || die "cc not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
HF=""
command -v hyperfine >/dev/null 2>&1 && HF=hyperfine
[ -n "$HF" ] || log "hyperfine not found (apt-get install -y hyperfine): timing with a date +%s%N loop"

T=$(mktemp -d /tmp/bpfsym-report.XXXXXX) || die "mktemp failed"
BG=""
cleanup() {
	for p in $BG; do
		for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
			kill -TERM "$c" 2>/dev/null
		done
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -o "$T/spin" bench/spin.c || die "cannot build bench/spin.c"

# Wait (up to QUIET_MAX s) until the machine has been idle (under 0.1 CPU
# busy) for 0.5 s, so the recording is of the workload alone.
cpubusy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
waited=0
while :; do
	a=$(cpubusy); sleep 0.5; b=$(cpubusy)
	busy=$(echo "$a $b $(getconf CLK_TCK)" | awk '{ print ($2 - $1) / $3 / 0.5 }')
	awk -v b="$busy" 'BEGIN { exit !(b < 0.1) }' && break
	if [ "$waited" -ge "${QUIET_MAX:-30}" ]; then
		log "machine still busy ($busy CPUs) after ${QUIET_MAX:-30}s; recording anyway"
		break
	fi
	[ "$waited" -eq 0 ] && log "machine busy ($busy CPUs): waiting up to ${QUIET_MAX:-30}s"
	sleep 1
	waited=$((waited + 1))
done

# The recording: both profilers over the same workload.
TOTAL=$((DURATION + 2))
log "recording: perf record -a -g -e cpu-clock -F $FREQ and bpfsym record -a -F $FREQ together, ${DURATION}s of $WORKERS workers"
/usr/bin/time -f '%U %S' -o "$T/perf.time" \
	perf record -a -g -e cpu-clock -F "$FREQ" -o "$T/perf.data" -- sleep "$TOTAL" >/dev/null 2>"$T/perf.err" &
pp=$!
/usr/bin/time -f '%U %S' -o "$T/bpfsym.time" \
	"$BPFSYM" record -a -F "$FREQ" -d "$TOTAL" -q -o "$T/bpfsym.data" >/dev/null 2>"$T/bpfsym.err" &
bp=$!
BG="$pp $bp"
sleep 1
"$T/spin" "$DURATION" "$WORKERS" >/dev/null || die "workload failed"
wait "$pp" || { cat "$T/perf.err" >&2; die "perf record failed"; }
wait "$bp" || { cat "$T/bpfsym.err" >&2; die "bpfsym record failed"; }
BG=""

psamples=$(perf report --stats -i "$T/perf.data" 2>/dev/null | awk '
	/^Aggregated stats:/ { ev = 0; next } / stats:$/ { ev = 1; next }
	ev && /SAMPLE events:/ && !/LOST/ { s += $3 } END { print s + 0 }')
bsamples=$(grep '^bpfsym: ' "$T/bpfsym.err" | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^samples,?$/) print $(i-1) }')
psize=$(wc -c <"$T/perf.data" | tr -d ' ')
bsize=$(wc -c <"$T/bpfsym.data" | tr -d ' ')
pspin=$(perf script -i "$T/perf.data" -F comm 2>/dev/null | awk '$1 == "spin" { n++ } END { print n + 0 }')
bspin=$("$BPFSYM" report "$T/bpfsym.data" --folded 2>/dev/null |
	awk '{ split($0, f, ";"); if (f[1] == "spin") n += $NF } END { print n + 0 }')
pcpu=$(awk '{ print $1 + $2 }' "$T/perf.time")
bcpu=$(awk '{ print $1 + $2 }' "$T/bpfsym.time")

# name|command (run from $T so the relative file names stay short)
cat >"$T/cmds" <<EOF
perf_report|perf report --stdio -i perf.data
perf_report_flat|perf report --stdio --no-children -g none -i perf.data
perf_script|perf script -i perf.data
bpfsym_report|$BPFSYM report bpfsym.data
bpfsym_folded|$BPFSYM report bpfsym.data --folded
EOF

cd "$T" || die "cannot cd to $T"
: >times
if [ -n "$HF" ]; then
	set --
	while IFS='|' read -r name cmd; do
		set -- "$@" -n "$name" "$cmd"
	done <cmds
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-csv hf.csv "$@" >&2 ||
		die "hyperfine failed"
	# command,mean,stddev,median,user,system,min,max (seconds)
	awk -F, 'NR > 1 { printf "%s %.4f %.4f %.4f %.4f %.4f\n", $1, $4, $2, $3, $7, $5 + $6 }' hf.csv >times
else
	while IFS='|' read -r name cmd; do
		i=0
		while [ "$i" -lt "$WARMUP" ]; do $cmd >/dev/null 2>&1; i=$((i + 1)); done
		i=0
		: >one
		while [ "$i" -lt "$RUNS" ]; do
			t0=$(date +%s%N)
			$cmd >/dev/null 2>&1 || die "$name failed"
			t1=$(date +%s%N)
			echo "$t0 $t1" | awk '{ printf "%.6f\n", ($2 - $1) / 1e9 }' >>one
			i=$((i + 1))
		done
		sort -g one | awk -v n="$name" '{ a[NR] = $1; s += $1; q += $1 * $1 }
			END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR/2] + a[NR/2 + 1]) / 2
			sd = NR > 1 ? sqrt((q - s * s / NR) / (NR - 1)) : 0
			printf "%s %.4f %.4f %.4f %.4f -\n", n, m, s / NR, sd, a[1] }' >>times
	done <cmds
fi
while IFS='|' read -r name cmd; do
	$cmd 2>/dev/null | wc -l | awk -v n="$name" '{ print n, $1 }'
done <cmds >lines

echo "## report time, same recording: -F $FREQ, $WORKERS workers x ${DURATION}s, ${RUNS} runs each ($( [ -n "$HF" ] && echo hyperfine || echo 'date loop'))"
echo
echo "recording: perf.data $psize bytes, $psamples samples ($pspin of the workload), perf record CPU ${pcpu}s;" \
	"bpfsym.data $bsize bytes, $bsamples samples ($bspin of the workload), bpfsym record CPU ${bcpu}s"
echo
awk -v pcpu="$pcpu" -v bcpu="$bcpu" 'FNR == NR { l[$1] = $2; next }
	{ med[$1] = $2; mean[$1] = $3; sd[$1] = $4; mn[$1] = $5; cpu[$1] = $6; order[++n] = $1 }
	END {
		print "| command | median s | mean ± sd s | min s | user+sys s | output lines | vs perf report --stdio |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) { k = order[i]
			printf "| %s | %.4f | %.4f ± %.4f | %.4f | %s | %d | %.3f |\n", k, med[k], mean[k], sd[k], mn[k], cpu[k], l[k], med[k] / med["perf_report"] }
		if (med["bpfsym_report"] > 0)
			printf "\nperf report --stdio / bpfsym report: %.1fx; perf report --stdio / bpfsym report --folded: %.1fx; perf script / bpfsym report --folded: %.1fx\n",
				med["perf_report"] / med["bpfsym_report"], med["perf_report"] / med["bpfsym_folded"], med["perf_script"] / med["bpfsym_folded"]
		print "\nend to end (recorder CPU + median report time, s):\n"
		print "| | perf record + perf report --stdio | bpfsym record + bpfsym report | ratio |"
		print "|---|---|---|---|"
		printf "| table | %.3f | %.3f | %.2f |\n", pcpu + med["perf_report"], bcpu + med["bpfsym_report"], (bcpu + med["bpfsym_report"]) / (pcpu + med["perf_report"])
		printf "| folded (perf script) | %.3f | %.3f | %.2f |\n", pcpu + med["perf_script"], bcpu + med["bpfsym_folded"], (bcpu + med["bpfsym_folded"]) / (pcpu + med["perf_script"])
	}' lines times
echo
sed 's/^/    /; s/|/: /' cmds
