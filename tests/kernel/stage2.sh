#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# PID 1 of the test VM once tests/kernel/init has switched to the
# host's root (read-only, tmpfs where tests write): runs RUN/cmd (written by vm-run.sh) on the serial
# console, prints its exit status as "bpfsym-vm: exit N" for vm-run.sh,
# and powers the VM off.  The shell reaps orphans as PID 1 must: while it
# waits for the command, its waitpid(-1) also collects them.
run=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
# kvm or tcg: speed-measuring tests may skip themselves under tcg.
BPFSYM_VM_ACCEL=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^bpfsym\.accel=//p')
export BPFSYM_VM_ACCEL
# What systemd would load on first use on a real machine: loop devices
# (losetup needs /dev/loop-control) and ext4 for test_faults' image.
modprobe -a -q loop ext4 2>/dev/null
echo "bpfsym-vm: start"
sh "$run/cmd" < /dev/null
rc=$?
echo "bpfsym-vm: exit $rc"
sync
echo o > /proc/sysrq-trigger
sleep 60
