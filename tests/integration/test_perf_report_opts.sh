#!/bin/sh
# bpfsym report's perf options mean what perf's do (issue 26).  Two
# fixtures (hot, two threads, and burn: two comms) are recorded once by
# bpfsym and, at the same time, by perf record -g; each option is checked
# against perf's report of perf's own data where perf has it, or against an
# oracle computed from bpfsym's folded stacks.
#
#   pro_sort_comm     -s comm: one row per comm, shares within 5 points of perf -s comm
#   pro_comms         -c/--comms X keeps only X (bpfsym's perf-script comms)
#   pro_tid           --tid T keeps only thread T, with T's sample count
#   pro_percent_limit --percent-limit: the rows are exactly the full table's
#                     rows at or above the limit; perf's symbols well above it are there
#   pro_children      --children column of hot_a and run_workload = share of
#                     folded stacks containing them; within 5 points of perf --children
#   pro_dup_input     -i F F: the header's sample count is F's
#   pro_stdin         report - < F prints what report -i F prints
#   pro_pprof_stdout  --pprof - parses and equals --pprof FILE (go tool pprof -raw)
#   pro_help          help report and report --help list report's options, not record's
. "$(dirname "$0")/lib.sh"
lib_init integration/pro_sort_comm integration/pro_comms integration/pro_tid \
	integration/pro_percent_limit integration/pro_children integration/pro_dup_input \
	integration/pro_stdin integration/pro_pprof_stdout integration/pro_help

# ---- help: no recording needed
name=integration/pro_help
"$BPFSYM" help report > "$T/h1" 2>&1
rc1=$?
"$BPFSYM" report --help > "$T/h2" 2>&1
rc2=$?
"$BPFSYM" report --bogus > /dev/null 2> "$T/h3"
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
	fail "$name" "help report exited $rc1, report --help $rc2"
elif ! cmp -s "$T/h1" "$T/h2"; then
	fail "$name" "bpfsym help report and bpfsym report --help differ"
elif ! grep -q -- '--percent-limit' "$T/h1" || ! grep -q -- '--children' "$T/h1" ||
     grep -q -- '--call-graph' "$T/h1"; then
	fail "$name" "help report does not list report's options (or lists record's)"
	show "$T/h1"
elif ! grep -q 'see bpfsym report --help' "$T/h3"; then
	fail "$name" "report's usage error does not point at report's help"
	show "$T/h3"
else
	pass "$name"
fi

if ! command -v perf > /dev/null 2>&1; then
	skip_all "perf is not installed (the oracle)"
fi
need_fixture hot hot
need_fixture burn burn

bg_start "$T/hot" 60 2
hot=$BG_PID
bg_start "$T/burn" 60
burn=$BG_PID
hot_ready() { [ "$(nthreads "$hot")" -ge 2 ]; }
wait_until 5 hot_ready || fail_all "fixture hot did not start its threads"

bg_start perf record -N -e cpu-clock -F 499 -g -p "$hot,$burn" -o "$T/perf.data" 2> "$T/perf.err"
perf=$BG_PID
wait_until 10 file_nonempty "$T/perf.data"
run_to 60 "$BPFSYM" record -p "$hot,$burn" -F 397 -d 6 -o "$T/b.data" -q 2> "$T/rec.err"
rc=$?
kill -INT "$perf" 2>/dev/null
reap "$perf"
stop "$hot"
stop "$burn"
record_ok integration/pro_sort_comm "$T/b.data" "$T/rec.err" $rc || fail_all "no recording"
F=$T/b.data

# perf's rows as "NAME SHARE" (perf report --stdio, no header); $1 the columns.
perf_rows() {
	perf report -i "$T/perf.data" --stdio -q "$@" 2> /dev/null |
		awk 'NF >= 2 && $1 ~ /%$/ { p = $1; sub(/%/, "", p); print $NF, p }'
}

# ---- -s comm
name=integration/pro_sort_comm
"$BPFSYM" report "$F" -s comm --no-children -q > "$T/comm.txt" 2> "$T/comm.err"
rc=$?
perf_rows --no-children -s comm > "$T/pcomm.txt"
rows=$(wc -l < "$T/comm.txt")
bad=$(awk 'NR == FNR { b[$3] = $1 + 0; next } { d = b[$1] - $2; if (d < 0) d = -d; if (d > 5) print $1 ": bpfsym " b[$1] "%, perf " $2 "%" }' \
	"$T/comm.txt" "$T/pcomm.txt")
note "-s comm: $(tr '\n' ' ' < "$T/comm.txt"); perf: $(tr '\n' ' ' < "$T/pcomm.txt")"
if [ $rc -ne 0 ]; then
	fail "$name" "report -s comm exited with status $rc"
	show "$T/comm.err"
elif [ "$rows" -ne 2 ] || [ "$(awk '{ print $3 }' "$T/comm.txt" | sort -u | wc -l)" -ne 2 ]; then
	fail "$name" "-s comm gave $rows rows, not one per comm (hot, burn)"
	show "$T/comm.txt"
elif [ "$(wc -l < "$T/pcomm.txt")" -lt 2 ] || [ -n "$bad" ]; then
	fail "$name" "shares differ from perf's by more than 5 points: $bad"
else
	pass "$name"
fi

# ---- --comms
name=integration/pro_comms
"$BPFSYM" report "$F" -c burn --perf-script > "$T/cs.txt" 2> "$T/cs.err"
"$BPFSYM" report "$F" --comms burn -q --limit 0 > "$T/ct.txt" 2>> "$T/cs.err"
others=$(awk 'NF > 0 && $0 !~ /^\t/ && $1 != "burn"' "$T/cs.txt" | wc -l)
n=$(awk 'NF > 0 && $0 !~ /^\t/' "$T/cs.txt" | wc -l)
tcomms=$(awk '{ print $4 }' "$T/ct.txt" | sort -u | tr '\n' ' ')
if [ "$n" -lt 100 ] || [ "$others" -ne 0 ] || [ "$tcomms" != "burn " ]; then
	fail "$name" "--comms burn: $n samples, $others of another comm; table comms: $tcomms"
	show "$T/cs.err"
else
	pass "$name"
fi

# ---- --tid: a thread of hot, from the samples' own tids
name=integration/pro_tid
"$BPFSYM" report "$F" -c hot --perf-script > "$T/hs.txt" 2>&1
tid=$(awk 'NF > 0 && $0 !~ /^\t/ { split($2, a, "/"); print a[2] }' "$T/hs.txt" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
want=$(awk -v t="$tid" 'NF > 0 && $0 !~ /^\t/ { split($2, a, "/"); if (a[2] == t) n++ } END { print n + 0 }' "$T/hs.txt")
"$BPFSYM" report "$F" --tid "$tid" --perf-script > "$T/ts.txt" 2>&1
got=$(awk 'NF > 0 && $0 !~ /^\t/' "$T/ts.txt" | wc -l)
others=$(awk -v t="$tid" 'NF > 0 && $0 !~ /^\t/ { split($2, a, "/"); if (a[2] != t) n++ } END { print n + 0 }' "$T/ts.txt")
"$BPFSYM" report "$F" --tid "$tid" -s pid -q > "$T/tt.txt" 2>&1
note "--tid $tid: $got samples (want $want), table: $(tr -s ' ' < "$T/tt.txt" | tr '\n' ' ')"
if [ -z "$tid" ] || [ "$want" -lt 100 ] || [ "$got" -ne "$want" ] || [ "$others" -ne 0 ]; then
	fail "$name" "--tid '$tid': $got samples, $others of another thread (want $want)"
elif [ "$(wc -l < "$T/tt.txt")" -ne 1 ] || ! grep -q " $tid:hot" "$T/tt.txt"; then
	fail "$name" "--tid $tid -s pid: not one row $tid:hot"
	show "$T/tt.txt"
else
	pass "$name"
fi

# ---- --percent-limit
name=integration/pro_percent_limit
LIM=5
"$BPFSYM" report "$F" -s sym --no-children -q --limit 0 > "$T/all.txt" 2>&1
"$BPFSYM" report "$F" -s sym --no-children -q --limit 0 --percent-limit $LIM > "$T/lim.txt" 2>&1
want=$(awk -v l=$LIM '$1 + 0 >= l' "$T/all.txt")
perf_rows --no-children -s sym --percent-limit $LIM > "$T/plim.txt"
missing=$(awk 'NR == FNR { b[$NF] = 1; next } $2 >= 10 && !($1 in b) { print $1 }' "$T/lim.txt" "$T/plim.txt" | tr '\n' ' ')
note "--percent-limit $LIM: bpfsym $(awk '{ print $NF, $1 }' "$T/lim.txt" | tr '\n' ' '); perf $(tr '\n' ' ' < "$T/plim.txt")"
if [ "$(cat "$T/lim.txt")" != "$want" ] || [ -z "$want" ]; then
	fail "$name" "the rows are not the full table's rows at or above $LIM%"
	show "$T/lim.txt"
elif [ "$(awk -v l=$LIM '$1 + 0 < l' "$T/all.txt" | wc -l)" -eq 0 ]; then
	fail "$name" "no row below $LIM% to leave out: the check says nothing"
elif [ -n "$missing" ]; then
	fail "$name" "perf's rows of 10% or more missing: $missing"
else
	pass "$name"
fi

# ---- --children: the oracle from the folded stacks
name=integration/pro_children
"$BPFSYM" report "$F" --folded > "$T/folded" 2>&1
"$BPFSYM" report "$F" --children -s sym -q --limit 0 > "$T/ch.txt" 2>&1
perf report -i "$T/perf.data" --stdio -q --children -s sym 2> /dev/null |
	awk 'NF >= 3 && $1 ~ /%$/ && $2 ~ /%$/ { c = $1; sub(/%/, "", c); print $NF, c }' > "$T/pch.txt"
bad=
for fn in hot_a run_workload; do
	oracle=$(awk -v f="$fn" '{ n = $NF; t += n; k = $0; sub(/ [0-9]+$/, "", k); m = split(k, a, ";");
		for (i = 2; i <= m; i++) if (a[i] == f) { c += n; break } } END { if (t) printf "%.2f", 100 * c / t }' "$T/folded")
	got=$(awk -v f="$fn" '$NF == f { sub(/%/, "", $1); print $1 }' "$T/ch.txt")
	p=$(awk -v f="$fn" '$1 == f { print $2 }' "$T/pch.txt")
	note "--children $fn: bpfsym $got%, folded oracle $oracle%, perf $p%"
	if [ -z "$got" ] || [ -z "$oracle" ] || ! awk -v a="$got" -v b="$oracle" 'BEGIN { d = a - b; exit !(d < 0.015 && d > -0.015) }'; then
		bad="$bad $fn: $got% where the folded stacks give $oracle%;"
	elif [ -z "$p" ] || ! awk -v a="$got" -v b="$p" 'BEGIN { d = a - b; exit !(d < 5 && d > -5) }'; then
		bad="$bad $fn: $got% where perf --children gives '$p'%;"
	fi
done
if [ -n "$bad" ]; then
	fail "$name" "$bad"
else
	pass "$name"
fi

# ---- -i F F
name=integration/pro_dup_input
one=$("$BPFSYM" report -i "$F" --header-only 2>/dev/null | awk '$2 == "samples:" { print $3 + 0 }')
two=$("$BPFSYM" report -i "$F" -i "$F" --header-only 2> "$T/dup.err" | awk '$2 == "samples:" { print $3 + 0 }')
ln "$F" "$T/link.data"
three=$("$BPFSYM" report "$F" "$T/link.data" --header-only 2>/dev/null | awk '$2 == "samples:" { print $3 + 0 }')
note "-i F: $one samples; -i F -i F: $two; F and a hard link: $three"
if [ -z "$one" ] || [ "$one" -eq 0 ] || [ "$two" != "$one" ] || [ "$three" != "$one" ]; then
	fail "$name" "F once: '$one' samples, F twice: '$two', F and its link: '$three'"
elif ! grep -q 'read once' "$T/dup.err"; then
	fail "$name" "no note that the file given twice is read once"
	show "$T/dup.err"
else
	pass "$name"
fi

# ---- stdin
name=integration/pro_stdin
"$BPFSYM" report -i "$F" --limit 0 -q > "$T/f.txt" 2>&1
"$BPFSYM" report - --limit 0 -q < "$F" > "$T/s.txt" 2>&1
rc1=$?
cat "$F" | "$BPFSYM" report -i - --limit 0 -q > "$T/p.txt" 2>&1
rc2=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ] || [ ! -s "$T/f.txt" ] || ! cmp -s "$T/f.txt" "$T/s.txt" || ! cmp -s "$T/f.txt" "$T/p.txt"; then
	fail "$name" "report - (status $rc1, a pipe $rc2) does not print what report -i F prints"
	diff "$T/f.txt" "$T/p.txt" | head -5 | show
else
	pass "$name"
fi

# ---- --pprof -
name=integration/pro_pprof_stdout
if ! command -v go > /dev/null 2>&1; then
	skip "$name" "go is not installed (go tool pprof reads the profile)"
else
	"$BPFSYM" report "$F" --pprof - > "$T/s.pb.gz" 2> "$T/pp.err"
	rc=$?
	"$BPFSYM" report "$F" --pprof "$T/f.pb.gz" 2>> "$T/pp.err"
	run_to 120 go tool pprof -raw "$T/s.pb.gz" > "$T/s.raw" 2>> "$T/pp.err"
	run_to 120 go tool pprof -raw "$T/f.pb.gz" > "$T/f.raw" 2>> "$T/pp.err"
	if [ $rc -ne 0 ] || [ ! -e "$T/s.pb.gz" ] || [ -e ./- ]; then
		fail "$name" "--pprof - exited with status $rc"
		show "$T/pp.err"
	elif ! grep -q 'hot_a' "$T/s.raw" || ! cmp -s "$T/s.raw" "$T/f.raw"; then
		fail "$name" "go tool pprof -raw of --pprof - differs from --pprof FILE's (or names no hot_a)"
		show "$T/pp.err"
	else
		pass "$name"
	fi
fi
lib_done
