// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest_offcpu: off-CPU time (issue 28).  BPF sends a task's stacks once
 * per key (BPFSYM_EV_OFFCPU_STACK, in order with the mapping records that
 * name them) and sums the time spent off the CPU under that key; the
 * recorder reads the sums (ingest__offcpu).  So a stack is named when its
 * record comes, and kept here, named, as long as BPF may sum time under
 * its key: a copy of its frames with their names and modules, not the
 * symbolizer's objects, which it may let go.  Each sum is written to
 * every writer as an OFFCPU record, the stack interned there (each file
 * of a rotated recording, each tap, its own ids).
 *
 * A kernel stack taken at the switch-in (bpf/korc.bpf.h) comes alone, under
 * a key of its own (BPFSYM_OFFCPU_KTAG): it is kept as a stack is, and a
 * sum names both keys, the kernel's frames written above the other's.
 *
 * Kept stacks are bounded (INGEST_OFF_HELD_MAX, INGEST_OFF_HELD_BYTES):
 * past either the ones summed least lately go, and their keys are handed
 * to the recorder, which deletes them from BPF's seen set so that their
 * stacks are sent again when next taken.  Time summed under a key not
 * kept (its record lost, or let go since) is counted, not written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "ingest/ingest_int.h"

_Static_assert((int)RPT_OS_SLEEP == BPFSYM_OS_SLEEP && (int)RPT_OS_DISK == BPFSYM_OS_DISK &&
	       (int)RPT_OS_PREEMPT == BPFSYM_OS_PREEMPT && (int)RPT_OS_OTHER == BPFSYM_OS_OTHER,
	       "the recording's states are the BPF side's");

/* One frame of a kept stack: a rpt_frame whose module is an index of the stack's own modules. */
struct held_frame {
	uint32_t kind;
	uint32_t mod;		/* index in held.mods, or RPT_NONE */
	uint64_t offset, addr, sym_off;
	const char *sym;	/* in the stack's own bytes */
	uint32_t reason;
	uint32_t fk;		/* interp: its frame kind */
	uint64_t slot1;		/* interp: its second slot */
	bool wait;		/* interp: not named yet, its runtime's read still ran */
};

/* A stack kept, in one allocation: this, its modules, its frames, their strings. */
struct held {
	uint64_t key;
	uint64_t used;		/* the sum count when it was last summed (or kept) */
	uint64_t cgroup;
	uint64_t pstart;
	size_t bytes;
	uint32_t pid, tid, state, nr, nr_mods, nr_wait;
	bool cut;		/* its user walk ended before the root (RPT_OC_CUT) */
	char comm[BPFSYM_COMM_LEN + 1];
	const char *cgpath;	/* in the stack's own bytes; NULL: unknown */
	struct rpt_module *mods;
	struct held_frame *f;
};

static bool held_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct ingest_off *o = ctx;

	return o->v[val - 1]->key == *(const uint64_t *)key;
}

/* The index of the stack kept under @key, or SIZE_MAX. */
static size_t held_find(const struct ingest_off *o, uint64_t key)
{
	uint64_t v = htab__find(&o->tab, hash_u64(0, key), held_eq, o, &key);

	return v ? (size_t)v - 1 : SIZE_MAX;
}

/* Drop kept stack @i (its key to be forgotten by BPF when @tell). */
static void held_drop(struct ingest_off *o, size_t i, bool tell)
{
	struct held *h = o->v[i], *last = o->v[o->nr - 1];

	htab__del(&o->tab, hash_u64(0, h->key), i + 1);
	if (tell && o->nr_forget < ARRAY_SIZE(o->forget))
		o->forget[o->nr_forget++] = h->key;
	o->bytes -= h->bytes;
	free(h);
	if (last != h) {
		htab__del(&o->tab, hash_u64(0, last->key), o->nr);
		htab__add(&o->tab, hash_u64(0, last->key), i + 1);	/* a slot was just freed */
		o->v[i] = last;
	}
	o->nr--;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Room for one more stack of @bytes: past a bound, the eighth summed
 * least lately go.  The forget list has room for every stack kept, so
 * each key let go is handed back.
 */
static void held_make_room(struct ingest_off *o, size_t bytes)
{
	uint64_t *used, cut;
	size_t i, n, max;

	if (o->nr < INGEST_OFF_HELD_MAX && o->bytes + bytes <= INGEST_OFF_HELD_BYTES)
		return;
	used = malloc(o->nr * sizeof(*used));
	if (!used) {
		while (o->nr)
			held_drop(o, o->nr - 1, true);
		return;
	}
	for (i = 0; i < o->nr; i++)
		used[i] = o->v[i]->used;
	qsort(used, o->nr, sizeof(*used), cmp_u64);
	cut = used[o->nr / 8];
	free(used);
	/* Ties at the cut (never summed since they came) go only up to the eighth. */
	max = o->nr / 8 ? o->nr / 8 : 1;
	for (i = 0, n = 0; i < o->nr && n < max;) {
		if (o->v[i]->used <= cut) {
			held_drop(o, i, true);
			n++;
			o->st_evicted++;
		} else {
			i++;
		}
	}
}

/*
 * What a kept frame is made from: a named frame's parts, or a kept
 * frame's; @mod a module the copy takes its own copy of (NULL: none).
 */
struct held_src {
	uint32_t kind, reason;
	uint64_t offset, addr, sym_off;
	const char *sym;
	const struct rpt_module *mod;
	uint32_t fk;		/* interp: its frame kind, slot1: its second slot */
	uint64_t slot1;
	bool wait;		/* interp: its runtime's read still ran: asked again at each sum */
};

/* The bytes of a copy of @nr frames from @src, with @cgpath. */
static size_t held_size(const struct held_src *src, uint32_t nr, const char *cgpath)
{
	size_t b = sizeof(struct held) + nr * (sizeof(struct held_frame) + sizeof(struct rpt_module));

	for (uint32_t i = 0; i < nr; i++) {
		if (src[i].sym)
			b += strlen(src[i].sym) + 1;
		if (src[i].mod && src[i].mod->path)
			b += strlen(src[i].mod->path) + 1;
	}
	if (cgpath)
		b += strlen(cgpath) + 1;
	return b;
}

static char *put_str(char **p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = *p;

	memcpy(d, s, n);
	*p += n;
	return d;
}

/* A copy of @nr frames from @src, with @facts' key, process, thread, state, comm and cgroup. */
static struct held *held_make(const struct held *facts, const struct held_src *src, uint32_t nr,
			      const char *cgpath)
{
	size_t bytes = held_size(src, nr, cgpath);
	struct held *h = calloc(1, bytes);
	uint32_t i, j;
	char *str;

	if (!h)
		return NULL;
	*h = *facts;
	h->bytes = bytes;
	h->nr = nr;
	h->nr_mods = h->nr_wait = 0;
	h->mods = (struct rpt_module *)(h + 1);
	h->f = (struct held_frame *)(h->mods + nr);
	str = (char *)(h->f + nr);
	for (i = 0; i < nr; i++) {
		const struct held_src *sf = &src[i];

		h->f[i] = (struct held_frame){
			.kind = sf->kind, .mod = RPT_NONE, .offset = sf->offset, .addr = sf->addr,
			.sym_off = sf->sym_off, .reason = sf->reason, .fk = sf->fk, .slot1 = sf->slot1,
			.wait = sf->wait, .sym = sf->sym ? put_str(&str, sf->sym) : NULL,
		};
		h->nr_wait += sf->wait;
		if (!sf->mod)
			continue;
		/* A stack's frames share a few modules: the same one, one copy. */
		for (j = 0; j < i; j++)
			if (src[j].mod == sf->mod)
				break;
		if (j < i) {
			h->f[i].mod = h->f[j].mod;
			continue;
		}
		h->f[i].mod = h->nr_mods;
		h->mods[h->nr_mods] = *sf->mod;
		if (sf->mod->path)
			h->mods[h->nr_mods].path = put_str(&str, sf->mod->path);
		h->nr_mods++;
	}
	h->cgpath = cgpath ? put_str(&str, cgpath) : NULL;
	return h;
}

/* @nr named frames as what a copy is made from, into @src. */
static void src_of_named(const struct named_frame *nf, uint32_t nr, struct held_src *src)
{
	for (uint32_t i = 0; i < nr; i++) {
		const struct sym_frame *sf = &nf[i].sf;

		src[i] = (struct held_src){
			.kind = nf[i].kind, .reason = sf->reason, .offset = sf->offset, .addr = nf[i].addr,
			.sym_off = sf->sym_off, .sym = sf->sym, .mod = sf->module ? &sf->module->rpt : NULL,
			.fk = nf[i].fk, .slot1 = nf[i].slot1, .wait = nf[i].rt_wait,
		};
	}
}

/*
 * Ask the runtimes again for kept stack @i's frames whose read still ran
 * when it was named; with a new name, the copy is made again.
 */
static void held_rename(struct ingest *in, size_t i)
{
	struct ingest_off *o = &in->off;
	struct held *h = o->v[i], *n;
	struct held_src src[2 * BPFSYM_MAX_FRAMES];
	struct named_frame nf[2 * BPFSYM_MAX_FRAMES];
	bool changed = false;

	for (uint32_t j = 0; j < h->nr && j < ARRAY_SIZE(src); j++) {
		const struct held_frame *f = &h->f[j];

		src[j] = (struct held_src){
			.kind = f->kind, .reason = f->reason, .offset = f->offset, .addr = f->addr,
			.sym_off = f->sym_off, .sym = f->sym, .mod = f->mod == RPT_NONE ? NULL : &h->mods[f->mod],
			.fk = f->fk, .slot1 = f->slot1, .wait = f->wait,
		};
		if (!f->wait)
			continue;
		nf[j] = (struct named_frame){ .kind = f->kind, .addr = f->addr, .fk = f->fk, .slot1 = f->slot1,
					      .pstart = h->pstart };
		src[j].wait = ingest__rt_retry(in, h->pid, &nf[j]);
		if (src[j].wait)
			continue;
		changed = true;
		src[j].sym = nf[j].sf.sym;
		src[j].offset = nf[j].sf.offset;
		src[j].sym_off = nf[j].sf.sym_off;
		src[j].reason = nf[j].sf.reason;
		src[j].mod = nf[j].sf.module ? &nf[j].sf.module->rpt : NULL;
	}
	if (!changed)
		return;
	n = held_make(h, src, h->nr, h->cgpath);
	if (!n)
		return;		/* kept as it was: named next time */
	o->bytes += n->bytes - h->bytes;
	o->v[i] = n;
	free(h);
}

/*
 * Whether @s's user side was walked here and ended before its root: a
 * file without its table yet (a new program's first moments), a fault,
 * an address in no mapping...  Not the depth cap, not a kernel thread.
 */
static bool user_cut(const struct bpfsym_sample *s)
{
	uint32_t why = (s->flags & BPFSYM_SF_UEND_MASK) >> BPFSYM_SF_UEND_SHIFT;

	return why != BPFSYM_UEND_NONE && why != BPFSYM_UEND_ROOT && why != BPFSYM_UEND_DEPTH;
}

/*
 * The tracepoint's own leading frames of @nk kernel frames at @nf: BPF
 * skips its program's two, but with more than one program on
 * sched_switch the tracepoint calls them through its iterator, one frame
 * more (a static call when there is one).  Named, so with kallsyms.
 */
static uint32_t tracepoint_frames(const struct named_frame *nf, uint32_t nk)
{
	uint32_t n = 0;

	while (n < nk && nf[n].sf.sym && !strncmp(nf[n].sf.sym, "__traceiter_", 12))
		n++;
	return n;
}

int ingest__offcpu_stack(struct ingest *in, const struct bpfsym_sample *s, size_t len)
{
	struct ingest_off *o = &in->off;
	uint32_t nk, nu, nr;
	struct held_src src[2 * BPFSYM_MAX_FRAMES];
	struct held *h, facts;
	const char *cgpath;
	uint32_t skip;
	size_t i;

	if (len < BPFSYM_SAMPLE_HDR_SIZE) {
		in->st.bad++;
		return 0;
	}
	nk = s->nr_kernel;
	nu = s->nr_user;
	if (nk > BPFSYM_MAX_FRAMES || nu > BPFSYM_MAX_FRAMES || !s->aux ||
	    len < BPFSYM_SAMPLE_HDR_SIZE + (size_t)(nk + nu) * sizeof(__u64)) {
		in->st.bad++;
		return 0;
	}
	o->st_stacks++;
	/* Sent again (BPF's seen set was full, or forgot it): the names of now win. */
	i = held_find(o, s->aux);
	if (i != SIZE_MAX)
		held_drop(o, i, false);
	nr = ingest__name_frames(in, s, nk, nu);
	cgpath = cgpaths__lookup(in->o.cgroups, s->cgroup_id, s->pid, s->hdr.ts);
	skip = tracepoint_frames(in->frames, nk);
	src_of_named(in->frames + skip, nr - skip, src);
	nr -= skip;
	if (htab__reserve(&o->tab, 1))
		return 0;
	held_make_room(o, held_size(src, nr, cgpath));
	if (o->nr == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		struct held **v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return 0;	/* not kept: its time is counted lost */
		o->v = v;
		o->cap = cap;
	}
	facts = (struct held){
		.key = s->aux, .pid = s->pid, .tid = s->tid, .cgroup = s->cgroup_id, .pstart = s->pstart,
		.state = (s->flags & BPFSYM_SF_STATE_MASK) >> BPFSYM_SF_STATE_SHIFT,
		.cut = user_cut(s),
	};
	memcpy(facts.comm, s->comm, BPFSYM_COMM_LEN);
	h = held_make(&facts, src, nr, cgpath);
	if (!h)
		return 0;
	h->used = o->sums;
	o->v[o->nr++] = h;
	o->bytes += h->bytes;
	htab__add(&o->tab, hash_u64(0, h->key), o->nr);	/* reserved above */
	return 0;
}

/* Intern kept stack @h's frames in writer @o, into @ids from *@nr on (room for them). */
static int held_frames_out(struct ingest_out *o, const struct held *h, uint32_t *ids, uint32_t *nr)
{
	uint32_t mids[2 * BPFSYM_MAX_FRAMES], i;
	struct rpt_frame f;
	int err;

	for (i = 0; i < h->nr_mods; i++) {
		err = report_writer__module(o->w, &h->mods[i], &mids[i]);
		if (err)
			return err;
	}
	for (i = 0; i < h->nr; i++) {
		const struct held_frame *hf = &h->f[i];

		f = (struct rpt_frame){
			.kind = hf->kind, .module = hf->mod == RPT_NONE ? RPT_NONE : mids[hf->mod],
			.offset = hf->offset, .addr = hf->addr, .sym = hf->sym, .sym_off = hf->sym_off,
			.reason = hf->reason,
		};
		err = report_writer__frame(o->w, &f, &ids[(*nr)++]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Write kept stack @h's sum (@rec: all but the stack and time) to writer
 * @o, below kept kernel stack @kh when there is one, their frames and
 * modules interned there.  0 or -errno.
 */
static int held_out(struct ingest_out *o, const struct held *kh, const struct held *h, struct rpt_offcpu *rec,
		    uint64_t ts)
{
	/* Leaf first: the kernel's frames, then the user's (a kernel side apart has no user frames). */
	uint32_t ids[3 * BPFSYM_MAX_FRAMES], nr = 0;
	int err;

	rec->time = ts > o->base ? ts - o->base : 0;
	if (h->cgpath && (err = report_writer__cgroup(o->w, h->cgroup, h->cgpath)) && err != -EINVAL &&
	    err != -E2BIG)
		return err;
	err = kh ? held_frames_out(o, kh, ids, &nr) : 0;
	err = err ?: held_frames_out(o, h, ids, &nr);
	err = err ?: report_writer__stack(o->w, ids, nr, &rec->stack);
	return err ? err : report_writer__offcpu(o->w, rec);
}

int ingest__offcpu(struct ingest *in, uint64_t key, uint64_t kkey, uint64_t ns, uint64_t count, uint64_t ts)
{
	struct ingest_off *o = &in->off;
	struct held *h, *kh = NULL;
	struct rpt_offcpu rec;
	size_t i, ki = SIZE_MAX;
	int err;

	if (!ns || !count)
		return 0;
	o->sums++;
	i = held_find(o, key);
	/* A kernel side's key is tagged, a whole stack's never is: neither stands for the other. */
	if (kkey)
		ki = kkey & BPFSYM_OFFCPU_KTAG ? held_find(o, kkey) : SIZE_MAX;
	if (i == SIZE_MAX || (key & BPFSYM_OFFCPU_KTAG) || (kkey && ki == SIZE_MAX)) {
		in->st.offcpu[RPT_OC_LOST] += count;
		in->st.offcpu[RPT_OC_LOST_NS] += ns;
		return 0;
	}
	if (o->v[i]->nr_wait)
		held_rename(in, i);
	h = o->v[i];
	h->used = o->sums;
	if (ki != SIZE_MAX) {
		kh = o->v[ki];
		kh->used = o->sums;
	}
	rec = (struct rpt_offcpu){
		.cgroup = h->cgroup, .comm = h->comm, .pid = h->pid, .tid = h->tid, .state = h->state,
		.ns = ns, .count = count,
	};
	/* The taps first: the file's error ends the recording, a tap's only the tap. */
	for (i = 1; i < ARRAY_SIZE(in->out); i++) {
		struct ingest_out *t = &in->out[i];

		if (t->w && !t->err)
			t->err = held_out(t, kh, h, &rec, ts);
	}
	if (!in->out[0].w)
		return 0;
	err = held_out(&in->out[0], kh, h, &rec, ts);
	if (err)
		return err;
	in->st.offcpu[RPT_OC_RECORDS]++;
	in->st.offcpu[RPT_OC_NS] += ns;
	if (h->cut) {
		in->st.offcpu[RPT_OC_CUT] += count;
		in->st.offcpu[RPT_OC_CUT_NS] += ns;
	}
	return 0;
}

size_t ingest__offcpu_forgotten(struct ingest *in, uint64_t *keys, size_t max)
{
	struct ingest_off *o = &in->off;
	size_t n = o->nr_forget < max ? o->nr_forget : max;

	memcpy(keys, o->forget, n * sizeof(*keys));
	memmove(o->forget, o->forget + n, (o->nr_forget - n) * sizeof(*keys));
	o->nr_forget -= n;
	return n;
}

void ingest__offcpu_free(struct ingest_off *o)
{
	for (size_t i = 0; i < o->nr; i++)
		free(o->v[i]);
	free(o->v);
	htab__free(&o->tab);
	memset(o, 0, sizeof(*o));
}
