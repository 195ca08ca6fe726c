// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "bpfsym.h"
#include "mapevents.h"
#include "util.h"

uint64_t mapevents__dev(uint64_t kdev)
{
	return makedev((unsigned int)(kdev >> 20), (unsigned int)(kdev & 0xfffff));
}

struct proc *mapevents__proc(struct proc_table *pt, uint32_t pid, uint64_t pstart)
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
		.dev = mapevents__dev(e->dev),
		.ino = e->ino,
		.mtime_sec = e->mtime_sec,
		.mtime_nsec = e->mtime_nsec,
		.prot = e->prot,
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
	p = mapevents__proc(pt, e->pid, e->pstart);
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
	if (sym && m.kind == MAPPING_FILE && symbolizer__pin(sym, e->pid, &m))
		st->pin_errors++;
	return 0;
}

int mapevents__apply(struct proc_table *pt, struct symbolizer *sym, const void *rec, size_t len,
		     struct mapevents_stats *st)
{
	const struct bpfsym_ev_hdr *h = rec;
	const struct bpfsym_unmap_ev *u = rec;
	const struct bpfsym_task_ev *t = rec;
	struct proc *p, *parent;
	int err;

	if (len < sizeof(*h) || h->size > len) {
		st->bad++;
		return 0;
	}
	switch (h->type) {
	case BPFSYM_EV_MAP:
		if (!map_ev_ok(rec, len))
			break;
		return apply_map(pt, sym, rec, st);
	case BPFSYM_EV_UNMAP:
		if (len < sizeof(*u) || u->start >= u->end)
			break;
		st->unmaps++;
		p = proc_table__find(pt, u->pid, u->pstart);
		if (!p)
			return 0;	/* nothing known there: nothing to remove */
		err = proc__unmap(p, u->start, u->end);
		if (err == -ENOMEM)
			return err;
		if (err)
			st->map_errors++;
		return 0;
	case BPFSYM_EV_FORK:
		if (len < sizeof(*t))
			break;
		st->forks++;
		parent = proc_table__find(pt, t->ppid, t->ppstart);
		if (parent)
			p = proc_table__fork(pt, parent, t->pid, t->pstart);
		else {
			st->unknown_parent++;
			p = proc_table__add(pt, t->pid, t->pstart);
		}
		return p ? 0 : -errno;
	case BPFSYM_EV_EXEC:
		if (len < sizeof(*t))
			break;
		st->execs++;
		/* The MAP records of the new image follow. */
		p = mapevents__proc(pt, t->pid, t->pstart);
		if (!p)
			return -errno;
		proc__clear_maps(p);
		return 0;
	case BPFSYM_EV_EXIT:
		if (len < sizeof(*t))
			break;
		st->exits++;
		proc_table__remove(pt, t->pid);
		return 0;
	default:
		break;
	}
	st->bad++;
	return 0;
}
