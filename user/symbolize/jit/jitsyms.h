/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jitsyms: the JIT code symbols of one process, from its perf map or its
 * jitdump (perfmap.c, jitdump.c).  Both are append-only logs: a JIT that
 * reuses memory for new code writes a new entry, so where entries overlap
 * the one added later names the addresses it covers.  No libbpf here.
 *
 * Not thread-safe: a lookup after adds rebuilds the index.
 */
#ifndef BPFSYM_JITSYMS_H
#define BPFSYM_JITSYMS_H

#include <stddef.h>
#include <stdint.h>

struct jitsyms;

struct jitsym {
	uint64_t start;
	uint64_t size;		/* > 0; start + size does not wrap */
	const char *name;	/* owned by the table, NUL-terminated, not empty */
};

/* Caps that bound what a hostile file can make us allocate. */
struct jitsyms_opts {
	size_t max_syms;	/* 0: default (1 Mi entries) */
	size_t max_name_bytes;	/* 0: default (64 MiB of names, NULs included) */
};

/*
 * A new, empty table; @opts may be NULL (defaults).
 * Returns NULL with errno set (ENOMEM).
 */
struct jitsyms *jitsyms__new(const struct jitsyms_opts *opts);

/* jitsyms__free(NULL) is a no-op. */
void jitsyms__free(struct jitsyms *js);

/*
 * Add the symbol [@start, @start + @size) named by the @name_len bytes at
 * @name (copied; need not be NUL-terminated).  It shadows, where they
 * overlap, every entry added before it.  @size 0 covers nothing: nothing
 * is stored, 0 is returned.
 * Returns 0, -EINVAL (@name_len 0, a NUL in the name, or @start + @size
 * wraps past 2^64 - 1), -E2BIG (a cap is reached: the entry is dropped
 * and counted, see jitsyms__nr_dropped()) or -ENOMEM.
 */
int jitsyms__add(struct jitsyms *js, uint64_t start, uint64_t size, const char *name,
		 size_t name_len);

/*
 * Keep a copy of the @name_len bytes at @name for a later
 * jitsyms__add_stored(), without adding a symbol: jitdump names code by
 * an index before (or without) giving it an address.  The copy lives as
 * long as @js and counts towards max_name_bytes.
 * Returns it, or NULL with errno set (EINVAL as for jitsyms__add(); E2BIG:
 * the name cap is reached, counted as a drop; ENOMEM).
 */
const char *jitsyms__store_name(struct jitsyms *js, const char *name, size_t name_len);

/*
 * jitsyms__add() with @name, a string returned by jitsyms__store_name()
 * or found in a symbol of this same @js: it is not copied again.
 * Returns 0, -EINVAL (wrap), -E2BIG (max_syms reached, counted) or -ENOMEM.
 */
int jitsyms__add_stored(struct jitsyms *js, uint64_t start, uint64_t size, const char *name);

/*
 * The symbol naming @addr: of the entries covering it, the last added.
 * The symbol is returned as it was added (its start and size may cover
 * addresses that later entries took), so addr - start is the offset in
 * the code it names.  The pointer is valid as long as @js.
 * NULL when no entry covers @addr (errno ENOENT), or ENOMEM when the
 * index of new entries cannot be built (errno ENOMEM; a later lookup
 * tries again).
 * O(log n); the first lookup after adds costs O(n + k log k) for k adds.
 */
const struct jitsym *jitsyms__lookup(struct jitsyms *js, uint64_t addr);

/* Entries stored (size 0 and dropped ones excluded). */
size_t jitsyms__nr_syms(const struct jitsyms *js);

/* Entries and names refused because a cap was reached. */
size_t jitsyms__nr_dropped(const struct jitsyms *js);

#endif /* BPFSYM_JITSYMS_H */
