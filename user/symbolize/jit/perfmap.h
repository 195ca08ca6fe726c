/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perfmap: the /tmp/perf-PID.map text a JIT writes to name its code, one
 * symbol a line:
 *
 *	START SIZE NAME\n
 *
 * START and SIZE in hex, with or without 0x; NAME is the rest of the line
 * (spaces included, a trailing \r dropped), never empty.  Fields are
 * separated by spaces or tabs.  The file grows while the process runs, so
 * it is read incrementally: each read parses only the complete lines added
 * since the last one.  Finding and opening the file (in the process's root,
 * owned by the process's user) is the caller's business.  No libbpf here.
 */
#ifndef BPFSYM_PERFMAP_H
#define BPFSYM_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/jit/jitsyms.h"

struct perfmap_stats {
	uint64_t lines;		/* well-formed lines (size 0 ones included) */
	uint64_t bad_lines;	/* malformed lines skipped */
	uint64_t dropped;	/* well-formed lines the table refused (caps) */
	uint64_t bytes;		/* consumed from the file the table comes from */
	uint64_t restarts;	/* the file was truncated or rewritten: read again from 0 */
	bool capped;		/* the byte cap was reached: nothing more is read */
};

/*
 * Parse the complete lines (ending in \n) of the @len bytes at @buf into
 * @js; *@consumed is set to the bytes they take, what follows is a partial
 * line to pass again once it is complete.  A complete line is malformed,
 * skipped and counted in @st->bad_lines when: a field is missing or is not
 * hex, a number overflows 64 bits, START + SIZE wraps, the name is empty,
 * the line holds a NUL, or it is longer than @line_max bytes (0: 4096)
 * without its \n.  An empty line is skipped and not counted.  A partial
 * line already longer than @line_max is not consumed: the caller skips it
 * (perfmap_reader__read() does).  @st may be NULL.
 * Returns 0 or -ENOMEM (*@consumed then covers the lines before the one
 * that failed).
 */
int perfmap__parse(struct jitsyms *js, const char *buf, size_t len, size_t line_max,
		   size_t *consumed, struct perfmap_stats *st);

struct perfmap_reader;

struct perfmap_opts {
	struct jitsyms_opts syms;	/* caps of the table */
	uint64_t max_bytes;	/* bytes of the file read at most; 0: default (256 MiB) */
	size_t line_max;	/* longest line kept, \n excluded; 0: default (4096); at most 1 MiB */
};

/*
 * A reader of one perf map, with an empty table; @opts may be NULL.
 * Returns NULL with errno set (EINVAL: line_max too big; ENOMEM).
 */
struct perfmap_reader *perfmap_reader__new(const struct perfmap_opts *opts);

/* perfmap_reader__free(NULL) is a no-op.  Frees the table too. */
void perfmap_reader__free(struct perfmap_reader *r);

/*
 * Read the perf map open on @fd (borrowed; a regular file) from where the
 * last read stopped to the size it has now, with pread() in a bounded
 * buffer, and add its complete lines to the table.  Pass the same file
 * each time.  When the file is shorter than what was consumed, or its
 * first bytes changed, it was truncated or rewritten: a new table is made
 * and the file read from 0 (counted in restarts).
 * Returns the number of lines read and kept in the table, 0 when nothing
 * new, or -errno: from fstat()/pread() (the read can be tried again),
 * -ENOMEM, or -E2BIG once max_bytes were consumed (the table keeps what
 * was read; every later call returns -E2BIG unless the file is rewritten).
 * Any read may replace the table: get it again after each read, and do
 * not keep pointers into the old one.
 */
int perfmap_reader__read(struct perfmap_reader *r, int fd);

/* The table of what was read (never NULL); owned by @r. */
struct jitsyms *perfmap_reader__syms(const struct perfmap_reader *r);

/* Counters since the reader was made (bytes: of the current table). */
const struct perfmap_stats *perfmap_reader__stats(const struct perfmap_reader *r);

#endif /* BPFSYM_PERFMAP_H */
