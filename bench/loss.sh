#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/loss.sh: lost samples and events under load, bpfsym against perf.
#
#   sudo bench/loss.sh                 # from the repository root
#   FREQS="999 99" DURATION=10 REPS=3 sudo -E bench/loss.sh
#
# The load is tests/fixtures/storm.c: a busy thread per CPU plus 3 threads
# per CPU that fork and exec a child as fast as they can (each child maps
# ld.so, libc, libm, libz, burns 0.2 ms and exits: about a thousand
# processes a second on 2 vCPUs).  For each frequency in FREQS and each
# repetition, a fresh storm runs while, one after the other (alternating
# which goes first),
#   perf record -a -g -e cpu-clock -F HZ -- sleep DURATION
#   bpfsym record -q -a -F HZ -d DURATION
# record it.  Lost counts: perf's LOST and LOST_SAMPLES events (records,
# `perf report --stats`: "lost" is the number of records perf's ring
# buffer dropped, samples and task/mmap events alike); bpfsym's summary line
# (samples lost, and process/mapping events lost, when its ring buffer
# was full).  Samples of the storm's children (comm storm_kid) show
# whether the profilers kept up with the short-lived processes.
#
# Environment: FREQS ("999 99"), DURATION (10), REPS (3), BPFSYM (the
# binary to measure, default ./bpfsym, built if missing).

set -u

FREQS=${FREQS:-"999 99"}
DURATION=${DURATION:-10}
REPS=${REPS:-3}

me=loss.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (perf -a and BPF need it)"
case $DURATION$REPS in *[!0-9]*) die "DURATION, REPS must be whole numbers" ;; esac
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

T=$(mktemp -d /tmp/bpfsym-loss.XXXXXX) || die "mktemp failed"
BG=""
cleanup() {
	for p in $BG; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -o "$T/storm" tests/fixtures/storm.c -pthread \
	-Wl,--no-as-needed -lm -lz || die "cannot build tests/fixtures/storm.c"
ln -f "$T/storm" "$T/storm_kid" || die "cannot link storm_kid"
ncpu=$(getconf _NPROCESSORS_ONLN)

RAW=$T/raw
: >"$RAW"
put() { echo "$hz $prof $rep $1 $2" >>"$RAW"; }

# run HZ PROF REP: record a fresh storm; put samples, lost, lost events,
# samples of storm_kid, children started.
run() {
	hz=$1 prof=$2 rep=$3
	rm -f "$T/count"
	"$T/storm" $((DURATION + 2)) "$ncpu" $((ncpu * 3)) "$T/storm_kid" "$T/count" &
	BG=$!
	sleep 1
	case $prof in
	perf)
		perf record -q -a -g -e cpu-clock -F "$hz" -o "$T/perf.data" -- sleep "$DURATION" \
			>/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "perf record failed"; }
		;;
	bpfsym)
		"$BPFSYM" record -f -q -a -F "$hz" -d "$DURATION" -o "$T/b.data" 2>"$T/err" ||
			{ cat "$T/err" >&2; die "bpfsym record failed"; }
		;;
	esac
	wait "$BG"
	BG=""
	put kids "$(awk '{ print $1 }' "$T/count")"
	if [ "$prof" = perf ]; then
		set -- $(perf report --stats -i "$T/perf.data" 2>/dev/null | awk '
			/^Aggregated stats:/ { agg = 1; next }
			/ stats:$/ { agg = 0; next }
			agg && /SAMPLE events:/ && !/LOST/ { s += $3 }
			agg && /LOST_SAMPLES events:/ { ls += $3 }
			agg && / LOST events:/ { l += $3 }
			END { print s + 0, l + 0, ls + 0 }')
		put samples "$1"
		put lost "$2"
		put lost_samples "$3"
		put kid_samples "$(perf script -i "$T/perf.data" -F comm 2>/dev/null | grep -c '^ *storm_kid *$')"
		log "-F $hz perf rep $rep: $1 samples, $2 LOST records, $3 LOST_SAMPLES"
	else
		summ=$(grep '^bpfsym: ' "$T/err" | tail -1)
		log "-F $hz bpfsym rep $rep: $summ"
		put samples "$(echo "$summ" | sed -n 's/^bpfsym: \([0-9]*\) samples.*/\1/p')"
		put lost "$(echo "$summ" | sed -n 's/^[^,]*, \([0-9]*\) lost.*/\1/p')"
		e=$(echo "$summ" | sed -n 's/.*, \([0-9]*\) process events lost.*/\1/p')
		put lost_events "${e:-0}"
		put kid_samples "$("$BPFSYM" report "$T/b.data" --folded 2>/dev/null |
			awk '/^storm_kid;/ { n += $NF } END { print n + 0 }')"
	fi
}

for hz in $FREQS; do
	r=1
	while [ "$r" -le "$REPS" ]; do
		if [ $((r % 2)) -eq 1 ]; then run "$hz" perf "$r"; run "$hz" bpfsym "$r"
		else run "$hz" bpfsym "$r"; run "$hz" perf "$r"; fi
		r=$((r + 1))
	done
done

echo "# Loss under a fork/exec storm with a busy thread per CPU: $ncpu CPUs, ${DURATION} s, $REPS runs each (median, and max)"
echo
awk '
function med(k,   n, i, j, t, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++) a[i] = v[k, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	mx = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n/2] + a[n/2 + 1]) / 2 }
{ k = $1 SUBSEP $2 SUBSEP $4; v[k, ++cnt[k]] = $5; hzs[$1] = 1 }
END {
	print "| -F | profiler | samples | samples of storm_kid | lost samples (max) | lost records / events (max) | children started |"
	print "|---|---|---|---|---|---|---|"
	for (hz in hzs) {
		for (pi = 1; pi <= 2; pi++) {
			p = pi == 1 ? "perf" : "bpfsym"
			s = med(hz SUBSEP p SUBSEP "samples")
			ks = med(hz SUBSEP p SUBSEP "kid_samples")
			if (p == "perf") {
				ls = med(hz SUBSEP p SUBSEP "lost_samples"); lsm = mx
				le = med(hz SUBSEP p SUBSEP "lost"); lem = mx
				what = "LOST records"
			} else {
				ls = med(hz SUBSEP p SUBSEP "lost"); lsm = mx
				le = med(hz SUBSEP p SUBSEP "lost_events"); lem = mx
				what = "process events"
			}
			printf "| %s | %s | %d | %d | %d (%d) | %d (%d) %s | %d |\n", hz, p == "perf" ? "perf -g" : "bpfsym",
				s, ks, ls, lsm, le, lem, what, med(hz SUBSEP p SUBSEP "kids")
		}
	}
}' "$RAW"
echo
echo "## raw (hz profiler rep metric value)"
echo
sed 's/^/    /' "$RAW"
