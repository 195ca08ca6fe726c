#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Running without root (issue 6, item 4; README.md "Running without root").
#
# As nobody (uid 65534) with capabilities given by setpriv (ambient) or
# setcap (file capabilities), recording the whole system while burn and
# sysheavy run:
#   caps_minimal       CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH:
#                      status 0, burn_inner named; the two warnings of what
#                      is degraded (CAP_CHECKPOINT_RESTORE; CAP_SYSLOG when
#                      kallsyms hides addresses from such a process)
#   caps_recommended   those + CAP_SYSLOG + CAP_CHECKPOINT_RESTORE, with
#                      RLIMIT_MEMLOCK 0: status 0, no warning, kernel frames
#                      named, burn_inner named
#   caps_setcap        the recommended set as file capabilities of a copy
#   caps_without_X     each of the four required ones missing: status 2 and
#                      one line naming it
#   caps_paranoid      where the kernel opens no perf event without
#                      CAP_SYS_ADMIN at kernel.perf_event_paranoid=3 (Debian's
#                      kernels, their default): status 2 and one line saying
#                      so; the rest of the file then runs at 2 (restored)
# (test_record_options.sh has priv_nobody and priv_missing_caps.)
. "$(dirname "$0")/lib.sh"
REQ="bpf perfmon sys_ptrace dac_read_search"
lib_init integration/caps_minimal integration/caps_recommended integration/caps_setcap \
	$(for c in $REQ; do echo integration/caps_without_$c; done) integration/caps_paranoid

command -v setpriv > /dev/null || skip_all "setpriv (util-linux) not installed"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+bpf --ambient-caps=+bpf true 2> "$T/setpriv.err" ||
	skip_all "setpriv cannot give ambient capabilities: $(head -1 "$T/setpriv.err")"
for f in burn sysheavy; do
	need_fixture $f $f
done
# nobody writes here; CAP_DAC_READ_SEARCH lets it through the 0700 parents.
mkdir -p "$T/out" && chmod 777 "$T/out"
bg_start "$T/burn" 600
burn=$BG_PID
bg_start "$T/sysheavy" 600
sysh=$BG_PID

# $NOBODY CAPS CMD...: run CMD as nobody with CAPS ("+a,+b") ambient; a
# command, so that timeout can run it.
NOBODY=$T/as_nobody
cat > "$NOBODY" <<'EOS'
#!/bin/sh
caps=$1
shift
exec setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps="$caps" --ambient-caps="$caps" "$@"
EOS
chmod 755 "$NOBODY"

# What nobody with these capabilities sees in /proc/kallsyms: without
# CAP_SYSLOG, the addresses are zeros unless kptr_restrict is 0 and
# perf_event_paranoid at most 1.
hidden=0
if "$NOBODY" +bpf,+perfmon,+sys_ptrace,+dac_read_search head -1 /proc/kallsyms | grep -q '^0*[[:space:]]'; then
	hidden=1
fi
note "without CAP_SYSLOG, kallsyms addresses hidden: $hidden (kptr_restrict $(cat /proc/sys/kernel/kptr_restrict), perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"

# Debian's kernels refuse every perf_event_open without CAP_SYS_ADMIN above
# paranoid 2, CAP_PERFMON or not (upstream treats 3 as 2): bpfsym must say
# so in one line, and the tests below need 2 to test anything else.
name=integration/caps_paranoid
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$paranoid" -le 2 ]; then
	skip "$name" "kernel.perf_event_paranoid is $paranoid: nothing to refuse"
else
	run_to 30 "$NOBODY" +bpf,+perfmon,+sys_ptrace,+dac_read_search "$BPFSYM" record -q -a -d 1 \
		-o "$T/out/par.data" > /dev/null 2> "$T/par.err"
	rc=$?
	note "at paranoid $paranoid without CAP_SYS_ADMIN: status $rc: $(head -2 "$T/par.err")"
	if [ $rc -eq 0 ]; then
		skip "$name" "this kernel opens perf events for CAP_PERFMON at paranoid $paranoid (not Debian's restriction)"
	elif [ $rc -ne 2 ] || [ "$(nlines "$T/par.err")" -ne 1 ] ||
	     ! grep -q 'kernel.perf_event_paranoid=2' "$T/par.err"; then
		fail "$name" "expected status 2 and one line naming kernel.perf_event_paranoid"
		show "$T/par.err"
	else
		pass "$name"
	fi
	restore_paranoid() { echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid; }
	LIB_CLEANUP=restore_paranoid
	echo 2 > /proc/sys/kernel/perf_event_paranoid
fi

# rec NAME DATA CMD...: record the whole system with CMD's credentials
# until burn and sysheavy each had half a second of CPU time (SIGINT: the
# CPU time of sysheavy in $SYS_CPU); status in $rc, stderr
# in DATA.err, folded stacks in DATA.folded (read as root).  False (FAIL)
# when it did not record, or has less than half the samples of burn that
# its CPU time gives at 199 Hz.
rec() {
	name=$1 data=$2
	shift 2
	CPU_WAIT_EACH=1
	if ! cpu_record_cmd "$data" 500 "$burn,$sysh" "$@" record -a -F 199 -d 600 -q -o "$data"; then
		CPU_WAIT_EACH=0
		fail "$name" "the recording did not start (no output file within 30 s)"
		show "$data.err"
		return 1
	fi
	CPU_WAIT_EACH=0
	set -- $REC_CPU_EACH
	BURN_CPU=$1 SYS_CPU=$2
	rc=$REC_RC
	note "$name: status $rc, stderr: $(cat "$data.err")"
	record_ok "$name" "$data" "$data.err" $rc || return 1
	if [ "$(stat -c %u "$data")" -ne 65534 ]; then
		fail "$name" "the file is owned by uid $(stat -c %u "$data"), not nobody: not run as nobody?"
		return 1
	fi
	folded "$name" "$data" "$data.folded" || return 1
	n=$(folded_count "$data.folded" '^burn;(.*;)?burn_inner$')
	note "$name: $n samples of burn;...;burn_inner for $BURN_CPU ms of its CPU time (~$(samples_for "$BURN_CPU" 199)); sysheavy had $SYS_CPU ms"
	if ! cpu_enough "$name" burn "$BURN_CPU" 500 || ! cpu_enough "$name" sysheavy "$SYS_CPU" 500 ||
	   ! samples_ok "$name" "burn;...;burn_inner" "$n" "$BURN_CPU" 199; then
		uleaves "$data.folded" burn
		return 1
	fi
	return 0
}

# kernel_named DATA: "NAMED ALL" kernel frames of the folded stacks.
kernel_named() {
	awk '{
		k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
		for (i = 2; i <= k; i++)
			if (f[i] ~ /_\[k\]$/) {
				all += $NF
				if (f[i] !~ /^\[/)
					named += $NF
			}
	} END { print named + 0, all + 0 }' "$1"
}

name=integration/caps_minimal
if rec "$name" "$T/out/min.data" "$NOBODY" +bpf,+perfmon,+sys_ptrace,+dac_read_search "$BPFSYM"; then
	set -- $(kernel_named "$T/out/min.data.folded")
	note "minimal set: $1 of $2 kernel frames named"
	if ! grep -q 'warning: no CAP_CHECKPOINT_RESTORE' "$T/out/min.data.err"; then
		fail "$name" "no warning that CAP_CHECKPOINT_RESTORE is missing"
	elif [ $hidden -eq 1 ] && ! grep -q 'kptr_restrict.*grant CAP_SYSLOG' "$T/out/min.data.err"; then
		fail "$name" "kallsyms is hidden, and no warning naming CAP_SYSLOG"
	elif [ $hidden -eq 1 ] && [ "$1" -ne 0 ]; then
		fail "$name" "$1 kernel frames named from a hidden kallsyms"
	elif [ $hidden -eq 0 ] && [ "$1" -eq 0 ]; then
		fail "$name" "kallsyms is visible, yet no kernel frame is named ($2 kernel frames)"
	else
		pass "$name"
	fi
fi

ALL=+bpf,+perfmon,+sys_ptrace,+dac_read_search,+syslog,+checkpoint_restore
name=integration/caps_recommended
if ! command -v prlimit > /dev/null; then
	skip "$name" "prlimit (util-linux) not installed"
elif rec "$name" "$T/out/rec.data" prlimit --memlock=0:0 setpriv --reuid=65534 --regid=65534 \
	--clear-groups --inh-caps=$ALL --ambient-caps=$ALL "$BPFSYM"; then
	set -- $(kernel_named "$T/out/rec.data.folded")
	note "recommended set, RLIMIT_MEMLOCK 0: $1 of $2 kernel frames named"
	if grep -q 'warning' "$T/out/rec.data.err"; then
		fail "$name" "warnings with the recommended set"
		show "$T/out/rec.data.err"
	elif [ "$2" -lt "$(want_samples "$SYS_CPU" 199)" ]; then
		fail "$name" "only $2 kernel frames, where sysheavy's $SYS_CPU ms of CPU time in system calls give ~$(samples_for "$SYS_CPU" 199) samples"
	elif [ $((2 * $1)) -lt "$2" ]; then
		fail "$name" "only $1 of $2 kernel frames named"
	else
		pass "$name"
	fi
fi

# File capabilities: a copy in a directory of its own that nobody can
# reach (setpriv gives nobody nothing here), on a file system that honours them.
name=integration/caps_setcap
if ! command -v setcap > /dev/null; then
	skip "$name" "setcap (libcap2-bin) not installed"
else
	capdir=$(mktemp -d /tmp/bpfsym-caps.XXXXXX)
	chmod 755 "$capdir"
	cp "$BPFSYM" "$capdir/bpfsym"
	if ! setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,cap_syslog,cap_checkpoint_restore+ep \
		"$capdir/bpfsym" 2> "$T/setcap.err"; then
		skip "$name" "setcap failed: $(head -1 "$T/setcap.err")"
	elif findmnt -n -o OPTIONS -T "$capdir" 2>/dev/null | grep -qw nosuid; then
		skip "$name" "$capdir is on a nosuid file system (file capabilities ignored)"
	elif rec "$name" "$T/out/setcap.data" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$capdir/bpfsym"; then
		if grep -q 'warning' "$T/out/setcap.data.err"; then
			fail "$name" "warnings with the recommended set as file capabilities"
			show "$T/out/setcap.data.err"
		else
			pass "$name"
		fi
	fi
	rm -rf "$capdir"
fi

# Each required capability missing: status 2, one line naming just it.
for c in $REQ; do
	name=integration/caps_without_$c
	caps=$(echo "$REQ" | tr ' ' '\n' | grep -vx "$c" | sed 's/^/+/' | paste -sd,)
	want="CAP_$(echo "$c" | tr a-z A-Z)"
	# ASan's leak checker would need the missing CAP_SYS_PTRACE.
	ASAN_OPTIONS=detect_leaks=0 run_to 30 "$NOBODY" "$caps" "$BPFSYM" record -a -d 1 -q \
		-o "$T/out/never.data" > /dev/null 2> "$T/without.err"
	rc=$?
	note "$name ($caps): status $rc, stderr: $(cat "$T/without.err")"
	if [ $rc -ne 2 ]; then
		fail "$name" "exited with status $rc, expected 2"
		show "$T/without.err"
	elif [ "$(nlines "$T/without.err")" -ne 1 ]; then
		fail "$name" "printed $(nlines "$T/without.err") lines, expected one"
		show "$T/without.err"
	elif ! grep -Eq "^bpfsym: missing capabilities: $want \(" "$T/without.err"; then
		fail "$name" "the line does not name just $want"
	elif [ -e "$T/out/never.data" ]; then
		fail "$name" "a file was written"
	else
		pass "$name"
	fi
done

stop "$burn"
stop "$sysh"
lib_done
