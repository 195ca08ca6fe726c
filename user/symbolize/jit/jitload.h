/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jitload: the blocking part of reading a JIT's symbol file (its open
 * inside the process's root, its reads) as an offload job, so that a perf
 * map on a mount that never answers (a container's /tmp on FUSE or NFS)
 * does not stop the thread that drains the ring buffer.
 *
 * The job borrows the file's reader (perfmap.c's or jitdump.c's, which
 * parse incrementally) while it runs: jitmap.c does not look names up in
 * a reader whose job is running.  Given up (the process dropped, the
 * recording ending), the job owns the reader and frees it when its read
 * returns, on its worker.
 */
#ifndef BPFSYM_JITLOAD_H
#define BPFSYM_JITLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/offload.h"

struct perfmap_reader;
struct jitdump_reader;

struct jit_job {
	struct offload_job job;		/* first */
	/* What it needs: copies, and the borrowed reader. */
	char *proc_root, *path;
	uint32_t pid;
	uint64_t dev, ino;		/* the file it must be (0, 0: a perf map looked for first) */
	int fd;				/* a dup of the file's fd, or -1: opened by the job */
	struct perfmap_reader *pm;	/* one of the two, or neither: open only */
	struct jitdump_reader *jd;
	bool owns;			/* given up: the job frees the reader */
	/* What it made. */
	int open_err;			/* 0, or why the file could not be (re)opened */
	int new_fd;			/* the fd it opened (the caller's to keep), or -1 */
	struct stat st;			/* ...and what it is */
	int err;			/* the read's result */
};

/*
 * Open @path, a file process @pid's user wrote for us (its perf map, a
 * jitdump), inside the process's root (@proc_root/PID/root): through no
 * symlink, owned by that user (whom /proc/PID belongs to), not writable
 * by others (fileid__open_owned).  The fd with *@st, or -errno (-ELOOP,
 * -EPERM: refused; -ESRCH: the process is gone).
 */
int jitload__open_owned(const char *proc_root, uint32_t pid, const char *path, struct stat *st);

/*
 * A job reading what the file @path of process @pid gained since the
 * last read into @pm or @jd (lent), through @fd (consumed: a dup the job
 * closes) or, when @fd is -1, a fresh open checked against (@dev, @ino)
 * unless both are 0.  NULL on ENOMEM (@fd closed).
 */
struct jit_job *jit_job__new(const char *proc_root, uint32_t pid, const char *path, uint64_t dev,
			     uint64_t ino, int fd, struct perfmap_reader *pm, struct jitdump_reader *jd);

/* Free @j, done (not running): its fds, not the reader unless it owns it. */
void jit_job__free(struct jit_job *j);

#endif /* BPFSYM_JITLOAD_H */
