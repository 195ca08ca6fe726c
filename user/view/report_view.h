/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_view: what `bpfsym report` prints from a struct report: the hot
 * function table and the folded stacks.  The options they take, and the
 * filters, are view_opts.h's.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_VIEW_H
#define BPFSYM_REPORT_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "view/frame_namer.h"
#include "report/report.h"
#include "view/view_opts.h"

/*
 * The display name of frame @f in @r, as docs/cli.md's --folded defines it:
 * "sym" for user frames, "sym_[k]" for kernel ones, "[MODULE+0xOFF]" when
 * the module is known and the symbol is not, "[unknown]" otherwise.  The
 * name is @o's namer's when it has one (@o may be NULL), as every format
 * must show it; frame_namer__name(o->namer, ...) gives the parts.
 * Writes at most @len bytes into @buf (NUL terminated); returns @buf.
 */
const char *view__frame_name(const struct view_opts *o, const struct report *r,
			     const struct rpt_frame *f, char *buf, size_t len);

/*
 * The default view: a header with the recording's facts (duration, event
 * and frequency, samples, losses by cause, the filters and kernel-symbol
 * override in effect, the share of unnamed frames by reason), then one
 * row per (process, container, module, symbol): self %, total %, samples
 * (self), process, container (a column only when a row is in one),
 * module, symbol, sorted by @o's keys then by self, total, symbol,
 * process, module; at most @o->limit rows.  When the recording has
 * containers, a line per container with its samples comes first.
 * 0 or -errno.
 */
int report_view__table(FILE *out, const struct report *r, const struct view_opts *o);

/*
 * FlameGraph's folded format: "COMM;ROOT;...;LEAF COUNT", one line per
 * distinct stack, sorted by the stack text so output is stable.  With
 * @o's off-CPU or wall metric, COUNT is microseconds (the line's ns
 * summed, then rounded), and a line of OFFCPU records ends in a pseudo
 * frame naming its state: "[sleeping]", "[disk]", "[preempted]",
 * "[other]".  0 or -errno.
 */
int report_view__folded(FILE *out, const struct report *r, const struct view_opts *o);

#endif /* BPFSYM_REPORT_VIEW_H */
