// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * imgcache: images by build-id or file identity, their symbols within the
 * caps, and the names made from them (imgcache.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "symbolize/imgcache.h"

void imgcache__init(struct imgcache *c, size_t max_files, size_t max_bytes, bool no_demangle)
{
	memset(c, 0, sizeof(*c));
	c->max_files = max_files;
	c->max_bytes = max_bytes;
	c->no_demangle = no_demangle;
}

static uint64_t key_hash(const struct image_key *k)
{
	if (k->build_id_len)
		return hash_bytes(0, k->build_id, k->build_id_len);
	return hash_u64(hash_u64(hash_u64(hash_u64(0, k->dev), k->ino), (uint64_t)k->mtime_sec),
			k->mtime_nsec);
}

static bool key_is(const struct image *img, const struct image_key *k)
{
	if (img->build_id_len != k->build_id_len)
		return false;
	if (k->build_id_len)
		return !memcmp(img->build_id, k->build_id, k->build_id_len);
	return img->dev == k->dev && img->ino == k->ino && img->mtime_sec == k->mtime_sec &&
	       img->mtime_nsec == k->mtime_nsec;
}

struct image *imgcache__get(struct imgcache *c, const struct image_key *k)
{
	uint64_t h = key_hash(k), v;
	size_t pos = HTAB_START;
	struct image *img;

	if (k->build_id_len > sizeof(img->build_id))
		return NULL;
	while (htab__next(&c->tab, h, &pos, &v)) {
		img = (struct image *)(uintptr_t)v;
		if (key_is(img, k)) {
			img->refs++;
			return img;
		}
	}
	img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	if (htab__add(&c->tab, h, (uint64_t)(uintptr_t)img)) {
		free(img);
		return NULL;
	}
	if (k->build_id_len)
		memcpy(img->build_id, k->build_id, k->build_id_len);
	img->build_id_len = k->build_id_len;
	img->dev = k->dev;
	img->ino = k->ino;
	img->mtime_sec = k->mtime_sec;
	img->mtime_nsec = k->mtime_nsec;
	img->next = c->all;
	c->all = img;
	img->refs = 1;
	c->nr_images++;
	return img;
}

/* Forget @img (unloaded, held by nobody). */
static void image_drop(struct imgcache *c, struct image *img)
{
	struct image **pp;
	struct image_key k = {
		.build_id = img->build_id, .build_id_len = img->build_id_len, .dev = img->dev,
		.ino = img->ino, .mtime_sec = img->mtime_sec, .mtime_nsec = img->mtime_nsec,
	};

	htab__del(&c->tab, key_hash(&k), (uint64_t)(uintptr_t)img);
	/* O(images), once per image dropped. */
	for (pp = &c->all; *pp && *pp != img; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = img->next;
	c->nr_images--;
	free(img);
}

size_t imgcache__nr_images(const struct imgcache *c)
{
	return c->nr_images;
}

void imgcache__put(struct imgcache *c, struct image *img)
{
	if (!img || --img->refs)
		return;
	if (!img->es)
		image_drop(c, img);
}

static void image_unload(struct imgcache *c, struct image *img)
{
	lru__unlink(&c->loaded, &img->lru);
	elfsym__free(img->es);
	elfsym__free(img->dbg);
	free(img->names);
	img->es = NULL;
	img->dbg = NULL;
	img->names = NULL;
	c->nr_loaded--;
	c->loaded_bytes -= img->bytes;
	img->bytes = 0;
	if (!img->refs)
		image_drop(c, img);
}

void imgcache__free(struct imgcache *c)
{
	struct image *img, *next;

	if (!c)
		return;
	for (img = c->all; img; img = next) {
		next = img->next;
		elfsym__free(img->es);
		elfsym__free(img->dbg);
		free(img->names);
		free(img);
	}
	htab__free(&c->tab);
	demangle_cache__free(&c->demangled);
	strtab__free(&c->names);
	memset(c, 0, sizeof(*c));
}

bool image__matches(const struct image *img, const struct elfsym *es)
{
	const uint8_t *id;
	size_t len;

	id = elfsym__build_id(es, &len);
	return len == img->build_id_len && (!len || !memcmp(id, img->build_id, len));
}

/*
 * Past either cap, drop the least recently used images' symbols; the one
 * just loaded (the head) stays, however big: it is needed now.
 */
static void evict(struct imgcache *c)
{
	while ((c->nr_loaded > c->max_files || c->loaded_bytes > c->max_bytes) &&
	       c->loaded.tail && c->loaded.tail != c->loaded.head)
		image_unload(c, lru_entry(c->loaded.tail, struct image, lru));
}

void imgcache__attach(struct imgcache *c, struct image *img, struct elfsym *es,
		      struct elfsym *dbg)
{
	img->es = es;
	img->dbg = dbg;
	img->bytes = elfsym__mem_bytes(es) + (dbg ? elfsym__mem_bytes(dbg) : 0);
	lru__push_front(&c->loaded, &img->lru);
	c->nr_loaded++;
	c->loaded_bytes += img->bytes;
	evict(c);
}

void imgcache__attach_debug(struct imgcache *c, struct image *img, struct elfsym *dbg)
{
	size_t names = img->names ? elfsym__nr_syms(image__syms(img)) * sizeof(*img->names) : 0;

	/* The names table is by the index of the table in use, which changes now. */
	free(img->names);
	img->names = NULL;
	img->bytes -= names;
	c->loaded_bytes -= names;
	elfsym__free(img->dbg);
	img->dbg = dbg;
	img->bytes += elfsym__mem_bytes(dbg);
	c->loaded_bytes += elfsym__mem_bytes(dbg);
	lru__touch(&c->loaded, &img->lru);
	evict(c);
}

const char *imgcache__name(struct imgcache *c, const char *raw)
{
	uint32_t id;
	int err;

	err = strtab__intern_id(&c->names, raw, strlen(raw), &id);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (c->no_demangle)
		return strtab__str(&c->names, id);
	return demangle_cache__get(&c->demangled, &c->names, id);
}

const char *imgcache__display(struct imgcache *c, const char *name)
{
	/* Plain names (most of the kernel's) are shown as they are, not copied. */
	if (!name || c->no_demangle || !demangle__is_mangled(name))
		return name;
	return imgcache__name(c, name);
}

const char *imgcache__sym_name(struct imgcache *c, struct image *img, const struct elfsym_sym *sym)
{
	const struct elfsym *syms = image__syms(img);
	size_t i = elfsym__sym_index(syms, sym), n = elfsym__nr_syms(syms);
	const char *name;

	/* Without the table (ENOMEM) the name is still made, every time. */
	if (!img->names) {
		img->names = calloc(n, sizeof(*img->names));
		if (img->names) {
			img->bytes += n * sizeof(*img->names);
			c->loaded_bytes += n * sizeof(*img->names);
		}
	}
	if (img->names && img->names[i])
		return img->names[i];
	name = imgcache__name(c, sym->name);
	if (img->names)
		img->names[i] = name;
	return name;
}
