// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwmaps: the unwinder's tables and views in the sampler's BPF maps.
 * See unwmaps.h.  put_rows runs on the unwinder's worker thread only;
 * shards are created there, so they need no lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/util.h"
#include "record/unwmaps.h"

#define SHARD_BYTES ((size_t)BPFSYM_UNW_SHARD_ROWS * sizeof(uint64_t))

struct unwmaps {
	struct probes_unwind_fds fds;
	uint64_t *shard[BPFSYM_UNW_MAX_SHARDS];	/* mmap of each shard created */
	int shard_fd[BPFSYM_UNW_MAX_SHARDS];
	uint32_t nr_shards;			/* shards [0, nr) exist */
};

struct unwmaps *unwmaps__new(const struct probes_unwind_fds *fds)
{
	struct unwmaps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fds = *fds;
	return m;
}

void unwmaps__free(struct unwmaps *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_shards; i++) {
		munmap(m->shard[i], SHARD_BYTES);
		close(m->shard_fd[i]);
	}
	free(m);
}

uint64_t unwmaps__bytes(const struct unwmaps *m)
{
	return (uint64_t)m->nr_shards * SHARD_BYTES;
}

/* Create shard m->nr_shards and put it in the outer array.  0 or -errno. */
static int add_shard(struct unwmaps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	uint32_t idx = m->nr_shards;
	void *mem;
	int fd, err;

	if (idx >= BPFSYM_UNW_MAX_SHARDS)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unw_shard", sizeof(uint32_t), sizeof(uint64_t),
			    BPFSYM_UNW_SHARD_ROWS, &opts);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, SHARD_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	if (bpf_map_update_elem(m->fds.shards, &idx, &fd, BPF_ANY)) {
		err = -errno;
		munmap(mem, SHARD_BYTES);
		close(fd);
		return err;
	}
	m->shard[idx] = mem;
	m->shard_fd[idx] = fd;
	m->nr_shards++;
	return 0;
}

static int put_rows(void *ctx, uint32_t first, const struct cfi_row *rows, uint32_t nr)
{
	struct unwmaps *m = ctx;
	uint64_t i, end = (uint64_t)first + nr;
	uint32_t shard, slot;
	uint64_t *dst;
	int err;

	if (end > (uint64_t)BPFSYM_UNW_MAX_SHARDS * BPFSYM_UNW_SHARD_ROWS)
		return -ENOSPC;
	while (m->nr_shards * (uint64_t)BPFSYM_UNW_SHARD_ROWS < end) {
		err = add_shard(m);
		if (err) {
			pr_warn("unwind: creating row shard %u failed: %s\n", m->nr_shards,
				strerror(-err));
			return err;
		}
	}
	for (i = first; i < end; i++) {
		shard = (uint32_t)(i >> BPFSYM_UNW_SHARD_SHIFT);
		slot = (uint32_t)(i & (BPFSYM_UNW_SHARD_ROWS - 1));
		dst = &m->shard[shard][slot];
		*dst = (uint64_t)rows[i - first].pc | (uint64_t)rows[i - first].rule << 32;
	}
	return 0;
}

static int put_table(void *ctx, uint32_t id, const struct bpfsym_unw_table *t)
{
	struct unwmaps *m = ctx;

	return bpf_map_update_elem(m->fds.tables, &id, t, BPF_ANY) ? -errno : 0;
}

static int put_proc(void *ctx, uint32_t pid, const struct bpfsym_unw_proc *v)
{
	struct unwmaps *m = ctx;

	return bpf_map_update_elem(m->fds.procs, &pid, v, BPF_ANY) ? -errno : 0;
}

static int del_proc(void *ctx, uint32_t pid)
{
	struct unwmaps *m = ctx;

	return bpf_map_delete_elem(m->fds.procs, &pid) ? -errno : 0;
}

struct unwind_sink unwmaps__sink(struct unwmaps *m)
{
	return (struct unwind_sink){ .ctx = m, .put_rows = put_rows, .put_table = put_table,
				     .put_proc = put_proc, .del_proc = del_proc };
}
