// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwbuild: one queued file's table, built on a pool worker when the
 * unwinder has a pool (unwind_opts.pool).
 *
 * The file was opened for us (off the recorder's thread, with a
 * deadline), but its bytes are read here, through libelf's pread: a file
 * that answers open() and never read() (FUSE) would hold the unwinder's
 * worker for ever, and every table after it with it.  So the build is an
 * offload job, waited for while its worker makes progress.  Once the
 * worker's clock stands still for UNW_BUILD_STALL_NS the wait ends, not
 * the build: a file system that is only slow (a FUSE daemon answering
 * one request at a time, a loaded NFS server) answers later, and the
 * build is kept (UNW_LATE_MAX of them) and its table published when it
 * ends (unw_late_take, from the unwinder's thread, every 100 ms while
 * builds are late).  Meanwhile the other files of that file system are
 * parked (their fds kept, UNW_PARKED_MAX) and queued again when it ends:
 * a hostile mount holds one builder, not one per file, and a slow one
 * delays its files' tables instead of costing them.  A build past every
 * slot is given up (its worker frees it when its read returns, if ever)
 * and its file system gets no build without a try.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "base/offload.h"
#include "base/util.h"
#include "unwind/unwinder_int.h"

#define NSEC_PER_SEC		1000000000ull

/*
 * A build whose worker has used no CPU for this long waits on its file
 * system (the largest file, cc1, builds in 20 ms, 0.2 s under TCG: a
 * working build's clock moves many times a second, even sharing a CPU).
 */
#define UNW_BUILD_STALL_NS	(5ull * NSEC_PER_SEC)
/* And one that works this long is given up anyway (the caps bound a build far below). */
#define UNW_BUILD_MAX_NS	(120ull * NSEC_PER_SEC)
#define UNW_BUILD_SLICE_NS	(100ull * 1000 * 1000)

uint64_t unw_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Our own vdso image and its size (the end of its last PT_LOAD), or NULL. */
static const void *vdso_image(size_t *len)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	size_t end = 0;
	int i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(*ph))
		return NULL;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	*len = end;
	return end ? eh : NULL;
}

/* What a build needs and gives, owned by a job while it runs. */
struct build {
	struct offload_job oj;
	int fd, debug_fd;	/* closed once built */
	uint32_t max_rows;
	char name[NAME_LEN];	/* a copy: the unwinder's job may be gone first */
	struct cfi_table *t;
	int ret;
	uint64_t cpu_ns;
	char err[160];
};

/* The table of @b's fd (or the vdso), without its debug file when that one fails it. */
static void build_run(struct offload_job *oj)
{
	struct build *b = (struct build *)oj;
	struct cfi_opts co = { .max_rows = b->max_rows, .debug_fd = b->debug_fd };
	uint64_t t0 = unw_thread_cpu_ns();
	const void *img;
	size_t len;

	if (b->fd >= 0) {
		b->ret = cfi_table__build_fd(b->fd, &co, &b->t, b->err, sizeof(b->err));
		if (b->ret && b->ret != -E2BIG && b->debug_fd >= 0) {
			/* A broken debug file fails the build: the file's own .eh_frame may still do. */
			pr_debug("unwind: %s: %s; again without its debug file\n", b->name, b->err);
			cfi_table__free(b->t);
			b->t = NULL;
			co.debug_fd = -1;
			b->ret = cfi_table__build_fd(b->fd, &co, &b->t, b->err, sizeof(b->err));
		}
	} else if ((img = vdso_image(&len))) {
		b->ret = cfi_table__build_mem(img, len, &co, &b->t, b->err, sizeof(b->err));
	} else {
		snprintf(b->err, sizeof(b->err), "no vdso in this process");
		b->ret = -ENOENT;
	}
	if (b->fd >= 0)
		close(b->fd);
	if (b->debug_fd >= 0)
		close(b->debug_fd);
	b->fd = b->debug_fd = -1;
	b->cpu_ns = unw_thread_cpu_ns() - t0;
}

/* Given up: what the late build made goes (on the worker). */
static void build_drop(struct offload_job *oj)
{
	struct build *b = (struct build *)oj;

	if (b->fd >= 0)
		close(b->fd);
	if (b->debug_fd >= 0)
		close(b->debug_fd);
	cfi_table__free(b->t);
	free(b);
}

/*
 * Run @b on u->o.pool (here without one: tests, tools) and wait for it,
 * in slices so that unwinder__free() (u->stop) does not wait for a build
 * that may never end: the recorder must still stop within a second.  A
 * build is given up when its worker used no CPU for UNW_BUILD_STALL_NS
 * (a read the file system does not answer), or at UNW_BUILD_MAX_NS: a
 * large file on a loaded machine, under TCG and the sanitizers, may take
 * seconds, and is still built (a file without a table loses its stacks).
 */
static int wait_build(struct unwinder *u, struct build *b)
{
	struct offload_watch watch = {};
	uint64_t start, now;
	int ret;

	if (!u->o.pool) {
		build_run(&b->oj);
		return 0;
	}
	ret = offload__submit(u->o.pool, &b->oj);
	if (ret)
		return ret;
	start = clock_ns(CLOCK_MONOTONIC);
	do {
		ret = offload__wait_long(u->o.pool, &b->oj, UNW_BUILD_SLICE_NS);
		now = clock_ns(CLOCK_MONOTONIC);
	} while (ret == -ETIMEDOUT && now - start < UNW_BUILD_MAX_NS &&
		 !offload__stalled(u->o.pool, &b->oj, &watch, now, UNW_BUILD_STALL_NS) &&
		 !__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE));
	return ret;
}

/* Whether file system @dev hung a build before (one still late, or given up). */
static bool dev_hung(const struct unwinder *u, uint64_t dev)
{
	for (uint32_t i = 0; i < u->nr_hung_devs && i < UNW_HUNG_DEVS; i++)
		if (u->hung_devs[i] == dev)
			return true;
	return false;
}

/* File system @dev answered a late build: forget it hung. */
static void dev_forget(struct unwinder *u, uint64_t dev)
{
	for (uint32_t i = 0; i < u->nr_hung_devs && i < UNW_HUNG_DEVS; i++)
		if (u->hung_devs[i] == dev)
			u->hung_devs[i] = 0;
}

/* Whether a late build waits on file system @dev: then its files wait for it. */
static bool dev_late(const struct unwinder *u, uint64_t dev)
{
	for (int i = 0; i < UNW_LATE_MAX; i++)
		if (u->late[i].b && u->late[i].dev == dev)
			return true;
	return false;
}

/* Park @j (its fds moved to a copy) until its file system's late build ends.  0 or -errno. */
static int park(struct unwinder *u, struct job *j)
{
	struct job *pj;

	if (u->nr_parked >= UNW_PARKED_MAX || !(pj = malloc(sizeof(*pj))))
		return -ENOSPC;
	*pj = *j;
	j->fd = j->debug_fd = -1;
	pj->next = u->parked;
	u->parked = pj;
	u->nr_parked++;
	return 0;
}

/* Keep stalled build @b of @j running, taken if it ends.  0, or -ENOSPC: no slot. */
static int keep_late(struct unwinder *u, struct job *j, struct build *b, uint64_t dev)
{
	for (int i = 0; i < UNW_LATE_MAX; i++) {
		if (u->late[i].b)
			continue;
		u->late[i] = (struct unw_late){ .b = b, .id = j->id, .dev = dev };
		snprintf(u->late[i].name, sizeof(u->late[i].name), "%s", j->name);
		u->nr_late++;
		return 0;
	}
	return -ENOSPC;
}

static void close_job_fds(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	if (j->debug_fd >= 0)
		close(j->debug_fd);
	j->fd = j->debug_fd = -1;
}

int unw_build(struct unwinder *u, struct job *j, struct cfi_table **t, char *err, size_t errlen,
	      uint64_t *cpu_ns)
{
	uint64_t dev = j->fd >= 0 ? u->tabs[j->id].key.dev : 0;
	struct build *b;
	int ret;

	*t = NULL;
	*cpu_ns = 0;
	if (j->fd >= 0 && dev_late(u, dev) && !park(u, j)) {
		snprintf(err, errlen, "waits for its file system's late build");
		return -EINPROGRESS;
	}
	if (j->fd >= 0 && dev_hung(u, dev)) {
		close_job_fds(j);
		snprintf(err, errlen, "its file system did not answer a build before");
		return -ETIMEDOUT;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->oj.run = build_run;
	b->oj.drop = build_drop;
	b->fd = j->fd;
	b->debug_fd = j->debug_fd;
	j->fd = j->debug_fd = -1;	/* the build's now */
	b->max_rows = u->o.max_rows_file;
	snprintf(b->name, sizeof(b->name), "%s", j->name);
	ret = wait_build(u, b);
	if (ret == -ETIMEDOUT) {
		if (__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
			offload__abandon(u->o.pool, &b->oj);
			snprintf(err, errlen, "the recording ends");
			return ret;
		}
		u->hung_devs[u->nr_hung_devs++ % UNW_HUNG_DEVS] = dev;
		/* Stalled, maybe not dead: kept, its table taken if it ends (unw_late_take). */
		if (!keep_late(u, j, b, dev)) {
			snprintf(err, errlen, "no progress for %llu s: built on, taken if it ends",
				 (unsigned long long)(UNW_BUILD_STALL_NS / NSEC_PER_SEC));
			return -EINPROGRESS;
		}
		offload__abandon(u->o.pool, &b->oj);
		snprintf(err, errlen, "did not answer (no progress for %llu s, or %llu s in all)",
			 (unsigned long long)(UNW_BUILD_STALL_NS / NSEC_PER_SEC),
			 (unsigned long long)(UNW_BUILD_MAX_NS / NSEC_PER_SEC));
		return ret;
	}
	if (ret) {
		/* Not started (every worker stuck): the fds are still the build's. */
		build_drop(&b->oj);
		snprintf(err, errlen, "no worker to build it: %s", strerror(-ret));
		return ret;
	}
	*t = b->t;
	*cpu_ns = b->cpu_ns;
	snprintf(err, errlen, "%s", b->err);
	ret = b->ret;
	free(b);
	return ret;
}

/* Queue again the parked files of file system @dev (its late build ended). */
static void unpark(struct unwinder *u, uint64_t dev)
{
	struct job **pp = &u->parked, *j;

	while ((j = *pp)) {
		if (u->tabs[j->id].key.dev != dev) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		u->nr_parked--;
		pthread_mutex_lock(&u->lock);
		unw_queue_append(u, j);
		pthread_mutex_unlock(&u->lock);
	}
}

int unw_late_take(struct unwinder *u, struct job *j, struct cfi_table **t, char *err,
		  size_t errlen, uint64_t *cpu_ns)
{
	struct unw_late *l;
	struct build *b;
	int ret;

	for (int i = 0; i < UNW_LATE_MAX; i++) {
		l = &u->late[i];
		b = l->b;
		if (!b || offload__wait_long(u->o.pool, &b->oj, 0))
			continue;
		l->b = NULL;
		u->nr_late--;
		dev_forget(u, l->dev);
		*j = (struct job){ .id = l->id, .fd = -1, .debug_fd = -1 };
		snprintf(j->name, sizeof(j->name), "%s", l->name);
		*t = b->t;
		*cpu_ns = b->cpu_ns;
		snprintf(err, errlen, "%s", b->err);
		ret = b->ret;
		free(b);
		if (!dev_late(u, l->dev))
			unpark(u, l->dev);
		return ret == -EINPROGRESS ? -EIO : ret;
	}
	return -EINPROGRESS;
}

void unw_late_free(struct unwinder *u)
{
	struct job *j;

	for (int i = 0; i < UNW_LATE_MAX; i++)
		if (u->late[i].b)
			offload__abandon(u->o.pool, &u->late[i].b->oj);
	u->nr_late = 0;
	while ((j = u->parked)) {
		u->parked = j->next;
		close_job_fds(j);
		free(j);
	}
	u->nr_parked = 0;
}
