// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "model/pathstore.h"
#include "base/util.h"

/* An interned path; struct mapping.path points at s. */
struct pstr {
	struct pstr *next;	/* hash chain */
	uint64_t hash;
	size_t refs;		/* mappings holding it: may pass 2^32 */
	size_t len;
	char s[];
};

struct pathstore {
	struct pstr **buckets;
	size_t nr_buckets;	/* power of two */
	size_t nr;
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
	ps->nr_buckets = 256;
	ps->buckets = calloc(ps->nr_buckets, sizeof(*ps->buckets));
	if (!ps->buckets) {
		free(ps);
		errno = ENOMEM;
		return NULL;
	}
	return ps;
}

void pathstore__free(struct pathstore *ps)
{
	if (!ps)
		return;
	free(ps->buckets);
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

/* Double the buckets.  A failure only makes chains longer, so it is not an error. */
static void grow(struct pathstore *ps)
{
	size_t n = ps->nr_buckets * 2, i;
	struct pstr **b = calloc(n, sizeof(*b)), *e, *next;

	if (!b)
		return;
	for (i = 0; i < ps->nr_buckets; i++) {
		for (e = ps->buckets[i]; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(ps->buckets);
	ps->buckets = b;
	ps->nr_buckets = n;
}

int pathstore__get(struct pathstore *ps, const char *s, size_t len, const char **out)
{
	struct pstr *e;
	uint64_t h;
	size_t b;

	*out = NULL;
	if (!len)
		return 0;
	if (len > ps->max_len) {
		pr_debug("pathstore: a path of %zu bytes is too long to keep\n", len);
		return 0;
	}
	h = hash_bytes(0, s, len);
	for (e = ps->buckets[h & (ps->nr_buckets - 1)]; e; e = e->next) {
		if (e->hash == h && e->len == len && !memcmp(e->s, s, len)) {
			e->refs++;
			*out = e->s;
			return 0;
		}
	}
	if (ps->bytes + pstr_cost(len) > ps->max_bytes) {
		if (!ps->warned)
			pr_warn("pathstore: %zu MiB of paths held: new mappings get no path\n",
				ps->max_bytes >> 20);
		ps->warned = true;
		return 0;
	}
	e = malloc(pstr_cost(len));
	if (!e)
		return -ENOMEM;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	e->hash = h;
	e->refs = 1;
	if (ps->nr >= ps->nr_buckets)
		grow(ps);
	b = h & (ps->nr_buckets - 1);
	e->next = ps->buckets[b];
	ps->buckets[b] = e;
	ps->nr++;
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
	struct pstr *e, **pp;

	if (!s)
		return;
	e = pstr_of(s);
	if (--e->refs)
		return;
	for (pp = &ps->buckets[e->hash & (ps->nr_buckets - 1)]; *pp != e; pp = &(*pp)->next)
		;
	*pp = e->next;
	ps->nr--;
	ps->bytes -= pstr_cost(e->len);
	free(e);
}

