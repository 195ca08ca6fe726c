// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_flame_tree: the flame graph's tree.  Each (comm, stack) the kept
 * samples were counted in is walked once into a tree of frames keyed by
 * (parent, name, colour family), so the work scales with distinct stacks,
 * not samples.  The tree is bounded whatever the recording: frames
 * narrower than the minimum width are left out, and so are the narrowest
 * past max_frames (with their subtrees: a child is never wider than its
 * parent), and a name is cut at NAME_CAP bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "view/format/report_flame_int.h"
#include "view/format/xml_text.h"
#include "view/report_view.h"

/* Intern @s, clean already. */
static int flame__intern(struct flame *fl, const char *s, uint32_t *id)
{
	return strtab__intern_id(&fl->names, s, strlen(s), id);
}

/* Intern the clean form of @raw (cut when it filled NAME_CAP bytes). */
static int flame__name(struct flame *fl, const char *raw, uint32_t *id)
{
	size_t n = strlen(raw);
	int err;

	fl->scratch.len = 0;
	err = xml_text__clean(&fl->scratch, raw, n, n >= NAME_CAP);
	return err ?: flame__intern(fl, (const char *)fl->scratch.data, id);
}

/* The interned name and colour family of frame @id, computed once. */
static int flame__frame(struct flame *fl, uint32_t id, uint32_t *name, uint8_t *cls)
{
	const struct rpt_frame *f;
	const struct rpt_module *m;
	char raw[NAME_CAP + 1];
	int err;

	if (fl->frame_name[id] == RPT_NONE) {
		f = report__frame(fl->r, id);
		if (!f)
			return -EINVAL;
		view__frame_name(fl->o, fl->r, f, raw, sizeof(raw));
		err = flame__name(fl, raw, &fl->frame_name[id]);
		if (err)
			return err;
		m = f->module != RPT_NONE ? report__module(fl->r, f->module) : NULL;
		if (f->kind == RPT_FRAME_KERNEL)
			fl->frame_cls[id] = C_KERNEL;
		else if (f->kind == RPT_FRAME_INTERP)
			fl->frame_cls[id] = C_INTERP;
		else if (m && m->kind == RPT_MOD_ANON)
			fl->frame_cls[id] = C_JIT;
		else
			fl->frame_cls[id] = C_USER;
	}
	*name = fl->frame_name[id];
	*cls = fl->frame_cls[id];
	return 0;
}

static bool node_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct node *a = &((const struct flame *)ctx)->nodes[val - 1], *b = key;

	return a->parent == b->parent && a->name == b->name && a->cls == b->cls;
}

/* The child (@name, @cls) of @parent, created if new; @count samples added to it. */
static int flame__child(struct flame *fl, uint32_t parent, uint32_t name, uint8_t cls, uint64_t count,
			uint32_t *id)
{
	struct node k = { .parent = parent, .name = name, .cls = cls };
	uint64_t h = hash_u64(hash_u64(hash_u64(2, parent), name), cls);
	uint64_t v = htab__find(&fl->node_tab, h, node_eq, fl, &k);
	int err;

	*id = v ? (uint32_t)(v - 1) : RPT_NONE;
	if (*id == RPT_NONE) {
		if (fl->nr_nodes >= RPT_ID_LIMIT)
			return -E2BIG;
		err = htab__reserve(&fl->node_tab, 1);
		err = err ?: rpt_grow((void **)&fl->nodes, &fl->cap_nodes, fl->nr_nodes + 1,
				      sizeof(*fl->nodes));
		if (err)
			return err;
		*id = (uint32_t)fl->nr_nodes++;
		fl->nodes[*id] = k;
		err = htab__add(&fl->node_tab, h, (uint64_t)*id + 1);	/* reserved: cannot fail */
		if (err)
			return err;
	}
	fl->nodes[*id].total += count;
	return 0;
}

/*
 * Walk the samples of pair @p into the tree, below the process's node;
 * off-CPU time in its own colours, its state a pseudo frame on top (as
 * the folded view prints it).
 */
static int flame__pair(struct flame *fl, const struct pair *p)
{
	const char *comm = agg__comm_str(&fl->a, p);
	const uint32_t *ids;
	uint32_t n = 0, j, node, name;
	char state[32];
	uint8_t cls;
	int err;

	err = flame__name(fl, comm[0] ? comm : "[no comm]", &name);
	err = err ?: flame__child(fl, 0, name, C_PROC, p->count, &node);
	ids = err ? NULL : report__stack(fl->r, p->stack, &n);
	if (!ids)
		n = 0;
	/* Leaf first, kernel before user: reversed, that is root first. */
	for (j = n; j-- > 0 && !err;) {
		err = flame__frame(fl, ids[j], &name, &cls);
		err = err ?: flame__child(fl, node, name, p->state ? C_OFF : cls, p->count, &node);
	}
	if (!n && !err) {
		/* As the folded view prints an empty stack. */
		err = flame__intern(fl, "[unknown]", &name);
		err = err ?: flame__child(fl, node, name, p->state ? C_OFF : C_USER, p->count, &node);
	}
	if (p->state && !err) {
		snprintf(state, sizeof(state), "[%s]", rpt_offstate__str(p->state - 1));
		err = flame__intern(fl, state, &name);
		err = err ?: flame__child(fl, node, name, C_OFF, p->count, &node);
	}
	return err;
}

int flame__build(struct flame *fl)
{
	size_t i, nf = report__nr_frames(fl->r);
	uint32_t name, id;
	int err;

	fl->frame_name = malloc((nf ? nf : 1) * sizeof(*fl->frame_name));
	fl->frame_cls = malloc(nf ? nf : 1);
	if (!fl->frame_name || !fl->frame_cls)
		return -ENOMEM;
	memset(fl->frame_name, 0xff, (nf ? nf : 1) * sizeof(*fl->frame_name));
	err = agg__build(&fl->a, fl->r, fl->o);
	fl->total = fl->a.total;
	fl->timed = view__metric(fl->o) != VIEW_METRIC_CPU;
	err = err ?: flame__intern(fl, "all", &name);
	err = err ?: flame__child(fl, RPT_NONE, name, C_ROOT, fl->total, &id);
	for (i = 0; i < fl->a.nr_pairs && !err; i++)
		err = flame__pair(fl, &fl->a.pairs[i]);
	return err;
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/*
 * The fewest samples a kept frame has: min_width pixels at the full
 * width, raised until at most @max frames are kept.  Any threshold keeps
 * a frame's ancestors with it, as none is narrower than its children.
 */
static int flame__cut(const struct flame *fl, double usable, double min_width, size_t max,
		      uint64_t *cut)
{
	double want = ceil(min_width * (double)fl->total / usable);
	uint64_t *v;
	size_t i, n = 0;

	*cut = want > 1 ? (want < 1e18 ? (uint64_t)want : UINT64_MAX) : 1;
	for (i = 0; i < fl->nr_nodes; i++)
		n += fl->nodes[i].total >= *cut;
	if (n <= max)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0, n = 0; i < fl->nr_nodes; i++)
		if (fl->nodes[i].total >= *cut)
			v[n++] = fl->nodes[i].total;
	qsort(v, n, sizeof(*v), u64_desc);
	/* Strictly more than the (max+1)-th widest: at most max of them. */
	*cut = v[max] + 1;
	free(v);
	return 0;
}

static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct flame *fl = ctx;
	const struct node *a = &fl->nodes[*(const uint32_t *)pa], *b = &fl->nodes[*(const uint32_t *)pb];
	int c;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	c = strcmp(flame__name_of(fl, a), flame__name_of(fl, b));
	return c ?: (a->cls > b->cls) - (a->cls < b->cls);
}

int flame__layout(struct flame *fl, double usable, double min_width, size_t max)
{
	uint64_t cut, off;
	size_t i, j, top = 0;
	uint32_t *stack;
	int err;

	err = flame__cut(fl, usable, min_width, max, &cut);
	if (err)
		return err;
	fl->order = malloc(fl->nr_nodes * sizeof(*fl->order));
	fl->dfs = malloc(fl->nr_nodes * sizeof(*fl->dfs));
	stack = malloc(fl->nr_nodes * sizeof(*stack));
	if (!fl->order || !fl->dfs || !stack) {
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < fl->nr_nodes; i++) {
		fl->nodes[i].kept = fl->nodes[i].total >= cut;
		if (!fl->nodes[i].kept)
			fl->omitted++;
		else if (i)
			fl->order[fl->nr_order++] = (uint32_t)i;
	}
	qsort_r(fl->order, fl->nr_order, sizeof(*fl->order), order_cmp, fl);
	for (i = 0; i < fl->nr_order; i = j) {
		struct node *p = &fl->nodes[fl->nodes[fl->order[i]].parent];

		for (j = i; j < fl->nr_order && fl->nodes[fl->order[j]].parent == fl->nodes[fl->order[i]].parent; j++)
			;
		p->first = (uint32_t)i;
		p->nr = (uint32_t)(j - i);
	}
	/* Depth first from the root; a parent is placed before its children. */
	if (fl->nodes[0].kept)
		stack[top++] = 0;
	while (top) {
		struct node *n = &fl->nodes[stack[--top]];

		fl->dfs[fl->nr_dfs++] = (uint32_t)(n - fl->nodes);
		if (n->depth > fl->max_depth)
			fl->max_depth = n->depth;
		off = n->off;
		for (i = 0; i < n->nr; i++) {
			struct node *c = &fl->nodes[fl->order[n->first + i]];

			c->off = off;
			c->depth = n->depth + 1;
			off += c->total;
		}
		/* Pushed right to left, so written left to right. */
		for (i = n->nr; i-- > 0;)
			stack[top++] = fl->order[n->first + i];
	}
	free(stack);
	return 0;
}

void flame__free(struct flame *fl)
{
	agg__free(&fl->a);
	strtab__free(&fl->names);
	free(fl->frame_name);
	free(fl->frame_cls);
	free(fl->nodes);
	htab__free(&fl->node_tab);
	rpt_buf__free(&fl->scratch);
	free(fl->order);
	free(fl->dfs);
}
