// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * view_ctr: containers from a recording's cgroup paths (view_ctr.h).
 * Computed when a view starts, from the paths: a file records cgroups,
 * and what names a container is the reader's knowledge, so a newer reader
 * recognizes more in an older file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "report/report_fmt.h"
#include "view/view_ctr.h"

static bool cg_eq(const void *ctx, const void *key, uint64_t val)
{
	return report__cgroup((const struct report *)ctx, (size_t)(val - 1))->id == *(const uint64_t *)key;
}

int ctr_map__init(struct ctr_map *m, const struct report *r)
{
	size_t i, nr = report__nr_cgroups(r);
	struct container_id c;
	uint32_t id;
	int err = 0;

	memset(m, 0, sizeof(*m));
	m->r = r;
	if (!nr)
		return 0;
	m->of_cg = calloc(nr, sizeof(*m->of_cg));
	m->runtimes = calloc(nr + 1, sizeof(*m->runtimes));
	if (!m->of_cg || !m->runtimes)
		return -ENOMEM;
	err = htab__reserve(&m->by_cg, nr);
	for (i = 0; i < nr && !err; i++) {
		const struct rpt_cgroup *g = report__cgroup(r, i);

		err = htab__add(&m->by_cg, hash_fin(g->id), (uint64_t)i + 1);
		if (err || !container__from_cgroup(g->path, &c))
			continue;
		err = strtab__intern_id(&m->ids, c.id, CONTAINER_ID_LEN, &id);
		if (err)
			break;
		m->of_cg[i] = id + 1;
		m->runtimes[id + 1] = c.runtime;
	}
	return err;
}

uint32_t ctr_map__of(struct ctr_map *m, uint64_t cg)
{
	uint64_t v;

	if (!m->of_cg || !cg)
		return 0;
	if (cg == m->last_cg)
		return m->last;
	v = htab__find(&m->by_cg, hash_fin(cg), cg_eq, m->r, &cg);
	m->last_cg = cg;
	m->last = v ? m->of_cg[v - 1] : 0;
	return m->last;
}

const char *ctr_map__runtime(const struct ctr_map *m, uint32_t k)
{
	return k && k <= ctr_map__nr(m) ? m->runtimes[k] : NULL;
}

void ctr_map__free(struct ctr_map *m)
{
	strtab__free(&m->ids);
	free(m->runtimes);
	free(m->of_cg);
	htab__free(&m->by_cg);
	memset(m, 0, sizeof(*m));
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The container of @m whose id starts with @prefix: 0 none, RPT_NONE several. */
static uint32_t match(const struct ctr_map *m, const char *prefix)
{
	size_t n = strlen(prefix), k;
	uint32_t found = 0;

	for (k = 1; k <= ctr_map__nr(m); k++) {
		if (strncmp(ctr_map__id(m, (uint32_t)k), prefix, n))
			continue;
		if (found)
			return RPT_NONE;
		found = (uint32_t)k;
	}
	return found;
}

int view_ctr__resolve(const struct report *r, const char *prefix, uint64_t **cgs, size_t *nr,
		      char *full, char *err, size_t errlen)
{
	struct ctr_map m;
	uint32_t k;
	size_t i, n = 0;
	int e;

	*cgs = NULL;
	*nr = 0;
	if (!container__valid_prefix(prefix)) {
		snprintf(err, errlen, "expected %d to %d lowercase hex digits of a container id",
			 CONTAINER_SHORT_LEN, CONTAINER_ID_LEN);
		return -EINVAL;
	}
	e = ctr_map__init(&m, r);
	k = e ? 0 : match(&m, prefix);
	if (!e && (k == 0 || k == RPT_NONE)) {
		snprintf(err, errlen, k ? "more than one container of the recording starts with it" :
			 "no container of the recording has this id (%zu containers)", ctr_map__nr(&m));
		e = -EINVAL;
	}
	if (!e && !(*cgs = malloc(report__nr_cgroups(r) * sizeof(**cgs))))
		e = -ENOMEM;
	for (i = 0; !e && i < report__nr_cgroups(r); i++)
		if (m.of_cg[i] == k)
			(*cgs)[n++] = report__cgroup(r, i)->id;
	if (!e) {
		qsort(*cgs, n, sizeof(**cgs), u64_cmp);
		*nr = n;
		snprintf(full, CONTAINER_ID_LEN + 1, "%s", ctr_map__id(&m, k));
	}
	ctr_map__free(&m);
	return e;
}
