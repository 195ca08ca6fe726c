#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# -G/--cgroup PATH: every process in a cgroup v2 directory and below it,
# and nothing else.
#
#   cgroup_relative, cgroup_absolute
#       a test cgroup with a child cgroup: burner cg_a in the child, cg_b
#       in the test cgroup, cg_c outside.  Recorded with -G, the path
#       relative to the unified hierarchy, then absolute: cg_a and cg_b
#       have samples, cg_c and every other process none.  In the relative
#       run a process also joins the child cgroup during the recording
#       (cg_dsh, which then execs cg_d): it is profiled from then on.
#   cgroup_processes_seen
#       the report header of those recordings counts only the 3 processes
#       that were in the cgroup as "processes seen", not the machine's.
#   cgroup_listen
#       -G with --listen, as a container's scraper would run it: a profile
#       pulled over HTTP (/debug/pprof/profile?seconds=3, read by
#       `go tool pprof -tags`) has cg_a and cg_b, each with at least half
#       the samples its CPU time in the window gives, and no comm from
#       outside the cgroup (cg_d, which joined it above, may be there).
#   cgroup_cli_missing, cgroup_cli_not_cgroup, cgroup_cli_v1
#       -G with a path that does not exist, a directory that is no cgroup,
#       a cgroup v1 directory: exit status 2 and one line on stderr.
. "$(dirname "$0")/lib.sh"
lib_init integration/cgroup_relative integration/cgroup_absolute integration/cgroup_processes_seen \
	integration/cgroup_cli_missing integration/cgroup_cli_not_cgroup integration/cgroup_cli_v1 \
	integration/cgroup_listen

# ---- CLI errors (no cgroup of our own needed).
# cli_err NAME ARGS...: bpfsym record ARGS exits 2 with one line.
cli_err() {
	n=$1
	shift
	run_to 30 "$BPFSYM" record -q -d 1 -o "$T/cli.data" "$@" > "$T/cli.out" 2> "$T/cli.err"
	rc=$?
	lines=$(nlines "$T/cli.err")
	note "bpfsym record $*: status $rc: $(tail -1 "$T/cli.err")"
	if [ $rc -ne 2 ]; then
		fail "$n" "'bpfsym record $*' exited with status $rc, expected 2"
		show "$T/cli.err"
	elif [ "$lines" -ne 1 ]; then
		fail "$n" "'bpfsym record $*' printed $lines lines on stderr, expected one"
		show "$T/cli.err"
	elif [ -s "$T/cli.out" ]; then
		fail "$n" "'bpfsym record $*' printed on stdout"
		show "$T/cli.out"
	elif [ -e "$T/cli.data" ]; then
		fail "$n" "'bpfsym record $*' created its output file"
	else
		pass "$n"
	fi
	rm -f "$T/cli.data"
}

cli_err integration/cgroup_cli_missing -G "/nonexistent-bpfsym-$$"
cli_err integration/cgroup_cli_not_cgroup -G /tmp
v1=
for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup/systemd; do
	if [ -d "$d" ] && [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroupfs ]; then
		v1=$d
		break
	fi
done
if [ -n "$v1" ]; then
	cli_err integration/cgroup_cli_v1 -G "$v1"
else
	skip integration/cgroup_cli_v1 "no cgroup v1 hierarchy mounted"
fi

# ---- the unified hierarchy: /sys/fs/cgroup/unified (hybrid) or
# /sys/fs/cgroup (pure v2); relative -G paths are under it.
root=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ -d "$d" ] && [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then
		root=$d
		break
	fi
done
if [ -z "$root" ]; then
	skip integration/cgroup_relative "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
	skip integration/cgroup_absolute "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
	skip integration/cgroup_processes_seen "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
	skip integration/cgroup_listen "no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
	lib_done
fi

rel=bpfsym-test-$$
CG=$root/$rel
need_fixture burn burn
for c in cg_a cg_b cg_c cg_d; do
	cp "$T/burn" "$T/$c"
done
cp "$(command -v sh)" "$T/cg_dsh"

# Run by lib_cleanup once our processes are killed: remove the cgroups (a
# cgroup with live tasks cannot be removed; exited ones may take a moment
# to leave).
cg_cleanup() {
	for dir in "$CG/child" "$CG"; do
		[ -d "$dir" ] || continue
		n=0
		while ! rmdir "$dir" 2>/dev/null && [ $n -lt 50 ]; do
			for q in $(cat "$dir/cgroup.procs" 2>/dev/null); do
				kill -KILL "$q" 2>/dev/null
			done
			sleep 0.1
			n=$((n + 1))
		done
		[ -d "$dir" ] && echo "# could not remove $dir"
	done
}
LIB_CLEANUP=cg_cleanup

if ! mkdir "$CG" 2> "$T/mkdir.err" || ! mkdir "$CG/child" 2>> "$T/mkdir.err"; then
	why="cannot create a cgroup under $root: $(head -1 "$T/mkdir.err")"
	skip integration/cgroup_relative "$why"
	skip integration/cgroup_absolute "$why"
	skip integration/cgroup_processes_seen "$why"
	skip integration/cgroup_listen "$why"
	lib_done
fi

# in_cgroup PID DIR: PID's cgroup v2 is DIR.
in_cgroup() {
	[ "$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null)" = "${2#$root}" ]
}

# Burners of 600 s of CPU time: stopped by the clean-up.
bg_start "$T/cg_a" 600
pa=$BG_PID
bg_start "$T/cg_b" 600
pb=$BG_PID
bg_start "$T/cg_c" 600
pc=$BG_PID
wait_until 5 alive "$pc"
moved=1
echo "$pa" > "$CG/child/cgroup.procs" 2> "$T/move.err" || moved=0
echo "$pb" > "$CG/cgroup.procs" 2>> "$T/move.err" || moved=0
if [ $moved -eq 0 ] || ! in_cgroup "$pa" "$CG/child" || ! in_cgroup "$pb" "$CG"; then
	why="cannot move processes into $CG: $(head -1 "$T/move.err")"
	skip integration/cgroup_relative "$why"
	skip integration/cgroup_absolute "$why"
	skip integration/cgroup_processes_seen "$why"
	skip integration/cgroup_listen "$why"
	lib_done
fi

# check NAME FOLDED JOINED CPU_A CPU_B [CPU_D]: cg_a and cg_b (and, when
# JOINED is 1, cg_d) have at least half the samples their CPU time while
# recorded gives at 199 Hz; no other process has any.
check() {
	a=$(folded_count "$2" '^cg_a;')
	b=$(folded_count "$2" '^cg_b;')
	c=$(folded_count "$2" '^cg_c;')
	dd=$(folded_count "$2" '^cg_d;')
	all=$(folded_count "$2" '.')
	inside=$(folded_count "$2" '^(cg_a|cg_b|cg_d|cg_dsh);')
	note "cg_a (child cgroup) $a, cg_b (test cgroup) $b, cg_d (joined during the recording) $dd, cg_c (outside) $c; other processes $((all - inside))"
	note "CPU time while recorded: cg_a $4 ms, cg_b $5 ms${6:+, cg_d $6 ms} (~$(samples_for "$4" 199), ~$(samples_for "$5" 199)${6:+, ~$(samples_for "$6" 199)} samples)"
	if ! alive "$pc"; then
		fail "$1" "the burner outside the cgroup (cg_c) is not running: the test proves nothing"
	elif ! cpu_enough "$1" "cg_a and cg_b" "$(( $4 < $5 ? $4 : $5 ))" 400 ||
	     { [ "$3" -eq 1 ] && ! cpu_enough "$1" cg_d "${6:-0}" 400; }; then
		:
	elif ! samples_ok "$1" "cg_a (in $rel/child)" "$a" "$4" 199 ||
	     ! samples_ok "$1" "cg_b (in $rel)" "$b" "$5" 199; then
		sort -t' ' -k2,2nr "$2" | head -10 | show
	elif [ "$3" -eq 1 ] && ! samples_ok "$1" "cg_d (joined the cgroup during the recording)" "$dd" "$6" 199; then
		sort -t' ' -k2,2nr "$2" | head -10 | show
	elif [ "$all" -ne "$inside" ]; then
		fail "$1" "$((all - inside)) samples of processes outside the cgroup (cg_c: $c)"
		grep -Ev '^(cg_a|cg_b|cg_d|cg_dsh);' "$2" | sort -t' ' -k2,2nr | head -10 | show
	else
		pass "$1"
	fi
}

# ---- relative path; cg_dsh joins the child cgroup during the recording.
# It records until cg_a, cg_b and cg_d each had half a second of CPU time.
name=integration/cgroup_relative
if ! bg_record "$T/rel.data" -G "$rel" -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/rel.data.err"
else
	c0=$(cpu_each "$pa" "$pb")
	bg_start "$T/cg_dsh" -c "echo \$\$ > '$CG/child/cgroup.procs' && exec '$T/cg_d' 600"
	pd=$BG_PID
	# cg_d's CPU time counts from its start, in the cgroup nearly all of it.
	CPU_WAIT_EACH=1
	cpu_wait 500 "$CPU_WAIT_MAX" "$pd"
	cpu_wait 500 "$CPU_WAIT_MAX" "$pa" "$pb"
	CPU_WAIT_EACH=0
	set -- $c0 $(cpu_each "$pa" "$pb" "$pd")
	cpu_a=$(($3 - $1)) cpu_b=$(($4 - $2)) cpu_d=$5
	end_record
	note "bpfsym record -G $rel: status $REC_RC: $(tail -1 "$T/rel.data.err")"
	if record_ok "$name" "$T/rel.data" "$T/rel.data.err" $REC_RC &&
	   folded "$name" "$T/rel.data" "$T/rel.folded"; then
		check "$name" "$T/rel.folded" 1 $cpu_a $cpu_b $cpu_d
	fi
fi

# ---- absolute path, until cg_a and cg_b each had half a second.
name=integration/cgroup_absolute
CPU_WAIT_EACH=1
if ! cpu_record "$T/abs.data" 500 "$pa,$pb" -G "$CG" -d 600; then
	fail "$name" "the recording did not start (no output file within 30 s)"
	show "$T/abs.data.err"
else
	note "bpfsym record -G $CG: status $REC_RC: $(tail -1 "$T/abs.data.err")"
	if record_ok "$name" "$T/abs.data" "$T/abs.data.err" $REC_RC &&
	   folded "$name" "$T/abs.data" "$T/abs.folded"; then
		check "$name" "$T/abs.folded" 0 $REC_CPU_EACH
	fi
fi
CPU_WAIT_EACH=0

# ---- "processes seen" (summary and report header) of both recordings:
# cg_a, cg_b and cg_d (cg_dsh exec'd into it: one process) were in the
# cgroup, nothing else.
name=integration/cgroup_processes_seen
bad=
ran=0
for r in rel abs; do
	[ -s "$T/$r.data" ] || continue
	ran=1
	run_to 60 "$BPFSYM" report "$T/$r.data" > "$T/$r.report" 2> "$T/$r.report.err"
	seen=$(sed -n 's/^# lost:.*processes seen: \([0-9][0-9]*\).*/\1/p' "$T/$r.report" | head -1)
	note "$r: report header: $(grep '^# lost:' "$T/$r.report")"
	if [ -z "$seen" ]; then
		bad="$bad; $r: no 'processes seen: N' in the report header"
	elif [ "$seen" -gt 3 ]; then
		bad="$bad; $r: $seen processes seen, 3 were in the cgroup"
	fi
done
if [ $ran -eq 0 ]; then
	fail "$name" "no recording to look at (cgroup_relative and cgroup_absolute recorded nothing)"
elif [ -n "$bad" ]; then
	fail "$name" "${bad#; }"
else
	pass "$name"
fi

# ---- -G with --listen: a profile pulled over HTTP holds the cgroup's
# processes only.  pprof -tags -sample_index=samples prints, under
# " comm:", lines "COUNT (PCT): VALUE" (COUNT as 123.0).
name=integration/cgroup_listen
why=
for tool in curl go; do
	command -v $tool > /dev/null 2>&1 || why="'$tool' not installed"
done
[ -x /usr/bin/python3 ] || why="/usr/bin/python3 not installed"
if [ -n "$why" ]; then
	skip "$name" "$why"
else
	export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off \
		GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin"
	port=$(/usr/bin/python3 "$BPFSYM_TOP/tests/integration/listen_client.py" freeport)
	if ! bg_record "$T/lis.data" -G "$CG" -d 600 --listen "127.0.0.1:$port"; then
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$T/lis.data.err"
	elif ! wait_until 30 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/metrics"; then
		fail "$name" "no /metrics answer on port $port within 30 s"
		show "$T/lis.data.err"
		end_record
	else
		c0=$(cpu_each "$pa" "$pb")
		t0=$(now_ms)
		curl -sS --max-time 60 -o "$T/lis.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=3" \
			2> "$T/lis.curl"
		t1=$(now_ms)
		set -- $c0 $(cpu_each "$pa" "$pb")
		# The profile spans 3 s; the call around it longer (the answer's
		# making, 2 s more under TCG): each one's rate over the call,
		# times 3 s, is what the window holds.
		span=$(( t1 - t0 > 3000 ? t1 - t0 : 3000 ))
		cpu_a=$(( ($3 - $1) * 3000 / span )) cpu_b=$(( ($4 - $2) * 3000 / span ))
		end_record
		run_to 60 go tool pprof -tags -sample_index=samples "$T/lis.pb.gz" > "$T/lis.tags" 2> "$T/lis.pprof.err"
		awk '/^ *comm:/ { f = 1; next } f && /^ *[a-z_]+:/ { f = 0 }
		     f && $1 ~ /^[0-9]+(\.[0-9]*)?$/ { print $NF, int($1) }' "$T/lis.tags" > "$T/lis.comms"
		a=$(awk '$1 == "cg_a" { print $2 }' "$T/lis.comms")
		b=$(awk '$1 == "cg_b" { print $2 }' "$T/lis.comms")
		# cg_d, started in the child cgroup above, still runs there.
		others=$(awk '$1 !~ /^(cg_a|cg_b|cg_d|cg_dsh)$/' "$T/lis.comms" | tr '\n' ' ')
		note "pulled with -G $rel: cg_a ${a:-0}, cg_b ${b:-0}, others: ${others:-none}; CPU time in the window's span: cg_a $cpu_a ms, cg_b $cpu_b ms"
		if [ ! -s "$T/lis.comms" ]; then
			fail "$name" "no comm labels in the pulled profile"
			show "$T/lis.curl"
			show "$T/lis.pprof.err"
			show "$T/lis.tags"
		elif [ -n "$others" ]; then
			fail "$name" "comms outside the cgroup in the pulled profile: $others"
		elif ! cpu_enough "$name" "cg_a and cg_b" "$(( cpu_a < cpu_b ? cpu_a : cpu_b ))" 400; then
			:
		elif samples_ok "$name" "cg_a (pulled)" "${a:-0}" "$cpu_a" "$REC_FREQ" &&
		     samples_ok "$name" "cg_b (pulled)" "${b:-0}" "$cpu_b" "$REC_FREQ"; then
			pass "$name"
		fi
	fi
fi

lib_done
