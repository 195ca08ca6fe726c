/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pathstore: interned, reference-counted strings (the mapping model's
 * paths).  A fork or a split of a mapping takes a reference instead of a
 * copy, and the store holds only the distinct strings still referenced, so
 * its memory follows what is alive.  Bounded: a string longer than max_len
 * or one that would take the store past max_bytes is not kept (the caller
 * gets NULL and goes on without it).  No libbpf here.
 */
#ifndef BPFSYM_PATHSTORE_H
#define BPFSYM_PATHSTORE_H

#include <stddef.h>

struct pathstore;

/* An empty store; NULL + errno. */
struct pathstore *pathstore__new(size_t max_len, size_t max_bytes);

/* Free @ps, which must hold no references any more.  NULL is a no-op. */
void pathstore__free(struct pathstore *ps);

/*
 * A reference to the interned copy of @s (@len bytes, no NUL needed) in
 * *@out; NULL for an empty string, one longer than max_len, or a new one
 * that does not fit under max_bytes (said once, as a warning).  The copy is
 * NUL terminated and stays until its last reference is put.  0 or -ENOMEM.
 */
int pathstore__get(struct pathstore *ps, const char *s, size_t len, const char **out);

/* One more reference to @s, a string from pathstore__get (NULL: none).  Cannot fail. */
void pathstore__hold(const char *s);

/* Give back a reference to @s; NULL is a no-op. */
void pathstore__put(struct pathstore *ps, const char *s);

/* Bytes the distinct strings held now are charged (against max_bytes). */
size_t pathstore__bytes(const struct pathstore *ps);

#endif /* BPFSYM_PATHSTORE_H */
