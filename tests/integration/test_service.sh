#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installable as a service (issue 15, item 6).
#
#   service_verify      `systemd-analyze verify` of examples/bpfsym.service
#                       (its ExecStart pointed at the binary under test)
#                       prints nothing and exits 0
#   service_contract    the unit keeps what the issue asks: rotation and
#                       retention on, the listener on loopback, StateDirectory,
#                       ProtectSystem=strict, Restart=on-failure, not root,
#                       and the capability set equal in bounding and ambient
#                       and CAP_SYSLOG kept (no ProtectKernelLogs=, which
#                       drops it), one port for the unit and both scrape
#                       examples, not one another tool owns
#   service_security    `systemd-analyze security --offline=yes` of the unit
#                       runs and lists CAP_SYSLOG as kept (its exposure score
#                       noted)
#   service_runs        the unit's ExecStart line, run as nobody with exactly
#                       the unit's AmbientCapabilities and its state directory
#                       in $T (plus -d): status 0, a file there that reports
#                       the burn fixture's samples (half of what its CPU time
#                       gives at the unit's rate, at least), and kernel frames
#                       named: some NAME_[k], each a symbol of /proc/kallsyms
#                       read as root (sysheavy runs beside burn so that the
#                       recording holds kernel stacks on an idle machine too:
#                       CI's once held none)
. "$(dirname "$0")/lib.sh"
lib_init integration/service_verify integration/service_contract \
	integration/service_security integration/service_runs

UNIT=$BPFSYM_TOP/examples/bpfsym.service.in
BIN=$BPFSYM

# ---- service_verify
# The template as `make install` fills it, with bindir the tested binary's.
sed "s|@bindir@|$(dirname "$BIN")|g" "$UNIT" > "$T/bpfsym.service"
if ! command -v systemd-analyze > /dev/null; then
	skip integration/service_verify "systemd-analyze not installed"
else
	systemd-analyze verify --man=no "$T/bpfsym.service" > "$T/verify.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$T/verify.out" ]; then
		fail integration/service_verify "systemd-analyze verify: status $rc"
		show "$T/verify.out"
	else
		pass integration/service_verify
	fi
fi

# ---- service_contract
key() { sed -n "s/^$1=//p" "$UNIT" | tail -1; }
exec_line=$(key ExecStart)
why=
case " $exec_line " in *" --switch-output="*) ;; *) why="$why no --switch-output;" ;; esac
case " $exec_line " in *" --switch-max-files="*) ;; *) why="$why no --switch-max-files;" ;; esac
case " $exec_line " in *" --listen 127.0.0.1:"*) ;; *) why="$why no --listen on 127.0.0.1;" ;; esac
[ "$(key ProtectSystem)" = strict ] || why="$why ProtectSystem not strict;"
[ "$(key Restart)" = on-failure ] || why="$why Restart not on-failure;"
[ -n "$(key StateDirectory)" ] || why="$why no StateDirectory;"
[ "$(key DynamicUser)" = yes ] || [ -n "$(key User)" ] || why="$why runs as root;"
[ "$(key CapabilityBoundingSet)" = "$(key AmbientCapabilities)" ] || why="$why bounding and ambient sets differ;"
grep -q '^ProtectKernelTunables=yes' "$UNIT" && why="$why ProtectKernelTunables hides /proc/kallsyms;"
grep -q '^ProtectKernelLogs=yes' "$UNIT" && why="$why ProtectKernelLogs drops CAP_SYSLOG;"
case " $(key CapabilityBoundingSet) " in *" CAP_SYSLOG "*) ;; *) why="$why no CAP_SYSLOG (kernel frames unnamed);" ;; esac
uport=$(echo "$exec_line" | sed -n 's/.*--listen 127\.0\.0\.1:\([0-9]*\).*/\1/p')
case "$uport" in
7070|7071|6060|4040|12345|9090|9100|"") why="$why port '$uport' is another tool's;" ;;
esac
for ex in parca.yaml config.alloy; do
	grep -q "127\.0\.0\.1:$uport\"" "$BPFSYM_TOP/examples/$ex" || why="$why examples/$ex does not scrape 127.0.0.1:$uport;"
	grep -o '127\.0\.0\.1:[0-9]*' "$BPFSYM_TOP/examples/$ex" | grep -qv ":$uport\$" && why="$why examples/$ex names another port;"
done
if [ -n "$why" ]; then
	fail integration/service_contract "$why"
else
	pass integration/service_contract
fi

# ---- service_security: systemd's own reading of the sandbox
if ! command -v systemd-analyze > /dev/null; then
	skip integration/service_security "systemd-analyze not installed"
elif ! systemd-analyze security --help 2>&1 | grep -q -- '--offline'; then
	skip integration/service_security "systemd-analyze has no security --offline (systemd < 252)"
else
	systemd-analyze security --offline=yes --no-pager "$T/bpfsym.service" > "$T/security.out" 2>&1
	rc=$?
	score=$(sed -n 's/.*Overall exposure level for [^:]*: *\([0-9.]*\).*/\1/p' "$T/security.out")
	# Its CapabilityBoundingSet lines: CAP_SYSLOG must not be among the removed.
	if [ -z "$score" ]; then
		fail integration/service_security "no exposure level (status $rc)"
		show "$T/security.out"
	elif grep -q '✓ CapabilityBoundingSet=~CAP_SYSLOG' "$T/security.out"; then
		fail integration/service_security "the unit drops CAP_SYSLOG"
		grep CAP_SYSLOG "$T/security.out"
	else
		pass integration/service_security
		note "systemd-analyze security --offline: exposure $score (status $rc); $(grep -c '✗' "$T/security.out") items flagged"
	fi
fi

# ---- service_runs: the ExecStart line as the unit runs it
need_fixture burn burn
need_fixture sysheavy sysheavy
caps=$(key AmbientCapabilities | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
port=$((20000 + $$ % 20000))
while ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; do
	port=$((port + 1))
done
mkdir -p "$T/state/bpfsym" && chown 65534:65534 "$T/state/bpfsym" && chmod 755 "$T"
args=$(echo "$exec_line" | sed "s|^@bindir@/bpfsym ||; s|%S|$T/state|g; s|127.0.0.1:[0-9]*|127.0.0.1:$port|")
freq=$(echo " $args " | sed -n 's/.* -F \([0-9]*\) .*/\1/p')
# The unit's first lines ask Debian's kernels (paranoid 3: no perf event
# without CAP_SYS_ADMIN, which the unit does not grant) for paranoid 2.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$paranoid" -gt 2 ]; then
	restore_paranoid() { echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid; }
	LIB_CLEANUP=restore_paranoid
	echo 2 > /proc/sys/kernel/perf_event_paranoid
	note "kernel.perf_event_paranoid $paranoid -> 2 for the unit's command, as its header says"
fi
bg_start "$T/burn" 600
burn=$BG_PID
bg_start "$T/sysheavy" 600
sysh=$BG_PID
# shellcheck disable=SC2086 # the unit's arguments, split as systemd splits them (no quotes there)
timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$caps" --ambient-caps="$caps" \
	"$BIN" $args -d 6 > "$T/run.out" 2> "$T/run.err" &
rec=$!
# The burners' CPU time while it records, from when its endpoint says so:
# its start-up (seconds under TCG, with both burners on the CPUs) records
# nothing, and counting it made the want too high in the 6.1 VM.
c0= n=0
while kill -0 "$rec" 2> /dev/null && [ $n -lt 600 ]; do
	if curl -s -m 2 "http://127.0.0.1:$port/metrics" 2> /dev/null | grep -q '^bpfsym_recording 1'; then
		c0=$(cpu_ms "$burn")
		s0=$(cpu_ms "$sysh")
		break
	fi
	sleep 0.1
	n=$((n + 1))
done
wait "$rec"
rc=$?
[ -n "$c0" ] || { c0=0 s0=0; note "the endpoint never said it recorded: CPU times counted from the burners' start"; }
c1=$(cpu_ms "$burn")
s1=$(cpu_ms "$sysh")
stop "$burn"
stop "$sysh"
files=$(ls "$T/state/bpfsym" | grep '^bpfsym\.data' | tr '\n' ' ')
note "ran: bpfsym $args -d 6 (caps $caps): status $rc, files: $files"
if [ $rc -ne 0 ]; then
	fail integration/service_runs "status $rc"
	show "$T/run.err"
elif [ -z "$files" ]; then
	fail integration/service_runs "no bpfsym.data* in the state directory"
	show "$T/run.err"
else
	got=0
	bad=
	for f in $files; do
		if ! "$BPFSYM" report "$T/state/bpfsym/$f" --folded > "$T/$f.folded" 2> "$T/$f.err"; then
			bad="$bad $f"
			show "$T/$f.err"
		fi
		got=$((got + $(folded_count "$T/$f.folded" '^burn;')))
	done
	want=$(want_samples $((c1 - c0)) "${freq:-19}")
	note "burn: $got samples, $((c1 - c0)) ms of CPU: want at least $want"
	# Kernel frames (NAME_[k]) under the unit's capabilities, against
	# /proc/kallsyms as root reads it.
	cat "$T"/*.folded 2> /dev/null | awk '{ $NF = ""; n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /_\[k\] *$/) { sub(/_\[k\] *$/, "", f[i]); print f[i] } }' |
		sort -u > "$T/kframes"
	awk 'NR == FNR { if ($1 !~ /^0+$/) known[$3] = 1; next } !($1 in known)' /proc/kallsyms "$T/kframes" > "$T/kunknown"
	ksys=0
	for f in $files; do
		ksys=$((ksys + $(grep '^sysheavy;' "$T/$f.folded" | grep '_\[k\]' | awk '{ n += $NF } END { print n + 0 }')))
	done
	note "kernel frames: $(wc -l < "$T/kframes") names, $(wc -l < "$T/kunknown") not in /proc/kallsyms; sysheavy: $ksys samples with a kernel frame, $((s1 - s0)) ms of CPU"
	if [ -n "$bad" ]; then
		fail integration/service_runs "bpfsym report failed on:$bad"
	elif [ "$got" -lt "$want" ]; then
		fail integration/service_runs "burn has $got samples, want at least $want"
	elif [ "$ksys" -lt "$(($(want_samples $((s1 - s0)) "${freq:-19}") / 2))" ]; then
		fail integration/service_runs "sysheavy has $ksys samples with a kernel frame for $((s1 - s0)) ms of CPU, mostly in system calls"
	elif [ ! -s "$T/kframes" ] || [ -s "$T/kunknown" ]; then
		fail integration/service_runs "kernel frames not named under the unit's capabilities: $(wc -l < "$T/kframes") names, e.g. unknown '$(head -1 "$T/kunknown")'"
	else
		pass integration/service_runs
	fi
fi
lib_done
