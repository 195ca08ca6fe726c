// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* strtab: interned strings, for names that outlive the files they came from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/strtab.h"

#define STR_CHUNK	(64 * 1024)

struct str_chunk {
	struct str_chunk *next;
	char data[];
};

static int strtab_grow(struct strtab *st)
{
	size_t cap = st->cap ? st->cap * 2 : 1024, i, j;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < st->cap; i++) {
		const char *s = st->slots[i];

		if (!s)
			continue;
		for (j = hash_bytes(0, s, strlen(s)) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	free(st->slots);
	st->slots = slots;
	st->cap = cap;
	return 0;
}

const char *strtab__intern(struct strtab *st, const char *s)
{
	size_t len = strlen(s), j;
	const char *hit;
	char *copy;

	if ((st->nr + 1) * 2 > st->cap && strtab_grow(st))
		return NULL;
	for (j = hash_bytes(0, s, len) & (st->cap - 1); (hit = st->slots[j]); j = (j + 1) & (st->cap - 1))
		if (!strcmp(hit, s))
			return hit;
	if (len + 1 > st->left) {
		size_t size = len + 1 > STR_CHUNK ? len + 1 : STR_CHUNK;
		struct str_chunk *c = malloc(sizeof(*c) + size);

		if (!c)
			return NULL;
		c->next = st->chunks;
		st->chunks = c;
		st->cur = c->data;
		st->left = size;
	}
	copy = st->cur;
	memcpy(copy, s, len + 1);
	st->cur += len + 1;
	st->left -= len + 1;
	st->slots[j] = copy;
	st->nr++;
	return copy;
}

void strtab__free(struct strtab *st)
{
	struct str_chunk *c, *next;

	for (c = st->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(st->slots);
	memset(st, 0, sizeof(*st));
}
