#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --symfs DIR`: a recording reported on "another machine",
# where the recorded files are gone and copies of them (and of their debug
# files) sit under DIR.
#
# The recording machine runs, under one recording: burn_a (stripped, its
# debug file named by .gnu_debuglink: named when recorded), burn_b
# (stripped, no debug file anywhere: unnamed when recorded), dlopen_burn
# loading libburn.so, and sysheavy (kernel frames).  Then those files are
# moved away, and DIR gets burn_a and sysheavy in the build-id layout
# (DIR/.build-id/xx/rest, burn_a's debug file as rest.debug), dlopen_burn,
# libburn.so and burn_b at their recorded paths (DIR/PATH), and burn_b's
# debug file, never installed on the recording machine, under
# DIR/usr/lib/debug/.build-id.
#
#   symfs_same       the names of the recording machine, and burn_b named
#   symfs_renamed    renamed functions in DIR's copies show: DIR was read
#   symfs_mismatch   another build at burn_b's path is refused, counted
#   symfs_kallsyms   with --kallsyms (a shifted copy): same names again,
#                    kernel frames included
#   symfs_refusals   a DIR that is not there: exit 1, one line
. "$(dirname "$0")/lib.sh"
lib_init integration/symfs_same integration/symfs_renamed integration/symfs_mismatch \
	integration/symfs_kallsyms integration/symfs_refusals

for t in objcopy strip readelf; do
	command -v $t > /dev/null 2>&1 || skip_all "no $t"
done

H=$T/host
mkdir -p "$H/bin/.debug" "$H/lib" "$T/dbg" "$T/other"
ID_A=a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1
ID_B=b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2
ID_C=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3
# build-id FILE: its GNU build-id in hex.
build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}
need_fixture burn host/bin/burn_a "-Wl,--build-id=0x$ID_A"
need_fixture burn host/bin/burn_b "-Wl,--build-id=0x$ID_B"
need_fixture burn other/burn_b "-Wl,--build-id=0x$ID_C"
need_fixture dlopen_burn host/bin/dlopen_burn -ldl
need_fixture libburn host/lib/libburn.so -shared -fPIC -DNAME=lib_burn
need_fixture sysheavy host/bin/sysheavy -Wl,--build-id=sha1
(
	set -e
	cd "$H/bin"
	objcopy --only-keep-debug burn_a .debug/burn_a.debug
	strip -s burn_a
	objcopy --add-gnu-debuglink=.debug/burn_a.debug burn_a
	# burn_b's debug file exists, but not where the recorder looks.
	objcopy --only-keep-debug burn_b "$T/dbg/burn_b.debug"
	strip -s burn_b
) > "$T/strip.log" 2>&1 || { show "$T/strip.log"; fail_all "cannot strip the fixtures: $(tail -1 "$T/strip.log")"; }
ID_S=$(build_id "$H/bin/sysheavy")
[ -n "$ID_S" ] || fail_all "sysheavy, linked with --build-id=sha1, has no build-id (readelf -n)"

# Each burns an amount of CPU time (however long that takes on a busy
# machine) and writes what it had to $T/*.cpu: what the recording must
# hold of each derives from that.  burn_a and burn_b burn 4 s: their
# start (the loader, the samples before the recorder has built their
# tables) took 12-13% of 2 s under TCG (888 of 1018 in the loop, in the
# 6.1 VM beside builds), and 90% must be in their loop.
rm -f "$T"/*.cpu
run_to 300 "$BPFSYM" record -q -F 499 -o "$T/rec.data" -- sh -c \
	"$H/bin/burn_a 4 '$T/a.cpu' & $H/bin/burn_b 4 '$T/b.cpu' & $H/bin/dlopen_burn - 0.5 '$T/lib.cpu' $H/lib/libburn.so lib_burn & $H/bin/sysheavy 1 '$T/sys.cpu' & wait" \
	2> "$T/record.err"
rc=$?
if ! record_ok integration/symfs_same "$T/rec.data" "$T/record.err" $rc ||
   ! folded integration/symfs_same "$T/rec.data" "$T/plain"; then
	for t in renamed mismatch kallsyms refusals; do
		fail integration/symfs_$t "no recording to read"
	done
	lib_done
fi
note "bpfsym record: $(cat "$T/record.err")"

# ---- "another machine": the recorded files are gone, copies are under DIR
mv "$H" "$T/gone"
G=$T/gone
# bid_path ROOT ID: makes ROOT/.build-id/xx, prints ROOT/.build-id/xx/rest.
bid_path() {
	mkdir -p "$1/.build-id/$(echo "$2" | cut -c1-2)"
	echo "$1/.build-id/$(echo "$2" | cut -c1-2)/$(echo "$2" | cut -c3-)"
}
D=$T/symfs
mkdir -p "$D$H/bin" "$D$H/lib" "$D/usr/lib/debug"
cp "$G/bin/burn_a" "$(bid_path "$D" $ID_A)"
cp "$G/bin/.debug/burn_a.debug" "$(bid_path "$D" $ID_A).debug"
cp "$G/bin/sysheavy" "$(bid_path "$D" "$ID_S")"
cp "$G/bin/dlopen_burn" "$G/bin/burn_b" "$D$H/bin/"
cp "$G/lib/libburn.so" "$D$H/lib/"
cp "$T/dbg/burn_b.debug" "$(bid_path "$D/usr/lib/debug" $ID_B).debug"

# report_ok NAME OUT ARGS...: `bpfsym report ARGS > OUT`; FAIL NAME unless status 0.
report_ok() {
	name=$1 out=$2
	shift 2
	run_to 60 "$BPFSYM" report "$@" > "$out" 2> "$out.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "bpfsym report $* exited with status $rc"
		show "$out.err"
		return 1
	fi
	return 0
}

# only COMMRE FOLDED: the lines of those comms, sorted.
only() {
	awk -v cre="^($1)\$" '{ c = $0; sub(/;.*/, "", c); if (c ~ cre) print }' "$2" | sort
}

# burn_chain FOLDED COMM: "TOTAL CHAIN": samples of COMM, and those whose
# stack has main;burn_outer;burn_inner.
burn_chain() {
	awk -v comm="$2" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		if (index(stack, comm ";") != 1)
			next
		t += n
		if (stack ~ /;main;burn_outer;burn_inner(;|$)/)
			c += n
	}
	END { print t + 0, c + 0 }' "$1"
}

# ---- the recording machine's names, and burn_b's too
name=integration/symfs_same
set -- $(burn_chain "$T/plain" burn_a)
a_total=$1 a_chain=$2
set -- $(burn_chain "$T/plain" burn_b)
b_total=$1 b_plain=$2
lib=$(folded_count "$T/plain" '^dlopen_burn;.*;main;lib_burn')
a_cpu=$(fixture_cpu "$T/a.cpu" burn_inner)
b_cpu=$(fixture_cpu "$T/b.cpu" burn_inner)
lib_cpu=$(fixture_cpu "$T/lib.cpu" lib_burn)
note "recorded: burn_a $a_chain of $a_total samples in main;burn_outer;burn_inner, burn_b $b_plain of $b_total, lib_burn $lib"
note "CPU time: burn_a $a_cpu ms, burn_b $b_cpu ms, lib_burn $lib_cpu ms (~$(samples_for "$a_cpu" 499), ~$(samples_for "$b_cpu" 499), ~$(samples_for "$lib_cpu" 499) samples at 499 Hz)"
# The recording the comparisons need: each fixture with at least half the
# samples its CPU time gives, burn_a named, burn_b not.
if ! cpu_enough "$name" burn_a "$a_cpu" 900 || ! cpu_enough "$name" burn_b "$b_cpu" 900 ||
   ! cpu_enough "$name" lib_burn "$lib_cpu" 450 ||
   ! samples_ok "$name" "burn_a (recorded)" "$a_total" "$a_cpu" 499 ||
   ! samples_ok "$name" "burn_b (recorded)" "$b_total" "$b_cpu" 499 ||
   ! samples_ok "$name" "dlopen_burn;...;main;lib_burn (recorded)" "$lib" "$lib_cpu" 499; then
	show "$T/plain"
elif [ $((a_chain * 10)) -lt $((a_total * 9)) ] || [ "$b_plain" -ne 0 ]; then
	fail "$name" "the recording is not what the test needs (burn_a named: $a_chain of $a_total; burn_b not: $b_plain of $b_total)"
	show "$T/plain"
elif report_ok "$name" "$T/same" "$T/rec.data" --folded --symfs "$D" &&
     report_ok "$name" "$T/same.table" "$T/rec.data" --symfs "$D"; then
	set -- $(burn_chain "$T/same" burn_b)
	b_total2=$1 b_chain=$2
	header=$(grep '^# user symbols: ' "$T/same.table")
	if [ "$(only 'burn_a|dlopen_burn|sysheavy|sh' "$T/plain")" != "$(only 'burn_a|dlopen_burn|sysheavy|sh' "$T/same")" ]; then
		fail "$name" "names differ from the recording machine's"
		diff "$T/plain" "$T/same" | show
	elif [ "$b_total2" -ne "$b_total" ] || [ $((b_chain * 10)) -lt $((b_total * 9)) ]; then
		fail "$name" "burn_b: $b_chain of $b_total2 samples in main;burn_outer;burn_inner through DIR (want 90%)"
		only burn_b "$T/same" | show
	elif ! echo "$header" | grep -Eq "^# user symbols: from --symfs $D: [0-9]+ of [0-9]+ file modules \\(2 by build-id, 3 by path\\)"; then
		fail "$name" "the table does not say what DIR held: '$header'"
		grep '^#' "$T/same.table" | show
	else
		pass "$name"
		note "$header"
		note "burn_b, unnamed when recorded: $b_chain of $b_total samples in main;burn_outer;burn_inner"
	fi
fi

# ---- renamed in DIR's copies: the new names show, so DIR was read
name=integration/symfs_renamed
D2=$T/symfs2
cp -a "$D" "$D2"
if ! objcopy --redefine-sym burn_inner=zz_burn_inner "$(bid_path "$D2" $ID_A).debug" ||
   ! objcopy --redefine-sym main=zz_main "$D2$H/bin/dlopen_burn" ||
   [ "$(build_id "$D2$H/bin/dlopen_burn")" != "$(build_id "$G/bin/dlopen_burn")" ]; then
	fail "$name" "cannot rename symbols in the copies (keeping their build-ids)"
elif report_ok "$name" "$T/renamed" "$T/rec.data" --folded --symfs "$D2"; then
	{
		only burn_a "$T/plain" | sed 's/;burn_inner\( [0-9]*\)$/;zz_burn_inner\1/; s/;burn_inner;/;zz_burn_inner;/g'
		only dlopen_burn "$T/plain" | sed 's/;main;/;zz_main;/g; s/;main\( [0-9]*\)$/;zz_main\1/'
	} | sort > "$T/renamed.want"
	only 'burn_a|dlopen_burn' "$T/renamed" > "$T/renamed.got"
	if ! cmp -s "$T/renamed.want" "$T/renamed.got"; then
		fail "$name" "renamed functions not shown as expected"
		diff "$T/renamed.want" "$T/renamed.got" | show
	elif ! grep -q ';zz_burn_inner' "$T/renamed.got" || ! grep -q ';zz_main;' "$T/renamed.got"; then
		fail "$name" "no renamed frame in the output"
	else
		pass "$name"
		note "zz_burn_inner (DIR/.build-id/xx/rest.debug) and zz_main (DIR/PATH) shown"
	fi
fi

# ---- another build at burn_b's path, unstripped: refused, never names a frame
name=integration/symfs_mismatch
D3=$T/symfs3
mkdir -p "$D3$H/bin"
cp "$T/other/burn_b" "$D3$H/bin/burn_b"
if report_ok "$name" "$T/mismatch" "$T/rec.data" --folded --symfs "$D3" &&
   report_ok "$name" "$T/mismatch.table" "$T/rec.data" --symfs "$D3"; then
	header=$(grep '^# user symbols: ' "$T/mismatch.table")
	if [ "$(only burn_b "$T/plain")" != "$(only burn_b "$T/mismatch")" ]; then
		fail "$name" "burn_b named from a file of another build"
		only burn_b "$T/mismatch" | show
	elif ! echo "$header" | grep -q '; refused, another build-id: 1'; then
		fail "$name" "the table does not count the refusal: '$header'"
	elif ! grep -Eq '^# unnamed frames: .*build-id mismatch [<0-9.]+%' "$T/mismatch.table"; then
		fail "$name" "burn_b's unnamed frames are not said to be a build-id mismatch"
		grep '^#' "$T/mismatch.table" | show
	else
		pass "$name"
		note "$header"
	fi
fi

# ---- with a kallsyms text of "another boot": both kinds of frames as recorded
name=integration/symfs_kallsyms
SHIFT=0x20000000
if [ ! -r /proc/kallsyms ] || ! command -v perl >/dev/null 2>&1 ||
   ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	skip "$name" "needs a readable /proc/kallsyms with addresses, and perl"
else
	SHIFT=$SHIFT perl -e '
		no warnings "portable";
		my $shift = hex($ENV{SHIFT});
		while (my $l = <STDIN>) {
			my ($a, $rest) = $l =~ /^([0-9a-f]+)( .*)$/s or die "bad line: $l";
			printf "%0*x%s", length($a), hex($a) + $shift, $rest;
		}' < /proc/kallsyms > "$T/kallsyms.shifted"
	# The report to compare with, of its own: symfs_same may have stopped
	# before making one.
	if report_ok "$name" "$T/same.k" "$T/rec.data" --folded --symfs "$D"; then
		kframes=$(awk '{ n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
			for (i = 2; i <= n; i++) if (f[i] ~ /_\[k\]$/ && f[i] != "[unknown]_[k]") c += $NF }
			END { print c + 0 }' "$T/same.k")
		sys=$(folded_count "$T/same.k" '^sysheavy;')
		sys_cpu=$(fixture_cpu "$T/sys.cpu" syscall_loop)
		note "sysheavy: $sys samples for $sys_cpu ms of CPU time (~$(samples_for "$sys_cpu" 499)); $kframes named kernel frames in all"
	fi
	if [ ! -s "$T/same.k" ]; then
		:
	elif ! cpu_enough "$name" sysheavy "$sys_cpu" 900 || ! samples_ok "$name" "sysheavy (kernel frames)" "$sys" "$sys_cpu" 499; then
		:
	elif [ "$kframes" -lt 20 ]; then
		fail "$name" "only $kframes named kernel frames to compare"
	elif report_ok "$name" "$T/both" "$T/rec.data" --folded --symfs "$D" --kallsyms "$T/kallsyms.shifted" &&
	     report_ok "$name" "$T/both.table" "$T/rec.data" --symfs "$D" --kallsyms "$T/kallsyms.shifted"; then
		# The recorder's own BPF programs (on 6.1, its exec tracker runs in
		# every exec) were unloaded before /proc/kallsyms was copied: the
		# copy cannot name them, so they are compared as unnamed.
		nobpf() {
			awk '{ c = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
				gsub(/bpf_prog_[0-9a-f]+_[A-Za-z0-9_]*_\[k\]/, "[unknown]_[k]", s)
				n[s] += c } END { for (s in n) print s, n[s] }' "$1" | sort
		}
		nobpf "$T/same.k" > "$T/same.k.nobpf"
		nobpf "$T/both" > "$T/both.nobpf"
		if ! cmp -s "$T/same.k.nobpf" "$T/both.nobpf"; then
			fail "$name" "--kallsyms changed names"
			diff "$T/same.k.nobpf" "$T/both.nobpf" | show
		elif ! grep -q "^# kernel symbols: from $T/kallsyms.shifted, relocated by +$SHIFT" "$T/both.table" ||
		     ! grep -q "^# user symbols: from --symfs $D: " "$T/both.table"; then
			fail "$name" "the table does not say where both kinds of names came from"
			grep '^#' "$T/both.table" | show
		else
			pass "$name"
			note "$kframes kernel frames moved by $SHIFT and re-resolved, user frames from DIR: the same names"
		fi
	fi
fi

# ---- refusals
name=integration/symfs_refusals
run_to 60 "$BPFSYM" report "$T/rec.data" --symfs "$T/no-such-dir" > "$T/ref.out" 2> "$T/ref.err"
rc=$?
run_to 60 "$BPFSYM" report "$T/rec.data" --symfs "$T/rec.data" > "$T/ref2.out" 2> "$T/ref2.err"
rc2=$?
if [ $rc -ne 1 ] || [ -s "$T/ref.out" ] || [ "$(nlines "$T/ref.err")" -ne 1 ] ||
   ! grep -q -- "--symfs '$T/no-such-dir': No such file or directory" "$T/ref.err"; then
	fail "$name" "a missing DIR: status $rc (want 1), stderr: $(head -3 "$T/ref.err")"
elif [ $rc2 -ne 1 ] || [ -s "$T/ref2.out" ] || ! grep -q "Not a directory" "$T/ref2.err"; then
	fail "$name" "a file as DIR: status $rc2 (want 1), stderr: $(head -3 "$T/ref2.err")"
else
	pass "$name"
	note "$(cat "$T/ref.err")"
fi

lib_done
