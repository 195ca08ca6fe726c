#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Files any user writes, read by a root recorder (issue 25; docs/SECURITY.md).
#
#   cfi_bomb         a process maps an ELF file whose .eh_frame declares 1 GiB
#                    (sparse: it costs no disk): the recorder does not read
#                    it.  Its peak RSS stays within 64 MiB of the same
#                    recording of the same file declaring 64 KiB, the header
#                    counts one call-frame section over the cap, and the
#                    process's own frames are named in both
#   perfmap_symlink  /tmp/perf-PID.map of a process of nobody's is a symlink
#                    to a file of root's: not read (no line of the target
#                    becomes a name), the samples stay anonymous; the same
#                    map as a regular file of nobody's is read (the oracle
#                    that the process's map is looked for at all)
. "$(dirname "$0")/lib.sh"
lib_init integration/cfi_bomb integration/perfmap_symlink

case $(uname -m) in x86_64) ;; *) skip_all "the fixtures write x86-64 ELF files and code" ;; esac
need_fixture hostile_elf hostile_elf
need_fixture jit_perfmap jit_perfmap

# peak_rss OUT CMD...: run CMD; its peak resident set (KiB, the kernel's
# own count of the child) into OUT; CMD's status.
peak_rss() {
	pr_out=$1
	shift
	/usr/bin/python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$pr_out" "$@"
}

# bomb_run NAME BYTES: record the fixture mapping an ELF file whose
# .eh_frame declares BYTES; DATA in $T/NAME.data, peak RSS in $T/NAME.rss,
# the report in $T/NAME.report and .folded.  False (FAILed) on an error.
bomb_run() {
	rm -f "$T/$1.out"
	bg_start "$T/hostile_elf" "$T/$1.elf" "$2" 30 > "$T/$1.out"
	fx=$BG_PID
	if ! wait_until 20 grep -q ready "$T/$1.out"; then
		fail integration/cfi_bomb "the fixture did not start"
		show "$T/$1.out"
		return 1
	fi
	peak_rss "$T/$1.rss" timeout -k 5 60 "$BPFSYM" record -q -F "$REC_FREQ" -p "$fx" -d 2 \
		-o "$T/$1.data" 2> "$T/$1.err"
	rc=$?
	stop "$fx"
	record_ok integration/cfi_bomb "$T/$1.data" "$T/$1.err" "$rc" || return 1
	run_to 60 "$BPFSYM" report "$T/$1.data" > "$T/$1.report" 2> "$T/$1.report.err" || {
		fail integration/cfi_bomb "'bpfsym report' of $1 failed"
		show "$T/$1.report.err"
		return 1
	}
	folded integration/cfi_bomb "$T/$1.data" "$T/$1.folded"
}

test_cfi_bomb() {
	bomb_run small 65536 || return
	bomb_run bomb 1073741824 || return
	small=$(cat "$T/small.rss")
	bomb=$(cat "$T/bomb.rss")
	note "peak RSS: $small KiB with a 64 KiB .eh_frame, $bomb KiB with one declaring 1 GiB"
	note "bomb: $(grep '^# input caps' "$T/bomb.report")"
	if [ "$bomb" -gt $((small + 65536)) ]; then
		fail integration/cfi_bomb "the recorder's peak RSS grew by $((bomb - small)) KiB for the 1 GiB .eh_frame (cap: 64 MiB)"
		return
	fi
	if ! grep -q '^# input caps hit: 1 call-frame sections over 64 MiB' "$T/bomb.report"; then
		fail integration/cfi_bomb "the header does not count the refused section"
		grep '^#' "$T/bomb.report" | show
		return
	fi
	if grep -q '^# input caps' "$T/small.report"; then
		fail integration/cfi_bomb "a 64 KiB .eh_frame was counted as refused"
		grep '^# input caps' "$T/small.report" | show
		return
	fi
	for r in small bomb; do
		n=$(folded_count "$T/$r.folded" '^hostile_elf;(.*;)?hostile_burn$')
		if [ "$n" -lt 1 ]; then
			fail integration/cfi_bomb "$r: no sample names hostile_burn"
			head -5 "$T/$r.folded" | show
			return
		fi
	done
	pass integration/cfi_bomb
}

# map_run NAME: jit_perfmap as nobody, which writes its own perf map
# (NAME = regular: read as it is); NAME = symlink: then nobody replaces it
# with a symlink to $T/secret, a file of root's naming the same addresses
# root_secret_line (what nobody can do in /tmp).  The folded stacks in
# $T/NAME.folded.
map_run() {
	rm -f "$T/$1.out"
	bg_start setpriv --reuid=65534 --regid=65534 --clear-groups "$T/nobody/jit_perfmap" 30 \
		> "$T/$1.out"
	fx=$BG_PID
	JIT_PIDS="$JIT_PIDS $fx"
	map=/tmp/perf-$fx.map
	if ! wait_until 20 grep -q ready "$T/$1.out" || [ ! -s "$map" ]; then
		fail integration/perfmap_symlink "the JIT fixture did not start as nobody"
		show "$T/$1.out"
		return 1
	fi
	if [ "$1" = symlink ]; then
		awk '{ print $1, $2, "root_secret_line" }' "$map" > "$T/secret"
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh -c 'rm -f "$1" && ln -s "$2" "$1"' sh "$map" "$T/secret"
		if [ ! -L "$map" ]; then
			fail integration/perfmap_symlink "nobody could not put a symlink at $map"
			return 1
		fi
	fi
	bg_record "$T/$1.data" -p "$fx" -d 3
	reap "$REC"
	rc=$REAP_RC
	stop "$fx"
	record_ok integration/perfmap_symlink "$T/$1.data" "$T/$1.data.err" "$rc" || return 1
	folded integration/perfmap_symlink "$T/$1.data" "$T/$1.folded"
}

JIT_PIDS=
hostile_cleanup() {
	for q in $JIT_PIDS; do
		rm -f "/tmp/perf-$q.map"
	done
}
LIB_CLEANUP=hostile_cleanup

test_perfmap_symlink() {
	if ! command -v setpriv > /dev/null; then
		skip integration/perfmap_symlink "setpriv (util-linux) not installed"
		return
	fi
	# nobody runs the fixture from a directory it may enter.
	mkdir -p "$T/nobody" && cp "$T/jit_perfmap" "$T/nobody/" && chmod 755 "$T" "$T/nobody"
	map_run regular || return
	map_run symlink || return
	named=$(grep -c 'jit_hot_one' "$T/regular.folded")
	leaked=$(grep -c 'root_secret_line' "$T/symlink.folded")
	note "the map as nobody's regular file: $named stacks name jit_hot_one; through a symlink to root's file: $leaked stacks name its lines"
	if [ "$named" -lt 1 ]; then
		fail integration/perfmap_symlink "the regular perf map of nobody's process was not read (no oracle)"
		head -5 "$T/regular.folded" | show
		return
	fi
	if [ "$leaked" -ne 0 ]; then
		fail integration/perfmap_symlink "lines of root's file, reached through nobody's symlink, became names"
		grep root_secret_line "$T/symlink.folded" | head -3 | show
		return
	fi
	pass integration/perfmap_symlink
}

test_cfi_bomb
test_perfmap_symlink
lib_done
