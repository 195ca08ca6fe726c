/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwmaps: the unwinder's sink (unwind/unwinder.h) into the sampler's BPF
 * maps.  Rows go into shards, inner ARRAY maps of BPFSYM_UNW_SHARD_ROWS
 * u64 each, created when first needed, memory-mapped, and put in the outer
 * array `unw_shards`: memory grows with the rows, one shard at a time, and
 * rows are copied with memcpy, not a syscall each.  Tables and process
 * views are map updates.
 */
#ifndef BPFSYM_UNWMAPS_H
#define BPFSYM_UNWMAPS_H

#include <stdint.h>

#include "record/probes.h"
#include "unwind/unwinder.h"

struct unwmaps;

/* A sink over the maps of @fds (borrowed: they outlive it).  NULL + errno. */
struct unwmaps *unwmaps__new(const struct probes_unwind_fds *fds);

/* Unmap and close the shards (the outer map keeps them while it lives).  NULL is a no-op. */
void unwmaps__free(struct unwmaps *m);

/* The sink's callbacks, with @m as their context. */
struct unwind_sink unwmaps__sink(struct unwmaps *m);

/* Bytes of BPF map memory the shards take. */
uint64_t unwmaps__bytes(const struct unwmaps *m);

#endif /* BPFSYM_UNWMAPS_H */
