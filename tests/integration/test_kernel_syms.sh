#!/bin/sh
# Kernel frames of a syscall-heavy process resolve to /proc/kallsyms names.
#
# The fixture sysheavy.c spends most of its time in read(/dev/zero),
# write(/dev/null) and getppid().  Every kernel frame ("NAME_[k]") of its
# folded stacks must be a symbol of /proc/kallsyms; there must be several
# distinct ones, including the syscall entry path; in each stack the kernel
# frames must come after (leafward of) the user frames, and the entry path
# must be rootward of the syscall's own functions.
. "$(dirname "$0")/lib.sh"
lib_init integration/kernel_syms_in_kallsyms integration/kernel_syscall_path integration/kernel_stack_order

if [ ! -r /proc/kallsyms ]; then
	skip_all "/proc/kallsyms is not readable"
fi
if ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	skip_all "/proc/kallsyms shows only zero addresses (kptr_restrict)"
fi
need_fixture sysheavy sysheavy

bg_start "$T/sysheavy" 30
sys=$BG_PID
wait_until 5 alive "$sys"
run_to 60 "$BPFSYM" record -p "$sys" -F 999 -d 2 -o "$T/k.data" -q 2> "$T/record.err"
rc=$?
stop "$sys"

if ! record_ok integration/kernel_syms_in_kallsyms "$T/k.data" "$T/record.err" $rc ||
   ! folded integration/kernel_syms_in_kallsyms "$T/k.data" "$T/folded"; then
	fail integration/kernel_syscall_path "no bpfsym recording to read"
	fail integration/kernel_stack_order "no bpfsym recording to read"
	lib_done
fi
note "bpfsym record: $(cat "$T/record.err")"

# Kernel frames of the fixture's stacks, "NAME COUNT", +0x offsets stripped.
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
END { for (k in c) print k, c[k] }' "$T/folded" > "$T/kframes"
samples=$(folded_count "$T/folded" '^sysheavy;')
kstacks=$(folded_count "$T/folded" '^sysheavy;.*_\\[k\\]$')
distinct=$(nlines "$T/kframes")
note "sysheavy: $samples samples, $kstacks with a kernel leaf, $distinct distinct kernel frames"

# ---- every kernel frame is a kallsyms name
name=integration/kernel_syms_in_kallsyms
awk 'NR == FNR { known[$3] = 1; next } !($1 in known) { print }' /proc/kallsyms "$T/kframes" > "$T/unknown"
if [ "$samples" -lt 100 ]; then
	# ~2000 on a free CPU.
	fail "$name" "only $samples samples of the fixture at -F 999 -d 2"
elif [ "$kstacks" -lt $((samples / 2)) ]; then
	# perf puts ~95% of this fixture's samples in the kernel.
	fail "$name" "only $kstacks of $samples samples end in a kernel frame"
elif [ "$distinct" -lt 5 ]; then
	fail "$name" "only $distinct distinct kernel frames"
	show "$T/kframes"
elif [ -s "$T/unknown" ]; then
	fail "$name" "$(nlines "$T/unknown") kernel frames are not in /proc/kallsyms, e.g. '$(head -1 "$T/unknown" | cut -d' ' -f1)'"
	sort -k2,2nr "$T/unknown" | show
else
	pass "$name"
fi

# ---- the syscall entry path and the syscalls themselves are there
name=integration/kernel_syscall_path
entry=$(folded_count "$T/folded" '^sysheavy;.*;(entry_SYSCALL_64[a-z_]*|do_syscall_64|x64_sys_call)_\\[k\\];')
calls=$(folded_count "$T/folded" '^sysheavy;.*;(ksys_read|ksys_write|vfs_read|vfs_write|read_zero|write_null|__x64_sys_read|__x64_sys_write|__x64_sys_getppid|__do_sys_getppid|__task_pid_nr_ns)_\\[k\\]')
note "kernel stacks through the entry path: $entry; through read/write/getppid: $calls"
if [ "$entry" -lt $((kstacks / 2)) ] || [ "$entry" -eq 0 ]; then
	# Nearly every kernel sample of this fixture is inside a syscall.
	fail "$name" "the syscall entry path (entry_SYSCALL_64*, do_syscall_64) is in $entry of $kstacks kernel stacks"
	sort -k2,2nr "$T/kframes" | head -20 | show
elif [ "$calls" -lt $((kstacks / 2)) ]; then
	fail "$name" "read/write/getppid kernel functions are in only $calls of $kstacks kernel stacks"
	sort -k2,2nr "$T/kframes" | head -20 | show
else
	pass "$name"
fi

# ---- order: user frames rootward, kernel frames leafward; entry before
# do_syscall_64 before the syscall's functions.
name=integration/kernel_stack_order
awk '
{
	stack = substr($0, 1, length($0) - length($NF) - 1)
	n = split(stack, f, ";")
	if (f[1] != "sysheavy")
		next
	seen_k = 0; e = 0; d = 0; v = 0
	for (i = 2; i <= n; i++) {
		if (f[i] ~ /_\[k\]$/)
			seen_k = 1
		else if (seen_k) {
			print "user frame after a kernel frame: " stack
			next
		}
		if (f[i] ~ /^entry_SYSCALL_64/) e = i
		if (f[i] == "do_syscall_64_[k]") d = i
		if (f[i] ~ /^(ksys_read|ksys_write|vfs_read|vfs_write|read_zero|write_null)_\[k\]$/ && !v) v = i
	}
	if ((e && d && e > d) || (d && v && d > v))
		print "entry path out of order: " stack
}' "$T/folded" > "$T/disorder"
if [ "$kstacks" -eq 0 ]; then
	fail "$name" "no kernel stacks to check"
elif [ -s "$T/disorder" ]; then
	fail "$name" "$(nlines "$T/disorder") stacks out of order, e.g. $(head -1 "$T/disorder")"
	show "$T/disorder"
else
	pass "$name"
fi

lib_done
