// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_table: the default view, one row per (process, module, symbol)
 * (or per the name keys of --sort, as perf's -s) with its self and total
 * samples, sorted by the keys of --sort (view__order).  Rows
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

/* A row of the table: one (process, container, module, symbol), or fewer keys (view__group). */
struct row {
	uint32_t comm, fkey;	/* comm: RPT_NONE when rows are not split by process */
	uint32_t tid;		/* 0 when rows are not split by thread */
	uint32_t ctr;		/* the agg's container, 0: none */
	uint64_t self, total;
	size_t stamp;		/* 1 + the last pair counted in total: recursion counts once */
	const char *comm_s, *mod_s, *sym_s;	/* set once interning is over */
	const char *ctr_s;	/* the container id, NULL: none */
};

/* The row a frame counted in last, and for which comm and container (RPT_NONE: none yet). */
struct frow {
	uint32_t comm, ctr, tid, row;
};

struct table {
	const struct report *r;
	const struct view_opts *o;
	const struct frame_namer *namer;
	unsigned int group;	/* VIEW_GROUP_*: what makes a row */
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

	if (frame == RPT_NONE) {
		b->len = 0;
		err = rpt_buf__put(b, t->group & VIEW_GROUP_MODULE ? unknown2 : "",
				   t->group & VIEW_GROUP_MODULE ? sizeof(VIEW_UNKNOWN) : 1);
		if (!err && (t->group & VIEW_GROUP_SYMBOL))
			err = rpt_buf__put(b, VIEW_UNKNOWN, sizeof(VIEW_UNKNOWN) - 1);
		return err ?: strtab__intern_id(&t->fkeys, b->data, b->len, fk);
	}
	if (t->frame_fkey[frame] != RPT_NONE) {
		*fk = t->frame_fkey[frame];
		return 0;
	}
	f = report__frame(t->r, frame);
	frame_namer__name(t->namer, t->r, f, &fn);
	if (fn.module)
		mod = view__module_base(fn.module);
	if (!(t->group & VIEW_GROUP_MODULE))
		mod = "";
	b->len = 0;
	err = rpt_buf__put(b, mod, strlen(mod) + 1);
	if (err)
		return err;
	view__sanitize((char *)b->data, b->len - 1, false);
	err = t->group & VIEW_GROUP_SYMBOL ? view__buf_frame(b, &fn, f->kind, false) : 0;
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

	return a->comm == b->comm && a->fkey == b->fkey && a->ctr == b->ctr && a->tid == b->tid;
}

/* The index of the row (comm, tid, ctr, fkey), created empty if new. */
static int table__row(struct table *t, uint32_t comm, uint32_t tid, uint32_t ctr, uint32_t fkey,
		      uint32_t *id)
{
	struct row k = { .comm = comm, .fkey = fkey, .ctr = ctr, .tid = tid };
	uint64_t h = hash_u64(hash_u64(hash_u64(hash_u64(1, comm), fkey), ctr), tid), v;
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
	uint32_t fk, comm = t->group & (VIEW_GROUP_COMM | VIEW_GROUP_PID) ? p->comm : RPT_NONE;
	int err;

	if (last && last->comm == comm && last->ctr == p->ctr && last->tid == p->tid) {
		*id = last->row;
		return 0;
	}
	err = table__fkey(t, frame, &fk);
	err = err ?: table__row(t, comm, p->tid, p->ctr, fk, id);
	if (!err && last)
		*last = (struct frow){ comm, p->ctr, p->tid, *id };
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
			/* By samples (or OFFCPU records), whatever the metric weighs. */
			if (nr) {
				t->unnamed.frames += p->n;
				t->unnamed.by_reason[t->frame_reason[ids[j]]] += p->n;
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
	case VIEW_KEY_PID:
		return a->tid == b->tid ? 0 : a->tid < b->tid ? -1 : 1;
	default:
		return 0;
	}
}

/* After the user's keys, the default order, so the output never depends on qsort. */
static const uint8_t default_keys[] = {
	VIEW_KEY_SELF, VIEW_KEY_TOTAL, VIEW_KEY_SYMBOL, VIEW_KEY_COMM, VIEW_KEY_MODULE,
};

/* The order: view__order's keys (@ctx: a byte count, then the keys), then the default's. */
static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const uint8_t *keys = ctx;
	size_t i;
	int c;

	for (i = 0; i < keys[0]; i++)
		if ((c = key_cmp(pa, pb, keys[1 + i])))
			return c;
	for (i = 0; i < sizeof(default_keys); i++)
		if ((c = key_cmp(pa, pb, default_keys[i])))
			return c;
	return 0;
}

/*
 * "# rows: 13, sorted by self, comm": the order, and how many rows
 * --percent-limit (@below) and --limit left out of @rows.
 */
static void print_order(FILE *out, const uint8_t *keys, size_t shown, size_t below, size_t rows)
{
	size_t i;

	fprintf(out, "# rows: %zu", rows);
	if (below)
		fprintf(out, ", %zu below --percent-limit", below);
	if (shown < rows - below)
		fprintf(out, ", the first %zu shown (--limit)", shown);
	fprintf(out, ", sorted by ");
	for (i = 0; i < keys[0]; i++)
		fprintf(out, "%s%s", i ? ", " : "", view_key__name(keys[1 + i]));
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

/*
 * @v of @o's metric: "N samples", or with a timed metric (weights in ns)
 * "X ms"; in a column @width wide (no unit then) when @width is not "".
 */
static void put_amount(FILE *out, const struct view_opts *o, uint64_t v, const char *width)
{
	bool timed = view__metric(o) != VIEW_METRIC_CPU;

	if (width[0] && timed)
		fprintf(out, "%9.2f", (double)v / 1e6);
	else if (width[0])
		fprintf(out, "%9" PRIu64, v);
	else if (timed)
		fprintf(out, "%.2f ms", (double)v / 1e6);
	else
		fprintf(out, "%" PRIu64 " samples", v);
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
		fprintf(out, "# container %s (%s): ", ctr_map__id(&t->a.ctrs, (uint32_t)best),
			ctr_map__runtime(&t->a.ctrs, (uint32_t)best));
		put_amount(out, t->o, n[best], "");
		fprintf(out, ", %.2f%%\n", 100.0 * (double)n[best] / (double)t->a.total);
		n[best] = 0;
		shown++;
	}
	fprintf(out, "# in no container: ");
	put_amount(out, t->o, n[0], "");
	fprintf(out, ", %.2f%%\n", 100.0 * (double)n[0] / (double)t->a.total);
	free(n);
	return 0;
}

/* @row's share of @total in per cent: its total with --children, else its self. */
static double row_share(const struct row *row, const struct view_opts *o, uint64_t total)
{
	uint64_t n = o && o->children == VIEW_CHILDREN_ON ? row->total : row->self;

	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* Drop the rows of @t whose share is below --percent-limit, keeping the order.  How many. */
static size_t drop_below(struct table *t, const struct view_opts *o)
{
	size_t i, n = 0, before = t->nr_rows;

	if (!o || o->percent_limit <= 0.0)
		return 0;
	for (i = 0; i < t->nr_rows; i++)
		if (row_share(&t->rows[i], o, t->a.total) >= o->percent_limit)
			t->rows[n++] = t->rows[i];
	t->nr_rows = n;
	return before - n;
}

/* The process cell of @row: "COMM", or "TID:COMM" when rows are threads (perf's pid key). */
static void process_cell(char *buf, size_t len, const struct table *t, const struct row *row)
{
	if (t->group & VIEW_GROUP_PID)
		snprintf(buf, len, "%" PRIu32 ":%s", row->tid, row->comm_s);
	else
		snprintf(buf, len, "%s", row->comm_s);
	view__sanitize(buf, strlen(buf), false);
}

/* The count cells of @row, as --children asks; the titles when @row is NULL. */
static void print_counts(FILE *out, const struct row *row, const struct view_opts *o, uint64_t total)
{
	enum view_children c = o ? o->children : VIEW_CHILDREN_BOTH;
	const char *unit = view__metric(o) == VIEW_METRIC_CPU ? "samples" : "ms";
	double self, all;

	if (!row) {
		if (c == VIEW_CHILDREN_ON)
			fprintf(out, "# %9s %7s %9s  ", "children%", "self%", unit);
		else if (c == VIEW_CHILDREN_OFF)
			fprintf(out, "# %6s %9s  ", "self%", unit);
		else
			fprintf(out, "# %6s %8s %9s  ", "self%", "total%", unit);
		return;
	}
	self = 100.0 * (double)row->self / (double)total;
	all = 100.0 * (double)row->total / (double)total;
	if (c == VIEW_CHILDREN_ON)
		fprintf(out, "%10.2f%% %6.2f%% ", all, self);
	else if (c == VIEW_CHILDREN_OFF)
		fprintf(out, "%7.2f%% ", self);
	else
		fprintf(out, "%7.2f%% %7.2f%% ", self, all);
	put_amount(out, o, row->self, "9");
	fputs("  ", out);
}

/*
 * The column titles (unless --quiet), then the first @nr rows: the
 * counts, then a column per row key (view__group), and a container
 * column (its short id) when a row has one.
 */
static void print_rows(FILE *out, const struct table *t, const struct view_opts *o, size_t nr)
{
	size_t i, cw = strlen(t->group & VIEW_GROUP_PID ? "pid:process" : "process"), mw = strlen("module");
	bool ctr = false, proc = t->group & (VIEW_GROUP_COMM | VIEW_GROUP_PID);
	bool mod = t->group & VIEW_GROUP_MODULE, sym = t->group & VIEW_GROUP_SYMBOL;
	char cell[64];

	for (i = 0; i < nr; i++) {
		size_t m = strlen(t->rows[i].mod_s), c;

		process_cell(cell, sizeof(cell), t, &t->rows[i]);
		c = strlen(cell);
		cw = c > cw ? (c < 24 ? c : 24) : cw;
		mw = m > mw ? (m < 32 ? m : 32) : mw;
		ctr |= t->rows[i].ctr_s != NULL;
	}
	if (!t->a.total) {
		if (!o || !o->quiet)
			fprintf(out, view__metric(o) == VIEW_METRIC_CPU ? "# no samples\n" : "# no time\n");
		return;
	}
	if (!o || !o->quiet) {
		print_counts(out, NULL, o, t->a.total);
		if (proc)
			fprintf(out, "%-*s  ", (int)cw, t->group & VIEW_GROUP_PID ? "pid:process" : "process");
		if (ctr)
			fprintf(out, "%-*s  ", CONTAINER_SHORT_LEN, "container");
		if (mod)
			fprintf(out, "%-*s  ", (int)mw, "module");
		fprintf(out, "%s\n", sym ? "symbol" : "");
	}
	for (i = 0; i < nr; i++) {
		const struct row *row = &t->rows[i];

		print_counts(out, row, o, t->a.total);
		process_cell(cell, sizeof(cell), t, row);
		if (proc)
			fprintf(out, "%-*s  ", (int)cw, cell);
		if (ctr)
			fprintf(out, "%-*.*s  ", CONTAINER_SHORT_LEN, CONTAINER_SHORT_LEN,
				row->ctr_s ? row->ctr_s : "-");
		if (mod)
			fprintf(out, "%-*s  ", (int)mw, row->mod_s);
		fprintf(out, "%s\n", sym ? row->sym_s : "");
	}
}

/* The "#" lines above the rows (none with --quiet).  0 or -ENOMEM. */
static int print_top(FILE *out, const struct table *t, const struct view_opts *o)
{
	if (o && o->quiet)
		return 0;
	view__print_header(out, t->r, o, &t->a, &t->unnamed);
	return o && o->header_only ? 0 : print_containers(out, t);
}

int report_view__table(FILE *out, const struct report *r, const struct view_opts *o)
{
	struct table t = { .r = r, .o = o, .namer = view__namer(o), .group = view__group(o) };
	uint8_t keys[VIEW_KEY_MAX + 2];
	size_t i, nr, rows, below;
	int err;

	if (!out || !r)
		return -EINVAL;
	keys[0] = (uint8_t)view__order(o, keys + 1);
	t.a.by_tid = t.group & VIEW_GROUP_PID;
	err = table__frames(&t, report__nr_frames(r));
	err = err ?: agg__build(&t.a, r, o);
	err = err ?: table__count(&t);
	if (err)
		goto out;
	for (i = 0; i < t.nr_rows; i++) {
		struct row *row = &t.rows[i];

		row->comm_s = row->comm != RPT_NONE ? strtab__str(&t.a.comms, row->comm) : "";
		row->mod_s = strtab__str(&t.fkeys, row->fkey);
		row->sym_s = row->mod_s + strlen(row->mod_s) + 1;
		row->ctr_s = ctr_map__id(&t.a.ctrs, row->ctr);
	}
	if (t.nr_rows)
		qsort_r(t.rows, t.nr_rows, sizeof(*t.rows), row_cmp, keys);
	rows = t.nr_rows;
	below = drop_below(&t, o);
	nr = o && o->limit && o->limit < t.nr_rows ? o->limit : t.nr_rows;
	err = print_top(out, &t, o);
	if (err || (o && o->header_only))
		goto flush;
	if (!o || !o->quiet)
		print_order(out, keys, nr, below, rows);
	print_rows(out, &t, o, nr);
flush:
	if (!err && (fflush(out) || ferror(out)))
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
