#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The files a recording writes (issue 25 item 3), against what stat, cmp and
# ls say of them.  Run in a sticky, world-writable directory, as /tmp is.
#
#   output_symlink_refused  a link owned by nobody at the output name, to a
#                           root file: exit 1, one line naming the link, the
#                           target's bytes and mtime unchanged, the link
#                           still there, nothing else created
#   output_mode_0600        under umask 0: the recording, the rotated files
#                           and report's --flamegraph and --pprof are 0600
#   output_exists_refused   an existing file: exit 1, one line, its bytes
#                           unchanged; refused before anything is loaded
#   output_force            -f over that file: replaced by a recording that
#                           reads (0600, another inode); -f over a link: the
#                           link replaced by a file, its target unchanged
#   output_rotated_taken    files and links (to a root file) at every
#                           rotated name of 600 ms from a SIGUSR2: none
#                           replaced or followed, the switch takes the next
#                           free millisecond, status 0
#   output_second_recorder  a second rotating recorder with the same -o is
#                           refused (exit 1) and the first ends well: status
#                           0, its files complete (on a601fbb the two renamed
#                           each other's files; the first ended "writing
#                           'r.data.<T>' failed: No such file or directory")
#   output_dir_held         the output's directory is a link, swapped to
#                           another directory mid-recording: every rotated
#                           file stays in the first one, none in the second
. "$(dirname "$0")/lib.sh"
lib_init integration/output_symlink_refused integration/output_mode_0600 \
	integration/output_exists_refused integration/output_force integration/output_rotated_taken \
	integration/output_second_recorder integration/output_dir_held

command -v python3 > /dev/null || skip_all "python3 not installed"
# Debian's default (systemd's sysctl.d): another user's link in a sticky
# world-writable directory may not be followed, so even a look at its
# target is EACCES.  The tests run with it, whatever the machine had.
PROT_OLD=$(cat /proc/sys/fs/protected_symlinks 2> /dev/null)
restore_protected() {
	[ -n "$PROT_OLD" ] && echo "$PROT_OLD" > /proc/sys/fs/protected_symlinks
}
LIB_CLEANUP=restore_protected
[ -n "$PROT_OLD" ] && echo 1 > /proc/sys/fs/protected_symlinks
S=$T/shared
mkdir -p "$S" && chmod 1777 "$S" || fail_all "cannot make $S"
printf 'root only\n' > "$T/victim"
chmod 600 "$T/victim"
touch -d '2001-01-01 00:00:00' "$T/victim"
victim_ok() { [ "$(cat "$T/victim")" = "root only" ] && [ "$(stat -c %Y "$T/victim")" = "$(date -d '2001-01-01 00:00:00' +%s)" ]; }

# rotated DIR BASE: the rotated files of BASE in DIR, one a line, sorted.
rotated() {
	ls "$1" | grep -E "^$2\\.[0-9]{17}\$" | sort
}

# complete FILE: it reads as a whole recording (an END record, no truncation).
complete() {
	run_to 60 "$BPFSYM" report "$1" --limit 1 > "$1.rep" 2> "$1.rep.err" &&
		! grep -qi truncat "$1.rep" "$1.rep.err" && grep -q '^# lost: [0-9]' "$1.rep"
}

# ---- a link of another user at the name
name=integration/output_symlink_refused
ln -s "$T/victim" "$S/r.data" && chown -h 65534:65534 "$S/r.data"
run_to 60 "$BPFSYM" record -a -q -d 1 -o "$S/r.data" > "$T/sym.out" 2> "$T/sym.err"
rc=$?
if [ $rc -ne 1 ]; then
	fail $name "status $rc, expected 1"
	show "$T/sym.err"
elif [ "$(nlines "$T/sym.err")" -ne 1 ] || ! grep -q "r.data' exists and is a symbolic link" "$T/sym.err"; then
	fail $name "expected one line saying the name is a link"
	show "$T/sym.err"
elif ! victim_ok; then
	fail $name "the link's target was written: $(stat -c '%s bytes, mtime %y' "$T/victim")"
elif [ ! -L "$S/r.data" ] || [ "$(ls "$S")" != "r.data" ]; then
	fail $name "the directory holds: $(ls -l "$S" | tr '\n' ' ')"
else
	pass $name
fi
rm -f "$S/r.data"

# ---- modes under umask 0
name=integration/output_mode_0600
(umask 0 && run_to 60 "$BPFSYM" record -a -q -d 1 -o "$S/m.data" 2> "$T/mode.err" &&
	run_to 60 "$BPFSYM" record -a -q -d 2.5 --switch-output=1s -o "$S/mr.data" 2>> "$T/mode.err" &&
	run_to 60 "$BPFSYM" report "$S/m.data" --flamegraph "$S/m.svg" 2>> "$T/mode.err" &&
	run_to 60 "$BPFSYM" report "$S/m.data" --pprof "$S/m.pb.gz" 2>> "$T/mode.err")
rc=$?
modes=$(cd "$S" && stat -c '%a %n' m.data m.svg m.pb.gz $(rotated "$S" mr.data) 2>&1)
note "modes: $(echo "$modes" | tr '\n' ' ')"
if [ $rc -ne 0 ]; then
	fail $name "status $rc"
	show "$T/mode.err"
elif [ -z "$(rotated "$S" mr.data)" ]; then
	fail $name "no rotated files"
elif echo "$modes" | grep -qv '^600 '; then
	fail $name "not 0600: $(echo "$modes" | grep -v '^600 ' | tr '\n' ' ')"
else
	pass $name
fi

# ---- an existing file
name=integration/output_exists_refused
printf 'an older recording\n' > "$S/e.data"
cp "$S/e.data" "$T/e.orig"
t0=$(now_ms)
run_to 60 "$BPFSYM" record -a -q -d 1 -o "$S/e.data" 2> "$T/exists.err"
rc=$?
ms=$(( $(now_ms) - t0 ))
note "refused in $ms ms: $(cat "$T/exists.err")"
if [ $rc -ne 1 ]; then
	fail $name "status $rc, expected 1"
	show "$T/exists.err"
elif [ "$(nlines "$T/exists.err")" -ne 1 ] || ! grep -q "e.data' exists: not replaced (-f" "$T/exists.err"; then
	fail $name "expected one line saying it exists and naming -f"
	show "$T/exists.err"
elif ! cmp -s "$S/e.data" "$T/e.orig"; then
	fail $name "the existing file changed"
elif grep -q '^bpfsym: .*samples' "$T/exists.err"; then
	fail $name "it recorded"
else
	pass $name
fi

# ---- -f replaces, a link itself
name=integration/output_force
ino0=$(stat -c %i "$S/e.data")
ln -s "$T/victim" "$S/l.data" && chown -h 65534:65534 "$S/l.data"
run_to 60 "$BPFSYM" record -a -q -d 1 -f -o "$S/e.data" 2> "$T/force.err"
rc1=$?
run_to 60 "$BPFSYM" record -a -q -d 1 --force -o "$S/l.data" 2>> "$T/force.err"
rc2=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
	fail $name "status $rc1 and $rc2 with -f"
	show "$T/force.err"
elif [ "$(stat -c %i "$S/e.data")" = "$ino0" ] || ! complete "$S/e.data"; then
	fail $name "e.data was not replaced by a recording that reads"
	show "$S/e.data.rep.err"
elif [ -L "$S/l.data" ] || ! complete "$S/l.data" || ! victim_ok; then
	fail $name "the link: $(ls -l "$S/l.data"), its target $(stat -c '%s bytes' "$T/victim")"
elif [ "$(stat -c %a "$S/e.data")" != 600 ] || [ "$(stat -c %a "$S/l.data")" != 600 ]; then
	fail $name "modes $(stat -c %a "$S/e.data") and $(stat -c %a "$S/l.data") after -f"
elif ls "$S" | grep -q '\.tmp$'; then
	fail $name "a temporary file is left: $(ls "$S" | tr '\n' ' ')"
else
	pass $name
fi

# ---- rotated names taken: files and links at every millisecond of a window
name=integration/output_rotated_taken
R=$T/rot
mkdir -p "$R"
bg_start "$BPFSYM" record -a -q --switch-output -o "$R/r.data" 2> "$T/rot.err"
rec=$BG_PID
data=$R/r.data
REC=$rec
wait_until 30 rec_started
# In 1.5 s: 600 names from then on, even ones files, odd ones links to the
# victim; at the window's start, SIGUSR2.  Prints the window's first and last stamps.
python3 - "$R" "$T/victim" "$rec" > "$T/rot.window" 2> "$T/rot.py.err" <<'EOF'
import os, signal, sys, time
d, victim, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = int(time.time() * 1000) + 1500
names = []
for ms in range(t0, t0 + 600):
    n = "r.data." + time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + "%03d" % (ms % 1000)
    p = os.path.join(d, n)
    if ms % 2:
        os.symlink(victim, p)
    else:
        with open(p, "w") as f:
            f.write("mine\n")
    names.append(n)
time.sleep(max(0, t0 / 1000 - time.time()))
os.kill(pid, signal.SIGUSR2)
print(names[0], names[-1])
EOF
first=$(cut -d' ' -f1 < "$T/rot.window")
last=$(cut -d' ' -f2 < "$T/rot.window")
wait_until 20 sh -c "[ \$(ls '$R' | grep -cE '^r\\.data\\.[0-9]{17}\$') -gt 600 ]"
sleep 0.5
kill -INT "$rec" 2> /dev/null
reap "$rec"
# The window's names still what they were; the recorder's files are the others.
changed=$(cd "$R" && for f in $(rotated "$R" r.data); do
	if [ "$f" \< "$first" ] || [ "$f" \> "$last" ]; then continue; fi
	ms=${f#r.data.}
	if [ $((1${ms#"${ms%???}"} % 2)) -eq 1 ]; then
		[ -L "$f" ] || echo "$f"
	else
		[ ! -L "$f" ] && [ "$(cat "$f")" = mine ] || echo "$f"
	fi
done)
ours=$(rotated "$R" r.data | awk -v a="$first" -v b="$last" '$0 < a || $0 > b')
nours=$(echo "$ours" | grep -c .)
note "window $first..$last; the recorder's files: $(echo $ours)"
if [ -z "$first" ]; then
	fail $name "the names could not be placed: $(head -1 "$T/rot.py.err")"
elif [ "$REAP_RC" -ne 0 ]; then
	fail $name "status $REAP_RC"
	show "$T/rot.err"
elif [ -n "$changed" ]; then
	fail $name "pre-placed names replaced or written: $(echo $changed | cut -c1-200)"
elif ! victim_ok; then
	fail $name "the links' target was written"
elif [ "$nours" -ne 2 ]; then
	fail $name "$nours rotated files of the recorder outside the window, expected 2 (SIGUSR2, SIGINT): $(echo $ours)"
	show "$T/rot.err"
elif ! (cd "$R" && for f in $ours; do complete "$R/$f" || exit 1; done); then
	fail $name "a rotated file does not read"
else
	pass $name
fi

# ---- a second recorder on the same name
name=integration/output_second_recorder
D=$T/two
mkdir -p "$D"
bg_start "$BPFSYM" record -a -q -F 49 --switch-output=1s --switch-max-files=3 -o "$D/r.data" 2> "$T/two.a.err"
rec=$BG_PID
data=$D/r.data
REC=$rec
wait_until 30 rec_started
run_to 60 "$BPFSYM" record -a -q -F 49 --switch-output=1s --switch-max-files=3 -d 2 -o "$D/r.data" 2> "$T/two.b.err"
rc2=$?
# Two switches of the first's after the second was refused, then the end: three files.
wait_until 30 sh -c "[ \$(ls '$D' | grep -cE '^r\\.data\\.[0-9]{17}\$') -ge 2 ]"
sleep 0.5
kill -INT "$rec" 2> /dev/null
reap "$rec"
files=$(rotated "$D" r.data)
bad=
for f in $files; do complete "$D/$f" || bad="$bad $f"; done
note "second: status $rc2: $(head -1 "$T/two.b.err"); first: status $REAP_RC, files $(echo $files)"
if [ $rc2 -ne 1 ] || ! grep -q "r.data' exists" "$T/two.b.err"; then
	fail $name "the second recorder: status $rc2, expected 1 and a line saying r.data exists"
	show "$T/two.b.err"
elif [ "$REAP_RC" -ne 0 ]; then
	fail $name "the first recorder: status $REAP_RC"
	show "$T/two.a.err"
elif [ -e "$D/r.data" ] || [ "$(echo "$files" | grep -c .)" -ne 3 ] || [ -n "$bad" ]; then
	fail $name "expected 3 complete rotated files and no r.data: $(ls "$D" | tr '\n' ' ')${bad:+; incomplete:$bad}"
else
	pass $name
fi

# ---- the directory held
name=integration/output_dir_held
mkdir -p "$T/dirA" "$T/dirB"
ln -s dirA "$T/cur"
bg_start "$BPFSYM" record -a -q -F 49 --switch-output=1s -o "$T/cur/r.data" 2> "$T/held.err"
rec=$BG_PID
data=$T/dirA/r.data
REC=$rec
wait_until 30 rec_started
ln -sfn dirB "$T/cur"
wait_until 10 sh -c "[ \$(ls '$T/dirA' | grep -cE '^r\\.data\\.[0-9]{17}\$') -ge 2 ]"
kill -INT "$rec" 2> /dev/null
reap "$rec"
na=$(rotated "$T/dirA" r.data | grep -c .)
note "held: status $REAP_RC; dirA: $(ls "$T/dirA" | tr '\n' ' '); dirB: $(ls "$T/dirB" | tr '\n' ' ')"
if [ "$REAP_RC" -ne 0 ]; then
	fail $name "status $REAP_RC"
	show "$T/held.err"
elif [ -n "$(ls "$T/dirB")" ] || [ "$na" -lt 3 ] || [ -e "$T/dirA/r.data" ]; then
	fail $name "files went astray: dirA has $(ls "$T/dirA" | tr '\n' ' '), dirB $(ls "$T/dirB" | tr '\n' ' ')"
else
	pass $name
fi

lib_done
