// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pathstore: each path a separate allocation, found by its bytes through
 * the table and freed with its last reference.  Not base/strtab: that one
 * keeps every string until the whole table goes, and a long recording
 * sees paths come and go.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/util.h"
#include "model/pathstore.h"

/* An interned path; struct mapping.path points at s. */
struct pstr {
	uint64_t hash;		/* of the bytes: where it is in the table */
	size_t refs;		/* mappings holding it: may pass 2^32 */
	size_t len;
	char s[];
};

struct pathstore {
	struct htab tab;	/* hash -> struct pstr * */
	size_t bytes;		/* charged against max_bytes */
	size_t max_len, max_bytes;
	bool warned;		/* the store was full once: said so */
};

struct pathstore *pathstore__new(size_t max_len, size_t max_bytes)
{
	struct pathstore *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->max_len = max_len;
	ps->max_bytes = max_bytes;
	return ps;
}

void pathstore__free(struct pathstore *ps)
{
	if (!ps)
		return;
	htab__free(&ps->tab);
	free(ps);
}

static struct pstr *pstr_of(const char *s)
{
	/* The store owns the string: const only toward the readers of mappings. */
	return (struct pstr *)(s - offsetof(struct pstr, s));
}

/* What a path of @len bytes costs the store. */
static size_t pstr_cost(size_t len)
{
	return sizeof(struct pstr) + len + 1;
}

/* A path sought: its bytes. */
struct pkey {
	const char *s;
	size_t len;
};

static bool pstr_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct pstr *e = (const struct pstr *)(uintptr_t)val;
	const struct pkey *k = key;

	return e->len == k->len && !memcmp(e->s, k->s, k->len);
}

int pathstore__get(struct pathstore *ps, const char *s, size_t len, const char **out)
{
	struct pstr *e;
	uint64_t h;

	*out = NULL;
	if (!len)
		return 0;
	if (len > ps->max_len) {
		pr_debug("pathstore: a path of %zu bytes is too long to keep\n", len);
		return 0;
	}
	h = hash_bytes(0, s, len);
	e = (struct pstr *)(uintptr_t)htab__find(&ps->tab, h, pstr_eq, NULL, &(struct pkey){ s, len });
	if (e) {
		e->refs++;
		*out = e->s;
		return 0;
	}
	if (ps->bytes + pstr_cost(len) > ps->max_bytes) {
		if (!ps->warned)
			pr_warn("pathstore: %zu MiB of paths held: new mappings get no path\n",
				ps->max_bytes >> 20);
		ps->warned = true;
		return 0;
	}
	e = malloc(pstr_cost(len));
	if (!e || htab__add(&ps->tab, h, (uintptr_t)e)) {
		free(e);
		return -ENOMEM;
	}
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	e->hash = h;
	e->refs = 1;
	ps->bytes += pstr_cost(len);
	*out = e->s;
	return 0;
}

void pathstore__hold(const char *s)
{
	if (s)
		pstr_of(s)->refs++;
}

void pathstore__put(struct pathstore *ps, const char *s)
{
	struct pstr *e;

	if (!s)
		return;
	e = pstr_of(s);
	if (--e->refs)
		return;
	htab__del(&ps->tab, e->hash, (uintptr_t)e);
	ps->bytes -= pstr_cost(e->len);
	free(e);
}

size_t pathstore__bytes(const struct pathstore *ps)
{
	return ps->bytes;
}
