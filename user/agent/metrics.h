/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics: /metrics in the Prometheus text exposition format (version
 * 0.0.4): a HELP and a TYPE line per family, counters ending in _total,
 * units in the names.  Made from a snapshot the recorder thread publishes
 * (struct agent_metrics) and the server's own counts, never from live
 * recorder state.
 */
#ifndef BPFSYM_METRICS_H
#define BPFSYM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfsym.h"
#include "ingest/mapevents.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* What the recorder thread copies out, each tick (the BPF counters each second). */
struct agent_metrics {
	bool recording;			/* ticked, and not ended */
	uint64_t samples;		/* read from the ring buffer and symbolized */
	uint64_t samples_written;	/* written to the recording's file */
	uint64_t bad_records;		/* malformed, skipped (ingest and mapevents) */
	uint64_t model_misses;		/* samples of processes the model did not know */
	uint64_t bpf[BPFSYM_STAT_MAX];	/* the BPF side's counters */
	struct mapevents_stats mev;
	uint64_t procs_tracked, procs_seen, procs_sampled;
	uint64_t bytes_written;		/* the current file's */
	uint64_t unwind_bytes;		/* call-frame tables' BPF map memory */
	uint64_t sym_images, sym_bytes;	/* symbol tables in memory */
	uint64_t index_bytes;		/* the current file's dedupe index (report_windex.h) */
	uint64_t windows_active;	/* profile windows being recorded */
	uint64_t windows_total;		/* profile windows finished */
	uint64_t inflight_bytes;	/* what the windows hold (agent.h: AGENT_INFLIGHT_MAX_BYTES) */
};

/* The server's side of it. */
struct metrics_http {
	const int *codes;		/* status codes, 0 for "other" */
	const uint64_t *counts;		/* answers per code */
	size_t nr;
	uint64_t timeouts, refused, evicted;
};

/*
 * The exposition text of @m and @h, plus this process's CPU seconds
 * (getrusage), resident bytes and open file descriptors, into *@out
 * (malloc'd, *@len bytes, NUL-terminated).  0 or -ENOMEM.
 */
int metrics__format(const struct agent_metrics *m, const struct metrics_http *h, char **out, size_t *len);

#endif /* BPFSYM_METRICS_H */
