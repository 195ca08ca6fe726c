// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_table: the default view, one row per (process, module, symbol)
 * with its self and total samples, sorted by the keys of --sort.  Rows
 * are built from the (comm, stack) counts of report_agg.c: each frame's
 * (module, symbol) key is computed once per frame id, so the work grows
 * with distinct stacks and frames, not samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/strtab.h"
#include "view/report_agg.h"
#include "view/report_view_int.h"

/* A row of the table: one (process, container, module, symbol). */
struct row {
	uint32_t comm, fkey;
	uint32_t ctr;		/* the agg's container, 0: none */
	uint64_t self, total;
	size_t stamp;		/* 1 + the last pair counted in total: recursion counts once */
	const char *comm_s, *mod_s, *sym_s;	/* set once interning is over */
	const char *ctr_s;	/* the container id, NULL: none */
};

/* The row a frame counted in last, and for which comm and container (RPT_NONE: none yet). */
struct frow {
	uint32_t comm, ctr, row;
};

struct table {
	const struct report *r;
	const struct frame_namer *namer;
	struct agg a;
	struct strtab fkeys;	/* "MODULE\0SYMBOL" */
	uint32_t *frame_fkey;	/* per frame id, RPT_NONE until computed */
	uint8_t *frame_reason;	/* per frame id, the unnamed slot; RPT_OK: named.  With fkey */
	struct frow *frame_row;	/* per frame id */
	struct unnamed unnamed;
	struct rpt_buf scratch;
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct htab row_tab;	/* hash of (comm, fkey) -> row index + 1 */
};

/* The (module, symbol) key of @frame; RPT_NONE stands for the frame of an empty stack. */
static int table__fkey(struct table *t, uint32_t frame, uint32_t *fk)
{
	static const char unknown2[] = VIEW_UNKNOWN "\0" VIEW_UNKNOWN;
	struct rpt_buf *b = &t->scratch;
	const struct rpt_frame *f;
	const char *mod = VIEW_UNKNOWN;
	struct frame_name fn;
	int err;

	if (frame == RPT_NONE)
		return strtab__intern_id(&t->fkeys, unknown2, sizeof(unknown2) - 1, fk);
	if (t->frame_fkey[frame] != RPT_NONE) {
		*fk = t->frame_fkey[frame];
		return 0;
	}
	f = report__frame(t->r, frame);
	frame_namer__name(t->namer, t->r, f, &fn);
	if (fn.module)
		mod = view__module_base(fn.module);
	b->len = 0;
	err = rpt_buf__put(b, mod, strlen(mod) + 1);
	if (err)
		return err;
	view__sanitize((char *)b->data, b->len - 1, false);
	err = view__buf_frame(b, &fn, f->kind, false);
	err = err ?: strtab__intern_id(&t->fkeys, b->data, b->len, fk);
	if (err)
		return err;
	t->frame_fkey[frame] = *fk;
	/* Unnamed means no symbol, whatever the file says the reason is. */
	if (fn.sym)
		t->frame_reason[frame] = RPT_OK;
	else if (fn.reason > RPT_OK && fn.reason < RPT_REASON_MAX)
		t->frame_reason[frame] = (uint8_t)fn.reason;
	else
		t->frame_reason[frame] = RPT_REASON_MAX;
	return 0;
}

static bool row_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct row *a = &((const struct table *)ctx)->rows[val - 1], *b = key;

	return a->comm == b->comm && a->fkey == b->fkey && a->ctr == b->ctr;
}

/* The index of the row (comm, ctr, fkey), created empty if new. */
static int table__row(struct table *t, uint32_t comm, uint32_t ctr, uint32_t fkey, uint32_t *id)
{
	struct row k = { .comm = comm, .fkey = fkey, .ctr = ctr };
	uint64_t h = hash_u64(hash_u64(hash_u64(1, comm), fkey), ctr), v;
	int err;

	v = htab__find(&t->row_tab, h, row_eq, t, &k);
	if (v) {
		*id = (uint32_t)(v - 1);
		return 0;
	}
	err = htab__reserve(&t->row_tab, 1);
	err = err ?: rpt_grow((void **)&t->rows, &t->cap_rows, t->nr_rows + 1, sizeof(*t->rows));
	if (err)
		return err;
	*id = (uint32_t)t->nr_rows++;
	t->rows[*id] = k;
	return htab__add(&t->row_tab, h, (uint64_t)*id + 1);	/* reserved: cannot fail */
}

/*
 * The row frame @frame (RPT_NONE: the frame of an empty stack) counts in
 * for @comm.  Deep stacks repeat their frames in one process, so the row
 * a frame went to last is kept beside it: most lookups end there.
 */
static int table__row_of(struct table *t, const struct pair *p, uint32_t frame, uint32_t *id)
{
	struct frow *last = frame != RPT_NONE ? &t->frame_row[frame] : NULL;
	uint32_t fk;
	int err;

	if (last && last->comm == p->comm && last->ctr == p->ctr) {
		*id = last->row;
		return 0;
	}
	err = table__fkey(t, frame, &fk);
	err = err ?: table__row(t, p->comm, p->ctr, fk, id);
	if (!err && last)
		*last = (struct frow){ p->comm, p->ctr, *id };
	return err;
}

static int table__count(struct table *t)
{
	size_t i;
	int err;

	for (i = 0; i < t->a.nr_pairs; i++) {
		const struct pair *p = &t->a.pairs[i];
		uint32_t nr = 0, j, id;
		const uint32_t *ids = report__stack(t->r, p->stack, &nr);

		for (j = 0; j < (nr ? nr : 1); j++) {
			struct row *row;

			err = table__row_of(t, p, nr ? ids[j] : RPT_NONE, &id);
			if (err)
				return err;
			row = &t->rows[id];
			if (nr) {
				t->unnamed.frames += p->count;
				t->unnamed.by_reason[t->frame_reason[ids[j]]] += p->count;
			}
			if (j == 0)
				row->self += p->count;
			if (row->stamp != i + 1) {
				row->total += p->count;
				row->stamp = i + 1;
			}
		}
	}
	return 0;
}

/* Comparisons, not subtraction: the counts are u64.  Counts most first, names A to Z. */
static int key_cmp(const struct row *a, const struct row *b, uint8_t key)
{
	switch (key) {
	case VIEW_KEY_SELF:
		return a->self == b->self ? 0 : a->self > b->self ? -1 : 1;
	case VIEW_KEY_TOTAL:
		return a->total == b->total ? 0 : a->total > b->total ? -1 : 1;
	case VIEW_KEY_COMM:
		return strcmp(a->comm_s, b->comm_s);
	case VIEW_KEY_MODULE:
		return strcmp(a->mod_s, b->mod_s);
	case VIEW_KEY_SYMBOL:
		return strcmp(a->sym_s, b->sym_s);
	case VIEW_KEY_CONTAINER:
		if (!a->ctr_s || !b->ctr_s)
			return !a->ctr_s - !b->ctr_s;
		return strcmp(a->ctr_s, b->ctr_s);
	default:
		return 0;
	}
}

/* After the user's keys, the default order, so the output never depends on qsort. */
static const uint8_t default_keys[] = {
	VIEW_KEY_SELF, VIEW_KEY_TOTAL, VIEW_KEY_SYMBOL, VIEW_KEY_COMM, VIEW_KEY_MODULE,
};

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct view_opts *o = ctx;
	size_t i, nr = o ? o->nr_sort : 0;
	int c;

	for (i = 0; i < nr && i < VIEW_KEY_MAX; i++)
		if ((c = key_cmp(pa, pb, o->sort[i])))
			return c;
	for (i = 0; i < sizeof(default_keys); i++)
		if ((c = key_cmp(pa, pb, default_keys[i])))
			return c;
	return 0;
}

/* "# rows: 13, sorted by self, total": the order, and how many rows --limit left out. */
static void print_order(FILE *out, const struct view_opts *o, size_t shown, size_t rows)
{
	size_t i, nr = o ? o->nr_sort : 0;

	fprintf(out, "# rows: %zu", rows);
	if (shown < rows)
		fprintf(out, ", the first %zu shown (--limit)", shown);
	fprintf(out, ", sorted by ");
	if (!nr)
		fprintf(out, "%s", view_key__name(VIEW_KEY_SELF));
	for (i = 0; i < nr && i < VIEW_KEY_MAX; i++)
		fprintf(out, "%s%s", i ? ", " : "", view_key__name(o->sort[i]));
	fprintf(out, "\n#\n");
}

/* The per-frame arrays of @t, for the @nf frames of the report.  0 or -ENOMEM. */
static int table__frames(struct table *t, size_t nf)
{
	size_t n = nf ? nf : 1;

	t->frame_fkey = malloc(n * sizeof(*t->frame_fkey));
	t->frame_reason = malloc(n);
	t->frame_row = malloc(n * sizeof(*t->frame_row));
	if (!t->frame_fkey || !t->frame_reason || !t->frame_row)
		return -ENOMEM;
	memset(t->frame_fkey, 0xff, n * sizeof(*t->frame_fkey));
	memset(t->frame_row, 0xff, n * sizeof(*t->frame_row));
	return 0;
}

#define TABLE_CTR_LINES 20	/* containers listed above the table, at most */

/* Kept samples per container (index 0: in none), into a new array; NULL when out of memory. */
static uint64_t *ctr_counts(const struct table *t)
{
	uint64_t *n = calloc(ctr_map__nr(&t->a.ctrs) + 1, sizeof(*n));
	size_t i;

	for (i = 0; n && i < t->a.nr_pairs; i++)
		n[t->a.pairs[i].ctr] += t->a.pairs[i].count;
	return n;
}

/*
 * "# container ID (RUNTIME): N samples, P%" for each container with kept
 * samples, most first, and the samples in none: above the rows, which
 * are one per process and function.  0 or -ENOMEM.
 */
static int print_containers(FILE *out, const struct table *t)
{
	size_t nc = ctr_map__nr(&t->a.ctrs), i, best, shown = 0;
	uint64_t *n;

	if (!nc || !t->a.total)
		return 0;
	n = ctr_counts(t);
	if (!n)
		return -ENOMEM;
	while (shown < TABLE_CTR_LINES) {
		for (best = 0, i = 1; i <= nc; i++)
			if (n[i] && (!best || n[i] > n[best]))
				best = i;
		if (!best)
			break;
		fprintf(out, "# container %s (%s): %" PRIu64 " samples, %.2f%%\n",
			ctr_map__id(&t->a.ctrs, (uint32_t)best), ctr_map__runtime(&t->a.ctrs, (uint32_t)best),
			n[best], 100.0 * (double)n[best] / (double)t->a.total);
		n[best] = 0;
		shown++;
	}
	fprintf(out, "# in no container: %" PRIu64 " samples, %.2f%%\n", n[0],
		100.0 * (double)n[0] / (double)t->a.total);
	free(n);
	return 0;
}

/* The column titles, then the first @nr rows; a container column (its short id) when a row has one. */
static void print_rows(FILE *out, const struct table *t, size_t nr)
{
	size_t i, cw = strlen("process"), mw = strlen("module");
	bool ctr = false;

	for (i = 0; i < nr; i++) {
		size_t c = strlen(t->rows[i].comm_s), m = strlen(t->rows[i].mod_s);

		cw = c > cw ? (c < 16 ? c : 16) : cw;
		mw = m > mw ? (m < 32 ? m : 32) : mw;
		ctr |= t->rows[i].ctr_s != NULL;
	}
	if (!t->a.total) {
		fprintf(out, "# no samples\n");
		return;
	}
	fprintf(out, "# %6s %8s %9s  %-*s  ", "self%", "total%", "samples", (int)cw, "process");
	if (ctr)
		fprintf(out, "%-*s  ", CONTAINER_SHORT_LEN, "container");
	fprintf(out, "%-*s  %s\n", (int)mw, "module", "symbol");
	for (i = 0; i < nr; i++) {
		const struct row *row = &t->rows[i];
		char comm[64];

		snprintf(comm, sizeof(comm), "%s", row->comm_s);
		view__sanitize(comm, strlen(comm), false);
		fprintf(out, "%7.2f%% %7.2f%% %9" PRIu64 "  %-*s  ",
			100.0 * (double)row->self / (double)t->a.total,
			100.0 * (double)row->total / (double)t->a.total, row->self, (int)cw, comm);
		if (ctr)
			fprintf(out, "%-*.*s  ", CONTAINER_SHORT_LEN, CONTAINER_SHORT_LEN,
				row->ctr_s ? row->ctr_s : "-");
		fprintf(out, "%-*s  %s\n", (int)mw, row->mod_s, row->sym_s);
	}
}

int report_view__table(FILE *out, const struct report *r, const struct view_opts *o)
{
	struct table t = { .r = r, .namer = view__namer(o) };
	size_t i, nr;
	int err;

	if (!out || !r)
		return -EINVAL;
	err = table__frames(&t, report__nr_frames(r));
	err = err ?: agg__build(&t.a, r, o);
	err = err ?: table__count(&t);
	if (err)
		goto out;
	for (i = 0; i < t.nr_rows; i++) {
		struct row *row = &t.rows[i];

		row->comm_s = strtab__str(&t.a.comms, row->comm);
		row->mod_s = strtab__str(&t.fkeys, row->fkey);
		row->sym_s = row->mod_s + strlen(row->mod_s) + 1;
		row->ctr_s = ctr_map__id(&t.a.ctrs, row->ctr);
	}
	if (t.nr_rows)
		qsort_r(t.rows, t.nr_rows, sizeof(*t.rows), row_cmp, (void *)o);
	nr = o && o->limit && o->limit < t.nr_rows ? o->limit : t.nr_rows;
	view__print_header(out, r, o, t.a.total, &t.unnamed);
	err = print_containers(out, &t);
	if (err)
		goto out;
	print_order(out, o, nr, t.nr_rows);
	print_rows(out, &t, nr);
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	free(t.frame_fkey);
	free(t.frame_reason);
	free(t.frame_row);
	rpt_buf__free(&t.scratch);
	free(t.rows);
	htab__free(&t.row_tab);
	strtab__free(&t.fkeys);
	agg__free(&t.a);
	return err;
}
