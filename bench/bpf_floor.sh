#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/bpf_floor.sh: what each piece of a stack-sampling BPF program costs
# on this machine, next to bpfsym's own on_sample, in the same run on the
# same workload (bench/spin.c, one busy process per CPU).  Each program of
# bench/bpf_floor.bpf.c (empty; ring buffer output with and without
# wakeup; kernel stack; user stack; both stacks plus output, with and
# without wakeup) and then bpfsym's perf_event program run on cpu-clock at
# each frequency; the BPF time per run is the delta of run_time_ns/run_cnt
# over the workload's window (kernel.bpf_stats_enabled=1, restored after).
#
#   sudo bench/bpf_floor.sh                 # from the repository root
#   DURATION=3 FREQS="99 999" sudo -E bench/bpf_floor.sh
#
# Needs clang, libbpf-dev and bpftool (what `make bpfsym` needs).  Prints
# a Markdown table, ns per run, median of REPS (default 3).  BPFSYM: the
# binary to measure (default ./bpfsym).

set -u

DURATION=${DURATION:-3}
REPS=${REPS:-3}
FREQS=${FREQS:-"99 999"}
WORKERS=${WORKERS:-$(getconf _NPROCESSORS_ONLN)}
PROGS="empty rb_nowakeup rb_wakeup kstack ustack stacks_nowakeup stacks_wakeup bpfsym"

me=bpf_floor.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF needs it)"
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
arch=$(uname -m)
case $arch in x86_64) barch=x86 ;; aarch64) barch=arm64 ;; *) barch=$arch ;; esac
[ -f "vmlinux/$barch/vmlinux.h" ] || die "no vmlinux/$barch/vmlinux.h"

T=$(mktemp -d /tmp/bpfsym-floor.XXXXXX) || die "mktemp failed"
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
	-c bench/bpf_floor.bpf.c -o "$T/floor.bpf.o" || die "cannot build bench/bpf_floor.bpf.c"
cc -O2 -g -o "$T/floor" bench/bpf_floor.c $(pkg-config --cflags --libs libbpf 2>/dev/null || echo -lbpf) ||
	die "cannot build bench/bpf_floor.c"
cc -O2 -g -fno-omit-frame-pointer -o "$T/spin" bench/spin.c || die "cannot build bench/spin.c"
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled"

# run_time_ns and run_cnt of the perf_event programs process PID holds.
stats() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_type:/ { t = $2 } /^run_time_ns:/ { n = $2 } /^run_cnt:/ { c = $2 }
			END { if (t == 7) print n, c }' "$f" 2>/dev/null
	done | awk '{ n += $1; c += $2 } END { print n + 0, c + 0 }'
}

TOTAL=$((DURATION + 2))
: >"$T/raw"
rep=1
while [ "$rep" -le "$REPS" ]; do
	list=$PROGS
	if [ $((rep % 2)) -eq 0 ]; then
		list=""
		for w in $PROGS; do list="$w${list:+ $list}"; done
	fi
	for hz in $FREQS; do
		for prog in $list; do
			if [ "$prog" = bpfsym ]; then
				"$BPFSYM" record -f -a -F "$hz" -d "$TOTAL" -q -o "$T/b.data" >/dev/null 2>"$T/err" &
			else
				"$T/floor" "$T/floor.bpf.o" "$prog" "$hz" "$TOTAL" >"$T/fd" 2>"$T/err" &
			fi
			pid=$!
			BG=$pid
			sleep 1
			kill -0 "$pid" 2>/dev/null || { cat "$T/err" >&2; die "$prog did not start"; }
			a=$(stats "$pid")
			"$T/spin" "$DURATION" "$WORKERS" >/dev/null || die "workload failed"
			b=$(stats "$pid")
			wait "$pid" || { cat "$T/err" >&2; die "$prog failed"; }
			BG=""
			echo "$hz $prog $a $b" | awk '{ c = $6 - $4; printf "%s %s %.0f %d\n", $1, $2, (c > 0 ? ($5 - $3) / c : 0), c }' >>"$T/raw"
		done
	done
	rep=$((rep + 1))
done

echo "## BPF ns per run (median of $REPS; $WORKERS workers of bench/spin.c, ${DURATION}s each)"
echo
printf "| program |"; for hz in $FREQS; do printf " -F %s |" "$hz"; done; echo
printf "|---|"; for hz in $FREQS; do printf -- "---|"; done; echo
for prog in $PROGS; do
	printf "| %s |" "$prog"
	for hz in $FREQS; do
		awk -v h="$hz" -v p="$prog" '$1 == h && $2 == p { print $3 }' "$T/raw" | sort -n |
			awk '{ a[NR] = $1 } END { printf " %s |", NR % 2 ? a[(NR + 1) / 2] : (a[NR/2] + a[NR/2 + 1]) / 2 }'
	done
	echo
done
