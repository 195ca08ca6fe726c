/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_flame: `bpfsym report --flamegraph OUT.svg`, an interactive flame
 * graph in one self-contained SVG file (its script and style inline, no
 * resource outside the file): hover for name, samples and share, click to
 * zoom, a search that highlights frames and sums their share.  Kernel,
 * user and JIT frames have their own colour families; a frame's colour is
 * a hash of its name, so two runs look the same.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_FLAME_H
#define BPFSYM_REPORT_FLAME_H

#include <stddef.h>
#include <stdio.h>

#include "report/report.h"
#include "view/report_view.h"

/* Drawing choices; a zero field takes the default. */
struct flame_opts {
	unsigned int width;	/* image width in pixels (default 1200) */
	double min_width;	/* leave out frames narrower than this many pixels (default 0.1) */
	size_t max_frames;	/* at most this many rectangles; the narrowest go first (default 50000) */
};

/*
 * Write the flame graph of the samples of @r that pass @o (view__keep())
 * to @out.  The tree is the folded view's: the root (all samples), one
 * frame per process name, then the stack root to leaf, frames named by
 * view__frame_name() with @o (so a --kallsyms namer applies); siblings of
 * the same name merge and are sorted by name.  With @o's off-CPU or wall
 * metric (view_opts.h), widths are time (ns; tooltips in ms), off-CPU
 * stacks in a blue-violet of their own with their state's pseudo frame
 * ("[sleeping]"...) on top, as the folded view prints them.  @fo may be NULL.
 * 0 or -errno (-EIO when writing @out failed).
 */
int report_flame__fprint(FILE *out, const struct report *r, const struct view_opts *o,
			 const struct flame_opts *fo);

/*
 * The same into the file @path ("-": stdout), written to a temporary file
 * beside it and renamed over @path once complete and synced, so a failure
 * never leaves a partial file at @path.  0 or -errno.
 */
int report_flame__write(const char *path, const struct report *r, const struct view_opts *o,
			const struct flame_opts *fo);

#endif /* BPFSYM_REPORT_FLAME_H */
