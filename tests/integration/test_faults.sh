#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Signals and I/O faults (issue 6, item 3).
#
#   SIGINT/SIGTERM under load (-a -F 999, both CPUs busy): status 0 and a
#   complete report.  SIGKILL under load: the file reads up to the last
#   flushed block and says it is truncated.  (test_record_basic.sh has the
#   same three at the default rate with -p: record_sigint, record_sigterm,
#   record_sigkill_truncated.)
#
#   ENOSPC (a 64 KiB tmpfs, and -o /dev/full) and EIO (a loop device shrunk
#   under its ext4 file system, so writeback hits sectors past the device's
#   end: the block layer's own I/O error, nothing simulated): status 1, one
#   line on stderr naming the file and the error, and no file that looks
#   complete.  What is decided: the partial recording is kept, as perf does
#   and as after a SIGKILL; it has no END record, so `bpfsym report` reads
#   it as truncated (docs/FORMAT.md: the END record is written only after
#   an fsync of everything before it).
#
#   report --pprof/--flamegraph OUT into a full tmpfs: status 1, one line,
#   and no OUT (they write beside OUT and rename), no temporary left.  OUT
#   a device (/dev/full): written in place, the error reported, the device
#   node still a device.
. "$(dirname "$0")/lib.sh"
lib_init integration/faults_sigint_load integration/faults_sigterm_load \
	integration/faults_sigkill_load integration/faults_enospc_record \
	integration/faults_dev_full_record integration/faults_eio_record \
	integration/faults_enospc_pprof integration/faults_enospc_flamegraph \
	integration/faults_dev_full_pprof integration/faults_dev_full_flamegraph

MNTS=
# Unmount what this test mounted and free its loop device, whatever happens
# (lib_cleanup runs it, before the scratch directory they are in goes).
unmount_all() {
	for m in $MNTS; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	MNTS=
	if [ -n "${LOOPDEV:-}" ]; then
		losetup -d "$LOOPDEV" 2>/dev/null
		LOOPDEV=
	fi
}
LIB_CLEANUP=unmount_all

# mount_tmpfs DIR SIZE: a tmpfs of SIZE at DIR; false when it cannot be had.
mount_tmpfs() {
	mkdir -p "$1" && mount -t tmpfs -o "size=$2" none "$1" 2> "$1.mount.err" || return 1
	MNTS="$1 $MNTS"
}

# fill DIR: write zeros into DIR until its file system is full.
fill() {
	dd if=/dev/zero of="$1/filler" bs=4096 2>/dev/null
	return 0
}

need_fixture burn burn
# Both CPUs busy for the whole file (600 s of CPU time each at most);
# killed by the clean-up.
bg_start "$T/burn" 600
burn1=$BG_PID
bg_start "$T/burn" 600
burn2=$BG_PID

# complete NAME DATA CPU_MS: the report of DATA is complete (no truncation
# warning, an END record's loss line) with at least half the samples of
# burn that the two burners' CPU_MS of CPU time give at 999 Hz; FAIL NAME
# otherwise.
complete() {
	run_to 60 "$BPFSYM" report "$2" > "$2.report" 2> "$2.report.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$1" "'bpfsym report' exited with status $rc"
		show "$2.report.err"
		return 1
	fi
	if cat "$2.report" "$2.report.err" | grep -qi truncat; then
		fail "$1" "the report says the recording is truncated"
		grep -i truncat "$2.report" "$2.report.err" | show
		return 1
	fi
	if ! grep -q '^# lost: [0-9]' "$2.report"; then
		fail "$1" "the report header has no END record's loss line"
		head -8 "$2.report" | show
		return 1
	fi
	folded "$1" "$2" "$2.folded" || return 1
	n=$(folded_count "$2.folded" '^burn;(.*;)?burn_inner$')
	all=$(folded_count "$2.folded" '.')
	note "$(basename "$2"): $all samples, $n of burn;...;burn_inner; the burners had $3 ms of CPU time (~$(samples_for "$3" 999) samples)"
	if ! samples_ok "$1" "burn;...;burn_inner ($all samples in all)" "$n" "$3" 999; then
		return 1
	fi
	return 0
}

# not_complete NAME DATA: DATA is absent, or `bpfsym report` reads it as
# truncated, or refuses it; never a complete-looking recording.
not_complete() {
	if [ ! -e "$2" ]; then
		note "$(basename "$2"): no file left"
		return 0
	fi
	# The reports go to $T: the file system of DATA may be full.
	r=$T/$(basename "$2").$(basename "$(dirname "$2")")
	run_to 60 "$BPFSYM" report "$2" > "$r.report" 2> "$r.report.err"
	rc=$?
	note "$(basename "$2"): $(wc -c < "$2") bytes left; report status $rc: $(head -1 "$r.report.err")"
	if [ $rc -ge 124 ]; then
		fail "$1" "'bpfsym report' of the partial file ended with status $rc"
		show "$r.report.err"
		return 1
	fi
	if [ $rc -eq 0 ] && ! cat "$r.report" "$r.report.err" | grep -qi truncat; then
		fail "$1" "the partial file reads as a complete recording"
		head -8 "$r.report" | show
		return 1
	fi
	return 0
}

# one_error NAME ERRFILE RC REGEX: status 1 and exactly one stderr line
# matching REGEX.
one_error() {
	if [ "$3" -ne 1 ]; then
		fail "$1" "exited with status $3, expected 1"
		show "$2"
		return 1
	fi
	if [ "$(nlines "$2")" -ne 1 ]; then
		fail "$1" "printed $(nlines "$2") lines on stderr, expected one"
		show "$2"
		return 1
	fi
	if ! grep -Eq -e "$4" "$2"; then
		fail "$1" "the message does not match /$4/"
		show "$2"
		return 1
	fi
	return 0
}

# ---- SIGINT / SIGTERM / SIGKILL at -a -F 999 with both CPUs busy, once
# the burners had 1 s of CPU time and then two blocks were flushed.
# $FLUSHED_CPU: their CPU time (ms) up to the first of those flushes (all
# of it in the file even after SIGKILL); $LOAD_CPU: up to the signal.
sig_load() {	# sig_load NAME SIG DATA
	rm -f "$3"
	bg_start "$BPFSYM" record -a -F 999 -q -o "$3"
	rec=$BG_PID
	if ! wait_until 30 file_nonempty "$3"; then
		fail "$1" "no output file 30 s after the start of the recording"
		stop "$rec"
		return 1
	fi
	c0=$(cpu_ms "$burn1" "$burn2")
	cpu_wait 1000 "$CPU_WAIT_MAX" "$burn1" "$burn2"
	FLUSHED_CPU=$CPU_GOT
	wait_grown "$3" 2 30
	LOAD_CPU=$(( $(cpu_ms "$burn1" "$burn2") - c0 ))
	if ! alive "$rec"; then
		reap "$rec"
		fail "$1" "the recording ended by itself (status $REAP_RC) before SIG$2"
		return 1
	fi
	kill -"$2" "$rec"
	if ! wait_exit "$rec" 30; then
		fail "$1" "still running 30 s after SIG$2"
		stop "$rec"
		return 1
	fi
	reap "$rec"
	return 0
}

for sig in INT TERM; do
	name=integration/faults_sig$(echo $sig | tr A-Z a-z)_load
	data=$T/load$sig.data
	sig_load "$name" $sig "$data" 2> "$data.err" || { show "$data.err"; continue; }
	note "SIG$sig under load: status $REAP_RC, stderr: $(cat "$data.err")"
	if [ "$REAP_RC" -ne 0 ]; then
		fail "$name" "exited with status $REAP_RC after SIG$sig, expected 0"
		show "$data.err"
	elif ! grep -Eq '^bpfsym: [1-9][0-9]* samples' "$data.err"; then
		fail "$name" "no summary line with samples on stderr"
		show "$data.err"
	elif complete "$name" "$data" "$LOAD_CPU"; then
		pass "$name"
	fi
done

name=integration/faults_sigkill_load
data=$T/loadKILL.data
if sig_load "$name" KILL "$data" 2> "$data.err"; then
	run_to 60 "$BPFSYM" report "$data" > "$data.report" 2> "$data.report.err"
	rc=$?
	note "SIGKILL under load: $(wc -c < "$data") bytes; report status $rc: $(head -1 "$data.report.err")"
	if [ $rc -ne 0 ]; then
		fail "$name" "'bpfsym report' of the SIGKILLed recording exited with status $rc"
		show "$data.report.err"
	elif ! grep -q 'WARNING: truncated' "$data.report" || ! grep -qi truncat "$data.report.err"; then
		fail "$name" "the report does not say the recording is truncated"
		head -8 "$data.report" | show
	elif ! folded "$name" "$data" "$data.folded"; then
		:
	elif ! samples_ok "$name" "burn;...;burn_inner, written before the kill (the burners had $FLUSHED_CPU ms of CPU time two flushes before it)" \
		"$(folded_count "$data.folded" '^burn;(.*;)?burn_inner$')" "$FLUSHED_CPU" 999; then
		show "$data.folded"
	else
		pass "$name"
	fi
else
	show "$data.err"
fi

# ---- ENOSPC: a 64 KiB tmpfs fills within seconds at -a -F 999.
name=integration/faults_enospc_record
small=$T/small
SMALL_OK=0
if ! mount_tmpfs "$small" 64k; then
	skip "$name" "cannot mount a tmpfs: $(cat "$small.mount.err")"
else
	SMALL_OK=1
	run_to 120 "$BPFSYM" record -a -F 999 -q -d 60 -o "$small/x.data" 2> "$T/enospc.err"
	rc=$?
	note "record into a 64 KiB tmpfs: status $rc, stderr: $(cat "$T/enospc.err")"
	if one_error "$name" "$T/enospc.err" $rc "'$small/x.data'.*No space left on device" &&
		not_complete "$name" "$small/x.data"; then
		pass "$name"
	fi
	rm -f "$small/x.data"
fi

name=integration/faults_dev_full_record
if [ ! -c /dev/full ]; then
	skip "$name" "no /dev/full"
else
	run_to 60 "$BPFSYM" record -a -F 999 -q -d 5 -o /dev/full 2> "$T/devfull.err"
	rc=$?
	note "record -o /dev/full: status $rc, stderr: $(cat "$T/devfull.err")"
	if ! one_error "$name" "$T/devfull.err" $rc "'/dev/full'.*No space left on device"; then
		:
	elif [ ! -c /dev/full ]; then
		fail "$name" "/dev/full is no longer a character device"
	else
		pass "$name"
	fi
fi

# ---- EIO: ext4 (no journal) on a loop device whose backing file is then
# cut to 4 MiB (losetup -c): the file's blocks lie past the device's end,
# their writeback fails in the block layer, and fsync (at the latest) says
# EIO.  (ext2, whose indirect blocks are read at write time, said ENOMEM
# instead, now and then: not what is tested here.)
name=integration/faults_eio_record
LOOPDEV=
why=
for tool in losetup mkfs.ext4 truncate; do
	command -v $tool > /dev/null 2>&1 || why="'$tool' not installed"
done
# The loop driver may be a module not loaded yet (tests/kernel/'s VM
# loads none it is not asked for).
[ -z "$why" ] && [ ! -e /dev/loop-control ] && modprobe -q loop 2> /dev/null
[ -z "$why" ] && [ ! -e /dev/loop-control ] && why="no loop device support (/dev/loop-control, modprobe loop)"
if [ -z "$why" ]; then
	back=$T/eioback mnt=$T/eiomnt
	mkdir -p "$mnt"
	if ! mount_tmpfs "$back" 80m; then
		why="cannot mount a tmpfs"
	elif ! truncate -s 64M "$back/img" || ! mkfs.ext4 -q -F -O ^has_journal -b 4096 -N 64 "$back/img" > "$T/mkfs.log" 2>&1; then
		why="mkfs.ext4 failed: $(head -1 "$T/mkfs.log")"
	elif ! LOOPDEV=$(losetup -f --show "$back/img" 2> "$T/losetup.err"); then
		LOOPDEV=
		why="losetup failed: $(head -1 "$T/losetup.err")"
	elif ! mount -t ext4 "$LOOPDEV" "$mnt" 2> "$T/mount.err"; then
		why="cannot mount ext4 from $LOOPDEV: $(head -1 "$T/mount.err")"
	else
		MNTS="$mnt $MNTS"
		# The recording's blocks then lie past 8 MiB.
		dd if=/dev/zero of="$mnt/low" bs=1M count=8 2>/dev/null
		sync
	fi
fi
if [ -n "$why" ]; then
	skip "$name" "$why"
else
	data=$mnt/x.data
	bg_start "$BPFSYM" record -a -F 999 -q -d 6 -o "$data" 2> "$T/eio.err"
	rec=$BG_PID
	if ! wait_until 30 file_nonempty "$data"; then
		fail "$name" "no output file 30 s after the start of the recording"
		stop "$rec"
	else
		# The metadata (64 inodes: a small inode table) sits below
		# 4 MiB, the recording's blocks above: ext4 allocates them at
		# writeback (delalloc), where the block layer refuses them.
		truncate -s 4M "$back/img" && losetup -c "$LOOPDEV"
		note "loop device cut to $(cat "/sys/block/${LOOPDEV#/dev/}/size" 2>/dev/null) sectors"
		reap "$rec"
		rc=$REAP_RC
		note "record into the shrunk device: status $rc, stderr: $(cat "$T/eio.err")"
		if one_error "$name" "$T/eio.err" $rc "'$data'.*Input/output error" &&
			not_complete "$name" "$data"; then
			pass "$name"
		fi
	fi
fi

# ---- report --pprof / --flamegraph OUT into a full tmpfs, and into /dev/full.
# A recording of the signal tests, or one of its own when they made none.
src=$T/loadINT.data
[ -s "$src" ] || src=$T/loadTERM.data
src_why=
if [ ! -s "$src" ]; then
	src=$T/report_src.data
	run_to 60 "$BPFSYM" record -a -F 999 -q -d 2 -o "$src" 2> "$src.err"
	rc=$?
	note "no recording of the signal tests: recorded $src (status $rc)"
	if [ $rc -ne 0 ] || [ ! -s "$src" ]; then
		src_why="no recording to report: bpfsym record -a -d 2 exited with status $rc"
		show "$src.err"
	fi
fi
for fmt in pprof flamegraph; do
	name=integration/faults_enospc_$fmt
	if [ -n "$src_why" ]; then
		fail "$name" "$src_why"
	elif [ "$SMALL_OK" -ne 1 ]; then
		skip "$name" "no tiny tmpfs (cannot mount a tmpfs: see faults_enospc_record)"
	else
		rm -f "$small"/*
		fill "$small"
		run_to 60 "$BPFSYM" report "$src" --$fmt "$small/out" > "$T/$fmt.out" 2> "$T/$fmt.err"
		rc=$?
		left=$(ls "$small" | grep -v '^filler$' | tr '\n' ' ')
		note "report --$fmt into a full tmpfs: status $rc, stderr: $(cat "$T/$fmt.err"); left: '$left'"
		if ! one_error "$name" "$T/$fmt.err" $rc "--$fmt '$small/out'.*No space left on device"; then
			:
		elif [ -n "$left" ]; then
			fail "$name" "files left in the full tmpfs: $left"
		else
			pass "$name"
		fi
		rm -f "$small"/*
	fi

	name=integration/faults_dev_full_$fmt
	if [ -n "$src_why" ]; then
		fail "$name" "$src_why"
	elif ! command -v mknod > /dev/null; then
		skip "$name" "mknod not installed"
	else
		# A device node of our own with /dev/full's numbers: a bug here
		# replaces this one, not the system's.
		rm -f "$T/full"
		mknod "$T/full" c 1 7
		run_to 60 "$BPFSYM" report "$src" --$fmt "$T/full" > "$T/$fmt.out" 2> "$T/$fmt.err"
		rc=$?
		note "report --$fmt into a /dev/full node: status $rc, stderr: $(cat "$T/$fmt.err")"
		if ! one_error "$name" "$T/$fmt.err" $rc "--$fmt '$T/full'.*No space left on device"; then
			:
		elif [ ! -c "$T/full" ]; then
			fail "$name" "the device node was replaced by a regular file"
		elif ls "$T" | grep -q '^full\.'; then
			fail "$name" "a temporary file was left beside it: $(ls "$T" | grep '^full\.')"
		else
			pass "$name"
		fi
		rm -f "$T/full"
	fi
done

stop "$burn1"
stop "$burn2"
unmount_all
lib_done
