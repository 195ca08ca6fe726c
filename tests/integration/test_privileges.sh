#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Least privilege while recording (issue 25; docs/SECURITY.md).
#
#   least_privilege  root records -a with --listen: once sampling, the
#                    recorder's thread has exactly CAP_BPF, CAP_SYS_PTRACE,
#                    CAP_DAC_READ_SEARCH, CAP_CHECKPOINT_RESTORE and
#                    CAP_SYSLOG effective, permitted and in its bounding
#                    set; every other thread (the unwinder's worker, the
#                    endpoint's two) a subset of those; no_new_privs on
#                    all; and the recording still names burn_inner (what
#                    the rest of it needs is kept).  The bits come from the
#                    kernel headers' numbers, /proc/PID/task/*/status is
#                    the kernel's own view.
#   rotate_privilege the same with --switch-output: CAP_DAC_OVERRIDE kept
#                    too (new files in a directory root may not own)
. "$(dirname "$0")/lib.sh"
lib_init integration/least_privilege integration/rotate_privilege

hdr=/usr/include/linux/capability.h
[ -r "$hdr" ] || skip_all "no $hdr (linux-libc-dev) to read the capability numbers from"
need_fixture burn burn

# capnum NAME: CAP_NAME's number from the kernel's header.
capnum() {
	awk -v n="CAP_$1" '$1 == "#define" && $2 == n { print $3; exit }' "$hdr"
}

# mask NAME...: the 64-bit mask of those capabilities, in /proc's hex.
mask() {
	for c in "$@"; do
		capnum "$c"
	done | awk '{ m[$1] = 1 } END {
		hi = 0; lo = 0
		for (b in m) { if (b >= 32) hi += 2 ^ (b - 32); else lo += 2 ^ b }
		printf "%08x%08x\n", hi, lo }'
}

# free_port: a TCP port nothing listens on now.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# field STATUS NAME: the value of NAME: in a /proc status file.
field() {
	awk -v n="$2:" '$1 == n { print $2 }' "$1"
}

# rec_threads N: the recorder has N threads or more, or has ended.
rec_threads() {
	[ "$(nthreads "$REC")" -ge "$1" ] || ! alive "$REC"
}

# check NAME WANT ARGS...: record -a ARGS while burn runs; the threads'
# capabilities as above against the mask WANT.
check() {
	name=$1
	want=$2
	shift 2
	# burn outlives the recording and the recording outlives the look at
	# its threads: both are stopped by the test.  Under TCG the recorder
	# took 5-9 s to start, burn's 8 s then held no sample of it, and with
	# -d 4 the threads had begun to end while the shell, slowed down as
	# much, copied their status (2 of 7 seen).
	bg_start "$T/burn" 60
	bpid=$BG_PID
	if ! bg_record "$T/$name.data" -a --listen "127.0.0.1:$(free_port)" "$@"; then
		fail "integration/$name" "the recording did not start"
		show "$T/$name.data.err"
		stop "$bpid"
		return
	fi
	wait_until 30 rec_threads 4
	sleep 1
	bad=
	for s in /proc/"$REC"/task/*/status; do
		cp "$s" "$T/$name.$(basename "$(dirname "$s")").status" 2> /dev/null || continue
	done
	sleep 3
	end_record
	rc=$REC_RC
	stop "$bpid"
	if [ "$rc" -ne 0 ]; then
		fail "integration/$name" "bpfsym record exited with status $rc"
		show "$T/$name.data.err"
		return
	fi
	main=$T/$name.$REC.status
	if [ ! -s "$main" ]; then
		fail "integration/$name" "no status of the recorder's thread was read"
		return
	fi
	for f in CapEff CapPrm CapBnd; do
		v=$(field "$main" $f)
		[ "$v" = "$want" ] || bad="$bad main $f $v;"
	done
	n=0
	for s in "$T/$name".*.status; do
		n=$((n + 1))
		eff=$(field "$s" CapEff)
		extra=$(/usr/bin/python3 -c "print('%x' % (0x$eff & ~0x$want))")
		[ "$extra" = 0 ] || bad="$bad $(field "$s" Name) CapEff $eff;"
		[ "$(field "$s" NoNewPrivs)" = 1 ] || bad="$bad $(field "$s" Name) NoNewPrivs $(field "$s" NoNewPrivs);"
	done
	note "$name: $n threads; the recorder's CapEff $(field "$main" CapEff), want $want"
	if [ -n "$bad" ]; then
		fail "integration/$name" "capabilities beyond $want or no no_new_privs:$bad"
		return
	fi
	if [ "$n" -lt 4 ]; then
		fail "integration/$name" "only $n threads seen: the unwinder's and the endpoint's missing?"
		return
	fi
	# Rotated files are DATA.TIME; `report` merges what it is given.
	run_to 60 "$BPFSYM" report $(ls "$T/$name".data "$T/$name".data.2* 2> /dev/null) --folded \
		> "$T/$name.folded" 2> "$T/$name.folded.err"
	# burn_inner anywhere in burn's stack: under TCG many samples carry
	# kernel frames above it (an interrupt's way back to user space).
	k=$(folded_count "$T/$name.folded" '^burn;(.*;)?burn_inner(;|$)')
	note "$name: $k samples of burn name burn_inner, in $(ls "$T/$name".data "$T/$name".data.2* 2> /dev/null | grep -c .) files"
	if [ "$k" -lt 1 ]; then
		fail "integration/$name" "no sample names burn_inner after the drop"
		show "$T/$name.folded.err"
		note "$name: $(folded_count "$T/$name.folded" '.') samples in all; the heaviest stacks:"
		awk '{ print $NF " " substr($0, 1, 160) }' "$T/$name.folded" | sort -nr | head -5 | show
		return
	fi
	pass "integration/$name"
}

keep="BPF SYS_PTRACE DAC_READ_SEARCH CHECKPOINT_RESTORE SYSLOG"
check least_privilege "$(mask $keep)"
mkdir -p "$T/rot"
check rotate_privilege "$(mask $keep DAC_OVERRIDE)" --switch-output=2s
lib_done
