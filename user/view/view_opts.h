/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * view_opts: what the user asked of a view: which samples (--pid,
 * --comm), how many rows in what order (--limit, --sort), whose frame
 * names (--kallsyms, --symfs).  Below every view and the aggregation they
 * start from: nothing here knows of either.  No libbpf here.
 */
#ifndef BPFSYM_VIEW_OPTS_H
#define BPFSYM_VIEW_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"

struct frame_namer;

/* What the table's rows can be sorted by (--sort). */
enum view_key {
	VIEW_KEY_SELF,		/* samples with the row as leaf, most first ("self", "samples") */
	VIEW_KEY_TOTAL,		/* samples with the row anywhere in the stack, most first */
	VIEW_KEY_COMM,		/* process name, A to Z ("comm", "process") */
	VIEW_KEY_MODULE,	/* module, A to Z ("module", "dso") */
	VIEW_KEY_SYMBOL,	/* symbol, A to Z ("symbol", "sym") */
	VIEW_KEY_CONTAINER,	/* container id, A to Z, rows in none last ("container") */
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
	/*
	 * --container: the full id (NULL: no filter), and the cgroups of the
	 * recording in it, sorted (view_ctr__resolve); only their samples pass.
	 */
	const char *container;
	const uint64_t *cgroups;
	size_t nr_cgroups;
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

/* @o's namer, or NULL (as recorded) when @o is NULL. */
const struct frame_namer *view__namer(const struct view_opts *o);

/* Whether @comm passes @o's --comm filter (always when @o or its list is empty). */
bool view__comm_ok(const struct view_opts *o, const char *comm);

/* Whether cgroup @cg passes @o's --container filter (always without one). */
bool view__cgroup_ok(const struct view_opts *o, uint64_t cg);

/* Whether sample @s passes the filters of @o. */
int view__keep(const struct view_opts *o, const struct rpt_sample *s);

/* --pid as a sorted copy: a bsearch per sample, not a scan of the list. */
struct pid_set {
	uint32_t *v;	/* NULL: no --pid, every pid passes */
	size_t nr;
};

/* Fill @p from @o's pids (@o may be NULL).  0 or -ENOMEM; pid_set__free() in either case. */
int pid_set__init(struct pid_set *p, const struct view_opts *o);

/* Whether @pid passes. */
bool pid_set__keep(const struct pid_set *p, uint32_t pid);

/* Free @p's copy; @p then lets every pid pass. */
void pid_set__free(struct pid_set *p);

#endif /* BPFSYM_VIEW_OPTS_H */
