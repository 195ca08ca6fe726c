// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_end: the END record's fields, both ways (docs/FORMAT.md).  The
 * fields grew over time; each addition is appended, so an older reader
 * stops before what it does not know and a newer reader takes 0 for what
 * an older writer did not write.  Writer and reader of the list live
 * together here so the order cannot drift apart.
 */
#include "report/report_fmt.h"

/* The counters after the first five, in the order they were added. */
#define LATER_FIELDS(h) { &(h)->idle, &(h)->lost_children, &(h)->missed_vma_busy, \
			  &(h)->missed_syscalls, &(h)->bad_records }

/* The table counters, in their written order (struct rpt_unwind). */
#define UNWIND_FIELDS(u) { &(u)->tables, &(u)->ready, &(u)->none, &(u)->failed, &(u)->rows, \
			   &(u)->bytes, &(u)->build_ns, &(u)->max_build_ns, &(u)->over_mem, \
			   &(u)->over_rows, &(u)->over_tables, &(u)->over_procs, \
			   &(u)->over_ranges, &(u)->pending }

#define COUNTED_MAX 4096	/* entries of a counted array: more is damage */

int rpt_end__write(struct rpt_buf *b, const struct rpt_header *h, uint64_t nr_samples)
{
	const uint64_t *const later[] = LATER_FIELDS(h), *const unw[] = UNWIND_FIELDS(&h->unw);
	size_t i;
	int err;

	err = rpt_buf__uv(b, h->end_wall_ns);
	/* The writer's own count, which the reader checks against the SAMPLE records. */
	err = err ?: rpt_buf__uv(b, nr_samples);
	err = err ?: rpt_buf__uv(b, h->lost_samples);
	err = err ?: rpt_buf__uv(b, h->lost_events);
	err = err ?: rpt_buf__uv(b, h->nr_procs);
	for (i = 0; i < sizeof(later) / sizeof(later[0]) && !err; i++)
		err = rpt_buf__uv(b, *later[i]);
	err = err ?: rpt_buf__uv(b, h->call_graph);
	err = err ?: rpt_buf__uv(b, RPT_UEND_MAX);
	for (i = 0; i < RPT_UEND_MAX && !err; i++)
		err = rpt_buf__uv(b, h->uend[i]);
	err = err ?: rpt_buf__uv(b, sizeof(unw) / sizeof(unw[0]));
	for (i = 0; i < sizeof(unw) / sizeof(unw[0]) && !err; i++)
		err = rpt_buf__uv(b, *unw[i]);
	err = err ?: rpt_buf__uv(b, h->unwritten);
	err = err ?: rpt_buf__uv(b, RPT_CAPPED_MAX);
	for (i = 0; i < RPT_CAPPED_MAX && !err; i++)
		err = rpt_buf__uv(b, h->capped[i]);
	err = err ?: rpt_buf__uv(b, RPT_DINFOD_MAX);
	for (i = 0; i < RPT_DINFOD_MAX && !err; i++)
		err = rpt_buf__uv(b, h->dinfod[i]);
	err = err ?: rpt_buf__uv(b, RPT_INTERP_MAX);
	for (i = 0; i < RPT_INTERP_MAX && !err; i++)
		err = rpt_buf__uv(b, h->interp[i]);
	/* Issue 28: only the counters that exist, so a reader's check of RPT_OC_RECORDS has them all. */
	err = err ?: rpt_buf__uv(b, RPT_OC__NR);
	for (i = 0; i < RPT_OC__NR && !err; i++)
		err = rpt_buf__uv(b, h->offcpu[i]);
	return err;
}

/* A counted array into @v[0..@max) (entries past it read and dropped). */
static int read_counted(struct rpt_cur *c, uint64_t *const *v, size_t max)
{
	uint64_t n, x;
	size_t i;
	int err;

	err = rpt_cur__uv(c, &n);
	if (err || n > COUNTED_MAX)
		return err ?: -EINVAL;
	for (i = 0; i < n && !err; i++) {
		err = rpt_cur__uv(c, &x);
		if (!err && i < max)
			*v[i] = x;
	}
	return err;
}

int rpt_end__read(struct rpt_cur *c, struct rpt_header *h)
{
	uint64_t *const later[] = LATER_FIELDS(h), *const unw[] = UNWIND_FIELDS(&h->unw);
	uint64_t *uend[RPT_UEND_MAX], *capped[RPT_CAPPED_MAX], *dinfod[RPT_DINFOD_MAX], cg = 0;
	uint64_t *interp[RPT_INTERP_MAX], *offcpu[RPT_OFFCPU_MAX];
	size_t i;
	int err;

	err = rpt_cur__uv(c, &h->end_wall_ns);
	err = err ?: rpt_cur__uv(c, &h->samples);
	err = err ?: rpt_cur__uv(c, &h->lost_samples);
	err = err ?: rpt_cur__uv(c, &h->lost_events);
	err = err ?: rpt_cur__uv(c, &h->nr_procs);
	/* From here on, each part may be missing: the record ends there. */
	for (i = 0; i < sizeof(later) / sizeof(later[0]) && !err && c->p < c->end; i++)
		err = rpt_cur__uv(c, later[i]);
	if (!err && c->p < c->end)
		err = rpt_cur__uv(c, &cg);
	for (i = 0; i < RPT_UEND_MAX; i++)
		uend[i] = &h->uend[i];
	if (!err && c->p < c->end)
		err = read_counted(c, uend, RPT_UEND_MAX);
	if (!err && c->p < c->end)
		err = read_counted(c, unw, sizeof(unw) / sizeof(unw[0]));
	if (!err && c->p < c->end)
		err = rpt_cur__uv(c, &h->unwritten);
	for (i = 0; i < RPT_CAPPED_MAX; i++)
		capped[i] = &h->capped[i];
	if (!err && c->p < c->end)
		err = read_counted(c, capped, RPT_CAPPED_MAX);
	for (i = 0; i < RPT_DINFOD_MAX; i++)
		dinfod[i] = &h->dinfod[i];
	if (!err && c->p < c->end)
		err = read_counted(c, dinfod, RPT_DINFOD_MAX);
	for (i = 0; i < RPT_INTERP_MAX; i++)
		interp[i] = &h->interp[i];
	if (!err && c->p < c->end)
		err = read_counted(c, interp, RPT_INTERP_MAX);
	for (i = 0; i < RPT_OFFCPU_MAX; i++)
		offcpu[i] = &h->offcpu[i];
	if (!err && c->p < c->end)
		err = read_counted(c, offcpu, RPT_OFFCPU_MAX);
	/* A newer writer's fields after these are left unread. */
	h->call_graph = cg > RPT_CG_DWARF ? RPT_CG_UNKNOWN : (uint32_t)cg;
	return err;
}
