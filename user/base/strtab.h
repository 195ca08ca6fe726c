/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * strtab: the one string interner.  Each distinct byte string is stored
 * once, in large chunks, NUL-terminated (it may hold NULs of its own: its
 * length is kept), and lives until the table is freed: names handed out
 * by the symbolizer outlive the ELF files they were read from.  A string
 * has an id (0, 1, 2... in the order interned) and a stable pointer.  A
 * zeroed struct strtab is an empty table.
 */
#ifndef BPFSYM_STRTAB_H
#define BPFSYM_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"

struct str_chunk;

struct strtab {
	struct htab tab;	/* hash of the bytes -> id + 1 */
	const char **strs;	/* by id; the length is stored just before each */
	size_t nr, cap;
	struct str_chunk *chunks;
	char *cur;
	size_t left;
};

/* At most this many strings in one table. */
#define STRTAB_MAX_STRS	((size_t)UINT32_MAX - 1)

/*
 * Intern the @len bytes at @s (which must not point into @st): their id
 * in *@id, the same for equal bytes.  0, -ENOMEM, or -E2BIG (more than
 * STRTAB_MAX_STRS strings, or a string over 4 GiB).
 */
int strtab__intern_id(struct strtab *st, const void *s, size_t len, uint32_t *id);

/*
 * The id of the @len bytes at @s when they were interned, in *@id, without
 * interning them: 0, or -ENOENT.  For callers that must do something else
 * that may fail (write a record) before a new string gets its id.
 */
int strtab__find_id(const struct strtab *st, const void *s, size_t len, uint32_t *id);

/* A copy of the C string @s that lives as long as @st, the same for equal strings; NULL + errno. */
const char *strtab__intern(struct strtab *st, const char *s);

/* String @id (NUL-terminated), or NULL when there is none. */
const char *strtab__str(const struct strtab *st, uint32_t id);

/* The length of string @id, without the terminating NUL (0 when there is none). */
size_t strtab__len(const struct strtab *st, uint32_t id);

/* Strings interned. */
static inline size_t strtab__nr(const struct strtab *st)
{
	return st->nr;
}

/* Free every string of @st; @st is then an empty table again.  NULL is a no-op. */
void strtab__free(struct strtab *st);

#endif /* BPFSYM_STRTAB_H */
