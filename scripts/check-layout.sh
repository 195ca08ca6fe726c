#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The include rules of user/ (docs/ARCHITECTURE.md, "Include rules"): each
# stage folder includes only the folders below it, so data flows one way
# and no folder can depend back on one above.  Prints each include that
# breaks a rule, "FILE: includes HEADER (FOLDER may include: ...)", and
# exits 1 when there is one; prints nothing and exits 0 otherwise.
# Usage: scripts/check-layout.sh [TOP]
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2

# Folder: what it may include, besides itself.  Headers outside user/
# (include/bpfsym.h, the ABI; build/*.skel.h, build/*.pb-c.h) are below all.
# runtime/*: each runtime's folder (runtime/python/ ...), behind
# runtime/runtime.h; a rule or an allowed folder "runtime/*" stands for
# every one of them.
rules='
base
report base
model base
symbolize/elf base
symbolize/kernel base
symbolize/jit base symbolize
symbolize base model report symbolize/elf symbolize/jit symbolize/kernel
unwind base model symbolize/elf
runtime base model report symbolize/elf
runtime/* base model report symbolize/elf runtime
ingest base model report symbolize unwind runtime
record base model report symbolize ingest unwind runtime runtime/*
agent base model report symbolize ingest record view view/format
view base report symbolize symbolize/kernel
view/format base report view
cli base model report symbolize symbolize/kernel record agent view view/format
main cli
'
set -f	# "runtime/*" in the rules is a pattern of ours, not a glob
find user -name '*.[ch]' | sort | while read -r f; do
	rel=${f#user/}
	case $rel in
	*/*) dir=${rel%/*} ;;
	*) dir=main ;;
	esac
	rule=$dir
	case $dir in
	runtime/*/*) ;;		# deeper than a runtime's folder: no rule
	runtime/*) rule='runtime/*' ;;
	esac
	allowed=$(echo "$rules" | awk -v d="$rule" '$1 == d { $1 = ""; print; exit }')
	if ! echo "$rules" | awk -v d="$rule" '$1 == d { found = 1 } END { exit !found }'; then
		echo "$f: folder '$dir' has no include rule (add it to scripts/check-layout.sh and docs/ARCHITECTURE.md)"
		continue
	fi
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
		case $inc in
		*/*) ;;
		*) continue ;;		# include/, build/: below every folder
		esac
		idir=${inc%/*}
		[ "$idir" = "$dir" ] && continue
		ok=0
		# Exact folders: a subfolder is allowed only when it is listed.
		for a in $allowed; do
			[ "$idir" = "$a" ] && ok=1
			case $a:$idir in
			'runtime/*':runtime/*/*) ;;
			'runtime/*':runtime/*) ok=1 ;;
			esac
		done
		[ $ok = 1 ] || echo "$f: includes $inc ($dir may include: ${allowed# })"
	done
done | tee /tmp/check-layout.$$ 
bad=$(wc -l < /tmp/check-layout.$$)
rm -f /tmp/check-layout.$$
[ "$bad" -eq 0 ]
