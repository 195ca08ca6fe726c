/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * strtab: interned strings.  Each distinct string is stored once, in large
 * chunks, and lives until the table is freed: names handed out by the
 * symbolizer outlive the ELF files they were read from.  A zeroed struct
 * strtab is an empty table.  No libbpf here.
 */
#ifndef BPFSYM_STRTAB_H
#define BPFSYM_STRTAB_H

#include <stddef.h>

struct str_chunk;

struct strtab {
	const char **slots;	/* open addressing over pointers into chunks */
	size_t cap, nr;
	struct str_chunk *chunks;
	char *cur;
	size_t left;
};

/* A copy of @s that lives as long as @st, the same for equal strings; NULL on ENOMEM. */
const char *strtab__intern(struct strtab *st, const char *s);

/* Free every string of @st; @st is then an empty table again. */
void strtab__free(struct strtab *st);

#endif /* BPFSYM_STRTAB_H */
