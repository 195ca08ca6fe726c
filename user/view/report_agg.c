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

/* What a pair is counted by: its key but for the comm and stack, and a sample's or record's weight. */
struct agg_key {
	uint32_t ctr, tid, state;
	uint64_t weight;
};

static int agg__add(struct agg *a, const struct report *r, uint32_t comm, const struct agg_key *k,
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
	for (id = a->head[stack]; id != RPT_NONE && (a->pairs[id].comm != comm || a->pairs[id].ctr != k->ctr ||
					       a->pairs[id].tid != k->tid || a->pairs[id].state != k->state);
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
		a->pairs[id] = (struct pair){ comm, stack, a->head[stack], k->ctr, k->tid, k->state, 0, 0 };
		a->head[stack] = id;
	}
	a->pairs[id].count += k->weight;
	a->pairs[id].n++;
	a->total += k->weight;
	return 0;
}

/* The OFFCPU records of @r that pass @o, weighed by their ns, into @a. */
static int agg__offcpu(struct agg *a, const struct report *r, const struct view_opts *o,
		       const struct pid_set *pids)
{
	size_t i, nr = report__nr_offcpu(r);
	uint32_t comm;
	bool keep;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		const struct rpt_offcpu *x = report__offcpu(r, i);
		struct agg_key k = { 0, a->by_tid ? x->tid : 0, 1 + x->state, x->ns };

		if (!pid_set__keep_ids(pids, x->pid, x->tid) || !view__cgroup_ok(o, x->cgroup) ||
		    !view__state_ok(o, x->state))
			continue;
		err = agg__comm(a, o, x->comm ? x->comm : "", &comm, &keep);
		if (!err && keep) {
			k.ctr = ctr_map__of(&a->ctrs, x->cgroup);
			err = agg__add(a, r, comm, &k, x->stack);
			a->kept_offcpu++;
			a->offcpu_ns += x->ns;
		}
	}
	return err;
}

int agg__build(struct agg *a, const struct report *r, const struct view_opts *o)
{
	size_t i, nr = view__wants_samples(o) ? report__nr_samples(r) : 0;
	uint64_t weight = view__sample_weight(o, r);
	struct pid_set pids;
	uint32_t comm;
	bool keep;
	int err;

	err = pid_set__init(&pids, o);
	err = err ?: ctr_map__init(&a->ctrs, r);
	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(r, i);
		struct agg_key k = { 0, a->by_tid ? s->tid : 0, 0, weight };

		if (!pid_set__keep(&pids, s) || !view__cgroup_ok(o, s->cgroup))
			continue;
		err = agg__comm(a, o, s->comm ? s->comm : "", &comm, &keep);
		if (!err && keep) {
			k.ctr = ctr_map__of(&a->ctrs, s->cgroup);
			err = agg__add(a, r, comm, &k, s->stack);
			a->kept_samples++;
		}
	}
	if (!err && view__wants_offcpu(o))
		err = agg__offcpu(a, r, o, &pids);
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
