/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * imgcache: the symbols of file contents ("images"), kept within caps,
 * and the names made from them.  The symbolizer (files as the processes
 * mapped them) and symfs (copies of a recording's files under a
 * directory) each keep one.
 *
 * An image is the content of a file: keyed by build-id, so copies of a
 * binary (other inodes, other containers, other paths) share one, or, for
 * a file without a build-id, by the file's identity (dev, ino, mtime).
 * An image is created on first sight and lives while someone holds it
 * (imgcache__get/put) or its symbols are loaded; its
 * symbols (the file's elfsym and its debug file's) are read by the caller,
 * attached here, and dropped again least recently used first when more
 * than max_files images, or more than max_bytes of them, are loaded; the
 * one attached last stays, however big: it is needed now.
 *
 * Names handed out (a symbol's display name: interned, demangled unless
 * told not to) must outlive an image's eviction: they live in the cache's
 * interner until imgcache__free().  Each symbol's display name is made
 * once while its image is loaded, not once per frame.
 * No libbpf here.
 */
#ifndef BPFSYM_IMGCACHE_H
#define BPFSYM_IMGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/lru.h"
#include "base/strtab.h"
#include "symbolize/demangle.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"

/* One file content.  Read-only outside imgcache.c. */
struct image {
	struct elfsym *es;	/* NULL: not loaded (yet, or evicted) */
	struct elfsym *dbg;	/* the separate debug file's symbols, if richer */
	uint8_t build_id[FILEID_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: none, keyed by the file's identity below */
	uint64_t dev, ino;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	struct lru_node lru;	/* in imgcache.loaded while es is set */
	struct image *next;	/* in imgcache.all */
	size_t refs;		/* imgcache__get()s not put back */
	size_t bytes;		/* memory of es, dbg and names while loaded */
	/*
	 * The display name of each symbol of the table in use (dbg, else es),
	 * by elfsym__sym_index(), set on first use.  NULL until a first lookup.
	 */
	const char **names;
};

/* What an image is found by. */
struct image_key {
	const uint8_t *build_id;	/* used when build_id_len is not 0 */
	size_t build_id_len;		/* at most FILEID_BUILD_ID_MAX */
	uint64_t dev, ino;		/* else the file version */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
};

struct imgcache {
	struct htab tab;	/* hash of the key -> struct image * */
	struct image *all;
	struct lru loaded;	/* images with symbols in memory, most recent first */
	size_t nr_loaded, loaded_bytes;
	size_t max_files, max_bytes;
	struct strtab names;	/* every name handed out */
	size_t nr_images;
	struct demangle_cache demangled;	/* by the ids in names */
	bool no_demangle;
};

/*
 * Make @c an empty cache keeping at most @max_files images' symbols, of
 * at most @max_bytes together (the one attached last stays past either),
 * showing names as in the files when @no_demangle.  Allocates nothing.
 */
void imgcache__init(struct imgcache *c, size_t max_files, size_t max_bytes, bool no_demangle);

/* Free every image and every name of @c; @c is then empty.  NULL is a no-op. */
void imgcache__free(struct imgcache *c);

/*
 * A reference to the image of key @k, created (not loaded) on first
 * sight (give it back with imgcache__put).  NULL on ENOMEM, or for a build-id longer than
 * FILEID_BUILD_ID_MAX (which no file read here has).
 */
struct image *imgcache__get(struct imgcache *c, const struct image_key *k);

/*
 * Give back a reference from imgcache__get(): an image nobody holds goes
 * once its symbols are not loaded (at once, or when the caps evict them),
 * so images do not pile up with every build-id ever seen.  NULL: no-op.
 */
void imgcache__put(struct imgcache *c, struct image *img);

/* Images held now (loaded or not). */
size_t imgcache__nr_images(const struct imgcache *c);

/*
 * Whether @es, just read from a file of @img, holds @img's content: the
 * same build-id (none when @img has none).  False: the file was written
 * in place since it was identified, and must not name @img's frames.
 */
bool image__matches(const struct image *img, const struct elfsym *es);

/*
 * @img, not loaded, holds @es and @dbg (may be NULL) now, which it frees:
 * counted against the caps, most recently used, and the least recently
 * used others are dropped past a cap.
 */
void imgcache__attach(struct imgcache *c, struct image *img, struct elfsym *es,
		      struct elfsym *dbg);

/*
 * Give loaded @img (es set, no debug file) the debug file @dbg found
 * later (debuginfod.h), which it takes; its names are made again from
 * @dbg's table.  May drop other images past the caps, never @img.
 */
void imgcache__attach_debug(struct imgcache *c, struct image *img, struct elfsym *dbg);

/* @img, loaded, was just used. */
static inline void imgcache__touch(struct imgcache *c, struct image *img)
{
	lru__touch(&c->loaded, &img->lru);
}

/* The symbol table of loaded @img to look addresses up in: its debug file's, else its own. */
static inline const struct elfsym *image__syms(const struct image *img)
{
	return img->dbg ? img->dbg : img->es;
}

/*
 * The display name of @sym, a symbol of image__syms(@img), @img loaded:
 * made once per symbol and kept (its bytes counted with @img's).  Lives as
 * long as @c.  NULL on ENOMEM.
 */
const char *imgcache__sym_name(struct imgcache *c, struct image *img, const struct elfsym_sym *sym);

/*
 * The display name of @raw, a name from anywhere (interned: copied once).
 * Lives as long as @c.  NULL + errno (ENOMEM, E2BIG: over the interner's
 * caps).
 */
const char *imgcache__name(struct imgcache *c, const char *raw);

/*
 * The display name of @name, which stays where it is as long as @c (NULL:
 * NULL): @name itself unless it is shown otherwise (demangled), which is
 * then interned as by imgcache__name().  Lives as long as @c.  NULL +
 * errno as imgcache__name().
 */
const char *imgcache__display(struct imgcache *c, const char *name);

/* Images whose symbols are in memory now. */
static inline size_t imgcache__nr_loaded(const struct imgcache *c)
{
	return c->nr_loaded;
}

/* Bytes those symbols (and their names tables) take now. */
static inline size_t imgcache__loaded_bytes(const struct imgcache *c)
{
	return c->loaded_bytes;
}

#endif /* BPFSYM_IMGCACHE_H */
