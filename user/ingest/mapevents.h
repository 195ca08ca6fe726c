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
 * Apply one record (@len bytes at @rec, its header's size <= @len).  Records
 * of other types are not accepted: the caller routes samples elsewhere.
 * Returns 0 (malformed records are counted and skipped), or -ENOMEM.
 */
int mapevents__apply(struct mapevents *me, const void *rec, size_t len);

/*
 * Event time has reached @ts: drop the processes that exited more than
 * MAPEVENTS_EXIT_GRACE_NS before it.  Call it for every record, samples too.
 */
void mapevents__advance(struct mapevents *me, uint64_t ts);

const struct mapevents_stats *mapevents__stats(const struct mapevents *me);

#endif /* BPFSYM_MAPEVENTS_H */
