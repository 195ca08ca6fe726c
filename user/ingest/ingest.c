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

#define MEMO_MIN 64			/* slots of the first module memo (a power of two) */

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
}

/* Whether @a and @b are one identity for the writer (@a's build-id is at most RPT_BUILD_ID_MAX). */
static bool same_identity(const struct rpt_module *a, const struct rpt_module *b)
{
	/* Paths by pointer: a module's path does not change while the symbolizer lives. */
	return a->kind == b->kind && a->path == b->path && a->dev == b->dev && a->ino == b->ino &&
	       a->build_id_len == b->build_id_len && !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/* Double the memo (load kept under a half).  0 or -ENOMEM, the memo unchanged. */
static int memo_grow(struct ingest_out *in)
{
	size_t cap = in->cap_memo ? 2 * in->cap_memo : MEMO_MIN, i, j;
	struct mod_memo *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < in->cap_memo; i++) {
		if (!in->memo[i].m)
			continue;
		for (j = hash_u64(0, (uintptr_t)in->memo[i].m) & (cap - 1); t[j].m; j = (j + 1) & (cap - 1))
			;
		t[j] = in->memo[i];
	}
	free(in->memo);
	in->memo = t;
	in->cap_memo = cap;
	return 0;
}

/* Point @out at writer @w (NULL: none), forgetting the ids of the writer before. */
static void out__reset(struct ingest_out *out, struct report_writer *w)
{
	free(out->memo);
	*out = (struct ingest_out){ .w = w, .base = report_writer__time_base(w) };
}

/*
 * The writer's id of module @m.  The writer owns the ids: it deduplicates
 * modules by identity.  Its answer is remembered per module with the
 * identity it was given for, which spares hashing the path at every
 * frame; a module whose identity changed since (its build-id became known
 * when its file was first read) is another module of the report, asked
 * for again.  0 or -errno.
 */
static int module_id(struct ingest_out *in, const struct sym_module *m, uint32_t *id)
{
	struct mod_memo *e = NULL;
	size_t i, mask;
	int err;

	/*
	 * The memo starts again when the writer's index forgot, so it is as
	 * bounded as the index: the modules the writer still has answer at once.
	 */
	if (in->memo_forgets != report_writer__forgets(in->w)) {
		in->memo_forgets = report_writer__forgets(in->w);
		if (in->cap_memo)
			memset(in->memo, 0, in->cap_memo * sizeof(*in->memo));
		in->nr_memo = 0;
	}
	/* Without room to remember (no memory), the writer still answers. */
	if (2 * (in->nr_memo + 1) <= in->cap_memo || !memo_grow(in)) {
		mask = in->cap_memo - 1;
		for (i = hash_u64(0, (uintptr_t)m) & mask; in->memo[i].m && in->memo[i].m != m;
		     i = (i + 1) & mask)
			;
		e = &in->memo[i];
		if (e->m && same_identity(&e->seen, &m->rpt)) {
			*id = e->id;
			return 0;
		}
	}
	err = report_writer__module(in->w, &m->rpt, id);
	if (err || !e)
		return err;
	in->nr_memo += !e->m;
	e->m = m;
	e->seen = m->rpt;
	e->id = *id;
	return 0;
}

static int frame_id(struct ingest_out *out, const struct named_frame *nf, uint32_t *id)
{
	const struct sym_frame *sf = &nf->sf;
	struct rpt_frame f = {
		.kind = nf->kind,
		.module = RPT_NONE,
		.offset = sf->offset,
		.addr = nf->addr,
		.sym = sf->sym,
		.sym_off = sf->sym_off,
		.reason = sf->reason,
	};
	int err;

	if (sf->module) {
		err = module_id(out, sf->module, &f.module);
		if (err)
			return err;
	}
	return report_writer__frame(out->w, &f, id);
}

/*
 * Write the sample @out taken at @ts, whose @nr frames are @frames, to
 * @o's writer, its time on that file's base (a sample taken just before a
 * file began is at its start), after its cgroup's path (@cgpath, NULL:
 * unknown) the first time the file sees it.  0 or -errno.
 */
static int sample_out(struct ingest_out *o, const struct named_frame *frames,
		      struct rpt_sample *out, uint32_t nr, uint64_t ts, const char *cgpath)
{
	uint32_t ids[2 * BPFSYM_MAX_FRAMES], i;
	int err;

	out->time = ts > o->base ? ts - o->base : 0;
	/* A path the writer refuses (-EINVAL, -E2BIG) leaves the sample with its bare id. */
	if (cgpath && (err = report_writer__cgroup(o->w, out->cgroup, cgpath)) && err != -EINVAL &&
	    err != -E2BIG)
		return err;
	for (i = 0; i < nr; i++) {
		err = frame_id(o, &frames[i], &ids[i]);
		if (err)
			return err;
	}
	err = report_writer__stack(o->w, ids, nr, &out->stack);
	return err ? err : report_writer__sample(o->w, out);
}

/* Count the interpreter frames of a sample named for the last time, by what came of them. */
static void count_interp(struct ingest *in, const struct named_frame *frames, uint32_t nr)
{
	uint32_t r;

	for (uint32_t i = 0; i < nr; i++) {
		if (frames[i].kind != RPT_FRAME_INTERP)
			continue;
		r = frames[i].sf.reason;
		if (r == RPT_OK)
			in->st.interp[RPT_IC_NAMED]++;
		else if (r >= RPT_INTERP_GONE && r <= RPT_INTERP_NO_ANSWER)
			in->st.interp[RPT_IC_GONE + r - RPT_INTERP_GONE]++;
	}
}

/* Every sample: counted as symbolized, and as written when the file took it. */
int ingest__write(struct ingest *in, const struct named_frame *frames, struct rpt_sample *out,
		  uint32_t nr, uint64_t ts, const char *cgpath)
{
	struct ingest_out *o;
	size_t i;
	int err;

	in->st.symbolized++;
	count_interp(in, frames, nr);
	/* The taps first: the file's error ends the recording, a tap's only the tap. */
	for (i = 1; i < ARRAY_SIZE(in->out); i++) {
		o = &in->out[i];
		if (o->w && !o->err)
			o->err = sample_out(o, frames, out, nr, ts, cgpath);
	}
	if (!in->out[0].w)
		return 0;
	err = sample_out(&in->out[0], frames, out, nr, ts, cgpath);
	if (err)
		return err;
	in->st.samples++;
	return 0;
}

/* A sample that waited, written now. */
int ingest__deferred_write(void *ctx, struct deferred *e, enum defer_why why)
{
	struct ingest *in = ctx;

	in->st.deferred_unnamed += why != DEFER_ANSWERED;
	in->st.deferred_over_cap += why == DEFER_OVER_CAP;
	return ingest__write(in, e->frames, &e->s, e->nr, e->ts, e->cgpath);
}

int ingest__tick(struct ingest *in)
{
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
	out__reset(&in->out[0], w);
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
		out__reset(&in->out[i], w);
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
		out__reset(&in->out[i], NULL);
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

static int on_map(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_map_ev *e = rec;
	int err = mapevents__map(in->o.mev, e, len);

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
	int err = mapevents__fork(in->o.mev, rec, len);
	uint32_t pid;

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

/* The one place a record's type is looked at: what each type does (enum bpfsym_ev_type). */
static int (*const on_record[])(struct ingest *in, const void *rec, size_t len) = {
	[BPFSYM_EV_SAMPLE] = on_sample,
	[BPFSYM_EV_EXEC] = on_exec,
	[BPFSYM_EV_EXIT] = on_exit_rec,
	[BPFSYM_EV_FORK] = on_fork,
	[BPFSYM_EV_MAP] = on_map,
	[BPFSYM_EV_UNMAP] = on_unmap,
	[BPFSYM_EV_RESYNC] = on_resync,
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
