#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kernel frames of a syscall-heavy process resolve to /proc/kallsyms names,
# and its kernel call paths are the ones `perf record -g` sees.
#
# The fixture sysheavy.c spends most of its time in read(/dev/zero),
# write(/dev/null) and getppid().  perf record -g and bpfsym record sample
# it at the same time, at the same rate: perf is the oracle for which
# kernel paths this machine's kernel takes (they differ between builds of
# one kernel series: mitigations, what is inlined), /proc/kallsyms of this
# boot for the names.
#
#   kernel_syms_in_kallsyms  every kernel frame ("NAME_[k]") is a symbol of
#       /proc/kallsyms; bpfsym has at least half of perf's samples, its share
#       of stacks with a kernel leaf is within 10 points of perf's, and it
#       has as many distinct kernel functions as perf's main ones (>= 1%)
#   kernel_syscall_path  each kernel path (the first 3 kernel frames from the
#       syscall entry, and the whole path) that perf sees in >= 10% of the
#       stacks has the same share in bpfsym's, within 8 points
#   kernel_stack_order  in every stack the kernel frames are leafward of the
#       user frames, and every kernel path bpfsym has in >= 5% of its stacks
#       is one perf has too (same functions, same order)
. "$(dirname "$0")/lib.sh"
lib_init integration/kernel_syms_in_kallsyms integration/kernel_syscall_path integration/kernel_stack_order

command -v perf > /dev/null 2>&1 || skip_all "perf is not installed (the oracle)"

if [ ! -r /proc/kallsyms ]; then
	skip_all "/proc/kallsyms is not readable"
fi
if ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	skip_all "/proc/kallsyms shows only zero addresses (kptr_restrict)"
fi
need_fixture sysheavy sysheavy

# kpaths FOLDED DEPTH: over sysheavy's stacks with a kernel frame, the
# kernel part root first, cut to DEPTH frames (0: whole), offsets dropped:
# "PATH COUNT" lines, then "TOTAL COUNT".
kpaths() {
	awk -v depth="$2" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		if (f[1] != "sysheavy")
			next
		path = ""; d = 0
		for (i = 2; i <= k; i++) {
			if (f[i] !~ /_\[k\]$/)
				continue
			if (depth && d == depth)
				break
			fn = substr(f[i], 1, length(f[i]) - 4)
			sub(/\+0x[0-9a-fA-F]+$/, "", fn)
			path = path (d++ ? ";" : "") fn
		}
		if (path == "")
			next
		c[path] += n
		total += n
	}
	END {
		for (p in c)
			print p, c[p]
		print "TOTAL", total + 0
	}' "$1"
}

# perf_folded PERFDATA OUT: perf's samples as folded stacks in bpfsym's
# spelling ("COMM;ROOT;...;LEAF 1", kernel frames NAME_[k]).
perf_folded() {
	perf script -i "$1" -F comm,ip,sym 2> "$2.err" | awk '
	function flush() {
		if (comm == "")
			return
		line = comm
		for (i = nf; i >= 1; i--)
			line = line ";" fr[i]
		print line, 1
		comm = ""
	}
	/^[^ \t]/ { flush(); comm = $0; sub(/[ \t]+$/, "", comm); nf = 0; next }
	/^[ \t]/ && comm != "" {
		ip = $1
		sym = $2
		for (i = 3; i <= NF; i++)
			sym = sym " " $i
		sub(/\+0x[0-9a-f]+$/, "", sym)
		# 64-bit kernel addresses: 16 digits from ffff8...
		if (length(ip) == 16 && ip ~ /^ffff[89a-f]/)
			sym = sym "_[k]"
		fr[++nf] = sym
		next
	}
	END { flush() }' > "$2"
}

# A round: bpfsym samples sysheavy, perf record -g samples it at the same
# time inside bpfsym's window (started after bpfsym samples, stopped
# before it), until sysheavy had RCPU ms of CPU time since perf started;
# twice as much while perf (the oracle) has too few samples to compare
# shares.
bg_start "$T/sysheavy" 600
sys=$BG_PID
wait_until 5 alive "$sys"
REC_FREQ=999
rcpu=750
while :; do
	prc=1 rc=1 psamples=0
	if ! bg_record "$T/k.data" -p "$sys"; then
		note "the recording did not start (no output file within 30 s)"
		show "$T/k.data.err"
		break
	fi
	bg_start perf record -q -g -e cpu-clock -F 999 -p "$sys" -o "$T/perf.data" 2> "$T/perf.err"
	perf=$BG_PID
	wait_until 30 file_nonempty "$T/perf.data"
	cpu_wait $rcpu "$CPU_WAIT_MAX" "$sys"
	kill -INT "$perf" 2>/dev/null
	reap "$perf"
	prc=$REAP_RC
	# perf record ends with 130 on SIGINT, its data complete.
	[ "$prc" -eq 130 ] && prc=0
	end_record
	rc=$REC_RC
	cp "$T/k.data.err" "$T/record.err"
	perf_folded "$T/perf.data" "$T/perf.folded"
	psamples=$(folded_count "$T/perf.folded" '^sysheavy;')
	note "round of $rcpu ms of sysheavy's CPU time ($CPU_GOT ms): perf status $prc, $psamples samples of sysheavy; bpfsym status $rc"
	if [ "$psamples" -ge 500 ] || [ "$rcpu" -ge 6000 ] || [ "$rc" -ne 0 ]; then
		break
	fi
	rcpu=$((rcpu * 2))
done
stop "$sys"

if [ "$prc" -ne 0 ] || [ "$psamples" -lt 200 ]; then
	# The oracle itself failed: that is not bpfsym's doing, but nothing is checked.
	for t in $LIB_TESTS; do
		fail "$t" "perf record -g got only $psamples samples of sysheavy in $rcpu ms of its CPU time (status $prc): no oracle"
	done
	show "$T/perf.err"
	lib_done
fi
if ! record_ok integration/kernel_syms_in_kallsyms "$T/k.data" "$T/record.err" $rc ||
   ! folded integration/kernel_syms_in_kallsyms "$T/k.data" "$T/folded"; then
	fail integration/kernel_syscall_path "no bpfsym recording to read"
	fail integration/kernel_stack_order "no bpfsym recording to read"
	lib_done
fi
note "bpfsym record: $(cat "$T/record.err")"

# Kernel frames of the fixture's stacks, "NAME COUNT", +0x offsets stripped.
kframes() {
	awk '
	{
		stack = substr($0, 1, length($0) - length($NF) - 1)
		n = split(stack, f, ";")
		if (f[1] != "sysheavy")
			next
		for (i = 2; i <= n; i++)
			if (f[i] ~ /_\[k\]$/) {
				k = substr(f[i], 1, length(f[i]) - 4)
				sub(/\+0x[0-9a-fA-F]+$/, "", k)
				c[k] += $NF
			}
	}
	END { for (k in c) print k, c[k] }' "$1"
}
kframes "$T/folded" > "$T/kframes"
kframes "$T/perf.folded" > "$T/perf.kframes"
samples=$(folded_count "$T/folded" '^sysheavy;')
kstacks=$(folded_count "$T/folded" '^sysheavy;.*_\\[k\\]$')
pkstacks=$(folded_count "$T/perf.folded" '^sysheavy;.*_\\[k\\]$')
distinct=$(nlines "$T/kframes")
# perf's main kernel functions: in at least 1% of its stacks.
pdistinct=$(awk -v t="$psamples" '100 * $2 >= t' "$T/perf.kframes" | awk 'END { print NR }')
note "sysheavy: bpfsym $samples samples, $kstacks with a kernel leaf, $distinct distinct kernel frames;" \
	"perf $psamples, $pkstacks, $pdistinct in >= 1% of its stacks"

# ---- every kernel frame is a kallsyms name
name=integration/kernel_syms_in_kallsyms
awk 'NR == FNR { known[$3] = 1; next } !($1 in known) { print }' /proc/kallsyms "$T/kframes" > "$T/unknown"
kshare=$(pct "$kstacks" "$samples")
pkshare=$(pct "$pkstacks" "$psamples")
if [ $((2 * samples)) -lt "$psamples" ]; then
	fail "$name" "only $samples samples of the fixture where perf, sampling it at the same rate at the same time, has $psamples"
elif ! fcmp "$(awk -v a="$kshare" -v b="$pkshare" 'BEGIN { d = a - b; print (d < 0 ? -d : d) }')" le 10; then
	fail "$name" "$kshare% of bpfsym's stacks end in a kernel frame, $pkshare% of perf's"
elif [ "$distinct" -lt "$pdistinct" ]; then
	fail "$name" "only $distinct distinct kernel frames where perf has $pdistinct in >= 1% of its stacks"
	show "$T/kframes"
elif [ -s "$T/unknown" ]; then
	fail "$name" "$(nlines "$T/unknown") kernel frames are not in /proc/kallsyms, e.g. '$(head -1 "$T/unknown" | cut -d' ' -f1)'"
	sort -k2,2nr "$T/unknown" | show
else
	pass "$name"
fi

# ---- the kernel paths perf sees, in the same shares
# cmp_paths DEPTH: "PATH PERF% BPFSYM%" for each path with >= 10% of
# perf's kernel stacks, into $T/paths.DEPTH.
cmp_paths() {
	kpaths "$T/perf.folded" "$1" > "$T/perf.kpaths.$1"
	kpaths "$T/folded" "$1" > "$T/kpaths.$1"
	awk '
	NR == FNR { if ($1 == "TOTAL") pt = $2; else p[$1] = $2; next }
	{ if ($1 == "TOTAL") bt = $2; else b[$1] = $2 }
	END {
		for (k in p)
			if (pt > 0 && 100 * p[k] >= 10 * pt)
				printf "%s %.1f %.1f\n", k, 100 * p[k] / pt, (bt > 0 ? 100 * b[k] / bt : 0)
	}' "$T/perf.kpaths.$1" "$T/kpaths.$1" | sort -k2,2nr > "$T/paths.$1"
}
name=integration/kernel_syscall_path
cmp_paths 3
cmp_paths 0
cat "$T/paths.3" "$T/paths.0" | show
off=$(cat "$T/paths.3" "$T/paths.0" | awk '{ d = $2 - $3; if (d < 0) d = -d; if (d > 8) print }')
if [ ! -s "$T/paths.3" ]; then
	fail "$name" "perf has no kernel path in 10% of its stacks: nothing to compare"
elif [ -n "$off" ]; then
	fail "$name" "kernel paths whose share differs from perf's by more than 8 points (path perf% bpfsym%): $(echo "$off" | head -3 | tr '\n' ' ')"
else
	pass "$name"
fi

# ---- order: user frames rootward, kernel frames leafward; and the paths
# bpfsym shows are ones the kernel really takes (perf's), in that order.
name=integration/kernel_stack_order
awk '
{
	stack = substr($0, 1, length($0) - length($NF) - 1)
	n = split(stack, f, ";")
	if (f[1] != "sysheavy")
		next
	seen_k = 0
	for (i = 2; i <= n; i++) {
		if (f[i] ~ /_\[k\]$/)
			seen_k = 1
		else if (seen_k) {
			print "user frame after a kernel frame: " stack
			next
		}
	}
}' "$T/folded" > "$T/disorder"
awk '
NR == FNR { if ($1 != "TOTAL") p[$1] = 1; next }
$1 == "TOTAL" { next }
{ b[$1] = $2; bt += $2 }
END {
	for (k in b)
		if (100 * b[k] >= 5 * bt && !(k in p))
			print "kernel path perf never saw: " k " (" b[k] " stacks)"
}' "$T/perf.kpaths.0" "$T/kpaths.0" >> "$T/disorder"
if [ "$kstacks" -eq 0 ]; then
	fail "$name" "no kernel stacks to check"
elif [ -s "$T/disorder" ]; then
	fail "$name" "$(nlines "$T/disorder") stacks out of order, e.g. $(head -1 "$T/disorder")"
	show "$T/disorder"
else
	pass "$name"
fi

lib_done
