#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Short-lived processes named, against perf in the same run (issue 12).
#
# A shell starts `shortlived 25` (tests/fixtures/short_burn.c: 25 ms of
# CPU in short_burn(), then exit) one after another for a few seconds,
# while `bpfsym record -a` and `perf record -a -g` both record the whole
# system.  Most of these processes are gone before the recorder reads
# their MAP records: the ring buffer is drained on a 100 ms timer.
#
#   shortlived_perf
#       no frame of shortlived's own code is unnamed ([shortlived+0x...]),
#       and short_burn's share of the samples of comm 'shortlived' (those
#       with short_burn anywhere in the stack: perf report's "Children")
#       is within 2 points of perf's share in the same run.  Not the leaf
#       alone: whose interrupt-return path a tick lands on moves a point
#       or two of leaves between short_burn and irqentry_exit_to_user_mode
#       from run to run.
#   shortlived_stalled
#       the same with the recorder stopped (SIGSTOP) for the programs'
#       first second, so that the MAP records of ~35 processes are read
#       after those processes exited: a slow machine, made on purpose.
#       Before the namespace route (issue 12), that left the binary
#       unnamed for the whole run: 0% against perf's 96%.
#   shortlived_mntns
#       the programs (comm nsshort) run in a private mount namespace whose
#       tmpfs holds their binary, the host a decoy at that path
#       (decoy_burn), with the recorder stopped for 1 s as above: they are
#       named (short_burn) through the shell starting them, alive in that
#       namespace, never from the decoy.  No perf here: the programs write
#       their CPU time (at least 0.5 s of it in all, 3 s of wall time or
#       more), and half of 397 Hz x that must be sampled.
#
# perf samples at 499 Hz and bpfsym at 397 Hz: two timers with one period
# keep one phase (see test_oracle_perf.sh).  The run is lengthened (4, 8,
# 16, 32 s) until perf has SL_MIN_SAMPLES samples of the comm: a share over
# fewer is noise, and a comparison is never skipped for it.
. "$(dirname "$0")/lib.sh"
lib_init integration/shortlived_perf integration/shortlived_stalled integration/shortlived_mntns

SL_MIN_SAMPLES=${SL_MIN_SAMPLES:-400}
SL_MARGIN=2		# points: the issue's goal, widened below to 3 standard errors
SL_MS=25		# CPU time of each program

need_fixture short_burn shortlived
need_fixture short_burn decoy -Dshort_burn=decoy_burn

# The workload: DIR/shortlived MS, one after another, for SECS seconds;
# each appends the CPU time it had to CPUFILE when one is given, and with
# NEED_MS they go on (60 s at most) until they had that much together.
cat > "$T/loop.sh" <<'EOF'
bin=$1 ms=$2 secs=$3 cpufile=${4:-} need=${5:-0}
end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt "$end" ]; do
	"$bin" "$ms" $cpufile
done
end=$((end + 60))
while [ "$need" -gt 0 ] && [ "$(date +%s)" -lt "$end" ] &&
      [ "$(awk '{ s += $2 } END { printf "%d", s * 1000 }' "$cpufile" 2>/dev/null)" -lt "$need" ]; do
	"$bin" "$ms" $cpufile
done
EOF

# comm_leaves_perf PERFDATA COMM FN: "LEAF COUNT" lines, "TOTAL COUNT" and
# "IN_FN COUNT" (samples with FN anywhere in the stack) of COMM's samples,
# the leaf being the first line of each callchain.
comm_leaves_perf() {
	perf script -i "$1" 2>/dev/null | awk -v comm="$2" -v fn="$3" '
	/^[^ \t]/ { want = ($1 == comm); leaf = want; if (want) total++; next }
	want && /^[ \t]/ {
		sym = $2
		sub(/\+0x[0-9a-f]+$/, "", sym)
		if (leaf)
			cnt[sym]++
		leaf = 0
		if (sym == fn) {
			in_fn++
			want = 0
		}
	}
	END {
		for (l in cnt)
			print l, cnt[l]
		print "TOTAL", total + 0
		print "IN_FN", in_fn + 0
	}'
}

# unnamed_own FOLDED COMM: samples of COMM with a frame of COMM's own
# file left unnamed ([COMM+0x...]), or with its file not mapped at all:
# [unknown] right under libc's __libc_start_call_main, which calls only
# main.  (The second is how a process whose own MAP records were lost
# looks: a sample interrupting the tracker in its exec once sent the
# process's mappings before its image's were noted.)
unnamed_own() {
	folded_count "$1" "^$2;(.*;)?(\\[$2\\+0x[0-9a-f]+\\]|__libc_start_call_main;\\[unknown\\])(;|\$)"
}

# show_unnamed DATA COMM: a few of COMM's samples unnamed_own counts,
# whole and with their addresses (perf script's form), for the log.
show_unnamed() {
	"$BPFSYM" report "$1" --perf-script 2>/dev/null | awk -v comm="$2" '
	/^[^ \t]/ { head = $0; body = ""; want = ($1 == comm); next }
	want && /^[ \t]/ { body = body "\n" $0; next }
	want && (body ~ ("\\[unknown\\] \\([^)]*/" comm "\\)") ||
		 (body ~ /__libc_start_call_main/ && body ~ /\[unknown\] \(\[unknown\]\)/)) && n++ < 4 {
		print head body
	}
	{ want = 0 }' | show
}

# sl_run TAG SECS STALL: bpfsym and perf record -a over SECS s of the
# workload; with STALL 1 the recorder is stopped for its first second.
# Sets RUN_OK (1: both recordings ended well) and prints why not.
sl_run() {
	tag=$1 run_secs=$2 stall=$3 d=$T/$1
	RUN_OK=0
	rm -f "$d.data" "$d.perf"
	# As bg_record, at 397 Hz: the file exists once the sampler is attached.
	bg_start "$BPFSYM" record -q -a -F 397 -d 120 -o "$d.data" 2> "$d.data.err"
	REC=$BG_PID
	data=$d.data
	wait_until 30 rec_started
	bg_start perf record -a -g -e cpu-clock -F 499 -o "$d.perf" 2> "$d.perf.err"
	perf=$BG_PID
	if ! wait_until 30 file_nonempty "$d.perf" || ! file_nonempty "$d.data"; then
		note "$tag: a recording did not start"
		show "$d.data.err"
		show "$d.perf.err"
		stop "$perf"
		end_record
		return
	fi
	sleep 0.5
	# Stopped before the first program starts: none of the MAP records of
	# the first second is read before its process has exited.
	[ "$stall" -eq 1 ] && kill -STOP "$REC"
	bg_start sh "$T/loop.sh" "$T/shortlived" $SL_MS "$run_secs"
	loop=$BG_PID
	if [ "$stall" -eq 1 ]; then
		sleep 1
		kill -CONT "$REC"
	fi
	wait_exit "$loop" $((run_secs + 60))
	reap "$loop"
	sleep 0.3
	kill -INT "$perf" 2>/dev/null
	reap "$perf"
	prc=$REAP_RC
	end_record
	note "$tag: bpfsym: $(tail -1 "$d.data.err")"
	note "$tag: perf: $(grep -v '^\[ perf record: Woken' "$d.perf.err" | tail -1)"
	# perf record ends with 130 on SIGINT, its data complete.
	if { [ "$prc" -ne 0 ] && [ "$prc" -ne 130 ]; } || ! grep -q 'Captured and wrote' "$d.perf.err"; then
		note "$tag: perf record exited with status $prc"
		show "$d.perf.err"
		return
	fi
	if [ "$REC_RC" -ne 0 ] || [ ! -s "$d.data" ]; then
		note "$tag: bpfsym record exited with status $REC_RC"
		show "$d.data.err"
		return
	fi
	run_to 60 "$BPFSYM" report "$d.data" --folded > "$d.folded" 2> "$d.folded.err" || {
		note "$tag: bpfsym report --folded failed"
		show "$d.folded.err"
		return
	}
	RUN_OK=1
}

# sl_test NAME STALL
sl_test() {
	name=$1 stall=$2 sl_secs=4 tag=
	while :; do
		tag=sl$stall-$sl_secs
		sl_run "$tag" $sl_secs "$stall"
		if [ $RUN_OK -ne 1 ]; then
			fail "$name" "a recording failed (see above)"
			return
		fi
		comm_leaves_perf "$T/$tag.perf" shortlived short_burn > "$T/$tag.perf.leaves"
		folded_leaves "$T/$tag.folded" shortlived > "$T/$tag.leaves"
		ptotal=$(leaf_count "$T/$tag.perf.leaves" TOTAL)
		[ "$ptotal" -ge "$SL_MIN_SAMPLES" ] && break
		if [ $sl_secs -ge 32 ]; then
			fail "$name" "perf has only $ptotal samples of 'shortlived' after $sl_secs s (at least $SL_MIN_SAMPLES wanted): the machine is too busy to measure"
			return
		fi
		note "perf has $ptotal samples of 'shortlived' in $sl_secs s (at least $SL_MIN_SAMPLES wanted): again, longer"
		sl_secs=$((sl_secs * 2))
	done
	btotal=$(leaf_count "$T/$tag.leaves" TOTAL)
	pshare=$(pct "$(leaf_count "$T/$tag.perf.leaves" IN_FN)" "$ptotal")
	bshare=$(pct "$(fn_count "$T/$tag.folded" shortlived short_burn)" "$btotal")
	d=$(awk -v a="$pshare" -v b="$bshare" 'BEGIN { d = a - b; printf "%.1f", (d < 0) ? -d : d }')
	# Two samplings of one share differ by chance: 3 standard errors of the
	# difference (about 2.5 points at 1000 samples each), never under 2.
	margin=$(awk -v a="$pshare" -v b="$bshare" -v n="$ptotal" -v m="$btotal" -v min=$SL_MARGIN 'BEGIN {
		p = (a + b) / 200
		se = (n > 0 && m > 0) ? 100 * sqrt(p * (1 - p) * (1 / n + 1 / m)) : 100
		printf "%.1f", (3 * se > min) ? 3 * se : min }')
	unnamed=$(unnamed_own "$T/$tag.folded" shortlived)
	note "$name: $sl_secs s: samples of 'shortlived': perf $ptotal, bpfsym $btotal; short_burn's share: perf $pshare%, bpfsym $bshare%, $d points apart (margin $margin); bpfsym samples with an unnamed frame of shortlived: $unnamed"
	if [ "$btotal" -lt $((ptotal * 397 / 499 / 2)) ]; then
		fail "$name" "bpfsym has $btotal samples of 'shortlived', perf $ptotal (at 499 Hz against 397)"
	elif [ "$unnamed" -ne 0 ]; then
		fail "$name" "$unnamed of $btotal samples of 'shortlived' have unnamed frames of its own file ([shortlived+0x...], or main unmapped); short_burn: bpfsym $bshare%, perf $pshare%"
		grep '^shortlived;' "$T/$tag.folded" | sort -t' ' -k2,2nr | head -5 | show
		show_unnamed "$T/$tag.data" shortlived
	elif fcmp "$d" gt "$margin"; then
		fail "$name" "short_burn's share of 'shortlived': bpfsym $bshare%, perf $pshare% (more than $margin points apart)"
		sort -k2,2nr "$T/$tag.leaves" | head -8 | show
		sort -k2,2nr "$T/$tag.perf.leaves" | head -8 | show
	else
		pass "$name"
	fi
}

if ! command -v perf >/dev/null 2>&1; then
	skip integration/shortlived_perf "perf is not installed (the oracle)"
	skip integration/shortlived_stalled "perf is not installed (the oracle)"
else
	sl_test integration/shortlived_perf 0
	sl_test integration/shortlived_stalled 1
fi

# ---- in a mount namespace of their own, the recorder stalled
name=integration/shortlived_mntns
mkdir -p "$T/mnt"
cp "$T/decoy" "$T/mnt/nsshort"
if ! command -v unshare >/dev/null 2>&1 || ! command -v mount >/dev/null 2>&1; then
	skip "$name" "unshare or mount not installed"
elif ! run_to 10 unshare -m --propagation private sh -c "mount -t tmpfs none '$T/mnt' && umount '$T/mnt'" > "$T/ns.probe" 2>&1; then
	skip "$name" "cannot mount a tmpfs in a private mount namespace: $(head -1 "$T/ns.probe")"
else
	d=$T/ns
	bg_start "$BPFSYM" record -q -a -F 397 -d 120 -o "$d.data" 2> "$d.data.err"
	REC=$BG_PID
	data=$d.data
	wait_until 30 rec_started
	if ! file_nonempty "$d.data"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$d.data.err"
		stop "$REC"
	else
		kill -STOP "$REC"
		rm -f "$T/ns.cpu" "$T/ns.looped" "$T/ns.release"
		# The namespace's shell outlives the programs until the recording
		# ends: the recorder names their file through it whenever it
		# gets to their mappings, which on a loaded machine (the 6.1 VM
		# beside builds) was after the namespace and its tmpfs were gone
		# (1 of 518 samples unnamed), a race of the test's, not a route.
		bg_start unshare -m --propagation private sh -c \
			"mount -t tmpfs none '$T/mnt' && cp '$T/shortlived' '$T/mnt/nsshort' && sh '$T/loop.sh' '$T/mnt/nsshort' $SL_MS 3 '$T/ns.cpu' 500; touch '$T/ns.looped'; i=0; while [ ! -e '$T/ns.release' ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done"
		ns=$BG_PID
		sleep 1
		kill -CONT "$REC"
		wait_until 90 test -e "$T/ns.looped"
		sleep 0.3
		end_record
		touch "$T/ns.release"
		wait_exit "$ns" 30
		reap "$ns"
		note "record -a: status $REC_RC: $(tail -1 "$d.data.err")"
		if record_ok "$name" "$d.data" "$d.data.err" "$REC_RC" &&
		   folded "$name" "$d.data" "$d.folded"; then
			folded_leaves "$d.folded" nsshort > "$d.leaves"
			total=$(leaf_count "$d.leaves" TOTAL)
			hit=$(leaf_count "$d.leaves" short_burn)
			unnamed=$(unnamed_own "$d.folded" nsshort)
			decoy=$(fn_count "$d.folded" nsshort decoy_burn)
			# The programs' own CPU time is the oracle: half (want_div) of 397 Hz x
			# that, less the share of samples the summary says were lost
			# (the recorder was stopped for a second).
			cpu=$(fixture_cpu "$T/ns.cpu" short_burn)
			nprog=$(nlines "$T/ns.cpu" 2>/dev/null || echo 0)
			set -- $(sed -n 's/^bpfsym: \([0-9][0-9]*\) samples, \([0-9][0-9]*\) lost.*/\1 \2/p' "$d.data.err" | tail -1) 0 0
			want=$(awk -v c="$cpu" -v s="$1" -v l="$2" -v d="$(want_div)" \
				'BEGIN { k = (s + l > 0) ? s / (s + l) : 1; n = int(c * 397 / d * k); print (n < 1) ? 1 : n }')
			note "nsshort: $total samples, short_burn $hit, with an unnamed frame of nsshort $unnamed, decoy_burn $decoy; $nprog programs had $cpu ms of CPU time (~$(samples_for "$cpu" 397) samples, at least $want wanted)"
			if ! cpu_enough "$name" "the nsshort programs" "$cpu" 500; then
				:
			elif [ "$total" -lt "$want" ]; then
				fail "$name" "only $total samples of 'nsshort', where its programs' $cpu ms of CPU time give ~$(samples_for "$cpu" 397) (at least $want wanted)"
			elif [ "$decoy" -ne 0 ]; then
				fail "$name" "$decoy samples of 'nsshort' name decoy_burn: the host's file at that path was read"
			elif [ "$unnamed" -ne 0 ]; then
				fail "$name" "$unnamed of $total samples of 'nsshort' have unnamed frames of its own file ([nsshort+0x...], or main unmapped)"
				grep '^nsshort;' "$d.folded" | sort -t' ' -k2,2nr | head -5 | show
				show_unnamed "$d.data" nsshort
			elif [ "$hit" -lt "$want" ]; then
				# short_burn's own clock, not the process's total: exec,
				# unshare and mount cost the kernel ten times more under
				# TCG, where they were 80% of nsshort's samples.
				fail "$name" "only $hit samples of 'nsshort' end in short_burn, where its $cpu ms of CPU time give ~$(samples_for "$cpu" 397) (at least $want wanted; $total in all)"
				sort -k2,2nr "$d.leaves" | head -8 | show
			else
				pass "$name"
			fi
		fi
	fi
fi

lib_done
