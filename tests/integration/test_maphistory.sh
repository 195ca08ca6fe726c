#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Mapping history: the mappings a sample needs are known when it is taken,
# whatever happened to the process or its files since.
#
#   short_lived_cmd, short_lived_all, short_lived_deleted
#       40 processes of 0.1 s CPU each, most gone before anyone could read
#       their /proc/PID/maps: their samples name short_burn, 80% of what
#       short_burn's own CPU time gives at the rate or more.  With
#       -- COMMAND, with -a running alongside, and with each binary deleted
#       as soon as its process has exited (the file must have been pinned
#       when it was mapped).
#   rename_pid, rename_all, rename_before
#       a binary replaced on disk by rename(2) while it runs: its samples
#       name the original's function (orig_burn), never the new file's
#       (new_burn, same layout, so reading the wrong file names it).
#   mntns_pid, mntns_all
#       a binary that exists only in a private mount namespace (tmpfs),
#       with a decoy of the same path on the host.
#   dlopen_cmd, dlopen_pid, dlopen_all, dlopen_all_new
#       two libraries dlopen()ed, run and dlclose()d one after the other
#       during the recording (likely at the same address); under -a the
#       process is followed from its first sample only (_new: started
#       once the recording runs, so its mappings since its exec come with
#       that first sample).
#   jit_cmd, jit_snapshot_pid, jit_snapshot_all
#       code in an anonymous page made executable with mprotect: its
#       samples end in [anon+0x..], never [unknown]; also when the page
#       existed before the recording (the start-up snapshot).
#   loss_accounting
#       the summary line and the report header count samples and losses,
#       and agree.
#   code_gone_cmd, code_gone_pid
#       code taken away by mprotect, a MAP_FIXED data mmap and munmap, N
#       times each (tests/fixtures/code_gone.c): the tracker reports an
#       unmapping for every one (-v counts them), in both call-graph modes,
#       and for the same changes of data only it reports none but for a
#       margin (its own record of the process's code tells it nothing
#       executable was there).  The same with -p, of a process started
#       before the recording (its record then comes from the start-up
#       snapshot).
#
# How many samples each must have derives from the CPU time the fixtures
# had (written by them, or read from /proc while they run): at 199 Hz, half
# of 199 per CPU second (lib.sh's want_samples), however busy the machine.
. "$(dirname "$0")/lib.sh"
lib_init integration/short_lived_cmd integration/short_lived_all integration/short_lived_deleted \
	integration/rename_pid integration/rename_all integration/rename_before \
	integration/mntns_pid integration/mntns_all \
	integration/dlopen_cmd integration/dlopen_pid integration/dlopen_all integration/dlopen_all_new \
	integration/jit_cmd integration/jit_snapshot_pid integration/jit_snapshot_all \
	integration/loss_accounting integration/code_gone_cmd integration/code_gone_pid

# ---- fixtures
need_fixture short_burn short_burn
need_fixture jit_burn jit_burn
need_fixture rename_burn rb_orig -DNAME=orig_burn
need_fixture rename_burn rb_new -DNAME=new_burn
need_fixture dlopen_burn dlopen_burn -ldl
need_fixture libburn lib_burn.so -shared -fPIC -DNAME=lib_burn
need_fixture libburn lib_burn_b.so -shared -fPIC -DNAME=lib_burn_b
need_fixture code_gone code_gone

# The driver of the short-lived processes: runs DIR/PREFIX01 .. PREFIXnn,
# PAR at a time, each burning MS ms of CPU and appending what it had to
# CPUFILE; with "rm", deletes each batch's binaries as soon as the batch
# has exited.
cat > "$T/driver.sh" <<'EOF'
dir=$1 pre=$2 n=$3 par=$4 ms=$5 cpufile=$6 del=${7:-}
i=1
while [ $i -le $n ]; do
	j=0
	batch=
	while [ $j -lt $par ] && [ $i -le $n ]; do
		b=$dir/$pre$(printf %02d $i)
		"$b" "$ms" "$cpufile" &
		batch="$batch $b"
		i=$((i + 1))
		j=$((j + 1))
	done
	wait
	if [ -n "$del" ]; then
		rm -f $batch
	fi
done
EOF

NPROC=40
# mkcopies DIR PREFIX ln|cp: NPROC names for short_burn (hard links: one
# file; copies: one file each).  The comm of each process is its name.
mkcopies() {
	rm -rf "$1"
	mkdir -p "$1"
	i=1
	while [ $i -le $NPROC ]; do
		if [ "$3" = ln ]; then
			ln "$T/short_burn" "$1/$2$(printf %02d $i)"
		else
			cp "$T/short_burn" "$1/$2$(printf %02d $i)"
		fi
		i=$((i + 1))
	done
}

# check_short NAME FOLDED PREFIX CPUFILE: the short-lived processes
# PREFIXnn, which wrote the CPU time they had to CPUFILE.
check_short() {
	ustats_set "$2" "$3[0-9][0-9]" short_burn
	cpu=$(fixture_cpu "$4" short_burn)
	ran=$(nlines "$4")
	# Processes that had CPU time for 5 samples or more (25 ms at 199 Hz):
	# one without any sample is then a one-in-a-hundred event.
	sure=$(awk '$2 >= 0.025 { n++ } END { print n + 0 }' "$4")
	note "$3nn: $S_TOTAL samples in $S_NCOMMS of $NPROC processes; $S_USER with a user frame, $S_NAMED named, $S_FN in short_burn, $S_UNK [unknown]"
	note "$3nn: $ran processes wrote their CPU time: $cpu ms in all (~$(samples_for "$cpu" 199) samples at 199 Hz), $sure of them 25 ms or more"
	# Each process burns 0.1 s of CPU: ~20 samples at 199 Hz, ~800 in all.
	if [ "$ran" -lt "$NPROC" ]; then
		fail "$1" "only $ran of $NPROC short-lived processes ran to their end"
	elif ! cpu_enough "$1" "the short-lived processes" "$cpu" $((NPROC * 100 / 2)) ||
	     ! samples_ok "$1" "the short-lived processes" "$S_TOTAL" "$cpu" 199; then
		uleaves "$2" "$3[0-9][0-9]"
	elif [ "$S_NCOMMS" -lt $((sure * 8 / 10)) ]; then
		fail "$1" "only $S_NCOMMS of $NPROC short-lived processes have samples ($sure had 25 ms of CPU or more)"
		uleaves "$2" "$3[0-9][0-9]"
	elif [ $((100 * S_NAMED)) -lt $((90 * S_USER)) ]; then
		fail "$1" "only $S_NAMED of $S_USER samples of short-lived processes have a named user leaf"
		uleaves "$2" "$3[0-9][0-9]"
	elif [ $((100 * S_FN)) -lt $((80 * $(samples_for "$cpu" 199))) ]; then
		# Against short_burn's own clock, not the processes' totals: their
		# exec and the loader (not in that clock) were 45% of their
		# samples under TCG, where the kernel's part costs ten times more.
		fail "$1" "only $S_FN samples of short-lived processes end in short_burn, where its $cpu ms of CPU time give ~$(samples_for "$cpu" 199) (80% wanted; $S_TOTAL in all)"
		uleaves "$2" "$3[0-9][0-9]"
	else
		pass "$1"
	fi
}

# ---- 1. short-lived processes, -- COMMAND (hard links of one binary).
name=integration/short_lived_cmd
mkcopies "$T/sl" sl ln
rm -f "$T/sl.cpu"
run_to 300 "$BPFSYM" record -F 199 -q -o "$T/sl.data" -- sh "$T/driver.sh" "$T/sl" sl $NPROC 4 100 "$T/sl.cpu" 2> "$T/sl.err"
rc=$?
note "record -- driver: status $rc: $(tail -1 "$T/sl.err")"
if record_ok "$name" "$T/sl.data" "$T/sl.err" $rc &&
   folded "$name" "$T/sl.data" "$T/sl.folded"; then
	check_short "$name" "$T/sl.folded" sl "$T/sl.cpu"
fi

# ---- 1. short-lived processes, -a with the driver alongside (copies).
name=integration/short_lived_all
mkcopies "$T/sa" sa cp
rm -f "$T/sa.cpu"
if ! bg_record "$T/sa.data" -a -d 300; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/sa.data.err"
else
	run_to 280 sh "$T/driver.sh" "$T/sa" sa $NPROC 4 100 "$T/sa.cpu"
	sleep 0.5
	end_record
	note "record -a: status $REC_RC: $(tail -1 "$T/sa.data.err")"
	if record_ok "$name" "$T/sa.data" "$T/sa.data.err" $REC_RC &&
	   folded "$name" "$T/sa.data" "$T/sa.folded"; then
		check_short "$name" "$T/sa.folded" sa "$T/sa.cpu"
	fi
fi

# ---- 7. loss accounting, on that recording (many mapping events).
name=integration/loss_accounting
if [ ! -s "$T/sa.data" ]; then
	fail "$name" "no recording to look at (short_lived_all failed to record)"
else
	summ=$(grep '^bpfsym: [0-9][0-9]* samples' "$T/sa.data.err" | tail -1)
	run_to 60 "$BPFSYM" report "$T/sa.data" > "$T/sa.report" 2> "$T/sa.report.err"
	rc=$?
	hsamples=$(sed -n 's/^# samples: \([0-9][0-9]*\).*/\1/p' "$T/sa.report" | head -1)
	hlost=$(grep '^# lost:' "$T/sa.report" | head -1)
	hlost_s=$(echo "$hlost" | sed -n 's/^# lost: \([0-9][0-9]*\) samples.*/\1/p')
	hlost_e=$(echo "$hlost" | sed -n 's/^# lost: [0-9][0-9]* samples[^,]*, \([0-9][0-9]*\) .*/\1/p')
	ssamples=$(echo "$summ" | sed -n 's/^bpfsym: \([0-9][0-9]*\) samples.*/\1/p')
	slost=$(echo "$summ" | sed -n 's/^[^,]*, \([0-9][0-9]*\) lost.*/\1/p')
	note "summary: $summ"
	note "report header: samples $hsamples; $hlost"
	if [ -z "$summ" ]; then
		fail "$name" "no summary line 'bpfsym: N samples, ...' on stderr"
		show "$T/sa.data.err"
	elif [ -z "$slost" ]; then
		fail "$name" "the summary line does not say how many samples were lost ('N lost')"
	elif [ $rc -ne 0 ]; then
		fail "$name" "bpfsym report exited with status $rc"
		show "$T/sa.report.err"
	elif [ -z "$hsamples" ] || [ -z "$hlost_s" ] || [ -z "$hlost_e" ]; then
		fail "$name" "the report header lacks '# samples: N' or '# lost: N samples ..., N ... events'"
		head -8 "$T/sa.report" | show
	elif [ "$hsamples" -ne "$ssamples" ]; then
		fail "$name" "the summary says $ssamples samples, the report header $hsamples"
	elif [ "$hlost_s" -ne "$slost" ]; then
		fail "$name" "the summary says $slost samples lost, the report header $hlost_s"
	else
		pass "$name"
	fi
fi

# ---- 1. short-lived processes whose binaries are deleted once they exited.
name=integration/short_lived_deleted
mkcopies "$T/sd" sd cp
rm -f "$T/sd.cpu"
if ! bg_record "$T/sd.data" -a -d 300; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/sd.data.err"
else
	run_to 280 sh "$T/driver.sh" "$T/sd" sd $NPROC 4 100 "$T/sd.cpu" rm
	left=$(ls "$T/sd" | wc -l)
	sleep 0.5
	end_record
	note "record -a: status $REC_RC; $left binaries left undeleted: $(tail -1 "$T/sd.data.err")"
	if record_ok "$name" "$T/sd.data" "$T/sd.data.err" $REC_RC &&
	   folded "$name" "$T/sd.data" "$T/sd.folded"; then
		check_short "$name" "$T/sd.folded" sd "$T/sd.cpu"
	fi
fi

# ---- 2. a binary replaced by rename(2) while it runs.
# check_rename NAME FOLDED COMM GOOD BAD CPU_MS: COMM's samples have GOOD
# (at least half of what CPU_MS of CPU time gives at 199 Hz) and never BAD.
check_rename() {
	good=$(fn_count "$2" "$3" "$4")
	bad=$(fn_count "$2" "$3" "$5")
	all=$(folded_count "$2" "^$3;")
	note "$3: $all samples, $4 $good, $5 $bad; $6 ms of CPU time while recorded (~$(samples_for "$6" 199) samples)"
	if [ "$bad" -ne 0 ]; then
		fail "$1" "$bad samples of '$3' name $5, a function of a file it does not run; $4: $good"
		uleaves "$2" "$3"
		return 1
	elif ! cpu_enough "$1" "$3" "$6" 400 || ! samples_ok "$1" "$4 of '$3' ($all samples in all)" "$good" "$6" 199; then
		uleaves "$2" "$3"
		return 1
	fi
	return 0
}

# newdir DIR: DIR/rb_prog is the original, DIR/rb_prog.new the replacement.
newdir() {
	rm -rf "$1"
	mkdir -p "$1"
	cp "$T/rb_orig" "$1/rb_prog"
	cp "$T/rb_new" "$1/rb_prog.new"
}

# The fixtures run for 600 s of CPU time at most: stopped by the test.
name=integration/rename_pid
d=$T/rn1
newdir "$d"
bg_start "$d/rb_prog" 600 "$d/ready"
p=$BG_PID
if ! wait_until 10 exists "$d/ready"; then
	fail "$name" "the fixture did not start"
	stop "$p"
elif ! bg_record "$T/rn1.data" -p "$p" -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/rn1.data.err"
	stop "$p"
else
	# A quarter of a second of its CPU time before the rename, half a
	# second after.
	c0=$(cpu_ms "$p")
	cpu_wait 250 "$CPU_WAIT_MAX" "$p"
	mv -f "$d/rb_prog.new" "$d/rb_prog"
	cpu_wait 500 "$CPU_WAIT_MAX" "$p"
	cpu=$(( $(cpu_ms "$p") - c0 ))
	end_record
	stop "$p"
	if record_ok "$name" "$T/rn1.data" "$T/rn1.data.err" $REC_RC &&
	   folded "$name" "$T/rn1.data" "$T/rn1.folded" &&
	   check_rename "$name" "$T/rn1.folded" rb_prog orig_burn new_burn "$cpu"; then
		pass "$name"
	fi
fi

# -a before the program starts; after the rename a second process runs the
# new file through a symlink named rb_two (same path as the old mapping).
name=integration/rename_all
d=$T/rn2
newdir "$d"
if ! bg_record "$T/rn2.data" -a -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/rn2.data.err"
else
	bg_start "$d/rb_prog" 600 "$d/ready"
	p=$BG_PID
	if ! wait_until 10 exists "$d/ready"; then
		fail "$name" "the fixture did not start"
		stop "$p"
		end_record
	else
		cpu_wait 350 "$CPU_WAIT_MAX" "$p"
		mv -f "$d/rb_prog.new" "$d/rb_prog"
		ln -s rb_prog "$d/rb_two"
		bg_start "$d/rb_two" 600 "$d/ready2"
		p2=$BG_PID
		wait_until 10 exists "$d/ready2"
		cpu_wait 500 "$CPU_WAIT_MAX" "$p2"
		# Both started during the recording: all their CPU time is in it.
		cpu=$(cpu_ms "$p") cpu2=$(cpu_ms "$p2")
		end_record
		stop "$p"
		stop "$p2"
		if record_ok "$name" "$T/rn2.data" "$T/rn2.data.err" $REC_RC &&
		   folded "$name" "$T/rn2.data" "$T/rn2.folded" &&
		   check_rename "$name" "$T/rn2.folded" rb_prog orig_burn new_burn "$cpu" &&
		   check_rename "$name" "$T/rn2.folded" rb_two new_burn orig_burn "$cpu2"; then
			pass "$name"
		fi
	fi
fi

# The file was replaced before the recording started (a package upgrade
# under a running service): -p finds the original through the process.
name=integration/rename_before
d=$T/rn3
newdir "$d"
bg_start "$d/rb_prog" 600 "$d/ready"
p=$BG_PID
if ! wait_until 10 exists "$d/ready"; then
	fail "$name" "the fixture did not start"
	stop "$p"
else
	mv -f "$d/rb_prog.new" "$d/rb_prog"
	if ! cpu_record "$T/rn3.data" 750 "$p" -p "$p"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/rn3.data.err"
		stop "$p"
	else
		stop "$p"
		if record_ok "$name" "$T/rn3.data" "$T/rn3.data.err" $REC_RC &&
		   folded "$name" "$T/rn3.data" "$T/rn3.folded" &&
		   check_rename "$name" "$T/rn3.folded" rb_prog orig_burn new_burn "$REC_CPU"; then
			pass "$name"
		fi
	fi
fi

# ---- 3. a binary that exists only in the process's own mount namespace:
# a private tmpfs over $T/mnt holds ns_burn (orig_burn); on the host the
# same path holds a decoy (new_burn).
mkdir -p "$T/mnt"
cp "$T/rb_new" "$T/mnt/ns_burn"
ns_ok=1
if ! command -v unshare >/dev/null 2>&1 || ! command -v mount >/dev/null 2>&1; then
	ns_ok=0
	ns_why="unshare or mount not installed"
elif ! run_to 10 unshare -m --propagation private sh -c "mount -t tmpfs none '$T/mnt' && umount '$T/mnt'" > "$T/ns.probe" 2>&1; then
	ns_ok=0
	ns_why="cannot mount a tmpfs in a private mount namespace: $(head -1 "$T/ns.probe")"
fi

# ns_start SECS: the fixture in its namespace, for SECS of CPU time, which
# it writes to $T/ns.cpu when done; its pid in $p (it execs, the pid
# stays), true once it runs ns_burn.
ns_start() {
	rm -f "$T/ns.cpu"
	bg_start unshare -m --propagation private sh -c \
		"mount -t tmpfs none '$T/mnt' && cp '$T/rb_orig' '$T/mnt/ns_burn' && exec '$T/mnt/ns_burn' $1 - '$T/ns.cpu'"
	p=$BG_PID
	wait_until 10 sh -c "[ \"\$(cat /proc/$p/comm 2>/dev/null)\" = ns_burn ]"
}

if [ $ns_ok -eq 0 ]; then
	skip integration/mntns_pid "$ns_why"
	skip integration/mntns_all "$ns_why"
else
	name=integration/mntns_pid
	if ! ns_start 600; then
		fail "$name" "the fixture did not start in its mount namespace"
		stop "$p"
	elif ! cpu_record "$T/ns1.data" 750 "$p" -p "$p"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/ns1.data.err"
		stop "$p"
	else
		stop "$p"
		if record_ok "$name" "$T/ns1.data" "$T/ns1.data.err" $REC_RC &&
		   folded "$name" "$T/ns1.data" "$T/ns1.folded" &&
		   check_rename "$name" "$T/ns1.folded" ns_burn orig_burn new_burn "$REC_CPU"; then
			pass "$name"
		fi
	fi

	# Started during the recording and gone (with its namespace and
	# tmpfs) before the recording ends.
	name=integration/mntns_all
	if ! bg_record "$T/ns2.data" -a -d 600; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/ns2.data.err"
	else
		if ! ns_start 0.75; then
			fail "$name" "the fixture did not start in its mount namespace"
			stop "$p"
			end_record
		else
			# 0.75 s of CPU time: at most 45 s of wall time.
			wait_exit "$p" 90
			reap "$p"
			sleep 0.3
			end_record
			if record_ok "$name" "$T/ns2.data" "$T/ns2.data.err" $REC_RC &&
			   folded "$name" "$T/ns2.data" "$T/ns2.folded" &&
			   check_rename "$name" "$T/ns2.folded" ns_burn orig_burn new_burn "$(fixture_cpu "$T/ns.cpu" orig_burn)"; then
				pass "$name"
			fi
		fi
	fi
fi

# ---- 4. dlopen: lib_burn.so then lib_burn_b.so (same layout, other name),
# each loaded, run for 1 s of CPU time, unloaded; dlopen_burn writes the
# CPU time each had to CPUFILE.
# check_dlopen NAME FOLDED CPUFILE
check_dlopen() {
	ustats_set "$2" dlopen_burn lib_burn
	a=$S_FN
	b=$(fn_count "$2" dlopen_burn lib_burn_b)
	ca=$(fixture_cpu "$3" lib_burn)
	cb=$(fixture_cpu "$3" lib_burn_b)
	note "dlopen_burn: $S_TOTAL samples, $S_USER with a user frame, $S_NAMED named; lib_burn $a, lib_burn_b $b; their CPU time: $ca ms, $cb ms (~$(samples_for "$ca" 199), ~$(samples_for "$cb" 199) samples)"
	if ! cpu_enough "$1" lib_burn "$ca" 900 || ! cpu_enough "$1" lib_burn_b "$cb" 900; then
		:
	elif ! samples_ok "$1" "lib_burn (in lib_burn.so, dlopen()ed)" "$a" "$ca" 199 ||
	     ! samples_ok "$1" "lib_burn_b (in lib_burn_b.so, dlopen()ed)" "$b" "$cb" 199; then
		uleaves "$2" dlopen_burn
	elif [ $((100 * S_NAMED)) -lt $((90 * S_USER)) ]; then
		fail "$1" "only $S_NAMED of $S_USER samples of dlopen_burn have a named user leaf"
		uleaves "$2" dlopen_burn
	else
		pass "$1"
	fi
}

name=integration/dlopen_cmd
rm -f "$T/dl1.cpu"
run_to 180 "$BPFSYM" record -F 199 -q -o "$T/dl1.data" -- "$T/dlopen_burn" - 1 "$T/dl1.cpu" \
	"$T/lib_burn.so" lib_burn "$T/lib_burn_b.so" lib_burn_b 2> "$T/dl1.err"
rc=$?
note "record -- dlopen_burn: status $rc: $(tail -1 "$T/dl1.err")"
if record_ok "$name" "$T/dl1.data" "$T/dl1.err" $rc &&
   folded "$name" "$T/dl1.data" "$T/dl1.folded"; then
	check_dlopen "$name" "$T/dl1.folded" "$T/dl1.cpu"
fi

# dlopen_running NAME TAG -p|-a: dlopen_burn started asleep (waiting for
# GO), recorded with -p PID or -a; the check once it has exited.
dlopen_running() {
	dr_d=$T/$2
	rm -f "$T/go" "$dr_d.cpu"
	bg_start "$T/dlopen_burn" "$T/go" 1 "$dr_d.cpu" "$T/lib_burn.so" lib_burn "$T/lib_burn_b.so" lib_burn_b
	p=$BG_PID
	wait_until 5 alive "$p"
	if [ "$3" = -p ]; then
		set -- "$1" "$2" -p "$p"
	fi
	if ! bg_record "$dr_d.data" "$3" ${4:-} -d 600; then
		fail "$1" "the recording did not start (no output file within 30 s)"
		show "$dr_d.data.err"
		stop "$p"
		return
	fi
	: > "$T/go"
	# Two budgets of 1 s of CPU time: at most 2 x 50 s of wall time.
	wait_exit "$p" 120
	reap "$p"
	note "dlopen_burn exited with status $REAP_RC"
	# With -p the target is gone: the recording may end by itself.
	[ "$3" = -p ] && wait_exit "$REC" 10
	end_record
	if record_ok "$1" "$dr_d.data" "$dr_d.data.err" $REC_RC &&
	   folded "$1" "$dr_d.data" "$dr_d.folded"; then
		check_dlopen "$1" "$dr_d.folded" "$dr_d.cpu"
	fi
}

dlopen_running integration/dlopen_pid dl2 -p
# The same under -a, where a process's mappings are taken at its first
# sample and followed from there: dlopen_burn waits for GO asleep (no
# sample, not followed), so what the second library replaces at the same
# place comes through the tracker following it, not through its start.
dlopen_running integration/dlopen_all dl3 -a

# Under -a, dlopen_burn started once the recording runs: followed from its
# first sample, whose mappings are those since its exec (on kernels
# without the VMA iterator, the list the tracker kept: bpf/pend.bpf.h).
name=integration/dlopen_all_new
rm -f "$T/dl4.cpu"
if ! bg_record "$T/dl4.data" -a -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/dl4.data.err"
else
	run_to 180 "$T/dlopen_burn" - 1 "$T/dl4.cpu" "$T/lib_burn.so" lib_burn "$T/lib_burn_b.so" lib_burn_b
	note "dlopen_burn exited with status $?"
	end_record
	if record_ok "$name" "$T/dl4.data" "$T/dl4.data.err" $REC_RC &&
	   folded "$name" "$T/dl4.data" "$T/dl4.folded"; then
		check_dlopen "$name" "$T/dl4.folded" "$T/dl4.cpu"
	fi
fi

# ---- 4. JIT: a countdown loop in an anonymous page, RW then RX.
# check_jit NAME FOLDED MAXUNKNOWN CPU_MS
check_jit() {
	ustats_set "$2" jit_burn none
	note "jit_burn: $S_TOTAL samples, $S_USER with a user frame; user leaf [anon+0x..] $S_ANON, [unknown] $S_UNK, named $S_NAMED; $4 ms of CPU time (~$(samples_for "$4" 199) samples)"
	if ! cpu_enough "$1" jit_burn "$4" 600; then
		:
	elif ! samples_ok "$1" "jit_burn (with a user frame)" "$S_USER" "$4" 199; then
		uleaves "$2" jit_burn
	elif [ "$S_UNK" -gt "$3" ]; then
		fail "$1" "$S_UNK samples of jit_burn end in [unknown] (a mapping not known at sample time); [anon+0x..]: $S_ANON"
		uleaves "$2" jit_burn
	elif [ $((100 * S_ANON)) -lt $((90 * S_USER)) ]; then
		fail "$1" "only $S_ANON of $S_USER samples of jit_burn end in the anonymous executable page ([anon+0x..])"
		uleaves "$2" jit_burn
	else
		pass "$1"
	fi
}

# The JIT fixture writes x86-64 machine code (elsewhere it exits 4).
jit_arch=$(uname -m)
name=integration/jit_cmd
if [ "$jit_arch" != x86_64 ]; then
	skip "$name" "the JIT fixture is x86-64 machine code, this is $jit_arch"
else
	rm -f "$T/jit1.cpu"
	# 2 s: the process's start (the loader, before the page exists) is a
	# few ms here, ~12% of a second under TCG, and 90% must be in the page.
	run_to 180 "$BPFSYM" record -F 199 -q -o "$T/jit1.data" -- "$T/jit_burn" 2 - "$T/jit1.cpu" 2> "$T/jit1.err"
	rc=$?
	note "record -- jit_burn: status $rc: $(tail -1 "$T/jit1.err")"
	if record_ok "$name" "$T/jit1.data" "$T/jit1.err" $rc &&
	   folded "$name" "$T/jit1.data" "$T/jit1.folded"; then
		# A tick inside execve, after the comm changed but before the new
		# image runs, has the old image's user ip: at most one such sample.
		check_jit "$name" "$T/jit1.folded" 1 "$(fixture_cpu "$T/jit1.cpu" jit)"
	fi
fi

# The page exists before the recording starts: the snapshot must have it.
for mode in pid all; do
	name=integration/jit_snapshot_$mode
	if [ "$jit_arch" != x86_64 ]; then
		skip "$name" "the JIT fixture is x86-64 machine code, this is $jit_arch"
		continue
	fi
	rm -f "$T/jit.ready"
	bg_start "$T/jit_burn" 600 "$T/jit.ready"
	p=$BG_PID
	if ! wait_until 10 exists "$T/jit.ready"; then
		fail "$name" "the JIT fixture did not start"
		stop "$p"
		continue
	fi
	sleep 0.3
	if [ $mode = pid ]; then
		target="-p $p"
	else
		target=-a
	fi
	if ! cpu_record "$T/jit_$mode.data" 1000 "$p" $target; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/jit_$mode.data.err"
		stop "$p"
		continue
	fi
	stop "$p"
	if record_ok "$name" "$T/jit_$mode.data" "$T/jit_$mode.data.err" $REC_RC &&
	   folded "$name" "$T/jit_$mode.data" "$T/jit_$mode.folded"; then
		check_jit "$name" "$T/jit_$mode.folded" 0 "$REC_CPU"
	fi
done

# map_counts ERRFILE: "MAPS UNMAPS" from record -v's mapping events line.
map_counts() {
	sed -n 's/.*mapping events: \([0-9]*\) map, \([0-9]*\) unmap,.*/\1 \2/p' "$1" | tail -1
}

# The fixture's own changes: 3N code removals, 3N data-only changes; its
# start-up (the loader) removes no code, so a margin of 10 is generous.
GONE_N=20

# gone_why UNMAPS: what is wrong with UNMAPS unmappings for the fixture's
# changes (nothing printed: they are right).
gone_why() {
	if [ "$1" -lt $((3 * GONE_N)) ]; then
		echo "$1 unmappings for $((3 * GONE_N)) code removals"
	elif [ "$1" -gt $((3 * GONE_N + 10)) ]; then
		echo "$1 unmappings: the $((3 * GONE_N)) data-only changes were reported too"
	fi
}

name=integration/code_gone_cmd
why=
for cg in dwarf fp; do
	run_to 120 "$BPFSYM" record -v -F 99 --call-graph $cg -o "$T/gone_$cg.data" -- \
		"$T/code_gone" $GONE_N > "$T/gone_$cg.out" 2> "$T/gone_$cg.err"
	rc=$?
	set -- $(map_counts "$T/gone_$cg.err")
	note "record --call-graph $cg -- code_gone $GONE_N: status $rc, $(cat "$T/gone_$cg.out"); mapping events: ${1:-?} map, ${2:-?} unmap"
	if [ $rc -ne 0 ] || [ $# -ne 2 ] || ! grep -q "^code_gone $((3 * GONE_N)) " "$T/gone_$cg.out"; then
		why="$why; $cg: the recording or the fixture failed (status $rc)"
		show "$T/gone_$cg.err"
	else
		w=$(gone_why "$2")
		[ -z "$w" ] || why="$why; $cg: $w"
	fi
done
if [ -z "$why" ]; then pass "$name"; else fail "$name" "${why#; }"; fi

# A process the recording did not see start: the tracker's record of its
# code comes from the start-up snapshot.
name=integration/code_gone_pid
rm -f "$T/gone.go"
bg_start "$T/code_gone" $GONE_N "$T/gone.go" > "$T/gone_pid.out"
p=$BG_PID
sleep 0.2
"$BPFSYM" record -v -F 99 -p "$p" -o "$T/gone_pid.data" 2> "$T/gone_pid.err" &
rec=$!
LIB_PIDS="$LIB_PIDS $rec"
if ! wait_until 30 file_nonempty "$T/gone_pid.data"; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/gone_pid.err"
	stop "$p"
	stop "$rec"
else
	touch "$T/gone.go"
	reap "$p"
	frc=$REAP_RC
	reap "$rec"
	set -- $(map_counts "$T/gone_pid.err")
	note "record -p code_gone: status $REAP_RC, fixture $frc, $(cat "$T/gone_pid.out"); mapping events: ${1:-?} map, ${2:-?} unmap"
	if [ $frc -ne 0 ] || [ $REAP_RC -ne 0 ] || [ $# -ne 2 ]; then
		fail "$name" "the recording or the fixture failed (status $REAP_RC, fixture $frc)"
		show "$T/gone_pid.err"
	else
		w=$(gone_why "$2")
		if [ -z "$w" ]; then pass "$name"; else fail "$name" "$w"; fi
	fi
fi

lib_done
