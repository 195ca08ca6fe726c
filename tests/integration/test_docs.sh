#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The documentation says what the binary does: for each command (record,
# report, symbolize) the options its --help (and `bpfsym help CMD`) lists,
# the ones its own man page (docs/bpfsym-CMD.1) describes and the ones
# docs/cli.md's tables give are the same, long names and short letters
# alike.  And `make install` puts the binary and every man page (bpfsym.1,
# the overview, and the three commands') under DESTDIR/PREFIX.
#
#   docs_options_record, docs_options_report, docs_options_symbolize
#   docs_install
LIB_ROOTLESS=1
. "$(dirname "$0")/lib.sh"
lib_init integration/docs_options_record integration/docs_options_report \
	integration/docs_options_symbolize integration/docs_install

DOCS=$BPFSYM_TOP/docs
PAGES="bpfsym.1 bpfsym-record.1 bpfsym-report.1 bpfsym-symbolize.1"
CLI=$BPFSYM_TOP/docs/cli.md

# Options as "-x,--long" or ",--long", one per line, sorted.
# From --help: the lines that start an option's description.
help_opts() {
	awk '
	/^  +-/ {
		short = ""; long = ""
		if (match($0, /^  +-[a-zA-Z], /))
			short = substr($0, RSTART + RLENGTH - 4, 2)
		if (match($0, /--[a-z][a-z-]*/))
			long = substr($0, RSTART, RLENGTH)
		if (long != "")
			print short "," long
	}' | sort -u
}

# From man page $2: the tag line after each .TP in SECTION(s) matching RE.
man_opts() {
	awk -v re="$1" '
	/^\.SH / { insec = ($0 ~ re); next }
	insec && /^\.TP/ { tag = 1; next }
	insec && tag {
		tag = 0
		line = $0
		gsub(/\\-/, "-", line)
		gsub(/\\f[BIRP]/, "", line)
		short = ""; long = ""
		if (match(line, /(^|[ "])-[a-zA-Z]([" ,]|$)/)) {
			s = substr(line, RSTART, RLENGTH)
			gsub(/[^-a-zA-Z]/, "", s)
			short = s
		}
		if (match(line, /--[a-z][a-z-]*/))
			long = substr(line, RSTART, RLENGTH)
		if (long != "")
			print short "," long
	}' "$2" | sort -u
}

# From docs/cli.md: the first cell of table rows under the "## bpfsym CMD" heading.
cli_opts() {
	awk -v cmd="$1" '
	/^## / { insec = ($0 ~ ("^## bpfsym " cmd)); next }
	insec && /^\| *`-/ {
		split($0, cell, "|")
		c = cell[2]
		short = ""; long = ""
		if (match(c, /`-[a-zA-Z]`/))
			short = substr(c, RSTART + 1, 2)
		if (match(c, /`--[a-z][a-z-]*/))
			long = substr(c, RSTART + 1, RLENGTH - 1)
		if (long != "")
			print short "," long
	}' "$CLI" | sort -u
}

check_cmd() {	# check_cmd CMD HELPARGS MANSECTION-RE
	name=integration/docs_options_$1
	# shellcheck disable=SC2086
	"$BPFSYM" $2 --help > "$T/$1.help" 2>&1
	"$BPFSYM" help "$1" > "$T/$1.help2" 2>&1
	help_opts < "$T/$1.help" > "$T/$1.h"
	man_opts "$3" "$DOCS/bpfsym-$1.1" > "$T/$1.m"
	cli_opts "$1" > "$T/$1.c"
	note "$1: --help $(nlines "$T/$1.h") options, man page $(nlines "$T/$1.m"), cli.md $(nlines "$T/$1.c")"
	if [ "$(nlines "$T/$1.h")" -lt 3 ]; then
		fail "$name" "found only $(nlines "$T/$1.h") options in '$2 --help'"
		show "$T/$1.help"
	elif ! cmp -s "$T/$1.help" "$T/$1.help2"; then
		fail "$name" "'bpfsym help $1' is not '$2 --help'"
	elif [ "$(man_opts . "$DOCS/bpfsym.1" | wc -l)" -ne 0 ]; then
		fail "$name" "docs/bpfsym.1 (the overview) describes options: they belong in the commands' pages"
	elif ! cmp -s "$T/$1.h" "$T/$1.m"; then
		fail "$name" "--help and docs/bpfsym-$1.1 differ (< help, > man): $(diff "$T/$1.h" "$T/$1.m" | grep '^[<>]' | tr '\n' ' ')"
	elif ! cmp -s "$T/$1.h" "$T/$1.c"; then
		fail "$name" "--help and docs/cli.md differ (< help, > cli.md): $(diff "$T/$1.h" "$T/$1.c" | grep '^[<>]' | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

check_cmd record record '^\.SH RECORD'
check_cmd report report '^\.SH REPORT'
check_cmd symbolize symbolize '^\.SH SYMBOLIZE'

# ---- make install: both files, where PREFIX and DESTDIR say, and the page
# is a man page (when man is there to read it).
name=integration/docs_install
if ! command -v make > /dev/null 2>&1; then
	skip "$name" "make is not installed"
else
	# -o bpfsym: install what is built, never rebuild from inside a test.
	make -s -C "$BPFSYM_TOP" -o bpfsym install DESTDIR="$T/stage" PREFIX=/opt/b > "$T/install.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "make install exited with status $rc"
		show "$T/install.log"
	elif [ ! -x "$T/stage/opt/b/bin/bpfsym" ]; then
		fail "$name" "make install DESTDIR=... PREFIX=/opt/b did not put bin/bpfsym there"
		find "$T/stage" | show
	elif bad=$(for p in $PAGES; do cmp -s "$T/stage/opt/b/share/man/man1/$p" "$DOCS/$p" || echo "$p"; done) &&
	     [ -n "$bad" ]; then
		fail "$name" "share/man/man1 lacks docs/'s pages (or differs): $(echo $bad)"
		find "$T/stage" | show
	elif command -v man > /dev/null 2>&1 &&
	     ! MANWIDTH=80 man -l "$T/stage/opt/b/share/man/man1/bpfsym-record.1" 2> "$T/man.err" | grep -q 'mmap-pages'; then
		fail "$name" "man -l cannot render the installed page"
		show "$T/man.err"
	else
		pass "$name"
	fi
fi
lib_done
