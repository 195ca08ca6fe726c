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

static int cache_grow(struct demangle_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256, i, j;
	const char **keys = calloc(cap, sizeof(*keys));
	const char **vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < c->cap; i++) {
		if (!c->keys[i])
			continue;
		for (j = ptr_hash(c->keys[i]) & (cap - 1); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = c->keys[i];
		vals[j] = c->vals[i];
	}
	free(c->keys);
	free(c->vals);
	c->keys = keys;
	c->vals = vals;
	c->cap = cap;
	return 0;
}

const char *demangle_cache__get(struct demangle_cache *c, struct strtab *st, const char *name)
{
	const char *val;
	char *readable;
	size_t j;

	/* Plain C names are most names: no table traffic for them. */
	if (!looks_mangled(name))
		return name;
	if ((c->nr + 1) * 2 > c->cap && cache_grow(c))
		return NULL;
	for (j = ptr_hash(name) & (c->cap - 1); c->keys[j]; j = (j + 1) & (c->cap - 1))
		if (c->keys[j] == name)
			return c->vals[j];
	readable = demangle(name);
	val = readable ? strtab__intern(st, readable) : name;
	free(readable);
	if (!val)
		return NULL;
	c->keys[j] = name;
	c->vals[j] = val;
	c->nr++;
	return val;
}

void demangle_cache__free(struct demangle_cache *c)
{
	free(c->keys);
	free(c->vals);
	memset(c, 0, sizeof(*c));
}
