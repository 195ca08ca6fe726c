#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report` on files it does not trust, as a user who does not own them.
#
# report_bomb_rss: tests/fixtures/report_bomb.c writes files of a few KiB
#   whose one record, repeated and squeezed by zstd, stands for millions
#   (the 6.2 KB file that read as 5 M samples, 231 MiB): SAMPLE, MODULE,
#   STACK and CGROUP records, at 64 MiB of records (the old cap) and at
#   sizes around the new ones.  Each is read or refused with one line, and
#   the peak RSS (/usr/bin/time) over that of a small file of the same kind
#   stays under the file's bound (docs/FORMAT.md, "Reader limits": 128
#   bytes per file byte + 4 MiB), an eighth more for ASan's shadow.
# report_other_user: a recording root made, 0644 in a root-owned
#   directory, read by nobody (setpriv, no capabilities): exit 0, the same
#   table root gets; under strace, the file opened read-only and read once
#   (no more bytes than it has), nothing opened for writing or created,
#   written only to stdout and stderr, the working directory left empty.
# report_unreadable: the same file 0600: nobody gets one line naming the
#   file and why, exit 1.
. "$(dirname "$0")/lib.sh"
lib_init integration/report_bomb_rss integration/report_other_user integration/report_unreadable

for tool in setpriv strace /usr/bin/time; do
	command -v "$tool" > /dev/null 2>&1 || skip_all "'$tool' not installed"
done
need_fixture report_bomb report_bomb -lzstd

# rss_of FILE: the peak RSS in KiB of `bpfsym report FILE` in $RSS, its status in $RSS_RC,
# its stderr in $T/rss.err.  ASan's quarantine off: memory freed is then
# memory given back, as without ASan.
rss_of() {
	ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" \
		/usr/bin/time -f %M -o "$T/rss.txt" "$BPFSYM" report "$1" > /dev/null 2> "$T/rss.err"
	RSS_RC=$?
	RSS=$(tail -n 1 "$T/rss.txt")
}

rss_ok=1
for kind in samples modules stacks cgroups offcpu; do
	"$T/report_bomb" "$T/base.data" "$kind" 16 > /dev/null || fail_all "report_bomb $kind failed"
	rss_of "$T/base.data"
	base=$RSS
	if [ "$RSS_RC" -ne 0 ]; then
		fail integration/report_bomb_rss "a small $kind file was refused: $(head -n 1 "$T/rss.err")"
		rss_ok=0
		continue
	fi
	for kib in 65536 400 1300; do
		size=$("$T/report_bomb" "$T/bomb.data" "$kind" "$kib") || fail_all "report_bomb $kind $kib failed"
		rss_of "$T/bomb.data"
		rss=$RSS
		lines=$(wc -l < "$T/rss.err")
		bound=$(( (size * 128 + 4194304) / 1024 ))
		note "$kind, $kib KiB of records in $size bytes: exit $RSS_RC, RSS $rss KiB (small file: $base), bound $bound KiB"
		if [ "$RSS_RC" -gt 1 ] || { [ "$RSS_RC" -eq 1 ] && [ "$lines" -ne 1 ]; }; then
			fail integration/report_bomb_rss "$kind $kib KiB: exit $RSS_RC, $lines lines on stderr"
			show "$T/rss.err"
			rss_ok=0
		elif [ $((rss - base)) -gt $((bound + bound / 8)) ]; then
			fail integration/report_bomb_rss "$kind $kib KiB in $size bytes: $rss KiB, $((rss - base)) over a small file's, bound $bound KiB"
			rss_ok=0
		fi
	done
done
[ "$rss_ok" = 1 ] && pass integration/report_bomb_rss

# Someone else's recording: root's, in a directory of root's that everyone may enter.
D=$(mktemp -d /tmp/bpfsym-hostile.XXXXXX) || fail_all "mktemp failed"
LIB_CLEANUP="rm -rf '$D'"
chmod 755 "$D"
mkdir "$D/cwd" && chown nobody "$D/cwd"
"$BPFSYM" record -F 999 -o "$D/root.data" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' \
	> "$T/record.out" 2>&1 || { show "$T/record.out"; fail_all "recording the file failed"; }
chmod 644 "$D/root.data"
"$BPFSYM" report "$D/root.data" > "$T/root.table" 2> "$T/root.err" || fail_all "root could not read its file"

# As nobody, no capabilities, no groups, from a directory nobody owns; leaks not checked under strace.
as_nobody() {
	(cd "$D/cwd" && ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
		strace -f -qq -o "$T/trace" -e trace=open,openat,openat2,creat,close,read,pread64,readv,write,writev,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,truncate,ftruncate \
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all \
		"$BPFSYM" report "$D/root.data")
}

as_nobody > "$T/nobody.table" 2> "$T/nobody.err"
rc=$?
size=$(stat -c %s "$D/root.data")
# The trace: how the file was opened, its fd's bytes read, anything opened to write or made.
awk -v path="$D/root.data" '
	$2 ~ /^(open|openat|openat2|creat)\(/ && index($0, "\"" path "\"") {
		opens++; if ($0 !~ /O_RDONLY/ || $0 ~ /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/) badopen++
		n = split($0, a, " = "); fd[$1 " " a[n] + 0] = 1
	}
	$2 ~ /^(open|openat|openat2|creat)\(/ && $0 ~ /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/ && $0 !~ / = -1 / { writers++ }
	$2 ~ /^(mkdir|mkdirat|rename|renameat|renameat2|unlink|unlinkat|truncate|ftruncate)\(/ && $0 !~ / = -1 / { changes++ }
	$2 ~ /^close\(/ { split($2, b, /[()]/); delete fd[$1 " " b[2]] }
	$2 ~ /^(read|pread64|readv)\(/ {
		split($2, b, /[(,]/); n = split($0, a, " = ")
		if (($1 " " b[2]) in fd && a[n] + 0 > 0) bytes += a[n]
	}
	$2 ~ /^(write|writev)\(/ { split($2, b, /[(,]/); if (b[2] != 1 && b[2] != 2) otherwrites++ }
	END { printf "%d %d %d %d %d %d\n", opens, badopen, bytes, writers, changes, otherwrites }
' "$T/trace" > "$T/trace.sum"
read -r opens badopen bytes writers changes otherwrites < "$T/trace.sum"
note "as nobody: exit $rc; the file opened $opens times ($badopen not read-only), $bytes of its $size bytes read; $writers opens to write, $changes changes, $otherwrites writes elsewhere"
if [ "$rc" -ne 0 ]; then
	fail integration/report_other_user "exit $rc: $(head -n 1 "$T/nobody.err")"
elif ! cmp -s "$T/root.table" "$T/nobody.table"; then
	fail integration/report_other_user "nobody's table differs from root's"
	diff "$T/root.table" "$T/nobody.table" | show
elif [ "$opens" -ne 1 ] || [ "$badopen" -ne 0 ] || [ "$bytes" -ne "$size" ]; then
	fail integration/report_other_user "the file opened $opens times ($badopen not read-only), $bytes of $size bytes read"
elif [ "$writers" -ne 0 ] || [ "$changes" -ne 0 ] || [ "$otherwrites" -ne 0 ]; then
	fail integration/report_other_user "$writers opens to write, $changes changes to files, $otherwrites writes to other fds"
	grep -E 'O_WRONLY|O_RDWR|O_CREAT|mkdir|rename|unlink|truncate' "$T/trace" | show
elif [ -n "$(ls -A "$D/cwd")" ]; then
	fail integration/report_other_user "files left in the working directory: $(ls -A "$D/cwd")"
else
	pass integration/report_other_user
fi

chmod 600 "$D/root.data"
(cd "$D/cwd" && setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all \
	"$BPFSYM" report "$D/root.data") > "$T/denied.out" 2> "$T/denied.err"
rc=$?
if [ "$rc" -ne 1 ]; then
	fail integration/report_unreadable "exit $rc, expected 1"
elif [ "$(wc -l < "$T/denied.err")" -ne 1 ] || ! grep -q "'$D/root.data'.*Permission denied" "$T/denied.err"; then
	fail integration/report_unreadable "stderr is not one line naming the file and why"
	show "$T/denied.err"
elif [ -s "$T/denied.out" ]; then
	fail integration/report_unreadable "something printed on stdout"
else
	pass integration/report_unreadable
fi
lib_done
