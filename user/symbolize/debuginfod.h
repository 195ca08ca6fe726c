/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * debuginfod: a binary's debug file by build-id from the servers
 * DEBUGINFOD_URLS names, through elfutils' libdebuginfod, loaded with
 * dlopen() when first wanted (docs/ARCHITECTURE.md says why not linked).
 *
 * A fetch blocks (the network, DEBUGINFOD_TIMEOUT: 90 s by default), so it
 * runs only in offload jobs (fileload.c), never on the recorder's thread.
 * libdebuginfod keeps its own cache (DEBUGINFOD_CACHE_PATH, else
 * ~/.cache/debuginfod_client); what it hands back is a file someone else
 * served, so it is opened anew here without following links, must be a
 * non-empty regular file, must carry the build-id asked for, and is read
 * with elfsym's caps like any other debug file.
 *
 * The library, the stop flag and the counters are process-wide: a job
 * given up at the end may still be running after its symbolizer is gone.
 * No libbpf here.
 */
#ifndef BPFSYM_DEBUGINFOD_H
#define BPFSYM_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf/elfsym.h"

/* The counters' order is the recording's (docs/FORMAT.md, END): append only. */
enum dinfod_count {
	DINFOD_ASKED,		/* build-ids sent to the servers */
	DINFOD_FOUND,		/* ...answered with a debug file we use */
	DINFOD_MISSED,		/* ...answered without one, or with one refused */
	DINFOD_TIMED_OUT,	/* ...not answered in time (DEBUGINFOD_TIMEOUT, or the end) */
	DINFOD__NR
};

/*
 * Whether lookups are on: DEBUGINFOD_URLS set and not empty, and
 * libdebuginfod.so.1 loadable (loaded now, once; a missing library is
 * logged once).  Call from one thread before any job starts.
 */
bool dinfod__enabled(void);

/*
 * The debug file of build-id @id (@len bytes, at least 1): fetched by
 * libdebuginfod (or, with @cached not NULL, the file a former fetch put
 * there, opened again without asking anyone), opened without following
 * links, checked (a regular non-empty file with build-id @id) and read
 * with @opts (may be NULL: elfsym's default caps).  Returns its symbols
 * (elfsym__free() them) and its path in *@path (free() it), or NULL with
 * *@err: -ENOENT (the servers have none), -ESTALE (another build-id),
 * -ENOEXEC (not a regular ELF file), -ETIME (timed out), -EINTR (the
 * stop came first), other -errno.  Counts in dinfod__count().  Blocks.
 */
struct elfsym *dinfod__fetch(const uint8_t *id, size_t len, const char *cached,
			     const struct elfsym_opts *opts, char **path, int *err);

/* Abort every fetch under way at its next progress call (about 1 s), and refuse new ones. */
void dinfod__stop(void);

/* The count @c since the process started (0 for an unknown @c). */
uint64_t dinfod__count(enum dinfod_count c);

/* @c for people ("build-ids asked"), or NULL. */
const char *dinfod__what(enum dinfod_count c);

/* The counts on one -v line, when a build-id was asked at all. */
void dinfod__log_counts(void);

#endif /* BPFSYM_DEBUGINFOD_H */
