/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyrt: the Python runtime's state for one recording, everything
 * runtime/runtime.h's name_frame() and proc_gone() need, so that the
 * runtime_ops adapter is a few lines: the interpreter of each process
 * (its layout and load bias, said by whoever found it at mapping time),
 * the cache of code objects read (pycache.h), and the reads themselves,
 * jobs on the offload pool (base/offload.h) so that the recorder's thread
 * never waits on another process's memory.
 *
 * Not thread-safe: every call from the thread that feeds ingest.
 */
#ifndef BPFSYM_PYRT_H
#define BPFSYM_PYRT_H

#include <stdint.h>

#include "runtime/python/pycache.h"
#include "runtime/python/pyelf.h"

struct offload;
struct pyrt;

struct pyrt_opts {
	struct offload *pool;	/* the reads' workers; NULL: read here (tests, report-time) */
	size_t max_entries;	/* the cache's; 0: pycache's default */
	size_t max_jobs;	/* reads in flight at most; 0: 64 */
	uint64_t deadline_ns;	/* a read not done by then is a miss, -ETIME; 0: 5 s */
};

/*
 * Why a frame was not named, for runtime.h's enum rt_miss: the same
 * numbers (GONE 1, VERSION 2, INVALID 3, READ 4, NO_ANSWER 5), so the
 * adapter passes them through.
 */
enum pyrt_miss {
	PYRT_MISS_NONE = 0,
	PYRT_MISS_GONE = 1,		/* -ESRCH: the process exited (or its pid is another's) */
	PYRT_MISS_VERSION = 2,		/* -EPROTONOSUPPORT: no supported interpreter known for it */
	PYRT_MISS_INVALID = 3,		/* -EINVAL: not the code object BPF saw */
	PYRT_MISS_READ = 4,		/* -EFAULT, -EPERM, others: the read failed */
	PYRT_MISS_NO_ANSWER = 5,	/* -ETIME, -EBUSY: no answer by the deadline, or no worker */
};

/* A new runtime state; @o may be NULL (defaults).  NULL + errno. */
struct pyrt *pyrt__new(const struct pyrt_opts *o);

/* Free @rt, giving up the reads still running.  NULL is a no-op. */
void pyrt__free(struct pyrt *rt);

/*
 * Process (@pid, @pstart) runs the interpreter @l (a layout pyelf__probe
 * gave), loaded at @bias.  0, -ENOMEM, or -E2BIG (65536 processes known).
 * Said again, the new one holds.
 */
int pyrt__set_interp(struct pyrt *rt, uint32_t pid, uint64_t pstart, const struct py_layout *l,
		     uint64_t bias);

/*
 * Name the frame BPF sampled in (@pid, @pstart): the code object at
 * @code, its co_firstlineno @firstlineno, instruction @index.  0 with
 * *@out filled: a name (out->err 0), or a miss (out->err < 0, its reason
 * by pyrt__miss(out->err)); or -EAGAIN: the read is running, ask again
 * (the same frame) later.  Never blocks.
 */
int pyrt__name(struct pyrt *rt, uint32_t pid, uint64_t pstart, uint64_t code,
	       uint32_t firstlineno, uint32_t index, struct py_name *out);

/* (@pid, @pstart) exited: forget its interpreter, its names and its reads. */
void pyrt__proc_gone(struct pyrt *rt, uint32_t pid, uint64_t pstart);

/* The reason of a miss whose error is @err (struct py_name.err). */
enum pyrt_miss pyrt__miss(int err);

#endif /* BPFSYM_PYRT_H */
