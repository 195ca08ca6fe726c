#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make install` (issue 15, item 6).  No kernel is involved (LIB_ROOTLESS:
# it runs in make test, not in the VM, whose checkout is read-only).
#
#   install_layout      `make install DESTDIR PREFIX` puts the binary (0755)
#                       and the man page (0644) under DESTDIR/PREFIX, and
#                       nothing else; the installed binary runs
LIB_ROOTLESS=1
. "$(dirname "$0")/lib.sh"
lib_init integration/install_layout

ROOT=$T/root

# ---- install_layout
if ! run_to 300 make -s -C "$BPFSYM_TOP" install DESTDIR="$ROOT" PREFIX=/usr/local > "$T/install.log" 2>&1; then
	fail integration/install_layout "make install failed"
	show "$T/install.log"
else
	files=$(cd "$ROOT" && find . -type f -printf '%m %p\n' | sort | tr '\n' ';')
	want="644 ./usr/local/share/man/man1/bpfsym.1;755 ./usr/local/bin/bpfsym;"
	if [ "$files" != "$want" ]; then
		fail integration/install_layout "installed files: '$files', want '$want'"
	elif ! "$ROOT/usr/local/bin/bpfsym" --help > "$T/help.txt" 2>&1 || ! grep -q -- '--switch-output' "$T/help.txt"; then
		fail integration/install_layout "the installed binary's --help fails or lacks --switch-output"
		show "$T/help.txt"
	else
		pass integration/install_layout
	fi
fi

lib_done
