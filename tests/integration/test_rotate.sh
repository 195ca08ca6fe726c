#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Rotation (issue 15 items 1 and 7): --switch-output, --switch-max-files,
# a full disk while rotating, SIGUSR2, SIGINT, and `bpfsym report FILE...`
# merging the rotated files.  Two burners keep both CPUs busy throughout.
#
#   rotate_time: --switch-output=1s --switch-max-files=3 for 5.5 s: exactly
#     3 files OUTPUT.<17 digits> remain (the summary says how many there
#     were and that the oldest went), no OUTPUT left, each file complete and
#     at most ~1.6 s long.
#   rotate_size: --switch-output=64K at -F 999: every file but the last
#     reached 64 KiB (a switch happens at the first flush past it), the
#     last is smaller than the others plus a second of data.
#   rotate_signal: bare --switch-output, SIGUSR2 twice then SIGINT: status
#     0, 3 complete files, the last with an END record.
#   rotate_sigusr2_ignored: without --switch-output SIGUSR2 changes
#     nothing: the recording goes on, one complete file, status 0.
#   rotate_no_loss: per-file samples add up to the summary line's count
#     and to the BPF side's count of samples put in the ring buffer; the files' time ranges (perf script's
#     times) follow each other without overlap; the merged report has the
#     sum of the samples, and each of them (perf script's: time, thread,
#     each frame's address and module) once, named as in its file but where
#     the file left a frame unnamed: a frame written before its file
#     answered takes the name another file holds (docs/FORMAT.md).  Its
#     folded stacks summed over the files were compared before, names and
#     all: once in CI's 6.1 VM, 3 of the recorder's own samples in libzstd
#     read otherwise in the merge (the files' side of it was not printed).
#   rotate_merge_views: every format reads the merge (--folded, --pprof,
#     --perf-script, the table with --sort) and a truncated file in the
#     set is said.
#   rotate_disk_full: a 4 MiB tmpfs filled while recording: one error line,
#     the recorder goes on, writing resumes after the filler is deleted,
#     a later file's END counts the samples not written, and the summary
#     line's written + unwritten are every sample read; status 0.
#   rotate_disk_full_at_end: still full when SIGINT comes: status 1 and a
#     line saying how many samples were not written (no file can say it).
#   rotate_no_switch_at_stop: SIGUSR2 and SIGINT pending together (sent
#     while the recorder is stopped): no switch, the one file ends the
#     recording with its samples (a601fbb switched first, leaving a last
#     file of a millisecond and no sample, as a time switch that fell due
#     while poll slept did when SIGINT woke it).
#   rotate_bad_options: nonsense values, one line each and status 2.
. "$(dirname "$0")/lib.sh"
lib_init integration/rotate_time integration/rotate_size integration/rotate_signal \
	integration/rotate_sigusr2_ignored integration/rotate_no_loss \
	integration/rotate_merge_views integration/rotate_disk_full integration/rotate_disk_full_at_end \
	integration/rotate_no_switch_at_stop integration/rotate_bad_options

MNTS=
unmount_all() {
	for m in $MNTS; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	MNTS=
}
LIB_CLEANUP=unmount_all

need_fixture burn burn
bg_start "$T/burn" 600
bg_start "$T/burn" 600

# rotated DIR BASE: the rotated files of BASE in DIR, one a line, sorted.
rotated() {
	ls "$1" | grep -E "^$2\\.[0-9]{17}\$" | sort
}

# hdr_samples DATA: the "# samples: N" of DATA's report (empty on failure).
hdr_samples() {
	run_to 60 "$BPFSYM" report "$1" --limit 1 2> /dev/null | awk '/^# samples: / { print $3 + 0 }'
}

# complete_all NAME DIR FILES: every one of FILES (in DIR; its reports in DIR.aux) reads without a
# truncation warning and has an END record; FAIL NAME otherwise.
complete_all() {
	for f in $3; do
		r=$2.aux/$f
		run_to 60 "$BPFSYM" report "$2/$f" --limit 1 > "$r.rep" 2> "$r.rep.err"
		rc=$?
		if [ $rc -ne 0 ] || grep -qi truncat "$r.rep" "$r.rep.err" || ! grep -q '^# lost: [0-9]' "$r.rep"; then
			fail "$1" "'$f' does not read as a complete recording (report status $rc)"
			show "$r.rep.err"
			head -8 "$r.rep" | show
			return 1
		fi
	done
	return 0
}

# summary ERRFILE FIELD: from the summary line, samples (FIELD 1), files (2),
# deleted (3), not written (4); 0 when absent.
summary() {
	awk -v f="$2" '/^bpfsym: [0-9]+ samples/ {
		s = $2; n = 0; d = 0; u = 0
		if (match($0, /[0-9]+ files? /)) n = substr($0, RSTART, RLENGTH) + 0
		if (match($0, /the [0-9]+ oldest deleted/)) d = substr($0, RSTART + 4, RLENGTH - 4) + 0
		if (match($0, /\([0-9]+ more not written/)) u = substr($0, RSTART + 1, RLENGTH - 1) + 0
		print (f == 1 ? s : f == 2 ? n : f == 3 ? d : u)
	}' "$1"
}

# ---- time-based, with retention
name=integration/rotate_time
D=$T/time
mkdir -p "$D" "$D.aux"
run_to 60 "$BPFSYM" record -a -F 49 -q --switch-output=1s --switch-max-files=3 -d 5.5 -o "$D/r.data" 2> "$D/err"
rc=$?
files=$(rotated "$D" r.data)
nkept=$(echo "$files" | grep -c .)
nall=$(summary "$D/err" 2)
ndel=$(summary "$D/err" 3)
note "time: status $rc, $nkept files kept of $nall, $ndel deleted: $(echo $files)"
if [ $rc -ne 0 ]; then
	fail "$name" "status $rc"
	show "$D/err"
elif [ "$nkept" -ne 3 ]; then
	fail "$name" "$nkept rotated files remain, expected 3 (--switch-max-files=3)"
	ls -l "$D" | show
elif [ -e "$D/r.data" ]; then
	fail "$name" "r.data is left: the last file was not renamed"
elif [ "$nall" -lt 5 ] || [ "$ndel" -ne $((nall - 3)) ]; then
	fail "$name" "the summary says $nall files and $ndel deleted: expected at least 5 in 5.5 s, all but 3 deleted"
	show "$D/err"
elif [ "$(ls "$D" | grep -c '^r\.data')" -ne 3 ]; then
	fail "$name" "other r.data* files are left: $(ls "$D" | tr '\n' ' ')"
elif complete_all "$name" "$D" "$files"; then
	# Each kept file spans about a second (the last one less); the merge spans their sum.
	durs=$(for f in $files; do awk '/^# started: .* duration: / { print $(NF-1) }' "$D.aux/$f.rep"; done)
	long=$(echo "$durs" | awk '$1 > 1.6 || $1 <= 0 { print }')
	note "time: durations $(echo $durs)"
	if [ "$(echo "$durs" | grep -c .)" -ne 3 ] || [ -n "$long" ]; then
		fail "$name" "the files of a 1 s rotation last $(echo $durs) s"
	else
		pass "$name"
	fi
fi

# ---- size-based
name=integration/rotate_size
D=$T/size
mkdir -p "$D" "$D.aux"
# The two burners' stacks are the same sample after sample and compress
# well (about 60 KiB in 12 s), so the run lasts until the second switch
# (three files) rather than a fixed time; -d 120 only bounds a failure.
nsize() { [ "$(rotated "$D" r.data | grep -c .)" -ge 3 ] || ! alive "$rec"; }
bg_start "$BPFSYM" record -a -F 999 -q --switch-output=64K -d 120 -o "$D/r.data" 2> "$D/err"
rec=$BG_PID
wait_until 110 nsize
kill -INT "$rec" 2>/dev/null
reap "$rec"
rc=$REAP_RC
files=$(rotated "$D" r.data)
n=$(echo "$files" | grep -c .)
sizes=$(for f in $files; do wc -c < "$D/$f"; done | tr '\n' ' ')
note "size: status $rc, $n files of $sizes bytes"
small=$(for f in $(echo "$files" | sed '$d'); do [ "$(wc -c < "$D/$f")" -lt 65536 ] && echo "$f"; done)
if [ $rc -ne 0 ]; then
	fail "$name" "status $rc"
	show "$D/err"
elif [ "$n" -lt 2 ]; then
	fail "$name" "$n files in up to 110 s at -F 999 with both CPUs busy: no switch at 64K"
	show "$D/err"
elif [ -n "$small" ]; then
	fail "$name" "rotated before 64 KiB: $small"
elif complete_all "$name" "$D" "$files"; then
	pass "$name"
fi

# ---- signal-based, ended by SIGINT
name=integration/rotate_signal
D=$T/sig
mkdir -p "$D" "$D.aux"
# wait_rotated N: until N rotated files exist.
nrot() { [ "$(rotated "$D" r.data | grep -c .)" -ge "$1" ]; }
bg_start "$BPFSYM" record -a -F 99 -q --switch-output -o "$D/r.data" 2> "$D/err"
rec=$BG_PID
ok=1
data=$D/r.data
REC=$rec
wait_until 30 rec_started
for i in 1 2; do
	sleep 0.5
	kill -USR2 "$rec"
	if ! wait_until 10 nrot "$i"; then
		fail "$name" "no rotated file $i 10 s after SIGUSR2 number $i"
		ok=0
		break
	fi
done
sleep 0.5
kill -INT "$rec" 2>/dev/null
reap "$rec"
files=$(rotated "$D" r.data)
n=$(echo "$files" | grep -c .)
note "signal: status $REAP_RC, $n files: $(echo $files)"
if [ $ok -eq 0 ]; then
	show "$D/err"
elif [ "$REAP_RC" -ne 0 ]; then
	fail "$name" "status $REAP_RC after SIGINT, expected 0"
	show "$D/err"
elif [ "$n" -ne 3 ]; then
	fail "$name" "$n files after two SIGUSR2 and SIGINT, expected 3"
	ls -l "$D" | show
elif complete_all "$name" "$D" "$files"; then
	pass "$name"
fi

# ---- SIGUSR2 without --switch-output
name=integration/rotate_sigusr2_ignored
D=$T/nosw
mkdir -p "$D" "$D.aux"
if bg_record "$D/r.data" -a; then
	kill -USR2 "$REC"
	sleep 1
	if ! alive "$REC"; then
		reap "$REC"
		fail "$name" "SIGUSR2 ended the recording (status $REAP_RC)"
	else
		end_record
		n=$(ls "$D" | grep -c '^r\.data\.')
		if [ "$REC_RC" -ne 0 ]; then
			fail "$name" "status $REC_RC"
			show "$D/r.data.err"
		elif [ "$(ls "$D" | grep -Ec '^r\.data\.[0-9]+$')" -ne 0 ]; then
			fail "$name" "SIGUSR2 rotated without --switch-output: $(ls "$D" | tr '\n' ' ')"
		elif complete_all "$name" "$D" "r.data"; then
			pass "$name"
		fi
	fi
else
	fail "$name" "the recording did not start"
	show "$D/r.data.err"
fi

# ---- no sample lost or counted twice
name=integration/rotate_no_loss
D=$T/loss
mkdir -p "$D" "$D.aux"
# -v: the debug line with the BPF side's own count of the samples it put in the ring buffer.
run_to 60 "$BPFSYM" record -a -F 199 -q -v --switch-output=1s -d 4.5 -o "$D/r.data" 2> "$D/err"
rc=$?
files=$(rotated "$D" r.data)
total=$(summary "$D/err" 1)
bpf=$(sed -n 's/^bpfsym: samples: \([0-9]*\) put in the ring buffer.*/\1/p' "$D/err")
sum=0
prev_max=0
overlap=
for f in $files; do
	s=$(hdr_samples "$D/$f")
	sum=$((sum + ${s:-0}))
	# Times of the file's samples (CLOCK_MONOTONIC, perf script's): first and last.
	run_to 60 "$BPFSYM" report "$D/$f" --perf-script > "$D.aux/$f.script" 2>/dev/null
	range=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0
		if (min == "" || t < min) min = t; if (t > max) max = t } } END { printf "%.6f %.6f", min, max }' "$D.aux/$f.script")
	lo=${range% *}
	if fcmp "$lo" lt "$prev_max"; then
		overlap="$overlap $f starts at $lo before the previous file's last sample at $prev_max;"
	fi
	prev_max=${range#* }
done
run_to 60 "$BPFSYM" report $(for f in $files; do echo "$D/$f"; done) --limit 1 > "$D.aux/merged.rep" 2> "$D.aux/merged.err"
merged=$(awk '/^# samples: / { print $3 + 0 }' "$D.aux/merged.rep")
# Sample by sample: the files' perf-script against the merge's, by time, thread and addresses.
for f in $files; do cat "$D.aux/$f.script"; echo; done | LC_ALL=C awk -f "$BPFSYM_TOP/tests/integration/script_samples.awk" | LC_ALL=C sort > "$D.aux/files.rec"
run_to 60 "$BPFSYM" report $(for f in $files; do echo "$D/$f"; done) --perf-script 2>/dev/null |
	LC_ALL=C awk -f "$BPFSYM_TOP/tests/integration/script_samples.awk" | LC_ALL=C sort > "$D.aux/merged.rec"
paired=$(LC_ALL=C awk -f "$BPFSYM_TOP/tests/integration/script_pair.awk" "$D.aux/files.rec" - < "$D.aux/merged.rec")
note "no loss: $(echo "$files" | grep -c .) files, per-file samples $sum, summary $total, BPF counter ${bpf:-none}, merged $merged; paired: $(echo "$paired" | tail -1)"
if [ $rc -ne 0 ]; then
	fail "$name" "status $rc"
	show "$D/err"
elif [ -z "$total" ] || [ "$sum" -ne "$total" ] || [ "$sum" -eq 0 ]; then
	fail "$name" "the files hold $sum samples, the summary line says ${total:-nothing}"
	show "$D/err"
elif [ "${bpf:-x}" != "$sum" ]; then
	fail "$name" "the BPF side put ${bpf:-an unknown number of} samples in the ring buffer, the files hold $sum"
	grep '^bpfsym: ' "$D/err" | show
elif grep -q 'were not read' "$D/err"; then
	fail "$name" "samples left unread in the ring buffer: $(grep 'were not read' "$D/err")"
elif [ -n "$overlap" ]; then
	fail "$name" "time ranges overlap:$overlap"
elif [ "$merged" != "$sum" ]; then
	fail "$name" "the merged report has ${merged:-no} samples, the files $sum"
	show "$D.aux/merged.err"
elif [ "${paired%% *}" != ok ] || [ "$(echo "$paired" | awk '{ print $2 }')" != "$sum" ]; then
	fail "$name" "the merge's samples are not the files': $(echo "$paired" | tr '\n' ' ')"
	grep '^bpfsym: file jobs' "$D/err" | show
else
	pass "$name"
fi

# ---- every view of the merge
name=integration/rotate_merge_views
list=$(for f in $files; do echo "$D/$f"; done)
err=
for fmt in "--folded" "--perf-script" "--sort total,comm --limit 5" "--pprof $D.aux/m.pb.gz" "--flamegraph $D.aux/m.svg"; do
	# shellcheck disable=SC2086
	run_to 60 "$BPFSYM" report $list $fmt > "$D.aux/view.out" 2> "$D.aux/view.err" || err="$err [$fmt: status $?]"
done
# The same through -i and a glob bpfsym expands.
run_to 60 "$BPFSYM" report -i "$D/r.data.*" --limit 1 > "$D.aux/glob.rep" 2> "$D.aux/glob.err" || err="$err [-i glob: status $?]"
g=$(awk '/^# samples: / { print $3 + 0 }' "$D.aux/glob.rep")
[ "$g" = "$sum" ] || err="$err [-i glob: $g samples, expected $sum]"
# A truncated copy of one file among them: said, the rest still merged.
first=$(echo "$files" | head -1)
head -c $(( $(wc -c < "$D/$first") - 40 )) "$D/$first" > "$D.aux/cut.data"
run_to 60 "$BPFSYM" report $list "$D.aux/cut.data" --limit 1 > "$D.aux/cut.rep" 2> "$D.aux/cut.err" || err="$err [with a truncated file: status $?]"
grep -q "cut.data' is truncated" "$D.aux/cut.err" || err="$err [the truncated file is not said]"
if [ -n "$err" ]; then
	fail "$name" "$err"
	show "$D.aux/view.err"
	show "$D.aux/cut.err"
else
	pass "$name"
fi

# ---- a full disk while rotating
name=integration/rotate_disk_full
D=$T/full
if ! mkdir -p "$D" || ! mount -t tmpfs -o size=4m none "$D" 2> "$T/mount.err"; then
	skip "$name" "cannot mount a tmpfs: $(cat "$T/mount.err")"
else
	MNTS="$D"
	bg_start "$BPFSYM" record -a -F 999 -q --switch-output=1s -o "$D/r.data" 2> "$T/full.err"
	rec=$BG_PID
	data=$D/r.data
	REC=$rec
	wait_until 30 rec_started
	wait_until 10 nrot 1
	dd if=/dev/zero of="$D/filler" bs=4096 2>/dev/null
	# Full for 4 s: samples go unwritten, the recorder must live on.
	sleep 4
	alive "$rec" && still=1 || still=0
	rm -f "$D/filler"
	before=$(rotated "$D" r.data | grep -c .)
	sleep 4
	kill -INT "$rec" 2>/dev/null
	reap "$rec"
	files=$(rotated "$D" r.data)
	nerr=$(grep -c 'No space left on device' "$T/full.err")
	unw=0
	inf=0
	for f in $files; do
		run_to 60 "$BPFSYM" report "$D/$f" --limit 1 > "$T/full.$f.rep" 2>/dev/null
		u=$(awk '/samples not written/ { for (i = 1; i < NF; i++) if ($(i+1) == "samples" && $(i+2) == "not") print $i }' "$T/full.$f.rep" | tr -dc 0-9)
		unw=$((unw + ${u:-0}))
		s=$(awk '/^# samples: / { print $3 + 0 }' "$T/full.$f.rep")
		inf=$((inf + ${s:-0}))
	done
	written=$(summary "$T/full.err" 1)
	unwritten=$(summary "$T/full.err" 4)
	note "disk full: status $REAP_RC, $(echo "$files" | grep -c .) files ($before when the filler went), $nerr ENOSPC lines, END unwritten $unw, summary $written written + $unwritten not; the files hold $inf"
	if [ "$still" -ne 1 ]; then
		fail "$name" "the recorder ended while the disk was full"
		show "$T/full.err"
	elif [ "$REAP_RC" -ne 0 ]; then
		fail "$name" "status $REAP_RC"
		show "$T/full.err"
	elif [ "$nerr" -ne 1 ]; then
		fail "$name" "$nerr lines about the full disk, expected one"
		show "$T/full.err"
	elif ! grep -q 'writing again' "$T/full.err"; then
		fail "$name" "writing did not resume once the filler was deleted"
		show "$T/full.err"
	elif [ "$unw" -eq 0 ]; then
		fail "$name" "no END record counts samples not written"
		show "$T/full.err"
	elif [ "${unwritten:-0}" -ne "$unw" ]; then
		fail "$name" "the summary says ${unwritten:-0} not written, the files' END records $unw"
		show "$T/full.err"
	elif [ "${written:-0}" -ne "$inf" ]; then
		fail "$name" "the summary says ${written:-0} samples written, the files hold $inf (a file given up reads up to its last block)"
		show "$T/full.err"
	else
		pass "$name"
	fi
fi

# ---- still full when the recording ends: no file can say what was lost
name=integration/rotate_disk_full_at_end
D=$T/full2
if ! mkdir -p "$D" || ! mount -t tmpfs -o size=4m none "$D" 2> "$T/mount.err"; then
	skip "$name" "cannot mount a tmpfs: $(cat "$T/mount.err")"
else
	MNTS="$D $MNTS"
	bg_start "$BPFSYM" record -a -F 999 -q --switch-output=1s -o "$D/r.data" 2> "$T/full2.err"
	rec=$BG_PID
	data=$D/r.data
	REC=$rec
	wait_until 30 rec_started
	wait_until 10 nrot 1
	dd if=/dev/zero of="$D/filler" bs=4096 2>/dev/null
	wait_until 10 grep -q 'No space left' "$T/full2.err"
	sleep 1
	kill -INT "$rec" 2>/dev/null
	reap "$rec"
	note "full at the end: status $REAP_RC: $(tr '\n' '|' < "$T/full2.err")"
	if [ "$REAP_RC" -ne 1 ]; then
		fail "$name" "status $REAP_RC, expected 1 (samples were lost and no file says so)"
		show "$T/full2.err"
	elif ! grep -Eq 'the last [1-9][0-9]* samples were not written' "$T/full2.err"; then
		fail "$name" "no line says how many samples were not written"
		show "$T/full2.err"
	elif [ "$(nlines "$T/full2.err")" -ne 2 ]; then
		fail "$name" "$(nlines "$T/full2.err") lines on stderr, expected 2 (the full disk, then what was lost)"
		show "$T/full2.err"
	else
		pass "$name"
	fi
fi

# ---- a switch asked for as the recording stops
name=integration/rotate_no_switch_at_stop
D=$T/stop
mkdir -p "$D" "$D.aux"
bg_start "$BPFSYM" record -a -F 99 -q --switch-output -o "$D/r.data" 2> "$D/err"
rec=$BG_PID
data=$D/r.data
REC=$rec
wait_until 30 rec_started
sleep 1
# Both pending when it runs again: which one the loop sees first is not up to the order sent.
kill -STOP "$rec" && kill -USR2 "$rec" && kill -INT "$rec" && kill -CONT "$rec"
reap "$rec"
files=$(rotated "$D" r.data)
n=$(echo "$files" | grep -c .)
last=$(echo "$files" | tail -1)
s=$(hdr_samples "$D/$last")
note "stop: status $REAP_RC, $n files, the last with ${s:-no} samples"
if [ "$REAP_RC" -ne 0 ]; then
	fail "$name" "status $REAP_RC"
	show "$D/err"
elif [ "$n" -ne 1 ] || [ "${s:-0}" -eq 0 ]; then
	fail "$name" "$n files, the last with ${s:-no} samples: a switch as the recording stopped"
elif complete_all "$name" "$D" "$files"; then
	pass "$name"
fi

# ---- bad values
name=integration/rotate_bad_options
bad=
for opt in --switch-output=0 --switch-output=-1 --switch-output=10 --switch-output=1x \
	--switch-output=63K --switch-output=0s --switch-output=banana --switch-output=1.5s \
	"--switch-output=1s --switch-max-files=0" "--switch-output=1s --switch-max-files=-1" \
	--switch-max-files=3 "--switch-output=1s -o /dev/null"; do
	# shellcheck disable=SC2086
	run_to 30 "$BPFSYM" record -a -d 1 -o "$T/bad.data" $opt > "$T/bad.out" 2> "$T/bad.err"
	rc=$?
	if [ $rc -ne 2 ] || [ "$(nlines "$T/bad.err")" -ne 1 ]; then
		bad="$bad [$opt: status $rc, $(nlines "$T/bad.err") lines]"
	fi
done
if [ -e "$T/bad.data" ]; then
	fail "$name" "a refused command line left bad.data"
elif [ -n "$bad" ]; then
	fail "$name" "$bad"
else
	pass "$name"
fi

lib_done
