/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_flame_int: internal to the flame graph.  report_flame_tree.c
 * builds the tree of frames from the samples counted per (comm, stack)
 * and lays it out; report_flame.c writes it as SVG.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_FLAME_INT_H
#define BPFSYM_REPORT_FLAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/strtab.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/report_agg.h"
#include "view/view_opts.h"

#define NAME_CAP	1024	/* bytes of a name kept; longer ones end in "..." */

/* Colour families; C_OFF: every frame of an off-CPU stack, and its state's pseudo frame. */
enum cls { C_ROOT, C_PROC, C_USER, C_KERNEL, C_JIT, C_INTERP, C_OFF };

struct node {
	uint64_t total;		/* samples (ns with a timed metric) at or above this frame */
	uint64_t off;		/* samples (ns) left of it (layout) */
	uint32_t parent;	/* RPT_NONE for the root */
	uint32_t name;		/* an id of flame.names */
	uint32_t depth;
	uint32_t first, nr;	/* children: order[first, first + nr) (layout) */
	uint8_t cls;
	bool kept;
};

struct flame {
	const struct report *r;
	const struct view_opts *o;
	struct agg a;		/* the kept samples per (comm, stack) */
	struct strtab names;	/* clean names (xml_text.h), cut at NAME_CAP */
	uint32_t *frame_name;	/* per frame id, RPT_NONE until named */
	uint8_t *frame_cls;
	struct node *nodes;	/* node 0 is the root */
	size_t nr_nodes, cap_nodes;
	struct htab node_tab;	/* hash of (parent, name, cls) -> node index + 1 */
	struct rpt_buf scratch;
	uint64_t total;		/* kept samples (ns with a timed metric: view_opts.h) */
	bool timed;		/* the metric is off-CPU or wall-clock time: weights are ns */
	/* Layout. */
	uint32_t *order;	/* kept nodes but the root, grouped by parent, sorted by name */
	size_t nr_order;
	uint32_t *dfs;		/* kept nodes in the order they are written */
	size_t nr_dfs;
	uint32_t max_depth;
	size_t omitted;		/* nodes left out */
};

/*
 * Count the samples of fl->r that pass fl->o, then walk each (comm, stack)
 * into the tree of fl->nodes, root first.  0 or -errno; flame__free() in
 * either case.
 */
int flame__build(struct flame *fl);

/*
 * Choose the frames kept, those at least @min_width pixels wide of
 * @usable and at most @max of them (the widest); order siblings by name;
 * give each its offset and depth, and fl->dfs the order to write them.
 * For a tree with samples.  0 or -ENOMEM.
 */
int flame__layout(struct flame *fl, double usable, double min_width, size_t max);

/* The name of node @n. */
static inline const char *flame__name_of(const struct flame *fl, const struct node *n)
{
	return strtab__str(&fl->names, n->name);
}

/* Free what @fl holds. */
void flame__free(struct flame *fl);

#endif /* BPFSYM_REPORT_FLAME_INT_H */
