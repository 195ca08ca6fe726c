/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash: the one hash every in-memory table uses (interned strings, module
 * and frame tables, the process table).  Never written to files: it may
 * change freely.  Word at a time, with splitmix64's finalizer so every input
 * bit reaches every output bit and power-of-two tables can mask the low bits.
 */
#ifndef BPFSYM_HASH_H
#define BPFSYM_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	return hash_fin(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
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
	memcpy(&w, p, n);
	/* The tail length keeps "a\0" and "a" apart. */
	return hash_u64(h, w ^ ((uint64_t)n << 56));
}

#endif /* BPFSYM_HASH_H */
