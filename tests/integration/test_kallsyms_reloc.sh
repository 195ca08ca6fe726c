#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --kallsyms FILE`: kernel frames named again from another
# kallsyms text, relocated by FILE's _text - the recorded _text (KASLR).
#
# The syscall-heavy fixture is recorded; a copy of /proc/kallsyms with
# every address moved by +0x20000000 stands for another boot.  Through it
# the report must be the same as without it; with some names changed in
# the copy the report must show the new names (it re-resolved, it did not
# keep the recorded ones); with a copy that covers none of the frames they
# must be unnamed, counted as "no mapping"; an all-zero copy, a copy
# without _text and a recording without _text are refused in one line.
. "$(dirname "$0")/lib.sh"
lib_init integration/kallsyms_reloc_same integration/kallsyms_reloc_renamed \
	integration/kallsyms_reloc_uncovered integration/kallsyms_reloc_refusals

SHIFT=0x20000000

if [ ! -r /proc/kallsyms ]; then
	skip_all "/proc/kallsyms is not readable"
fi
if ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	skip_all "/proc/kallsyms shows only zero addresses (kptr_restrict)"
fi
if ! command -v perl >/dev/null 2>&1; then
	skip_all "'perl' not installed (64-bit address arithmetic)"
fi
need_fixture sysheavy sysheavy

# kallsyms_edit IN OUT: copy kallsyms text IN to OUT, every address plus
# $SHIFT, keeping each line's format; names listed in $RENAME ("old=new
# ...") renamed, names in $DROP removed; with ZERO=1 every address is 0.
kallsyms_edit() {
	RENAME=${RENAME:-} DROP=${DROP:-} ZERO=${ZERO:-0} SHIFT=$SHIFT perl -e '
		no warnings "portable";
		my $shift = hex($ENV{SHIFT});
		my %ren = map { split /=/, $_, 2 } split " ", $ENV{RENAME};
		my %drop = map { $_ => 1 } split " ", $ENV{DROP};
		while (my $l = <STDIN>) {
			# "%016lx %c %s" then an optional "\t[module]": only the
			# address and a name change, the rest is kept byte for byte.
			my ($a, $t, $n, $rest) = $l =~ /^([0-9a-f]+) (\S) (\S+)(.*)$/s or die "bad line: $l";
			next if $drop{$n};
			$n = $ren{$n} if exists $ren{$n};
			$a = $ENV{ZERO} ? "0" x length($a) : sprintf("%0*x", length($a), hex($a) + $shift);
			print "$a $t $n$rest";
		}' < "$1" > "$2"
}

# Recorded until sysheavy had 0.75 s of CPU time (~750 samples at 999 Hz,
# most in system calls), however busy the machine.
bg_start "$T/sysheavy" 600
sys=$BG_PID
wait_until 5 alive "$sys"
REC_FREQ=999
if cpu_record "$T/k.data" 750 "$sys" -p "$sys"; then
	rc=$REC_RC
else
	rc=1
fi
mv "$T/k.data.err" "$T/record.err" 2>/dev/null
stop "$sys"
# The same boot's text, after the recording: the names the recorder saw.
cat /proc/kallsyms > "$T/kallsyms.now"

if ! record_ok integration/kallsyms_reloc_same "$T/k.data" "$T/record.err" $rc ||
   ! folded integration/kallsyms_reloc_same "$T/k.data" "$T/plain"; then
	for t in renamed uncovered refusals; do
		fail integration/kallsyms_reloc_$t "no bpfsym recording to read"
	done
	lib_done
fi
note "bpfsym record: $(cat "$T/record.err"); sysheavy had $REC_CPU ms of CPU time"

kallsyms_edit "$T/kallsyms.now" "$T/kallsyms.shifted"
text_now=$(awk '$3 == "_text" { print $1; exit }' "$T/kallsyms.now")
text_shifted=$(awk '$3 == "_text" { print $1; exit }' "$T/kallsyms.shifted")
note "_text $text_now, in the shifted copy $text_shifted"

# Kernel frames of the plain output, "NAME COUNT", most frequent first.
awk '
{
	stack = substr($0, 1, length($0) - length($NF) - 1)
	n = split(stack, f, ";")
	for (i = 2; i <= n; i++)
		if (f[i] ~ /_\[k\]$/ && f[i] != "[unknown]_[k]")
			c[substr(f[i], 1, length(f[i]) - 4)] += $NF
}
END { for (k in c) print k, c[k] }' "$T/plain" | sort -k2,2nr -k1,1 > "$T/kframes"
distinct=$(nlines "$T/kframes")

# report_ok NAME OUT ARGS...: `bpfsym report ARGS > OUT`; FAIL NAME unless status 0.
report_ok() {
	name=$1 out=$2
	shift 2
	run_to 60 "$BPFSYM" report "$@" > "$out" 2> "$out.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "bpfsym report $* exited with status $rc"
		show "$out.err"
		return 1
	fi
	return 0
}

# ---- through a moved copy of the same text: the same report
name=integration/kallsyms_reloc_same
ksamples=$(folded_count "$T/plain" '^sysheavy;')
if ! cpu_enough "$name" sysheavy "$REC_CPU" 750 || ! samples_ok "$name" sysheavy "$ksamples" "$REC_CPU" 999; then
	:
elif [ "$distinct" -lt 5 ]; then
	fail "$name" "only $distinct distinct named kernel frames to re-resolve"
	show "$T/plain"
elif report_ok "$name" "$T/shifted" "$T/k.data" --kallsyms "$T/kallsyms.shifted" --folded &&
     report_ok "$name" "$T/table.plain" "$T/k.data" --limit 0 &&
     report_ok "$name" "$T/table.shifted" "$T/k.data" --limit 0 --kallsyms "$T/kallsyms.shifted"; then
	want="# kernel symbols: from $T/kallsyms.shifted, relocated by +$SHIFT from the recorded _text 0x$(echo "$text_now" | sed 's/^0*//')"
	if ! cmp -s "$T/plain" "$T/shifted"; then
		fail "$name" "--folded differs through the shifted copy"
		diff "$T/plain" "$T/shifted" | show
	elif ! grep -qxF "$want" "$T/table.shifted"; then
		fail "$name" "the table does not say where kernel names came from: expected '$want'"
		grep '^#' "$T/table.shifted" | show
	elif [ "$(grep -v '^#' "$T/table.plain")" != "$(grep -v '^#' "$T/table.shifted")" ]; then
		fail "$name" "the table's rows differ through the shifted copy"
		diff "$T/table.plain" "$T/table.shifted" | show
	else
		pass "$name"
		note "$distinct distinct kernel frames, the same through a copy moved by $SHIFT"
	fi
fi

# ---- renamed in the copy: the new names show, so it really re-resolved
name=integration/kallsyms_reloc_renamed
# Names that are alone at their address and in the file: renaming one
# cannot change which alias a lookup prefers.
awk '$2 ~ /^[tTwW]$/ { n[$3]++; a[$1]++; at[$3] = $1; if (NF > 3) mod[$3] = 1 }
     END { for (k in n) if (n[k] == 1 && a[at[k]] == 1 && !(k in mod)) print k }' \
	"$T/kallsyms.now" > "$T/unique"
awk 'NR == FNR { u[$1] = 1; next } ($1 in u) { print $1 }' "$T/unique" "$T/kframes" | head -3 > "$T/victims"
renames=$(awk '{ printf "%s%s=zz_renamed_%s", (NR > 1 ? " " : ""), $1, $1 }' "$T/victims")
if [ "$(nlines "$T/victims")" -lt 3 ]; then
	fail "$name" "fewer than 3 kernel frames with a name of their own to rename"
	show "$T/kframes"
else
	RENAME=$renames kallsyms_edit "$T/kallsyms.now" "$T/kallsyms.renamed"
	# The plain output with those frames renamed, sorted (the order may change).
	awk -v ren="$renames" '
	BEGIN { n = split(ren, r, " "); for (i = 1; i <= n; i++) { split(r[i], p, "="); to[p[1] "_[k]"] = p[2] "_[k]" } }
	{
		cnt = $NF
		stack = substr($0, 1, length($0) - length(cnt) - 1)
		m = split(stack, f, ";")
		out = f[1]
		for (i = 2; i <= m; i++)
			out = out ";" ((f[i] in to) ? to[f[i]] : f[i])
		print out, cnt
	}' "$T/plain" | sort > "$T/renamed.want"
	if report_ok "$name" "$T/renamed.out" "$T/k.data" --folded --kallsyms "$T/kallsyms.renamed"; then
		sort "$T/renamed.out" > "$T/renamed.got"
		if ! cmp -s "$T/renamed.want" "$T/renamed.got"; then
			fail "$name" "renamed symbols ($renames) not shown as expected"
			diff "$T/renamed.want" "$T/renamed.got" | show
		elif ! grep -q 'zz_renamed_' "$T/renamed.got"; then
			fail "$name" "no renamed frame in the output"
		else
			pass "$name"
			note "renamed and shown: $renames"
		fi
	fi
fi

# ---- a copy covering no frame (only _text): unnamed, counted, never stale
name=integration/kallsyms_reloc_uncovered
grep -E '^[0-9a-f]+ T _text$' "$T/kallsyms.shifted" > "$T/kallsyms.textonly"
if report_ok "$name" "$T/uncovered" "$T/k.data" --folded --kallsyms "$T/kallsyms.textonly" &&
   report_ok "$name" "$T/uncovered.table" "$T/k.data" --kallsyms "$T/kallsyms.textonly"; then
	# _text alone covers its first 4 KiB; nothing of the syscall path is there.
	awk '{ n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
	       for (i = 2; i <= n; i++) if (f[i] ~ /_\[k\]$/ && f[i] != "[unknown]_[k]" && f[i] != "_text_[k]") print f[i] }' \
		"$T/uncovered" | sort -u > "$T/stale"
	unk=$(folded_count "$T/uncovered" '\\[unknown\\]_\\[k\\]')
	total=$(folded_count "$T/plain" '.')
	got=$(folded_count "$T/uncovered" '.')
	if [ -s "$T/stale" ]; then
		fail "$name" "kernel names kept that the text does not have, e.g. $(head -1 "$T/stale")"
		show "$T/stale"
	elif [ "$unk" -eq 0 ]; then
		fail "$name" "no unnamed kernel frame"
	elif [ "$got" -ne "$total" ]; then
		fail "$name" "$got samples in the output, $total without --kallsyms"
	elif ! grep -Eq '^# unnamed frames: [<0-9.]+% of [0-9]+ \(.*no mapping [<0-9.]+%' "$T/uncovered.table"; then
		fail "$name" "the table does not count the unnamed kernel frames as 'no mapping'"
		grep '^#' "$T/uncovered.table" | show
	else
		pass "$name"
		note "$unk of $total samples with an unnamed kernel frame; $(grep '^# unnamed' "$T/uncovered.table")"
	fi
fi

# ---- refusals: exit 1, nothing on stdout, one line naming the problem
name=integration/kallsyms_reloc_refusals
ZERO=1 kallsyms_edit "$T/kallsyms.now" "$T/kallsyms.zero"
grep -v -E '^[0-9a-f]+ [A-Za-z] _text$' "$T/kallsyms.shifted" > "$T/kallsyms.notext"
run_to 60 "$BPFSYM" record -p 1 --user-only -F 99 -d 0.5 -o "$T/user.data" -q 2> "$T/user.err"
urc=$?
failed=0
# refused WHAT PATTERN DATA FILE: the report must fail with one stderr line matching PATTERN.
refused() {
	run_to 60 "$BPFSYM" report "$3" --folded --kallsyms "$4" > "$T/ref.out" 2> "$T/ref.err"
	rc=$?
	if [ $rc -ne 1 ] || [ -s "$T/ref.out" ] || [ "$(nlines "$T/ref.err")" -ne 1 ] ||
	   ! grep -q -- "$2" "$T/ref.err"; then
		fail "$name" "$1: status $rc (want 1), $(nlines "$T/ref.out") lines out, stderr: $(head -3 "$T/ref.err")"
		failed=1
	else
		note "$1: $(cat "$T/ref.err")"
	fi
}
refused "all-zero addresses" "kptr_restrict" "$T/k.data" "$T/kallsyms.zero"
refused "no _text" "no _text" "$T/k.data" "$T/kallsyms.notext"
refused "missing file" "No such file" "$T/k.data" "$T/does-not-exist"
if [ $urc -ne 0 ]; then
	fail "$name" "bpfsym record --user-only exited with status $urc"
	show "$T/user.err"
	failed=1
else
	refused "a recording without _text" "no kernel _text" "$T/user.data" "$T/kallsyms.shifted"
fi
[ $failed -eq 0 ] && pass "$name"

lib_done
