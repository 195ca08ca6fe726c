// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_agg: what the table, the folded stacks and the flame graph start
 * from.  Kept samples are counted per distinct (comm, stack), so the
 * per-sample work is a few array reads and everything after scales with
 * the number of distinct stacks, not samples.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_fmt.h"
#include "view/report_agg.h"

static int agg__comm(struct agg *a, const struct view_opts *o, const char *comm, uint32_t *id,
		     bool *keep)
{
	size_t c = (size_t)(((uintptr_t)comm >> 3) * 0x9e3779b97f4a7c15ULL >> 56) % AGG_COMM_CACHE;
	int err;

	if (a->cache[c].p != comm) {
		err = strtab__intern_id(&a->comms, comm, strlen(comm), &a->cache[c].id);
		if (err)
			return err;
		a->cache[c].p = comm;
		a->cache[c].keep = view__comm_ok(o, comm);
	}
	*id = a->cache[c].id;
	*keep = a->cache[c].keep;
	return 0;
}

static int agg__add(struct agg *a, const struct report *r, uint32_t comm, uint32_t ctr, uint32_t tid,
		    uint32_t stack)
{
	uint32_t id, nr = 0;
	int err;

	if (stack >= a->nr_head) {
		err = rpt_grow((void **)&a->head, &a->cap_head, (size_t)stack + 1, sizeof(*a->head));
		if (err)
			return err;
		memset(a->head + a->nr_head, 0xff, (stack + 1 - a->nr_head) * sizeof(*a->head));
		a->nr_head = (size_t)stack + 1;
	}
	for (id = a->head[stack]; id != RPT_NONE && (a->pairs[id].comm != comm || a->pairs[id].ctr != ctr ||
					       a->pairs[id].tid != tid);
	     id = a->pairs[id].next)
		;
	if (id == RPT_NONE) {
		if (!report__stack(r, stack, &nr))
			return -EINVAL;
		if (a->nr_pairs >= RPT_ID_LIMIT)
			return -E2BIG;
		/* A new pair is a walk of its stack in each view: counted before it is made. */
		if (a->visits + nr + 1 > agg__visits_max(r))
			return -E2BIG;
		a->visits += nr + 1;
		err = rpt_grow((void **)&a->pairs, &a->cap_pairs, a->nr_pairs + 1, sizeof(*a->pairs));
		if (err)
			return err;
		id = (uint32_t)a->nr_pairs++;
		a->pairs[id] = (struct pair){ comm, stack, a->head[stack], ctr, tid, 0 };
		a->head[stack] = id;
	}
	a->pairs[id].count++;
	a->total++;
	return 0;
}

int agg__build(struct agg *a, const struct report *r, const struct view_opts *o)
{
	size_t i, nr = report__nr_samples(r);
	struct pid_set pids;
	uint32_t comm;
	bool keep;
	int err;

	err = pid_set__init(&pids, o);
	err = err ?: ctr_map__init(&a->ctrs, r);
	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(r, i);

		if (!pid_set__keep(&pids, s) || !view__cgroup_ok(o, s->cgroup))
			continue;
		err = agg__comm(a, o, s->comm ? s->comm : "", &comm, &keep);
		if (!err && keep)
			err = agg__add(a, r, comm, ctr_map__of(&a->ctrs, s->cgroup),
					   a->by_tid ? s->tid : 0, s->stack);
	}
	pid_set__free(&pids);
	return err;
}

void agg__free(struct agg *a)
{
	strtab__free(&a->comms);
	ctr_map__free(&a->ctrs);
	free(a->pairs);
	free(a->head);
	a->pairs = NULL;
	a->head = NULL;
}
