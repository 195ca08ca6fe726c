// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot: the processes that ran before the recording (snapshot.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bpfsym.h"
#include "base/util.h"
#include "ingest/mapevents.h"
#include "model/procmap.h"
#include "record/cgroup.h"
#include "record/probes.h"
#include "record/snapshot.h"
#include "report/report_fmt.h"

struct snapshot {
	const struct snapshot_filter *f;
	struct mapevents *mev;
	uint32_t last_pid;		/* the last record's pid, and whether it is kept */
	int keep;
	uint32_t *pids;			/* the processes kept */
	size_t nr_pids, cap_pids;
};

struct snapshot *snapshot__new(const struct snapshot_filter *f, struct mapevents *mev)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->f = f;
	s->mev = mev;
	return s;
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	free(s->pids);
	free(s);
}

static int note_pid(struct snapshot *s, uint32_t pid)
{
	if (rpt_grow((void **)&s->pids, &s->cap_pids, s->nr_pids + 1, sizeof(*s->pids)))
		return -ENOMEM;
	s->pids[s->nr_pids++] = pid;
	return 0;
}

static int keeps(const struct snapshot_filter *f, uint32_t pid)
{
	size_t i;

	switch (f->mode) {
	case SNAPSHOT_PIDS:
		for (i = 0; i < f->nr_pids && f->pids[i] != pid; i++)
			;
		return i < f->nr_pids;
	case SNAPSHOT_CGROUP:
		return cgroup__has_pid(f->cgroup, pid);
	default:
		return 1;
	}
}

int snapshot__record(void *ctx, const void *rec, size_t len)
{
	const struct bpfsym_map_ev *e = rec;
	struct snapshot *s = ctx;

	/* The iterator sends MAP records only; anything else is counted as bad. */
	if (len < offsetof(struct bpfsym_map_ev, pid) + sizeof(e->pid) || e->hdr.type != BPFSYM_EV_MAP ||
	    e->hdr.size > len) {
		mapevents__bad(s->mev);
		return 0;
	}
	if (e->pid != s->last_pid) {
		s->last_pid = e->pid;
		s->keep = keeps(s->f, e->pid);
		if (s->keep && note_pid(s, e->pid))
			return -ENOMEM;
	}
	return s->keep ? mapevents__map(s->mev, e, len) : 0;
}

const uint32_t *snapshot__pids(const struct snapshot *s, size_t *n)
{
	*n = s->nr_pids;
	return s->pids;
}

/* @v: process @p's executable mappings, at most the view's room. */
static void fresh_of(const struct proc *p, struct bpfsym_unw_fresh *v)
{
	size_t j, nr = proc__nr_maps(p);
	const struct mapping *m;
	struct bpfsym_unw_range *u;

	memset(v, 0, sizeof(*v));
	v->flags = BPFSYM_UNW_FRESH_SEEDED;
	for (j = 0; j < nr; j++) {
		m = proc__map_at(p, j);
		if (!(m->prot & PROT_EXEC) || m->end <= m->start)
			continue;
		if (v->nr == BPFSYM_UNW_FRESH_RANGES || m->end - m->start > UINT32_MAX) {
			v->flags |= BPFSYM_UNW_FRESH_PARTIAL;
			return;
		}
		u = &v->r[v->nr++];
		u->start = m->start;
		u->len = (uint32_t)(m->end - m->start);
		u->pgoff = (uint32_t)(m->pgoff >> 12);
		u->table = BPFSYM_UNW_NO_TABLE;
	}
}

size_t snapshot__seed_fresh(const struct snapshot *s, struct proc_table *pt, struct probes *bpf)
{
	struct bpfsym_unw_fresh v;
	size_t i, seeded = 0;
	struct proc *p;
	int err;

	for (i = 0; i < s->nr_pids; i++) {
		p = proc_table__find_pid(pt, s->pids[i]);
		if (!p)
			continue;
		fresh_of(p, &v);
		err = probes__seed_fresh(bpf, s->pids[i], &v);
		if (err == -ENOSPC)
			break;
		if (err)
			pr_debug("snapshot: pid %u: no fresh view: %s\n", s->pids[i], strerror(-err));
		else
			seeded++;
	}
	pr_debug("snapshot: %zu of the %zu processes that ran before the recording have a fresh view\n",
		 seeded, s->nr_pids);
	return seeded;
}
