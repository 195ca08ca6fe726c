/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rtmaps: a recording's runtimes (runtime/runtime.h: Python today) and
 * their BPF side: each runtime's per-process entries go into its map
 * (py_procs), written here, where libbpf is.  Their reads of other
 * processes (memory, maps, interpreter files) run on a small pool of
 * their own: a burst of new code objects never takes the workers that
 * open the files the symbolizer names.
 */
#ifndef BPFSYM_RTMAPS_H
#define BPFSYM_RTMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/procmap.h"
#include "record/probes.h"
#include "record/record.h"

struct rtmaps;
struct runtimes;

/*
 * The runtimes of a recording with options @o over @bpf's maps.  NULL
 * when interpreter frames are off (--no-interp, --kernel-only,
 * --call-graph fp-kernel: no walk of ours) or, with errno, on failure
 * (the caller goes on without them, warned).
 */
struct rtmaps *rtmaps__start(struct probes *bpf, const struct record_opts *o);

/* The registry ingest names frames through (NULL for @m NULL). */
struct runtimes *rtmaps__runtimes(const struct rtmaps *m);

/*
 * The @n processes @pids running before the recording (the start-up
 * snapshot, in @procs): their interpreters looked for, waited for up to
 * @wait_ms so that their first samples have Python frames.
 */
void rtmaps__first(struct rtmaps *m, struct proc_table *procs, const uint32_t *pids, size_t n,
		   int wait_ms);

/* Log (-v) the BPF walker's counters in @stats (BPFSYM_STAT_PY_*). */
void rtmaps__log_counts(const struct rtmaps *m, const uint64_t *stats);

/* Free @m: the runtimes, then their pool.  NULL is a no-op. */
void rtmaps__free(struct rtmaps *m);

#endif /* BPFSYM_RTMAPS_H */
