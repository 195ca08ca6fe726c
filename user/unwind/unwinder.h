/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwinder: what the BPF stack walk (bpf/unwind.bpf.h) needs, kept
 * current from the mapping model.  One table per file identity (dev, ino,
 * mtime), shared by every process that maps the file, built from its
 * call-frame information (cfi.h) by a worker thread, off the sampling
 * path; and per process a view of its executable mappings, each naming
 * its file's table.  A view is written as soon as the process's mappings
 * change, naming tables that may not be built yet: the walk ends there
 * ("no table") until the table is published, then walks through it.
 *
 * Where the tables go is the sink's business (record/ puts them in BPF
 * maps; tests keep them in memory): no libbpf here.  Memory is capped
 * (rows in all, rows per file, tables, process views); what a cap refused
 * is counted.  Row space is not reused within a recording.
 */
#ifndef BPFSYM_UNWINDER_H
#define BPFSYM_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfsym.h"
#include "model/procmap.h"
#include "unwind/cfi.h"

/*
 * Where tables and views go.  put_rows and put_table are called by the
 * worker thread (the caller's own with unwind_opts.sync), in that order
 * for a table; put_proc and del_proc by the thread calling
 * unwinder__sync_proc / unwinder__drop_proc.  Each returns 0 or -errno.
 */
struct unwind_sink {
	void *ctx;
	/* Rows [first, first + nr) of the global row space (BPFSYM_UNW_SHARD_ROWS a shard). */
	int (*put_rows)(void *ctx, uint32_t first, const struct cfi_row *rows, uint32_t nr);
	int (*put_table)(void *ctx, uint32_t id, const struct bpfsym_unw_table *t);
	int (*put_proc)(void *ctx, uint32_t pid, const struct bpfsym_unw_proc *v);
	int (*del_proc)(void *ctx, uint32_t pid);
	/*
	 * File identity @f has table @id of generation @gen (called when the
	 * id is given; the vdso's identity is all zeroes): the tracker's
	 * fresh views and the walk find a mapping no view of ours holds by
	 * it, and check the generation, since they hold no reference.  May
	 * be NULL.
	 */
	int (*put_file)(void *ctx, const struct bpfsym_unw_file *f, uint32_t id, uint32_t gen);
	/* File identity @f has no table any more (evicted).  May be NULL. */
	int (*del_file)(void *ctx, const struct bpfsym_unw_file *f);
};

/*
 * Open for reading the file mapping @m of process (@pid, @pstart) maps,
 * now, while the mapping exists, and in *@debug_fd its separate debug file
 * (whose .debug_frame fills what .eh_frame does not cover), or -1.
 * Returns an fd; the unwinder closes both.  Or -errno; -EINPROGRESS: the
 * open is under way (a slow file system): the file gets its table id now
 * and is asked for again, with a copy of @m and the same @pid, by
 * unwinder__poll_opens() until it answers otherwise.
 */
typedef int (*unwind_open_fn)(void *ctx, uint32_t pid, uint64_t pstart, const struct mapping *m,
			      int *debug_fd);

#define UNWIND_DEFAULT_MAX_BYTES	(64ull << 20)	/* 8 Mi rows */
#define UNWIND_DEFAULT_MAX_PROCS	4096
#define UNWIND_DEFAULT_IDLE_TTL_MS	(5 * 60 * 1000)	/* a table no view names goes after this */

struct unwind_opts {
	struct unwind_sink sink;
	unwind_open_fn open;
	void *open_ctx;
	uint64_t max_bytes;	/* row memory in all; 0: UNWIND_DEFAULT_MAX_BYTES */
	uint32_t max_rows_file;	/* 0: CFI_DEFAULT_MAX_ROWS */
	uint32_t max_tables;	/* 0 or more than BPFSYM_UNW_MAX_TABLES: that */
	uint32_t max_procs;	/* views; 0: UNWIND_DEFAULT_MAX_PROCS */
	uint64_t max_idle_bytes;	/* rows of idle tables kept; 0: max_bytes (only pressure evicts) */
	uint64_t idle_ttl_ms;		/* idle tables older than this go; 0: UNWIND_DEFAULT_IDLE_TTL_MS */
	bool sync;		/* build on the calling thread, no worker (tests, tools) */
	/*
	 * Called first on the worker thread (may be NULL): the recorder drops
	 * the worker's capabilities there (base/privdrop.h), as a thread's
	 * own are not changed by another's capset.
	 */
	void (*thread_start)(void);
	/*
	 * Where builds run (base/offload.h; may be NULL: on the worker
	 * itself), so a file whose reads never return costs a pool thread and
	 * a 10 s wait, not every table after it.  Borrowed: freed after the
	 * unwinder.
	 */
	struct offload *pool;
};

struct unwind_stats {
	uint64_t tables;		/* file identities given a table id */
	uint64_t tables_ready;		/* built and published */
	uint64_t tables_none;		/* no usable call-frame information: frame pointers there */
	uint64_t tables_failed;		/* could not be opened or parsed (malformed CFI) */
	uint64_t rows;			/* published rows */
	uint64_t index_entries;		/* their page indexes' entries (8 bytes each, like a row) */
	uint64_t build_ns;		/* CPU time spent building (thread CPU clock) */
	uint64_t max_build_ns;		/* the longest build of one file */
	uint64_t queued;		/* builds waiting now */
	/* What the caps refused: each one shows in the report header. */
	uint64_t over_mem;		/* tables not built: row memory full */
	uint64_t over_rows;		/* files over max_rows_file */
	uint64_t over_tables;		/* file identities past max_tables */
	uint64_t over_procs;		/* processes past max_procs: no view */
	uint64_t over_ranges;		/* views cut at BPFSYM_UNW_PROC_RANGES mappings */
	uint64_t views;			/* views written (each change writes one) */
	/* Eviction (tables no view names, past the idle budget or to make room). */
	uint64_t evicted;		/* tables evicted */
	uint64_t evicted_rows;		/* their rows and index entries */
	uint64_t rows_now;		/* rows and index entries of the tables held now */
	uint64_t sink_errors;		/* the sink refused a write */
};

struct unwinder;

/* An unwinder writing to @o->sink; starts its worker.  NULL + errno. */
struct unwinder *unwinder__new(const struct unwind_opts *o);

/* Stop the worker (builds not started are dropped) and free.  NULL is a no-op. */
void unwinder__free(struct unwinder *u);

/*
 * Write @p's view: its executable mappings, each with the table of its
 * file ([vdso]: the vdso's, from our own, the same kernel's; anonymous
 * code: none, the frame-pointer rule).  A file seen for the first time
 * gets a table id and is opened now (unwind_opts.open) and queued for its
 * build.  0 or -errno (-ENOSPC: past max_procs, counted).
 */
int unwinder__sync_proc(struct unwinder *u, const struct proc *p);

/*
 * Ask again for the files whose open was under way (unwind_open_fn's
 * -EINPROGRESS): those that answer are queued for their builds.  Call it
 * often, on the thread that calls unwinder__sync_proc().  The number of
 * files still waiting.
 */
int unwinder__poll_opens(struct unwinder *u);

/*
 * Process @pid is gone: drop the view we wrote for it (the BPF side's
 * loan of a parent's view goes with the process).  0 or -errno (-ENOENT:
 * we had written none).
 */
int unwinder__drop_proc(struct unwinder *u, uint32_t pid);

/* Whether we have written a view of process @pid (and not dropped it since). */
bool unwinder__has_proc(struct unwinder *u, uint32_t pid);

/*
 * Wait until no build is queued or running, at most @timeout_ms.  0, or
 * -ETIMEDOUT.
 */
int unwinder__wait_idle(struct unwinder *u, int timeout_ms);

/* The counters now (a consistent copy). */
void unwinder__stats(struct unwinder *u, struct unwind_stats *st);

/*
 * What the unwinder holds now, for a metrics endpoint: table ids in use,
 * idle tables and their rows, process views, free row-space holes.
 */
struct unwind_sizes {
	uint64_t tables, idle_tables, idle_rows, views, holes, rows_top;
};
void unwinder__sizes(struct unwinder *u, struct unwind_sizes *sz);

#endif /* BPFSYM_UNWINDER_H */
