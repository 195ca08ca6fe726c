/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mapevents: replays the mapping tracker's records (include/bpfsym.h:
 * MAP, UNMAP, FORK, EXEC, EXIT) into the mapping model, in the order they
 * come, and pins each mapped file in the symbolizer while its mapping still
 * exists, so a file deleted or replaced later still symbolizes as what ran.
 * No libbpf here: records can come from a ring buffer, a snapshot, a test.
 */
#ifndef BPFSYM_MAPEVENTS_H
#define BPFSYM_MAPEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "bpfsym.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"

struct mapevents_stats {
	uint64_t maps, unmaps, forks, execs, exits;
	uint64_t resyncs;	/* processes taken whole at their first sample (lazy_maps) */
	uint64_t bad;		/* malformed records, skipped */
	uint64_t unknown_parent;	/* FORK of a process the model did not know */
	uint64_t map_errors;	/* proc__map/proc__unmap failures (caps, memory) */
	uint64_t pin_errors;	/* files that could not be opened when mapped */
};

/*
 * An exited process stays in the model this long (in event time): a sample
 * taken while it was exiting can come after its EXIT record, and its user
 * stack is still valid then.
 */
#define MAPEVENTS_EXIT_GRACE_NS 100000000ull

struct mapevents;

/* A replayer into @pt, pinning files in @sym (may be NULL).  NULL + errno. */
struct mapevents *mapevents__new(struct proc_table *pt, struct symbolizer *sym);

/* NULL is a no-op.  Processes still in their exit grace stay in @pt. */
void mapevents__free(struct mapevents *me);

/*
 * One record of each kind, @len bytes at the record (its header's size <=
 * @len), its type already known (ingest.c dispatches on it, once).  A
 * record too short for its kind, or that makes no sense (a MAP without
 * its path's NUL, an empty range), is counted (stats.bad) and skipped.
 * 0, or -ENOMEM.
 */
int mapevents__map(struct mapevents *me, const struct bpfsym_map_ev *e, size_t len);
int mapevents__unmap(struct mapevents *me, const struct bpfsym_unmap_ev *u, size_t len);
int mapevents__fork(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len);
int mapevents__exec(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len);
int mapevents__resync(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len);
/* EXIT: the process leaves the model after MAPEVENTS_EXIT_GRACE_NS of event time. */
int mapevents__exit(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len);

/* A record of a type the model does not take (or none at all): counted as bad. */
void mapevents__bad(struct mapevents *me);

/* What is told, on the thread feeding the replayer, when a process leaves the model. */
typedef void (*mapevents_gone_fn)(void *ctx, uint32_t pid, uint64_t pstart);

/*
 * Call @fn(@ctx, ...) for each process that leaves the model at the end
 * of its exit's grace (the runtimes forget its code objects then).  @fn
 * NULL: no one.  One listener.
 */
void mapevents__on_gone(struct mapevents *me, mapevents_gone_fn fn, void *ctx);

/*
 * Event time has reached @ts: drop the processes that exited more than
 * MAPEVENTS_EXIT_GRACE_NS before it.  Call it for every record, samples too.
 */
void mapevents__advance(struct mapevents *me, uint64_t ts);

const struct mapevents_stats *mapevents__stats(const struct mapevents *me);

#endif /* BPFSYM_MAPEVENTS_H */
