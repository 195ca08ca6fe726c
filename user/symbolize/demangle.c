// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* demangle: C++ and Rust names made readable, once per distinct name. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbolize/demangle.h"

bool demangle__is_mangled(const char *name)
{
	return (name[0] == '_' && name[1] == 'Z') || (name[0] == '_' && name[1] == 'R');
}

char *demangle(const char *name)
{
	size_t len;

	if (!demangle__is_mangled(name))
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

/* Room in c->shown for index @id, the new slots zeroed.  0 or -ENOMEM. */
static int cache_grow(struct demangle_cache *c, uint32_t id)
{
	size_t cap = c->cap ? c->cap : 256;
	uint32_t *shown;

	while (cap <= id)
		cap *= 2;
	shown = realloc(c->shown, cap * sizeof(*shown));
	if (!shown)
		return -ENOMEM;
	memset(shown + c->cap, 0, (cap - c->cap) * sizeof(*shown));
	c->shown = shown;
	c->cap = cap;
	return 0;
}

const char *demangle_cache__get(struct demangle_cache *c, struct strtab *st, uint32_t id)
{
	const char *name = strtab__str(st, id);
	uint32_t shown = id;
	char *readable;
	int err = 0;

	if (!name) {
		errno = EINVAL;
		return NULL;
	}
	/* Plain C names are most names: no slot for them. */
	if (!demangle__is_mangled(name))
		return name;
	if (id < c->cap && c->shown[id])
		return strtab__str(st, c->shown[id] - 1);
	if (id >= c->cap && cache_grow(c, id)) {
		errno = ENOMEM;
		return NULL;
	}
	readable = demangle(name);
	if (readable)
		err = strtab__intern_id(st, readable, strlen(readable), &shown);
	free(readable);
	if (err) {
		errno = -err;
		return NULL;
	}
	c->shown[id] = shown + 1;
	return strtab__str(st, shown);
}

void demangle_cache__free(struct demangle_cache *c)
{
	free(c->shown);
	memset(c, 0, sizeof(*c));
}
