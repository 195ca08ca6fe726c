#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Debian's own programs, recorded with `record -a` (issue 14): stock
# binaries built without frame pointers, stripped (no _start symbol), so a
# stack counts as complete when it reaches libc's __libc_start_call_main
# (or start_thread for a thread).  Each program runs one long process, so
# what is measured is the walk, not a process's first milliseconds.
#
#   unwind_debian_xz     /usr/bin/xz compressing random bytes (xz-utils:
#                        liblzma's encoder under xz's main)
#   unwind_debian_perl   /usr/bin/perl running a loop (perl-base:
#                        libperl's interpreter loop)
#
# Each: at least 95% of the program's samples with a user frame reach
# __libc_start_call_main, with the program's own module in the stack (the
# table walk went through its frames, not around them), over at least
# 200 such samples (rounds are lengthened while fewer: a busy machine
# stretches wall time, not the samples); and no file's table was built
# twice (the shell and every xz map libc: one file identity, one table).
#
#   unwind_mem_cap       `record -a --unwind-mem 1M` while perl and
#                        python3 run (their tables and libc's need more
#                        than 1 MiB): the recording ends well, the header
#                        says how many files the table memory refused
#                        ("# unwind caps hit: N files not built: table
#                        memory full"), and the tables' BPF map memory it
#                        reports stays within the cap.
. "$(dirname "$0")/lib.sh"
lib_init integration/unwind_debian_xz integration/unwind_debian_perl integration/unwind_mem_cap

[ "$(uname -m)" = x86_64 ] || skip_all "the unwinder is x86-64 only"
XZ=/usr/bin/xz
PERL=/usr/bin/perl
NEED=200
COMPLETE_MIN=95

# stats FOLDED COMM MODULE: "USER COMPLETE": samples of COMM with a user
# frame; of those, reaching __libc_start_call_main or start_thread with a
# frame of MODULE ("[MODULE+0x..]" or a named frame: any frame at all of
# the binary shows as one or the other) somewhere above the root.
stats() {
	awk -v comm="$2" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != comm)
			next
		u = 0; root = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			u++
			if (f[i] == "__libc_start_call_main" || f[i] == "start_thread")
				root = 1
		}
		if (!u)
			next
		user += n
		if (root)
			ok += n
	}
	END { print user + 0, ok + 0 }' "$1"
}

# check NAME COMM CMD...: run CMD in the background, record -a for rounds
# of 3, 6, 12 s until COMM has NEED samples with a user frame, then judge.
check() {
	name=$1 comm=$2
	shift 2
	bg_start "$@"
	pid=$BG_PID
	rsecs=3
	while :; do
		run_to $((rsecs + 60)) "$BPFSYM" record -v -a -F 199 -q -d "$rsecs" -o "$T/$comm.data" 2> "$T/$comm.err"
		rc=$?
		if ! record_ok "$name" "$T/$comm.data" "$T/$comm.err" $rc ||
		   ! folded "$name" "$T/$comm.data" "$T/$comm.folded"; then
			stop "$pid"
			return
		fi
		set -- $(stats "$T/$comm.folded" "$comm")
		user=$1 ok=$2
		note "$comm: $rsecs s: $user samples with a user frame, $ok reach __libc_start_call_main; $("$BPFSYM" report "$T/$comm.data" 2>/dev/null | grep '^# user stacks ended:')"
		[ "$user" -ge "$NEED" ] || [ "$rsecs" -ge 12 ] && break
		rsecs=$((rsecs * 2))
	done
	stop "$pid"
	# -v: "unwind: PATH: N rows in T ms" per table built.  Every process
	# here maps libc: one identity, one table, however many map it.
	twice=$(sed -n 's/^unwind: \(.*\): [0-9]* rows in .*/\1/p' "$T/$comm.err" | sort | uniq -d | head -3)
	if [ -n "$twice" ]; then
		fail "$name" "tables built twice for one file: $(echo $twice)"
	elif [ "$user" -lt "$NEED" ]; then
		fail "$name" "only $user samples of $comm with a user frame in $rsecs s at 199 Hz ($NEED wanted)"
	elif [ $((100 * ok)) -lt $((COMPLETE_MIN * user)) ]; then
		fail "$name" "only $ok of $user samples of $comm reach __libc_start_call_main ($COMPLETE_MIN% wanted)"
		awk -v c="$comm" 'index($0, c ";") == 1' "$T/$comm.folded" | sort -t' ' -k2 -nr | head -5 |
			awk '{ print "#   " substr($0, 1, 300) }'
	else
		pass "$name"
	fi
}

if [ -x "$XZ" ]; then
	head -c 16777216 /dev/urandom > "$T/random" 2>/dev/null || fail_all "cannot write 16 MB of random bytes"
	# -9e on random bytes: seconds of CPU per pass; the loop keeps one xz busy.
	cat > "$T/xz_loop.sh" <<EOF
while :; do "$XZ" -T1 -9e -c "$T/random" > /dev/null || exit 1; done
EOF
	check integration/unwind_debian_xz xz sh "$T/xz_loop.sh"
else
	skip integration/unwind_debian_xz "$XZ is not installed (xz-utils)"
fi

if [ -x "$PERL" ]; then
	check integration/unwind_debian_perl perl "$PERL" -e 'my $s = 0; while (1) { for my $i (1 .. 1000000) { $s += ($i * $i) % 7 } }'
else
	skip integration/unwind_debian_perl "$PERL is not installed (perl-base)"
fi
name=integration/unwind_mem_cap
if [ -x "$PERL" ] && [ -x /usr/bin/python3 ]; then
	bg_start "$PERL" -e 'my $s = 0; while (1) { $s += $_ for 1 .. 1000 }'
	p1=$BG_PID
	bg_start /usr/bin/python3 -c 'while True: sum(range(1000))'
	p2=$BG_PID
	sleep 0.5
	run_to 90 "$BPFSYM" record -a -F 99 -q -d 2 --unwind-mem 1M -o "$T/cap.data" 2> "$T/cap.err"
	rc=$?
	stop "$p1"
	stop "$p2"
	if record_ok "$name" "$T/cap.data" "$T/cap.err" $rc; then
		"$BPFSYM" report "$T/cap.data" 2> /dev/null | grep '^#' > "$T/cap.hdr"
		capl=$(grep '^# unwind caps hit:' "$T/cap.hdr")
		mib=$(sed -n 's/^# unwind tables: .*rows, \([0-9.]*\) MiB of BPF maps.*/\1/p' "$T/cap.hdr")
		note "$(grep '^# unwind tables:' "$T/cap.hdr")"
		note "${capl:-(no caps line)}"
		if ! echo "$capl" | grep -q 'files not built: table memory full'; then
			fail "$name" "the header does not say the table memory refused files"
			show "$T/cap.hdr"
		elif [ -z "$mib" ] || [ "$(awk -v m="$mib" 'BEGIN { print (m <= 1.0) }')" != 1 ]; then
			fail "$name" "the tables take ${mib:-?} MiB of BPF maps, over the 1 MiB cap"
		else
			pass "$name"
		fi
	fi
else
	skip "$name" "$PERL or /usr/bin/python3 is not installed"
fi
lib_done
