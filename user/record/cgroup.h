/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cgroup: the cgroup v2 directory `-G PATH` names, and whether a process is
 * in it or below it.  No libbpf here.
 */
#ifndef BPFSYM_CGROUP_H
#define BPFSYM_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/*
 * -G PATH: a cgroup v2 directory, absolute or relative to the unified
 * hierarchy (/sys/fs/cgroup/unified on hybrid machines, else /sys/fs/cgroup).
 * Returns an open fd (the caller closes it) and the cgroup's path in the
 * hierarchy, "/a/b", in @rel (@rel_len bytes), or -1 after printing why.
 */
int cgroup__open(const char *path, char *rel, size_t rel_len);

/* Whether process @pid is in cgroup @rel ("/a/b") or below it, from /proc/PID/cgroup. */
int cgroup__has_pid(const char *rel, uint32_t pid);

#endif /* BPFSYM_CGROUP_H */
