#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --map-anon FILE@PID,START,LEN[,OFFSET] (seed 000): code copied from a file
# into anonymous memory is named with that file's symbols.
#
#   map_anon_so      the text segment of a shared object copied by a custom
#                    loader (anon_loader): its samples name hint_hot_a and
#                    hint_hot_b, in their 2:1 proportion
#   map_anon_obj     the .text section of a relocatable .o copied the same
#                    way (symbols by section offset)
#   map_anon_none    the same without a hint: the samples stay anonymous
#                    ([anon+0x..]), never some other function's name
#   map_anon_fork    a hinted process forks, its child runs the code, the
#                    parent exits: both are named (the hint follows the
#                    child and outlives the parent)
#   map_anon_cli     malformed hints, a missing FILE, a PID not running:
#                    one line, exit status 2
. "$(dirname "$0")/lib.sh"
lib_init integration/map_anon_so integration/map_anon_obj integration/map_anon_none \
	integration/map_anon_fork integration/map_anon_cli

# ---- fixtures
need_fixture anon_loader anon_loader
need_built tests/fixtures/hintlib.c "$T/hintlib.so.build.log" cc -O1 -fPIC -shared -o "$T/hintlib.so" "$FIXTURES/hintlib.c"
need_built tests/fixtures/hintlib.c "$T/hintlib.o.build.log" cc -O1 -fPIC -c -o "$T/hintlib.o" "$FIXTURES/hintlib.c"
case $(uname -m) in x86_64) ;; *) skip_all "hintlib's copies are checked on x86-64 only" ;; esac

# sym_value FILE NAME: st_value of NAME in FILE's symbol table, in hex.
sym_value() {
	nm "$1" | awk -v n="$2" '$3 == n { print $1; exit }'
}

# The .so: its executable PT_LOAD, copied whole.  A function lies at
# vaddr - p_vaddr from the segment's start.
set -- $(readelf -lW "$T/hintlib.so" | awk '$1 == "LOAD" && / E / { print $2, $3, $5; exit }')
SO_OFF=$1 SO_VADDR=$2 SO_LEN=$3
SO_A=$(printf '0x%x' $((0x$(sym_value "$T/hintlib.so" hint_hot_a) - SO_VADDR)))
SO_B=$(printf '0x%x' $((0x$(sym_value "$T/hintlib.so" hint_hot_b) - SO_VADDR)))
# The .o: its .text section; a function lies at st_value from its start.
set -- $(readelf -SW "$T/hintlib.o" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".text" { print $4, $5; exit }')
O_OFF=0x$1 O_LEN=0x$2
O_A=0x$(sym_value "$T/hintlib.o" hint_hot_a)
O_B=0x$(sym_value "$T/hintlib.o" hint_hot_b)
note "hintlib.so: text at file offset $SO_OFF, $SO_LEN bytes, a +$SO_A b +$SO_B; hintlib.o: .text at $O_OFF, $O_LEN bytes, a +$O_A b +$O_B"

# start_loader FILE OFF LEN A B [fork]: start anon_loader (for 600 s of
# CPU time at most: stopped by the test); sets LPID and LSTART once it has
# copied the code.
start_loader() {
	rm -f "$T/ready" "$T/ready.go"
	bg_start "$T/anon_loader" "$1" "$2" "$3" 600 "$4" "$5" "$T/ready" ${6:-}
	LPID=$BG_PID
	if ! wait_until 10 exists "$T/ready"; then
		LSTART=
		return 1
	fi
	LSTART=0x$(awk '{ print $1 }' "$T/ready")
}

# leaf_stats FOLDED: "TOTAL A B ANON" over the user leaves of anon_loader.
leaf_stats() {
	awk '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != "anon_loader")
			next
		leaf = ""
		for (i = 2; i <= k; i++)
			if (f[i] !~ /_\[k\]$/)
				leaf = f[i]
		if (leaf == "")
			next
		t += n
		if (leaf == "hint_hot_a") a += n
		else if (leaf == "hint_hot_b") b += n
		else if (leaf ~ /^\[anon\+0x[0-9a-f]+\]$/) an += n
	}
	END { print t + 0, a + 0, b + 0, an + 0 }' "$1"
}

# check_named NAME FOLDED CPU_MS: at least half the user samples CPU_MS of
# CPU time gives at 199 Hz, at least 90% of the user leaves are the two
# functions, hint_hot_a about twice hint_hot_b (it runs two calls in three).
check_named() {
	cn_cpu=$3
	set -- "$1" "$2" $(leaf_stats "$2")
	note "$1: $3 user samples: hint_hot_a $4, hint_hot_b $5, [anon] $6; $cn_cpu ms of CPU time (~$(samples_for "$cn_cpu" 199) samples)"
	if ! cpu_enough "$1" anon_loader "$cn_cpu" 600 || ! samples_ok "$1" "anon_loader (user samples)" "$3" "$cn_cpu" 199; then
		:
	elif [ $((100 * ($4 + $5))) -lt $((90 * $3)) ]; then
		fail "$1" "only $(pct $(($4 + $5)) $3)% of anon_loader's samples are named hint_hot_a/hint_hot_b"
		uleaves "$2" anon_loader
	elif [ $((100 * $4)) -lt $((45 * ($4 + $5))) ] || [ $((100 * $4)) -gt $((85 * ($4 + $5))) ]; then
		fail "$1" "hint_hot_a has $(pct $4 $(($4 + $5)))% of the named samples, ~67% expected"
	else
		pass "$1"
	fi
}

# ---- 1, 2. a .so and a .o copied into anonymous memory
for kind in so obj; do
	name=integration/map_anon_$kind
	if [ $kind = so ]; then
		set -- "$T/hintlib.so" "$SO_OFF" "$SO_LEN" "$SO_A" "$SO_B"
	else
		set -- "$T/hintlib.o" "$O_OFF" "$O_LEN" "$O_A" "$O_B"
	fi
	file=$1 off=$2 len=$3
	if ! start_loader "$@"; then
		fail "$name" "anon_loader did not start"
		show "$T/ready.err"
		stop "$LPID"
		continue
	fi
	# Until it had 0.75 s of CPU time.
	if ! cpu_record "$T/$kind.data" 750 "$LPID" -p "$LPID" --map-anon "$file@$LPID,$LSTART,$len,$off"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/$kind.data.err"
		stop "$LPID"
		continue
	fi
	stop "$LPID"
	record_ok "$name" "$T/$kind.data" "$T/$kind.data.err" $REC_RC &&
		folded "$name" "$T/$kind.data" "$T/$kind.folded" &&
		check_named "$name" "$T/$kind.folded" "$REC_CPU"
done

# ---- 3. no hint: anonymous, and never another function's name
name=integration/map_anon_none
if start_loader "$T/hintlib.so" "$SO_OFF" "$SO_LEN" "$SO_A" "$SO_B"; then
	if ! cpu_record "$T/none.data" 750 "$LPID" -p "$LPID"; then
		REC_RC=1
		show "$T/none.data.err"
	fi
	stop "$LPID"
	if record_ok "$name" "$T/none.data" "$T/none.data.err" $REC_RC &&
	   folded "$name" "$T/none.data" "$T/none.folded"; then
		set -- $(leaf_stats "$T/none.folded")
		note "$name: $1 user samples: hint_hot_a $2, hint_hot_b $3, [anon] $4; $REC_CPU ms of CPU time (~$(samples_for "$REC_CPU" 199) samples)"
		if ! cpu_enough "$name" anon_loader "$REC_CPU" 600 || ! samples_ok "$name" "anon_loader (user samples)" "$1" "$REC_CPU" 199; then
			:
		elif [ $(($2 + $3)) -ne 0 ]; then
			fail "$name" "without a hint, $(($2 + $3)) samples were named hint_hot_*"
		elif [ $((100 * $4)) -lt $((90 * $1)) ]; then
			fail "$name" "only $4 of $1 samples are [anon+0x..]"
			uleaves "$T/none.folded" anon_loader
		else
			pass "$name"
		fi
	fi
else
	fail "$name" "anon_loader did not start"
	stop "$LPID"
fi

# ---- 4. the hinted process forks; the parent exits first
name=integration/map_anon_fork
if start_loader "$T/hintlib.o" "$O_OFF" "$O_LEN" "$O_A" "$O_B" fork; then
	parent=$LPID
	if bg_record "$T/fork.data" -a --map-anon "$T/hintlib.o@$parent,$LSTART,$O_LEN,$O_OFF"; then
		touch "$T/ready.go"
		wait_until 5 sh -c "[ -n \"\$(cat /proc/$parent/task/$parent/children 2>/dev/null)\" ]"
		child=$(awk '{ print $1 }' "/proc/$parent/task/$parent/children" 2>/dev/null)
		# Both while the parent lives, then the child alone: half a second
		# of CPU time each.  Both started their burn during the recording.
		cpu_parent=0 cpu_child=0
		if [ -n "$child" ]; then
			CPU_WAIT_EACH=1
			cpu_wait 500 "$CPU_WAIT_MAX" "$parent" "$child"
			CPU_WAIT_EACH=0
			cpu_parent=$(cpu_ms "$parent")
		fi
		stop "$parent"
		if [ -n "$child" ]; then
			cpu_wait 500 "$CPU_WAIT_MAX" "$child"
			cpu_child=$(cpu_ms "$child")
			kill -KILL "$child" 2>/dev/null
		fi
		end_record
		note "$name: parent $parent, child ${child:-?}; record status $REC_RC"
		if [ -z "$child" ]; then
			fail "$name" "the loader did not fork"
		elif record_ok "$name" "$T/fork.data" "$T/fork.data.err" "$REC_RC"; then
			ok=1
			for who in parent child; do
				eval p=\$$who
				eval cpu=\$cpu_$who
				if ! run_to 60 "$BPFSYM" report "$T/fork.data" --pid "$p" --folded > "$T/fork.$who" 2> "$T/fork.$who.err"; then
					fail "$name" "report --pid $p failed"
					show "$T/fork.$who.err"
					ok=0
					break
				fi
				set -- $(leaf_stats "$T/fork.$who")
				note "$name: $who: $1 user samples: hint_hot_a $2, hint_hot_b $3, [anon] $4; $cpu ms of CPU time (~$(samples_for "$cpu" 199) samples)"
				if ! cpu_enough "$name" "the $who" "$cpu" 400 || ! samples_ok "$name" "the $who (user samples)" "$1" "$cpu" 199; then
					uleaves "$T/fork.$who" anon_loader
					ok=0
					break
				elif [ $((100 * ($2 + $3))) -lt $((90 * $1)) ]; then
					fail "$name" "$who: $(($2 + $3)) of $1 samples named hint_hot_a/hint_hot_b"
					uleaves "$T/fork.$who" anon_loader
					ok=0
					break
				fi
			done
			[ $ok -eq 1 ] && pass "$name"
		fi
	else
		fail "$name" "the recorder did not start"
		show "$T/fork.data.err"
		stop "$parent"
	fi
else
	fail "$name" "anon_loader did not start"
	stop "$LPID"
fi

# ---- 5. what the command line refuses
name=integration/map_anon_cli
bad=0
sleep 30 &
sp=$!
LIB_PIDS="$LIB_PIDS $sp"
for arg in "$T/hintlib.so" "$T/hintlib.so@$sp" "$T/hintlib.so@$sp,0x1000" "@$sp,0x1000,16" \
	   "$T/hintlib.so@$sp,0x1000,0" "$T/hintlib.so@$sp,zz,16" "$T/hintlib.so@0,0x1000,16" \
	   "$T/hintlib.so@$sp,0xffffffffffffffff,16" "$T/missing.so@$sp,0x1000,16" \
	   "$T@$sp,0x1000,16" "$T/hintlib.so@4194999,0x1000,16"; do
	run_to 30 "$BPFSYM" record -q -d 0.1 -p "$sp" --map-anon "$arg" -o "$T/cli.data" > "$T/cli.out" 2> "$T/cli.err"
	rc=$?
	lines=$(nlines "$T/cli.err")
	if [ $rc -ne 2 ] || [ "$lines" -ne 1 ]; then
		fail "$name" "--map-anon '$arg': status $rc and $lines lines on stderr, expected 2 and one line"
		show "$T/cli.err"
		bad=1
		break
	fi
done
run_to 30 "$BPFSYM" record -q -d 0.1 --map-anon "$T/hintlib.so@$sp,0x1000,16" -o "$T/cli.data" -- true 2> "$T/cli.err"
rc=$?
if [ $bad -eq 0 ] && [ $rc -ne 2 ]; then
	fail "$name" "--map-anon with -- COMMAND: status $rc, expected 2"
	bad=1
fi
stop "$sp"
[ $bad -eq 0 ] && pass "$name"

lib_done
