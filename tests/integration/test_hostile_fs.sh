#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A file that never answers (issue 25, item 4): a process runs code from a
# FUSE file system (tests/fixtures/hangfs.c) that answers it and never
# answers the recorder's opens and reads, as a local user's hostile mount
# would.  Once such a request is read by the daemon, the kernel keeps the
# caller waiting through any signal, SIGKILL included, until the daemon
# answers or dies; so no file work may happen on the thread that drains
# the ring buffer.
#
#   hostile_fs_names    the recording goes on: another process's samples
#                       (burn, not on FUSE) are written with their names;
#                       the hung files' frames are unnamed with the reason
#                       "file did not answer" in the report header.
#   hostile_fs_sigint   SIGINT ends the recording within 1 s (the summary
#   hostile_fs_sigterm  line printed, the file complete), measured from the
#                       kill to the summary line with date +%s%N; status 0
#                       once the mount is gone; at most 2 requests left
#                       hanging (one per path: symbols, unwind tables) for
#                       the mount's 2 files.  (A worker stuck in the
#                       FUSE wait keeps the process from being reaped until
#                       the daemon dies, which no userspace can change: the
#                       test kills the daemon, then reaps.)
#   hostile_fs_reads    the mount answers the recorder's opens and reads of
#                       a file's first page (ELF headers, build-id note),
#                       never the rest (HANGFS_HANG=read): the unwinder's
#                       build of dlopen_burn's table hangs in its read of
#                       .eh_frame.  A program
#                       started after that (a copy of burn: a file no table
#                       exists for) still gets its table once the hung build
#                       is given up (its builder idle for 5 s): some of its samples
#                       reach _start; SIGINT still ends it within 1 s.
#   hostile_fs_slow     a slow file is not a hung one: the mount answers the
#                       recorder's opens and reads of files named slow_* 200 ms
#                       late (HANGFS_HANG=slow; one request at a time), the
#                       others at once.  A process runs slow_a.so for 1 s and
#                       exits while the recorder's job for it is still
#                       waiting; another then runs lib_burn.so from the same
#                       mount for 4 s: at least a quarter of its lib_burn
#                       samples are named lib_burn (at 68fda93 none were: the
#                       mount stayed marked as hung until slow_a.so, gone,
#                       was looked up again).  Then a third runs slow_b.so
#                       for 8 s: at least a quarter of its samples reach
#                       _start (the file's table comes once its ~25 slow
#                       requests, symbols and table, are answered: the
#                       unwinder asks again for a file whose open was slow).
#   hostile_fs_perfmap  a JIT whose /tmp is the mount (its own mount and PID
#                       namespaces: it is pid 1 there, its perf map
#                       /tmp/perf-1.map): the recorder's open of the perf
#                       map never answers; burn's samples are still named
#                       and SIGINT ends the recording within 1 s.  (At
#                       68fda93 perf maps were opened on the recorder's
#                       own thread: it hung there.)
#   hostile_fs_slow_wait  a process runs slow_a.so from the mount for 1 s
#                       and exits before the recorder's reads of the file
#                       (200 ms each, one at a time: seconds in all) are
#                       answered: its samples wait for the names, so every
#                       one of them in slow_a.so is named slow_a.  (At
#                       4686fc2 none was: their frames were written before
#                       the file answered, and no later sample of that
#                       gone process named them again.)
#
# On main (a601fbb) the recorder's own thread hangs in the open of the
# mapped file at the process's first MAP record: no sample is written and
# neither signal ends it.
#
# The daemon answers every process but the one with HANGFS_HANG=1 in its
# environment, so other profilers running on the machine are not hung.
# The mount is always taken down (daemon killed, fusermount3 -u -z or
# umount -l), whatever fails; every wait has a timeout.
. "$(dirname "$0")/lib.sh"
lib_init integration/hostile_fs_names integration/hostile_fs_sigint \
	integration/hostile_fs_sigterm integration/hostile_fs_reads integration/hostile_fs_slow \
	integration/hostile_fs_perfmap integration/hostile_fs_slow_wait

FS_PID=
MNT=
# Kill the daemon first (it ends the waits it left), then unmount.
fs_down() {
	if [ -n "$FS_PID" ]; then
		kill -KILL "$FS_PID" 2>/dev/null
		wait "$FS_PID" 2>/dev/null
		FS_PID=
	fi
	if [ -n "$MNT" ] && grep -q " $MNT fuse" /proc/mounts; then
		fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	MNT=
}
LIB_CLEANUP=fs_down

[ -c /dev/fuse ] || skip_all "no /dev/fuse"
command -v pkg-config > /dev/null 2>&1 && pkg-config --exists fuse3 ||
	skip_all "libfuse3-dev not installed (make deps)"
need_built hangfs "$T/hangfs.build.log" \
	cc -O2 -Wall -o "$T/hangfs" "$FIXTURES/hangfs.c" $(pkg-config --cflags --libs fuse3)
need_fixture burn burn
need_fixture dlopen_burn dlopen_burn -ldl
need_fixture libburn lib_burn.so -shared -fPIC -DNAME=lib_burn
need_fixture libburn slow_a.so -shared -fPIC -DNAME=slow_a
need_fixture libburn slow_b.so -shared -fPIC -DNAME=slow_b
need_fixture jit_burn jit_burn

# fs_up DIR: hangfs serving dlopen_burn and lib_burn.so at DIR; false when
# it is not mounted within 5 s.
fs_up() {
	mkdir -p "$1" || return 1
	rm -f "$T"/*.hung
	MNT=$1
	HANGFS_SLOW_MS=200 "$T/hangfs" "$1" dlopen_burn="$T/dlopen_burn" \
		lib_burn.so="$T/lib_burn.so" slow_a.so="$T/slow_a.so" slow_b.so="$T/slow_b.so" \
		perf-1.map="$T/lib_burn.so" > "$1.log" 2>&1 &
	FS_PID=$!
	wait_until 5 grep -q " $1 fuse.hangfs" /proc/mounts
}

# fs_mount NAME DIR: fs_up DIR; else NAME FAILs (the daemon's log shown),
# the mount is taken down, and false.
fs_mount() {
	fs_up "$2" && return 0
	fail "$1" "hangfs did not mount"
	show "$2.log"
	fs_down
	return 1
}

# hung_asked: hangfs left a request of the recorder unanswered.
hung_asked() {
	ls "$T"/*.hung > /dev/null 2>&1
}

# summary ERR: the recorder printed its closing line "bpfsym: N samples, ...".
summary() {
	grep -q '^bpfsym: [0-9]* samples' "$1"
}

# The bound on a signal's end: 1 s, or 3 s in a VM under TCG, where
# qemu runs the vCPUs in turn and timings mean nothing (the recorder
# ended in 1019-1561 ms there); what it tells apart is an end from a
# recorder stuck in a file that never answers, which never ends.
END_MS=1000
[ "${BPFSYM_VM_ACCEL:-}" = tcg ] && END_MS=3000

# end_hung SIG LABEL: send SIG to the recorder $rec and time its summary
# line (in $DATA.err): $ms from the kill, $ended 1 when it came within 5 s;
# then the mount down (only the daemon's death ends the waits it left, and
# then the process goes) and the recorder reaped: its status in $rc.
end_hung() {
	t0=$(date +%s%N)
	kill "-$1" "$rec"
	wait_until 5 summary "$DATA.err"
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	ended=0
	summary "$DATA.err" && ended=1
	note "$2: the summary after $ms ms; unanswered: $(cat "$T"/*.hung 2>/dev/null | tr '\n' ' ')"
	fs_down
	wait_exit "$rec" 20 || kill -KILL "$rec" 2>/dev/null
	wait "$rec"
	rc=$?
	LIB_PIDS=$(echo "$LIB_PIDS" | awk -v p="$rec" '{ for (i = 1; i <= NF; i++) if ($i != p) printf " %s", $i }')
}

# run_hung SIG NAME: record burn and a process running code from the hung
# mount for 2 s, end it with SIG; NAME FAILs unless it ends within 1 s and
# with status 0.  $DATA is the recording, $RUN_OK 1 when it ended well.
run_hung() {
	sig=$1
	name=$2
	RUN_OK=0
	DATA=$T/rec.$sig.data
	fs_mount "$name" "$T/mnt.$sig" || return
	bg_start "$T/burn" 30
	burn=$BG_PID
	# Runs code from the mount: the program, then lib_burn.so (after 1 s).
	bg_start "$MNT/dlopen_burn" - 30 - "$MNT/lib_burn.so" lib_burn
	mapper=$BG_PID
	if ! wait_until 5 grep -q lib_burn.so "/proc/$mapper/maps"; then
		fail "$name" "the process on the mount did not map lib_burn.so"
		stop "$burn"
		stop "$mapper"
		fs_down
		return
	fi
	bg_start env HANGFS_HANG=1 "$BPFSYM" record -p "$burn,$mapper" -o "$DATA" \
		> "$DATA.out" 2> "$DATA.err"
	rec=$BG_PID
	# The recorder asks for the files once it follows the processes: from
	# there, 2 s of recording.
	if ! wait_until 30 hung_asked; then
		fail "$name" "the recorder never asked the mount for its files: nothing was tested"
	fi
	sleep 2
	end_hung "$sig" "SIG$sig"
	stop "$burn"
	stop "$mapper"
	if [ "$ended" = 0 ]; then
		fail "$name" "SIG$sig did not end the recording within 5 s (status $rc once the mount went)"
		show "$DATA.err"
		return
	fi
	if [ "$ms" -ge "$END_MS" ]; then
		fail "$name" "SIG$sig ended the recording after $ms ms, not within $END_MS ms"
		return
	fi
	# One hostile mount holds one worker per path (symbols, unwind tables),
	# not one per file: its second file is not asked.
	hung=$(cat "$T"/*.hung 2> /dev/null | wc -l)
	if [ "$hung" -gt 2 ]; then
		fail "$name" "$hung requests left hanging for one mount of 2 files: a worker per file"
		return
	fi
	if [ "$rc" -ne 0 ]; then
		fail "$name" "bpfsym record exited with status $rc"
		show "$DATA.err"
		return
	fi
	RUN_OK=1
	pass "$name"
}

# names NAME DATA: burn's samples named (burn_inner), the hung files'
# frames counted as "file did not answer".
names() {
	run_to 60 "$BPFSYM" report "$2" > "$2.report" 2> "$2.report.err" &&
		folded "$1" "$2" "$2.folded" || {
		fail "$1" "bpfsym report failed"
		show "$2.report.err"
		return
	}
	all=$(folded_count "$2.folded" '^burn;')
	named=$(folded_count "$2.folded" '^burn;(.*;)?burn_inner$')
	hung=$(folded_count "$2.folded" '^dlopen_burn;')
	header=$(grep '^# unnamed frames' "$2.report")
	note "burn: $all samples, $named in burn_inner; dlopen_burn: $hung samples; $header"
	# burn's stacks end in burn_inner, or in the clock call it checks its budget with.
	if [ "$all" -lt 10 ] || [ $((named * 10)) -lt $((all * 8)) ]; then
		fail "$1" "$named of burn's $all samples named burn_inner in 2 s: the recording stalled, or lost names"
		show "$2.folded"
	elif [ "$hung" -lt 10 ]; then
		fail "$1" "only $hung samples of the process on the mount"
	elif ! echo "$header" | grep -q 'file did not answer'; then
		fail "$1" "the header does not count frames of files that did not answer: $header"
	elif grep '^dlopen_burn;' "$2.folded" | grep -q 'lib_burn[^.]'; then
		fail "$1" "a frame of the hung lib_burn.so has a name"
	else
		pass "$1"
	fi
}

# hung_read: hangfs left a read of the recorder unanswered.
hung_read() {
	cat "$T"/*.hung 2> /dev/null | grep -q '^read '
}

# reads_hang NAME: as above, the recorder's reads only never answered.
reads_hang() {
	name=$1
	DATA=$T/rec.reads.data
	fs_mount "$name" "$T/mnt.reads" || return
	bg_start "$MNT/dlopen_burn" - 60 - "$MNT/lib_burn.so" lib_burn
	mapper=$BG_PID
	if ! wait_until 5 grep -q lib_burn.so "/proc/$mapper/maps"; then
		fail "$name" "the process on the mount did not map lib_burn.so"
		stop "$mapper"
		fs_down
		return
	fi
	bg_start env HANGFS_HANG=read "$BPFSYM" record -a -F "$REC_FREQ" -o "$DATA" \
		> "$DATA.out" 2> "$DATA.err"
	rec=$BG_PID
	if ! wait_until 30 hung_read; then
		fail "$name" "the recorder never read from the mount: nothing was tested"
		kill -INT "$rec"
		fs_down
		stop "$mapper"
		return
	fi
	# A program whose table is built after the hung one: a copy, its own file.
	cp "$T/burn" "$T/burn_late"
	bg_start "$T/burn_late" 60
	late=$BG_PID
	sleep 18
	end_hung INT reads
	stop "$late"
	stop "$mapper"
	if [ "$ended" = 0 ] || [ "$ms" -ge "$END_MS" ] || [ "$rc" -ne 0 ]; then
		fail "$name" "SIGINT: ended $ended after $ms ms, status $rc (within $END_MS ms and 0 wanted)"
		show "$DATA.err"
		return
	fi
	folded "$name" "$DATA" "$DATA.folded" || return
	all=$(folded_count "$DATA.folded" '^burn_late;')
	root=$(folded_count "$DATA.folded" '^burn_late;_start;')
	note "burn_late: $all samples, $root from _start"
	if [ "$all" -lt 50 ]; then
		fail "$name" "only $all samples of burn_late in 18 s"
	elif [ $((root * 10)) -lt "$all" ]; then
		fail "$name" "$root of burn_late's $all samples reach _start: its table was never built after the hung one"
		grep '^burn_late;' "$DATA.folded" | sort -k2 -n -r | head -5 | show
	else
		pass "$name"
	fi
}

# slow_files NAME: a slow file's pending job does not leave its file
# system unnamed once it ended (see the top).
slow_files() {
	name=$1
	DATA=$T/rec.slow.data
	fs_mount "$name" "$T/mnt.slow" || return
	rm -f "$T/go1" "$T/go2" "$T/go3" "$T"/*.so.slow
	bg_start "$T/dlopen_burn" "$T/go1" 1 - "$MNT/slow_a.so" slow_a
	p1=$BG_PID
	bg_start "$T/dlopen_burn" "$T/go2" 4 - "$MNT/lib_burn.so" lib_burn
	p2=$BG_PID
	cp "$T/dlopen_burn" "$T/slow_burn"
	bg_start "$T/slow_burn" "$T/go3" 8 - "$MNT/slow_b.so" slow_b
	p3=$BG_PID
	bg_start env HANGFS_HANG=slow "$BPFSYM" record -p "$p1,$p2,$p3" -F "$REC_FREQ" -o "$DATA" \
		> "$DATA.out" 2> "$DATA.err"
	rec=$BG_PID
	if ! wait_until 30 file_nonempty "$DATA"; then
		fail "$name" "the recorder did not start"
		show "$DATA.err"
		stop "$rec"; stop "$p1"; stop "$p2"; stop "$p3"; fs_down
		return
	fi
	touch "$T/go1"
	wait_exit "$p1" 30
	slowreq=$(cat "$T"/*.so.slow 2> /dev/null | wc -l)
	touch "$T/go2"
	wait_exit "$p2" 60
	touch "$T/go3"
	wait_exit "$p3" 60
	kill -INT "$rec"
	wait_exit "$rec" 30
	reap "$rec"
	fs_down
	if [ "$REAP_RC" -ne 0 ]; then
		fail "$name" "bpfsym record exited with status $REAP_RC"
		show "$DATA.err"
		return
	fi
	folded "$name" "$DATA" "$DATA.folded" || return
	all=$(folded_count "$DATA.folded" 'lib_burn[.]so|;lib_burn(;|$)')
	named=$(folded_count "$DATA.folded" ';lib_burn(;|$)')
	sall=$(folded_count "$DATA.folded" '^slow_burn;((.*;)?slow_b(;|$)|.*slow_b[.]so)')
	sroot=$(folded_count "$DATA.folded" '^slow_burn;_start;((.*;)?slow_b(;|$)|.*slow_b[.]so)')
	note "slow_a.so: $slowreq requests of the recorder answered 200 ms late while slow_a ran; lib_burn.so: $named of $all samples named lib_burn; slow_burn: $sroot of $sall samples in slow_b.so reach _start"
	if [ "$slowreq" -lt 1 ]; then
		fail "$name" "the recorder did not ask for slow_a.so while it ran: nothing was tested"
	elif [ "$all" -lt 50 ]; then
		fail "$name" "only $all samples in lib_burn.so in 4 s"
		show "$DATA.err"
	elif [ $((named * 4)) -lt "$all" ]; then
		fail "$name" "$named of $all samples in lib_burn.so named: its file system stayed marked as hung after slow_a.so's job ended"
		grep 'lib_burn' "$DATA.folded" | sort -k2 -n -r | head -5 | show
	elif [ "$sall" -lt 50 ]; then
		fail "$name" "only $sall samples of slow_burn in slow_b.so in 8 s"
	elif [ $((sroot * 4)) -lt "$sall" ]; then
		fail "$name" "$sroot of slow_burn's $sall samples in slow_b.so reach _start: the slow file never got its table"
		grep '^slow_burn;' "$DATA.folded" | sort -k2 -n -r | head -5 | show
	else
		pass "$name"
	fi
}

# jit_perfmap_hang NAME: see the top.
jit_perfmap_hang() {
	name=$1
	DATA=$T/rec.jit.data
	if ! command -v unshare > /dev/null 2>&1; then
		skip "$name" "no unshare (util-linux)"
		return
	fi
	fs_mount "$name" "$T/mnt.jit" || return
	bg_start "$T/burn" 30
	burn=$BG_PID
	# Its /tmp is the mount; it runs from its directory, hidden under /tmp then.
	bg_start unshare -m -p -f --mount-proc sh -c \
		"cd '$T' && mount --bind '$MNT' /tmp && exec ./jit_burn 30"
	ns=$BG_PID
	wait_until 5 pgrep -P "$ns" > /dev/null
	jit=$(pgrep -P "$ns" | head -1)
	if [ -z "$jit" ] || ! wait_until 5 grep -q ' /tmp fuse' "/proc/$jit/mounts"; then
		skip "$name" "cannot run a process with its own mount and PID namespaces here"
		stop "$burn"; stop "$ns"; fs_down
		return
	fi
	bg_start env HANGFS_HANG=1 "$BPFSYM" record -p "$burn,$jit" -o "$DATA" > "$DATA.out" 2> "$DATA.err"
	rec=$BG_PID
	if ! wait_until 30 hung_asked; then
		fail "$name" "the recorder never asked the mount for the perf map: nothing was tested"
	fi
	sleep 2
	end_hung INT jit
	stop "$burn"
	stop "$ns"
	if [ "$ended" = 0 ] || [ "$ms" -ge "$END_MS" ]; then
		fail "$name" "SIGINT did not end the recording within $END_MS ms (ended $ended, after $ms ms)"
		show "$DATA.err"
		return
	fi
	folded "$name" "$DATA" "$DATA.folded" || return
	all=$(folded_count "$DATA.folded" '^burn;')
	named=$(folded_count "$DATA.folded" '^burn;(.*;)?burn_inner$')
	jits=$(folded_count "$DATA.folded" '^jit_burn;')
	note "burn: $all samples, $named in burn_inner; jit_burn: $jits; asked: $(cat "$T"/perf-1.map.hung 2> /dev/null | tr '\n' ' ')"
	if ! [ -s "$T/perf-1.map.hung" ]; then
		fail "$name" "the perf map on the mount was not asked for"
	elif [ "$all" -lt 10 ] || [ $((named * 10)) -lt $((all * 8)) ]; then
		fail "$name" "$named of burn's $all samples named burn_inner in 2 s: the recording stalled"
	elif [ "$jits" -lt 10 ]; then
		fail "$name" "only $jits samples of jit_burn"
	else
		pass "$name"
	fi
}

# slow_wait NAME: a gone process's samples in a slow file wait for its
# names (see the top).
slow_wait() {
	name=$1
	DATA=$T/rec.wait.data
	fs_mount "$name" "$T/mnt.wait" || return
	rm -f "$T/go" "$T"/*.so.slow
	bg_start "$T/dlopen_burn" "$T/go" 1 - "$MNT/slow_a.so" slow_a
	p1=$BG_PID
	bg_start "$T/burn" 30
	p2=$BG_PID
	bg_start env HANGFS_HANG=slow "$BPFSYM" record -p "$p1,$p2" -F "$REC_FREQ" -o "$DATA" \
		> "$DATA.out" 2> "$DATA.err"
	rec=$BG_PID
	if ! wait_until 30 file_nonempty "$DATA"; then
		fail "$name" "the recorder did not start"
		show "$DATA.err"
		stop "$rec"; stop "$p1"; stop "$p2"; fs_down
		return
	fi
	touch "$T/go"
	wait_exit "$p1" 30
	slowreq=$(cat "$T"/slow_a.so.slow 2> /dev/null | wc -l)
	# Its ~20 requests, 200 ms each, one at a time, answered before the
	# end (which waits for a slow file only a while).
	sleep 8
	kill -INT "$rec"
	wait_exit "$rec" 30
	reap "$rec"
	rc=$REAP_RC
	stop "$p1"
	stop "$p2"
	fs_down
	if [ "$rc" -ne 0 ]; then
		fail "$name" "bpfsym record exited with status $rc"
		show "$DATA.err"
		return
	fi
	run_to 60 "$BPFSYM" report "$DATA" > "$DATA.report" 2> "$DATA.report.err" &&
		folded "$name" "$DATA" "$DATA.folded" || {
		fail "$name" "bpfsym report failed"
		show "$DATA.report.err"
		return
	}
	all=$(folded_count "$DATA.folded" '^dlopen_burn;.*slow_a')
	unnamed=$(folded_count "$DATA.folded" '^dlopen_burn;.*[[]slow_a[.]so[+]0x')
	header=$(grep '^# unnamed frames' "$DATA.report")
	note "slow_a.so: $slowreq requests answered late while slow_a ran; $all samples in it, $unnamed with a frame of it unnamed; $header"
	if [ "$slowreq" -lt 1 ]; then
		fail "$name" "the recorder did not ask for slow_a.so while it ran: nothing was tested"
	elif [ "$all" -lt 50 ]; then
		fail "$name" "only $all samples in slow_a.so in 1 s"
		show "$DATA.err"
	elif [ "$unnamed" -ne 0 ]; then
		fail "$name" "$unnamed of $all samples in slow_a.so have an unnamed frame of it"
		grep '^dlopen_burn;' "$DATA.folded" | sort -k2 -n -r | head -5 | show
	elif echo "$header" | grep -q 'file did not answer'; then
		fail "$name" "frames written unnamed while slow_a.so was read: $header"
	else
		pass "$name"
	fi
}

slow_files integration/hostile_fs_slow
slow_wait integration/hostile_fs_slow_wait
jit_perfmap_hang integration/hostile_fs_perfmap
run_hung INT integration/hostile_fs_sigint
first_ok=$RUN_OK
first=$DATA
run_hung TERM integration/hostile_fs_sigterm
if [ "$first_ok" = 1 ]; then
	names integration/hostile_fs_names "$first"
elif [ "$RUN_OK" = 1 ]; then
	names integration/hostile_fs_names "$DATA"
else
	fail integration/hostile_fs_names "no recording ended well to read"
fi
reads_hang integration/hostile_fs_reads
lib_done
