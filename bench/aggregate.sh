#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/aggregate.sh: streaming every sample against counting stacks in
# the kernel (issue 15, item 5), at the always-on rates, on the same
# workloads in the same run.
#
#   stream  every sample into a ring buffer, drained every 100 ms (what
#           bpfsym record does);
#   count   (pid, kernel stack id, user stack id) -> count in a BPF hash
#           map, stacks in a STACK_TRACE map, drained every INTERVAL
#           seconds (lookup-and-delete in batches, each distinct stack read
#           once and deleted).
# Both from bench/aggregate.bpf.c, both walking frame pointers, so what
# differs is the transport.  Workloads: "spin" (bench/spin.c on every CPU:
# few stacks) and "churn" (spin on one CPU, and a shell starting
# /bin/true, /usr/bin/python3 -c pass and sh -c : about RATE times a
# second: many processes, many stacks).  Per cell: BPF ns per sample
# (run_time_ns / run_cnt, kernel.bpf_stats_enabled), samples, samples lost
# in BPF, bytes out of the kernel per second, the reader's CPU (ms per
# second of recording), entries and distinct stacks per drain, memory the
# maps preallocate.  Then bpfsym's own userspace cost per sample, the
# part a count map would divide: the marginal CPU of `bpfsym record -a`
# between a short and a long run on the spin workload.
#
#   sudo bench/aggregate.sh                       # from the repository root
#   DURATION=30 INTERVAL=15 FREQS="19 99" sudo -E bench/aggregate.sh
#   WORKLOADS= sudo -E bench/aggregate.sh        # bpfsym's cost per sample only
#
# Needs clang, libbpf-dev (what `make bpfsym` needs).  BPFSYM: the binary
# (default ./bpfsym, built if missing).

set -u

DURATION=${DURATION:-30}
INTERVAL=${INTERVAL:-15}
FREQS=${FREQS:-"19 99"}
ENTRIES=${ENTRIES:-16384}
RATE=${RATE:-50}
WORKERS=${WORKERS:-$(getconf _NPROCESSORS_ONLN)}

me=aggregate.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF needs it)"
case ${BPFSYM:-} in "" | /*) ;; *) BPFSYM=$(pwd)/$BPFSYM ;; esac
cd "$(dirname "$0")/.." || die "cannot cd to the repository root"
if [ -z "${BPFSYM:-}" ]; then
	[ -x ./bpfsym ] || make bpfsym >&2 || die "make bpfsym failed"
	BPFSYM=$(pwd)/bpfsym
fi
arch=$(uname -m)
case $arch in x86_64) barch=x86 ;; aarch64) barch=arm64 ;; *) barch=$arch ;; esac

T=$(mktemp -d /tmp/bpfsym-agg.XXXXXX) || die "mktemp failed"
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
BG=""
cleanup() {
	for p in $BG; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

${CLANG:-clang} -g -O2 -target bpf -D__TARGET_ARCH_$barch -I"vmlinux/$barch" \
	-c bench/aggregate.bpf.c -o "$T/agg.bpf.o" || die "cannot build bench/aggregate.bpf.c"
cc -O2 -g -o "$T/agg" bench/aggregate.c $(pkg-config --cflags --libs libbpf 2>/dev/null || echo -lbpf) ||
	die "cannot build bench/aggregate.c"
cc -O2 -g -fno-omit-frame-pointer -o "$T/spin" bench/spin.c || die "cannot build bench/spin.c"
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"

# run_time_ns and run_cnt of the perf_event programs process PID holds.
stats() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_type:/ { t = $2 } /^run_time_ns:/ { n = $2 } /^run_cnt:/ { c = $2 }
			END { if (t == 7) print n, c }' "$f" 2>/dev/null
	done | awk '{ n += $1; c += $2 } END { print n + 0, c + 0 }'
}

# The workload for SECS seconds: spin on every CPU, or spin on one and the churn.
workload() {
	if [ "$1" = spin ]; then
		"$T/spin" "$2" "$WORKERS" >/dev/null
		return
	fi
	"$T/spin" "$2" 1 >/dev/null &
	sp=$!
	end=$(($(date +%s) + $2))
	pause=$(awk -v r="$RATE" 'BEGIN { printf "%.4f", 3 / r }')
	while [ "$(date +%s)" -lt "$end" ]; do
		/bin/true
		/usr/bin/python3 -c pass
		sh -c :
		sleep "$pause"
	done
	wait "$sp"
}

: >"$T/raw"
for wl in ${WORKLOADS-spin churn}; do
	for hz in $FREQS; do
		for mode in stream count; do
			"$T/agg" "$T/agg.bpf.o" "$mode" "$hz" $((DURATION + 2)) $((INTERVAL * 1000)) "$ENTRIES" \
				>"$T/out" 2>"$T/err" &
			pid=$!
			BG=$pid
			sleep 1
			kill -0 "$pid" 2>/dev/null || { cat "$T/err" >&2; die "$mode did not start"; }
			a=$(stats "$pid")
			workload "$wl" "$DURATION"
			b=$(stats "$pid")
			wait "$pid" || { cat "$T/err" >&2; die "$mode failed"; }
			BG=""
			tail -1 "$T/out" | tr ' ' '\n' >"$T/kv"
			ns=$(echo "$a $b" | awk '{ c = $4 - $2; printf "%.0f", (c > 0) ? ($3 - $1) / c : 0 }')
			echo "$wl $hz $mode $ns $(awk -F= '{ printf "%s ", $2 }' "$T/kv")" >>"$T/raw"
			log "$wl $hz $mode: $ns ns/sample, $(tail -1 "$T/out")"
		done
	done
done

# bpfsym's userspace CPU per sample on spin, recorded with -p (so the
# tracker sees only spin, and other work on the machine stays out; not as
# a command: time(1) would add spin's CPU, bpfsym's child): (long - short)
# / (samples long - samples short).
rec_cpu() {
	"$T/spin" $(($1 + 3)) "$WORKERS" >/dev/null &
	sp=$!
	BG=$sp
	sleep 0.5
	pids=$(pgrep -P "$sp" | paste -sd, -)
	/usr/bin/time -f "%U %S" -o "$T/time" "$BPFSYM" record -f -F "$2" -d "$1" -o "$T/b.data" -p "$pids" \
		>/dev/null 2>"$T/rec.err"
	wait "$sp"
	BG=""
	s=$(sed -n 's/.* \([0-9][0-9]*\) samples.*/\1/p' "$T/rec.err" | tail -1)
	echo "$(awk '{ printf "%.3f", $1 + $2 }' "$T/time") ${s:-0}"
}
for hz in $FREQS; do
	short=$(rec_cpu 5 "$hz")
	long=$(rec_cpu $((DURATION + 5)) "$hz")
	echo "$short $long" | awk -v h="$hz" '{ ds = $4 - $2; printf "%s %.1f %d\n", h, (ds > 0) ? ($3 - $1) * 1e6 / ds : 0, ds }' >>"$T/bpfsym"
done

echo "## Streaming against counting in BPF ($WORKERS CPUs, ${DURATION}s per cell, count drained every ${INTERVAL}s, $ENTRIES entries)"
echo
echo "| workload | Hz | mode | BPF ns/sample | samples | lost in BPF | bytes out/s | reader CPU ms/s | entries per drain (mean / max) | stacks per drain (mean / max) | map memory |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk -v d="$DURATION" '{
	# wl hz mode ns samples lost bytes records drains emax emean smax smean mapb cpu
	printf "| %s | %s | %s | %s | %s | %s | %.0f | %.3f | %s | %s | %.1f MiB |\n", $1, $2, $3, $4, $5, $6,
		$7 / d, $15 / d, ($3 == "count") ? $11 " / " $10 : "-", ($3 == "count") ? $13 " / " $12 : "-", $14 / 1048576
}' "$T/raw"
echo
echo "bpfsym record -p (the spin workers), userspace CPU per sample (marginal, $((DURATION + 5)) s against 5 s):"
echo
echo "| Hz | us per sample | samples |"
echo "|---|---|---|"
awk '{ printf "| %s | %s | %s |\n", $1, $2, $3 }' "$T/bpfsym"
