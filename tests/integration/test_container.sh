#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Container identity with a real container: Debian's runc starts the
# fixture burn, linked statically, on a root file system this test builds
# ($T/bundle/rootfs: /burn and the empty /proc and /out it mounts), in the
# cgroup docker's cgroupfs driver would give it, /docker/<64 hex digits>.
# runc places it there in the cgroup v2 hierarchy itself, also on a hybrid
# machine (v1 controllers plus v2 at /sys/fs/cgroup/unified: it creates
# the directory in every hierarchy; crun refuses that layout, "cgroups in
# hybrid mode not supported").  The same fixture runs on the host beside
# it, same name, no container.  Meanwhile `bpfsym record -a`:
#
#   container_sort
#       `report --sort container`: the line "# container ID (docker): N
#       samples" with N within the container's burn CPU time (which burn
#       writes itself) at the sampling rate: at least half, at most 1.5x
#       plus 20 (runc's own start-up in the cgroup); the rows of burn in
#       the container carry its short id, the host burn's rows "-", and
#       the container's rows come before the rows in no container.
#   container_filter
#       `report --container <12-digit prefix>`: only the container's rows
#       (no host burn, no other process), as many samples as the line
#       above; the filter line names the full id; a prefix of no container,
#       or one too short, is exit status 2.
#   container_pprof
#       `report --pprof` read by `go tool pprof -tags`: container_id has
#       the id, cgroup its path /docker/ID, and the host burn's pid is not
#       in it under --container.
. "$(dirname "$0")/lib.sh"
lib_init integration/container_sort integration/container_filter integration/container_pprof

if ! command -v runc > /dev/null 2>&1; then
	skip_all "runc is not installed (Debian's runc starts the container)"
fi
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ -z "$mnt" ]; then
	skip_all "no cgroup v2 hierarchy is mounted"
fi

SECS=${CONTAINER_SECS:-3}	# CPU seconds each burn has
FREQ=199
ID=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
SHORT=$(echo "$ID" | cut -c1-12)
NAME=bpfsym-test-$$
RUNC="runc --root $T/runc"	# runc's state stays in $T
CGREL=/docker/$ID
# The v1 hierarchies and v2 where /docker did not exist yet: removed after.
new_parents=
for d in "$mnt" /sys/fs/cgroup/*; do
	[ -d "$d" ] && [ ! -d "$d/docker" ] && new_parents="$new_parents $d/docker"
done

ctr_cleanup() {
	$RUNC kill "$NAME" KILL > /dev/null 2>&1
	sleep 0.2
	$RUNC delete -f "$NAME" > /dev/null 2>&1
	# runc removes the container's cgroups; these are what a failure left.
	for d in "$mnt" /sys/fs/cgroup/*; do
		[ -d "$d$CGREL" ] && rmdir "$d$CGREL" 2> /dev/null
	done
	for d in $new_parents; do
		[ -d "$d" ] && rmdir "$d" 2> /dev/null
	done
}
LIB_CLEANUP=ctr_cleanup

# The root file system: a static burn, and the mount points its config names.
mkdir -p "$T/bundle/rootfs/proc" "$T/bundle/rootfs/out" "$T/out" "$T/runc"
need_built "a static tests/fixtures/burn.c (libc6-dev's libc.a)" "$T/burn-static.log" \
	cc -static -O2 -g -fno-omit-frame-pointer -fno-inline -I"$FIXTURES" \
	-o "$T/bundle/rootfs/burn" "$FIXTURES/burn.c"
need_fixture burn burn
cat > "$T/bundle/config.json" << EOF
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": [ "/burn", "$SECS", "/out/cpu" ],
    "env": [ "PATH=/" ],
    "cwd": "/",
    "noNewPrivileges": true
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "bpfsym-test",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/out", "type": "bind", "source": "$T/out", "options": [ "rbind", "rw" ] }
  ],
  "linux": {
    "cgroupsPath": "$CGREL",
    "namespaces": [ { "type": "pid" }, { "type": "mount" }, { "type": "ipc" }, { "type": "uts" } ]
  }
}
EOF

if ! bg_record "$T/c.data" -a; then
	show "$T/c.data.err"
	fail_all "bpfsym record -a did not start"
fi
bg_start $RUNC run -b "$T/bundle" "$NAME"
CTR=$BG_PID
bg_start "$T/burn" "$SECS" "$T/host.cpu"
HOST=$BG_PID
# The container's burn in its cgroup: what the test is about.  (cgroup
# files have no size: test -s cannot tell.)
has_procs() {
	grep -q . "$mnt$CGREL/cgroup.procs" 2> /dev/null
}
in_ctr=no
if wait_until 20 has_procs; then
	in_ctr=yes
	note "container $ID: processes $(paste -sd' ' "$mnt$CGREL/cgroup.procs") in $mnt$CGREL"
fi
reap "$CTR"
ctr_rc=$REAP_RC
reap "$HOST"
# Both burns' samples are in the file once it grew twice (lib.sh, wait_grown).
wait_grown "$T/c.data" 2 20
end_record
if ! record_ok integration/container_sort "$T/c.data" "$T/c.data.err" "$REC_RC"; then
	fail_all "no recording"
fi
ctr_cpu=$(fixture_cpu "$T/out/cpu" burn_inner)
host_cpu=$(fixture_cpu "$T/host.cpu" burn_inner)
note "runc run: status $ctr_rc; burn had $ctr_cpu ms of CPU in the container, $host_cpu ms on the host"
if [ "$in_ctr" != yes ] || [ "$ctr_rc" -ne 0 ]; then
	show "$T/c.data.err"
	fail_all "runc did not run burn in $mnt$CGREL (status $ctr_rc)"
fi
cpu_enough integration/container_sort "the container's burn" "$ctr_cpu" 500 || fail_all "too little CPU"

# ---- --sort container
name=integration/container_sort
run_to 60 "$BPFSYM" report "$T/c.data" --sort container --limit 0 > "$T/sort.txt" 2> "$T/sort.err"
rc=$?
n=$(awk -v id="$ID" '$1 == "#" && $2 == "container" && $3 == id && $4 == "(docker):" { print $5 }' "$T/sort.txt")
want=$(want_samples "$ctr_cpu" $FREQ)
most=$(awk -v c="$ctr_cpu" -v f=$FREQ 'BEGIN { printf "%d", c * f / 1000 * 1.5 + 20 }')
# Rows: "self% total% samples process container module symbol".
rows=$(awk -v s="$SHORT" '$1 ~ /%$/ && $4 == "burn" && $5 == s { n += $3 } END { print n + 0 }' "$T/sort.txt")
host_rows=$(awk -v s="$SHORT" '$1 ~ /%$/ && $4 == "burn" && $5 == "-" { n += $3 } END { print n + 0 }' "$T/sort.txt")
# Where the container's rows are: one run, before every row in no container.
order=$(awk -v s="$SHORT" '$1 ~ /%$/ {
		if ($5 == s) { if (left) bad = 1; if (none) bad = 1; seen = 1 }
		else if (seen) left = 1
		if ($5 == "-") none = 1
	} END { print bad ? "bad" : "ok" }' "$T/sort.txt")
note "sort container: $n samples in the container (burn's rows $rows, self), host burn $host_rows; want $want..$most"
if [ $rc -ne 0 ]; then
	fail "$name" "bpfsym report --sort container exited with status $rc"
	show "$T/sort.err"
elif [ -z "$n" ]; then
	fail "$name" "no line '# container $ID (docker): N samples'"
	show "$T/sort.txt"
elif [ "$n" -lt "$want" ] || [ "$n" -gt "$most" ]; then
	fail "$name" "$n samples in the container, where $ctr_cpu ms of CPU at $FREQ Hz give $want..$most"
elif [ "$rows" -lt "$want" ] || [ "$rows" -gt "$n" ]; then
	fail "$name" "burn's rows with container $SHORT have $rows samples (container: $n, want >= $want)"
	show "$T/sort.txt"
elif [ "$host_rows" -lt "$(want_samples "$host_cpu" $FREQ)" ]; then
	fail "$name" "the host burn's rows (container '-') have $host_rows samples for $host_cpu ms of CPU"
	show "$T/sort.txt"
elif [ "$order" != ok ]; then
	fail "$name" "the container's rows are not together before the rows in no container"
	show "$T/sort.txt"
else
	pass "$name"
fi

# ---- --container PREFIX
name=integration/container_filter
run_to 60 "$BPFSYM" report "$T/c.data" --container "$SHORT" --limit 0 > "$T/filter.txt" 2> "$T/filter.err"
rc=$?
kept=$(awk '$1 ~ /%$/ { n += $3 } END { print n + 0 }' "$T/filter.txt")
others=$(awk -v s="$SHORT" '$1 ~ /%$/ && $5 != s { n++ } END { print n + 0 }' "$T/filter.txt")
comms=$(awk '$1 ~ /%$/ { print $4 }' "$T/filter.txt" | sort -u | paste -sd, -)
run_to 30 "$BPFSYM" report "$T/c.data" --container 000000000000 > /dev/null 2> "$T/none.err"
rc_none=$?
run_to 30 "$BPFSYM" report "$T/c.data" --container "$(echo "$ID" | cut -c1-11)" > /dev/null 2> "$T/short.err"
rc_short=$?
note "--container $SHORT: $kept samples (self) in rows of $comms; a prefix of nothing: status $rc_none, 11 digits: $rc_short"
if [ $rc -ne 0 ]; then
	fail "$name" "bpfsym report --container exited with status $rc"
	show "$T/filter.err"
elif ! grep -q "^# filters: --container $ID " "$T/filter.txt"; then
	fail "$name" "no '# filters: --container $ID' line"
	show "$T/filter.txt"
elif [ "$others" -ne 0 ]; then
	fail "$name" "$others rows of other containers or none"
	show "$T/filter.txt"
elif [ "$kept" -ne "${n:-0}" ]; then
	fail "$name" "$kept samples kept, the container has $n"
elif [ $rc_none -ne 2 ] || [ $rc_short -ne 2 ]; then
	fail "$name" "a prefix of no container exited $rc_none, an 11-digit one $rc_short (2 expected)"
	show "$T/none.err"
else
	pass "$name"
fi

# ---- pprof labels
name=integration/container_pprof
if ! command -v go > /dev/null 2>&1; then
	skip "$name" "go is not installed (golang-go: go tool pprof is the oracle)"
	lib_done
fi
export GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off GOTOOLCHAIN=local \
	GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin"
run_to 60 "$BPFSYM" report "$T/c.data" --pprof "$T/all.pb.gz" 2> "$T/pprof.err" &&
	run_to 60 "$BPFSYM" report "$T/c.data" --container "$SHORT" --pprof "$T/ctr.pb.gz" 2>> "$T/pprof.err"
rc=$?
run_to 120 go tool pprof -tags "$T/all.pb.gz" > "$T/all.tags" 2> "$T/tags.err"
rc_all=$?
run_to 120 go tool pprof -tags "$T/ctr.pb.gz" > "$T/ctr.tags" 2>> "$T/tags.err"
rc_ctr=$?
# "container_id: Total ..." then "  VALUE (PCT): LABEL" lines until a blank line.
tag_has() {
	awk -v k="$2" -v v="$3" '
		$1 == k ":" { on = 1; next }
		on && NF == 0 { on = 0 }
		on && $NF == v { f = 1 }
		END { exit !f }' "$1"
}
host_pid=$HOST
if [ $rc -ne 0 ] || [ $rc_all -ne 0 ] || [ $rc_ctr -ne 0 ]; then
	fail "$name" "report --pprof (status $rc) or go tool pprof -tags ($rc_all, $rc_ctr) failed"
	show "$T/pprof.err"
	show "$T/tags.err"
elif ! tag_has "$T/all.tags" container_id "$ID"; then
	fail "$name" "pprof -tags has no container_id $ID"
	show "$T/all.tags"
elif ! tag_has "$T/all.tags" cgroup "$CGREL"; then
	fail "$name" "pprof -tags has no cgroup $CGREL"
	show "$T/all.tags"
elif ! tag_has "$T/all.tags" pid "$host_pid"; then
	fail "$name" "pprof -tags has no pid label of the host burn ($host_pid)"
	show "$T/all.tags"
elif tag_has "$T/ctr.tags" pid "$host_pid" || ! tag_has "$T/ctr.tags" container_id "$ID"; then
	fail "$name" "under --container the host burn's pid is there, or the container's id is not"
	show "$T/ctr.tags"
else
	note "pprof -tags: $(grep -A1 '^ *container_id:' "$T/all.tags" | tail -1)"
	pass "$name"
fi
lib_done
