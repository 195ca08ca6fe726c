/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwmaps: a recording's unwinder (unwind/unwinder.h) and its sink into
 * the sampler's BPF maps.  Rows go into shards, inner ARRAY maps of BPFSYM_UNW_SHARD_ROWS
 * u64 each, created when first needed, memory-mapped, and put in the outer
 * array `unw_shards`: memory grows with the rows, one shard at a time, and
 * rows are copied with memcpy, not a syscall each.  Tables and process
 * views are map updates.
 */
#ifndef BPFSYM_UNWMAPS_H
#define BPFSYM_UNWMAPS_H

#include <stdint.h>

#include "model/procmap.h"
#include "record/probes.h"
#include "report/report.h"
#include "unwind/unwinder.h"

struct unwmaps;
struct offload;

/*
 * The unwinder of a recording over @bpf's maps: files are opened through
 * the processes of @procs (as the symbolizer opens them) with their debug
 * files by build-id under /usr/lib/debug, on @pool's workers (NULL: on
 * the caller's thread), waited for 100 ms: a file that did not answer
 * gets no table and is not waited on again; tables capped at @max_bytes
 * (0: the default).  NULL + errno.
 */
struct unwmaps *unwmaps__start(struct probes *bpf, struct proc_table *procs, uint64_t max_bytes,
			       struct offload *pool);

/* Its unwinder, which ingest keeps current (valid until unwmaps__free). */
struct unwinder *unwmaps__unwinder(const struct unwmaps *m);

/*
 * Write the views of the @n processes @pids (found in the model: the
 * start-up snapshot), then wait up to @wait_ms for their tables, so the
 * first samples walk whole stacks.
 */
void unwmaps__first_views(struct unwmaps *m, const uint32_t *pids, size_t n, int wait_ms);

/* The END record's table counters (rpt_header.unw). */
void unwmaps__fill_end(struct unwmaps *m, struct rpt_header *h);

/* A sink over the maps of @fds (borrowed: they outlive it).  NULL + errno. */
struct unwmaps *unwmaps__new(const struct probes_unwind_fds *fds);

/*
 * Stop the unwinder, unmap and close the shards (the outer map keeps them
 * while it lives).  NULL is a no-op.
 */
void unwmaps__free(struct unwmaps *m);

/* The sink's callbacks, with @m as their context. */
struct unwind_sink unwmaps__sink(struct unwmaps *m);

/*
 * Log (-v) the views written against @wanted, the mapping changes that
 * asked for one (ingest_stats.views_wanted).
 */
void unwmaps__log_views(struct unwmaps *m, uint64_t wanted);

/* Bytes of BPF map memory the shards take. */
uint64_t unwmaps__bytes(const struct unwmaps *m);

#endif /* BPFSYM_UNWMAPS_H */
