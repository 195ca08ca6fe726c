/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash: the one hash every in-memory table uses (interned strings, module
 * and frame tables, the process table).  Never written to files: it may
 * change freely.  Word at a time, with splitmix64's finalizer so every input
 * bit reaches every output bit and power-of-two tables can mask the low bits.
 *
 * Keyed by a secret drawn once per run (hash_secret_init): the names
 * hashed come from files any user writes (symbol tables, perf maps), and
 * with a known key the finalizer's inverse gives, for any first word, the
 * second word that lands on a chosen hash: a symbol table of such names
 * would turn every lookup into a walk of them all.  The secret enters
 * every step, so a state cannot be computed without it.  Not a MAC:
 * enough that collisions cannot be made offline.
 */
#ifndef BPFSYM_HASH_H
#define BPFSYM_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The run's key: 0 until hash_secret_init() (unit tests may keep 0). */
extern uint64_t hash_secret;

/*
 * Draw the run's key from getrandom() (the clock and pid if that fails:
 * unpredictable enough to a user who cannot see our memory).  Call once,
 * before any table is filled: hashes made before it are not found after.
 */
void hash_secret_init(void);

static inline uint64_t hash_fin(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

/* Fold @v into the running hash @h. */
static inline uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return hash_fin(h ^ hash_secret ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* Fold @n bytes at @data into the running hash @h (start with any seed). */
static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t w;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = hash_u64(h, w);
	}
	w = 0;
	if (n)		/* @data may be NULL when @n is 0: memcpy must not see it */
		memcpy(&w, p, n);
	/* The tail length keeps "a\0" and "a" apart. */
	return hash_u64(h, w ^ ((uint64_t)n << 56));
}

#endif /* BPFSYM_HASH_H */
