// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwinder: table ids by file identity, a build queue served by one
 * worker thread, row space handed out first-fit from what evicted tables
 * gave back, process views written from the mapping model.  See
 * unwinder.h.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/lru.h"
#include "base/util.h"
#include "unwind/unwinder.h"
#include "unwind/unwinder_int.h"

static bool key_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct file_key *a = &((const struct unwinder *)ctx)->tabs[val - 1].key, *b = key;

	/* Field by field: the struct's padding is not part of the identity. */
	return a->dev == b->dev && a->ino == b->ino && a->mtime_sec == b->mtime_sec &&
	       a->mtime_nsec == b->mtime_nsec;
}

/*
 * The page index of @t (include/bpfsym.h, BPFSYM_UNW_IDX_SHIFT), entries
 * as rows (pc: lo, rule: hi) so the sink stores them like rows.  NULL +
 * *@n 0 when out of memory.
 */
static struct cfi_row *page_index(const struct cfi_table *t, uint32_t *n)
{
	uint32_t base = t->rows[0].pc, last = t->rows[t->nr - 1].pc, j, r = 0, lo;
	struct cfi_row *idx;

	*n = ((last - base) >> BPFSYM_UNW_IDX_SHIFT) + 1;
	idx = malloc((size_t)*n * sizeof(*idx));
	if (!idx) {
		*n = 0;
		return NULL;
	}
	for (j = 0; j < *n; j++) {
		/* lo: the row in effect at the page's start; hi: the last that starts in the page. */
		while (r + 1 < t->nr && t->rows[r + 1].pc <= base + (j << BPFSYM_UNW_IDX_SHIFT))
			r++;
		lo = r;
		while (r + 1 < t->nr &&
		       t->rows[r + 1].pc - base < ((uint64_t)j + 1) << BPFSYM_UNW_IDX_SHIFT)
			r++;
		idx[j] = (struct cfi_row){ .pc = lo, .rule = r };
		r = lo;
	}
	return idx;
}

/*
 * Publish @t as table @j->id: rows and their page index first, then the
 * table entry that makes the walk use them.  Called without the lock;
 * takes it for the counters.
 */
static void publish(struct unwinder *u, const struct job *j, const struct cfi_table *t)
{
	struct bpfsym_unw_table e = { .state = BPFSYM_UNW_NONE };
	struct cfi_row *idx = NULL;
	uint32_t nidx = 0;
	int64_t first = -1;
	int err;

	if (t && t->nr) {
		idx = page_index(t, &nidx);
		if (!idx)
			goto sink_err_nomem;
		first = take_rows(u, (uint64_t)t->nr + nidx);
		if (first < 0) {
			pr_debug("unwind: %s: %zu rows and %u index entries do not fit\n", j->name,
				 t->nr, nidx);
			free(idx);
			/* Stays pending (its frames end the walk as "no table"), evictable. */
			pthread_mutex_lock(&u->lock);
			u->tabs[j->id].built = true;
			tab_maybe_idle(u, j->id);
			pthread_mutex_unlock(&u->lock);
			return;
		}
		err = u->o.sink.put_rows(u->o.sink.ctx, (uint32_t)first, t->rows, (uint32_t)t->nr);
		err = err ?: u->o.sink.put_rows(u->o.sink.ctx, (uint32_t)(first + t->nr), idx, nidx);
		free(idx);
		if (err)
			goto sink_err;
		e = (struct bpfsym_unw_table){
			.first = (uint32_t)first, .nr = (uint32_t)t->nr, .state = BPFSYM_UNW_READY,
			.base = t->rows[0].pc, .idx_first = (uint32_t)(first + t->nr), .idx_nr = nidx,
		};
	}
	pthread_mutex_lock(&u->lock);
	e.gen = u->tabs[j->id].gen;
	pthread_mutex_unlock(&u->lock);
	err = u->o.sink.put_table(u->o.sink.ctx, j->id, &e);
	if (err)
		goto sink_err;
	pthread_mutex_lock(&u->lock);
	if (e.state == BPFSYM_UNW_READY) {
		u->st.tables_ready++;
		u->st.rows += e.nr;
		u->st.index_entries += e.idx_nr;
		u->st.rows_now += (uint64_t)e.nr + e.idx_nr;
		u->tabs[j->id].first = (uint64_t)first;
		u->tabs[j->id].n = (uint64_t)e.nr + e.idx_nr;
	} else if (t) {
		u->st.tables_none++;	/* (a failed build was counted as such) */
	}
	u->tabs[j->id].built = true;
	tab_maybe_idle(u, j->id);
	pthread_mutex_unlock(&u->lock);
	return;
sink_err_nomem:
	err = -ENOMEM;
sink_err:
	pr_warn("unwind: %s: writing its table failed: %s\n", j->name, strerror(-err));
	pthread_mutex_lock(&u->lock);
	u->st.sink_errors++;
	if (first >= 0)
		rows_free(u, (uint64_t)first, (uint64_t)t->nr + nidx);
	u->tabs[j->id].built = true;
	tab_maybe_idle(u, j->id);
	pthread_mutex_unlock(&u->lock);
}

/* What a build made, counted and published (@t may be NULL; freed here). */
static void unw_finish(struct unwinder *u, const struct job *j, int ret, struct cfi_table *t,
		       const char *err, uint64_t dt)
{
	pthread_mutex_lock(&u->lock);
	u->st.build_ns += dt;
	if (dt > u->st.max_build_ns)
		u->st.max_build_ns = dt;
	if (ret == -E2BIG)
		u->st.over_rows++;
	else if (ret)
		u->st.tables_failed++;
	pthread_mutex_unlock(&u->lock);
	if (ret) {
		pr_debug("unwind: %s: no table: %s\n", j->name, err[0] ? err : strerror(-ret));
		cfi_table__free(t);
		/* No rows to trust: the frame-pointer rule there, not a stack cut short. */
		publish(u, j, NULL);
		return;
	}
	pr_debug("unwind: %s: %zu rows in %.1f ms (table %u)\n", j->name, t->nr, dt / 1e6, j->id);
	publish(u, j, t);
	cfi_table__free(t);
}

/* Build and publish one queued file; closes its fd. */
static void run_job(struct unwinder *u, struct job *j)
{
	struct cfi_table *t = NULL;
	char err[160] = "";
	uint64_t dt;
	int ret;

	ret = unw_build(u, j, &t, err, sizeof(err), &dt);
	if (ret == -EINPROGRESS) {
		pr_debug("unwind: %s: %s\n", j->name, err);
		return;		/* finished by late_poll() */
	}
	unw_finish(u, j, ret, t, err, dt);
}

/* Late builds that ended: finished as run_job would. */
static void late_poll(struct unwinder *u)
{
	struct cfi_table *t;
	char err[160];
	struct job j;
	uint64_t dt;
	int ret;

	while ((ret = unw_late_take(u, &j, &t, err, sizeof(err), &dt)) != -EINPROGRESS) {
		pr_debug("unwind: %s: its late build ended\n", j.name);
		unw_finish(u, &j, ret, t, err, dt);
	}
}

/* CLOCK_REALTIME @ms from now: a pthread_cond_timedwait() deadline. */
static struct timespec deadline_in(long ms)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	return dl;
}

static void *worker(void *arg)
{
	struct unwinder *u = arg;
	struct timespec dl;
	struct job *j;

	if (u->o.thread_start)
		u->o.thread_start();
	pthread_mutex_lock(&u->lock);
	for (;;) {
		/* Late builds: looked at before each job, and every 100 ms while the queue is empty. */
		if (u->nr_late) {
			pthread_mutex_unlock(&u->lock);
			late_poll(u);
			pthread_mutex_lock(&u->lock);
		}
		if (u->stop)
			break;
		if (!u->head) {
			if (u->nr_late) {
				dl = deadline_in(100);
				pthread_cond_timedwait(&u->wake, &u->lock, &dl);
			} else {
				pthread_cond_wait(&u->wake, &u->lock);
			}
			continue;
		}
		j = u->head;
		u->head = j->next;
		if (!u->head)
			u->tail = &u->head;
		u->st.queued--;
		u->busy = true;
		pthread_mutex_unlock(&u->lock);
		run_job(u, j);
		free(j);
		pthread_mutex_lock(&u->lock);
		u->busy = false;
		if (!u->head) {
			pthread_cond_broadcast(&u->idle);
			/*
			 * A build's scratch (MiBs for a large file) was freed
			 * in this thread's arena, which glibc keeps: give it
			 * back once the queue is empty, or the recorder's RSS
			 * ratchets up with the largest build so far.
			 */
			pthread_mutex_unlock(&u->lock);
			malloc_trim(0);
			pthread_mutex_lock(&u->lock);
		}
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

struct unwinder *unwinder__new(const struct unwind_opts *o)
{
	struct unwinder *u;
	int err;

	if (!o || !o->sink.put_rows || !o->sink.put_table || !o->sink.put_proc ||
	    !o->sink.del_proc || !o->open) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->o = *o;
	if (!u->o.max_bytes)
		u->o.max_bytes = UNWIND_DEFAULT_MAX_BYTES;
	if (!u->o.max_tables || u->o.max_tables > BPFSYM_UNW_MAX_TABLES)
		u->o.max_tables = BPFSYM_UNW_MAX_TABLES;
	if (!u->o.max_procs)
		u->o.max_procs = UNWIND_DEFAULT_MAX_PROCS;
	u->max_rows = u->o.max_bytes / sizeof(struct cfi_row);
	if (u->max_rows > (uint64_t)BPFSYM_UNW_MAX_SHARDS * BPFSYM_UNW_SHARD_ROWS)
		u->max_rows = (uint64_t)BPFSYM_UNW_MAX_SHARDS * BPFSYM_UNW_SHARD_ROWS;
	u->max_idle_rows = u->o.max_idle_bytes ? u->o.max_idle_bytes / sizeof(struct cfi_row) :
						 u->max_rows;
	if (!u->o.idle_ttl_ms)
		u->o.idle_ttl_ms = UNWIND_DEFAULT_IDLE_TTL_MS;
	u->tabs = calloc(u->o.max_tables, sizeof(*u->tabs));
	u->free_ids = calloc(u->o.max_tables, sizeof(*u->free_ids));
	if (!u->tabs || !u->free_ids) {
		free(u->tabs);
		free(u->free_ids);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->tail = &u->head;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	pthread_cond_init(&u->idle, NULL);
	if (!u->o.sync) {
		err = pthread_create(&u->thread, NULL, worker, u);
		if (err) {
			free(u->tabs);
			free(u->free_ids);
			free(u);
			errno = err;
			return NULL;
		}
		u->started = true;
	}
	return u;
}

static void procs_free(struct unwinder *u)
{
	size_t pos;
	uint64_t v;

	for (pos = 0; u->procs.slots && pos <= u->procs.mask; pos++) {
		v = u->procs.slots[pos].val;
		if (v)
			free((struct pview *)(uintptr_t)v);
	}
	htab__free(&u->procs);
}

void unwinder__free(struct unwinder *u)
{
	struct job *j;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	/* Atomic: a build being waited for looks at it without the lock (unwbuild.c). */
	__atomic_store_n(&u->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&u->wake);
	pthread_mutex_unlock(&u->lock);
	if (u->started)
		pthread_join(u->thread, NULL);
	while ((j = u->head)) {
		u->head = j->next;
		if (j->fd >= 0)
			close(j->fd);
		if (j->debug_fd >= 0)
			close(j->debug_fd);
		free(j);
	}
	unw_opens_free(u);
	unw_late_free(u);
	procs_free(u);
	htab__free(&u->ids);
	free(u->tabs);
	free(u->free_ids);
	free(u->holes);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->idle);
	free(u);
}

int unw_enqueue(struct unwinder *u, uint32_t id, int fd, int debug_fd, const char *name)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		if (fd >= 0)
			close(fd);
		if (debug_fd >= 0)
			close(debug_fd);
		return -ENOMEM;
	}
	j->id = id;
	j->fd = fd;
	j->debug_fd = debug_fd;
	snprintf(j->name, sizeof(j->name), "%s", name ? name : "?");
	if (u->o.sync) {
		run_job(u, j);
		free(j);
		return 0;
	}
	pthread_mutex_lock(&u->lock);
	unw_queue_append(u, j);
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

int unwinder__poll_opens(struct unwinder *u)
{
	char name[NAME_LEN];
	uint32_t pos = 0, id;
	int fd, debug_fd;

	while (!unw_open_next(u, &pos, &id, &fd, &debug_fd, name, sizeof(name)))
		unw_enqueue(u, id, fd, debug_fd, name);
	return (int)u->nr_opens;
}

/* Tell the BPF side file @k's table id (the kernel's dev_t: major << 20 | minor). */
static void publish_file(struct unwinder *u, const struct file_key *k, uint32_t id)
{
	struct bpfsym_unw_file f = {
		.dev = (uint64_t)major(k->dev) << 20 | minor(k->dev),
		.ino = k->ino, .mtime_sec = k->mtime_sec, .mtime_nsec = k->mtime_nsec,
	};

	if (u->o.sink.put_file && u->o.sink.put_file(u->o.sink.ctx, &f, id, u->tabs[id].gen)) {
		pthread_mutex_lock(&u->lock);
		u->st.sink_errors++;
		pthread_mutex_unlock(&u->lock);
	}
}

/*
 * The table id of the file @m maps (first sight: opened and queued),
 * referenced once more for the view being written, or
 * BPFSYM_UNW_NO_TABLE.  A file that cannot be opened gets no id, so the
 * next process mapping it tries again.
 */
static uint32_t file_table(struct unwinder *u, const struct proc *p, const struct mapping *m)
{
	struct file_key k = { m->dev, m->ino, m->mtime_sec, m->mtime_nsec };
	uint64_t h = key_hash(&k), v;
	int fd, debug_fd = -1;
	uint32_t id;

	pthread_mutex_lock(&u->lock);
	v = htab__find(&u->ids, h, key_eq, u, &k);
	if (v)
		tab_ref(u, (uint32_t)(v - 1));
	pthread_mutex_unlock(&u->lock);
	if (v)
		return (uint32_t)(v - 1);
	fd = u->o.open(u->o.open_ctx, proc__pid(p), proc__pstart(p), m, &debug_fd);
	if (fd < 0 && fd != -EINPROGRESS) {
		pr_debug("unwind: %s: cannot open it: %s\n", m->path ? m->path : "?", strerror(-fd));
		return BPFSYM_UNW_NO_TABLE;
	}
	pthread_mutex_lock(&u->lock);
	id = new_id(u);
	if (id != BPFSYM_UNW_NO_TABLE && htab__add(&u->ids, h, (uint64_t)id + 1)) {
		u->tabs[id].used = false;
		u->free_ids[u->nr_free_ids++] = id;
		id = BPFSYM_UNW_NO_TABLE;
	}
	if (id != BPFSYM_UNW_NO_TABLE) {
		u->tabs[id].key = k;
		tab_ref(u, id);
	}
	pthread_mutex_unlock(&u->lock);
	if (id == BPFSYM_UNW_NO_TABLE) {
		if (fd >= 0)
			close(fd);
		if (debug_fd >= 0)
			close(debug_fd);
		return id;
	}
	publish_file(u, &k, id);
	/* Under way: asked again (unwopen.c); meanwhile the view names a pending table. */
	if (fd == -EINPROGRESS) {
		if (unw_open_later(u, id, proc__pid(p), proc__pstart(p), m))
			u->opens_failed++;
		return id;
	}
	/* On failure the id stays, never built: the view names a pending table. */
	unw_enqueue(u, id, fd, debug_fd, m->path);
	return id;
}

static uint32_t vdso_table(struct unwinder *u)
{
	uint32_t id;

	pthread_mutex_lock(&u->lock);
	if (u->vdso_id) {
		tab_ref(u, u->vdso_id - 1);
		pthread_mutex_unlock(&u->lock);
		return u->vdso_id - 1;
	}
	id = new_id(u);
	if (id != BPFSYM_UNW_NO_TABLE) {
		u->tabs[id].pinned = true;
		tab_ref(u, id);
	}
	pthread_mutex_unlock(&u->lock);
	if (id == BPFSYM_UNW_NO_TABLE)
		return id;
	u->vdso_id = id + 1;
	publish_file(u, &(struct file_key){ 0 }, id);	/* the tracker's key for the vdso */
	unw_enqueue(u, id, -1, -1, "[vdso]");
	return id;
}

/* The table for mapping @m, BPFSYM_UNW_NO_TABLE for code without one. */
static uint32_t mapping_table(struct unwinder *u, const struct proc *p, const struct mapping *m)
{
	switch (m->kind) {
	case MAPPING_FILE:
		return file_table(u, p, m);
	case MAPPING_SPECIAL:
		return m->path && !strcmp(m->path, "[vdso]") ? vdso_table(u) : BPFSYM_UNW_NO_TABLE;
	default:
		return BPFSYM_UNW_NO_TABLE;
	}
}

static bool pview_eq(const void *ctx, const void *key, uint64_t val)
{
	(void)ctx;
	return ((const struct pview *)(uintptr_t)val)->pid == *(const uint32_t *)key;
}

static struct pview *pview_find(struct unwinder *u, uint32_t pid)
{
	return (struct pview *)(uintptr_t)htab__find(&u->procs, hash_fin(pid), pview_eq, NULL, &pid);
}

/* The ids @u->view names (its ranges with a table), in u->view_ids; their count. */
static uint32_t view_fill(struct unwinder *u, const struct proc *p)
{
	struct bpfsym_unw_proc *v = &u->view;
	const struct mapping *m;
	size_t i, n = proc__nr_maps(p);
	uint32_t nids = 0, id;

	v->nr = 0;
	for (i = 0; i < n; i++) {
		m = proc__map_at(p, i);
		if (!(m->prot & PROT_EXEC))
			continue;
		if (v->nr == BPFSYM_UNW_PROC_RANGES) {
			pthread_mutex_lock(&u->lock);
			u->st.over_ranges++;
			pthread_mutex_unlock(&u->lock);
			break;
		}
		id = mapping_table(u, p, m);
		v->r[v->nr] = (struct bpfsym_unw_range){
			.start = m->start,
			.len = m->end - m->start > UINT32_MAX ? UINT32_MAX : (uint32_t)(m->end - m->start),
			.pgoff = (uint32_t)(m->pgoff >> 12),
			.table = id,
		};
		v->nr++;
		if (id != BPFSYM_UNW_NO_TABLE)
			u->view_ids[nids++] = id;
	}
	return nids;
}

int unwinder__sync_proc(struct unwinder *u, const struct proc *p)
{
	uint32_t pid = proc__pid(p), nids;
	struct pview *old = pview_find(u, pid), *pv;
	int err;

	if (!old && htab__nr(&u->procs) >= u->o.max_procs) {
		pthread_mutex_lock(&u->lock);
		u->st.over_procs++;
		pthread_mutex_unlock(&u->lock);
		return -ENOSPC;
	}
	pthread_mutex_lock(&u->lock);
	idle_trim(u);
	pthread_mutex_unlock(&u->lock);
	/* The new view's tables are referenced before it is written, the old one's after. */
	nids = view_fill(u, p);
	pv = malloc(sizeof(*pv) + nids * sizeof(pv->ids[0]));
	err = pv ? 0 : -ENOMEM;
	if (!err && !old && htab__reserve(&u->procs, 1))
		err = -ENOMEM;
	/* Never 0, never the same twice in one recording: BPF remembers walks by it (offcpu.bpf.h). */
	u->view.gen = __atomic_add_fetch(&u->view_gen, 1, __ATOMIC_RELAXED);
	if (!u->view.gen)
		u->view.gen = __atomic_add_fetch(&u->view_gen, 1, __ATOMIC_RELAXED);
	err = err ?: u->o.sink.put_proc(u->o.sink.ctx, pid, &u->view);
	pthread_mutex_lock(&u->lock);
	if (err) {
		if (err != -ENOMEM)
			u->st.sink_errors++;
		tabs_unref(u, u->view_ids, nids);
		pthread_mutex_unlock(&u->lock);
		free(pv);
		return err;
	}
	u->st.views++;
	if (old)
		tabs_unref(u, old->ids, old->nr);
	pthread_mutex_unlock(&u->lock);
	pv->pid = pid;
	pv->nr = nids;
	memcpy(pv->ids, u->view_ids, nids * sizeof(pv->ids[0]));
	if (old) {
		htab__del(&u->procs, hash_fin(pid), (uint64_t)(uintptr_t)old);
		free(old);
	}
	htab__add(&u->procs, hash_fin(pid), (uint64_t)(uintptr_t)pv);	/* reserved: cannot fail */
	return 0;
}

int unwinder__drop_proc(struct unwinder *u, uint32_t pid)
{
	struct pview *pv = pview_find(u, pid);

	/*
	 * Only a view we wrote: the BPF side makes none of its own (a child
	 * borrows its parent's by reference), so most short-lived processes,
	 * gone before their first view, cost no syscall here.
	 */
	if (!pv)
		return -ENOENT;
	htab__del(&u->procs, hash_fin(pid), (uint64_t)(uintptr_t)pv);
	pthread_mutex_lock(&u->lock);
	tabs_unref(u, pv->ids, pv->nr);
	pthread_mutex_unlock(&u->lock);
	free(pv);
	return u->o.sink.del_proc(u->o.sink.ctx, pid);
}

bool unwinder__has_proc(struct unwinder *u, uint32_t pid)
{
	return pview_find(u, pid) != NULL;
}

int unwinder__wait_idle(struct unwinder *u, int timeout_ms)
{
	struct timespec dl = deadline_in(timeout_ms);
	int err = 0;

	pthread_mutex_lock(&u->lock);
	while ((u->head || u->busy) && !err)
		err = pthread_cond_timedwait(&u->idle, &u->lock, &dl);
	pthread_mutex_unlock(&u->lock);
	return err ? -ETIMEDOUT : 0;
}

void unwinder__stats(struct unwinder *u, struct unwind_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	pthread_mutex_unlock(&u->lock);
}
