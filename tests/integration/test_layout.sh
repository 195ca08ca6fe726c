#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The shape of user/ (docs/ARCHITECTURE.md): one folder per stage, the
# include rules between them (scripts/check-layout.sh), no function too
# long to read in one go, no file past the size where it should be split.
#
#   layout_includes      every #include in user/ follows the folder rules
#   layout_top           user/ itself holds at most two .c files
#   layout_functions     no function in user/ over 100 lines
#   layout_files         no .c or .h file in user/ over 800 lines
LIB_ROOTLESS=1
. "$(dirname "$0")/lib.sh"
lib_init integration/layout_includes integration/layout_top integration/layout_functions \
	integration/layout_files

U=$BPFSYM_TOP/user

name=integration/layout_includes
sh "$BPFSYM_TOP/scripts/check-layout.sh" "$BPFSYM_TOP" > "$T/layout.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	fail "$name" "$(nlines "$T/layout.out") includes break the folder rules, e.g. $(head -1 "$T/layout.out")"
	show "$T/layout.out"
elif [ -s "$T/layout.out" ]; then
	fail "$name" "check-layout.sh exited 0 but printed: $(head -1 "$T/layout.out")"
else
	pass "$name"
fi

name=integration/layout_top
top=$(find "$U" -maxdepth 1 -name '*.c' | awk 'END { print NR }')
folders=$(find "$U" -mindepth 1 -maxdepth 1 -type d | awk 'END { print NR }')
note "user/: $top .c files at the top, $folders stage folders"
if [ "$top" -gt 2 ]; then
	fail "$name" "$top .c files directly in user/: $(find "$U" -maxdepth 1 -name '*.c' | tr '\n' ' ')"
elif [ "$folders" -lt 5 ]; then
	fail "$name" "only $folders folders in user/"
else
	pass "$name"
fi

# A function: a line starting a definition at column 0, "{" alone at column
# 0, and the "}" at column 0 that closes it (the kernel's style, ours).
name=integration/layout_functions
find "$U" -name '*.c' | sort | xargs awk '
FNR == 1 { sig = ""; start = 0 }
/^[a-zA-Z_].*\(/ { sig = $0; sigl = FNR }
/^\{/ && sig != "" { start = FNR }
/^\}/ && start {
	if (FNR - start - 1 > 100)
		printf "%s:%d: %d lines: %s\n", FILENAME, sigl, FNR - start - 1, sig
	start = 0; sig = ""
}' > "$T/long"
if [ -s "$T/long" ]; then
	fail "$name" "$(nlines "$T/long") functions over 100 lines, e.g. $(head -1 "$T/long")"
	show "$T/long"
else
	pass "$name"
fi

name=integration/layout_files
find "$U" -name '*.[ch]' | sort | xargs wc -l | awk '$2 != "total" && $1 > 800 { print $2 ": " $1 " lines" }' > "$T/big"
if [ -s "$T/big" ]; then
	fail "$name" "$(nlines "$T/big") files over 800 lines, e.g. $(head -1 "$T/big")"
	show "$T/big"
else
	pass "$name"
fi
lib_done
