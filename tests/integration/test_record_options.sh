#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Record options beyond the basics: --user-only / --kernel-only, the
# privilege check, -p ending when its targets exit, the live status line on
# a terminal (and -q), -v, -m/--mmap-pages.
. "$(dirname "$0")/lib.sh"
lib_init integration/side_user_only integration/side_kernel_only \
	integration/priv_nobody integration/priv_missing_caps \
	integration/pid_target_exits integration/status_line_tty \
	integration/quiet_no_status integration/verbose_libbpf \
	integration/mmap_pages_usage integration/mmap_pages_size

for f in sysheavy burn; do
	need_fixture $f $f
done

# ---- --user-only: no kernel frame anywhere, and the time in system calls
# is still charged to the user side: the libc wrappers (read, write,
# syscall) or the loop itself.  libc is built without frame pointers, so
# the walk from a wrapper skips to main, as perf's does.  sysheavy burns
# 1 s of CPU time and writes what it had: half of 299 Hz x that is wanted.
rm -f "$T/user.cpu" "$T/kern.cpu"
run_to 120 "$BPFSYM" record --user-only -F 299 -q -o "$T/user.data" -- "$T/sysheavy" 1 "$T/user.cpu" 2> "$T/user.err"
rc=$?
name=integration/side_user_only
if record_ok "$name" "$T/user.data" "$T/user.err" $rc && folded "$name" "$T/user.data" "$T/user.folded"; then
	k=$(folded_count "$T/user.folded" '_\[k\]')
	loop=$(folded_count "$T/user.folded" ';main;(.*;)?(read|write|syscall|syscall_loop)$')
	all=$(folded_count "$T/user.folded" '.')
	cpu=$(fixture_cpu "$T/user.cpu" syscall_loop)
	note "--user-only: $all samples, $k with kernel frames, $loop in the syscall wrappers or loop under main; $cpu ms of CPU time (~$(samples_for "$cpu" 299) samples)"
	if [ "$k" -ne 0 ]; then
		fail "$name" "$k samples have kernel frames under --user-only"
		grep '_\[k\]' "$T/user.folded" | head -5 | show
	elif ! cpu_enough "$name" sysheavy "$cpu" 900 || ! samples_ok "$name" sysheavy "$all" "$cpu" 299; then
		:
	elif [ $((2 * loop)) -lt "$all" ]; then
		fail "$name" "expected most of $all samples in read/write/syscall/syscall_loop under main, got $loop"
		sort -t' ' -k2,2nr "$T/user.folded" | head -5 | show
	else
		pass "$name"
	fi
fi

# ---- --kernel-only: every frame is a kernel frame.
run_to 120 "$BPFSYM" record --kernel-only -F 299 -q -o "$T/kern.data" -- "$T/sysheavy" 1 "$T/kern.cpu" 2> "$T/kern.err"
rc=$?
name=integration/side_kernel_only
if record_ok "$name" "$T/kern.data" "$T/kern.err" $rc && folded "$name" "$T/kern.data" "$T/kern.folded"; then
	# Strip the comm, then any frame that is not "..._[k]" is a user frame.
	user=$(awk '{ s = substr($0, 1, length($0) - length($NF) - 1); sub(/^[^;]*;/, "", s);
		n = split(s, f, ";"); for (i = 1; i <= n; i++) if (f[i] !~ /_\[k\]$/) { c += $NF; break } }
		END { print c + 0 }' "$T/kern.folded")
	all=$(folded_count "$T/kern.folded" '.')
	cpu=$(fixture_cpu "$T/kern.cpu" syscall_loop)
	note "--kernel-only: $all samples, $user with a non-kernel frame; $cpu ms of CPU time (~$(samples_for "$cpu" 299) samples, most of it in the kernel)"
	if [ "$user" -ne 0 ]; then
		fail "$name" "$user samples have user frames under --kernel-only"
		head -5 "$T/kern.folded" | show
	elif ! cpu_enough "$name" sysheavy "$cpu" 900 || ! samples_ok "$name" "sysheavy (kernel samples)" "$all" "$cpu" 299; then
		:
	else
		pass "$name"
	fi
fi

# ---- privileges: status 2 and one line naming what is missing.
# priv_check NAME EXPECTED_REGEX CMD...
priv_check() {
	name=$1 want=$2
	shift 2
	run_to 30 "$@" > "$T/priv.out" 2> "$T/priv.err"
	rc=$?
	note "$name: status $rc, stderr: $(head -3 "$T/priv.err")"
	if [ $rc -ne 2 ]; then
		fail "$name" "exited with status $rc, expected 2"
		show "$T/priv.err"
	elif [ "$(nlines "$T/priv.err")" -ne 1 ]; then
		fail "$name" "printed $(nlines "$T/priv.err") lines on stderr, expected one"
		show "$T/priv.err"
	elif ! grep -Eq "$want" "$T/priv.err"; then
		fail "$name" "the message does not match /$want/"
	else
		pass "$name"
	fi
}
if command -v setpriv > /dev/null; then
	# ASan's leak checker needs ptrace, which nobody lacks: not what is tested here.
	ASAN_OPTIONS=detect_leaks=0 priv_check integration/priv_nobody \
		'CAP_BPF.*CAP_PERFMON.*CAP_SYS_PTRACE.*CAP_DAC_READ_SEARCH' \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$BPFSYM" record -d 1 -q -o /tmp/never.data
	priv_check integration/priv_missing_caps '^bpfsym: missing capabilities: CAP_BPF CAP_PERFMON \(' \
		setpriv --bounding-set=-bpf,-perfmon "$BPFSYM" record -d 1 -q -o "$T/never.data"
else
	skip integration/priv_nobody "setpriv (util-linux) not installed"
	skip integration/priv_missing_caps "setpriv (util-linux) not installed"
fi

# ---- -p ends the recording when its target exits.  The target, burn of
# 2 s of CPU time, is stopped (SIGSTOP) until the recorder samples: the
# rest of its burn is recorded (what it burnt before the stop, up to a
# second under TCG, is not), and it writes when it ended and what it had.
rm -f "$T/exit.cpu"
bg_start "$T/burn" 2 "$T/exit.cpu"
b=$BG_PID
wait_until 5 alive "$b"
kill -STOP "$b"
c0=$(cpu_ms "$b")
name=integration/pid_target_exits
if ! bg_record "$T/exit.data" -p "$b"; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/exit.data.err"
	stop "$b"
else
	kill -CONT "$b"
	# burn's ceiling for 2 s of CPU time is 100 s.
	wait_exit "$b" 150
	reap "$b"
	# A recorder that does not notice runs until it is stopped here.
	wait_exit "$REC" 60
	t1=$(now_ms)
	end_record
	end_ms=$(awk '$1 == "end_ms" { print $2 }' "$T/exit.cpu" 2>/dev/null)
	cpu=$(( $(fixture_cpu "$T/exit.cpu" burn_inner) - c0 ))
	if [ -z "$end_ms" ]; then
		fail "$name" "burn did not write when it ended to '$T/exit.cpu'"
	elif record_ok "$name" "$T/exit.data" "$T/exit.data.err" $REC_RC &&
	     folded "$name" "$T/exit.data" "$T/exit.folded"; then
		n=$(folded_count "$T/exit.folded" 'burn_inner')
		note "-p of burn: bpfsym ended $((t1 - end_ms)) ms after it; $n burn_inner samples for $cpu ms of CPU time (~$(samples_for "$cpu" 199))"
		# bpfsym notices the exit within a poll or two; 15 s leave an ASan
		# build on a crowded machine room to flush and exit.
		if [ $((t1 - end_ms)) -gt 15000 ]; then
			fail "$name" "bpfsym kept recording $((t1 - end_ms)) ms after its target exited"
		elif cpu_enough "$name" burn "$cpu" 900 && samples_ok "$name" "the target" "$n" "$cpu" 199; then
			pass "$name"
		fi
	fi
fi

# ---- the live status line: only on a terminal, and not with -q.
if command -v script > /dev/null; then
	run_to 60 script -qec "'$BPFSYM' record -F 99 -d 1.5 -o '$T/tty.data'" /dev/null > "$T/tty.out" 2>&1
	rc=$?
	name=integration/status_line_tty
	# A status update is "\rbpfsym: ... samples"; the summary line follows.
	upd=$(tr '\r' '\n' < "$T/tty.out" | grep -c '^bpfsym: *[0-9.]*s .*samples')
	note "on a tty: status $rc, $upd status updates"
	if [ $rc -ne 0 ]; then
		fail "$name" "exited with status $rc"
		show "$T/tty.out"
	elif [ "$upd" -lt 1 ] || ! grep -q "$(printf '\r')" "$T/tty.out"; then
		fail "$name" "no live status line on a terminal"
		show "$T/tty.out"
	else
		pass "$name"
	fi
	run_to 60 script -qec "'$BPFSYM' record -q -F 99 -d 1.5 -o '$T/ttyq.data'" /dev/null > "$T/ttyq.out" 2>&1
	rc=$?
	name=integration/quiet_no_status
	if [ $rc -ne 0 ]; then
		fail "$name" "exited with status $rc"
	elif grep -q "$(printf '\r')bpfsym" "$T/ttyq.out"; then
		fail "$name" "-q still printed a status line"
		show "$T/ttyq.out"
	elif ! grep -q 'samples' "$T/ttyq.out"; then
		fail "$name" "-q lost the summary line"
		show "$T/ttyq.out"
	else
		pass "$name"
	fi
else
	skip integration/status_line_tty "script (bsdutils) not installed"
	skip integration/quiet_no_status "script (bsdutils) not installed"
fi

# ---- -v: libbpf's own messages reach stderr.
run_to 60 "$BPFSYM" record -v -d 0.5 -q -o "$T/v.data" 2> "$T/v.err"
rc=$?
name=integration/verbose_libbpf
if [ $rc -ne 0 ]; then
	fail "$name" "exited with status $rc"
	show "$T/v.err"
elif ! grep -q '^libbpf: ' "$T/v.err"; then
	fail "$name" "no libbpf message on stderr with -v"
	show "$T/v.err"
else
	pass "$name"
fi

# ---- -m/--mmap-pages: documented, refused unless a power of two pages.
name=integration/mmap_pages_usage
"$BPFSYM" record --help > "$T/help.out" 2>&1
run_to 30 "$BPFSYM" record -m 3 -a -d 1 -q -o "$T/m3.data" 2> "$T/m3.err"
rc3=$?
run_to 30 "$BPFSYM" record --mmap-pages 12K -a -d 1 -q -o "$T/m12.data" 2> "$T/m12.err"
rc12=$?
if ! grep -q -- '-m, --mmap-pages' "$T/help.out"; then
	fail "$name" "bpfsym record --help does not document -m/--mmap-pages"
elif [ $rc3 -ne 2 ] || [ $rc12 -ne 2 ]; then
	fail "$name" "-m 3 and --mmap-pages 12K exited with $rc3 and $rc12, expected 2 (usage)"
elif [ "$(nlines "$T/m3.err")" -ne 1 ] || ! grep -q "^bpfsym: -m '3': .*power of two" "$T/m3.err"; then
	fail "$name" "-m 3 did not say in one line that a power of two is expected"
	show "$T/m3.err"
elif [ -e "$T/m3.data" ] || [ -e "$T/m12.data" ]; then
	fail "$name" "a refused -m still wrote a recording"
else
	pass "$name"
fi

# ---- -m sizes the ring buffer the kernel really has (bpftool's view),
# in pages or with a unit, and a recording through it works.
name=integration/mmap_pages_size
if ! command -v bpftool > /dev/null 2>&1 && [ ! -x /usr/sbin/bpftool ]; then
	skip "$name" "bpftool is not installed (the oracle)"
else
	bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
	pg=$(getconf PAGESIZE)
	why=
	for m in 8 16K; do
		case $m in
		*K) want=$((${m%K} * 1024)) ;;
		*) want=$((m * pg)) ;;
		esac
		rm -f "$T/m.data"
		bg_start "$BPFSYM" record -m "$m" -q -F 99 -o "$T/m.data" -- "$T/burn" 3 2> "$T/m.err"
		rec=$BG_PID
		# Created at start-up, written once the programs are loaded.
		wait_until 20 file_nonempty "$T/m.data"
		# Other recorders may run: one ring of exactly this size must exist.
		found=$("$bpftool" map list 2> /dev/null | awk -v w="$want" '
			/ ringbuf / && / name events / { rb = 1; next }
			rb && $0 ~ ("max_entries " w " ") { n++ }
			{ rb = 0 }
			END { print n + 0 }')
		reap "$rec"
		if [ "$found" -lt 1 ]; then
			why="-m $m: no ring buffer of $want bytes among the kernel's maps"
		elif [ "$REAP_RC" -ne 0 ]; then
			why="-m $m: bpfsym record exited with status $REAP_RC"
			show "$T/m.err"
		elif ! "$BPFSYM" report "$T/m.data" > "$T/m.report" 2>&1 || ! grep -q 'burn' "$T/m.report"; then
			why="-m $m: the recording does not report burn's samples"
			show "$T/m.report"
		fi
		[ -n "$why" ] && break
	done
	if [ -n "$why" ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
fi

lib_done
