#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/cfi_build.sh: what building the unwind tables (user/unwind/cfi.h)
# of the Debian mix costs, file by file, against binutils' readelf
# evaluating the same call-frame information in the same run.
#
#   bench/cfi_build.sh                 # from anywhere; FILES=... to choose
#   RUNS=7 bench/cfi_build.sh
#
# For each file (symbolic links resolved; missing ones are left out):
#   rows, bytes     our table (8 bytes a row), and readelf's row count (its
#                   "LOC CFA ..." lines of --debug-dump=frames-interp: one
#                   per change of any register's rule, CIEs' included; we
#                   keep a row only when rsp/rbp/ra's rule changes, and add
#                   a frame-pointer row after each run of adjacent FDEs)
#   build ms        CPU time (CLOCK_PROCESS_CPUTIME_ID) of one build: open,
#                   read, parse, evaluate, merge; the median of RUNS builds
#                   in one process (bench/cfi_build.c)
#   proc ms, RSS    CPU (user+sys) and peak RSS of a whole process building
#                   the table once (start-up included), from wait4's rusage
#                   (bench/runstat.pl); a small file's (xz) is the baseline
#   readelf ms/RSS  the same for `readelf -W --debug-dump=frames-interp`
#                   (output to a file), the median of RUNS runs
# then the totals over the files.  The driver is built here with $CC
# (default cc) -O2 against the release objects (make's build/rel/).
set -u
RUNS=${RUNS:-5}
CC=${CC:-cc}
cd "$(dirname "$0")/.." || exit 1
me=cfi_build.sh
die() { echo "$me: $*" >&2; exit 1; }
command -v readelf >/dev/null 2>&1 || die "readelf not found (binutils)"
command -v perl >/dev/null 2>&1 || die "perl not found (bench/runstat.pl)"

L=/usr/lib/x86_64-linux-gnu
FILES=${FILES:-"$L/libc.so.6 /usr/bin/python3.11 /lib64/ld-linux-x86-64.so.2 /usr/bin/bash
	/usr/bin/perl $L/libperl.so.5.36 $L/libsqlite3.so.0 /usr/bin/xz $L/liblzma.so.5 $L/libLLVM-14.so.1"}

objs="build/rel/unwind/cfi.o build/rel/unwind/cfi_enc.o build/rel/unwind/cfi_parse.o build/rel/unwind/cfi_eval.o
	build/rel/unwind/cfi_merge.o build/rel/base/htab.o"
# shellcheck disable=SC2086
make --no-print-directory $objs >&2 || die "make failed"
T=$(mktemp -d /tmp/bpfsym-cfibench.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$T"' EXIT
# shellcheck disable=SC2086
$CC -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -o "$T/cfi_build" bench/cfi_build.c $objs -lelf ||
	die "cannot build bench/cfi_build.c"

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-22s %9s %9s %10s %9s %8s %9s %11s %10s\n' file rows readelf bytes build_ms proc_ms rss_kb \
	readelf_ms readelf_kb
tot_rows=0 tot_rrows=0 tot_ms=0 tot_pms=0 tot_rms=0
for f in $FILES; do
	real=$(readlink -f "$f")
	if [ ! -f "$real" ]; then
		echo "$me: $f: missing, left out" >&2
		continue
	fi
	out=$("$T/cfi_build" -r "$RUNS" "$real") || die "$real: cfi_build failed"
	rows=$(echo "$out" | awk '{ print $3 }')
	bytes=$(echo "$out" | awk '{ print $5 }')
	ms=$(echo "$out" | sed -n 's/.* cpu_ms \([0-9.]*\).*/\1/p')
	# runstat.pl prints "WALL CPU MAXRSS STATUS": split into $1..$4.
	# shellcheck disable=SC2046
	set -- $(perl bench/runstat.pl /dev/null "$T/out" "$T/cfi_build" "$real")
	pms=$(echo "$2" | awk '{ printf "%.2f", $1 * 1000 }')
	rss=$3
	i=0
	: > "$T/rtimes"
	while [ $i -lt "$RUNS" ]; do
		# shellcheck disable=SC2046
		set -- $(perl bench/runstat.pl /dev/null "$T/readelf.out" readelf -W \
			--debug-dump=no-follow-links --debug-dump=frames-interp "$real")
		echo "$2 $3" >> "$T/rtimes"
		i=$((i + 1))
	done
	rms=$(awk '{ print $1 * 1000 }' "$T/rtimes" | median)
	rkb=$(awk '{ print $2 }' "$T/rtimes" | median)
	rrows=$(grep -cE '^[0-9a-f]{16} ' "$T/readelf.out")
	printf '%-22s %9d %9d %10d %9.2f %8.2f %9d %11.1f %10d\n' "$(basename "$real")" "$rows" "$rrows" \
		"$bytes" "$ms" "$pms" "$rss" "$rms" "$rkb"
	tot_rows=$((tot_rows + rows))
	tot_rrows=$((tot_rrows + rrows))
	tot_ms=$(echo "$tot_ms $ms" | awk '{ print $1 + $2 }')
	tot_pms=$(echo "$tot_pms $pms" | awk '{ print $1 + $2 }')
	tot_rms=$(echo "$tot_rms $rms" | awk '{ print $1 + $2 }')
done
printf '%-22s %9d %9d %10d %9.2f %8.2f %9s %11.1f\n' total "$tot_rows" "$tot_rrows" $((tot_rows * 8)) \
	"$tot_ms" "$tot_pms" - "$tot_rms"
