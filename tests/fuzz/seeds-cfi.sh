#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-cfi.sh DIR: seed inputs for fuzz_cfi, ELF images with call-frame
# information, made here with $CC (default cc): this machine's vdso (with
# and without its section headers, so .eh_frame is also found through
# .eh_frame_hdr), small programs with .eh_frame (PIE with a PLT, non-PIE,
# shared, static without libc), one with .debug_frame instead, and a
# program whose functions save rbp, align the stack and remember state.
# A variant this toolchain cannot build is left out with a note on stderr.
# Nothing binary is committed.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
CC=${CC:-cc}
mkdir -p "$d" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-cfiseeds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# The vdso as the process sees it (whole pages: the section headers are
# past its PT_LOAD), and each FILE argument without section headers.
cat > "$work/dump.c" <<'SRC'
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

static int put(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");

	return !f || fwrite(p, 1, n, f) != n || fclose(f);
}

int main(int argc, char **argv)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	size_t len = 0, i;
	char *copy;

	if (!eh)
		return 1;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
			len = ph[i].p_offset + ph[i].p_filesz;
	len = (len + 4095) & ~(size_t)4095;
	copy = malloc(len);
	if (!copy || argc < 2)
		return 1;
	memcpy(copy, eh, len);
	if (put(argv[1], copy, len))
		return 1;
	((Elf64_Ehdr *)copy)->e_shoff = 0;
	((Elf64_Ehdr *)copy)->e_shnum = 0;
	((Elf64_Ehdr *)copy)->e_shstrndx = 0;
	return argc > 2 && put(argv[2], copy, len);
}
SRC

cat > "$work/prog.c" <<'SRC'
#define NI __attribute__((noinline))
volatile int sink;
NI int leaf(int x) { return x * 3 + sink; }
NI int dyn(int n) { volatile char *p = __builtin_alloca(n); for (int i = 0; i < n; i++) p[i] = (char)i; sink = p[n / 2]; return leaf(p[0]); }
NI int early(int x) { if (x > 5) { int a[64]; for (int i = 0; i < 64; i++) a[i] = leaf(i + x); return a[x & 63]; } return x; }
#ifndef NOLIBC
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) { printf("%d\n", dyn(argc * 16) + early(argc) + (int)strlen(argv[0])); return 0; }
#else
void _start(void) { for (;;) sink = dyn(32) + early(sink); }
#endif
SRC

# seed NAME CMD: run CMD in the work dir, which must leave the file NAME there.
seed() {
	name=$1
	shift
	if (cd "$work" && eval "$*") > "$work/log" 2>&1 && [ -s "$work/$name" ]; then
		cp "$work/$name" "$d/$name"
	else
		echo "seeds-cfi: '$name' left out: $(tail -n 1 "$work/log")" >&2
	fi
}

seed vdso "$CC -O1 -o dump dump.c && ./dump vdso vdso_noshdr"
[ -s "$work/vdso_noshdr" ] && cp "$work/vdso_noshdr" "$d/vdso_noshdr"
small="-O2 -Wl,-z,noseparate-code -Wl,--build-id=none"
# Only .debug_frame is kept of the debug sections: the rest is noise here.
nodebug="-R .debug_info -R .debug_abbrev -R .debug_line -R .debug_str -R .debug_line_str \
	-R .debug_aranges -R .debug_rnglists -R .debug_loclists -R .comment -R .symtab -R .strtab"
seed pie "$CC $small -fPIE -pie -o pie prog.c && strip pie"
seed nopie "$CC $small -fno-pie -no-pie -o nopie prog.c && strip nopie"
seed lib.so "$CC $small -shared -fPIC -o lib.so prog.c && strip lib.so"
seed static "$CC $small -static -nostdlib -no-pie -DNOLIBC -o static prog.c && strip static"
seed debug_frame "$CC $small -g -fno-asynchronous-unwind-tables -o debug_frame prog.c && objcopy $nodebug debug_frame"
seed debug_frame_z "objcopy --compress-debug-sections=zlib-gabi debug_frame debug_frame_z"
# e_shoff (8 bytes at 40), e_shnum and e_shstrndx (2 + 2 at 60) zeroed.
seed pie_noshdr "cp pie pie_noshdr && printf '\\000\\000\\000\\000\\000\\000\\000\\000' | dd of=pie_noshdr bs=1 seek=40 conv=notrunc && printf '\\000\\000\\000\\000' | dd of=pie_noshdr bs=1 seek=60 conv=notrunc"
exit 0
