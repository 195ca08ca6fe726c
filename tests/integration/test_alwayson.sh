#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Issue 15's "done when", as one run: the whole system at 49 Hz, rotating
# every 3 s with 3 files kept, serving the pull endpoint, while the burn
# fixture runs in a cgroup named as docker's cgroupfs driver names a
# container (/docker/<64 hex>; test_container.sh starts a real one with
# runc).  The oracles: burn's own symbols (nm) and the id the test made.
#   alwayson_profile_top   go tool pprof -top of ?seconds=3 lists burn_inner
#                          (nm's name) among the ten hottest functions
#   alwayson_container_tag go tool pprof -tags of that profile shows
#                          container_id: <the id>, with burn's samples
#   alwayson_metrics       /metrics counts samples, rising between two scrapes
#                          3 s apart
#   alwayson_banana        ?seconds=banana is a 4xx
#   alwayson_rotation      SIGINT 1.5 s after the fourth switch: 3 rotated
#                          files (the oldest deleted), each reporting on its
#                          own with samples, all of them merged by
#                          `report FILE...` (the timing holds however long
#                          start-up takes, busy loops beside it or not)
#   alwayson_sigint        SIGINT: exit status 0, nothing left unrenamed
. "$(dirname "$0")/lib.sh"
lib_init integration/alwayson_profile_top integration/alwayson_container_tag integration/alwayson_metrics \
	integration/alwayson_banana integration/alwayson_rotation integration/alwayson_sigint

for tool in curl go nm; do
	command -v $tool > /dev/null 2>&1 || skip_all "'$tool' not installed"
done
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off \
	GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin"
go tool pprof -h > "$T/pprof.help" 2>&1 || skip_all "'go tool pprof' does not run"
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$mnt" ] || skip_all "no cgroup v2 hierarchy is mounted"
need_fixture burn burn
nm "$T/burn" | grep -q ' [tT] burn_inner$' || fail_all "nm finds no burn_inner in the fixture"

ID=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
CG=$mnt/docker/$ID
new_parent=
[ -d "$mnt/docker" ] || new_parent=$mnt/docker
ao_cleanup() {
	if [ -d "$CG" ]; then
		while read -r p; do echo "$p" > "$mnt/cgroup.procs"; done < "$CG/cgroup.procs" 2> /dev/null
		rmdir "$CG" 2> /dev/null
	fi
	[ -n "$new_parent" ] && rmdir "$new_parent" 2> /dev/null
}
LIB_CLEANUP=ao_cleanup
mkdir -p "$CG" || fail_all "cannot make the cgroup $CG"

# burn, in the container's cgroup from its first instruction ("0" moves the writer).
bg_start sh -c 'echo 0 > "$0" && exec "$1" 600' "$CG/cgroup.procs" "$T/burn"
burn=$BG_PID
wait_until 10 grep -qx "$burn" "$CG/cgroup.procs" || fail_all "burn did not enter $CG"

# A free port: the kernel's pick for a socket, given back.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2> /dev/null)
[ -n "$port" ] || port=$((20000 + $$ % 20000))
U=http://127.0.0.1:$port
bg_start sh -c 'exec "$@" 2> "$0"' "$T/rec.err" "$BPFSYM" record -a -F 49 -q --switch-output=3s \
	--switch-max-files=3 --listen "127.0.0.1:$port" -o "$T/ao.data"
rec=$BG_PID
if ! wait_until 60 sh -c "curl -sf --max-time 2 $U/metrics | grep -q '^bpfsym_recording 1'"; then
	show "$T/rec.err"
	fail_all "the endpoint did not come up within 60 s"
fi
samples() { curl -sS --max-time 10 "$U/metrics" | awk '$1 == "bpfsym_samples_total" { print $2 }'; }

# ---- a 3 s profile, pulled as go tool pprof pulls it
m0=$(samples)
run_to 60 curl -sS --max-time 30 -o "$T/p.pb.gz" -w '%{http_code}' "$U/debug/pprof/profile?seconds=3" > "$T/p.code" 2>&1
m1=$(samples)
name=integration/alwayson_profile_top
run_to 60 go tool pprof -top -nodecount=10 "$T/p.pb.gz" > "$T/top.txt" 2> "$T/pprof.err"
if [ "$(cat "$T/p.code")" != 200 ]; then
	fail $name "the profile request answered $(cat "$T/p.code")"
elif ! awk '$1 == "flat" { f = 1; next } f && $6 == "burn_inner" { ok = 1 } END { exit !ok }' "$T/top.txt"; then
	fail $name "burn_inner is not among the ten hottest functions"
	show "$T/top.txt"
	show "$T/pprof.err"
else
	pass $name
fi

name=integration/alwayson_container_tag
run_to 60 go tool pprof -tags -tagfocus="container_id=$ID" "$T/p.pb.gz" > "$T/tags.txt" 2> "$T/tags.err"
run_to 60 go tool pprof -top -tagfocus="container_id=$ID" -nodecount=5 "$T/p.pb.gz" > "$T/ctop.txt" 2>&1
if ! grep -q "container_id" "$T/tags.txt" || ! grep -q "$ID" "$T/tags.txt"; then
	fail $name "go tool pprof -tags shows no container_id $ID"
	show "$T/tags.txt"
	show "$T/tags.err"
elif ! awk '$1 == "flat" { f = 1; next } f && $6 == "burn_inner" { ok = 1 } END { exit !ok }' "$T/ctop.txt"; then
	fail $name "the container's samples are not burn's"
	show "$T/ctop.txt"
else
	pass $name
fi

name=integration/alwayson_metrics
# The first scrape may come before the first sample is read: rising is what counts.
if [ -z "$m0" ] || [ -z "$m1" ] || ! fcmp "$m1" gt "$m0"; then
	fail $name "bpfsym_samples_total '$m0' then '$m1': not counting"
else
	pass $name
	note "samples counted: $m0, then $m1 three seconds later"
fi

name=integration/alwayson_banana
code=$(curl -sS --max-time 10 -o "$T/banana.body" -w '%{http_code}' "$U/debug/pprof/profile?seconds=banana" 2> "$T/banana.err")
case $code in
4??) pass $name ;;
*) fail $name "seconds=banana answered '$code'" ;;
esac

# ---- four switches seen (names collected as they come: only 3 stay), then
# SIGINT half an interval after the last, so the last file spans 1.5 s
# whatever the start-up took (under load it took seconds: 13 s after the
# start left 2 files, or a SIGINT just after a switch left a last file
# with no sample).
seen4() {
	ls "$T" | grep -E '^ao\.data\.[0-9]{17}$' >> "$T/seen"
	[ "$(sort -u "$T/seen" | grep -c .)" -ge 4 ] || ! alive "$rec"
}
: > "$T/seen"
wait_until 60 seen4
sleep 1.5
kill -INT "$rec"
wait_exit "$rec" 30
wait "$rec" 2> /dev/null
rc=$?
name=integration/alwayson_sigint
if [ $rc -ne 0 ]; then
	fail $name "SIGINT: exit status $rc"
	show "$T/rec.err"
elif [ -e "$T/ao.data" ]; then
	fail $name "ao.data is left unrenamed"
else
	pass $name
fi

name=integration/alwayson_rotation
files=$(ls "$T" | grep -E '^ao\.data\.[0-9]{17}$' | sort)
n=$(echo "$files" | grep -c .)
bad=
total=0
for f in $files; do
	if ! run_to 60 "$BPFSYM" report "$T/$f" --folded > "$T/$f.folded" 2> "$T/$f.err"; then
		bad="$bad $f(status)"
		continue
	fi
	c=$(folded_count "$T/$f.folded" '.')
	[ "$c" -gt 0 ] || bad="$bad $f(no samples)"
	total=$((total + c))
done
# shellcheck disable=SC2086 # file names without spaces
(cd "$T" && run_to 60 "$BPFSYM" report $files --folded > "$T/merged.folded" 2> "$T/merged.err")
mrc=$?
merged=$(folded_count "$T/merged.folded" '.')
if [ "$n" -ne 3 ]; then
	fail $name "$n rotated files after four switches at 3 s each with --switch-max-files=3, expected 3: $(echo $files)"
elif [ -n "$bad" ]; then
	fail $name "files that do not report on their own:$bad"
elif [ $mrc -ne 0 ] || [ "$merged" -ne "$total" ]; then
	fail $name "the merge: status $mrc, $merged samples against $total in the files"
	show "$T/merged.err"
else
	pass $name
	note "3 files kept, $total samples, merged alike"
fi
lib_done
