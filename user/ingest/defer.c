// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * defer: a FIFO of samples waiting for their files' names, or their
 * runtimes' (defer.h).
 *
 * What a kept sample points to must outlive the wait.  Its names do: the
 * symbolizer interns every name it hands out (ELF symbols, kallsyms,
 * [vdso], JIT perf maps and jitdumps alike, imgcache.h) for its whole
 * life.  Its file modules would not (dropped past max_modules): each
 * frame holds its module until the sample is let go.  Its comm and cgroup
 * path are copied.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "ingest/defer.h"

#define NSEC_PER_SEC		1000000000ull
#define STALL_NS_DEFAULT	(5 * NSEC_PER_SEC)
#define MAX_NS_DEFAULT		(60 * NSEC_PER_SEC)
#define MAX_SAMPLES_DEFAULT	65536
#define MAX_BYTES_DEFAULT	(64ul << 20)

struct defer {
	struct symbolizer *sym;
	struct defer_opts o;
	struct deferred *head, **tail;	/* oldest first */
	size_t nr, bytes;
};

struct defer *defer__new(struct symbolizer *sym, const struct defer_opts *o)
{
	struct defer *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->sym = sym;
	if (o)
		d->o = *o;
	d->o.stall_ns = d->o.stall_ns ? d->o.stall_ns : STALL_NS_DEFAULT;
	d->o.max_ns = d->o.max_ns ? d->o.max_ns : MAX_NS_DEFAULT;
	d->o.max_samples = d->o.max_samples ? d->o.max_samples : MAX_SAMPLES_DEFAULT;
	d->o.max_bytes = d->o.max_bytes ? d->o.max_bytes : MAX_BYTES_DEFAULT;
	d->tail = &d->head;
	return d;
}

/* Release what @e holds and free it (out of the FIFO already). */
static void entry_free(struct defer *d, struct deferred *e)
{
	for (uint32_t i = 0; i < e->nr; i++)
		symbolizer__release(d->sym, &e->frames[i].sf);
	free(e->cgpath);
	free(e);
}

void defer__free(struct defer *d)
{
	struct deferred *e, *next;

	if (!d)
		return;
	for (e = d->head; e; e = next) {
		next = e->next;
		entry_free(d, e);
	}
	free(d);
}

size_t defer__nr(const struct defer *d)
{
	return d->nr;
}

/*
 * One look at the files samples wait for: when, with what patience, and
 * the modules already seen still waiting, whose other frames need not be
 * asked again (a slow libc can have thousands of samples waiting).
 */
struct look {
	uint64_t now, stall_ns;
	const struct sym_module *waiting[16];
	unsigned int nr_waiting;
};

static bool seen_waiting(const struct look *l, const struct sym_module *m)
{
	for (unsigned int i = 0; i < l->nr_waiting; i++)
		if (l->waiting[i] == m)
			return true;
	return false;
}

/*
 * Name the waiting frames of @f (@nr of process @pid) again; whether one
 * still waits for a job that does not look hung.  Every frame is tried:
 * one file answering names its frames even while another waits.
 */
static bool frames_wait(struct defer *d, uint32_t pid, struct named_frame *f, uint32_t nr,
			struct look *l)
{
	struct sym_frame *sf;
	bool waits = false;

	for (uint32_t i = 0; i < nr; i++) {
		sf = &f[i].sf;
		/* A runtime bounds its reads itself: past its deadline it answers a miss. */
		if (f[i].rt_wait) {
			waits |= d->o.rt_retry && d->o.rt_retry(d->o.rt_ctx, pid, &f[i]);
			continue;
		}
		if (sf->reason != RPT_FILE_NO_ANSWER)
			continue;
		if (seen_waiting(l, sf->module)) {
			waits = true;
			continue;
		}
		if (!symbolizer__retry(d->sym, pid, sf) ||
		    symbolizer__stuck(d->sym, sf, l->now, l->stall_ns, d->o.max_ns))
			continue;
		waits = true;
		if (l->nr_waiting < sizeof(l->waiting) / sizeof(l->waiting[0]))
			l->waiting[l->nr_waiting++] = sf->module;
	}
	return waits;
}

bool defer__waits(struct defer *d, uint32_t pid, struct named_frame *f, uint32_t nr)
{
	struct look l = { .stall_ns = d->o.stall_ns };
	uint32_t i;

	for (i = 0; i < nr && f[i].sf.reason != RPT_FILE_NO_ANSWER && !f[i].rt_wait; i++)
		;
	if (i == nr)
		return false;	/* the usual sample: not even a clock read */
	l.now = clock_ns(CLOCK_MONOTONIC);
	return frames_wait(d, pid, f, nr, &l);
}

int defer__push(struct defer *d, const struct rpt_sample *s, uint64_t ts, const char *cgpath,
		const struct named_frame *f, uint32_t nr)
{
	size_t bytes = sizeof(struct deferred) + nr * sizeof(*f);
	struct deferred *e = malloc(bytes);

	if (!e)
		return -ENOMEM;
	e->cgpath = cgpath ? strdup(cgpath) : NULL;
	if (cgpath && !e->cgpath) {
		free(e);
		return -ENOMEM;
	}
	e->next = NULL;
	e->s = *s;
	snprintf(e->comm, sizeof(e->comm), "%s", s->comm ? s->comm : "");
	e->s.comm = e->comm;
	e->ts = ts;
	e->since = clock_ns(CLOCK_MONOTONIC);
	e->bytes = bytes + (cgpath ? strlen(cgpath) + 1 : 0);
	e->nr = nr;
	memcpy(e->frames, f, nr * sizeof(*f));
	for (uint32_t i = 0; i < nr; i++)
		symbolizer__hold(d->sym, &e->frames[i].sf);
	*d->tail = e;
	d->tail = &e->next;
	d->nr++;
	d->bytes += e->bytes;
	return 0;
}

/* Take @e, at *@pp, out of the FIFO, hand it to @write for @why, free it. */
static int let_go(struct defer *d, struct deferred **pp, enum defer_why why,
		  defer_write_fn write, void *ctx)
{
	struct deferred *e = *pp;
	int err;

	*pp = e->next;
	if (d->tail == &e->next)
		d->tail = pp;
	d->nr--;
	d->bytes -= e->bytes;
	err = write(ctx, e, why);
	entry_free(d, e);
	return err;
}

/* Whether a frame of @e still says its file (or its runtime) did not answer. */
static bool unanswered(const struct deferred *e)
{
	for (uint32_t i = 0; i < e->nr; i++)
		if (e->frames[i].sf.reason == RPT_FILE_NO_ANSWER || e->frames[i].rt_wait)
			return true;
	return false;
}

int defer__pass(struct defer *d, uint64_t stall_ns, bool all, defer_write_fn write, void *ctx)
{
	struct look l = { .now = clock_ns(CLOCK_MONOTONIC), .stall_ns = stall_ns ? stall_ns : d->o.stall_ns };
	struct deferred **pp = &d->head, *e;
	bool waits;
	int err;

	while ((e = *pp)) {
		waits = frames_wait(d, e->s.pid, e->frames, e->nr, &l);
		if (waits && !all && l.now - e->since < d->o.max_ns) {
			pp = &e->next;
			continue;
		}
		err = let_go(d, pp, unanswered(e) ? DEFER_GAVE_UP : DEFER_ANSWERED, write, ctx);
		if (err)
			return err;
	}
	return 0;
}

int defer__trim(struct defer *d, defer_write_fn write, void *ctx)
{
	struct look l = { .now = clock_ns(CLOCK_MONOTONIC), .stall_ns = d->o.stall_ns };
	struct deferred *e;
	int err;

	while ((e = d->head) && (d->nr > d->o.max_samples || d->bytes > d->o.max_bytes)) {
		frames_wait(d, e->s.pid, e->frames, e->nr, &l);
		err = let_go(d, &d->head, unanswered(e) ? DEFER_OVER_CAP : DEFER_ANSWERED, write, ctx);
		if (err)
			return err;
	}
	return 0;
}
