/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwinder_int: the unwinder's insides, shared by unwinder.c (the build
 * worker, publishing, views) and unwtabs.c (table ids, row space,
 * references, eviction).  Not a public interface.
 */
#ifndef BPFSYM_UNWINDER_INT_H
#define BPFSYM_UNWINDER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/lru.h"
#include "unwind/unwinder.h"

#define NAME_LEN 96	/* of a job, for log lines */
#define UNW_HUNG_DEVS 16	/* file systems remembered as not answering (the oldest forgotten) */
#define UNW_LATE_MAX 4		/* builds no longer waited for, still running (the builders' pool: 4) */
#define UNW_PARKED_MAX 64	/* files waiting for their file system's late build */

struct build;

/* A build given up waiting for (unwbuild.c): taken if it ends. */
struct unw_late {
	struct build *b;	/* NULL: a free slot */
	uint32_t id;
	uint64_t dev;
	char name[NAME_LEN];
};

struct file_key {
	uint64_t dev, ino;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
};

/* A table id's state.  Everything but key is under unwinder.lock. */
struct utab {
	struct file_key key;
	uint64_t first, n;	/* its row space (rows and index); n 0: none */
	uint32_t refs;		/* ranges of written views naming it */
	uint32_t gen;		/* bumped at each eviction: the BPF rule cache's key */
	bool used;		/* the id is given (else in the free list) */
	bool built;		/* published (ready, none or failed): may go idle */
	bool pinned;		/* the vdso's: never evicted */
	struct lru_node idle;	/* in unwinder.idle while built and refs 0 */
	uint64_t idle_since;	/* CLOCK_MONOTONIC ns */
};

/* Row space a table gave back: [first, first + n). */
struct extent {
	uint64_t first, n;
};

/* The table ids a process's last written view names, one per range. */
struct pview {
	uint32_t pid;
	uint32_t nr;
	uint32_t ids[];
};

struct job {
	struct job *next;
	uint32_t id;
	int fd;			/* -1: the vdso */
	int debug_fd;		/* its separate debug file, or -1 */
	char name[NAME_LEN];
};

struct unwinder {
	struct unwind_opts o;
	uint64_t max_rows;		/* row space: max_bytes / 8 */
	uint64_t max_idle_rows;		/* rows idle tables may keep */
	uint32_t vdso_id;		/* + 1; 0: none yet */
	struct htab procs;		/* hash_fin(pid) -> struct pview *: processes with a view */
	struct bpfsym_unw_proc view;	/* built here, then handed to the sink */
	uint32_t view_gen;		/* the last view's gen (struct bpfsym_unw_proc), never reused */
	uint32_t view_ids[BPFSYM_UNW_PROC_RANGES];

	pthread_mutex_t lock;		/* the rest, shared with the worker */
	pthread_cond_t wake, idle;
	struct job *head, **tail;
	bool busy, stop, started;
	pthread_t thread;
	struct htab ids;		/* hash of struct file_key -> id + 1 */
	/*
	 * By id, allocated once for max_tables (pages untouched until ids
	 * are used): the idle list links them, so they never move.
	 */
	struct utab *tabs;
	/*
	 * File systems (st_dev) a build hung on (unwbuild.c): files there get
	 * no table without a try, so a hostile mount costs one pool thread
	 * and one wait, not one per file.  The builds' thread's alone.
	 */
	uint64_t hung_devs[UNW_HUNG_DEVS];
	uint32_t nr_hung_devs;
	/*
	 * Builds whose worker stalled, still running (a slow file system is
	 * not always a dead one), and the files of their file systems parked
	 * meanwhile (requeued when the late build ends).  The builds' thread's.
	 */
	struct unw_late late[UNW_LATE_MAX];
	uint32_t nr_late;
	struct job *parked;
	uint32_t nr_parked;
	/* Files whose open is under way (unwopen.c); the views' thread's alone. */
	struct unw_open *opens;
	uint32_t nr_opens;
	uint64_t opens_failed;		/* ...that ended without an fd */
	uint32_t nr_ids;		/* ids [0, nr_ids) were ever given */
	uint32_t *free_ids, nr_free_ids;
	struct lru idle_tabs;		/* built tables no view names, most recently idle first */
	uint64_t idle_rows;
	struct extent *holes;		/* row space given back, by first */
	size_t nr_holes, cap_holes;
	uint64_t next_row;
	struct unwind_stats st;
};

/* unwtabs.c: all but key_hash under unwinder.lock. */
uint64_t key_hash(const struct file_key *k);
/* Give [first, first + n) back to the row space. */
void rows_free(struct unwinder *u, uint64_t first, uint64_t n);
/* Row space for @n entries (rows and index), evicting idle tables if need be; -1: none.  Takes the lock. */
int64_t take_rows(struct unwinder *u, uint64_t n);
/* Evict the table idle longest; false when none is idle. */
bool evict_oldest(struct unwinder *u);
/* Evict idle tables past the idle budget or idle_ttl_ms. */
void idle_trim(struct unwinder *u);
/* Table @id is built, or no view names it any more: idle if both. */
void tab_maybe_idle(struct unwinder *u, uint32_t id);
/* A new table id, its entry pending, or BPFSYM_UNW_NO_TABLE. */
uint32_t new_id(struct unwinder *u);
/* One more view range names table @id. */
void tab_ref(struct unwinder *u, uint32_t id);
/* Take back the references of @n ids. */
void tabs_unref(struct unwinder *u, const uint32_t *ids, uint32_t n);

/* CLOCK_THREAD_CPUTIME_ID in ns. */
uint64_t unw_thread_cpu_ns(void);

/*
 * The table of @j's file (its fd, or the vdso's image), built on
 * u->o.pool's worker when there is one, waited for while the worker
 * works (unwbuild.c); @j's fds are consumed.  0 with *@t, or -errno with
 * the reason in @err (-ETIMEDOUT: the file did not answer; given up);
 * the build's CPU time in *@cpu_ns.  -EINPROGRESS: the build stalled and
 * is kept running (unw_late_take() gives it when it ends), or its file
 * system has such a build and the file is parked (queued again then).
 */
int unw_build(struct unwinder *u, struct job *j, struct cfi_table **t, char *err, size_t errlen,
	      uint64_t *cpu_ns);

/* Put @j at the build queue's tail, counted.  Under the lock. */
static inline void unw_queue_append(struct unwinder *u, struct job *j)
{
	j->next = NULL;
	*u->tail = j;
	u->tail = &j->next;
	u->st.queued++;
}

/* Queue (or, sync, run) the build of table @id from @fd (-1: the vdso) and @debug_fd. */
int unw_enqueue(struct unwinder *u, uint32_t id, int fd, int debug_fd, const char *name);

/*
 * Keep table @id's file, mapped by @mp in process (@pid, @pstart), to be
 * opened again by unwinder__poll_opens(): its open is under way.  0, or
 * -ENOSPC (too many waiting) / -ENOMEM: the id stays unbuilt.
 */
int unw_open_later(struct unwinder *u, uint32_t id, uint32_t pid, uint64_t pstart,
		   const struct mapping *mp);

/*
 * Ask again, from *@pos on, for the files unw_open_later() kept: the
 * first that opens, dropped from the list, as 0 with its table @id, *@fd,
 * *@debug_fd and @name (@len bytes); those that failed are dropped (their
 * ids stay unbuilt).  -EAGAIN: none more; *@pos is past those still under
 * way.  Start with *@pos 0.
 */
int unw_open_next(struct unwinder *u, uint32_t *pos, uint32_t *id, int *fd, int *debug_fd,
		  char *name, size_t len);

/* Free what unw_open_later() kept (the ids stay unbuilt). */
void unw_opens_free(struct unwinder *u);

/*
 * A late build that ended, taken: its table id and name in @j, what
 * unw_build() would have given (0 with *@t, or -errno with @err), its
 * file system's parked files queued again.  -EINPROGRESS: none ended.
 */
int unw_late_take(struct unwinder *u, struct job *j, struct cfi_table **t, char *err,
		  size_t errlen, uint64_t *cpu_ns);

/* Late builds given up for good, parked files dropped (unwinder__free). */
void unw_late_free(struct unwinder *u);

#endif /* BPFSYM_UNWINDER_INT_H */
