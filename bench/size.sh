#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/size.sh: report size, in bytes per sample, of bpfsym against
# perf.data of the same workload, recorded at the same frequency for the
# same time, and what bpfsym's zstd level buys.
#
#   sudo bench/size.sh                 # from the repository root
#   FREQ=99 DURATION=20 REPS=5 sudo -E bench/size.sh
#
# Two workloads, each recorded REPS times by every profiler, one after the
# other (each run gets its own copy of the workload); the tables show the
# medians over the repetitions and the range of bytes/sample:
#   process  examples/busy DURATION, the command profiled (perf record --
#            CMD, bpfsym record -- CMD): one process, a handful of stacks
#   system   the whole machine (-a) for DURATION s while examples/busy and
#            a loop compiling bpfsym's own sources (cc1, as, ld: many
#            processes, exec and mmap churn, deep and varied stacks) run,
#            plus whatever else the machine does
# Profilers:
#   perf -g       perf record -g -e cpu-clock -F FREQ (frame pointers)
#   perf -g -z    the same, zstd-compressed (perf's default level, 1)
#   perf dwarf    perf record --call-graph dwarf -e cpu-clock -F FREQ
#   bpfsym        bpfsym record -F FREQ (its names included)
# bytes/sample is the file's size over the samples in it (perf report
# --stats SAMPLE events; bpfsym's report header), fixed costs included.
# perf -a also writes the idle task's samples, which bpfsym drops in BPF:
# both are counted as written.  Recorder CPU is user+sys of the profiler
# process (/usr/bin/time), shown for the system runs only (in the process
# runs the profiled command is the profiler's child and counts in it).
#
# Then the system recording's blocks are compressed again at each zstd
# level in LEVELS (bench/zstd_levels.c, with the writer's parameters): the
# size bpfsym would have written at that level, and the CPU compression
# takes, per sample and as a share of the recorder's whole CPU time.
#
# Environment: FREQ (999), DURATION (seconds, 10), REPS (3), LEVELS ("1 3 6 9 19"),
# LEAD (s the system workload runs before recording, 1), BPFSYM (the
# binary to measure, default ./bpfsym, built if missing), KEEP (a
# directory to copy the recordings to; by default they are deleted: keep
# perf.data files out of the repository).

set -u

FREQ=${FREQ:-999}
DURATION=${DURATION:-10}
REPS=${REPS:-3}
LEVELS=${LEVELS:-"1 3 6 9 19"}
LEAD=${LEAD:-1}
KEEP=${KEEP:-}

me=size.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (perf -a and BPF need it)"
case $DURATION in *[!0-9]* | "") die "DURATION must be whole seconds" ;; esac
case ${BPFSYM:-} in "" | /*) ;; *) BPFSYM=$(pwd)/$BPFSYM ;; esac
case $KEEP in "" | /*) ;; *) KEEP=$(pwd)/$KEEP ;; esac
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
HAVE_Z=0
perf version --build-options 2>/dev/null | grep -q 'zstd: \[ on' && HAVE_Z=1
[ "$HAVE_Z" = 1 ] || log "perf was built without zstd: no perf -g -z row"

T=$(mktemp -d /tmp/bpfsym-size.XXXXXX) || die "mktemp failed"
BG=""
cleanup() {
	for p in $BG; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cc -O2 -g -fno-omit-frame-pointer -o "$T/busy" examples/busy.c || die "cannot build examples/busy.c"
cc -O2 -o "$T/zstd_levels" bench/zstd_levels.c -lzstd || die "cannot build bench/zstd_levels.c (libzstd-dev)"
SRCS=$(ls user/symbolize/elf/elfsym.c user/symbolize/kernel/kallsyms.c user/model/procmap.c \
	user/report/report_read.c user/view/report_view.c user/symbolize/symbolizer.c 2>/dev/null)

# compile_loop SECONDS: compile SRCS over and over until SECONDS have passed.
compile_loop() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		for f in $SRCS; do
			cc -O2 -g -D_GNU_SOURCE -Iinclude -Iuser -c "$f" -o "$T/cc.o" 2>/dev/null
			[ "$(date +%s)" -lt "$end" ] || break
		done
	done
}

RAW=$T/raw
: >"$RAW"
put() { echo "$wl $prof $rep $1 $2" >>"$RAW"; }	# METRIC VALUE of this run

# run WORKLOAD PROFILER REP: record it, put its bytes, samples, lost and CPU.
run() {
	wl=$1 prof=$2 rep=$3 out=$T/$1.$2.data
	case $wl in
	process) target="-- $T/busy $DURATION" ;;
	system) target="-a" ;;
	esac
	tail="-- sleep $DURATION"
	[ "$wl" = process ] && tail=""
	case $prof in
	perf) set -- perf record -g -e cpu-clock -F "$FREQ" -o "$out" $target $tail ;;
	perfz) set -- perf record -z -g -e cpu-clock -F "$FREQ" -o "$out" $target $tail ;;
	dwarf) set -- perf record --call-graph dwarf -e cpu-clock -F "$FREQ" -o "$out" $target $tail ;;
	bpfsym)
		if [ "$wl" = system ]; then
			set -- "$BPFSYM" record -f -q -a -F "$FREQ" -d "$DURATION" -o "$out"
		else
			set -- "$BPFSYM" record -f -q -F "$FREQ" -o "$out" $target
		fi ;;
	esac
	log "$wl, rep $rep: $*"
	wb="" wc=""
	if [ "$wl" = system ]; then
		"$T/busy" $((DURATION + LEAD + 2)) >/dev/null &
		wb=$!
		compile_loop $((DURATION + LEAD + 2)) &
		wc=$!
		BG="$wb $wc"
		sleep "$LEAD"
	fi
	/usr/bin/time -f '%U %S' -o "$T/time" "$@" >"$T/out" 2>"$T/err" ||
		{ cat "$T/err" >&2; die "$wl $prof failed"; }
	[ -n "$wb" ] && { wait "$wb"; wait "$wc"; BG=""; }
	put bytes "$(wc -c <"$out" | tr -d ' ')"
	put cpu "$(awk '{ print $1 + $2 }' "$T/time")"
	if [ "$prof" = bpfsym ]; then
		"$BPFSYM" report "$out" --limit 1 >"$T/rep" 2>/dev/null || die "bpfsym report $out failed"
		put samples "$(sed -n 's/^# samples: \([0-9]*\).*/\1/p' "$T/rep")"
		put lost "$(sed -n 's/^# lost: \([0-9]*\) samples.*/\1/p' "$T/rep")"
	else
		# The event's own stats, else the aggregated ones.
		set -- $(perf report --stats -i "$out" 2>"$T/stats.err" | awk '
			/^Aggregated stats:/ { ev = 0; agg = 1; next }
			/ stats:$/ { ev = 1; agg = 0; next }
			ev && /SAMPLE events:/ && !/LOST/ { s += $3 }
			agg && /SAMPLE events:/ && !/LOST/ { a += $3 }
			(ev || agg) && /LOST_SAMPLES events:/ { l[ev] += $3 }
			(ev || agg) && / LOST events:/ { l[ev] += $3 }
			END { if (s) print s, l[1] + 0; else print a + 0, l[0] + 0 }')
		if [ "$1" -eq 0 ]; then
			log "$wl $prof: perf report --stats found no samples ($(head -1 "$T/stats.err")); counting with perf script"
			set -- "$(perf script -i "$out" -F comm 2>/dev/null | wc -l)" "$2"
		fi
		put samples "$1"
		put lost "$2"
	fi
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp "$out" "$KEEP/$wl.$prof.$rep.data"
	fi
	# The last whole-system bpfsym recording is kept for the zstd levels.
	[ "$wl.$prof" = system.bpfsym ] || rm -f "$out"
}

PROFS="perf"
[ "$HAVE_Z" = 1 ] && PROFS="$PROFS perfz"
PROFS="$PROFS dwarf bpfsym"
log "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs, -F $FREQ, ${DURATION}s"
log "$BPFSYM (repository at $(git describe --always --dirty 2>/dev/null || echo '?')), $(perf --version)"
r=1
while [ "$r" -le "$REPS" ]; do
	for w in process system; do
		for p in $PROFS; do
			run "$w" "$p" "$r"
		done
	done
	r=$((r + 1))
done

table() { # WORKLOAD TITLE
	echo "## $2"
	echo
	awk -v wl="$1" '
	function med(key, n,   i, j, t, a) {
		for (i = 1; i <= n; i++) a[i] = v[key, i]
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		lo = a[1]; hi = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n/2] + a[n/2 + 1]) / 2 }
	$1 == wl { m[$2, $3, $4] = $5; reps[$2, $3] = 1; have[$2] = 1 }
	END {
		for (k in reps) { split(k, x, SUBSEP); p = x[1]
			n[p]++
			v[p "b", n[p]] = m[p, x[2], "bytes"] + 0; v[p "s", n[p]] = m[p, x[2], "samples"] + 0
			v[p "l", n[p]] = m[p, x[2], "lost"] + 0; v[p "c", n[p]] = m[p, x[2], "cpu"] + 0
			v[p "r", n[p]] = m[p, x[2], "samples"] > 0 ? m[p, x[2], "bytes"] / m[p, x[2], "samples"] : 0 }
		split("perf perfz dwarf bpfsym", order, " ")
		name["perf"] = "perf -g"; name["perfz"] = "perf -g -z"
		name["dwarf"] = "perf --call-graph dwarf"; name["bpfsym"] = "bpfsym"
		base = ("perf" in have) ? med("perfr", n["perf"]) : 0
		print "| profiler | bytes | samples | lost | bytes/sample (range) | vs perf -g | recorder CPU, s |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= 4; i++) {
			p = order[i]
			if (!(p in have)) continue
			bps = med(p "r", n[p]); range = sprintf("%.1f-%.1f", lo, hi)
			cpu = wl == "system" ? sprintf("%.2f", med(p "c", n[p])) : "-"
			printf "| %s | %.0f | %.0f | %.0f | %.1f (%s) | %s | %s |\n", name[p], med(p "b", n[p]),
				med(p "s", n[p]), med(p "l", n[p]), bps, range,
				(base > 0 ? sprintf("%.3f", bps / base) : "-"), cpu
		}
	}' "$RAW"
	echo
}

echo "# Report size: -F $FREQ, ${DURATION} s, $(getconf _NPROCESSORS_ONLN) CPUs, medians of $REPS runs"
echo
table process "One process: examples/busy, profiled as a command"
table system "Whole system (-a): examples/busy + a compile loop + the rest of the machine"

# The last repetition's recording, with its own samples and recorder CPU.
samples=$(awk -v r="$REPS" '$1 == "system" && $2 == "bpfsym" && $3 == r && $4 == "samples" { print $5 }' "$RAW")
cpu=$(awk -v r="$REPS" '$1 == "system" && $2 == "bpfsym" && $3 == r && $4 == "cpu" { print $5 }' "$RAW")
"$T/zstd_levels" "$T/system.bpfsym.data" "$samples" $LEVELS >"$T/levels" || die "zstd_levels failed"
echo "## What the last whole-system bpfsym recording holds, by record type (docs/FORMAT.md), before compression"
echo
awk -v s="$samples" '/^rec / { n[++k] = $2; c[k] = $4; b[k] = $6; t += $6 }
END {
	print "| record | count | bytes | share | bytes per sample |"
	print "|---|---|---|---|---|"
	for (i = 1; i <= k; i++)
		printf "| %s | %d | %d | %.1f%% | %.2f |\n", n[i], c[i], b[i], 100 * b[i] / t, b[i] / s
}' "$T/levels"
echo
echo "## bpfsym's zstd level: that recording's blocks compressed again"
echo
echo "$(head -1 "$T/levels" | awk '{ printf "%d blocks, %d bytes of records, %d samples; ", $6, $8, $10 }')recorder CPU ${cpu} s."
echo
awk -v cpu="$cpu" -v s="$samples" '
/^level / { for (i = 1; i < NF; i += 2) v[$i] = $(i+1)
	if (v["level"] == 3) ref = v["bytes"]
	lv[++n] = v["level"]; by[n] = v["bytes"]; bps[n] = v["bps"]; ratio[n] = v["ratio"]
	cns[n] = v["comp_ns_per_sample"]; cus[n] = v["comp_us"]; mbs[n] = v["comp_mb_s"]; dus[n] = v["decomp_us"] }
END {
	print "| level | bytes | bytes/sample | vs level 3 | compression ratio | compress CPU per sample, ns | compress MB/s | compress CPU, % of the recorder | decompress CPU, ms |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++)
		printf "| %d | %d | %.2f | %s | %.2f | %.0f | %.0f | %.2f | %.2f |\n", lv[i], by[i], bps[i],
			(ref > 0 ? sprintf("%.3f", by[i] / ref) : "-"), ratio[i], cns[i], mbs[i],
			(cpu > 0 ? 100 * cus[i] / 1e6 / cpu : 0), dus[i] / 1e3
}' "$T/levels"
echo
awk '/^oneframe / { printf "For comparison, the same records as one zstd frame at level %d (one compression context for the whole file, as a streaming compressor keeps it; bpfsym'"'"'s blocks are independent so that each second survives on its own): %d bytes, %.2f bytes/sample.\n", $3, $5, $7 }' "$T/levels"
echo
echo "## raw (workload profiler rep metric value)"
echo
sed 's/^/    /' "$RAW"
