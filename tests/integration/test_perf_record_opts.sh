#!/bin/sh
# perf record's options, typed as a perf user types them (issue 26): each
# accepted one checked against an oracle on this machine, each refused one
# is one line and exit status 2, never "unknown option".
#
#   perf_opts_refused     -t, -C 9999, --no-inherit, -e instructions, -c on
#                         cycles, --call-graph lbr and dwarf,70000 (perf's
#                         bound is 65528): status 2, one line, no file.
#   perf_opts_version     --version and record --version: one line
#                         "bpfsym VERSION", status 0.
#   perf_opts_same        -g, --call-graph dwarf,16384, -z, --all-cpus:
#                         a burner's samples (half of what its CPU time
#                         gives at least), burn_inner its hot function.
#   perf_opts_all_command -a -- sleep 3: ends when sleep does (no signal)
#                         and records a burner started beside it.
#   perf_opts_all_cgroup  -a -G CG -- sleep 3: a burner in CG is recorded,
#                         one outside it and every other process is not.
#   perf_opts_max_size    --max-size 64K on the whole system at 999 Hz:
#                         ends by itself, status 0, says why, the file at
#                         least 64K and under 96K, and readable.
#   perf_opts_period      -e cpu-clock -c 4000000 (250 Hz): a burner's
#                         samples as its CPU time predicts at 250 Hz (half
#                         to one and a half times); perf with the same
#                         options, where it runs, within a factor of 2.
#   perf_opts_cpu_list    -a -C 0: a burner pinned to CPU 0 has its samples,
#                         one pinned to CPU 1 none.
. "$(dirname "$0")/lib.sh"
lib_init integration/perf_opts_refused integration/perf_opts_version integration/perf_opts_same \
	integration/perf_opts_all_command integration/perf_opts_all_cgroup \
	integration/perf_opts_max_size integration/perf_opts_period integration/perf_opts_cpu_list

need_fixture burn burn
cp "$T/burn" "$T/po_in"
cp "$T/burn" "$T/po_out"

# ---- refused: one line, status 2, no output file.
name=integration/perf_opts_refused
bad=
for args in "-t 1" "-C 9999" "--no-inherit" "-i" "-e instructions" "-c 1000" "--call-graph lbr" \
	"--call-graph dwarf,70000" "-z30"; do
	# shellcheck disable=SC2086
	run_to 30 "$BPFSYM" record -q -o "$T/ref.data" $args -- true > "$T/ref.out" 2> "$T/ref.err"
	rc=$?
	note "record $args: status $rc: $(head -1 "$T/ref.err")"
	if [ $rc -ne 2 ] || [ "$(nlines "$T/ref.err")" -ne 1 ] || [ -s "$T/ref.out" ] ||
	   [ -e "$T/ref.data" ] || grep -q 'unknown option' "$T/ref.err"; then
		bad="$bad '$args' (status $rc)"
		show "$T/ref.err"
	fi
	rm -f "$T/ref.data"
done
if [ -n "$bad" ]; then
	fail "$name" "not one line and status 2:$bad"
else
	pass "$name"
fi

# ---- --version, bare and as record's.
name=integration/perf_opts_version
run_to 10 "$BPFSYM" --version > "$T/v1" 2>&1
rc1=$?
run_to 10 "$BPFSYM" record --version > "$T/v2" 2>&1
rc2=$?
note "bpfsym --version: $(cat "$T/v1")"
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
	fail "$name" "--version exited with status $rc1, record --version $rc2"
elif [ "$(nlines "$T/v1")" -ne 1 ] || ! grep -Eq '^bpfsym [0-9]' "$T/v1" || ! cmp -s "$T/v1" "$T/v2"; then
	fail "$name" "expected one line 'bpfsym VERSION' from both"
	show "$T/v1"
	show "$T/v2"
else
	pass "$name"
fi

# ---- accepted, the same recording as without them.
bg_start "$T/burn" 600
pb=$BG_PID
wait_until 5 alive "$pb"
name=integration/perf_opts_same
bad=
for args in "-g" "--call-graph dwarf,16384" "-z" "--compression-level=3" "--all-cpus"; do
	tag=$(echo "$args" | tr -c 'a-z0-9\n' '_')
	case $args in
	--all-cpus) tgt= ;;
	*) tgt="-p $pb" ;;
	esac
	# shellcheck disable=SC2086
	if ! cpu_record "$T/$tag.data" 500 "$pb" $args $tgt; then
		bad="$bad '$args' (did not start)"
		show "$T/$tag.data.err"
		continue
	fi
	note "record $args $tgt: status $REC_RC, burn had $REC_CPU ms; stderr: $(head -1 "$T/$tag.data.err")"
	# Not record_ok and folded: they would report $name once per option.
	if [ "$REC_RC" -ne 0 ] || ! run_to 60 "$BPFSYM" report "$T/$tag.data" --folded > "$T/$tag.folded" 2>&1; then
		bad="$bad '$args' (status $REC_RC, or the report failed)"
		show "$T/$tag.data.err"
		continue
	fi
	ustats_set "$T/$tag.folded" burn burn_inner
	note "  burn: $S_TOTAL samples, $S_FN with burn_inner as user leaf (~$(samples_for "$REC_CPU" "$REC_FREQ") wanted)"
	if [ "$S_TOTAL" -lt "$(want_samples "$REC_CPU" "$REC_FREQ")" ] || [ $((2 * S_FN)) -lt "$S_TOTAL" ]; then
		bad="$bad '$args'"
		uleaves "$T/$tag.folded" burn
	fi
done
if [ -n "$bad" ]; then
	fail "$name" "not the burner's samples, burn_inner hottest:$bad"
else
	pass "$name"
fi

# ---- -a -- sleep 3: the system, for as long as sleep runs.
name=integration/perf_opts_all_command
# From the file's creation (the sampler attached) to the recorder's end:
# the burner's CPU time (a little more than what was sampled) and the wall
# time, which sleep's 3 s bound from below.
if ! bg_record "$T/allcmd.data" -a -- sleep 3; then
	fail "$name" "the recording did not start"
	show "$T/allcmd.data.err"
else
	c0=$(cpu_ms "$pb")
	t0=$(now_ms)
	wait_exit "$REC" 60
	ms=$(( $(now_ms) - t0 ))
	cpu=$(( $(cpu_ms "$pb") - c0 ))
	alive "$REC" && ended=0 || ended=1
	end_record
	note "record -a -- sleep 3: status $REC_RC, $ms ms after the sampler started; burn had $cpu ms meanwhile"
	if record_ok "$name" "$T/allcmd.data" "$T/allcmd.data.err" $REC_RC &&
	   folded "$name" "$T/allcmd.data" "$T/allcmd.folded"; then
		n=$(folded_count "$T/allcmd.folded" '^burn;')
		note "  burn (beside the command): $n samples (~$(samples_for "$cpu" "$REC_FREQ"))"
		if [ $ended -eq 0 ] || [ "$ms" -lt 2500 ]; then
			fail "$name" "the recording did not end with sleep 3 ($ms ms, ended by itself: $ended)"
		elif ! cpu_enough "$name" burn "$cpu" 500 || ! samples_ok "$name" "burn (beside the command)" "$n" "$cpu" "$REC_FREQ"; then
			sort -t' ' -k2,2nr "$T/allcmd.folded" | head -5 | show
		else
			pass "$name"
		fi
	fi
fi

# ---- -a -G CG -- sleep 3: the cgroup's tasks only.
name=integration/perf_opts_all_cgroup
root=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ -d "$d" ] && [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then
		root=$d
		break
	fi
done
CG=$root/bpfsym-test-po-$$
cg_cleanup() {
	[ -d "$CG" ] || return 0
	n=0
	while ! rmdir "$CG" 2>/dev/null && [ $n -lt 50 ]; do
		for q in $(cat "$CG/cgroup.procs" 2>/dev/null); do
			kill -KILL "$q" 2>/dev/null
		done
		sleep 0.1
		n=$((n + 1))
	done
}
LIB_CLEANUP=cg_cleanup
if [ -z "$root" ]; then
	skip "$name" "no cgroup v2 hierarchy"
elif ! mkdir "$CG" 2> "$T/mkdir.err"; then
	skip "$name" "cannot create a cgroup under $root: $(head -1 "$T/mkdir.err")"
else
	bg_start "$T/po_in" 600
	pin=$BG_PID
	bg_start "$T/po_out" 600
	pout=$BG_PID
	wait_until 5 alive "$pout"
	echo "$pin" > "$CG/cgroup.procs"
	if bg_record "$T/allcg.data" -a -G "${CG#$root/}" -- sleep 3; then
		c0=$(cpu_ms "$pin")
		wait_exit "$REC" 60
		cpu=$(( $(cpu_ms "$pin") - c0 ))
	else
		cpu=0
	fi
	end_record
	if record_ok "$name" "$T/allcg.data" "$T/allcg.data.err" $REC_RC && folded "$name" "$T/allcg.data" "$T/allcg.folded"; then
		in=$(folded_count "$T/allcg.folded" '^po_in;')
		all=$(folded_count "$T/allcg.folded" '.')
		note "record -a -G CG -- sleep 3: po_in (in CG) $in samples (~$(samples_for "$cpu" "$REC_FREQ") for $cpu ms), others (po_out outside) $((all - in))"
		if ! alive "$pout"; then
			fail "$name" "the burner outside the cgroup is not running: the test proves nothing"
		elif ! cpu_enough "$name" po_in "$cpu" 500 || ! samples_ok "$name" "po_in (in the cgroup)" "$in" "$cpu" "$REC_FREQ"; then
			:
		elif [ "$all" -ne "$in" ]; then
			fail "$name" "$((all - in)) samples of processes outside the cgroup"
			grep -v '^po_in;' "$T/allcg.folded" | sort -t' ' -k2,2nr | head -5 | show
		else
			pass "$name"
		fi
	fi
	stop "$pin"
	stop "$pout"
fi

# ---- --max-size: ends by itself once the file reaches the bound.
name=integration/perf_opts_max_size
bound=65536
run_to 300 "$BPFSYM" record -q -F 999 -o "$T/max.data" -a --max-size 64K 2> "$T/max.err"
rc=$?
size=$(file_size "$T/max.data")
note "record -a -F 999 --max-size 64K: status $rc, $size bytes: $(tail -1 "$T/max.err")"
if record_ok "$name" "$T/max.data" "$T/max.err" $rc && folded "$name" "$T/max.data" "$T/max.folded"; then
	if [ "$size" -lt "$bound" ] || [ "$size" -ge $((3 * bound / 2)) ]; then
		fail "$name" "the file has $size bytes, expected $bound to $((3 * bound / 2))"
	elif ! grep -q 'max-size' "$T/max.err"; then
		fail "$name" "no word that --max-size ended the recording"
		show "$T/max.err"
	else
		pass "$name"
	fi
fi

# ---- -e cpu-clock -c 4000000: 250 Hz.
name=integration/perf_opts_period
if cpu_record_cmd "$T/per.data" 1000 "$pb" "$BPFSYM" record -q -o "$T/per.data" -e cpu-clock -c 4000000 -p "$pb"; then
	if record_ok "$name" "$T/per.data" "$T/per.data.err" $REC_RC && folded "$name" "$T/per.data" "$T/per.folded"; then
		n=$(folded_count "$T/per.folded" '^burn;')
		note "record -e cpu-clock -c 4000000: burn $n samples for $REC_CPU ms (~$(samples_for "$REC_CPU" 250) at 250 Hz); $(head -1 "$T/per.data.err")"
		perf_n=
		pc0=$(cpu_ms "$pb")
		if command -v perf >/dev/null 2>&1 &&
		   run_to 60 perf record -q -o "$T/perf.data" -e cpu-clock -c 4000000 -p "$pb" -- sleep 2 > /dev/null 2>&1; then
			pcpu=$(( $(cpu_ms "$pb") - pc0 ))
			perf_n=$(perf report -i "$T/perf.data" --stdio -F sample 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }')
			note "perf record -e cpu-clock -c 4000000 -p burn -- sleep 2: $perf_n samples for $pcpu ms (~$(samples_for "$pcpu" 250) at 250 Hz)"
		fi
		if ! cpu_enough "$name" burn "$REC_CPU" 900 || ! samples_ok "$name" burn "$n" "$REC_CPU" 250; then
			:
		elif [ "$n" -gt "$(samples_for "$REC_CPU" 375)" ]; then
			fail "$name" "$n samples: more than 1.5 times what $REC_CPU ms at 250 Hz give"
		elif [ -n "$perf_n" ] && { [ "$perf_n" -lt "$(samples_for "$pcpu" 125)" ] || [ "$perf_n" -gt "$(samples_for "$pcpu" 375)" ]; }; then
			fail "$name" "perf with the same options took $perf_n samples for $pcpu ms: not the 250 Hz bpfsym maps -c 4000000 to"
		else
			pass "$name"
		fi
	fi
else
	fail "$name" "the recording did not start"
	show "$T/per.data.err"
fi
stop "$pb"

# ---- -C 0: only CPU 0 is sampled.
name=integration/perf_opts_cpu_list
if ! command -v taskset > /dev/null 2>&1; then
	skip "$name" "taskset not installed"
elif [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ]; then
	skip "$name" "one CPU online"
else
	cp "$T/burn" "$T/po_c0"
	cp "$T/burn" "$T/po_c1"
	# taskset execs the burner: $BG_PID is the burner's pid.
	bg_start taskset -c 0 "$T/po_c0" 600
	p0=$BG_PID
	bg_start taskset -c 1 "$T/po_c1" 600
	p1=$BG_PID
	wait_until 5 alive "$p1"
	c1=$(cpu_ms "$p1")
	if cpu_record "$T/cpu.data" 500 "$p0" -a -C 0; then
		c1=$(( $(cpu_ms "$p1") - c1 ))
		if record_ok "$name" "$T/cpu.data" "$T/cpu.data.err" $REC_RC && folded "$name" "$T/cpu.data" "$T/cpu.folded"; then
			n0=$(folded_count "$T/cpu.folded" '^po_c0;')
			n1=$(folded_count "$T/cpu.folded" '^po_c1;')
			note "record -a -C 0: po_c0 (on CPU 0) $n0 samples for $REC_CPU ms, po_c1 (on CPU 1) $n1 for $c1 ms"
			if ! cpu_enough "$name" po_c1 "$c1" 250 || ! cpu_enough "$name" po_c0 "$REC_CPU" 500 ||
			   ! samples_ok "$name" "po_c0 (on CPU 0)" "$n0" "$REC_CPU" "$REC_FREQ"; then
				:
			elif [ "$n1" -ne 0 ]; then
				fail "$name" "po_c1, pinned to CPU 1, has $n1 samples under -C 0"
			else
				pass "$name"
			fi
		fi
	else
		fail "$name" "the recording did not start"
		show "$T/cpu.data.err"
	fi
	stop "$p0"
	stop "$p1"
fi
lib_done
