#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-pyelf.sh DIR: seed inputs for fuzz_pyelf: small ELF files built
# with $CC that the probe takes for CPython 3.11, 3.12 and 3.13
# interpreters (the symbols, Py_Version, PyCode_Type with its tp_members,
# 3.13's _Py_DebugOffsets, laid out as the real ones: a shared object
# with RELATIVE relocations, a non-PIE executable, stripped), one for
# 3.10 and a plain library.  The real interpreters are 7-30 MiB: too big
# to mutate.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
CC=${CC:-cc}
mkdir -p "$d" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-pyseeds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cat > "$work/py.c" <<'C'
/* MINOR: 10 (no Py_Version), 11, 12, 13. */
typedef unsigned long u64;
struct md { const char *name; int type; long offset; int flags; const char *doc; };
#if MINOR == 11
#define FIRST 72
#define ADAPTIVE 184
#else
#define FIRST 68
#define ADAPTIVE (MINOR == 12 ? 192 : 200)
#endif
static struct md members[] = {
	{ "co_argcount", 1, 48, 1, 0 }, { "co_firstlineno", 1, FIRST, 1, 0 },
	{ "co_filename", 6, 112, 1, 0 }, { "co_name", 6, 120, 1, 0 },
	{ "co_qualname", 6, 128, 1, 0 }, { "co_linetable", 6, 136, 1, 0 }, { 0 },
};
struct type { u64 head[3]; const char *tp_name; long basic, item; char pad[240 - 48];
	      struct md *tp_members; char tail[160]; };
struct type PyCode_Type = { .tp_name = "code", .basic = ADAPTIVE, .item = 2, .tp_members = members };
struct type PyUnicode_Type = { .tp_name = "str" }, PyBytes_Type = { .tp_name = "bytes" };
#if MINOR >= 11
const u64 Py_Version = 0x03000000ul | MINOR << 16 | 0x01f0;
#endif
__attribute__((section(".PyRuntime"))) u64 _PyRuntime[200] = {
#if MINOR >= 13
	0x7970677562656478ul, 0x030d01f0, 0, [5] = 632, [8] = 7264, [9] = 7344, [21] = 8,
	[23] = 72, [24] = 152, [25] = 160, [29] = 8, [30] = 0, [31] = 56, [33] = 70, [35] = 112, [36] = 120,
	[37] = 128, [38] = 136, [39] = 68, [43] = 200, [45] = 8, [65] = 16, [66] = 32, [68] = 32,
	[69] = 16, [70] = 40,
#endif
	[199] = 1 };
int _PyEval_EvalFrameDefault(int x) { return x * 3 + (int)_PyRuntime[199]; }
#ifndef LIB
int main(int argc, char **argv) { (void)argv; return _PyEval_EvalFrameDefault(argc); }
#endif
C
build() {
	"$CC" -O1 -w "$@" 2>/dev/null || echo "seeds-pyelf: cannot build $*" >&2
}
for m in 11 12 13; do
	build -DMINOR=$m -DLIB -shared -fPIC -o "$d/lib3$m.so" "$work/py.c"
	build -DMINOR=$m -no-pie -rdynamic -o "$d/exe3$m" "$work/py.c"
done
build -DMINOR=10 -DLIB -shared -fPIC -o "$d/lib310.so" "$work/py.c"
[ -f "$d/lib313.so" ] && strip -o "$d/lib313-stripped.so" "$d/lib313.so" 2>/dev/null
printf 'int f(int x) { return x; }\n' > "$work/plain.c"
build -shared -fPIC -o "$d/plain.so" "$work/plain.c"
exit 0
