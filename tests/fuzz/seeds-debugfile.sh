#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-debugfile.sh DIR: seed inputs for fuzz_debugfile, each a byte
# placing the debug file (0 by build-id, 1 DIR/NAME, 2 DIR/.debug/NAME,
# 3 DEBUG_ROOT/DIR/NAME, 4 nowhere), the binary's length as a
# little-endian u32, the binary, the debug file.  The pairs are made here
# with $CC, objcopy and strip: a stripped PIE with a build-id and a
# debuglink to its --only-keep-debug file, the same without a build-id, a
# debuglink to a file of another build, and a binary linking to itself.
# A variant this toolchain cannot build is left out with a note on stderr.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
CC=${CC:-cc}
mkdir -p "$d" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-dbgseeds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

cat > "$work/p.c" <<'SRC'
#define NI __attribute__((noinline, used))
static int NI s_one(int x) { return x * 3 + 1; }
static int NI s_two(int x) { return s_one(x) - 2; }
#ifdef OTHER
int NI other_fn(int x) { return x ^ 5; }
#endif
int main(int argc, char **argv) { (void)argv; return s_two(argc); }
SRC

# pack WHERE BINARY DEBUG NAME: the seed NAME.
pack() {
	n=$(wc -c < "$work/$2")
	{
		printf '%b' "\\0$(printf %03o "$1")"
		for s in 0 8 16 24; do
			printf '%b' "\\0$(printf %03o $(( (n >> s) & 255 )))"
		done
		cat "$work/$2" "$work/$3"
	} > "$d/$4"
}

# pair NAME CMD: run CMD in the work dir; it leaves NAME.bin and NAME.dbg.
pair() {
	if (cd "$work" && eval "$2") > "$work/log" 2>&1 && [ -s "$work/$1.bin" ] && [ -s "$work/$1.dbg" ]; then
		for w in 0 1 2 3 4; do
			pack $w "$1.bin" "$1.dbg" "$1.$w"
		done
	else
		echo "make-corpus: debugfile seed '$1' left out: $(tail -n 1 "$work/log")" >&2
	fi
}

small="-O1 -Wl,-z,noseparate-code"
# debuglink: the debug file's name as objcopy writes it, its CRC over that file.
pair bid "$CC $small -Wl,--build-id=sha1 -o bid.full p.c && objcopy --only-keep-debug bid.full bid.dbg &&
	strip --strip-all -o bid.strip bid.full && objcopy --add-gnu-debuglink=bid.dbg bid.strip bid.bin"
pair nobid "$CC $small -Wl,--build-id=none -o nobid.full p.c && objcopy --only-keep-debug nobid.full nobid.dbg &&
	strip --strip-all -o nobid.strip nobid.full && objcopy --add-gnu-debuglink=nobid.dbg nobid.strip nobid.bin"
# Another build's debug file under the right name: its build-id differs.
pair other "$CC $small -Wl,--build-id=sha1 -DOTHER -o other.full p.c && objcopy --only-keep-debug other.full other.dbg &&
	$CC $small -Wl,--build-id=sha1 -o other.mine p.c && strip --strip-all -o other.strip other.mine &&
	cp other.dbg mine.dbg && objcopy --add-gnu-debuglink=mine.dbg other.strip other.bin"
# A debuglink naming the binary itself (prog, as fuzz_debugfile calls it).
pair self "$CC $small -o self.full p.c && strip --strip-all -o prog self.full &&
	objcopy --add-gnu-debuglink=prog prog self.bin && objcopy --only-keep-debug self.full self.dbg"
exit 0
