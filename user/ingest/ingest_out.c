// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest_out: a named sample -> every writer (the recording's file and
 * the taps), each with the ids it gave the sample's modules, frames and
 * stack.  Below ingest.c (the records' dispatch) and ingest_sample.c (a
 * sample named), which both hand samples here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "ingest/ingest_int.h"

#define MEMO_MIN 64			/* slots of the first module memo (a power of two) */

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

void ingest_out__reset(struct ingest_out *out, struct report_writer *w)
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
