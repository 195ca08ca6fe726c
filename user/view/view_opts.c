// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * view_opts: the sort keys' names and the sample filters every view
 * applies the same way (view_opts.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/view_opts.h"

static const struct {
	const char *name;
	enum view_key key;
} key_names[] = {
	/* The first name of each key is the one printed. */
	{ "self", VIEW_KEY_SELF },
	{ "samples", VIEW_KEY_SELF },
	{ "total", VIEW_KEY_TOTAL },
	{ "comm", VIEW_KEY_COMM },
	{ "process", VIEW_KEY_COMM },
	{ "module", VIEW_KEY_MODULE },
	{ "dso", VIEW_KEY_MODULE },
	{ "symbol", VIEW_KEY_SYMBOL },
	{ "sym", VIEW_KEY_SYMBOL },
	{ "container", VIEW_KEY_CONTAINER },
	{ "pid", VIEW_KEY_PID },
	{ "tid", VIEW_KEY_PID },
};

#define NR_KEY_NAMES (sizeof(key_names) / sizeof(key_names[0]))

const char *view_key__name(enum view_key k)
{
	size_t i;

	for (i = 0; i < NR_KEY_NAMES; i++)
		if (key_names[i].key == k)
			return key_names[i].name;
	return "?";
}

int view_sort__parse(struct view_opts *o, const char *spec, char *err, size_t errlen)
{
	const char *p = spec, *end;
	uint8_t keys[VIEW_KEY_MAX];
	size_t nr = 0, i, len;

	do {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		for (i = 0; i < NR_KEY_NAMES; i++)
			if (strlen(key_names[i].name) == len && !strncmp(key_names[i].name, p, len))
				break;
		if (i == NR_KEY_NAMES) {
			snprintf(err, errlen, "unknown sort key '%.*s' (keys: self, samples, total, "
				 "comm, process, module, dso, symbol, sym, container, pid, tid)", (int)(len < 64 ? len : 64), p);
			return -EINVAL;
		}
		if (memchr(keys, key_names[i].key, nr)) {
			snprintf(err, errlen, "sort key '%.*s' given twice", (int)len, p);
			return -EINVAL;
		}
		keys[nr++] = (uint8_t)key_names[i].key;
		p = end ? end + 1 : NULL;
	} while (p);
	memcpy(o->sort, keys, nr);
	o->nr_sort = nr;
	return 0;
}

/* The row key each name key of --sort makes (0: a count or the container, no row key). */
static unsigned int key_group(uint8_t k)
{
	switch (k) {
	case VIEW_KEY_COMM:
		return VIEW_GROUP_COMM;
	case VIEW_KEY_PID:
		return VIEW_GROUP_PID;
	case VIEW_KEY_MODULE:
		return VIEW_GROUP_MODULE;
	case VIEW_KEY_SYMBOL:
		return VIEW_GROUP_SYMBOL;
	default:
		return 0;
	}
}

unsigned int view__group(const struct view_opts *o)
{
	unsigned int g = 0;
	size_t i;

	for (i = 0; o && i < o->nr_sort && i < VIEW_KEY_MAX; i++)
		g |= key_group(o->sort[i]);
	return g ? g : VIEW_GROUP_DEFAULT;
}

size_t view__order(const struct view_opts *o, uint8_t *keys)
{
	size_t i, n = 0, nr = o ? o->nr_sort : 0;
	bool count = false;

	for (i = 0; i < nr && i < VIEW_KEY_MAX; i++)
		if (!key_group(o->sort[i])) {
			keys[n++] = o->sort[i];
			count |= o->sort[i] == VIEW_KEY_SELF || o->sort[i] == VIEW_KEY_TOTAL;
		}
	if (!count)
		keys[n++] = o && o->children == VIEW_CHILDREN_ON ? VIEW_KEY_TOTAL : VIEW_KEY_SELF;
	for (i = 0; i < nr && i < VIEW_KEY_MAX; i++)
		if (key_group(o->sort[i]))
			keys[n++] = o->sort[i];
	return n;
}

const struct frame_namer *view__namer(const struct view_opts *o)
{
	return o ? o->namer : NULL;
}

bool view__comm_ok(const struct view_opts *o, const char *comm)
{
	size_t i;

	if (!o || !o->comms || !o->nr_comms)
		return true;
	for (i = 0; i < o->nr_comms; i++)
		if (!strcmp(o->comms[i], comm))
			return true;
	return false;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool view__cgroup_ok(const struct view_opts *o, uint64_t cg)
{
	if (!o || !o->container)
		return true;
	return o->cgroups && bsearch(&cg, o->cgroups, o->nr_cgroups, sizeof(cg), u64_cmp);
}

int view__keep(const struct view_opts *o, const struct rpt_sample *s)
{
	size_t i;

	if (!view__cgroup_ok(o, s->cgroup))
		return 0;
	if (o && o->pids && o->nr_pids) {
		for (i = 0; i < o->nr_pids && o->pids[i] != s->pid; i++)
			;
		if (i == o->nr_pids)
			return 0;
	}
	if (o && o->tids && o->nr_tids) {
		for (i = 0; i < o->nr_tids && o->tids[i] != s->tid; i++)
			;
		if (i == o->nr_tids)
			return 0;
	}
	return view__comm_ok(o, s->comm ? s->comm : "");
}

uint64_t view__sample_weight(const struct view_opts *o, const struct report *r)
{
	uint32_t freq = report__header(r)->freq;

	return view__metric(o) == VIEW_METRIC_WALL ? 1000000000ULL / (freq ? freq : 1) : 1;
}

bool view__state_ok(const struct view_opts *o, uint32_t state)
{
	return !o || !o->off_states || (state < 32 && (o->off_states & (1u << state)));
}

int view__keep_offcpu(const struct view_opts *o, const struct rpt_offcpu *x)
{
	const struct rpt_sample s = { .cgroup = x->cgroup, .comm = x->comm, .pid = x->pid, .tid = x->tid };

	return view__state_ok(o, x->state) && view__keep(o, &s);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A sorted copy of @v (@nr ids) into *@out; NULL when @nr is 0.  0 or -ENOMEM. */
static int id_set(uint32_t **out, const uint32_t *v, size_t nr)
{
	*out = NULL;
	if (!v || !nr)
		return 0;
	*out = malloc(nr * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, v, nr * sizeof(**out));
	qsort(*out, nr, sizeof(**out), u32_cmp);
	return 0;
}

int pid_set__init(struct pid_set *p, const struct view_opts *o)
{
	int err;

	*p = (struct pid_set){};
	if (!o)
		return 0;
	err = id_set(&p->v, o->pids, o->nr_pids);
	err = err ?: id_set(&p->t, o->tids, o->nr_tids);
	p->nr = p->v ? o->nr_pids : 0;
	p->nr_t = p->t ? o->nr_tids : 0;
	return err;
}

bool pid_set__keep_ids(const struct pid_set *p, uint32_t pid, uint32_t tid)
{
	return (!p->v || bsearch(&pid, p->v, p->nr, sizeof(*p->v), u32_cmp)) &&
	       (!p->t || bsearch(&tid, p->t, p->nr_t, sizeof(*p->t), u32_cmp));
}

bool pid_set__keep(const struct pid_set *p, const struct rpt_sample *s)
{
	return pid_set__keep_ids(p, s->pid, s->tid);
}

void pid_set__free(struct pid_set *p)
{
	free(p->v);
	free(p->t);
	*p = (struct pid_set){};
}
