// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest: record -> (mapevents -> model) or (ingest_sample.c: frames named
 * -> report writers).  A record's type is looked at once, here
 * (ingest__record's table); everything a sample needs is below this
 * file; nothing here calls back into the loader.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpfsym.h"
#include "ingest/ingest_int.h"
#include "base/hash.h"
#include "base/inputcap.h"
#include "runtime/runtime.h"
#include "symbolize/debuginfod.h"
#include "base/util.h"

static void proc_gone(void *ctx, uint32_t pid, uint64_t pstart)
{
	struct ingest *in = ctx;

	runtimes__proc_gone(in->o.runtimes, pid, pstart);
}

struct ingest *ingest__new(const struct ingest_opts *o)
{
	struct ingest *in;

	if (!o || !o->procs || !o->mev || !o->sym || (o->nr_pids && !o->pids)) {
		errno = EINVAL;
		return NULL;
	}
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->o = *o;
	in->out[0].w = o->w;
	in->out[0].base = o->w ? report_writer__time_base(o->w) : o->start_mono_ns;
	in->pid_gone = calloc(o->nr_pids + 1, 1);
	in->def = defer__new(o->sym, &(struct defer_opts){ .stall_ns = o->defer_stall_ns,
							   .max_ns = o->defer_max_ns,
							   .rt_retry = ingest__rt_retry,
							   .rt_ctx = in });
	if (!in->pid_gone || !in->def) {
		ingest__free(in);
		errno = ENOMEM;
		return NULL;
	}
	in->st.pids_alive = o->nr_pids;
	/* The runtimes forget a process's code objects when the model does. */
	if (o->runtimes)
		mapevents__on_gone(o->mev, proc_gone, in);
	return in;
}

void ingest__free(struct ingest *in)
{
	if (!in)
		return;
	defer__free(in->def);	/* samples still kept are not written: the caller flushed them */
	if (in->o.runtimes)
		mapevents__on_gone(in->o.mev, NULL, NULL);
	ingest__src_free(&in->src);
	ingest__offcpu_free(&in->off);
	free(in->pid_gone);
	for (size_t i = 0; i < ARRAY_SIZE(in->out); i++)
		free(in->out[i].memo);
	htab__free(&in->dirty);
	free(in->dirty_pids);
	free(in);
}

const struct ingest_stats *ingest__stats(const struct ingest *in)
{
	return &in->st;
}

void ingest__pid_gone(struct ingest *in, uint32_t pid)
{
	size_t i;

	/* A pid given twice is one process: every copy goes at once. */
	for (i = 0; i < in->o.nr_pids; i++) {
		if (in->o.pids[i] == pid && !in->pid_gone[i]) {
			in->pid_gone[i] = 1;
			in->st.pids_alive--;
		}
	}
}

bool ingest__pid_is_gone(const struct ingest *in, uint32_t pid)
{
	size_t i;

	for (i = 0; i < in->o.nr_pids; i++)
		if (in->o.pids[i] == pid)
			return in->pid_gone[i];
	return false;
}

void ingest__fill_header(const struct ingest *in, struct rpt_header *h)
{
	h->samples = in->st.samples;
	h->nr_procs = proc_table__nr_sampled(in->o.procs);
	h->bad_records = in->st.bad + mapevents__stats(in->o.mev)->bad;
	for (size_t i = 0; i < BPFSYM_UEND_MAX && i < RPT_UEND_MAX; i++)
		h->uend[i] = in->st.uend[i];
	/* The process's counts: the recording is the process's only one. */
	for (size_t i = 0; i < INPUTCAP__NR && i < RPT_CAPPED_MAX; i++)
		h->capped[i] = inputcap__count((enum inputcap)i);
	for (size_t i = 0; i < DINFOD__NR && i < RPT_DINFOD_MAX; i++)
		h->dinfod[i] = dinfod__count((enum dinfod_count)i);
	for (size_t i = 0; i < RPT_IC__NR && i < RPT_INTERP_MAX; i++)
		h->interp[i] = in->st.interp[i];
	for (size_t i = 0; i < RPT_OC__NR && i < RPT_OFFCPU_MAX; i++)
		h->offcpu[i] = in->st.offcpu[i];
}

int ingest__tick(struct ingest *in)
{
	runtimes__poll(in->o.runtimes, 0);
	return defer__nr(in->def) ? defer__pass(in->def, 0, false, ingest__deferred_write, in) : 0;
}

/* The end's patience: a job whose worker used no CPU this long is taken as hung. */
#define FLUSH_STALL_NS	(1000 * 1000000ull)
#define FLUSH_STEP_NS	(10 * 1000000ull)

int ingest__flush_deferred(struct ingest *in, uint64_t wait_ns, const volatile sig_atomic_t *cancel)
{
	const struct timespec step = { .tv_nsec = FLUSH_STEP_NS };
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), waited = 0;
	int err;

	while (defer__nr(in->def) && waited < wait_ns && !(cancel && *cancel)) {
		err = defer__pass(in->def, FLUSH_STALL_NS, false, ingest__deferred_write, in);
		if (err)
			return err;
		if (!defer__nr(in->def))
			break;
		nanosleep(&step, NULL);
		waited = clock_ns(CLOCK_MONOTONIC) - t0;
	}
	err = defer__pass(in->def, 0, true, ingest__deferred_write, in);
	if (in->st.deferred)
		pr_debug("ingest: %llu samples waited for a file that had not answered, %llu of them "
			 "written with frames unnamed after all (%llu pushed out by the caps); the end "
			 "waited %.2f s\n", (unsigned long long)in->st.deferred,
			 (unsigned long long)in->st.deferred_unnamed,
			 (unsigned long long)in->st.deferred_over_cap, waited / 1e9);
	return err;
}

int ingest__set_writer(struct ingest *in, struct report_writer *w)
{
	ingest_out__reset(&in->out[0], w);
	in->o.w = w;
	return 0;
}

int ingest__add_writer(struct ingest *in, struct report_writer *w)
{
	size_t i;

	if (!w)
		return -EINVAL;
	for (i = 1; i < ARRAY_SIZE(in->out); i++) {
		if (in->out[i].w)
			continue;
		ingest_out__reset(&in->out[i], w);
		return 0;
	}
	return -ENOSPC;
}

int ingest__remove_writer(struct ingest *in, struct report_writer *w)
{
	size_t i;
	int err;

	for (i = 1; i < ARRAY_SIZE(in->out); i++) {
		if (!w || in->out[i].w != w)
			continue;
		err = in->out[i].err;
		ingest_out__reset(&in->out[i], NULL);
		return err;
	}
	return -ENOENT;
}

/* @pid is gone: no view to write for it (its slot in the list is left as pid 0, skipped). */
static void forget_dirty(struct ingest *in, uint32_t pid)
{
	size_t i;

	if (!htab__del_u32(&in->dirty, pid))
		return;
	for (i = 0; i < in->nr_dirty; i++)
		if (in->dirty_pids[i] == pid)
			in->dirty_pids[i] = 0;
}

/*
 * Note that @pid's view is stale (once until the next ingest__sync_unwind):
 * @urgent, before the next sample; else by the batch's end.  0 or -ENOMEM.
 */
static int note_dirty(struct ingest *in, uint32_t pid, bool urgent)
{
	uint32_t *v;
	size_t cap;

	if (urgent) {
		in->nr_urgent++;
		in->st.views_wanted++;
	}
	if (htab__has_u32(&in->dirty, pid))
		return 0;
	if (in->nr_dirty == in->cap_dirty) {
		cap = in->cap_dirty ? 2 * in->cap_dirty : 64;
		v = realloc(in->dirty_pids, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		in->dirty_pids = v;
		in->cap_dirty = cap;
	}
	if (htab__add_u32(&in->dirty, pid))
		return -ENOMEM;
	in->dirty_pids[in->nr_dirty++] = pid;
	return 0;
}

/*
 * The process a MAP, UNMAP, FORK, EXEC, RESYNC or EXIT record names, right
 * after its header, in *@pid: false when the record is too short to say,
 * or there is no unwinder to tell.
 */
static bool unw_pid(const struct ingest *in, const void *rec, size_t len, uint32_t *pid)
{
	if (!in->o.unw || len < sizeof(struct bpfsym_ev_hdr) + sizeof(uint32_t))
		return false;
	*pid = ((const struct bpfsym_task_ev *)rec)->pid;
	return true;
}

/*
 * EXIT, EXEC, RESYNC: the process's views go.  An exited process's now:
 * the model keeps the process a while (its late samples), the kernel has
 * no use for it.  At exec the tracker dropped the old image's views and
 * starts a fresh one from the MAP records that follow; a view of ours
 * may still have been written after the exec (from a FORK read in the
 * same batch): it goes too.
 */
static int unw_drop(struct ingest *in, const void *rec, size_t len)
{
	uint32_t pid;

	if (unw_pid(in, rec, len, &pid)) {
		forget_dirty(in, pid);
		unwinder__drop_proc(in->o.unw, pid);
	}
	return 0;
}

/*
 * MAP, UNMAP: a view of ours is written before the next sample, unless
 * the tracker's fresh view took the change whole (@viewed) and the
 * process has no view of ours.
 */
static int unw_changed(struct ingest *in, const void *rec, size_t len, bool viewed)
{
	uint32_t pid;

	if (!unw_pid(in, rec, len, &pid) || (viewed && !unwinder__has_proc(in->o.unw, pid)))
		return 0;
	return note_dirty(in, pid, true);
}

static int on_sample(struct ingest *in, const void *rec, size_t len)
{
	int err;

	/*
	 * Views go out before the next sample is symbolized, not after the
	 * batch: naming a new library's frames can take milliseconds, and a
	 * process just exec'd walks without a view until then.
	 */
	if (in->nr_urgent) {
		err = ingest__sync_unwind(in);
		if (err)
			return err;
	}
	return ingest__sample(in, rec, len);
}

/* A mapping the model took, to the runtimes, which look for their interpreters in it. */
static void rt_mapped(struct ingest *in, const struct bpfsym_map_ev *e, size_t len)
{
	const struct mapping *m;
	const struct proc *p;

	if (!in->o.runtimes || len < BPFSYM_MAP_EV_HDR_SIZE || !(p = proc_table__find(in->o.procs, e->pid, e->pstart)))
		return;
	m = proc__find_mapping(p, e->start);
	if (m)
		runtimes__mapped(in->o.runtimes, p, m);
}

static int on_map(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_map_ev *e = rec;
	int err = mapevents__map(in->o.mev, e, len);

	if (!err)
		rt_mapped(in, e, len);
	return err ?: unw_changed(in, rec, len,
				  len >= BPFSYM_MAP_EV_HDR_SIZE && (e->flags & BPFSYM_MF_VIEWED));
}

static int on_unmap(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_unmap_ev *u = rec;
	int err = mapevents__unmap(in->o.mev, u, len);

	return err ?: unw_changed(in, rec, len, len >= sizeof(*u) && (u->flags & BPFSYM_MF_VIEWED));
}

static int on_fork(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_task_ev *t = rec;
	int err = mapevents__fork(in->o.mev, rec, len);
	uint32_t pid;

	if (!err && len >= sizeof(*t))
		runtimes__forked(in->o.runtimes, t->pid, t->pstart, t->ppid, t->ppstart);

	/*
	 * The child walks with its parent's views, by loan, until its own:
	 * written by the batch's end, unless it exec'd (most do, at once)
	 * or exited by then.
	 */
	if (err || !unw_pid(in, rec, len, &pid))
		return err;
	return note_dirty(in, pid, false);
}

static int on_exec(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_task_ev *t = rec;

	if (len >= sizeof(*t))
		runtimes__execed(in->o.runtimes, t->pid, t->pstart);
	return mapevents__exec(in->o.mev, rec, len) ?: unw_drop(in, rec, len);
}

static int on_resync(struct ingest *in, const void *rec, size_t len)
{
	return mapevents__resync(in->o.mev, rec, len) ?: unw_drop(in, rec, len);
}

static int on_exit_rec(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_task_ev *t = rec;
	int err = mapevents__exit(in->o.mev, t, len);

	if (err)
		return err;
	if (len >= sizeof(*t))
		ingest__pid_gone(in, t->pid);
	return unw_drop(in, rec, len);
}

/* A task's stacks as it left the CPU (--off-cpu): named as a sample's, kept for its time. */
static int on_offcpu_stack(struct ingest *in, const void *rec, size_t len)
{
	int err;

	if (in->nr_urgent) {
		err = ingest__sync_unwind(in);
		if (err)
			return err;
	}
	return ingest__offcpu_stack(in, rec, len);
}

/* The one place a record's type is looked at: what each type does (enum bpfsym_ev_type). */
static int (*const on_record[])(struct ingest *in, const void *rec, size_t len) = {
	[BPFSYM_EV_SAMPLE] = on_sample,
	[BPFSYM_EV_EXEC] = on_exec,
	[BPFSYM_EV_EXIT] = on_exit_rec,
	[BPFSYM_EV_FORK] = on_fork,
	[BPFSYM_EV_MAP] = on_map,
	[BPFSYM_EV_UNMAP] = on_unmap,
	[BPFSYM_EV_RESYNC] = on_resync,
	[BPFSYM_EV_OFFCPU_STACK] = on_offcpu_stack,
};

int ingest__record(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_ev_hdr *h = rec;

	if (len < sizeof(*h) || h->size > len) {
		in->st.bad++;
		return 0;
	}
	/* Every record moves event time, so exited processes leave the model in time. */
	mapevents__advance(in->o.mev, h->ts);
	if (h->type >= ARRAY_SIZE(on_record) || !on_record[h->type]) {
		mapevents__bad(in->o.mev);	/* a type this build does not know */
		return 0;
	}
	return on_record[h->type](in, rec, len);
}

int ingest__sync_unwind(struct ingest *in)
{
	struct proc *p;
	uint32_t pid;
	size_t i;
	int err;

	if (!in->o.unw)
		return 0;
	/* Files slow to open: their tables are built once they are (unwopen.c). */
	unwinder__poll_opens(in->o.unw);
	for (i = 0; i < in->nr_dirty; i++) {
		pid = in->dirty_pids[i];
		if (!pid)
			continue;	/* exited since it was noted */
		htab__del_u32(&in->dirty, pid);
		p = proc_table__find_pid(in->o.procs, pid);
		if (!p) {
			unwinder__drop_proc(in->o.unw, pid);
			continue;
		}
		err = unwinder__sync_proc(in->o.unw, p);
		if (err == -ENOMEM)
			return err;
	}
	in->nr_dirty = 0;
	in->nr_urgent = 0;
	return 0;
}
