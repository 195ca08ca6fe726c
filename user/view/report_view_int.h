/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_view_int: internal to the report views (report_view.c,
 * report_table.c, report_header.c, report_script.c, the pprof writer).
 * What every view shares: frame naming, the terminal-safety rules, the
 * table's header.  The filters are view_opts.h's, the samples counted per
 * distinct (comm, stack) report_agg.h's.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_VIEW_INT_H
#define BPFSYM_REPORT_VIEW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "view/frame_namer.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/report_view.h"
#include "view/view_opts.h"

#define VIEW_UNKNOWN "[unknown]"
/*
 * An interpreter frame (RPT_FRAME_INTERP) the recorder could not name:
 * its runtime's miss reason is in the header.
 */
#define VIEW_INTERP_UNNAMED "[interpreter]"
/*
 * The folded names' mark of an interpreter frame, as "_[k]" marks kernel
 * ones (FlameGraph's annotations: _[k] kernel, _[j] JIT, _[i] inlined,
 * so "_[p]", Python, the one runtime today: docs/cli.md, "Folded stacks").
 */
#define VIEW_INTERP_SUFFIX "_[p]"

/* ---- frame naming (report_view.c) ---- */

/* The name of module @m as the table and folded names show it: the path's basename, or "[kernel.kallsyms]" ... */
const char *view__module_base(const struct rpt_module *m);

/*
 * Make @n bytes at @p printable in place: control bytes become '?'; with
 * @folded, ';' becomes ':' too (the folded format's frame separator).
 */
void view__sanitize(char *p, size_t n, bool folded);

/*
 * Append the display name @fn of a frame of @kind to @b (no NUL), as
 * view__frame_name() spells it; @folded: with the "_[k]" (kernel) or
 * "_[p]" (interpreter) suffix and the folded format's sanitizing.  0 or -errno.
 */
int view__buf_frame(struct rpt_buf *b, const struct frame_name *fn, uint32_t kind, bool folded);

/* ---- the table's header (report_header.c) ---- */

/* Frames without a name, by reason; the last slot for a reason we do not know. */
struct unnamed {
	uint64_t frames;	/* every frame of every kept sample */
	uint64_t by_reason[RPT_REASON_MAX + 1];
};

struct agg;

/*
 * The "# ..." lines above the table: where the recording comes from, the
 * event, duration, samples (@ag's kept after @o's filters), losses, the
 * off-CPU time recorded and which metric is shown (when the recording has
 * off-CPU time), the filters and the kernel-symbol override in effect,
 * the unnamed frames @u by reason.
 */
void view__print_header(FILE *out, const struct report *r, const struct view_opts *o,
			const struct agg *ag, const struct unnamed *u);

#endif /* BPFSYM_REPORT_VIEW_INT_H */
