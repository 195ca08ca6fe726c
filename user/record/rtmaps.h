/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rtmaps: a recording's runtimes (runtime/runtime.h: Python today) and
 * their BPF side: each runtime's per-process entries go into its map
 * (py_procs), written here, where libbpf is.
 */
#ifndef BPFSYM_RTMAPS_H
#define BPFSYM_RTMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/procmap.h"
#include "record/probes.h"
#include "record/record.h"

struct offload;
struct runtimes;

/*
 * The runtimes of a recording with options @o over @bpf's maps, their
 * slow work on @pool.  NULL when interpreter frames are off (--no-interp,
 * --kernel-only, --call-graph fp-kernel: no walk of ours) or, with errno,
 * on failure (the caller goes on without them, warned).
 */
struct runtimes *rtmaps__start(struct probes *bpf, struct offload *pool, const struct record_opts *o);

/* Free @rs (runtimes__free). */
void rtmaps__free(struct runtimes *rs);

/*
 * The @n processes @pids running before the recording (the start-up
 * snapshot, in @procs): their interpreters looked for, waited for up to
 * @wait_ms so that their first samples have Python frames.
 */
void rtmaps__first(struct runtimes *rs, struct proc_table *procs, const uint32_t *pids, size_t n,
		   int wait_ms);

/* Log (-v) the interpreters found and the BPF walker's counters in @stats (BPFSYM_STAT_PY_*). */
void rtmaps__log_counts(struct runtimes *rs, const uint64_t *stats);

#endif /* BPFSYM_RTMAPS_H */
