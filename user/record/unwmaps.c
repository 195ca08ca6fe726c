// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwmaps: the unwinder's tables and views in the sampler's BPF maps.
 * See unwmaps.h.  put_rows runs on the unwinder's worker thread only;
 * shards are created there, so they need no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/offload.h"
#include "base/privdrop.h"
#include "base/util.h"
#include "record/unwmaps.h"
#include "symbolize/debugfile.h"
#include "symbolize/fileid.h"

#define SHARD_BYTES ((size_t)BPFSYM_UNW_SHARD_ROWS * sizeof(uint64_t))
#define DEBUG_ROOT "/usr/lib/debug"
/* As long as the symbolizer waits for a file (symbolizer.c): then it goes on without its table. */
#define OPEN_WAIT_NS (100 * 1000000ull)
/* Opens not answered in time, kept to take if they end: the pool has fewer workers. */
#define MAX_WAITING 16
/* An open whose worker used no CPU this long waits on its file system: given up. */
#define OPEN_STALL_NS (5ull * 1000000000ull)

/* A file opened for the unwinder off the recorder's thread (base/offload.h). */
struct open_job {
	struct offload_job job;	/* first */
	struct mapping mp;	/* mp.path: path */
	char *path;
	uint32_t pid;
	uint32_t peers[FILEID_PEERS_MAX];	/* its namespace's processes, when pid is gone */
	size_t nr_peers;
	int fd, debug_fd;	/* what it opened, or -1 (fd: -errno) */
};

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
	struct offload *pool;			/* where they are opened */
	struct offload *builds;			/* where tables are built (unwbuild.c) */
	struct open_job *waiting[MAX_WAITING];	/* opens that did not answer in time */
	struct offload_watch watch[MAX_WAITING];	/* ...their workers' clocks */
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
	offload__free(m->builds);	/* a build given up frees itself */
	for (i = 0; i < MAX_WAITING; i++)
		if (m->waiting[i])
			offload__abandon(m->pool, &m->waiting[i]->job);
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

static void open_job_free(struct open_job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	if (j->debug_fd >= 0)
		close(j->debug_fd);
	free(j->path);
	free(j);
}

static void open_job_drop(struct offload_job *oj)
{
	open_job_free((struct open_job *)oj);
}

/*
 * The unwinder opens a mapped file as the symbolizer does: through the
 * process's view; and its debug file by build-id under the host's debug
 * root, where Debian's -dbgsym packages put them.  On a worker.
 */
static void open_job_run(struct offload_job *oj)
{
	struct open_job *j = (struct open_job *)oj;
	uint8_t id[FILEID_BUILD_ID_MAX];
	char path[PATH_MAX];
	struct stat st;
	size_t len = 0;

	j->fd = fileid__open_peers("/proc", j->peers, j->nr_peers, j->pid, &j->mp);
	if (j->fd < 0 || fileid__build_id(j->fd, id, &len) || len < 2 ||
	    !debugfile__build_id_path(path, sizeof(path), DEBUG_ROOT, id, len))
		return;
	j->debug_fd = fileid__open_in_root(AT_FDCWD, path, &st);
	if (j->debug_fd < 0)
		j->debug_fd = -1;
}

/* A job opening @mp's file as process @pid sees it.  NULL on ENOMEM. */
static struct open_job *open_job_new(const struct unwmaps *m, uint32_t pid,
				     const struct mapping *mp)
{
	struct open_job *j = calloc(1, sizeof(*j));
	char dir[32];
	struct stat st;

	if (!j)
		return NULL;
	j->job.run = open_job_run;
	j->job.drop = open_job_drop;
	j->fd = j->debug_fd = -1;
	j->pid = pid;
	j->mp = *mp;
	j->path = mp->path ? strdup(mp->path) : NULL;
	if (mp->path && !j->path) {
		free(j);
		return NULL;
	}
	j->mp.path = j->path;
	/* The model is this thread's: its processes now, in case @pid is gone. */
	snprintf(dir, sizeof(dir), "/proc/%u", pid);
	if (stat(dir, &st))
		j->nr_peers = fileid__ns_peers(m->procs, pid, mp->mnt_ns, j->peers, FILEID_PEERS_MAX);
	return j;
}

/* What ended job @j opened (its fd, its debug fd in *@debug_fd), @j freed. */
static int open_job_take(struct open_job *j, int *debug_fd)
{
	int fd = j->fd;

	*debug_fd = j->debug_fd;
	j->fd = j->debug_fd = -1;
	open_job_free(j);
	return fd;
}

/* The slot of the open of @mp's file that did not answer, or -1. */
static int waiting_slot(const struct unwmaps *m, const struct mapping *mp)
{
	const struct mapping *w;
	int i;

	for (i = 0; i < MAX_WAITING; i++) {
		w = m->waiting[i] ? &m->waiting[i]->mp : NULL;
		if (w && w->dev == mp->dev && w->ino == mp->ino && w->mtime_sec == mp->mtime_sec &&
		    w->mtime_nsec == mp->mtime_nsec)
			return i;
	}
	return -1;
}

/* Whether waiting open @i's worker has used no CPU for OPEN_STALL_NS: hung, not slow. */
static bool open_stalled(struct unwmaps *m, int i)
{
	return offload__stalled(m->pool, &m->waiting[i]->job, &m->watch[i], clock_ns(CLOCK_MONOTONIC),
				OPEN_STALL_NS);
}

/*
 * Whether a job still waiting on a file of @mp's file system has not
 * ended: then another file there is not asked (one hostile mount holds
 * one worker of the pool, not all of them): -EINPROGRESS while that job
 * works or may, -ETIMEDOUT once it stalled.  One that ended is ours again
 * once waited for: freed (its file is opened anew if asked for again).
 * 0: none.
 */
static int fs_hung(struct unwmaps *m, const struct mapping *mp)
{
	for (int i = 0; i < MAX_WAITING; i++) {
		if (!m->waiting[i] || m->waiting[i]->mp.dev != mp->dev)
			continue;
		if (offload__wait(m->pool, &m->waiting[i]->job, 0))
			return open_stalled(m, i) ? -ETIMEDOUT : -EINPROGRESS;
		open_job_free(m->waiting[i]);
		m->waiting[i] = NULL;
	}
	return 0;
}

/*
 * The unwinder's open callback, on the recorder's thread: the open runs
 * in a job, waited for OPEN_WAIT_NS.  One that did not end by then is
 * kept (one per file) and the unwinder asks again (-EINPROGRESS) until
 * it ends (its fd taken) or its worker stalls (-ETIMEDOUT: a file system
 * that does not answer; the file gets no table).  A slow file
 * so still gets its table, a little late.
 */
static int open_file(void *ctx, uint32_t pid, uint64_t pstart, const struct mapping *mp,
		     int *debug_fd)
{
	struct unwmaps *m = ctx;
	struct open_job *j;
	int i, err;

	(void)pstart;
	*debug_fd = -1;
	i = waiting_slot(m, mp);
	if (i >= 0) {
		j = m->waiting[i];
		if (offload__wait(m->pool, &j->job, 0)) {
			return open_stalled(m, i) ? -ETIMEDOUT : -EINPROGRESS;
		}
		m->waiting[i] = NULL;
		return open_job_take(j, debug_fd);
	}
	err = fs_hung(m, mp);
	if (err)
		return err;
	j = open_job_new(m, pid, mp);
	if (!j)
		return -ENOMEM;
	err = offload__run(m->pool, &j->job, OPEN_WAIT_NS);
	if (!err)
		return open_job_take(j, debug_fd);
	if (err != -ETIMEDOUT) {
		open_job_free(j);
		return err;
	}
	for (i = 0; i < MAX_WAITING && m->waiting[i]; i++)
		;
	if (i == MAX_WAITING) {
		offload__abandon(m->pool, &j->job);
		return err;
	}
	m->waiting[i] = j;
	m->watch[i] = (struct offload_watch){ 0 };
	open_stalled(m, i);	/* its clock now */
	pr_debug("unwind: '%s': pid %u: no answer in %llu ms: asked again later\n",
		 mp->path ? mp->path : "?", pid, OPEN_WAIT_NS / 1000000ull);
	return -EINPROGRESS;
}

struct unwmaps *unwmaps__start(struct probes *bpf, struct proc_table *procs, uint64_t max_bytes,
			       struct offload *pool)
{
	struct probes_unwind_fds fds;
	struct unwmaps *m;
	int err;

	probes__unwind_fds(bpf, &fds);
	m = unwmaps__new(&fds);
	if (!m)
		return NULL;
	m->procs = procs;
	m->pool = pool;
	/*
	 * Its own pool: a build is CPU work of up to a fraction of a second,
	 * waited for by the unwinder's worker alone, so no wait budget (more
	 * than a second's worth per second); its threads read fds opened for them
	 * and need no capability.
	 */
	m->builds = offload__new(&(struct offload_opts){
		.max_threads = 4, .budget_ns = 2000000000ull, .thread_start = privdrop__builder,
	});
	if (!m->builds) {
		unwmaps__free(m);
		errno = ENOMEM;
		return NULL;
	}
	if (max_bytes && (max_bytes + SHARD_BYTES - 1) / SHARD_BYTES < BPFSYM_UNW_MAX_SHARDS)
		m->max_shards = (uint32_t)((max_bytes + SHARD_BYTES - 1) / SHARD_BYTES);
	m->unw = unwinder__new(&(struct unwind_opts){
		.sink = unwmaps__sink(m), .open = open_file, .open_ctx = m, .max_bytes = max_bytes,
		.thread_start = privdrop__table_worker, .pool = m->builds,
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
