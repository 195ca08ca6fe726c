/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * htab: the one hash table every in-memory table uses.  It maps a 64-bit
 * hash (base/hash.h) to values: any non-zero 64-bit word, an id + 1 or a
 * pointer.  The keys stay with the caller, who walks the values stored
 * under a hash and compares: so one table serves arrays indexed by id
 * (which move when they grow) and objects allocated one by one alike.
 *
 * Open addressing with linear probing, load at most 1/2, deletion by
 * backward shift (no tombstones, so a long-lived table never degrades).
 * A zeroed struct htab is an empty table.
 */
#ifndef BPFSYM_HTAB_H
#define BPFSYM_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

struct htab_slot {
	uint64_t hash;
	uint64_t val;		/* 0: empty */
};

struct htab {
	struct htab_slot *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t nr;
};

/* Where htab__next() starts. */
#define HTAB_START SIZE_MAX

/* Make room for @more insertions without a move.  0 or -ENOMEM. */
int htab__reserve(struct htab *t, size_t more);

/*
 * The values stored under @hash, one per call, in *@val: start with
 * *@pos = HTAB_START and stop at false.  The table must not change
 * between calls (htab__add, htab__del move values).
 */
bool htab__next(const struct htab *t, uint64_t hash, size_t *pos, uint64_t *val);

/* Whether @val, stored under the hash sought, holds the key @key (the owner's: @ctx). */
typedef bool (*htab_eq_fn)(const void *ctx, const void *key, uint64_t val);

/*
 * The first value stored under @hash for which @eq says it holds @key, or
 * 0 when none does: the walk of htab__next(), inline for the lookups on
 * hot paths, where a static @eq is inlined with it.
 */
static inline uint64_t htab__find(const struct htab *t, uint64_t hash, htab_eq_fn eq,
				  const void *ctx, const void *key)
{
	size_t i;

	if (!t->slots)
		return 0;
	for (i = hash & t->mask; t->slots[i].val; i = (i + 1) & t->mask)
		if (t->slots[i].hash == hash && eq(ctx, key, t->slots[i].val))
			return t->slots[i].val;
	return 0;
}

/* Store @val (non-zero) under @hash, beside any already there.  0 or -ENOMEM, -EINVAL. */
int htab__add(struct htab *t, uint64_t hash, uint64_t val);

/* Remove @val stored under @hash: true when it was there. */
bool htab__del(struct htab *t, uint64_t hash, uint64_t val);

/* Values stored. */
static inline size_t htab__nr(const struct htab *t)
{
	return t->nr;
}

/* Bytes the table itself holds (not the keys). */
static inline size_t htab__bytes(const struct htab *t)
{
	return t->slots ? (t->mask + 1) * sizeof(*t->slots) : 0;
}

/* Free the slots; @t is then an empty table again.  NULL is a no-op. */
void htab__free(struct htab *t);

/*
 * A set of 32-bit numbers (pids, say) in a htab: @v is stored as v + 1
 * under hash_fin(v), which is one-to-one, so no key is kept elsewhere.
 */
static inline bool htab__u32_eq(const void *ctx, const void *key, uint64_t val)
{
	(void)ctx;
	return val - 1 == *(const uint32_t *)key;
}

/* Whether @v is in the set @t. */
static inline bool htab__has_u32(const struct htab *t, uint32_t v)
{
	return htab__find(t, hash_fin(v), htab__u32_eq, NULL, &v) != 0;
}

/* Put @v (not in it yet) in the set @t.  0 or -ENOMEM. */
static inline int htab__add_u32(struct htab *t, uint32_t v)
{
	return htab__add(t, hash_fin(v), (uint64_t)v + 1);
}

/* Take @v out of the set @t: true when it was there. */
static inline bool htab__del_u32(struct htab *t, uint32_t v)
{
	return htab__del(t, hash_fin(v), (uint64_t)v + 1);
}

#endif /* BPFSYM_HTAB_H */
