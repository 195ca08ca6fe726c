#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --pprof` read by the real pprof (`go tool pprof`, Debian's
# golang-go, offline).
#
# The fixture hot.c burns CPU in hot_a/hot_b/hot_c in 50/30/20 proportions
# on two threads, called main (or worker) -> run_workload -> dispatch ->
# hot_x.  It is recorded with `bpfsym record -- ...`, written as pprof, and:
#  - pprof_top: `pprof -top` lists hot_a, hot_b, hot_c first, each within
#    10 points of its share, and with exactly the sample counts of bpfsym's
#    own folded output (same recording, same leaves);
#  - pprof_traces: `pprof -traces` shows main;run_workload;dispatch;hot_a
#    (leaf first in pprof's print) for at least 90% of hot_a's samples, as
#    test_oracle_perf.sh asks of the folded stacks;
#  - pprof_labels: `pprof -tags` has the fixture's pid, comm and its two
#    threads, and its cgroup v2 path when the machine has cgroup v2;
#  - pprof_total: pprof's total is the recording's sample count;
#  - pprof_filter: `--pid` keeps only that process (`--comm` of nobody:
#    an empty profile pprof still opens).
# The pprof file's size per sample is printed beside bpfsym.data's.
#
# The shares need 400 samples (10 points are then 4 standard errors of a
# 50% share).  hot writes the CPU time it had, the oracle: at 397 Hz bpfsym
# should have about 397 samples per CPU second.  When the machine is so
# busy that hot had less than CPU_NEED seconds, it is recorded again for
# twice as long (up to 32 s), never skipped; then bpfsym with fewer than
# 400 samples fails.
. "$(dirname "$0")/lib.sh"
lib_init integration/pprof_top integration/pprof_traces integration/pprof_labels \
	integration/pprof_total integration/pprof_filter

if ! command -v go >/dev/null 2>&1; then
	skip_all "go is not installed (golang-go: go tool pprof is the oracle)"
fi
# pprof offline and self-contained: no toolchain download, no module proxy,
# caches and pprof's state inside $T, no binary search path.
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off \
	GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin"
pprof() {
	run_to 60 go tool pprof "$@" 2> "$T/pprof.err"
}
if ! go tool pprof -h > "$T/pprof.help" 2>&1; then
	show "$T/pprof.help"
	skip_all "'go tool pprof' does not run"
fi
need_fixture hot hot

CPU_NEED=${PPROF_CPU_NEED:-2}
# The shell writes its pid, then becomes the fixture: the recorded pid.
hot_secs=4	# not "secs": run_to sets that
while :; do
	rm -f "$T/hot.cpu" "$T/bpfsym.data"	# a second try records again, and record replaces nothing unasked
	run_to $((hot_secs + 60)) "$BPFSYM" record -F 397 -q -o "$T/bpfsym.data" -- \
		sh -c "echo \$\$ > '$T/hot.pid'; exec '$T/hot' $hot_secs 2 '$T/hot.cpu'" 2> "$T/record.err"
	rc=$?
	if ! record_ok integration/pprof_top "$T/bpfsym.data" "$T/record.err" $rc; then
		fail_all "no recording"
	fi
	cpu=$(cat "$T/hot.cpu" 2>/dev/null)
	note "bpfsym record: $(cat "$T/record.err") (hot for $hot_secs s on 2 threads: ${cpu:-no} CPU seconds)"
	if [ -z "$cpu" ]; then
		fail_all "hot did not write its CPU time to $T/hot.cpu"
	fi
	if fcmp "$cpu" ge $CPU_NEED || [ $hot_secs -ge 32 ]; then
		break
	fi
	hot_secs=$((hot_secs * 2))
done
hot=$(cat "$T/hot.pid")
if ! folded integration/pprof_top "$T/bpfsym.data" "$T/folded"; then
	fail_all "no folded stacks to compare with"
fi

run_to 60 "$BPFSYM" report "$T/bpfsym.data" --pprof "$T/out.pb.gz" 2> "$T/report.err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$T/out.pb.gz" ]; then
	show "$T/report.err"
	fail_all "bpfsym report --pprof exited with status $rc"
fi
nsamples=$(awk '{ n += $NF } END { print n + 0 }' "$T/folded")
psize=$(wc -c < "$T/out.pb.gz")
dsize=$(wc -c < "$T/bpfsym.data")
note "$nsamples samples: pprof $psize bytes ($(awk -v a="$psize" -v b="$nsamples" 'BEGIN { printf "%.2f", b ? a / b : 0 }') B/sample), bpfsym.data $dsize bytes ($(awk -v a="$dsize" -v b="$nsamples" 'BEGIN { printf "%.2f", b ? a / b : 0 }') B/sample)"

# ---- top: flat sample counts per function, in pprof's order.
name=integration/pprof_top
if ! pprof -top -nodecount=1000 -sample_index=samples "$T/out.pb.gz" > "$T/top"; then
	fail "$name" "go tool pprof -top failed: $(head -3 "$T/pprof.err")"
else
	# "  FLAT FLAT% SUM% CUM CUM%  NAME": rows start at the column header.
	awk 'rows && NF >= 6 { name = $6; for (i = 7; i <= NF; i++) name = name " " $i; print name, $1 }
	     $1 == "flat" && $2 == "flat%" { rows = 1 }' "$T/top" > "$T/top.rows"
	total=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$T/top")
	first3=$(awk 'NR <= 3 { printf "%s%s", (NR > 1) ? " " : "", $1 }' "$T/top.rows")
	folded_leaves "$T/folded" > "$T/leaves"
	why=
	[ "$first3" = "hot_a hot_b hot_c" ] || why="the first three rows are '$first3'"
	for f in hot_a:50 hot_b:30 hot_c:20; do
		fn=${f%:*}
		want=${f#*:}
		got=$(awk -v f="$fn" '$1 == f { print $2 }' "$T/top.rows")
		mine=$(leaf_count "$T/leaves" "$fn")
		share=$(pct "${got:-0}" "${total:-0}")
		note "$fn: pprof $got of $total samples ($share%, expected $want%), folded $mine"
		if [ "${got:-x}" != "$mine" ]; then
			why="${why:+$why; }$fn: pprof flat $got, bpfsym --folded $mine"
		elif fcmp "$share" lt $((want - 10)) || fcmp "$share" gt $((want + 10)); then
			why="${why:+$why; }$fn: $share% (expected $want +- 10)"
		fi
	done
	# 10 points are 4 standard errors of a 50% share at 400 samples; about
	# 3000 come when the CPUs are free.
	if fcmp "$cpu" lt $CPU_NEED; then
		why="hot had only $cpu CPU seconds in $hot_secs s (wanted $CPU_NEED): it hardly ran${why:+; $why}"
	elif [ "${total:-0}" -lt 400 ]; then
		why="only ${total:-0} samples for hot's $cpu CPU seconds (~$(awk -v c="$cpu" 'BEGIN { printf "%d", c * 397 }') expected at 397 Hz; 400 needed)${why:+; $why}"
	fi
	if [ -n "$why" ]; then
		fail "$name" "$why"
		show "$T/top"
	else
		pass "$name"
	fi
fi

# ---- traces: each block's labels, then "VALUE LEAF", then its callers.
name=integration/pprof_traces
if ! pprof -traces -sample_index=samples "$T/out.pb.gz" > "$T/traces"; then
	fail "$name" "go tool pprof -traces failed: $(head -3 "$T/pprof.err")"
else
	awk '
	function flush() {
		if (chain != "")
			print n, chain
		chain = ""
	}
	/^-+\+-+$/ { flush(); inb = 1; next }
	!inb { next }
	/^ +[a-z_]+: / && chain == "" { next }		# a label
	chain == "" && /^ +[0-9]+ +[^ ]/ { n = $1; sub(/^ +[0-9]+ +/, ""); chain = $0; next }
	chain != "" { sub(/^ +/, ""); chain = chain ";" $0 }
	END { flush() }' "$T/traces" > "$T/chains"
	a=$(awk '$2 ~ /^hot_a(;|$)/ { c += $1 } END { print c + 0 }' "$T/chains")
	mainc=$(awk '$2 ~ /^hot_a;dispatch;run_workload;main(;|$)/ { c += $1 } END { print c + 0 }' "$T/chains")
	workc=$(awk '$2 ~ /^hot_a;dispatch;run_workload;worker(;|$)/ { c += $1 } END { print c + 0 }' "$T/chains")
	note "hot_a samples in -traces: $a; via main: $mainc; via worker: $workc"
	if [ "$a" -lt 200 ]; then
		fail "$name" "only $a samples end in hot_a in pprof -traces"
		show "$T/traces"
	elif [ $((100 * (mainc + workc))) -lt $((90 * a)) ] || [ $((100 * mainc)) -lt $((25 * a)) ]; then
		fail "$name" "hot_a's callers: $mainc via main, $workc via worker, of $a"
		sort -k1,1nr "$T/chains" | head -10 | show
	else
		pass "$name"
	fi
fi

# ---- labels: -tags prints "KEY: Total N" and then "COUNT (PCT%): VALUE" rows.
name=integration/pprof_labels
if ! pprof -tags -sample_index=samples "$T/out.pb.gz" > "$T/tags"; then
	fail "$name" "go tool pprof -tags failed: $(head -3 "$T/pprof.err")"
else
	awk '/^ *[a-z_]+: Total / { key = $1; sub(/:$/, "", key); next }
	     key != "" && /%\): / { v = $0; sub(/.*%\): /, "", v); print key, v, $1 }' "$T/tags" > "$T/tag.rows"
	share() {	# share KEY VALUE: that label value's percentage of the samples
		pct "$(awk -v k="$1" -v v="$2" '$1 == k && $2 == v { print $3 }' "$T/tag.rows")" "$nsamples"
	}
	why=
	fcmp "$(share pid "$hot")" ge 90 || why="pid $hot has $(share pid "$hot")% of the samples"
	fcmp "$(share comm hot)" ge 90 || why="${why:+$why; }comm hot has $(share comm hot)%"
	ntid=$(awk -v p="$hot" '$1 == "tid" && $3 >= 0.2 * '"$nsamples"' { n++ } END { print n + 0 }' "$T/tag.rows")
	[ "$ntid" -eq 2 ] || why="${why:+$why; }$ntid threads with 20% or more of the samples (expected 2)"
	# The cgroup label is the cgroup's path in the v2 hierarchy, as the
	# fixture's /proc/PID/cgroup says (the recording names it: a CGROUP record).
	cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
	mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	if [ -n "$cg" ] && [ -n "$mnt" ] && id=$(stat -c %i "$mnt$cg" 2>/dev/null); then
		note "cgroup v2: '$cg' under $mnt, id $id"
		fcmp "$(share cgroup "$cg")" ge 90 || why="${why:+$why; }cgroup $cg has $(share cgroup "$cg")%"
	else
		note "no cgroup v2 hierarchy: the cgroup label is not checked"
	fi
	if [ -n "$why" ]; then
		fail "$name" "$why"
		show "$T/tags"
	else
		pass "$name"
	fi
fi

# ---- total
name=integration/pprof_total
if [ "${total:-}" = "$nsamples" ] && [ "$nsamples" -gt 0 ]; then
	pass "$name"
else
	fail "$name" "pprof's total is '${total:-}', the recording has $nsamples samples"
fi

# ---- filters
name=integration/pprof_filter
why=
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --pid "$hot" --pprof "$T/pid.pb.gz" 2> "$T/pid.err" ||
	why="--pid: status $?: $(head -1 "$T/pid.err")"
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --pid "$hot" --folded > "$T/pid.folded" 2>&1
want=$(awk '{ n += $NF } END { print n + 0 }' "$T/pid.folded")
if [ -z "$why" ] && pprof -tags -sample_index=samples "$T/pid.pb.gz" > "$T/pid.tags"; then
	pids=$(awk '/^ *[a-z_]+: Total / { key = $1 } key == "pid:" && /%\): / { printf "%s ", $NF }' "$T/pid.tags")
	got=$(sed -n 's/^ *pid: Total \([0-9]*\).*/\1/p' "$T/pid.tags")
	[ "$pids" = "$hot " ] || why="pids in the filtered profile: '$pids' (expected $hot)"
	[ "$got" = "$want" ] || why="${why:+$why; }$got samples, --folded --pid gives $want"
elif [ -z "$why" ]; then
	why="pprof -tags failed on the --pid profile: $(head -3 "$T/pprof.err")"
fi
run_to 60 "$BPFSYM" report "$T/bpfsym.data" --comm no-such-comm --pprof "$T/none.pb.gz" 2> "$T/none.err" ||
	why="${why:+$why; }--comm: status $?"
if pprof -raw "$T/none.pb.gz" > "$T/none.raw"; then
	grep -q '^Samples:' "$T/none.raw" || why="${why:+$why; }the empty profile has no Samples section"
	[ "$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ /' "$T/none.raw" | wc -l)" -eq 0 ] ||
		why="${why:+$why; }--comm of nobody still has samples"
else
	why="${why:+$why; }pprof cannot open the empty profile: $(head -1 "$T/pprof.err")"
fi
if [ -n "$why" ]; then
	fail "$name" "$why"
else
	pass "$name"
fi

lib_done
