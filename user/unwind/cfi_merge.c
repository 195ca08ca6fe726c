// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_merge: every FDE's rows into one table.
 *
 * FDEs come in link order, not PC order, and a hostile (or buggy) file
 * may make them overlap.  Each list (.eh_frame's, .debug_frame's) is
 * sorted by start and cut into pieces that do not overlap: the
 * earlier-starting FDE keeps the PCs both cover (on a tie, the one first
 * in the section).  .debug_frame only fills what .eh_frame leaves
 * uncovered: its pieces are cut again around .eh_frame's.  A piece that
 * starts inside its FDE starts with the row in effect there.  Between
 * pieces CFI_PAD_MAX or more bytes apart, and after the last, a
 * frame-pointer row.
 */
#include <errno.h>
#include <stdlib.h>

#include "bpfsym.h"
#include "unwind/cfi_int.h"

#define CFI_PAD_MAX 16	/* bytes between FDEs that are padding, not code */

/* The PCs [lo, hi) of FDE record rec. */
struct piece {
	uint32_t lo, hi;
	uint32_t rec;
};

struct out {
	struct cfi_row *rows;
	size_t nr;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct cfi_fde_rec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort @r (already sorted: the usual case for linkers that sort, skip qsort). */
static void sort_recs(struct cfi_fde_rec *r, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (rec_cmp(&r[i - 1], &r[i]) > 0)
			break;
	if (i < n)
		qsort(r, n, sizeof(*r), rec_cmp);
}

/* @r[0, n) (sorted) as pieces that do not overlap, into @out; how many. */
static size_t clip(const struct cfi_fde_rec *r, size_t n, size_t base, struct piece *out)
{
	uint32_t covered = 0, lo;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		lo = r[i].start < covered ? covered : r[i].start;
		if (lo >= r[i].end || !r[i].nr)
			continue;
		out[k].lo = lo;
		out[k].hi = r[i].end;
		out[k].rec = (uint32_t)(base + i);
		covered = r[i].end;
		k++;
	}
	return k;
}

/* The parts of pieces @d[0, nd) outside every piece of @e[0, ne) (both sorted, disjoint). */
static size_t subtract(const struct piece *d, size_t nd, const struct piece *e, size_t ne,
		       struct piece *out)
{
	size_t i, j = 0, k, n = 0;
	uint32_t lo, hi;

	for (i = 0; i < nd; i++) {
		lo = d[i].lo;
		while (j < ne && e[j].hi <= lo)
			j++;
		for (k = j; lo < d[i].hi;) {
			if (k < ne && e[k].lo <= lo) {
				lo = e[k++].hi;
				continue;
			}
			hi = k < ne && e[k].lo < d[i].hi ? e[k].lo : d[i].hi;
			out[n].lo = lo;
			out[n].hi = hi;
			out[n].rec = d[i].rec;
			n++;
			lo = hi;
		}
	}
	return n;
}

/* Append a row; a row equal to the one before is dropped, one at the same PC replaces it. */
static void push(struct out *o, uint32_t pc, uint32_t rule)
{
	if (o->nr && o->rows[o->nr - 1].pc == pc) {
		o->nr--;
		if (o->nr && o->rows[o->nr - 1].rule == rule)
			return;
	} else if (o->nr && o->rows[o->nr - 1].rule == rule) {
		return;
	}
	o->rows[o->nr].pc = pc;
	o->rows[o->nr].rule = rule;
	o->nr++;
}

/* The rows of piece @p: the one in effect at p->lo, then those inside it. */
static void emit_piece(const struct cfi_builder *b, const struct piece *p, struct out *o)
{
	const struct cfi_fde_rec *r = &b->fdes[p->rec];
	const struct cfi_row *rows = b->raw + r->first;
	size_t lo = 0, hi = r->nr, mid;

	/* The last row at or before p->lo (rows[0] is at r->start <= p->lo). */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (rows[mid].pc <= p->lo)
			lo = mid;
		else
			hi = mid;
	}
	push(o, p->lo, rows[lo].rule);
	for (lo++; lo < r->nr && rows[lo].pc < p->hi; lo++)
		push(o, rows[lo].pc, rows[lo].rule);
}

/* Distinct start PCs of the sorted lists @a and @b. */
static uint32_t distinct_starts(const struct cfi_fde_rec *a, size_t na, const struct cfi_fde_rec *b,
				size_t nb)
{
	size_t i = 0, j = 0;
	uint32_t n = 0, pc, last = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].start <= b[j].start))
			pc = a[i++].start;
		else
			pc = b[j++].start;
		if (!n || pc != last)
			n++;
		last = pc;
	}
	return n;
}

/* Walk the pieces of both lists in PC order into @o; how many .debug_frame FDEs gave rows. */
static uint32_t emit_all(const struct cfi_builder *b, const struct piece *e, size_t ne,
			 const struct piece *d, size_t nd, struct out *o)
{
	size_t i = 0, j = 0;
	const struct piece *p;
	uint32_t end = 0, ndebug = 0, last_rec = UINT32_MAX;

	while (i < ne || j < nd) {
		if (j == nd || (i < ne && e[i].lo < d[j].lo)) {
			p = &e[i++];
		} else {
			p = &d[j++];
			ndebug += p->rec != last_rec;
			last_rec = p->rec;
		}
		/*
		 * A gap under CFI_PAD_MAX bytes is the alignment padding
		 * between functions, never executed: the rule before it
		 * covers it, one row fewer (7-12% of a table's rows).
		 */
		if (o->nr && p->lo > end && p->lo - end >= CFI_PAD_MAX)
			push(o, end, BPFSYM_UNW_RULE(BPFSYM_UNW_FP_RULE, 0, 0, 0));
		emit_piece(b, p, o);
		end = p->hi;
	}
	if (o->nr)
		push(o, end, BPFSYM_UNW_RULE(BPFSYM_UNW_FP_RULE, 0, 0, 0));
	return ndebug;
}

int cfi_merge(struct cfi_builder *b, struct cfi_table *t)
{
	size_t neh = b->neh, ndbg = b->nfdes - b->neh, npe, npd, i;
	struct piece *pe, *pd, *pdx;
	struct out o = { 0 };
	int err = 0;

	b->st->rows_raw = (uint32_t)b->nraw;
	if (!b->nfdes)
		return 0;	/* no usable FDE: no rows */
	sort_recs(b->fdes, neh);
	sort_recs(b->fdes + neh, ndbg);
	b->st->fde_starts = distinct_starts(b->fdes, neh, b->fdes + neh, ndbg);
	pe = malloc((neh + 1) * sizeof(*pe));
	pd = malloc((ndbg + 1) * sizeof(*pd));
	pdx = malloc((ndbg + neh + 1) * sizeof(*pdx));
	o.rows = malloc((b->nraw + 2 * (ndbg + neh) + 2) * sizeof(*o.rows));
	if (!pe || !pd || !pdx || !o.rows) {
		err = cfi_fail(b, -ENOMEM, "out of memory for %zu rows", b->nraw);
		goto out;
	}
	npe = clip(b->fdes, neh, 0, pe);
	npd = clip(b->fdes + neh, ndbg, neh, pd);
	npd = subtract(pd, npd, pe, npe, pdx);
	b->st->from_debug_frame = emit_all(b, pe, npe, pdx, npd, &o);
	if (o.nr > b->max_rows) {
		err = cfi_fail(b, -E2BIG, "%zu rows, more than %zu", o.nr, b->max_rows);
		goto out;
	}
	for (i = 0; i < o.nr; i++)
		b->st->rows_unsupported += BPFSYM_UNW_RULE_KIND(o.rows[i].rule) == BPFSYM_UNW_UNSUPPORTED;
	t->nr = o.nr;
	/* Shrink to fit: the table lives as long as the file is mapped. */
	t->rows = o.nr ? realloc(o.rows, o.nr * sizeof(*o.rows)) : NULL;
	if (!t->rows)
		free(o.rows);
	o.rows = NULL;
	if (o.nr && !t->rows)
		err = cfi_fail(b, -ENOMEM, "out of memory for %zu rows", o.nr);
out:
	free(o.rows);
	free(pe);
	free(pd);
	free(pdx);
	return err;
}
