// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* strtab: the one string interner (strtab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/strtab.h"

#define STR_CHUNK	(64 * 1024)
/* Each string is stored as its 32-bit length, then its bytes, then a NUL. */
#define LEN_BYTES	sizeof(uint32_t)

struct str_chunk {
	struct str_chunk *next;
	char data[];
};

static uint32_t stored_len(const char *p)
{
	uint32_t len;

	memcpy(&len, p - LEN_BYTES, sizeof(len));
	return len;
}

/* Room for @need bytes at st->cur.  0 or -ENOMEM. */
static int reserve_bytes(struct strtab *st, size_t need)
{
	struct str_chunk *c;
	size_t size;

	if (need <= st->left)
		return 0;
	size = need > STR_CHUNK ? need : STR_CHUNK;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return -ENOMEM;
	c->next = st->chunks;
	st->chunks = c;
	st->cur = c->data;
	st->left = size;
	return 0;
}

/* The id of the bytes (@s, @len) with hash @h, or -1. */
static int64_t lookup(const struct strtab *st, uint64_t h, const void *s, size_t len)
{
	size_t pos = HTAB_START;
	uint64_t v;

	while (htab__next(&st->tab, h, &pos, &v)) {
		const char *p = st->strs[v - 1];

		if (stored_len(p) == len && !memcmp(p, s, len))
			return (int64_t)(v - 1);
	}
	return -1;
}

int strtab__intern_id(struct strtab *st, const void *s, size_t len, uint32_t *id)
{
	uint32_t len32 = (uint32_t)len;
	const char **strs;
	int64_t hit;
	char *copy;
	uint64_t h;
	int err;

	if (!len)
		s = "";		/* an empty buffer may have no bytes at all (NULL) */
	h = hash_bytes(0, s, len);
	hit = lookup(st, h, s, len);

	if (hit >= 0) {
		*id = (uint32_t)hit;
		return 0;
	}
	if (st->nr >= STRTAB_MAX_STRS || len >= UINT32_MAX)
		return -E2BIG;
	if (st->nr == st->cap) {
		size_t ncap = st->cap ? st->cap * 2 : 256;

		strs = realloc(st->strs, ncap * sizeof(*strs));
		if (!strs)
			return -ENOMEM;
		st->strs = strs;
		st->cap = ncap;
	}
	err = htab__reserve(&st->tab, 1);
	err = err ?: reserve_bytes(st, LEN_BYTES + len + 1);
	if (err)
		return err;
	memcpy(st->cur, &len32, LEN_BYTES);
	copy = st->cur + LEN_BYTES;
	memcpy(copy, s, len);
	copy[len] = '\0';
	st->cur += LEN_BYTES + len + 1;
	st->left -= LEN_BYTES + len + 1;
	st->strs[st->nr] = copy;
	err = htab__add(&st->tab, h, st->nr + 1);	/* reserved: cannot fail */
	if (err)
		return err;
	*id = (uint32_t)st->nr++;
	return 0;
}

int strtab__find_id(const struct strtab *st, const void *s, size_t len, uint32_t *id)
{
	int64_t hit = lookup(st, hash_bytes(0, s, len), s, len);

	if (hit < 0)
		return -ENOENT;
	*id = (uint32_t)hit;
	return 0;
}

const char *strtab__intern(struct strtab *st, const char *s)
{
	uint32_t id;
	int err = strtab__intern_id(st, s, strlen(s), &id);

	if (err) {
		errno = -err;
		return NULL;
	}
	return st->strs[id];
}

const char *strtab__str(const struct strtab *st, uint32_t id)
{
	return id < st->nr ? st->strs[id] : NULL;
}

size_t strtab__len(const struct strtab *st, uint32_t id)
{
	return id < st->nr ? stored_len(st->strs[id]) : 0;
}

void strtab__free(struct strtab *st)
{
	struct str_chunk *c, *next;

	if (!st)
		return;
	for (c = st->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(st->strs);
	htab__free(&st->tab);
	memset(st, 0, sizeof(*st));
}
