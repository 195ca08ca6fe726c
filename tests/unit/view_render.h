/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A view of a report as a string, for the tests that read what a format writes.  After test.h. */
#ifndef BPFSYM_VIEW_RENDER_H
#define BPFSYM_VIEW_RENDER_H

#include <stdio.h>

#include "report/report.h"
#include "view/view_opts.h"

/* Run @fn over @r with @o (NULL: the defaults) into a string (freed by the caller); NULL on failure. */
static __attribute__((unused)) char *render(int (*fn)(FILE *, const struct report *, const struct view_opts *),
					    const struct report *r, const struct view_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_OK_PTR(f, "open_memstream"))
		return NULL;
	ASSERT_OK(fn(f, r, o), "render");
	fclose(f);
	return buf;
}

#endif /* BPFSYM_VIEW_RENDER_H */
