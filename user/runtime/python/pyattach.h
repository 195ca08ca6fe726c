/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyattach: which processes run a CPython this recording can walk, found
 * at mapping time.  A process that maps a file named like an interpreter
 * (python3.X, libpython3.X.so...) is looked at once: on the offload pool
 * (its maps read and its interpreter probed, pyproc__find_interp: the
 * file is another user's, its file system may hang), never on the thread
 * that drains the ring buffer.  What is found goes two ways: to the BPF
 * walker (a struct bpfsym_py_proc, through the put callback) and to the
 * names (pyrt__set_interp).  A fork's child, which runs its parent's
 * image until it execs, is told its parent's interpreter at once.
 *
 * Not thread-safe: every call from the thread that feeds ingest.
 */
#ifndef BPFSYM_PYATTACH_H
#define BPFSYM_PYATTACH_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfsym.h"
#include "model/procmap.h"
#include "runtime/python/pyelf.h"

struct offload;
struct pyrt;
struct pyattach;

struct pyattach_opts {
	struct offload *pool;	/* where processes are looked at; NULL: here (tests) */
	struct pyrt *rt;	/* told each process's interpreter, for names; may be NULL */
	/*
	 * The BPF walker's entry for @pid: @e, or NULL to drop it (an exec,
	 * an exit).  0 or -errno (counted, not fatal).  May be NULL.
	 */
	int (*put)(void *ctx, uint32_t pid, const struct bpfsym_py_proc *e);
	void *ctx;
	uint64_t deadline_ns;	/* a look not done by then is given up; 0: 5 s */
	size_t max_jobs;	/* looks in flight at most; 0: 32 */
};

/* Counters, for -v and the tests. */
struct pyattach_stats {
	uint64_t looked;	/* processes looked at */
	uint64_t found;		/* ...running an interpreter we walk */
	uint64_t missed[PY_MISS__NR];	/* ...not, by reason (PY_MISS_NONE: the look failed) */
	uint64_t given_up;	/* looks past the deadline, or refused for want of a worker */
	uint64_t forked;	/* children told their parent's interpreter */
	uint64_t put_errors;	/* BPF entries not written */
};

/* NULL + errno. */
struct pyattach *pyattach__new(const struct pyattach_opts *o);

/* Free @a, giving up the looks in flight.  NULL is a no-op. */
void pyattach__free(struct pyattach *a);

/*
 * Whether @path (as a process names a mapped file) is named like a CPython
 * interpreter: its base name starts "python3." or "libpython3.".  Only
 * such files make a look: the probe decides, never the name.
 */
bool pyattach__looks_like(const char *path);

/*
 * Process @p gained mapping @m (in the model already).  Starts a look at
 * the process when @m's file is named like an interpreter and the process
 * has not been looked at; never blocks.
 */
void pyattach__mapped(struct pyattach *a, const struct proc *p, const struct mapping *m);

/* Child (@pid, @pstart) was forked from (@ppid, @ppstart): it runs the parent's interpreter. */
void pyattach__forked(struct pyattach *a, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart);

/* (@pid, @pstart) exec'd or exited: it runs none now (the next mapping may say otherwise). */
void pyattach__gone(struct pyattach *a, uint32_t pid, uint64_t pstart);

/*
 * Take the looks that ended: the processes found get their entries.  With
 * @wait_ns, wait that long at most for the looks still running (the
 * start-up snapshot's processes before the first samples).
 */
void pyattach__poll(struct pyattach *a, uint64_t wait_ns);

/*
 * The BPF entry of an interpreter @l loaded at @bias (what put receives):
 * 0, or -ERANGE when an offset is past what the walker reads
 * (BPFSYM_PY_READ): a layout the walker cannot use.
 */
int pyattach__entry(const struct py_layout *l, uint64_t bias, struct bpfsym_py_proc *e);

void pyattach__stats(const struct pyattach *a, struct pyattach_stats *st);

#endif /* BPFSYM_PYATTACH_H */
