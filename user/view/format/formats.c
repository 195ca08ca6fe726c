// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* formats: one row per output format (formats.h). */
#include <stddef.h>

#include "view/format/formats.h"
#include "view/format/report_flame.h"
#include "view/format/report_pprof.h"
#include "view/format/report_script.h"

/* The flame graph with its default geometry. */
static int flame_write(const char *path, const struct report *r, const struct view_opts *o)
{
	return report_flame__write(path, r, o, NULL);
}

const struct report_format report_formats[] = {
	{ .name = "folded", .fprint = report_view__folded },
	{ .name = "perf-script", .fprint = report_script__write },
	{ .name = "flamegraph", .to_file = true, .write = flame_write },
	{ .name = "pprof", .to_file = true, .write = report_pprof__write },
	{ .name = NULL },
};

const struct report_format report_format_table = { .name = "table", .fprint = report_view__table };
