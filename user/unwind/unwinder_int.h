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
	uint32_t nr_ids;		/* ids [0, nr_ids) were ever given */
	uint32_t *free_ids, nr_free_ids;
	struct lru idle_tabs;		/* built tables no view names, most recently idle first */
	uint64_t idle_rows;
	struct extent *holes;		/* row space given back, by first */
	size_t nr_holes, cap_holes;
	uint64_t next_row;
	struct unwind_stats st;
};

/* unwtabs.c: all but key_hash and mono_ns under unwinder.lock. */
uint64_t key_hash(const struct file_key *k);
uint64_t mono_ns(void);
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

#endif /* BPFSYM_UNWINDER_INT_H */
