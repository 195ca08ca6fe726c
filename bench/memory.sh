#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/memory.sh: peak memory (max RSS) of bpfsym against perf, recording
# the whole system while hundreds of processes run, and of each one's
# report on its own file.
#
#   sudo bench/memory.sh               # from the repository root
#   NPROC=500 DURATION=20 REPS=3 sudo -E bench/memory.sh
#
# The workload runs for the whole benchmark: NPROC copies of bench/hold.c
# (each dlopen()s a few libraries, burns 0.5 ms every 200 ms, sleeps),
# examples/busy (one CPU-bound process) and a loop compiling six of
# bpfsym's sources (cc1, as: short-lived processes, exec and mmap churn).
# Then, REPS times, alternating which goes first:
#   perf record -a -g -e cpu-clock -F FREQ -- sleep DURATION
#   bpfsym record -q -a -F FREQ -d DURATION
# then `perf report --stdio` and `bpfsym report` on the files just written
# (output to /dev/null).  Once at the end, bpfsym records LONG seconds
# (3 x DURATION) of the same workload: if its memory grew with the
# processes it has seen, the peak would grow with the time.
# Peak RSS, user+sys and wall time come from /usr/bin/time (%M, %U+%S,
# %e); the tables show medians over the repetitions.
#
# Environment: NPROC (300), FREQ (99), DURATION (10), REPS (3), LONG
# (3 x DURATION; 0 to skip), BPFSYM (the binary to measure, default
# ./bpfsym, built if missing).

set -u

NPROC=${NPROC:-300}
FREQ=${FREQ:-99}
DURATION=${DURATION:-10}
REPS=${REPS:-3}
LONG=${LONG:-$((3 * DURATION))}
LIBS="libzstd.so.1 liblzma.so.5 libz.so.1 libelf.so.1 libstdc++.so.6 libm.so.6"

me=memory.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (perf -a and BPF need it)"
case $DURATION$NPROC$REPS$LONG in *[!0-9]*) die "DURATION, NPROC, REPS, LONG must be whole numbers" ;; esac
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

T=$(mktemp -d /tmp/bpfsym-memory.XXXXXX) || die "mktemp failed"
BG=""
cleanup() {
	for p in $BG; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $BG; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -o "$T/busy" examples/busy.c || die "cannot build examples/busy.c"
cc -O2 -g -fno-omit-frame-pointer -o "$T/hold" bench/hold.c -ldl || die "cannot build bench/hold.c"
SRCS=$(ls user/symbolize/elf/elfsym.c user/symbolize/kernel/kallsyms.c user/model/procmap.c \
	user/report/report_read.c user/view/report_view.c user/symbolize/symbolizer.c 2>/dev/null)

compile_loop() {
	while :; do
		for f in $SRCS; do
			cc -O2 -g -D_GNU_SOURCE -Iinclude -Iuser -c "$f" -o "$T/cc.o" 2>/dev/null
		done
	done
}

# Long enough for everything; killed at the end.
total=$(( REPS * 2 * (DURATION + 5) + LONG + 60 ))
i=0
while [ $i -lt "$NPROC" ]; do
	"$T/hold" "$total" $LIBS &
	BG="$BG $!"
	i=$((i + 1))
done
"$T/busy" "$total" >/dev/null &
BG="$BG $!"
compile_loop &
BG="$BG $!"
sleep 2
nps=$(ls /proc | grep -c '^[0-9][0-9]*$')
log "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs, -F $FREQ, ${DURATION}s, $nps processes running"
log "$BPFSYM (repository at $(git describe --always --dirty 2>/dev/null || echo '?')), $(perf --version)"

RAW=$T/raw
: >"$RAW"
# measure KEY CMD...: run CMD under /usr/bin/time, stdout to /dev/null;
# appends "KEY rss_kb cpu_s wall_s" to RAW.
measure() {
	key=$1
	shift
	/usr/bin/time -f '%M %U %S %e' -o "$T/time" "$@" >/dev/null 2>"$T/err" ||
		{ cat "$T/err" >&2; die "$key failed: $*"; }
	awk -v k="$key" '{ printf "%s %d %.2f %.2f\n", k, $1, $2 + $3, $4 }' "$T/time" >>"$RAW"
	log "$key: $(tail -1 "$RAW")"
}

rec_perf() {
	measure perf_record perf record -q -a -g -e cpu-clock -F "$FREQ" -o "$T/perf.data" -- sleep "$DURATION"
	measure perf_report perf report --stdio -i "$T/perf.data"
	echo "perf_bytes $(wc -c <"$T/perf.data")" >>"$RAW"
}
rec_bpfsym() {
	measure bpfsym_record "$BPFSYM" record -f -q -a -F "$FREQ" -d "$DURATION" -o "$T/b.data"
	grep '^bpfsym: ' "$T/err" | tail -1 | sed 's/^/# /' >>"$RAW"
	measure bpfsym_report "$BPFSYM" report "$T/b.data"
	echo "bpfsym_bytes $(wc -c <"$T/b.data")" >>"$RAW"
}

r=1
while [ "$r" -le "$REPS" ]; do
	if [ $((r % 2)) -eq 1 ]; then rec_perf; rec_bpfsym; else rec_bpfsym; rec_perf; fi
	r=$((r + 1))
done
if [ "$LONG" -gt 0 ]; then
	measure bpfsym_long "$BPFSYM" record -q -a -F "$FREQ" -d "$LONG" -o "$T/long.data"
	grep '^bpfsym: ' "$T/err" | tail -1 | sed 's/^/# /' >>"$RAW"
	measure bpfsym_long_report "$BPFSYM" report "$T/long.data"
fi

echo "# Peak memory: the whole system (-a) at -F $FREQ for $DURATION s, $nps processes running ($NPROC of bench/hold.c), medians of $REPS"
echo
awk -v reps="$REPS" -v long="$LONG" -v dur="$DURATION" '
function med(k,   n, i, j, t, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++) a[i] = v[k, i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	lo[k] = a[1]; hi[k] = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n/2] + a[n/2 + 1]) / 2 }
/^#/ { next }
NF == 4 { for (f = 2; f <= 4; f++) { k = $1 SUBSEP f; v[k, ++cnt[k]] = $f } }
NF == 2 { k = $1 SUBSEP 2; v[k, ++cnt[k]] = $2 }
END {
	print "| step | perf peak RSS, KiB (range) | bpfsym peak RSS, KiB (range) | bpfsym/perf | perf CPU s | bpfsym CPU s | perf wall s | bpfsym wall s |"
	print "|---|---|---|---|---|---|---|---|"
	split("record report", st, " ")
	for (i = 1; i <= 2; i++) {
		p = "perf_" st[i]; b = "bpfsym_" st[i]
		pr = med(p SUBSEP 2); prr = sprintf("%d-%d", lo[p SUBSEP 2], hi[p SUBSEP 2])
		br = med(b SUBSEP 2); brr = sprintf("%d-%d", lo[b SUBSEP 2], hi[b SUBSEP 2])
		printf "| %s | %d (%s) | %d (%s) | **%.2f** | %.2f | %.2f | %.2f | %.2f |\n", st[i], pr, prr, br, brr,
			(pr > 0 ? br / pr : 0), med(p SUBSEP 3), med(b SUBSEP 3), med(p SUBSEP 4), med(b SUBSEP 4)
	}
	printf "| file, bytes | %d | %d | %.3f | | | | |\n", med("perf_bytes" SUBSEP 2), med("bpfsym_bytes" SUBSEP 2),
		med("bpfsym_bytes" SUBSEP 2) / med("perf_bytes" SUBSEP 2)
	if (long > 0) {
		print ""
		printf "bpfsym record for %d s instead of %d: peak RSS %d KiB (%.2fx the %d s median), report %d KiB.\n",
			long, dur, v["bpfsym_long" SUBSEP 2, 1], v["bpfsym_long" SUBSEP 2, 1] / med("bpfsym_record" SUBSEP 2),
			dur, v["bpfsym_long_report" SUBSEP 2, 1]
	}
}' "$RAW"
echo
echo "## raw (step rss_kb cpu_s wall_s; bpfsym's summary lines)"
echo
sed 's/^/    /' "$RAW"
