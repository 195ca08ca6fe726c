// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report_windex: the writer's dedupe index and how it forgets (report_windex.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "report/report_windex.h"

/* A table's slot per entry, at a load of at most 1/2. */
#define SLOT_BYTES (2 * sizeof(struct htab_slot))

uint64_t rpt_mod_hash(uint32_t kind, uint32_t runtime, const char *path, uint64_t dev, uint64_t ino,
		      const uint8_t *build_id, uint32_t build_id_len)
{
	uint64_t h = hash_u64(hash_u64(RPT_REC_MODULE, kind), runtime);

	h = hash_bytes(h, path, strlen(path));
	h = hash_u64(h, dev);
	h = hash_u64(h, ino);
	return hash_bytes(h, build_id, build_id_len);
}

static uint64_t wmod_hash(const struct wmod *k)
{
	return rpt_mod_hash(k->kind, k->runtime, k->path, k->dev, k->ino, k->build_id, k->build_id_len);
}

uint64_t wframe_hash(uint32_t kind, uint32_t module, uint64_t key, uint64_t name)
{
	return hash_u64(hash_u64(hash_u64(hash_u64(RPT_REC_FRAME, kind), module), key), name);
}

uint64_t wstack_hash(const uint32_t *ids, uint32_t nr)
{
	uint64_t h = RPT_REC_STACK;
	uint32_t i;

	for (i = 0; i < nr; i++)
		h = hash_u64(h, ids[i]);
	return hash_u64(h, nr);
}

size_t windex__bytes(const struct windex *x)
{
	return x->str_bytes + strtab__nr(&x->strs) * (sizeof(char *) + SLOT_BYTES) +
	       x->nr_mods * (sizeof(*x->mods) + SLOT_BYTES) +
	       x->nr_frames * (sizeof(*x->frames) + SLOT_BYTES) +
	       x->nr_stacks * (sizeof(*x->stacks) + SLOT_BYTES) +
	       x->nr_stack_data * sizeof(*x->stack_data);
}

/* Keep the used modules, in order; their bytes. */
static size_t keep_mods(struct windex *x)
{
	size_t i, n = 0;

	for (i = 0; i < x->nr_mods; i++)
		if (x->mods[i].used)
			x->mods[n++] = x->mods[i];
		else
			free(x->mods[i].path);
	x->nr_mods = n;
	return n * (sizeof(*x->mods) + SLOT_BYTES);
}

/* Keep the used frames, in order; their bytes. */
static size_t keep_frames(struct windex *x)
{
	size_t i, n = 0;

	for (i = 0; i < x->nr_frames; i++)
		if (x->frames[i].used)
			x->frames[n++] = x->frames[i];
	x->nr_frames = n;
	return n * (sizeof(*x->frames) + SLOT_BYTES);
}

/* Keep the used stacks, their frame ids moved down over the dropped ones; their bytes. */
static size_t keep_stacks(struct windex *x)
{
	size_t i, n = 0, data = 0;

	for (i = 0; i < x->nr_stacks; i++) {
		struct wstack s = x->stacks[i];

		if (!s.used)
			continue;
		/* Survivors only move down, in order: memmove over what was dropped. */
		if (s.nr)
			memmove(x->stack_data + data, x->stack_data + s.off, s.nr * sizeof(*x->stack_data));
		s.off = data;
		data += s.nr;
		x->stacks[n++] = s;
	}
	x->nr_stacks = n;
	x->nr_stack_data = data;
	return n * (sizeof(*x->stacks) + SLOT_BYTES) + data * sizeof(*x->stack_data);
}

/* Refill the modules' table from the array, each marked unused.  0 or -ENOMEM (table empty). */
static int refill_mods(struct windex *x)
{
	size_t i;

	htab__free(&x->mod_tab);
	if (x->nr_mods && htab__reserve(&x->mod_tab, x->nr_mods))
		return -ENOMEM;
	for (i = 0; i < x->nr_mods; i++) {
		x->mods[i].used = false;
		htab__add(&x->mod_tab, wmod_hash(&x->mods[i]), i + 1);	/* reserved */
	}
	return 0;
}

/* Refill the frames' table from the array, each marked unused.  0 or -ENOMEM (table empty). */
static int refill_frames(struct windex *x)
{
	size_t i;

	htab__free(&x->frame_tab);
	if (x->nr_frames && htab__reserve(&x->frame_tab, x->nr_frames))
		return -ENOMEM;
	for (i = 0; i < x->nr_frames; i++) {
		struct wframe *f = &x->frames[i];

		f->used = false;
		htab__add(&x->frame_tab, wframe_hash(f->kind, f->module, f->key, f->sym), i + 1);	/* reserved */
	}
	return 0;
}

static int refill_stacks(struct windex *x)
{
	size_t i;

	htab__free(&x->stack_tab);
	if (x->nr_stacks && htab__reserve(&x->stack_tab, x->nr_stacks))
		return -ENOMEM;
	for (i = 0; i < x->nr_stacks; i++) {
		struct wstack *s = &x->stacks[i];

		s->used = false;
		htab__add(&x->stack_tab, wstack_hash(x->stack_data + s->off, s->nr), i + 1);	/* reserved */
	}
	return 0;
}

/* Drop every module, freeing their paths. */
static void drop_mods(struct windex *x)
{
	size_t i;

	for (i = 0; i < x->nr_mods; i++)
		free(x->mods[i].path);
	x->nr_mods = 0;
	htab__free(&x->mod_tab);
}

void windex__forget(struct windex *x, size_t keep_max)
{
	size_t kept, i;

	x->str_base += (uint32_t)strtab__nr(&x->strs);
	strtab__free(&x->strs);

	kept = keep_mods(x);
	kept += keep_frames(x);
	kept += keep_stacks(x);
	/* A working set as large as the cap allows would leave no room: start over. */
	if (kept > keep_max) {
		drop_mods(x);
		x->nr_frames = x->nr_stacks = x->nr_stack_data = 0;
	}
	if (refill_mods(x))
		drop_mods(x);
	if (refill_frames(x))
		x->nr_frames = 0;
	if (refill_stacks(x))
		x->nr_stacks = x->nr_stack_data = 0;
	x->str_bytes = 0;
	for (i = 0; i < x->nr_mods; i++)
		x->str_bytes += strlen(x->mods[i].path) + 1;
	x->forgets++;
}

void windex__free(struct windex *x)
{
	if (!x)
		return;
	strtab__free(&x->strs);
	drop_mods(x);
	free(x->mods);
	free(x->frames);
	htab__free(&x->frame_tab);
	free(x->stack_data);
	free(x->stacks);
	htab__free(&x->stack_tab);
	x->mods = NULL;
	x->frames = NULL;
	x->stack_data = NULL;
	x->stacks = NULL;
	x->cap_mods = x->nr_frames = x->cap_frames = 0;
	x->nr_stack_data = x->cap_stack_data = x->nr_stacks = x->cap_stacks = 0;
	x->str_bytes = 0;
}
