/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_view_int: internal to the report views (report_view.c,
 * report_agg.c, report_table.c, report_header.c, report_script.c).  What
 * every view shares: the samples counted per distinct (comm, stack),
 * frame naming and the terminal-safety rules.
 * No libbpf here.
 */
#ifndef BPFSYM_REPORT_VIEW_INT_H
#define BPFSYM_REPORT_VIEW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/strtab.h"
#include "view/frame_namer.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/report_view.h"

#define VIEW_UNKNOWN "[unknown]"

/* ---- filters and kept samples counted per distinct (comm, stack) (report_agg.c) ---- */

/* --pid as a sorted copy: a bsearch per sample, not a scan of the list. */
struct pid_set {
	uint32_t *v;	/* NULL: no --pid, every pid passes */
	size_t nr;
};

/* Fill @p from @o's pids (@o may be NULL).  0 or -ENOMEM; pid_set__free() in either case. */
int pid_set__init(struct pid_set *p, const struct view_opts *o);

/* Whether @pid passes. */
bool pid_set__keep(const struct pid_set *p, uint32_t pid);

void pid_set__free(struct pid_set *p);

struct pair {
	uint32_t comm, stack;
	uint32_t next;		/* next pair of the same stack, or RPT_NONE */
	uint64_t count;
};

#define AGG_COMM_CACHE 256

struct agg {
	struct strtab comms;
	struct pair *pairs;
	size_t nr_pairs, cap_pairs;
	/*
	 * Per stack id, its first pair: a stack is nearly always sampled in
	 * one process name, so finding a pair is one array read and one
	 * compare, with no hashing in the per-sample loop.
	 */
	uint32_t *head;
	size_t nr_head, cap_head;
	/*
	 * The reader interns comm strings, so a pointer seen before has the
	 * same id and passes --comm the same way.
	 */
	struct {
		const char *p;
		uint32_t id;
		bool keep;
	} cache[AGG_COMM_CACHE];
	uint64_t total;		/* kept samples */
};

/*
 * Count the samples of @r that pass @o (NULL: all) into @a, zeroed by the
 * caller: what view__keep() decides, without its linear scans.  0 or
 * -errno; agg__free() in either case.
 */
int agg__build(struct agg *a, const struct report *r, const struct view_opts *o);

void agg__free(struct agg *a);

/* ---- frame naming (report_view.c) ---- */

/* @o's namer, or NULL (as recorded) when @o is NULL. */
const struct frame_namer *view__namer(const struct view_opts *o);

/* Whether @comm passes @o's --comm filter (always when @o or its list is empty). */
bool view__comm_ok(const struct view_opts *o, const char *comm);

/* The name of module @m as the table and folded names show it: the path's basename, or "[kernel.kallsyms]" ... */
const char *view__module_base(const struct rpt_module *m);

/*
 * Make @n bytes at @p printable in place: control bytes become '?'; with
 * @folded, ';' becomes ':' too (the folded format's frame separator).
 */
void view__sanitize(char *p, size_t n, bool folded);

/*
 * Append the display name @fn of a frame of @kind to @b (no NUL), as
 * view__frame_name() spells it; @folded: with the "_[k]" suffix and the
 * folded format's sanitizing.  0 or -errno.
 */
int view__buf_frame(struct rpt_buf *b, const struct frame_name *fn, uint32_t kind, bool folded);

/* ---- the table's header (report_header.c) ---- */

/* Frames without a name, by reason; the last slot for a reason we do not know. */
struct unnamed {
	uint64_t frames;	/* every frame of every kept sample */
	uint64_t by_reason[RPT_REASON_MAX + 1];
};

/*
 * The "# ..." lines above the table: where the recording comes from, the
 * event, duration, samples (@kept after @o's filters), losses, the
 * filters and the kernel-symbol override in effect, the unnamed frames
 * @u by reason.
 */
void view__print_header(FILE *out, const struct report *r, const struct view_opts *o,
			uint64_t kept, const struct unnamed *u);

#endif /* BPFSYM_REPORT_VIEW_INT_H */
