#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run a command as root inside a Debian kernel (default: Debian 12's 6.1)
# under qemu, over this machine's root file system, and print its output:
#
#   tests/kernel/vm-run.sh ./bpfsym -v -a -d 2
#   tests/kernel/vm-run.sh 'bpftool feature probe kernel | grep -i bpf_loop'
#
# The arguments are joined into one shell command line (as ssh does), run
# in the current directory.  The exit status is the command's; 124 when
# the VM was killed at TIMEOUT, 125 when it ended without the command's
# status (a panic, an init failure: the console's tail is printed).
#
# Why a VM over the host's root: the test tools, the build and the
# checkout are all there at the same paths, so nothing is copied; the root
# is shared read-only (9p) with tmpfs on the directories tests write
# (tests/kernel/init says why not an overlay), so whatever the command
# writes stays in the VM.  Environment:
#   KERNEL     the linux-image package (tests/kernel/kernel.sh)
#   ACCEL      auto (default: KVM when it reaches init within KVM_PROBE
#              seconds, else TCG, remembered in build/kernel/kvm-broken),
#              kvm or tcg; the command sees BPFSYM_VM_ACCEL=kvm|tcg
#   TIMEOUT    seconds before the VM is killed (3600)
#   VM_CPUS, VM_MEM   -smp and -m (2, 4G)
#   VM_ENV     names of more variables to pass in (TESTS, BPFSYM,
#              ASAN_OPTIONS, UBSAN_OPTIONS always are, when set)
#   VM_APPEND  more kernel command line
#   VERBOSE=1  print the whole console, kernel boot included
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$(pwd)
TIMEOUT=${TIMEOUT:-3600}
KVM_PROBE=${KVM_PROBE:-30}
ACCEL=${ACCEL:-auto}
VERBOSE=${VERBOSE:-0}
msg() { echo "vm-run: $*" >&2; }
[ $# -gt 0 ] || { msg "usage: tests/kernel/vm-run.sh CMD [ARG...]"; exit 2; }
case "$top" in
*[[:space:]]*) msg "the checkout's path has a space, which the kernel command line cannot carry: $top"; exit 2 ;;
esac

kdir=$(sh "$top/tests/kernel/kernel.sh") || exit 2
run=$(mktemp -d "$top/build/kernel/run.XXXXXX") || exit 2
log=$run/console.log
qpid=
trap '[ -n "$qpid" ] && kill $qpid 2>/dev/null; rm -rf "$run"' EXIT
trap 'exit 130' INT TERM

# The command, with the variables it should see (quoted for sh).
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	echo "cd $(q "$here") || exit 1"
	for v in TESTS BPFSYM ASAN_OPTIONS UBSAN_OPTIONS ${VM_ENV:-}; do
		eval "isset=\${$v+1} val=\${$v-}"
		[ -n "$isset" ] && echo "export $v=$(q "$val")"
	done
	echo "$*"
} > "$run/cmd"
# The host's cgroup layout (hybrid here: a tmpfs of v1 controllers and
# cgroup2 at /sys/fs/cgroup/unified), for init to mount the same.
awk '$3 == "cgroup" || $3 == "cgroup2" || ($3 == "tmpfs" && $2 == "/sys/fs/cgroup") { print $3, $2, $4 }' \
	/proc/self/mounts > "$run/mounts"

boot() {	# boot ACCEL: start qemu in the background, console into $log
	accel=$1
	# Under TCG the kernel finds the vCPUs' TSCs unsynchronized and falls
	# back to the HPET, whose every read (clock_gettime, each timer tick)
	# is an emulated MMIO: tsc=reliable keeps the TSC, as a real machine
	# has, and makes the tests' busy loops 2-3x faster.
	# One host thread runs every vCPU (TCG_THREAD=multi: one each): with
	# a thread each, 6.1 twice stopped a CPU for good at a jump label
	# being patched as a test attached its tracepoints (a soft lockup in
	# syscall_trace_enter, RIP at the patched nop), which real CPUs and
	# single-threaded TCG, whose vCPUs never run at once, do not do.
	case $accel in
	kvm) a="-accel kvm -cpu host" k= ;;
	*) a="-accel tcg,thread=${TCG_THREAD:-single} -cpu max" k=tsc=reliable ;;
	esac
	: > "$log"
	# panic=-1 with -no-reboot: a panic ends qemu at once; and a soft
	# lockup (a CPU stuck in the kernel, as a BPF program gone wrong can
	# do) is one, with its stack on the console, not a wait for TIMEOUT.
	# shellcheck disable=SC2086
	qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot $a \
		-smp "${VM_CPUS:-2}" -m "${VM_MEM:-4G}" \
		-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.img" \
		-append "console=ttyS0 panic=-1 softlockup_panic=1 quiet bpfsym.top=$top bpfsym.run=$run bpfsym.kmod=$kdir/root/lib/modules/$(cat "$kdir/extracted") bpfsym.accel=$accel $k ${VM_APPEND:-}" \
		-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
		-serial "file:$log" -monitor none < /dev/null > "$run/qemu.err" 2>&1 &
	qpid=$!
	t0=$(date +%s)
}
seen() { grep -q "^bpfsym-vm: $1" "$log" 2>/dev/null; }

broken=$top/build/kernel/kvm-broken
if [ "$ACCEL" = auto ]; then
	ACCEL=tcg
	if [ -w /dev/kvm ] && [ "$(cat "$broken" 2>/dev/null)" != "$(uname -r)" ]; then
		boot kvm
		while ! seen init && kill -0 $qpid 2>/dev/null && [ $(($(date +%s) - t0)) -lt "$KVM_PROBE" ]; do
			sleep 0.2
		done
		if seen init; then
			ACCEL=kvm
		else
			kill $qpid 2>/dev/null
			wait $qpid 2>/dev/null
			why=$(grep -m1 -v 'terminating on signal' "$run/qemu.err")
			msg "KVM did not reach init (${why:-no marker in $KVM_PROBE s}): using TCG (remembered in build/kernel/kvm-broken)"
			uname -r > "$broken"
		fi
	fi
fi
[ "$ACCEL" = kvm ] && [ -n "$qpid" ] || boot "$ACCEL"
msg "$(basename "$kdir") ($ACCEL, ${VM_CPUS:-2} CPUs, ${VM_MEM:-4G}): $*"

# The console, live: the command's lines (all of it with VERBOSE=1), and
# an init's failure or a panic.
tail -s 0.2 -n +1 -f --pid=$qpid "$log" | tr -d '\r' | awk -v all="$VERBOSE" '
	/^bpfsym-vm: start$/ { on = 1; if (all != 1) next }
	/^bpfsym-vm: exit [0-9]+$/ { on = 0; if (all != 1) next }
	all == 1 || on || /^bpfsym-vm: (init failed|warning)/ || /Kernel panic/ { print; fflush() }' &
spid=$!
booted= timedout=0
while kill -0 $qpid 2>/dev/null; do
	now=$(date +%s)
	[ -z "$booted" ] && seen start && booted=$((now - t0))
	if [ $((now - t0)) -ge "$TIMEOUT" ]; then
		timedout=1
		kill $qpid
		break
	fi
	sleep 0.2
done
wait $qpid 2>/dev/null
wait $spid
qpid=
total=$(($(date +%s) - t0))
cp "$log" "$top/build/kernel/last-console.log"
rc=$(tr -d '\r' < "$log" | sed -n 's/^bpfsym-vm: exit \([0-9]*\)$/\1/p' | tail -1)
if [ $timedout = 1 ]; then
	msg "TIMEOUT: killed the VM after $TIMEOUT s ($ACCEL; console: build/kernel/last-console.log)"
	exit 124
elif [ -z "$rc" ]; then
	[ "$VERBOSE" = 1 ] || tr -d '\r' < "$log" | tail -n 40 >&2
	[ -s "$run/qemu.err" ] && cat "$run/qemu.err" >&2
	msg "the VM ended without the command's exit status after $total s ($ACCEL; console: build/kernel/last-console.log)"
	exit 125
fi
msg "$ACCEL: booted in ${booted:-?} s, exit status $rc after $total s"
exit "$rc"
