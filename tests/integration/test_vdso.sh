#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The vdso: code the kernel maps into every process, with no file behind
# it.  It is a whole ELF image in memory; the symbolizer reads its own copy
# (the same image in every process of the ABI) and names [vdso] frames.
#
# Which vdso code is hot depends on the machine: the clock source (tsc,
# kvm-clock, hyperv) picks the reader, and on some builds that reader is a
# helper with no symbol of its own.  So the expectations come from the
# running machine: the image is read out of the sampled process
# (/proc/PID/mem) with its symbols (nm), and perf record -g samples the same
# process at the same time.
#
#   vdso_names   every [vdso] frame bpfsym shows is named as the image's own
#                symbols say: the symbol covering its address (an alias of
#                it), or no name ("[unknown]", [vdso+0x..] in folded stacks)
#                where no symbol covers it; and bpfsym has at least half as
#                many samples with a vdso leaf as perf
#   vdso_unnamed_share
#                of the samples with a vdso leaf, the share without a name
#                is perf's within 10 points, and the report header counts
#                those frames as unnamed ("outside any symbol")
. "$(dirname "$0")/lib.sh"
lib_init integration/vdso_names integration/vdso_unnamed_share

command -v perf > /dev/null 2>&1 || skip_all "perf is not installed (the oracle)"
for tool in nm dd; do
	command -v $tool > /dev/null 2>&1 || skip_all "'$tool' is not installed (binutils, coreutils)"
done
need_fixture vdso_burn vdso_burn
grep -q '\[vdso\]' /proc/self/maps || skip_all "no vdso in this kernel's processes"

bg_start "$T/vdso_burn" 600
burn=$BG_PID
# The pid is env's (bg_start) until it execs vdso_burn: its [vdso] moves then.
burn_started() {
	[ "$(cat "/proc/$burn/comm" 2> /dev/null)" = vdso_burn ] && grep -q '\[vdso\]' "/proc/$burn/maps"
}
wait_until 5 burn_started || fail_all "vdso_burn did not start"

# ---- the oracle: the process's own vdso image and its function symbols,
# "START END NAME" (offsets in the image, which is linked at 0).
range=$(awk '/\[vdso\]$/ { print $1; exit }' "/proc/$burn/maps")
vstart=$((0x${range%-*}))
vend=$((0x${range#*-}))
dd if="/proc/$burn/mem" of="$T/vdso.img" bs=4096 skip=$((vstart / 4096)) \
	count=$(((vend - vstart) / 4096)) 2> "$T/dd.err"
{ nm -S --defined-only "$T/vdso.img" 2> /dev/null; nm -D -S --defined-only "$T/vdso.img" 2> /dev/null; } |
awk 'NF == 4 && $3 ~ /^[TtWwi]$/ { name = $4; sub(/@.*/, "", name); print $1, $2, name }' |
while read -r v sz n; do
	echo "$((0x$v)) $((0x$v + 0x$sz)) $n"
done | sort -u > "$T/vdso.syms"
note "vdso of pid $burn at 0x${range%-*}, $((vend - vstart)) bytes, $(nlines "$T/vdso.syms") function symbols"
if [ ! -s "$T/vdso.syms" ]; then
	for t in $LIB_TESTS; do
		fail "$t" "no function symbols in the process's vdso image (nm): no oracle"
	done
	show "$T/dd.err"
	lib_done
fi

# script_leaves SCRIPT: for each sample of vdso_burn, its first user frame
# (the leaf when the sample hit user mode or a syscall from it):
# "DSO ADDR NAME" (NAME without +0x..).
script_leaves() {
	awk '
	/^[^ \t]/ { want = ($1 == "vdso_burn"); next }
	want && /^[ \t]/ {
		if (length($1) == 16 && $1 ~ /^ffff[89a-f]/)
			next		# kernel frame
		dso = $NF
		gsub(/[()]/, "", dso)
		name = $2
		sub(/\+0x[0-9a-f]+$/, "", name)
		print dso, $1, name
		want = 0
	}' "$1"
}

# Rounds of perf and bpfsym on the same process at the same time: bpfsym
# samples first, perf starts after it and stops before it (bpfsym's window
# holds perf's), once the process had RCPU ms of CPU time since perf
# started; twice as much while perf (the oracle) has too few samples with
# a vdso leaf.
REC_FREQ=499
rcpu=1000
while :; do
	prc=1 rc=1 pv=0
	if ! bg_record "$T/v.data" -p "$burn"; then
		note "the recording did not start (no output file within 30 s)"
		show "$T/v.data.err"
		break
	fi
	bg_start perf record -q -g -e cpu-clock -F 499 -p "$burn" -o "$T/perf.data" 2> "$T/perf.err"
	perf=$BG_PID
	wait_until 30 file_nonempty "$T/perf.data"
	cpu_wait $rcpu "$CPU_WAIT_MAX" "$burn"
	kill -INT "$perf" 2>/dev/null
	reap "$perf"
	prc=$REAP_RC
	# perf record ends with 130 on SIGINT, its data complete.
	[ "$prc" -eq 130 ] && prc=0
	end_record
	rc=$REC_RC
	cp "$T/v.data.err" "$T/v.err"
	perf script -i "$T/perf.data" -F comm,ip,sym,dso > "$T/perf.script" 2> "$T/perf-script.err"
	script_leaves "$T/perf.script" > "$T/perf.leaves"
	pv=$(awk '$1 == "[vdso]"' "$T/perf.leaves" | awk 'END { print NR }')
	note "round of $rcpu ms of CPU time ($CPU_GOT ms): perf status $prc, $pv samples with a vdso leaf; bpfsym status $rc"
	if [ "$pv" -ge 200 ] || [ "$rcpu" -ge 8000 ] || [ "$rc" -ne 0 ]; then
		break
	fi
	rcpu=$((rcpu * 2))
done
stop "$burn"

if [ "$prc" -ne 0 ] || [ "$pv" -lt 50 ]; then
	for t in $LIB_TESTS; do
		fail "$t" "perf record -g got only $pv samples with a vdso leaf in $rcpu ms of the process's CPU time (status $prc): no oracle"
	done
	show "$T/perf.err"
	lib_done
fi
if ! record_ok integration/vdso_names "$T/v.data" "$T/v.err" $rc; then
	fail integration/vdso_unnamed_share "no bpfsym recording to read"
	lib_done
fi
run_to 60 "$BPFSYM" report "$T/v.data" --perf-script > "$T/v.script" 2> "$T/v.script.err"
src=$?
run_to 60 "$BPFSYM" report "$T/v.data" > "$T/v.report" 2> "$T/v.report.err"
rrc=$?
if [ $src -ne 0 ] || [ $rrc -ne 0 ]; then
	fail integration/vdso_names "bpfsym report exited with status $src (--perf-script), $rrc (table)"
	fail integration/vdso_unnamed_share "no report to read"
	show "$T/v.script.err"
	lib_done
fi
script_leaves "$T/v.script" > "$T/v.leaves"

# ---- every vdso frame named as the image's symbols say.  Leaves are looked
# up at their address, callers at the address before (return addresses),
# as perf and bpfsym both do.
name=integration/vdso_names
awk '
NR == FNR { s[++n] = $1; e[n] = $2; nm[n] = $3; next }
/^[^ \t]/ { first = 1; want = ($1 == "vdso_burn"); next }
!want || !/^[ \t]/ { next }
{
	if (length($1) == 16 && $1 ~ /^ffff[89a-f]/)
		next
	dso = $NF
	gsub(/[()]/, "", dso)
	leaf = first
	first = 0
	if (dso != "[vdso]")
		next
	a = 0
	h = tolower($1)
	for (i = 1; i <= length(h); i++)
		a = a * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	if (!leaf)
		a--
	got = $2
	sub(/\+0x[0-9a-f]+$/, "", got)
	want_any = ""
	ok = 0
	for (i = 1; i <= n; i++)
		if (s[i] <= a && a < e[i]) {
			want_any = want_any (want_any == "" ? "" : "|") nm[i]
			if (nm[i] == got)
				ok = 1
		}
	frames++
	if (want_any == "" ? got == "[unknown]" : ok)
		next
	bad++
	if (bad <= 5)
		printf "0x%x: bpfsym says %s, the image says %s\n", a, got, want_any == "" ? "no symbol" : want_any
}
END { printf "%d frames, %d misnamed\n", frames, bad }' "$T/vdso.syms" "$T/v.script" > "$T/v.check"
bv=$(awk '$1 == "[vdso]"' "$T/v.leaves" | awk 'END { print NR }')
misnamed=$(tail -1 "$T/v.check" | awk '{ print $3 }')
note "$name: bpfsym $(tail -1 "$T/v.check") ($bv samples with a vdso leaf; perf $pv)"
if [ "$bv" -lt $((pv / 2)) ]; then
	fail "$name" "only $bv samples with a vdso leaf where perf, on the same process at the same time, has $pv"
	awk '{ print $1, $3 }' "$T/v.leaves" | sort | uniq -c | sort -nr | head | show
elif [ "$misnamed" != 0 ]; then
	fail "$name" "$misnamed vdso frames named otherwise than the image's symbols say"
	show "$T/v.check"
else
	pass "$name"
fi

# ---- the unnamed share is perf's, and the header counts it
name=integration/vdso_unnamed_share
bu=$(awk '$1 == "[vdso]" && $3 == "[unknown]"' "$T/v.leaves" | awk 'END { print NR }')
pu=$(awk '$1 == "[vdso]" && $3 == "[unknown]"' "$T/perf.leaves" | awk 'END { print NR }')
bshare=$(pct "$bu" "$bv")
pshare=$(pct "$pu" "$pv")
# "# unnamed frames: 4.2% of 12345 (..., outside any symbol 3.0%, ...)"
hline=$(grep '^# unnamed frames:' "$T/v.report" | head -1)
hframes=$(echo "$hline" | sed -n 's/^# unnamed frames: [^ ]* of \([0-9][0-9]*\).*/\1/p')
houtside=$(echo "$hline" | sed -n 's/.*outside any symbol \([0-9.]*\)%.*/\1/p')
note "$name: unnamed vdso leaves: bpfsym $bu of $bv ($bshare%), perf $pu of $pv ($pshare%); header: $hline"
if ! fcmp "$(awk -v a="$bshare" -v b="$pshare" 'BEGIN { d = a - b; print (d < 0 ? -d : d) }')" le 10; then
	fail "$name" "$bshare% of bpfsym's vdso leaves have no name, $pshare% of perf's"
elif [ "$bu" -gt 0 ] && [ -z "$houtside" ]; then
	fail "$name" "$bu vdso leaves without a name, but the header does not count frames outside any symbol: $hline"
elif [ "$bu" -gt 0 ] && ! fcmp "$(awk -v p="$houtside" -v n="$hframes" 'BEGIN { print p * n / 100 + n / 2000 + 1 }')" ge "$bu"; then
	fail "$name" "the header counts $houtside% of $hframes frames outside any symbol, fewer than the $bu unnamed vdso leaves"
else
	pass "$name"
fi
lib_done
