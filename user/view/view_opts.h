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
	VIEW_KEY_PID,		/* thread id, low first ("pid", perf's name, and "tid") */
	VIEW_KEY_MAX,
};

/*
 * What makes a table row (perf's -s): the name keys given to --sort, or
 * with none of them given, process, module and symbol.  A row is also
 * always split by container.
 */
#define VIEW_GROUP_COMM		(1u << 0)
#define VIEW_GROUP_PID		(1u << 1)	/* the thread: its id and name */
#define VIEW_GROUP_MODULE	(1u << 2)
#define VIEW_GROUP_SYMBOL	(1u << 3)
#define VIEW_GROUP_DEFAULT	(VIEW_GROUP_COMM | VIEW_GROUP_MODULE | VIEW_GROUP_SYMBOL)

/* perf's --children / --no-children: which count a row's share is. */
enum view_children {
	VIEW_CHILDREN_BOTH,	/* self and total shown, self the share (bpfsym's default) */
	VIEW_CHILDREN_ON,	/* --children: total ("children") first and the share */
	VIEW_CHILDREN_OFF,	/* --no-children: self only */
};

/*
 * What the views weigh (issue 28): CPU samples (the default, each counts
 * 1), off-CPU time (--off-cpu: OFFCPU records only, each its ns) or
 * wall-clock time (--wall: both, a CPU sample weighing the sampling
 * period, 1e9 / freq ns, an OFFCPU record its ns).
 */
enum view_metric {
	VIEW_METRIC_CPU,
	VIEW_METRIC_OFFCPU,
	VIEW_METRIC_WALL,
};

struct view_opts {
	const uint32_t *pids;		/* keep only these pids (NULL: all) */
	size_t nr_pids;
	const char *const *comms;	/* keep only these comms (NULL: all) */
	size_t nr_comms;
	const uint32_t *tids;		/* keep only these threads (NULL: all) */
	size_t nr_tids;
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
	enum view_children children;
	double percent_limit;		/* table rows whose share is below it are left out; 0: none */
	enum view_metric metric;
	uint32_t off_states;		/* --off-cpu-state: 1 << enum rpt_offstate kept; 0: all */
	bool quiet;			/* the table: rows only, no "#" lines */
	bool header_only;		/* the table: the "#" lines about the recording only */
};

/*
 * Parse --sort's "KEY[,KEY...]" into @o->sort and @o->nr_sort.  Keys are
 * enum view_key's names, perf's names (comm, dso, sym) accepted too; each
 * at most once.  0, or -EINVAL with one line in @err (@errlen bytes) and
 * @o unchanged.
 */
int view_sort__parse(struct view_opts *o, const char *spec, char *err, size_t errlen);

/* The row's keys (VIEW_GROUP_*) @o's --sort asks for (@o may be NULL). */
unsigned int view__group(const struct view_opts *o);

/*
 * The table's order: @o's count keys and container key as given, then
 * the share's count (self, or total with --children) unless a count key
 * was given, then @o's name keys as given (perf: rows by their overhead,
 * the keys breaking ties).  Into @keys (VIEW_KEY_MAX + 1 room); the number.
 */
size_t view__order(const struct view_opts *o, uint8_t *keys);

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

/* @o's metric (CPU for a NULL @o). */
static inline enum view_metric view__metric(const struct view_opts *o)
{
	return o ? o->metric : VIEW_METRIC_CPU;
}

/* Whether @o's metric takes CPU samples (CPU, wall) and OFFCPU records (off-CPU, wall). */
static inline bool view__wants_samples(const struct view_opts *o)
{
	return view__metric(o) != VIEW_METRIC_OFFCPU;
}

static inline bool view__wants_offcpu(const struct view_opts *o)
{
	return view__metric(o) != VIEW_METRIC_CPU;
}

/*
 * What a CPU sample of @r weighs in @o's metric: 1 (a sample) for CPU,
 * the sampling period in ns (1e9 / freq) for wall-clock time.
 */
uint64_t view__sample_weight(const struct view_opts *o, const struct report *r);

/* Whether off-CPU state @state passes @o's --off-cpu-state (always without one). */
bool view__state_ok(const struct view_opts *o, uint32_t state);

/* Whether OFFCPU record @x passes the filters of @o (view__keep()'s, and the state's). */
int view__keep_offcpu(const struct view_opts *o, const struct rpt_offcpu *x);

/* --pid and --tid as sorted copies: a bsearch per sample, not a scan of the list. */
struct pid_set {
	uint32_t *v;	/* NULL: no --pid, every pid passes */
	size_t nr;
	uint32_t *t;	/* NULL: no --tid, every thread passes */
	size_t nr_t;
};

/* Fill @p from @o's pids and tids (@o may be NULL).  0 or -ENOMEM; pid_set__free() in either case. */
int pid_set__init(struct pid_set *p, const struct view_opts *o);

/* Whether sample @s's process and thread pass. */
bool pid_set__keep(const struct pid_set *p, const struct rpt_sample *s);

/* Whether process @pid and thread @tid pass (an OFFCPU record's). */
bool pid_set__keep_ids(const struct pid_set *p, uint32_t pid, uint32_t tid);

/* Free @p's copy; @p then lets every pid pass. */
void pid_set__free(struct pid_set *p);

#endif /* BPFSYM_VIEW_OPTS_H */
