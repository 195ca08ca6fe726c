// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest_sample: a SAMPLE record -> its frames, named.  Kernel entries are
 * addresses; the user side is slots (include/bpfsym.h, BPFSYM_FK_SHIFT),
 * decoded slot by slot into frames of their kind: native ones named by
 * the symbolizer, interpreter ones by the runtime of their kind
 * (runtime/runtime.h).  A frame ingest cannot decode (a kind not known, a
 * frame cut short) ends the user side there, counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "ingest/ingest_int.h"
#include "runtime/runtime.h"

_Static_assert((int)RPT_RT_PYTHON == (int)BPFSYM_FK_PYTHON, "a source module's runtime is its frame kind");
_Static_assert(RPT_INTERP_GONE - RPT_INTERP_GONE + RPT_IC_GONE == RT_MISS_GONE &&
	       RPT_INTERP_NO_ANSWER - RPT_INTERP_GONE + RPT_IC_GONE == RT_MISS_NO_ANSWER &&
	       RT_MISS_MAX == RPT_IC_NO_ANSWER + 1, "runtime misses, frame reasons and counters line up");

/* The frame reason (enum rpt_reason) of runtime miss @miss (enum rt_miss). */
static uint32_t miss_reason(uint32_t miss)
{
	return miss == RT_MISS_NONE ? RPT_OK : RPT_INTERP_GONE + miss - RT_MISS_GONE;
}

static bool src_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct sym_module *a = ((const struct src_mods *)ctx)->v[val - 1], *b = key;

	return a->rpt.path == b->rpt.path && a->rpt.runtime == b->rpt.runtime;
}

/* The source module of @file (interned by the runtime of @fk); NULL past the cap or memory. */
static struct sym_module *source_module(struct src_mods *sm, const char *file, uint32_t fk)
{
	struct sym_module k = { .rpt = { .kind = RPT_MOD_SOURCE, .path = file, .runtime = fk } }, *m;
	uint64_t h = hash_u64(hash_u64(0, (uintptr_t)file), fk), v;

	v = htab__find(&sm->tab, h, src_eq, sm, &k);
	if (v)
		return sm->v[v - 1];
	if (sm->nr >= INGEST_SRC_MODS_MAX || htab__reserve(&sm->tab, 1))
		return NULL;
	if (sm->nr == sm->cap) {
		size_t cap = sm->cap ? 2 * sm->cap : 64;
		struct sym_module **nv = realloc(sm->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		sm->v = nv;
		sm->cap = cap;
	}
	m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	*m = k;
	sm->v[sm->nr++] = m;
	htab__add(&sm->tab, h, sm->nr);	/* reserved: cannot fail */
	return m;
}

void ingest__src_free(struct src_mods *sm)
{
	for (size_t i = 0; i < sm->nr; i++)
		free(sm->v[i]);
	free(sm->v);
	htab__free(&sm->tab);
}

/*
 * Name interpreter frame @nf (its slots, pid @pid and pstart set) through
 * its runtime; @p: the process's model (NULL: none).  A read still
 * running leaves it waiting (rt_wait), unnamed "did not answer" until
 * asked again.
 */
static void interp_name(struct ingest *in, uint32_t pid, const struct proc *p, struct named_frame *nf)
{
	struct rt_frame f = {
		.pid = pid,
		.pstart = nf->pstart,
		.slot0 = bpfsym_fk_slot0(nf->fk, nf->addr),
		.slot1 = nf->slot1,
	};
	struct rt_name nm;

	nf->rt_wait = runtimes__name(in->o.runtimes, nf->fk, &f, p, &nm) == -EAGAIN;
	nf->sf = (struct sym_frame){ .sym = nm.func, .offset = nm.line, .reason = miss_reason(nm.reason) };
	/* The line's offset into its function, as a native frame's into its symbol. */
	if (nm.func && nm.first_line && nm.line >= nm.first_line)
		nf->sf.sym_off = nm.line - nm.first_line;
	if (nm.func && nm.file)
		nf->sf.module = source_module(&in->src, nm.file, nf->fk);
}

bool ingest__rt_retry(void *ctx, uint32_t pid, struct named_frame *f)
{
	struct ingest *in = ctx;

	/* The model may have let the process go: a runtime that needs it says so (RT_MISS_GONE). */
	interp_name(in, pid, proc_table__find(in->o.procs, pid, f->pstart), f);
	return f->rt_wait;
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
		/* The runtimes look for their interpreters in what was read. */
		for (size_t i = 0; i < proc__nr_maps(p); i++)
			runtimes__mapped(in->o.runtimes, p, proc__map_at(p, i));
	}
	return p;
}

/*
 * Decode the @nu user slots of @s (after its @nk kernel entries) into
 * frames from @nf on, leaf first, named; how many frames.  A native
 * caller's address is a return address: ip - 1 is looked up, so a call
 * that is the last instruction of a function names that function; the
 * frame keeps the address sampled.
 */
static uint32_t user_frames(struct ingest *in, const struct bpfsym_sample *s, const struct proc *p,
			    uint32_t nk, uint32_t nu, struct named_frame *nf)
{
	const __u64 *slot = s->ips + nk;
	uint32_t i = 0, n = 0, fk, slots;

	for (; i < nu; i += slots, n++, nf++) {
		fk = bpfsym_fk_kind(slot[i]);
		slots = bpfsym_fk_slots(fk);
		/* Past a frame we cannot size, every slot could be anything: the side ends. */
		if (!slots || i + slots > nu) {
			in->st.interp[slots ? RPT_IC_CUT_SHORT : RPT_IC_CUT_KIND]++;
			break;
		}
		*nf = (struct named_frame){ .addr = slot[i], .kind = RPT_FRAME_USER };
		if (fk == BPFSYM_FK_NATIVE) {
			symbolizer__user(in->o.sym, s->pid, p, n ? nf->addr - 1 : nf->addr, &nf->sf);
			continue;
		}
		nf->kind = RPT_FRAME_INTERP;
		nf->addr = slot[i] & BPFSYM_FK_ADDR_MASK;
		nf->fk = fk;
		nf->slot1 = slot[i + 1];
		nf->pstart = s->pstart;
		interp_name(in, s->pid, p, nf);
	}
	return n;
}

uint32_t ingest__name_frames(struct ingest *in, const struct bpfsym_sample *s, uint32_t nk, uint32_t nu)
{
	struct named_frame *nf = in->frames;
	struct proc *p;
	uint32_t i;

	for (i = 0; i < nk; i++, nf++) {
		*nf = (struct named_frame){ .addr = s->ips[i], .kind = RPT_FRAME_KERNEL };
		symbolizer__kernel(in->o.sym, i ? nf->addr - 1 : nf->addr, &nf->sf);
	}
	/* Every sampled process is counted, kernel threads too. */
	p = proc_of(in, s->pid, s->pstart);
	if (p)
		proc__note_sampled(p);
	return nk + user_frames(in, s, p, nk, nu, nf);
}

int ingest__sample(struct ingest *in, const struct bpfsym_sample *s, size_t len)
{
	uint32_t nk, nu, nr, why;
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
	nr = ingest__name_frames(in, s, nk, nu);
	memcpy(comm, s->comm, BPFSYM_COMM_LEN);
	comm[BPFSYM_COMM_LEN] = '\0';
	out.pid = s->pid;
	out.tid = s->tid;
	out.cpu = s->hdr.cpu;
	out.cgroup = s->cgroup_id;
	out.comm = comm;
	cgpath = cgpaths__lookup(in->o.cgroups, s->cgroup_id, s->pid, s->hdr.ts);
	/* Written once its files answered (without memory to keep it: now, as it is). */
	if (defer__waits(in->def, s->pid, in->frames + nk, nr - nk) &&
	    !defer__push(in->def, &out, s->hdr.ts, cgpath, in->frames, nr)) {
		in->st.deferred++;
		return defer__trim(in->def, ingest__deferred_write, in);
	}
	return ingest__write(in, in->frames, &out, nr, s->hdr.ts, cgpath);
}
