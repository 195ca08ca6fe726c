// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_cgroup: the CGROUP record (docs/FORMAT.md), both ways, and the
 * reader's table of them.  A sample carries its cgroup's id; the record,
 * written once per file at the id's first use, says which path that is,
 * so a file names its cgroups on its own and a reader never asks the
 * machine (which may be another one, or the cgroup gone).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "report/report_fmt.h"
#include "report/report_int.h"

static bool path_ok(const char *p, size_t n)
{
	return n >= 1 && n <= RPT_CGROUP_PATH_MAX && p[0] == '/' && !memchr(p, '\0', n);
}

int rpt_cgroup__write(struct rpt_buf *b, uint64_t id, const char *path)
{
	size_t n = path ? strnlen(path, RPT_CGROUP_PATH_MAX + 1) : 0;
	int err;

	if (!id || !path || !path_ok(path, n))
		return -EINVAL;
	err = rpt_buf__uv(b, id);
	err = err ?: rpt_buf__uv(b, n);
	return err ?: rpt_buf__put(b, path, n);
}

static bool cg_eq(const void *ctx, const void *key, uint64_t val)
{
	return ((const struct rpt_cgtab *)ctx)->v[val - 1].id == *(const uint64_t *)key;
}

static size_t cgtab__find(const struct rpt_cgtab *t, uint64_t id)
{
	return (size_t)htab__find(&t->tab, hash_fin(id), cg_eq, t, &id);
}

/* Append (@id, the @n bytes at @path), known to be valid and new.  0 or -ENOMEM. */
static int cgtab__append(struct rpt_cgtab *t, uint64_t id, const char *path, size_t n)
{
	size_t before = t->cap * sizeof(*t->v) + htab__bytes(&t->tab);
	char *copy;
	int err;

	err = htab__reserve(&t->tab, 1);
	err = err ?: rpt_grow((void **)&t->v, &t->cap, t->nr + 1, sizeof(*t->v));
	t->bytes += t->cap * sizeof(*t->v) + htab__bytes(&t->tab) - before;
	copy = err ? NULL : strndup(path, n);
	if (!copy)
		return -ENOMEM;
	t->bytes += n + 1;
	t->v[t->nr++] = (struct rpt_cgroup){ id, copy };
	return htab__add(&t->tab, hash_fin(id), t->nr);	/* reserved: cannot fail */
}

int rpt_cgtab__read(struct rpt_cgtab *t, struct rpt_cur *c, const char **why)
{
	uint64_t id, n;
	int err;

	*why = "malformed field";
	if (rpt_cur__uv(c, &id) || rpt_cur__uv(c, &n) || n > (uint64_t)(c->end - c->p))
		return -EINVAL;
	if (!id)
		*why = "cgroup id 0";
	else if (!path_ok((const char *)c->p, (size_t)n))
		*why = "path empty, not absolute, with a NUL or too long";
	else if (cgtab__find(t, id))
		*why = "cgroup id named twice";
	else if (t->nr >= RPT_CGROUP_MAX)
		*why = "too many CGROUP records";
	else
		*why = NULL;
	if (*why)
		return -EINVAL;
	err = cgtab__append(t, id, (const char *)c->p, (size_t)n);
	if (!err)
		c->p += n;
	return err;
}

int rpt_cgtab__add(struct rpt_cgtab *t, uint64_t id, const char *path)
{
	if (!id || !path || !path_ok(path, strlen(path)))
		return -EINVAL;
	if (cgtab__find(t, id))
		return 0;
	if (t->nr >= RPT_CGROUP_MAX)
		return -E2BIG;
	return cgtab__append(t, id, path, strlen(path));
}

void rpt_cgtab__free(struct rpt_cgtab *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		free((char *)t->v[i].path);
	free(t->v);
	htab__free(&t->tab);
	*t = (struct rpt_cgtab){};
}

const char *report__cgroup_path(const struct report *r, uint64_t id)
{
	const struct rpt_cgtab *t = r ? &r->cgroups : NULL;
	size_t i = t ? cgtab__find(t, id) : 0;

	return i ? t->v[i - 1].path : NULL;
}

size_t report__nr_cgroups(const struct report *r)
{
	const struct rpt_cgtab *t = r ? &r->cgroups : NULL;

	return t ? t->nr : 0;
}

const struct rpt_cgroup *report__cgroup(const struct report *r, size_t i)
{
	const struct rpt_cgtab *t = r ? &r->cgroups : NULL;

	return t && i < t->nr ? &t->v[i] : NULL;
}
