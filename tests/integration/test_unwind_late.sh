#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Code that appears while bpfsym records is unwound by its call-frame
# tables as soon as they are built (issue 14): the unwinder's per-process
# views follow exec and dlopen from the mapping events, and a file seen
# for the first time gets its table from the worker, off the sampling path.
# Everything is built at test time with -fomit-frame-pointer, so a stack
# that reaches main was walked by the tables, not by frame pointers.
#
#   unwind_exec     `bpfsym record -- unw_chain 8`: the process is
#                   exec'd after recording began, so its files' tables are
#                   built while it runs.  At least 90% of its samples with
#                   a user frame reach _start through main (the first
#                   samples may end "no-table" while a table is built: at
#                   199 Hz a build of a few ms costs a sample or two; under
#                   TCG, ~0.4 s of the process's CPU time, 0.45 s with
#                   builds beside it, 11% of 4 s: hence 8 s), and
#                   the header's end reasons count every one of them, and
#                   no file's table is built twice (-v's log lines).
#   unwind_dlopen   `record -p` of dlopen_burn, which dlopen()s
#                   lib_burn.so (built -fomit-frame-pointer) after the
#                   recording started and runs lib_burn in it for 3 s of
#                   CPU time: at least 90% of the samples whose leaf is
#                   lib_burn have main;lib_burn above it and reach _start.
#                   A table built only at start-up would leave them at the
#                   leaf (the library was not mapped then).
#   unwind_fork     `record -- unw_fork 40 0.05` (after a first run that
#                   builds the tables): 40 children made by fork
#                   alone, one after the other, each burning 50 ms of CPU
#                   time in main -> child_work -> child_burn.  At least
#                   90% of their samples in child_burn reach _start
#                   through main;child_work: a child has its parent's view
#                   from its first instruction (the BPF side lends it at
#                   fork, a fresh view as well as one of ours), not from when its FORK record is read.
#   unwind_fork_all the same under -a, unw_fork started once the recording
#                   runs and burning 0.3 s itself before its first fork:
#                   its children's first samples take its mappings (on
#                   kernels without the VMA iterator, by a FORK record).
#   unwind_short    `record -F 19 -- sh -c 'python3 -c LOOP' x 100`: 100
#                   programs of Debian's python3 (no frame pointers, a
#                   few libraries mapped by ld.so) living ~100 ms each,
#                   the churn of an always-on recorder.  At most 10% of
#                   their stacks end with no view of their process, and
#                   at least 85% reach their root, and the reader writes
#                   at most 10 views for them, those of the first, whose
#                   files had no tables yet (50 under TCG, where tables
#                   build slowly against a start): the tracker fills a new
#                   process's view from its exec on, with no round trip
#                   through the reader, which drains every 100 ms.
#   unwind_vdso     at least 90% of the samples in the vdso (vdso_burn:
#                   clock_gettime in a loop, recorded for 2 s of its CPU
#                   time) reach _start through main: the vdso is walked by
#                   its own .eh_frame (the unwinder reads our vdso image;
#                   perf --call-graph dwarf loses these stacks).
. "$(dirname "$0")/lib.sh"
lib_init integration/unwind_exec integration/unwind_dlopen integration/unwind_vdso \
	integration/unwind_fork integration/unwind_fork_all integration/unwind_short

[ "$(uname -m)" = x86_64 ] || skip_all "the unwinder is x86-64 only"
UNW_CFLAGS="-fomit-frame-pointer -fasynchronous-unwind-tables"
need_fixture unw_chain unw_chain $UNW_CFLAGS
need_fixture dlopen_burn dlopen_burn -ldl $UNW_CFLAGS
need_fixture libburn lib_burn.so -shared -fPIC -DNAME=lib_burn $UNW_CFLAGS
need_fixture vdso_burn vdso_burn $UNW_CFLAGS
need_fixture unw_fork unw_fork $UNW_CFLAGS

# root_stats FOLDED COMM LEAF: "USER LEAFN ROOTED": samples of COMM with a
# user frame; of those, whose user leaf is LEAF (any, when LEAF is "");
# and of those, whose user stack starts at _start and holds main.
root_stats() {
	awk -v comm="$2" -v want="$3" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != comm)
			next
		u = 0; leaf = ""; first = ""; hasmain = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			u++
			if (first == "")
				first = f[i]
			if (f[i] == "main")
				hasmain = 1
			leaf = f[i]
		}
		if (!u)
			next
		user += n
		if (want != "" && leaf != want)
			next
		hit += n
		if (first == "_start" && hasmain)
			rooted += n
	}
	END { print user + 0, hit + 0, rooted + 0 }' "$1"
}

# ends_sum REPORT_HEADER: the sum of the "# user stacks ended:" counts.
ends_sum() {
	awk '/^# user stacks ended:/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { sub(/,/, "", $i); s += $i }
		found = 1
	} END { print found ? s : -1 }' "$1"
}

# top_stacks FOLDED COMM: the 5 most frequent stacks of COMM, for a failure.
top_stacks() {
	awk -v comm="$2" 'index($0, comm ";") == 1' "$1" | sort -t' ' -k2 -nr 2>/dev/null |
		awk '{ print "#   " $0 }' | head -5
}

# ---- exec: recorded from before the process exists
name=integration/unwind_exec
run_to 120 "$BPFSYM" record -v -F 199 -q -o "$T/exec.data" -- "$T/unw_chain" 8 2> "$T/exec.err"
rc=$?
# -v: "unwind: PATH: N rows in T ms" per table built; a file is one identity, one table.
twice=$(sed -n 's/^unwind: \(.*\): [0-9]* rows in .*/\1/p' "$T/exec.err" | sort | uniq -d | head -3)
if record_ok "$name" "$T/exec.data" "$T/exec.err" $rc && folded "$name" "$T/exec.data" "$T/exec.folded"; then
	"$BPFSYM" report "$T/exec.data" 2> /dev/null | grep '^#' > "$T/exec.hdr"
	set -- $(root_stats "$T/exec.folded" unw_chain "")
	user=$1 rooted=$3
	ends=$(ends_sum "$T/exec.hdr")
	note "unw_chain: $user samples with a user frame, $rooted reach _start through main; $(grep '^# user stacks ended:' "$T/exec.hdr")"
	if [ "$user" -lt 100 ]; then
		fail "$name" "only $user samples of unw_chain with a user frame (8 s of CPU time at 199 Hz: ~1600 expected)"
	elif [ $((100 * rooted)) -lt $((90 * user)) ]; then
		fail "$name" "only $rooted of $user samples reach _start through main"
		top_stacks "$T/exec.folded" unw_chain
	elif [ "$ends" -lt "$user" ]; then
		fail "$name" "the header's end reasons count $ends samples, fewer than the $user with a user frame"
	elif [ -n "$twice" ]; then
		fail "$name" "tables built twice for one file: $(echo $twice)"
	else
		pass "$name"
	fi
fi

# ---- dlopen: the library is mapped after recording started
name=integration/unwind_dlopen
rm -f "$T/go" "$T/dl.cpu"
bg_start "$T/dlopen_burn" "$T/go" 3 "$T/dl.cpu" "$T/lib_burn.so" lib_burn
p=$BG_PID
wait_until 5 alive "$p"
if ! bg_record "$T/dl.data" -p "$p" -F 199 -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/dl.data.err"
	stop "$p"
else
	touch "$T/go"
	wait_exit "$p" 120
	end_record
	if record_ok "$name" "$T/dl.data" "$T/dl.data.err" "$REC_RC" &&
	   folded "$name" "$T/dl.data" "$T/dl.folded"; then
		set -- $(root_stats "$T/dl.folded" dlopen_burn lib_burn)
		leafn=$2 rooted=$3
		note "dlopen_burn: $leafn samples in lib_burn, $rooted reach _start through main; its CPU time: $(fixture_cpu "$T/dl.cpu" lib_burn) ms"
		if [ "$leafn" -lt 80 ]; then
			fail "$name" "only $leafn samples in lib_burn (1 s of CPU time at 199 Hz: ~200 expected)"
			top_stacks "$T/dl.folded" dlopen_burn
		elif [ $((100 * rooted)) -lt $((90 * leafn)) ]; then
			fail "$name" "only $rooted of the $leafn samples in lib_burn (dlopen()ed while recording) reach _start through main"
			top_stacks "$T/dl.folded" dlopen_burn
		else
			pass "$name"
		fi
	fi
fi

# ---- fork: children that live 50 ms each
# check_fork NAME DATA: at least 400 samples of unw_fork's children in
# child_burn (40 x 50 ms of CPU time at 499 Hz: ~1000), 90% of them
# reaching _start through main;child_work.
check_fork() {
	folded "$1" "$2" "$2.folded" || return
	set -- "$1" "$2" $(awk '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != "unw_fork")
			next
		leaf = ""; first = ""; chain = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			if (first == "")
				first = f[i]
			if (f[i] == "child_work" && f[i - 1] == "main")
				chain = 1
			leaf = f[i]
		}
		if (leaf != "child_burn")
			next
		hit += n
		if (first == "_start" && chain)
			rooted += n
	}
	END { print hit + 0, rooted + 0 }' "$2.folded")
	note "unw_fork: $3 samples in child_burn, $4 reach _start through main;child_work; $("$BPFSYM" report "$2" 2> /dev/null | grep '^# user stacks ended:')"
	if [ "$3" -lt 400 ]; then
		fail "$1" "only $3 samples in child_burn (40 x 50 ms of CPU time at 499 Hz: ~1000 expected)"
		top_stacks "$2.folded" unw_fork
	elif [ $((100 * $4)) -lt $((90 * $3)) ]; then
		fail "$1" "only $4 of the $3 samples in child_burn reach _start through main;child_work"
		top_stacks "$2.folded" unw_fork
	else
		pass "$1"
	fi
}

name=integration/unwind_fork
# A first run makes the recorder build the tables, so the second's parent
# has only the tracker's fresh view, which its children borrow.  The build
# is off the sampling path and takes its time (under TCG ~0.25 s of CPU,
# ~0.5 s of wall time for unw_fork, libc and ld.so): until then a fresh
# view names no table and the walk takes frame pointers, which this
# fixture has not, so a child sampled then ends at its leaf whatever the
# loan does (in the 6.1 VM the second run's first 4-6 children did).  The
# pause lets the build end before the children this test is about.
run_to 120 "$BPFSYM" record -F 499 -q -o "$T/fork.data" -- sh -c '"$0" 1 0.01 && sleep 2 && "$0" 40 0.05' \
	"$T/unw_fork" 2> "$T/fork.err"
rc=$?
if record_ok "$name" "$T/fork.data" "$T/fork.err" $rc; then
	check_fork "$name" "$T/fork.data"
fi

# The same under -a, started once the recording runs: the parent burns
# 0.3 s first, so it is followed from its first sample before its
# children exist, and each child's own first sample takes its parent's
# mappings (a FORK record where the kernel has no VMA iterator:
# bpf/pend.bpf.h).
name=integration/unwind_fork_all
if ! bg_record "$T/forka.data" -a -F 499 -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/forka.data.err"
else
	run_to 120 "$T/unw_fork" 40 0.05 0.3
	note "unw_fork 40 0.05 0.3: status $?"
	end_record
	if record_ok "$name" "$T/forka.data" "$T/forka.data.err" $REC_RC; then
		check_fork "$name" "$T/forka.data"
	fi
fi

# ---- short programs, one after the other, at an always-on rate
name=integration/unwind_short
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	skip "$name" "$PY (Debian's python3, built without frame pointers) not found"
else
	run_to 180 "$BPFSYM" record -v -F 19 -q -o "$T/short.data" -- sh -c \
		'i=0; while [ $i -lt 100 ]; do "$0" -c "for i in range(2000000): pass"; i=$((i + 1)); done' \
		"$PY" 2> "$T/short.err"
	rc=$?
	if record_ok "$name" "$T/short.data" "$T/short.err" $rc; then
		hline=$("$BPFSYM" report "$T/short.data" 2> /dev/null | grep '^# user stacks ended:')
		set -- $(echo "$hline" | awk '{
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { v = $i; sub(/,/, "", v); n += v;
				if ($(i - 1) == "root") root = v; if ($(i - 1) == "no-process") nop = v }
		} END { print n + 0, root + 0, nop + 0 }')
		all=$1 root=$2 noproc=$3
		# -v: "bpfsym: unwinder: N views written, M mapping changes wanted one ..."
		views=$(sed -n 's/^bpfsym: unwinder: \([0-9]*\) views written.*/\1/p' "$T/short.err")
		note "python3 x 100: $hline; views written by the reader: ${views:-?}"
		# 100 programs of ~100 ms of CPU time at 19 Hz: ~190 samples.
		# The programs that start before their files' tables are built
		# need views of the reader's: about 10 here, more where building
		# is slow against starting a program (under TCG, 11 once; the
		# build is CPU work, a program's start mostly the kernel's).  If
		# the fresh views carried none, it would be one a program.
		maxviews=10
		[ "${BPFSYM_VM_ACCEL:-}" = tcg ] && maxviews=50
		if [ -z "$views" ]; then
			fail "$name" "no 'bpfsym: unwinder: N views written' line in the -v log"
		elif [ "$views" -gt "$maxviews" ]; then
			fail "$name" "the reader wrote $views views for 100 programs of the same files (their fresh views should have had them all)"
		elif [ "$all" -lt 40 ]; then
			fail "$name" "only $all user stacks of 100 python3 programs (~190 expected at 19 Hz)"
		elif [ $((10 * noproc)) -gt "$all" ]; then
			fail "$name" "$noproc of $all stacks ended with no view of their process (more than 10%)"
		elif [ $((100 * root)) -lt $((85 * all)) ]; then
			fail "$name" "only $root of $all stacks reached their root"
		else
			pass "$name"
		fi
	fi
fi

# ---- the vdso, by its own call-frame information
name=integration/unwind_vdso
bg_start "$T/vdso_burn" 600
p=$BG_PID
vdso_started() {
	[ "$(cat "/proc/$p/comm" 2> /dev/null)" = vdso_burn ]
}
wait_until 5 vdso_started || fail_all "vdso_burn did not start"
# Until the process had 2 s of CPU time since the recording started (a
# busy machine stretches the wall time, not the samples).
rc=1
if bg_record "$T/vdso.data" -p "$p" -F 199; then
	cpu_wait 2000 "$CPU_WAIT_MAX" "$p"
	end_record
	rc=$REC_RC
	cp "$T/vdso.data.err" "$T/vdso.err"
else
	note "the recording did not start (no output file within 30 s)"
	show "$T/vdso.data.err"
	echo "no recording" > "$T/vdso.err"
fi
stop "$p"
if record_ok "$name" "$T/vdso.data" "$T/vdso.err" $rc && folded "$name" "$T/vdso.data" "$T/vdso.folded"; then
	# Samples whose user leaf is in the vdso: its functions, named by the vdso's own symbols.
	awk 'index($0, "vdso_burn;") == 1' "$T/vdso.folded" > "$T/vdso.mine"
	set -- $(awk '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		leaf = ""; first = ""; hasmain = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			if (first == "")
				first = f[i]
			if (f[i] == "main")
				hasmain = 1
			leaf = f[i]
		}
		if (leaf !~ /^__vdso_|^\[vdso/)
			next
		hit += n
		if (first == "_start" && hasmain)
			rooted += n
	}
	END { print hit + 0, rooted + 0 }' "$T/vdso.mine")
	note "vdso_burn: $1 samples with a vdso leaf, $2 reach _start through main"
	if [ "$1" -lt 50 ]; then
		fail "$name" "only $1 samples with a vdso leaf in 2 s of its CPU time at 199 Hz (~300 expected)"
		top_stacks "$T/vdso.folded" vdso_burn
	elif [ $((100 * $2)) -lt $((90 * $1)) ]; then
		fail "$name" "only $2 of $1 samples with a vdso leaf reach _start through main"
		top_stacks "$T/vdso.folded" vdso_burn
	else
		pass "$name"
	fi
fi
lib_done
