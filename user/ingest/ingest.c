// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest: record -> (mapevents -> model) or (symbolizer -> report writer).
 * Everything a sample needs is below this file; nothing here calls back
 * into the loader.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpfsym.h"
#include "ingest/defer.h"
#include "ingest/ingest.h"
#include "base/hash.h"
#include "base/htab.h"
#include "base/inputcap.h"
#include "symbolize/debuginfod.h"
#include "base/util.h"

/* A module's writer id, and the identity the writer gave it for. */
struct mod_memo {
	const struct sym_module *m;	/* NULL: a free slot */
	struct rpt_module seen;
	uint32_t id;
};

#define MEMO_MIN 64			/* slots of the first module memo (a power of two) */

/*
 * A writer samples go to, with its own module memo (ids are per writer).
 * out[0] is the recording's file; out[1..] are taps (ingest__add_writer).
 */
struct ingest_out {
	struct report_writer *w;	/* NULL: a free slot (out[0]: no file now) */
	uint64_t base;			/* its samples' time base: its header's start_mono_ns */
	struct mod_memo *memo;		/* open addressing by module pointer, under half full */
	size_t nr_memo, cap_memo;	/* cap_memo: 0 or a power of two */
	uint64_t memo_forgets;		/* the writer's forgets when the memo started */
	int err;			/* taps: the first error; the tap gets nothing more */
};

struct ingest {
	struct ingest_opts o;
	uint8_t *pid_gone;		/* one per o.pids[i]: its exit is known */
	struct ingest_stats st;
	struct ingest_out out[1 + INGEST_MAX_TAPS];
	struct named_frame frames[2 * BPFSYM_MAX_FRAMES];
	struct htab dirty;		/* pid + 1 of processes whose view is stale */
	uint32_t *dirty_pids;
	size_t nr_dirty, cap_dirty;
	size_t nr_urgent;		/* notes since the last sync that cannot wait for the batch's end */
	struct defer *def;		/* samples waiting for their files' names */
};

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
							   .max_ns = o->defer_max_ns });
	if (!in->pid_gone || !in->def) {
		ingest__free(in);
		errno = ENOMEM;
		return NULL;
	}
	in->st.pids_alive = o->nr_pids;
	return in;
}

void ingest__free(struct ingest *in)
{
	if (!in)
		return;
	defer__free(in->def);	/* samples still kept are not written: the caller flushed them */
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
 * The mapping model of a sampled process.  The snapshot and the tracker's
 * records normally made it; if they did not (a record was lost), its
 * mappings are read from /proc once, late but better than nothing.
 */
static struct proc *proc_of(struct ingest *in, uint32_t pid, uint64_t pstart)
{
	struct proc *p = proc_table__find(in->o.procs, pid, pstart);
	char path[64];
	int err;

	if (p)
		return p;
	p = proc_table__add(in->o.procs, pid, pstart);
	if (!p)
		return NULL;
	in->st.model_misses++;
	if (!in->o.kernel_only) {
		snprintf(path, sizeof(path), "/proc/%u/maps", pid);
		err = proc__load_maps(p, path);
		if (err < 0)
			pr_debug("ingest: pid %u: reading '%s' failed: %s\n", pid, path, strerror(-err));
	}
	return p;
}

/*
 * Symbolize the @nk kernel then @nu user addresses of @s into in->frames,
 * leaf first.  Callers' addresses are return addresses: ip - 1 is looked
 * up, so a call that is the last instruction of a function names that
 * function; the frame keeps the address sampled.
 */
static void sample_frames(struct ingest *in, const struct bpfsym_sample *s, uint32_t nk, uint32_t nu)
{
	struct named_frame *nf = in->frames;
	struct proc *p;
	uint32_t i;

	for (i = 0; i < nk; i++, nf++) {
		nf->addr = s->ips[i];
		nf->kind = RPT_FRAME_KERNEL;
		symbolizer__kernel(in->o.sym, i ? nf->addr - 1 : nf->addr, &nf->sf);
	}
	/* Every sampled process is counted, kernel threads too. */
	p = proc_of(in, s->pid, s->pstart);
	if (p)
		proc__note_sampled(p);
	for (i = 0; i < nu; i++, nf++) {
		nf->addr = s->ips[nk + i];
		nf->kind = RPT_FRAME_USER;
		symbolizer__user(in->o.sym, s->pid, p, i ? nf->addr - 1 : nf->addr, &nf->sf);
	}
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

/*
 * Write sample @out taken at @ts, whose @nr frames are @frames, to every
 * writer: counted as symbolized, and as written when the file took it.
 * 0 or -errno (the file's: a tap's error stops only that tap).
 */
static int sample_write(struct ingest *in, const struct named_frame *frames,
			struct rpt_sample *out, uint32_t nr, uint64_t ts, const char *cgpath)
{
	struct ingest_out *o;
	size_t i;
	int err;

	in->st.symbolized++;
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

/* defer's hand-back: a sample that waited, written now. */
static int deferred_write(void *ctx, struct deferred *e, enum defer_why why)
{
	struct ingest *in = ctx;

	in->st.deferred_unnamed += why != DEFER_ANSWERED;
	in->st.deferred_over_cap += why == DEFER_OVER_CAP;
	return sample_write(in, e->frames, &e->s, e->nr, e->ts, e->cgpath);
}

static int ingest_sample(struct ingest *in, const struct bpfsym_sample *s, size_t len)
{
	uint32_t nk, nu, why;
	char comm[BPFSYM_COMM_LEN + 1];
	struct rpt_sample out = {};
	const char *cgpath;

	/* The frame counts are in the fixed part: a record cut before them has none to read. */
	if (len < BPFSYM_SAMPLE_HDR_SIZE) {
		in->st.bad++;
		return 0;
	}
	nk = s->nr_kernel;
	nu = s->nr_user;
	if (nk > BPFSYM_MAX_FRAMES || nu > BPFSYM_MAX_FRAMES ||
	    len < BPFSYM_SAMPLE_HDR_SIZE + (size_t)(nk + nu) * sizeof(__u64)) {
		in->st.bad++;
		return 0;
	}
	why = (s->flags & BPFSYM_SF_UEND_MASK) >> BPFSYM_SF_UEND_SHIFT;
	if (why && why < BPFSYM_UEND_MAX)
		in->st.uend[why]++;
	sample_frames(in, s, nk, nu);
	memcpy(comm, s->comm, BPFSYM_COMM_LEN);
	comm[BPFSYM_COMM_LEN] = '\0';
	out.pid = s->pid;
	out.tid = s->tid;
	out.cpu = s->hdr.cpu;
	out.cgroup = s->cgroup_id;
	out.comm = comm;
	cgpath = cgpaths__lookup(in->o.cgroups, s->cgroup_id, s->pid, s->hdr.ts);
	/* Written once its files answered (without memory to keep it: now, as it is). */
	if (defer__waits(in->def, s->pid, in->frames + nk, nu) &&
	    !defer__push(in->def, &out, s->hdr.ts, cgpath, in->frames, nk + nu)) {
		in->st.deferred++;
		return defer__trim(in->def, deferred_write, in);
	}
	return sample_write(in, in->frames, &out, nk + nu, s->hdr.ts, cgpath);
}

int ingest__tick(struct ingest *in)
{
	return defer__nr(in->def) ? defer__pass(in->def, 0, false, deferred_write, in) : 0;
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
		err = defer__pass(in->def, FLUSH_STALL_NS, false, deferred_write, in);
		if (err)
			return err;
		if (!defer__nr(in->def))
			break;
		nanosleep(&step, NULL);
		waited = clock_ns(CLOCK_MONOTONIC) - t0;
	}
	err = defer__pass(in->def, 0, true, deferred_write, in);
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

/* Whether MAP or UNMAP record @rec says the tracker's fresh view took it whole. */
static bool record_viewed(const void *rec, size_t len)
{
	const struct bpfsym_ev_hdr *h = rec;

	if (h->type == BPFSYM_EV_MAP && len >= BPFSYM_MAP_EV_HDR_SIZE)
		return ((const struct bpfsym_map_ev *)rec)->flags & BPFSYM_MF_VIEWED;
	if (h->type == BPFSYM_EV_UNMAP && len >= sizeof(struct bpfsym_unmap_ev))
		return ((const struct bpfsym_unmap_ev *)rec)->flags & BPFSYM_MF_VIEWED;
	return false;
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

int ingest__record(struct ingest *in, const void *rec, size_t len)
{
	const struct bpfsym_ev_hdr *h = rec;
	const struct bpfsym_task_ev *t = rec;
	int err;

	if (len < sizeof(*h) || h->size > len) {
		in->st.bad++;
		return 0;
	}
	/* Every record moves event time, so exited processes leave the model in time. */
	mapevents__advance(in->o.mev, h->ts);
	/*
	 * Views go out before the next sample is symbolized, not after the
	 * batch: naming a new library's frames can take milliseconds, and a
	 * process just exec'd walks without a view until then.
	 */
	if (h->type == BPFSYM_EV_SAMPLE && in->nr_urgent) {
		err = ingest__sync_unwind(in);
		if (err)
			return err;
	}
	if (h->type == BPFSYM_EV_SAMPLE)
		err = ingest_sample(in, rec, len);
	else
		err = mapevents__apply(in->o.mev, rec, len);
	if (!err && h->type == BPFSYM_EV_EXIT && len >= sizeof(*t))
		ingest__pid_gone(in, t->pid);
	if (err || !in->o.unw || h->type == BPFSYM_EV_SAMPLE || len < sizeof(*h) + sizeof(uint32_t))
		return err;
	/*
	 * MAP, UNMAP, FORK, EXEC, RESYNC, EXIT all name their process right after the
	 * header.  An exited process's view goes now: the model keeps the
	 * process a while (its late samples), the kernel has no use for it.
	 */
	switch (h->type) {
	case BPFSYM_EV_EXIT:
	case BPFSYM_EV_EXEC:
	case BPFSYM_EV_RESYNC:
		/*
		 * At exec the tracker dropped the old image's views and starts
		 * a fresh one from the MAP records that follow; a view of ours
		 * may still have been written after the exec (from a FORK read
		 * in the same batch): it goes too.
		 */
		forget_dirty(in, t->pid);
		unwinder__drop_proc(in->o.unw, t->pid);
		return 0;
	case BPFSYM_EV_FORK:
		/*
		 * The child walks with its parent's views, by loan, until its
		 * own: written by the batch's end, unless it exec'd (most
		 * do, at once) or exited by then.
		 */
		return note_dirty(in, t->pid, false);
	case BPFSYM_EV_MAP:
	case BPFSYM_EV_UNMAP:
		if (record_viewed(rec, len) && !unwinder__has_proc(in->o.unw, t->pid))
			return 0;	/* the tracker's fresh view has it all */
		return note_dirty(in, t->pid, true);
	default:
		return 0;
	}
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
