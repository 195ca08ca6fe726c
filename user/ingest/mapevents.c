// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "bpfsym.h"
#include "ingest/mapevents.h"
#include "base/util.h"

/* Exited processes waiting for their grace to end, oldest first: a ring. */
struct exited {
	uint32_t pid;
	uint64_t pstart;
	uint64_t ts;
};

#define EXITED_MAX 65536	/* beyond this many in grace, the oldest goes at once */

struct mapevents {
	struct proc_table *pt;
	struct symbolizer *sym;
	struct mapevents_stats st;
	struct exited *q;
	size_t head, nr, cap;	/* cap: a power of two */
	mapevents_gone_fn gone;	/* told of each process that leaves the model (NULL: none) */
	void *gone_ctx;
};

struct mapevents *mapevents__new(struct proc_table *pt, struct symbolizer *sym)
{
	struct mapevents *me = calloc(1, sizeof(*me));

	if (!me)
		return NULL;
	me->pt = pt;
	me->sym = sym;
	return me;
}

void mapevents__free(struct mapevents *me)
{
	if (!me)
		return;
	free(me->q);
	free(me);
}

const struct mapevents_stats *mapevents__stats(const struct mapevents *me)
{
	return &me->st;
}

void mapevents__on_gone(struct mapevents *me, mapevents_gone_fn fn, void *ctx)
{
	me->gone = fn;
	me->gone_ctx = ctx;
}

/* Drop the oldest exited process, unless its pid already belongs to a new one. */
static void retire_oldest(struct mapevents *me)
{
	const struct exited *x = &me->q[me->head];

	if (proc_table__find(me->pt, x->pid, x->pstart))
		proc_table__remove(me->pt, x->pid);
	if (me->gone)
		me->gone(me->gone_ctx, x->pid, x->pstart);
	me->head = (me->head + 1) & (me->cap - 1);
	me->nr--;
}

void mapevents__advance(struct mapevents *me, uint64_t ts)
{
	while (me->nr && me->q[me->head].ts + MAPEVENTS_EXIT_GRACE_NS < ts)
		retire_oldest(me);
}

static int defer_exit(struct mapevents *me, uint32_t pid, uint64_t pstart, uint64_t ts)
{
	struct exited *q;
	size_t i, cap;

	if (me->nr == EXITED_MAX)
		retire_oldest(me);
	if (me->nr == me->cap) {
		cap = me->cap ? 2 * me->cap : 64;
		q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		for (i = 0; i < me->nr; i++)
			q[i] = me->q[(me->head + i) & (me->cap - 1)];
		free(me->q);
		me->q = q;
		me->cap = cap;
		me->head = 0;
	}
	me->q[(me->head + me->nr) & (me->cap - 1)] = (struct exited){ pid, pstart, ts };
	me->nr++;
	return 0;
}

/* The kernel's dev_t (major << 20 | minor) as userspace's st_dev. */
static uint64_t kdev_to_dev(uint64_t kdev)
{
	return makedev((unsigned int)(kdev >> 20), (unsigned int)(kdev & 0xfffff));
}

/* The process (pid, pstart), created empty if the model does not know it; NULL + errno. */
static struct proc *proc_get(struct proc_table *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *p = proc_table__find(pt, pid, pstart);

	return p ? p : proc_table__add(pt, pid, pstart);
}

/* A MAP record is whole when its path fits in it and ends with its NUL. */
static int map_ev_ok(const struct bpfsym_map_ev *e, size_t len)
{
	return len >= BPFSYM_MAP_EV_HDR_SIZE + 1 && e->path_len < BPFSYM_PATH_MAX &&
	       len >= BPFSYM_MAP_EV_HDR_SIZE + (size_t)e->path_len + 1 &&
	       e->path[e->path_len] == '\0' && memchr(e->path, '\0', e->path_len) == NULL &&
	       e->start < e->end;
}

static int apply_map(struct proc_table *pt, struct symbolizer *sym, const struct bpfsym_map_ev *e,
		     struct mapevents_stats *st)
{
	struct mapping m = {
		.start = e->start,
		.end = e->end,
		.pgoff = e->pgoff,
		.dev = kdev_to_dev(e->dev),
		.ino = e->ino,
		.mtime_sec = e->mtime_sec,
		.mtime_nsec = e->mtime_nsec,
		.prot = e->prot,
		.mnt_ns = e->mnt_ns,
		.path = e->path_len ? e->path : NULL,
	};
	struct proc *p;
	int err;

	if (e->flags & BPFSYM_MF_ANON)
		m.kind = MAPPING_ANON;
	else if (e->flags & BPFSYM_MF_SPECIAL)
		m.kind = MAPPING_SPECIAL;
	else
		m.kind = MAPPING_FILE;
	p = proc_get(pt, e->pid, e->pstart);
	if (!p)
		return -errno;
	st->maps++;
	err = proc__map(p, &m);
	if (err == -ENOMEM)
		return err;
	if (err) {
		st->map_errors++;
		pr_debug("mapevents: pid %u: mapping %llx-%llx '%s': %s\n", e->pid,
			 (unsigned long long)m.start, (unsigned long long)m.end,
			 m.path ? m.path : "", strerror(-err));
		return 0;
	}
	/* Open the file now, while the mapping (and maybe the process) exists. */
	if (sym && m.kind == MAPPING_FILE && symbolizer__pin(sym, e->pid, e->pstart, &m))
		st->pin_errors++;
	return 0;
}

/* A record of @len bytes is whole if it holds @need: else counted, and skipped. */
static bool whole(struct mapevents *me, size_t len, size_t need)
{
	if (len >= need)
		return true;
	me->st.bad++;
	return false;
}

int mapevents__map(struct mapevents *me, const struct bpfsym_map_ev *e, size_t len)
{
	if (!map_ev_ok(e, len)) {
		me->st.bad++;
		return 0;
	}
	return apply_map(me->pt, me->sym, e, &me->st);
}

int mapevents__unmap(struct mapevents *me, const struct bpfsym_unmap_ev *u, size_t len)
{
	struct proc *p;
	int err;

	if (len < sizeof(*u) || u->start >= u->end) {
		me->st.bad++;
		return 0;
	}
	me->st.unmaps++;
	p = proc_table__find(me->pt, u->pid, u->pstart);
	if (!p)
		return 0;	/* nothing known there: nothing to remove */
	err = proc__unmap(p, u->start, u->end);
	if (err == -ENOMEM)
		return err;
	if (err)
		me->st.map_errors++;
	return 0;
}

int mapevents__fork(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len)
{
	struct proc *p, *parent;

	if (!whole(me, len, sizeof(*t)))
		return 0;
	me->st.forks++;
	parent = proc_table__find(me->pt, t->ppid, t->ppstart);
	if (parent)
		p = proc_table__fork(me->pt, parent, t->pid, t->pstart);
	else {
		me->st.unknown_parent++;
		p = proc_table__add(me->pt, t->pid, t->pstart);
	}
	/* Only running out of memory stops a recording; a record that makes no sense does not. */
	if (!p && errno == ENOMEM)
		return -ENOMEM;
	if (!p)
		me->st.map_errors++;
	return 0;
}

int mapevents__exec(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len)
{
	struct proc *p;

	if (!whole(me, len, sizeof(*t)))
		return 0;
	me->st.execs++;
	/* The MAP records of the new image follow. */
	p = proc_get(me->pt, t->pid, t->pstart);
	if (!p)
		return -errno;
	proc__clear_maps(p);
	return 0;
}

int mapevents__resync(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len)
{
	struct proc *p, *parent;

	if (!whole(me, len, sizeof(*t)))
		return 0;
	me->st.resyncs++;
	/*
	 * The MAP records of the whole process follow; the image is the
	 * same, so are the hints.  ppid: it still runs the image it was
	 * forked with, whose hints it has too.
	 */
	p = proc_get(me->pt, t->pid, t->pstart);
	if (!p)
		return -errno;
	proc__drop_maps(p);
	parent = t->ppid ? proc_table__find(me->pt, t->ppid, t->ppstart) : NULL;
	if (parent && proc__inherit_hints(p, parent))
		return -ENOMEM;
	return 0;
}

int mapevents__exit(struct mapevents *me, const struct bpfsym_task_ev *t, size_t len)
{
	if (!whole(me, len, sizeof(*t)))
		return 0;
	me->st.exits++;
	return defer_exit(me, t->pid, t->pstart, t->hdr.ts);
}

void mapevents__bad(struct mapevents *me)
{
	me->st.bad++;
}
