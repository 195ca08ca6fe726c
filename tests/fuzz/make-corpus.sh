#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make-corpus.sh DIR GEN_REPORT_SEEDS: write the seed corpus of every fuzz
# target into DIR/<target>/, from sources and this machine, at test time:
# nothing binary is committed.
#
#   elfsym    small ELF files built with $CC (default cc): PIE, non-PIE,
#             shared, static, relocatable (one with a section per function),
#             stripped, a debug-only file, a debuglink, compressed debug
#             sections, 32-bit, MiniDebugInfo (.gnu_debugdata), xz bombs in
#             .gnu_debugdata, and a bare .xz for the decoder
#   report    valid recordings from the real writer (GEN_REPORT_SEEDS)
#   kallsyms  synthetic /proc/kallsyms text, and the head of the real one
#   procmaps  /proc/self/maps text, and crafted lines
#   fileid, symfs  the elfsym seeds; symfs also a debug file eu-strip -f
#             made, which keeps the segments' file offsets
#   pprof     the report seeds (the same input style as fuzz_report)
#   others    tests/fuzz/seeds-NAME.sh DIR/NAME writes target NAME's seeds
#
# A variant this toolchain cannot build is left out with a note on stderr:
# a seed corpus is a head start, not a test.  Fails only when DIR cannot be
# written or the report seeds cannot be generated.
set -u
[ $# -eq 2 ] || { echo "usage: $0 DIR GEN_REPORT_SEEDS" >&2; exit 2; }
out=$1
gen=$2
CC=${CC:-cc}

for t in elfsym report kallsyms procmaps fileid symfs pprof; do
	rm -rf "${out:?}/$t"
	mkdir -p "$out/$t" || exit 1
done
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-seeds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# ---- elfsym ----
# Symbols of every kind elfsym sorts out: static, global, weak, an alias, an
# ifunc, a data object.  No #include, so it also links -nostdlib and -m32.
cat > "$work/seed.c" <<'EOF'
#define NI __attribute__((noinline, used))
static int NI s_one(int x) { return x * 3 + 1; }
int NI g_two(int x) { int s = 0; for (int i = 0; i < x; i++) s += s_one(i); return s; }
__attribute__((weak)) int NI w_three(int x) { return g_two(x) - 1; }
extern int a_two(int) __attribute__((alias("g_two")));
int data_var = 5;
#ifndef SEED_NOLIBC
static int NI impl(int x) { return x + 7; }
static void *NI resolver(void) { return (void *)impl; }
int ifn(int) __attribute__((ifunc("resolver")));
#endif
#if defined(SEED_NOLIBC)
void _start(void) { for (;;) w_three(data_var); }
#elif !defined(SEED_LIB)
int main(int argc, char **argv) { (void)argv; return w_three(argc) + a_two(argc) + ifn(argc); }
#endif
EOF

# seed NAME CMD: run CMD in the work dir, which must leave the file NAME there.
seed() {
	name=$1
	shift
	if (cd "$work" && eval "$*") > "$work/log" 2>&1 && [ -s "$work/$name" ]; then
		cp "$work/$name" "$out/elfsym/$name"
	else
		echo "make-corpus: elfsym seed '$name' left out: $(tail -n 1 "$work/log")" >&2
	fi
}

# -z noseparate-code: no page of padding between segments, a quarter of the size.
small="-O1 -Wl,-z,noseparate-code"
seed pie "$CC $small -fPIE -pie -Wl,--build-id=sha1 -o pie seed.c"
seed pie_paged "$CC -O1 -fPIE -pie -o pie_paged seed.c"
seed nopie "$CC $small -fno-pie -no-pie -Wl,--build-id=md5 -o nopie seed.c"
seed nobid "$CC $small -Wl,--build-id=none -o nobid seed.c"
# 100 bytes: a note elfsym must skip (its cap is 64).
seed longbid "$CC $small -Wl,--build-id=0x$(printf 'ab%.0s' $(seq 100)) -o longbid seed.c"
seed lib.so "$CC $small -shared -fPIC -DSEED_LIB -Wl,--build-id=sha1 -o lib.so seed.c"
seed lib_stripped.so "$CC $small -shared -fPIC -DSEED_LIB -o lib_stripped.so seed.c && strip --strip-all lib_stripped.so"
seed static "$CC $small -static -nostdlib -no-pie -DSEED_NOLIBC -Wl,--build-id=sha1 -o static seed.c"
seed static_pie "$CC $small -static-pie -nostdlib -fPIE -DSEED_NOLIBC -o static_pie seed.c"
seed seed.o "$CC -O1 -c -ffunction-sections -o seed.o seed.c"
seed debug_gz.o "$CC -O1 -g -gz=zlib -c -o debug_gz.o seed.c"
seed pie.debug "objcopy --only-keep-debug pie pie.debug"
seed pie_debuglink "objcopy --add-gnu-debuglink=pie.debug pie pie_debuglink"
seed exe32 "$CC -m32 $small -static -nostdlib -no-pie -DSEED_NOLIBC -Wl,--build-id=sha1 -o exe32 seed.c"
seed seed32.o "$CC -m32 -O1 -c -o seed32.o seed.c"
# Functions in several code sections, a data section between them.
seed rel_secs.o "$CC -O1 -c -ffunction-sections -fdata-sections -o rel_secs.o seed.c"
# MiniDebugInfo as Fedora's find-debuginfo makes it: the stripped file gets
# the function symbols .dynsym lacks, as an xz-compressed ELF.
minidebug() {
	objcopy --only-keep-debug "$1" "$1.dbg" &&
	strip --strip-all -o "$1.stripped" "$1" &&
	{ nm -D --format=posix --defined-only "$1.stripped" 2>/dev/null || :; } |
		awk '{ print $1 }' | sort > "$1.dynsyms" &&
	nm --format=posix --defined-only "$1.dbg" | awk '$2 == "T" || $2 == "t" { print $1 }' |
		sort > "$1.funcsyms" &&
	comm -13 "$1.dynsyms" "$1.funcsyms" > "$1.keep" &&
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$1.keep" "$1.dbg" "$1.mini" &&
	xz -kf "$1.mini" &&
	objcopy --add-section .gnu_debugdata="$1.mini.xz" "$1.stripped" "$2"
}
seed mini "minidebug pie mini"
seed mini_lib.so "minidebug lib.so mini_lib.so"
seed mini.xz "cp pie.mini.xz mini.xz"
# 8 MiB of zeros in 1 KiB (fuzz_elfsym's cap is 1 MiB); and without the
# index that says so, so the decoder itself must stop.
seed bomb "head -c 8M /dev/zero | xz > bomb.xz && objcopy --add-section .gnu_debugdata=bomb.xz pie.stripped bomb"
seed bomb_noindex "head -c \$((\$(wc -c < bomb.xz) - 64)) bomb.xz > bomb_cut.xz &&
	objcopy --add-section .gnu_debugdata=bomb_cut.xz pie.stripped bomb_noindex"

# ---- fileid, symfs: ELF files too ----
for f in "$out"/elfsym/*; do
	[ -f "$f" ] || continue
	cp "$f" "$out/fileid/" && cp "$f" "$out/symfs/" || exit 1
done
if (cd "$work" && eu-strip -f pie.eu.debug -o pie.eu pie) > "$work/log" 2>&1; then
	cp "$work/pie.eu.debug" "$out/symfs/"
else
	echo "make-corpus: symfs seed 'pie.eu.debug' left out: $(tail -n 1 "$work/log")" >&2
fi

# ---- report, pprof ----
"$gen" "$out/report" || { echo "make-corpus: $gen failed" >&2; exit 1; }
for f in "$out"/report/*; do
	[ -f "$f" ] || continue
	cp "$f" "$out/pprof/" || exit 1
done

# ---- kallsyms ----
k=$out/kallsyms
# What the kernel prints: aliases at one address, every type letter,
# modules, BPF programs, ftrace trampolines below the modules.
cat > "$k/vmlinux" <<'EOF'
0000000000000000 A fixed_percpu_data
0000000000001000 A cpu_debug_store
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81000060 T secondary_startup_64
ffffffff81000065 T secondary_startup_64_no_verify
ffffffff81000130 t verify_cpu
ffffffff81000230 T __pfx_x86_64_start_kernel
ffffffff81000240 T x86_64_start_kernel
ffffffff81000240 W __x86_64_start_weak
ffffffff81000250 w __weak_local
ffffffff810002a0 t __startup_64
ffffffff81001000 T do_syscall_64
ffffffff81001100 D some_data
ffffffff81001200 b some_bss
ffffffff81001300 r some_rodata
ffffffff82000000 T _etext
ffffffffc0400000 t ext4_fill_super	[ext4]
ffffffffc0400100 T ext4_readdir	[ext4]
ffffffffc0400200 t __ext4_tail	[ext4]
ffffffffc0500000 t xfs_mount	[xfs]
ffffffffc0500080 d xfs_data	[xfs]
ffffffffa0000000 t bpf_prog_6deef7357e7b4530_sd_fw_egress	[bpf]
ffffffffa0000100 t bpf_prog_6deef7357e7b4530_sd_fw_ingress	[bpf]
ffffffffa0002000 t ftrace_trampoline	[__builtin__ftrace]
EOF
# kptr_restrict: every address hidden.
cat > "$k/restricted" <<'EOF'
0000000000000000 A fixed_percpu_data
0000000000000000 T _stext
0000000000000000 T _text
0000000000000000 t verify_cpu
0000000000000000 t ext4_fill_super	[ext4]
EOF
# Out of order, CRLF, tabs, bad lines of each kind, no final newline.
printf '%s\r\n' 'ffffffff81000200 T after' 'ffffffff81000100 t before' > "$k/crlf"
printf '%s\n' \
	'ffffffff81000300 T zeta' \
	'ffffffff81000100 T alpha' \
	'ffffffff81000100 t _alpha' \
	'ffffffff81000100 W __alpha' \
	'ffffffff81000200 T  spaced	 ' \
	'ffffffffffffffff T at_the_top' \
	'' \
	'ffffffff8100000 T short_addr' \
	'1ffffffff81000000 T too_long' \
	'xyz T not_hex' \
	'ffffffff81000400 TT two_letters' \
	'ffffffff81000400 T' \
	'ffffffff81000500 T unterminated [mod' \
	'ffffffff81000500 T empty_module []' \
	'ffffffff81000500 T junk [mod] after' \
	'ffffffff81000600 1 digit_type' > "$k/messy"
printf 'ffffffff81000700 T no_newline\tfoo' >> "$k/messy"
# This machine's: zeros unless root, real either way.
head -n 300 /proc/kallsyms > "$k/proc" 2>/dev/null || rm -f "$k/proc"

# ---- procmaps ----
m=$out/procmaps
cat /proc/self/maps > "$m/self" 2>/dev/null || rm -f "$m/self"
# Every path kind, " (deleted)", spaces in paths, 32-bit addresses, a
# shared mapping, device numbers past 8 bits, then lines that must be
# skipped: overlapping, out of order, malformed, junk after the inode.
cat > "$m/crafted" <<'EOF'
08048000-08049000 r-xp 00000000 08:01 1234 /usr/bin/thirty-two
555555554000-555555556000 r--p 00000000 fd:01 393231 /usr/bin/app
555555556000-55555555a000 r-xp 00002000 fd:01 393231 /usr/bin/app
55555555a000-55555555c000 rw-p 00006000 fd:01 393231 /usr/bin/app
555555600000-555555621000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0000021000 r-xp 00000000 00:00 0 
7f0000100000-7f0000180000 r-xp 00028000 103:02 917506 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000200000-7f0000201000 r-xs 00000000 00:05 2048 /memfd:jit-code (deleted)
7f0000300000-7f0000310000 r-xp 00010000 fd:01 1000 /opt/my app/lib with spaces.so
7f0000400000-7f0000401000 r-xp 00000000 fd:01 1001 /tmp/gone.so (deleted)
7f0000500000-7f0000501000 r-xp 00000000 00:00 0 [anon:v8 code]
7f0000600000-7f0000601000 r-xp 00000000 00:00 0 [anon_shmem:jit]
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
7ffe00000000-7ffe00021000 rwxp 00000000 00:00 0                          [stack]
7ffe10000000-7ffe10001000 r-xp 00000000 00:00 0 [stack:4242]
7f0000100800-7f0000101000 r-xp 00000000 fd:01 5 /overlaps/libc
7e0000000000-7e0000001000 r-xp 00000000 fd:01 6 /out/of/order
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
7f0000700000-7f0000700000 r-xp 00000000 fd:01 7 /empty/range
7f0000800000-7f0000700000 r-xp 00000000 fd:01 8 /backwards
7f0000900000 r-xp 00000000 fd:01 9 /no/end
7f0000a00000-7f0000a01000 r-x 00000000 fd:01 10 /short/perms
7f0000b00000-7f0000b01000 r-xp 0000000g fd:01 11 /bad/offset
7f0000c00000-7f0000c01000 r-xp 00000000 fd:01 12x /junk/inode
7f0000d00000-7f0000d01000 r-xp 00000000 fd01 13 /no/colon
7f0000e00000-7f0000e01000 r-xp 00000000 fd:01 99999999999999999999999 /huge/inode
10000000000000000-10000000000001000 r-xp 00000000 fd:01 14 /seventeen/digits
EOF
printf '7f0000f00000-7f0000f01000 r-xp 00000000 fd:01 15 /crlf\r\n7f0000f10000-7f0000f11000 r-xp 00000000 fd:01 16 /last/no/newline' > "$m/crlf"
# ---- targets with their own seed script ----
for script in "$(dirname "$0")"/seeds-*.sh; do
	[ -f "$script" ] || continue
	t=${script##*/seeds-}
	t=${t%.sh}
	rm -rf "${out:?}/$t"
	mkdir -p "$out/$t" || exit 1
	CC=$CC sh "$script" "$out/$t" || echo "make-corpus: $t: seed script failed" >&2
done
exit 0
