/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyproc: read another process's memory for pycode (a py_read_fn), sure
 * that the process read is the one a sample named, (pid, pstart), and
 * find the CPython interpreter a process maps.
 *
 * (pid, pstart) is bpfsym's identity of a process (include/bpfsym.h):
 * pstart is the group leader's start_boottime in ns.  /proc/PID/stat
 * says it in clock ticks (field 22, starttime = start_boottime /
 * (1e9 / CLK_TCK)), so a pid reused within the same tick would pass the
 * check: the reads also go through a pidfd taken before the check, and a
 * read counts only if that pidfd says the process has not exited after
 * it, so a pid reused after the check is never read as the one checked.
 *
 * These block (process_vm_readv on memory backed by a hung file, /proc
 * reads): call them from an offload job (base/offload.h), never on the
 * recorder's thread.  No libbpf here.
 */
#ifndef BPFSYM_PYPROC_H
#define BPFSYM_PYPROC_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/python/pyelf.h"

/* One process being read. */
struct pyproc {
	uint32_t pid;
	uint64_t pstart;
	int pidfd;
};

/*
 * Open (@pid, @pstart) for reading: 0; -ESRCH when the process is gone
 * or @pid is now another process (its start time is not @pstart's tick);
 * another -errno (-EPERM: not ours to read).  pyproc__close() after 0.
 */
int pyproc__open(struct pyproc *p, uint32_t pid, uint64_t pstart);
void pyproc__close(struct pyproc *p);

/*
 * A py_read_fn over @ctx, a struct pyproc opened: @len bytes at @addr.
 * 0; -ESRCH (the process exited, before or during the read); -EFAULT
 * (not mapped, or a short read); another -errno (-EPERM).
 */
int pyproc__read(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * The start time of process @pid as /proc/PID/stat says it, in ns (its
 * tick times 1e9 / CLK_TCK): what pyproc__open() compares a pstart with,
 * to the tick.  0 or -errno (-ESRCH: no such process).
 */
int pyproc__start_ns(uint32_t pid, uint64_t *ns);

/*
 * Whether the file @path (@len bytes, as a process names it) is named like
 * a CPython interpreter: its base name starts "python3." or "libpython3.".
 */
bool pyproc__interp_name(const char *path, size_t len);

/*
 * Find the CPython interpreter @pid maps: each file of /proc/PID/maps
 * named like one, opened through /proc/PID/map_files (the very file
 * mapped), probed (pyelf__probe) until one holds
 * an interpreter; its layout in *@l, its load bias in *@bias and its path
 * (as the process names it) in @path (@cap bytes).  0; -ENOENT with *@why
 * the reason of the last interpreter-like miss (PY_MISS_NOT_PYTHON when
 * no file looked like one); another -errno (-ESRCH, -EACCES).
 */
int pyproc__find_interp(uint32_t pid, struct py_layout *l, uint64_t *bias, char *path,
			size_t cap, enum py_miss *why);

#endif /* BPFSYM_PYPROC_H */
