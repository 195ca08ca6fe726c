// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* demangle: C++ and Rust names made readable, once per distinct name. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbolize/demangle.h"
#include "base/hash.h"

static int looks_mangled(const char *name)
{
	return (name[0] == '_' && name[1] == 'Z') || (name[0] == '_' && name[1] == 'R');
}

char *demangle(const char *name)
{
	size_t len;

	if (!looks_mangled(name))
		return NULL;
	len = strnlen(name, DEMANGLE_MAX_LEN + 1);
	if (len > DEMANGLE_MAX_LEN)
		return NULL;
	/*
	 * DMGL_AUTO tries Rust first: legacy Rust names are valid C++ names
	 * too, and read far better as Rust paths.  The recursion limit stays
	 * on (no DMGL_NO_RECURSE_LIMIT): it bounds a hostile name's cost.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

static uint64_t ptr_hash(const char *p)
{
	return hash_u64(0, (uint64_t)(uintptr_t)p);
}

/* What @name is shown as when cached, else NULL. */
static const char *cache_find(const struct demangle_cache *c, uint64_t h, const char *name)
{
	size_t pos = HTAB_START;
	uint64_t v;

	while (htab__next(&c->tab, h, &pos, &v))
		if (c->pairs[v - 1].raw == name)
			return c->pairs[v - 1].shown;
	return NULL;
}

/* Room for one more pair, in the array and the table.  0 or -ENOMEM. */
static int cache_reserve(struct demangle_cache *c)
{
	struct demangle_pair *pairs;
	size_t cap;

	if (c->nr == c->cap) {
		cap = c->cap ? c->cap * 2 : 128;
		pairs = realloc(c->pairs, cap * sizeof(*pairs));
		if (!pairs)
			return -ENOMEM;
		c->pairs = pairs;
		c->cap = cap;
	}
	return htab__reserve(&c->tab, 1);
}

const char *demangle_cache__get(struct demangle_cache *c, struct strtab *st, const char *name)
{
	uint64_t h = ptr_hash(name);
	const char *val;
	char *readable;

	/* Plain C names are most names: no table traffic for them. */
	if (!looks_mangled(name))
		return name;
	val = cache_find(c, h, name);
	if (val)
		return val;
	if (cache_reserve(c))
		return NULL;
	readable = demangle(name);
	val = readable ? strtab__intern(st, readable) : name;
	free(readable);
	if (!val)
		return NULL;
	c->pairs[c->nr] = (struct demangle_pair){ name, val };
	/* Reserved above: cannot fail. */
	if (htab__add(&c->tab, h, c->nr + 1))
		return NULL;
	c->nr++;
	return val;
}

void demangle_cache__free(struct demangle_cache *c)
{
	htab__free(&c->tab);
	free(c->pairs);
	memset(c, 0, sizeof(*c));
}
