/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_windex: the writer's dedupe index, with a cap.  It finds the id a
 * string, module, frame or stack already has in the file, so that each is
 * written once while the index remembers it.
 *
 * A recorder that runs for weeks cannot remember every stack it wrote:
 * under process churn nearly every sample of a short program's start-up is
 * a new stack.  So when the index passes its cap it forgets, with a second
 * chance: the modules, frames and stacks found again since the last time
 * (the working set) keep their ids, everything else (and every string) is
 * dropped.  Ids keep counting in the file, so an id handed out before
 * stays valid; what was forgotten and comes back is written again under a
 * new id, and the writer puts a FORGET record at that point so the reader
 * knows the file's ids are no longer one per identity.
 *
 * Internal to report/ (report_write.c).
 */
#ifndef BPFSYM_REPORT_WINDEX_H
#define BPFSYM_REPORT_WINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/strtab.h"
#include "report/report_fmt.h"

struct wmod {
	char *path;		/* owned */
	uint32_t kind, build_id_len;
	uint32_t runtime;	/* enum rpt_runtime: part of a RPT_MOD_SOURCE's identity */
	uint64_t dev, ino;
	uint8_t build_id[RPT_BUILD_ID_MAX];
	uint32_t id;		/* the file's module id */
	bool used;		/* found again since it was added or last kept */
};

struct wframe {
	uint64_t key;		/* offset, or addr when module is RPT_NONE */
	uint32_t kind, module;	/* module: a file module id */
	/*
	 * RPT_FRAME_INTERP: its name's string id + 1 (0: unnamed), part of
	 * its identity: two functions on one line of one file (a listcomp
	 * and its caller) are two frames.  0 for other kinds.
	 */
	uint32_t sym;
	uint32_t id;		/* the file's frame id */
	bool used;		/* found again since it was added or last kept */
	bool waiting;		/* written unnamed: its file had not answered yet */
};

struct wstack {
	size_t off;		/* in stack_data */
	uint32_t nr;
	uint32_t id;		/* the file's stack id */
	bool used;
};

/*
 * Each table maps a hash of the key to an index + 1 into the array beside
 * it.  Strings are dropped whole at a forget, so their file id is a base
 * plus their index; modules, frames and stacks keep survivors, so each
 * carries its id.
 */
struct windex {
	struct strtab strs;	/* strtab id n is file string id str_base + n */
	uint32_t str_base;
	size_t str_bytes;	/* bytes of the strings in strs and of the modules' paths */

	struct wmod *mods;
	size_t nr_mods, cap_mods;
	struct htab mod_tab;

	struct wframe *frames;
	size_t nr_frames, cap_frames;
	struct htab frame_tab;

	uint32_t *stack_data;
	size_t nr_stack_data, cap_stack_data;
	struct wstack *stacks;
	size_t nr_stacks, cap_stacks;
	struct htab stack_tab;

	uint64_t forgets;	/* times the index forgot */
};

/*
 * The hashes of the writer's identities (docs/FORMAT.md: what MODULE,
 * FRAME and STACK records are deduplicated on), which the merge
 * (report_merge.c) interns by too.
 */
uint64_t rpt_mod_hash(uint32_t kind, uint32_t runtime, const char *path, uint64_t dev, uint64_t ino,
		      const uint8_t *build_id, uint32_t build_id_len);
/* @name: what tells interpreter frames of one line apart (0 for other kinds). */
uint64_t wframe_hash(uint32_t kind, uint32_t module, uint64_t key, uint64_t name);
uint64_t wstack_hash(const uint32_t *ids, uint32_t nr);

/*
 * About the bytes the index holds for what it remembers: entries, string
 * bytes and their hash slots, not the slack of arrays grown by doubling
 * (which stays under twice that).
 */
size_t windex__bytes(const struct windex *x);

/*
 * Forget: drop every string, and the modules, frames and stacks not found
 * again since the last forget; keep the others, marked unused, as
 * long as they take at most @keep_max bytes (else drop them too, so a
 * forget always frees room).  Cannot fail: without memory to rebuild a
 * table, that table is dropped whole.
 */
void windex__forget(struct windex *x, size_t keep_max);

/* Free what @x holds; it is then an empty index (its id bases kept).  NULL is a no-op. */
void windex__free(struct windex *x);

#endif /* BPFSYM_REPORT_WINDEX_H */
