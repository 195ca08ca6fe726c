#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make install` and `make uninstall` (issue 15, item 6; issue 26, item 3).
# No kernel is involved (LIB_ROOTLESS: it runs in make test, not in the VM,
# whose checkout is read-only).
#
#   install_layout      `make install DESTDIR PREFIX` (PREFIX: the old
#                       spelling of prefix) puts the binary (0755), every
#                       docs/*.1 (bpfsym.1 and the three commands'), the unit (ExecStart under bindir), the
#                       examples and the license (0644) under DESTDIR/PREFIX,
#                       and nothing else; the installed binary runs
#   install_gnu_dirs    `make install prefix= bindir= mandir= docdir= unitdir=`
#                       honours each directory; `make uninstall` with the
#                       same variables leaves no file in DESTDIR
LIB_ROOTLESS=1
. "$(dirname "$0")/lib.sh"
lib_init integration/install_layout integration/install_gnu_dirs

ROOT=$T/root

# ---- install_layout
if ! run_to 300 make -s -C "$BPFSYM_TOP" install DESTDIR="$ROOT" PREFIX=/usr/local > "$T/install.log" 2>&1; then
	fail integration/install_layout "make install failed"
	show "$T/install.log"
else
	files=$(cd "$ROOT" && find . -type f -printf '%m %p\n' | sort | tr '\n' ';')
	want=$( (
		echo "755 ./usr/local/bin/bpfsym"
		for m in "$BPFSYM_TOP"/docs/*.1; do echo "644 ./usr/local/share/man/man1/$(basename "$m")"; done
		echo "644 ./usr/local/lib/systemd/system/bpfsym.service"
		for e in busy.c parca.yaml config.alloy bpfsym.service.in; do echo "644 ./usr/local/share/doc/bpfsym/examples/$e"; done
		for l in LICENSE LGPL-2.1 BSD-2-Clause README.md; do echo "644 ./usr/local/share/doc/bpfsym/$l"; done
	) | sort | tr '\n' ';')
	if [ "$files" != "$want" ]; then
		fail integration/install_layout "installed files: '$files', want '$want'"
	elif ! "$ROOT/usr/local/bin/bpfsym" --help > "$T/help.txt" 2>&1 || ! grep -q -- '--switch-output' "$T/help.txt"; then
		fail integration/install_layout "the installed binary's --help fails or lacks --switch-output"
		show "$T/help.txt"
	else
		pass integration/install_layout
	fi
fi

# ---- install_gnu_dirs: each GNU directory variable, then uninstall
G=$T/gnu
vars="prefix=/opt/b bindir=/opt/b/sbin mandir=/opt/b/man docdir=/opt/b/d unitdir=/opt/b/units"
# shellcheck disable=SC2086 # the variables, one word each
if ! run_to 300 make -s -C "$BPFSYM_TOP" install DESTDIR="$G" $vars > "$T/gnu.log" 2>&1; then
	fail integration/install_gnu_dirs "make install $vars failed"
	show "$T/gnu.log"
else
	why=
	for f in sbin/bpfsym man/man1/bpfsym.1 d/examples/parca.yaml d/LICENSE units/bpfsym.service; do
		[ -f "$G/opt/b/$f" ] || why="$why no /opt/b/$f;"
	done
	grep -q '^ExecStart=/opt/b/sbin/bpfsym ' "$G/opt/b/units/bpfsym.service" 2> /dev/null ||
		why="$why the unit's ExecStart is not under bindir;"
	n=$(find "$G" -type f | wc -l)
	# shellcheck disable=SC2086
	run_to 60 make -s -C "$BPFSYM_TOP" uninstall DESTDIR="$G" $vars >> "$T/gnu.log" 2>&1 ||
		why="$why make uninstall failed;"
	left=$(cd "$G" && find . -type f | tr '\n' ' ')
	[ -z "$left" ] || why="$why left after uninstall: $left;"
	note "installed $n files under $vars; uninstall left '$left'"
	if [ -n "$why" ]; then
		fail integration/install_gnu_dirs "$why"
		show "$T/gnu.log"
	else
		pass integration/install_gnu_dirs
	fi
fi

lib_done
