/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One line of /proc/PID/maps (the model's fallback for a process it never heard of). */
#ifndef BPFSYM_MAPSLINE_H
#define BPFSYM_MAPSLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/procmap.h"

/*
 * Parse one maps line [p, end) into @m (start, end, prot, pgoff, dev,
 * ino, kind, deleted; path NULL); the path is returned as a span of the
 * line (*@path, *@path_len), " (deleted)" cut.  false: malformed.
 */
bool maps_line__parse(const char *p, const char *end, struct mapping *m, const char **path,
		      size_t *path_len);

#endif /* BPFSYM_MAPSLINE_H */
