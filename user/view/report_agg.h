/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_agg: the kept samples of a recording counted per distinct
 * (comm, stack), what the table, the folded stacks and the flame graph
 * start from; with an off-CPU or wall-clock metric (view_opts.h), the
 * OFFCPU records too, per (comm, stack, state), and each pair's count is
 * then a weight in ns.  Above the filters (view_opts.h), below the views.
 * No libbpf here.
 */
#ifndef BPFSYM_REPORT_AGG_H
#define BPFSYM_REPORT_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"
#include "report/report.h"
#include "view/view_ctr.h"
#include "view/view_opts.h"

struct pair {
	uint32_t comm, stack;	/* comm: an id of agg.comms */
	uint32_t next;		/* next pair of the same stack, or RPT_NONE */
	uint32_t ctr;		/* its container in agg.ctrs (from 1), 0: none */
	uint32_t tid;		/* its thread with agg.by_tid, else 0 */
	uint32_t state;		/* 0: on the CPU (samples); 1 + enum rpt_offstate: OFFCPU records */
	uint64_t count;		/* its weight: samples (the CPU metric), else ns */
	uint64_t n;		/* its samples or OFFCPU records */
};

#define AGG_COMM_CACHE 256

struct agg {
	struct strtab comms;
	struct pair *pairs;	/* in the order of their first kept sample */
	size_t nr_pairs, cap_pairs;
	/*
	 * Per stack id, its first pair: a stack is nearly always sampled in
	 * one process name, so finding a pair is one array read and one
	 * compare, with no hashing in the per-sample loop.
	 */
	uint32_t *head;
	size_t nr_head, cap_head;
	/*
	 * The reader interns comm strings, so a pointer seen before has the
	 * same id and passes --comm the same way.
	 */
	struct {
		const char *p;
		uint32_t id;
		bool keep;
	} cache[AGG_COMM_CACHE];
	uint64_t total;		/* the kept samples' and records' weight (CPU metric: samples) */
	uint64_t kept_samples, kept_offcpu;	/* how many of each were kept */
	uint64_t offcpu_ns;	/* the kept OFFCPU records' ns */
	uint64_t visits;	/* frames of the pairs' stacks, each pair's counted once */
	struct ctr_map ctrs;	/* the recording's containers, which split pairs */
	bool by_tid;		/* set before agg__build: threads split pairs too (the table's -s pid) */
};

/*
 * Frames the views may walk for @r: the table, the folded stacks and the
 * flame graph walk each pair's stack, so a file of a few distinct comms
 * per sample and one deep stack would make them walk (and the flame graph
 * and the folded lines hold) pairs x depth frames, far more than the
 * file's bytes.  AGG_VISITS_RATIO per file byte and AGG_VISITS_FLOOR more
 * (docs/FORMAT.md, "Reader limits"); recordings need 0.1-0.3 per byte.
 */
#define AGG_VISITS_RATIO	8u
#define AGG_VISITS_FLOOR	(64u << 10)

static inline uint64_t agg__visits_max(const struct report *r)
{
	return report__file_bytes(r) * AGG_VISITS_RATIO + AGG_VISITS_FLOOR;
}

/*
 * Count the samples of @r that pass @o (NULL: all) into @a, zeroed by the
 * caller, per distinct (comm, container, stack; and thread with
 * @a->by_tid): what view__keep() decides, without its linear scans; with
 * @o's off-CPU or wall metric, the OFFCPU records that pass too
 * (view__keep_offcpu()), per state, and weights in ns.  0 or -errno
 * (-E2BIG: the pairs' stacks hold more than agg__visits_max(@r) frames);
 * agg__free() in either case.
 */
int agg__build(struct agg *a, const struct report *r, const struct view_opts *o);

/* The comm of pair @p of @a. */
static inline const char *agg__comm_str(const struct agg *a, const struct pair *p)
{
	return strtab__str(&a->comms, p->comm);
}

/* Free what @a holds. */
void agg__free(struct agg *a);

#endif /* BPFSYM_REPORT_AGG_H */
