/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * offload: blocking calls run on worker threads, waited for with a
 * deadline, so that a thread that must not block (the recorder's, which
 * drains the ring buffer) never waits on a file that does not answer.
 *
 * A file on FUSE (or NFS, or a device that hangs) can leave an open() or
 * a read() waiting for ever, and once a FUSE daemon has read the request
 * not even SIGKILL ends the wait.  So the work on such a file is a job:
 * run() on a worker, its results kept in the job; the caller waits up to
 * its deadline and, if run() has not returned, goes on.  It may look
 * again later (offload__wait with a zero timeout: a file slow to read is
 * adopted once read) or give the job up (offload__abandon: drop() frees
 * the results when run() finally returns, on the worker).
 *
 * A job starts at once on an idle worker or on a new one, never queued
 * behind another job: at most max_threads workers live, so with all of
 * them busy (stuck on files that never answer) a job is refused at once
 * (-EAGAIN, counted), the cost of such files being bounded in threads, not
 * in waiting.  Time spent waiting in vain (waits that ended in a timeout)
 * is capped per second by a budget: past it, a wait takes at most
 * OFFLOAD_MIN_WAIT_NS (a file that answers still does, in time).
 *
 * Workers block every signal, so a SIGINT or SIGTERM goes to the thread
 * that polls; at offload__free() idle workers are joined and busy ones
 * left to finish (or to end with the process: a worker stuck in a FUSE
 * wait keeps the process from being reaped until the file system answers
 * or goes, which no userspace can change).  Uses only libc (pthreads).
 */
#ifndef BPFSYM_OFFLOAD_H
#define BPFSYM_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

struct offload;

struct offload_job {
	/* The blocking work, on a worker; its results go into the job. */
	void (*run)(struct offload_job *j);
	/* Free the job and its results: it was given up.  On the worker, or in offload__abandon(). */
	void (*drop)(struct offload_job *j);
	/* Private to offload.c. */
	int state;
	struct offload_worker *w;
};

#define OFFLOAD_DEFAULT_THREADS		8
#define OFFLOAD_DEFAULT_BUDGET_NS	250000000ull	/* a quarter of each second */
#define OFFLOAD_MIN_WAIT_NS		25000000ull	/* what a wait gets past the budget */

struct offload_opts {
	unsigned int max_threads;	/* workers alive at most; 0: OFFLOAD_DEFAULT_THREADS */
	uint64_t budget_ns;		/* vain waiting per second; 0: OFFLOAD_DEFAULT_BUDGET_NS */
	/*
	 * Called first on each new worker (may be NULL): a worker may start
	 * before the recorder drops its capabilities, and a thread's own are
	 * changed only by itself (base/privdrop.h).
	 */
	void (*thread_start)(void);
};

struct offload_stats {
	uint64_t jobs;		/* started */
	uint64_t timeouts;	/* waits that ended before their job did */
	uint64_t refused;	/* jobs refused: every worker busy (-EAGAIN) */
	uint64_t over_budget;	/* waits cut short by the budget */
	uint64_t abandoned;	/* jobs given up before they ended */
	uint64_t late;		/* ...of which ended later, dropped on their worker */
	uint64_t threads;	/* workers alive now */
	uint64_t busy;		/* ...running a job now */
};

/* A pool with no worker yet (they start with the first jobs).  NULL + errno. */
struct offload *offload__new(const struct offload_opts *o);

/*
 * Free @p: idle workers are joined; a busy one, whose job must have been
 * abandoned (no job of @p may still be the caller's), is left to finish
 * it, drop it and end, the last one freeing what is left of @p.  NULL is
 * a no-op.
 */
void offload__free(struct offload *p);

/*
 * Start @j on a worker now.  0: started, @j is running (wait for it or
 * abandon it); -EAGAIN: every worker busy, max_threads reached (counted);
 * -errno: no thread could be made.  On error @j was not run and is the
 * caller's as before.
 */
int offload__submit(struct offload *p, struct offload_job *j);

/*
 * Wait at most @timeout_ns (and at most what is left of this second's
 * budget, or OFFLOAD_MIN_WAIT_NS past it) for started job @j.  0: run() returned, @j and its results are
 * the caller's again and @p has forgotten it; -ETIMEDOUT: still running,
 * still the caller's to wait for again or abandon.
 */
int offload__wait(struct offload *p, struct offload_job *j, uint64_t timeout_ns);

/*
 * offload__wait() for a thread that may wait (one that builds tables, not
 * the one draining the ring buffer): the same, but its waits in vain are
 * neither cut by nor charged to the per-second budget, which is the
 * recorder thread's.
 */
int offload__wait_long(struct offload *p, struct offload_job *j, uint64_t timeout_ns);

/*
 * Whether started job @j looks stuck rather than slow: its worker's
 * thread used no CPU time in the last @stall_ns of calls with @w (zeroed
 * before the first).  A large file on a loaded machine (or under TCG)
 * keeps a worker busy, so its clock moves; a read that a file system does
 * not answer (FUSE, a dead NFS server) leaves it still.  A job no longer
 * running is not stuck.  @now_ns is CLOCK_MONOTONIC.
 */
struct offload_watch {
	uint64_t cpu_ns;	/* the worker's CPU time last seen */
	uint64_t moved_ns;	/* when it was last seen to grow (0: never looked) */
};
bool offload__stalled(struct offload *p, const struct offload_job *j, struct offload_watch *w,
		      uint64_t now_ns, uint64_t stall_ns);

/* Give up started job @j: dropped now when it has ended, else when it ends. */
void offload__abandon(struct offload *p, struct offload_job *j);

/*
 * Submit @j and wait for it: 0 (done, the caller's), -ETIMEDOUT (still
 * running, the caller's to wait for or abandon), or submit's errors.  With
 * @p NULL, run() is called here and 0 returned: no pool, no offloading.
 */
int offload__run(struct offload *p, struct offload_job *j, uint64_t timeout_ns);

/* The counters now. */
void offload__stats(struct offload *p, struct offload_stats *st);

#endif /* BPFSYM_OFFLOAD_H */
