// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwmaps: the unwinder's tables and views in the sampler's BPF maps.
 * See unwmaps.h.  put_rows runs on the unwinder's worker thread only;
 * shards are created there, so they need no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/util.h"
#include "record/unwmaps.h"
#include "symbolize/debugfile.h"
#include "symbolize/fileid.h"

#define SHARD_BYTES ((size_t)BPFSYM_UNW_SHARD_ROWS * sizeof(uint64_t))
#define DEBUG_ROOT "/usr/lib/debug"

struct unwmaps {
	struct probes_unwind_fds fds;
	/*
	 * The mmap of each shard created.  Its fd is closed once the shard is
	 * in the outer array: the mapping and the array keep the map alive,
	 * and a recording near the cap would otherwise hold thousands of fds.
	 */
	uint64_t *shard[BPFSYM_UNW_MAX_SHARDS];
	uint32_t nr_shards;			/* shards [0, nr) exist */
	uint32_t max_shards;			/* what --unwind-mem's rows fill, at most */
	struct unwinder *unw;
	struct proc_table *procs;		/* where files are opened through */
};

struct unwmaps *unwmaps__new(const struct probes_unwind_fds *fds)
{
	struct unwmaps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fds = *fds;
	m->max_shards = BPFSYM_UNW_MAX_SHARDS;
	return m;
}

void unwmaps__free(struct unwmaps *m)
{
	uint32_t i;

	if (!m)
		return;
	unwinder__free(m->unw);	/* first: its worker writes the shards */
	for (i = 0; i < m->nr_shards; i++)
		munmap(m->shard[i], SHARD_BYTES);
	free(m);
}

uint64_t unwmaps__bytes(const struct unwmaps *m)
{
	return (uint64_t)m->nr_shards * SHARD_BYTES;
}

/*
 * Shards created ahead when rows need one more: as many as exist, at most
 * SHARD_GROUP (2 MiB), within max_shards.  Putting a shard in the outer
 * array waits for an RCU grace period (the kernel makes sure no program
 * still sees the old slot): 10-16 ms each here, so one shard at a time
 * made the tables of a machine's running processes (~25 shards) take
 * 0.25 s before sampling could start.  A group goes in with one batch
 * update, one grace period on the kernels that wait once a batch.
 */
#define SHARD_GROUP	8

/* Create shard @idx, mapped, its fd in *@fd.  0 or -errno. */
static int new_shard(struct unwmaps *m, uint32_t idx, int *fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	void *mem;
	int err;

	*fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unw_shard", sizeof(uint32_t), sizeof(uint64_t),
			     BPFSYM_UNW_SHARD_ROWS, &opts);
	if (*fd < 0)
		return -errno;
	mem = mmap(NULL, SHARD_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(*fd);
		return err;
	}
	m->shard[idx] = mem;
	return 0;
}

/*
 * Shards [m->nr_shards, @upto) created and put in the outer array at once
 * (one by one where the kernel has no batch update of it).  0 or -errno:
 * the shards made before the error stay.
 */
static int add_shards(struct unwmaps *m, uint32_t upto)
{
	uint32_t keys[SHARD_GROUP], n = 0, i, done = 0;
	int fds[SHARD_GROUP], err = 0;

	while (m->nr_shards + n < upto && n < SHARD_GROUP) {
		keys[n] = m->nr_shards + n;
		err = new_shard(m, keys[n], &fds[n]);
		if (err)
			break;
		n++;
	}
	if (n) {
		done = n;
		if (bpf_map_update_batch(m->fds.shards, keys, fds, &done, NULL)) {
			/* No batch for this map on this kernel: one at a time. */
			for (done = 0; done < n; done++)
				if (bpf_map_update_elem(m->fds.shards, &keys[done], &fds[done], BPF_ANY))
					break;
			if (done < n)
				err = -errno;
		}
	}
	for (i = 0; i < n; i++) {
		close(fds[i]);
		if (i >= done)
			munmap(m->shard[keys[i]], SHARD_BYTES);
	}
	m->nr_shards += done;
	return err;
}

static int put_rows(void *ctx, uint32_t first, const struct cfi_row *rows, uint32_t nr)
{
	struct unwmaps *m = ctx;
	uint64_t i, end = (uint64_t)first + nr;
	uint32_t shard, slot, want, ahead;
	uint64_t *dst;
	int err;

	if (end > (uint64_t)BPFSYM_UNW_MAX_SHARDS * BPFSYM_UNW_SHARD_ROWS)
		return -ENOSPC;
	while (m->nr_shards * (uint64_t)BPFSYM_UNW_SHARD_ROWS < end) {
		want = (uint32_t)((end + BPFSYM_UNW_SHARD_ROWS - 1) >> BPFSYM_UNW_SHARD_SHIFT);
		ahead = m->nr_shards < SHARD_GROUP ? (m->nr_shards ? m->nr_shards : 1) : SHARD_GROUP;
		if (want < m->nr_shards + ahead)
			want = m->nr_shards + ahead;
		if (want > m->max_shards)
			want = m->max_shards;
		err = want > m->nr_shards ? add_shards(m, want) : -ENOSPC;
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

static int put_file(void *ctx, const struct bpfsym_unw_file *f, uint32_t id, uint32_t gen)
{
	struct unwmaps *m = ctx;
	uint32_t val = BPFSYM_UNW_FILE_VAL(id, gen);

	return bpf_map_update_elem(m->fds.files, f, &val, BPF_ANY) ? -errno : 0;
}

static int del_file(void *ctx, const struct bpfsym_unw_file *f)
{
	struct unwmaps *m = ctx;

	return bpf_map_delete_elem(m->fds.files, f) && errno != ENOENT ? -errno : 0;
}

struct unwind_sink unwmaps__sink(struct unwmaps *m)
{
	return (struct unwind_sink){ .ctx = m, .put_rows = put_rows, .put_table = put_table,
				     .put_proc = put_proc, .del_proc = del_proc, .put_file = put_file,
				     .del_file = del_file };
}

/*
 * The unwinder opens a mapped file as the symbolizer does: through the
 * process's view; and its debug file by build-id under the host's debug
 * root, where Debian's -dbgsym packages put them.
 */
static int open_file(void *ctx, uint32_t pid, uint64_t pstart, const struct mapping *mp,
		     int *debug_fd)
{
	uint8_t id[FILEID_BUILD_ID_MAX];
	struct unwmaps *m = ctx;
	char path[PATH_MAX];
	struct stat st;
	size_t len = 0;
	int fd;

	(void)pstart;
	*debug_fd = -1;
	fd = fileid__open_mapped("/proc", m->procs, pid, mp);
	if (fd < 0 || fileid__build_id(fd, id, &len) || len < 2 ||
	    !debugfile__build_id_path(path, sizeof(path), DEBUG_ROOT, id, len))
		return fd;
	*debug_fd = fileid__open_in_root(AT_FDCWD, path, &st);
	if (*debug_fd < 0)
		*debug_fd = -1;
	return fd;
}

struct unwmaps *unwmaps__start(struct probes *bpf, struct proc_table *procs, uint64_t max_bytes)
{
	struct probes_unwind_fds fds;
	struct unwmaps *m;
	int err;

	probes__unwind_fds(bpf, &fds);
	m = unwmaps__new(&fds);
	if (!m)
		return NULL;
	m->procs = procs;
	if (max_bytes && (max_bytes + SHARD_BYTES - 1) / SHARD_BYTES < BPFSYM_UNW_MAX_SHARDS)
		m->max_shards = (uint32_t)((max_bytes + SHARD_BYTES - 1) / SHARD_BYTES);
	m->unw = unwinder__new(&(struct unwind_opts){
		.sink = unwmaps__sink(m), .open = open_file, .open_ctx = m, .max_bytes = max_bytes,
	});
	if (!m->unw) {
		err = errno;
		unwmaps__free(m);
		errno = err;
		return NULL;
	}
	return m;
}

struct unwinder *unwmaps__unwinder(const struct unwmaps *m)
{
	return m->unw;
}

void unwmaps__first_views(struct unwmaps *m, const uint32_t *pids, size_t n, int wait_ms)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < n; i++) {
		p = proc_table__find_pid(m->procs, pids[i]);
		if (p)
			unwinder__sync_proc(m->unw, p);
	}
	if (unwinder__wait_idle(m->unw, wait_ms))
		pr_debug("unwind: tables still building after %d ms; recording starts\n", wait_ms);
}

void unwmaps__log_views(struct unwmaps *m, uint64_t wanted)
{
	struct unwind_stats st;

	unwinder__stats(m->unw, &st);
	pr_debug("bpfsym: unwinder: %llu views written, %llu mapping changes wanted one "
		 "(the tracker's fresh views took the rest)\n", (unsigned long long)st.views,
		 (unsigned long long)wanted);
}

void unwmaps__fill_end(struct unwmaps *m, struct rpt_header *h)
{
	struct unwind_stats st;

	unwinder__stats(m->unw, &st);
	h->unw = (struct rpt_unwind){
		.tables = st.tables, .ready = st.tables_ready, .none = st.tables_none,
		.failed = st.tables_failed, .rows = st.rows, .bytes = unwmaps__bytes(m),
		.build_ns = st.build_ns, .max_build_ns = st.max_build_ns,
		.over_mem = st.over_mem, .over_rows = st.over_rows, .over_tables = st.over_tables,
		.over_procs = st.over_procs, .over_ranges = st.over_ranges,
		.pending = st.tables - st.tables_ready - st.tables_none - st.tables_failed -
			   st.over_rows - st.over_mem,
	};
}
