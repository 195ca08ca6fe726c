#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-cgroup.sh DIR: seed inputs for fuzz_cgroup: a byte picking the
# cgroup looked up, then /proc/PID/cgroup or mountinfo text: a cgroup v2
# machine's, a hybrid one's (v1 lines first), a process outside our
# cgroup namespace ("/../x"), paths with "..", spaces and "0::" in them,
# and this machine's own files.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
mkdir -p "$d" || exit 1
i=0
# seed BYTE TEXT: TEXT with \n escapes, after the byte BYTE.
seed() {
	i=$((i + 1))
	{ printf '%b' "\\0$(printf %03o "$1")"; printf '%b' "$2"; } > "$d/s$i"
}
seed 1 '0::/a\n'
seed 2 '12:pids:/a/b\n1:name=systemd:/a/b\n0::/a/b\n'
seed 3 '0::/a/b/c'
seed 4 '0::/sp ace\n'
seed 5 '0::/..x\n'
seed 6 '0::/x..\n'
seed 7 '0::/0::\n0::/a\n'
seed 2 '0::/a/../a/b\n'
seed 2 '0::/a//b/./\n'
seed 0 '0::/\n'
seed 8 '0::/../outside\n'
seed 8 '0::/..\n'
seed 1 '0::a\n0::/a\n'
seed 1 '1:cpu:/a\n\n0::\n'
seed 0 '25 1 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n'
seed 0 '30 25 0:26 /sub /mnt/cg rw - cgroup2 cgroup2 rw\n31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n'
seed 0 '40 1 0:30 / /my\\040mount rw - cgroup2 none rw\n41 1 0:31 / - cgroup2\n'
{ printf '\001'; cat /proc/self/cgroup; } > "$d/self" 2>/dev/null || rm -f "$d/self"
{ printf '\000'; head -c 8000 /proc/self/mountinfo; } > "$d/mountinfo" 2>/dev/null || rm -f "$d/mountinfo"
exit 0
