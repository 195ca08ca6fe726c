// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwopen: files whose open is still under way when a view wants them.
 *
 * The open callback (unwind_opts.open) runs the open of a process's file
 * as a job and waits a little for it (record/unwmaps.c): a file system
 * that is slow (a loaded machine, a VM under TCG) or hung does not hold
 * the thread that drains the ring buffer.  A slow file must still get
 * its table: a process whose binary missed it loses every stack for its
 * whole life, since its view is only written again when its mappings
 * change.  So the callback may answer -EINPROGRESS (asked again later);
 * the file gets its table id at once (the view names it, as a queued
 * build), and is kept here, with a copy of its mapping, until a later
 * ask gives an fd (queued for its build) or an error (the id stays
 * unbuilt: "no table", as when a build fails).  Asked again from
 * unwinder__poll_opens() (unwinder.c, which queues what answers), on the
 * thread that writes views.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/procmap.h"
#include "unwind/unwinder_int.h"

/* Files whose open may be under way at once; past it a file waits for the next view. */
#define UNW_OPENS_MAX	64

struct unw_open {
	uint32_t id;
	uint32_t pid;
	uint64_t pstart;
	struct mapping mp;	/* mp.path: our own copy */
};

int unw_open_later(struct unwinder *u, uint32_t id, uint32_t pid, uint64_t pstart,
		   const struct mapping *mp)
{
	struct unw_open *o;
	char *path = NULL;

	if (u->nr_opens == UNW_OPENS_MAX)
		return -ENOSPC;
	if (!u->opens) {
		u->opens = calloc(UNW_OPENS_MAX, sizeof(*u->opens));
		if (!u->opens)
			return -ENOMEM;
	}
	if (mp->path && !(path = strdup(mp->path)))
		return -ENOMEM;
	o = &u->opens[u->nr_opens++];
	o->id = id;
	o->pid = pid;
	o->pstart = pstart;
	o->mp = *mp;
	o->mp.path = path;
	return 0;
}

int unw_open_next(struct unwinder *u, uint32_t *pos, uint32_t *id, int *fd, int *debug_fd,
		  char *name, size_t len)
{
	struct unw_open *o;
	int ret;

	while (*pos < u->nr_opens) {
		o = &u->opens[*pos];
		*debug_fd = -1;
		ret = u->o.open(u->o.open_ctx, o->pid, o->pstart, &o->mp, debug_fd);
		if (ret == -EINPROGRESS) {
			(*pos)++;
			continue;
		}
		if (ret < 0) {
			pr_debug("unwind: %s: cannot open it: %s\n", o->mp.path ? o->mp.path : "?",
				 strerror(-ret));
			u->opens_failed++;
		} else {
			*id = o->id;
			*fd = ret;
			snprintf(name, len, "%s", o->mp.path ? o->mp.path : "?");
		}
		free((char *)o->mp.path);
		/* The last one takes its place: asked next, at the same *@pos. */
		u->opens[*pos] = u->opens[--u->nr_opens];
		if (ret >= 0)
			return 0;
	}
	return -EAGAIN;
}

void unw_opens_free(struct unwinder *u)
{
	for (uint32_t i = 0; i < u->nr_opens; i++)
		free((char *)u->opens[i].mp.path);
	free(u->opens);
	u->opens = NULL;
	u->nr_opens = 0;
}
