/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_view: what `bpfsym report` prints from a struct report: the hot
 * function table and the folded stacks.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_VIEW_H
#define BPFSYM_REPORT_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "view/frame_namer.h"
#include "report/report.h"

/* What the table's rows can be sorted by (--sort). */
enum view_key {
	VIEW_KEY_SELF,		/* samples with the row as leaf, most first ("self", "samples") */
	VIEW_KEY_TOTAL,		/* samples with the row anywhere in the stack, most first */
	VIEW_KEY_COMM,		/* process name, A to Z ("comm", "process") */
	VIEW_KEY_MODULE,	/* module, A to Z ("module", "dso") */
	VIEW_KEY_SYMBOL,	/* symbol, A to Z ("symbol", "sym") */
	VIEW_KEY_MAX,
};

struct view_opts {
	const uint32_t *pids;		/* keep only these pids (NULL: all) */
	size_t nr_pids;
	const char *const *comms;	/* keep only these comms (NULL: all) */
	size_t nr_comms;
	size_t limit;			/* table rows; 0: all */
	const struct frame_namer *namer;	/* names overriding the recorded ones; NULL: none */
	uint8_t sort[VIEW_KEY_MAX];	/* enum view_key, first the most significant */
	size_t nr_sort;			/* 0: by self */
};

/*
 * Parse --sort's "KEY[,KEY...]" into @o->sort and @o->nr_sort.  Keys are
 * enum view_key's names, perf's names (comm, dso, sym) accepted too; each
 * at most once.  0, or -EINVAL with one line in @err (@errlen bytes) and
 * @o unchanged.
 */
int view_sort__parse(struct view_opts *o, const char *spec, char *err, size_t errlen);

/* The name --sort and the table's header use for @k ("self", "total", "comm"...). */
const char *view_key__name(enum view_key k);

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

/* Whether sample @s passes the filters of @o. */
int view__keep(const struct view_opts *o, const struct rpt_sample *s);

/*
 * The default view: a header with the recording's facts (duration, event
 * and frequency, samples, losses by cause, the filters and kernel-symbol
 * override in effect, the share of unnamed frames by reason), then one
 * row per (process, module, symbol): self %, total %, samples (self),
 * process, module, symbol, sorted by @o's keys then by self, total,
 * symbol, process, module; at most @o->limit rows.  0 or -errno.
 */
int report_view__table(FILE *out, const struct report *r, const struct view_opts *o);

/*
 * FlameGraph's folded format: "COMM;ROOT;...;LEAF COUNT", one line per
 * distinct stack, sorted by the stack text so output is stable.  0 or -errno.
 */
int report_view__folded(FILE *out, const struct report *r, const struct view_opts *o);

#endif /* BPFSYM_REPORT_VIEW_H */
