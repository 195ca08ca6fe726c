/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * formats: the table of a recording's output formats, one row each.  A
 * new format is one file in view/format/ and one row in formats.c: the
 * report command line takes its option, its argument and its writer from
 * here.
 */
#ifndef BPFSYM_FORMATS_H
#define BPFSYM_FORMATS_H

#include <stdbool.h>
#include <stdio.h>

#include "report/report.h"
#include "view/report_view.h"

struct report_format {
	const char *name;	/* the option, without "--"; NULL ends the table */
	bool to_file;		/* takes OUT (its file) rather than writing to stdout */
	/* The writer: exactly one is set, as to_file says.  0 or -errno. */
	int (*fprint)(FILE *out, const struct report *r, const struct view_opts *o);
	int (*write)(const char *path, const struct report *r, const struct view_opts *o);
};

/* Every format but the default table; ends with a NULL name. */
extern const struct report_format report_formats[];

/* The default: the table of the hottest functions. */
extern const struct report_format report_format_table;

#endif /* BPFSYM_FORMATS_H */
