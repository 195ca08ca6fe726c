#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# JIT code named by the JIT itself: perf maps and jitdump files.
#
#   jit_perfmap        a test JIT writes /tmp/perf-PID.map for code it copied
#                      into anonymous memory: its samples name jit_hot_one
#                      and jit_hot_two, about 2:1
#   jit_perfmap_owner  the same map owned by another user than the process's
#                      (anyone can write /tmp): not read, the samples stay
#                      anonymous
#   jit_jitdump        a test JIT writes jit-PID.dump records and maps the
#                      file, as perf's JIT agents do: jd_hot_one, jd_hot_two
#   jit_node           node --perf-basic-prof: JavaScript functions by name
. "$(dirname "$0")/lib.sh"
lib_init integration/jit_perfmap integration/jit_perfmap_owner integration/jit_jitdump integration/jit_node

case $(uname -m) in x86_64) ;; *) skip_all "the test JITs write x86-64 code" ;; esac
for f in jit_perfmap jit_jitdump; do
	need_fixture $f $f
done

# The perf maps the JITs write into /tmp, removed whatever happens.
JIT_PIDS=
jit_cleanup() {
	for q in $JIT_PIDS; do
		rm -f "/tmp/perf-$q.map"
	done
}
LIB_CLEANUP=jit_cleanup

# start_jit NAME ARGS...: start a fixture that prints "ready" once its
# names are published; LPID is its pid.
start_jit() {
	f=$1
	shift
	rm -f "$T/$f.out"
	bg_start "$T/$f" "$@" > "$T/$f.out"
	LPID=$BG_PID
	JIT_PIDS="$JIT_PIDS $LPID"
	wait_until 10 grep -q ready "$T/$f.out"
}

# leaf_share FOLDED COMM A B [re]: "TOTAL A B ANON KERNEL ALL" over the
# user leaves of COMM: A and B are leaf names, or with "re" patterns;
# KERNEL counts the samples with kernel frames above the user leaf, ALL
# every sample of COMM, those without a user frame too.
leaf_share() {
	awk -v comm="$2" -v fa="$3" -v fb="$4" -v re="${5:-}" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != comm)
			next
		all += n
		leaf = ""
		kern = 0
		for (i = 2; i <= k; i++)
			if (f[i] !~ /_\[k\]$/)
				leaf = f[i]
			else if (leaf != "")
				kern = 1
		if (leaf == "")
			next
		t += n
		if (kern) kt += n
		if (re ? leaf ~ fa : leaf == fa) a += n
		else if (re ? leaf ~ fb : leaf == fb) b += n
		else if (leaf ~ /^\[anon\+0x[0-9a-f]+\]$/) an += n
	}
	END { print t + 0, a + 0, b + 0, an + 0, kt + 0, all + 0 }' "$1"
}

# kleaves FOLDED COMM: the top kernel leaves of COMM's samples.
kleaves() {
	awk -v comm="$2" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] == comm && f[k] ~ /_\[k\]$/)
			c[f[k]] += n
	}
	END { for (l in c) print l, c[l] }' "$1" | sort -k2,2nr | head -5 | show
}

# check_two NAME FOLDED COMM A B: >= 90% of COMM's user leaves are A or B,
# A ~ 2/3; at least half the user samples $RP_CPU ms of CPU time give at
# 199 Hz.
check_two() {
	set -- "$@" $(leaf_share "$2" "$3" "$4" "$5")
	note "$1: $6 user samples: $4 $7, $5 $8, [anon] $9; $RP_CPU ms of CPU time (~$(samples_for "$RP_CPU" 199) samples)"
	if ! cpu_enough "$1" "$3" "$RP_CPU" 500 || ! samples_ok "$1" "$3 (user samples)" "$6" "$RP_CPU" 199; then
		uleaves "$2" "$3"
	elif [ $((100 * ($7 + $8))) -lt $((90 * $6)) ]; then
		fail "$1" "only $(pct $(($7 + $8)) $6)% of $3's samples are named $4/$5"
		uleaves "$2" "$3"
	elif [ $((100 * $7)) -lt $((45 * ($7 + $8))) ] || [ $((100 * $7)) -gt $((85 * ($7 + $8))) ]; then
		fail "$1" "$4 has $(pct $7 $(($7 + $8)))% of the named samples, ~67% expected"
	else
		pass "$1"
	fi
}

# record_pid NAME PID OUT CPU_MS: record PID into OUT.data until it had
# CPU_MS ms of CPU time (in $RP_CPU), fold it into OUT.folded.  False
# (after a FAIL) when either step failed.
record_pid() {
	RP_CPU=0
	if ! cpu_record "$3.data" "$4" "$2" -p "$2"; then
		fail "$1" "the recording did not start (no output file within 30 s)"
		show "$3.data.err"
		return 1
	fi
	RP_CPU=$REC_CPU
	record_ok "$1" "$3.data" "$3.data.err" $REC_RC && folded "$1" "$3.data" "$3.folded"
}

# ---- perf map
name=integration/jit_perfmap
# The fixtures run for 600 s of CPU time at most: stopped by the test.
if start_jit jit_perfmap 600; then
	p=$LPID
	record_pid "$name" "$p" "$T/pm" 1000 && check_two "$name" "$T/pm.folded" jit_perfmap jit_hot_one jit_hot_two
	# Now the map belongs to someone else: a planted file must not be read.
	name=integration/jit_perfmap_owner
	if ! id nobody > /dev/null 2>&1; then
		skip "$name" "no user 'nobody' to give the perf map to"
	elif ! chown nobody "/tmp/perf-$p.map" 2> "$T/chown.err"; then
		fail "$name" "cannot chown the perf map to nobody: $(head -1 "$T/chown.err")"
	else
		if record_pid "$name" "$p" "$T/pmo" 750; then
			set -- $(leaf_share "$T/pmo.folded" jit_perfmap jit_hot_one jit_hot_two)
			note "$name: $1 user samples: named $(($2 + $3)), [anon] $4; $RP_CPU ms of CPU time (~$(samples_for "$RP_CPU" 199) samples)"
			if ! cpu_enough "$name" jit_perfmap "$RP_CPU" 500 || ! samples_ok "$name" "jit_perfmap (user samples)" "$1" "$RP_CPU" 199; then
				:
			elif [ $(($2 + $3)) -ne 0 ]; then
				fail "$name" "$(($2 + $3)) samples named from a perf map owned by another user"
			elif [ $((100 * $4)) -lt $((90 * $1)) ]; then
				fail "$name" "only $4 of $1 samples are [anon+0x..]"
				uleaves "$T/pmo.folded" jit_perfmap
			else
				pass "$name"
			fi
		fi
	fi
	stop "$p"
	rm -f "/tmp/perf-$p.map"
else
	fail "$name" "jit_perfmap did not start"
	show "$T/jit_perfmap.out"
	fail integration/jit_perfmap_owner "jit_perfmap did not start"
	stop "$LPID"
fi

# ---- jitdump
name=integration/jit_jitdump
mkdir -p "$T/jd"
if start_jit jit_jitdump 600 "$T/jd"; then
	p=$LPID
	# The recording must see the file mapped: -a started before it would;
	# here the start-up snapshot finds the mapping.
	record_pid "$name" "$p" "$T/jdr" 1000 && check_two "$name" "$T/jdr.folded" jit_jitdump jd_hot_one jd_hot_two
	stop "$p"
else
	fail "$name" "jit_jitdump did not start"
	show "$T/jit_jitdump.out"
	stop "$LPID"
fi

# ---- node --perf-basic-prof
name=integration/jit_node
if ! command -v node > /dev/null 2>&1; then
	skip "$name" "node is not installed"
else
	cat > "$T/hot.js" <<'EOF'
function hotAlpha(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) | 0; return x; }
function hotBeta(n) { let x = 1; for (let i = 0; i < n; i++) x = (x ^ (i << 1)) | 0; return x; }
// Until it had that many seconds of CPU time (at most 30 s + 20 times as
// long of wall time), however busy the machine.
const secs = Number(process.argv[2] || 3);
const cpuEnd = secs * 1e6, wallEnd = Date.now() + 1000 * (30 + 20 * secs);
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
let s = 0;
console.log("ready");
while (cpu() < cpuEnd && Date.now() < wallEnd) { s += hotAlpha(2e6); s += hotAlpha(2e6); s += hotBeta(2e6); }
console.log(s);
EOF
	rm -f "$T/node.out"
	# node's V8 log goes where it is told, not into the working directory.
	bg_start node --perf-basic-prof --logfile="$T/node-v8.log" --no-logfile-per-isolate \
		"$T/hot.js" 600 > "$T/node.out"
	p=$BG_PID
	JIT_PIDS="$JIT_PIDS $p"
	# Let it warm up: the optimized code and its perf map lines come first
	# (half a second of its CPU time).
	if wait_until 30 grep -q ready "$T/node.out" && { cpu_wait 500 "$CPU_WAIT_MAX" "$p"; alive "$p"; } &&
	   record_pid "$name" "$p" "$T/node" 1000; then
		# By the user leaf: a sample taken while the kernel served an
		# interrupt or fault from hotAlpha is hotAlpha's (under TCG the
		# kernel's share of a busy loop is large and varies by run).
		set -- $(leaf_share "$T/node.folded" node '^JS:[*^~]?hotAlpha( |$)' '^JS:[*^~]?hotBeta( |$)' re)
		tot=$6 a=$2 b=$3 kern=$5
		note "$name: $tot samples of node; user leaf hotAlpha $a, hotBeta $b; with kernel frames on top $kern; $RP_CPU ms of CPU time (~$(samples_for "$RP_CPU" 199) samples)"
		[ "$kern" -gt 0 ] && kleaves "$T/node.folded" node
		if ! cpu_enough "$name" node "$RP_CPU" 500 || ! samples_ok "$name" node "$tot" "$RP_CPU" 199; then
			:
		elif [ $((100 * (a + b))) -lt $((70 * tot)) ]; then
			fail "$name" "only $(pct $((a + b)) "$tot")% of node's samples have hotAlpha/hotBeta as user leaf"
			uleaves "$T/node.folded" node
		elif [ "$a" -le "$b" ]; then
			fail "$name" "hotAlpha ($a) should have about twice hotBeta's samples ($b)"
		else
			pass "$name"
		fi
	else
		fail "$name" "node did not run or the recording failed"
		show "$T/node.out"
	fi
	stop "$p"
	rm -f "/tmp/perf-$p.map"
fi

lib_done
