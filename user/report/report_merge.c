// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_merge: several loaded reports as one (`bpfsym report FILE...`,
 * the files of a rotated recording).  The views need one report with one
 * id space, so modules, frames and stacks are interned again under new
 * ids with the writer's identities (report_write.c), and samples are
 * appended with their stack ids remapped and their times moved onto the
 * earliest file's start.  Strings are not copied: each input's string
 * chunks move to the merged report, which the pointers keep pointing into;
 * the rest of an input is freed as soon as it is merged.  The inputs went
 * through the reader's checks, so every id in them is in range; what is
 * checked here is what merging adds: the id caps and the sample count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/htab.h"
#include "report/report_fmt.h"
#include "report/report_int.h"
#include "report/report_windex.h"

/* Samples a merge may hold: 40 bytes each, so at most 40 GiB of them. */
#define MERGE_SAMPLES_MAX	((size_t)1 << 30)

/* The merged report being built, and the tables that find its ids by identity. */
struct merger {
	struct report *m;
	struct htab mod_tab, frame_tab, stack_tab;	/* hash -> id + 1 */
	uint32_t *map_mods, *map_frames, *map_stacks;	/* the current input's id -> merged id */
	size_t map_bytes;	/* what the three maps hold, counted in m->mem like the tables */
};

/*
 * Room for one more entry in @t, one of @g's tables, counted against the
 * merged report's bound once it has grown (the bound is passed by at
 * most one growth of a table before the merge is refused).  0 or -errno.
 */
static int merger__reserve(struct merger *g, struct htab *t)
{
	size_t before = htab__bytes(t);
	int err = htab__reserve(t, 1);

	return err ?: report__charge(g->m, before, htab__bytes(t));
}

static bool mod_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct rpt_module *a = &((const struct report *)ctx)->mods[val - 1], *b = key;

	return a->kind == b->kind && a->runtime == b->runtime && a->dev == b->dev && a->ino == b->ino &&
	       !strcmp(a->path, b->path) && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/*
 * The writer's frame identity: (kind, module, offset), or (kind, addr)
 * without a module; an interpreter frame's name too (frame_name).
 */
static uint64_t frame_key(const struct rpt_frame *f)
{
	return f->module == RPT_NONE ? f->addr : f->offset;
}

static uint64_t frame_name(const struct rpt_frame *f)
{
	return f->kind == RPT_FRAME_INTERP && f->sym ? hash_bytes(1, f->sym, strlen(f->sym)) : 0;
}

static bool frame_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct rpt_frame *a = &((const struct report *)ctx)->frames[val - 1], *b = key;

	return a->kind == b->kind && a->module == b->module && frame_key(a) == frame_key(b) &&
	       (a->kind != RPT_FRAME_INTERP || a->sym == b->sym ||
		(a->sym && b->sym && !strcmp(a->sym, b->sym)));
}

struct stack_key {
	const uint32_t *ids;
	uint32_t nr;
};

static bool stack_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct report *m = ctx;
	const struct rstack *a = &m->stacks[val - 1];
	const struct stack_key *b = key;

	return a->nr == b->nr && (!b->nr || !memcmp(m->stack_data + a->off, b->ids, b->nr * sizeof(*b->ids)));
}

/* Module @k of an input, as a merged id in *@id.  0, -E2BIG or -ENOMEM. */
static int merge_module(struct merger *g, const struct rpt_module *k, uint32_t *id)
{
	struct report *m = g->m;
	uint64_t h = rpt_mod_hash(k->kind, k->runtime, k->path, k->dev, k->ino, k->build_id,
				  k->build_id_len);
	uint64_t v = htab__find(&g->mod_tab, h, mod_eq, m, k);
	int err;

	if (v) {
		*id = (uint32_t)(v - 1);
		return 0;
	}
	if (m->nr_mods >= RPT_ID_LIMIT)
		return -E2BIG;
	err = merger__reserve(g, &g->mod_tab);
	err = err ?: report__grow(m, (void **)&m->mods, &m->cap_mods, m->nr_mods + 1, sizeof(*m->mods));
	if (err)
		return err;
	m->mods[m->nr_mods] = *k;
	*id = (uint32_t)m->nr_mods++;
	return htab__add(&g->mod_tab, h, (uint64_t)*id + 1);
}

/*
 * Frame @f of an input, its module already merged, as a merged id: the
 * first file's names win, but over a frame whose file did not answer in
 * time (written unnamed, then again with its name once it did).
 */
static int merge_frame(struct merger *g, const struct rpt_frame *src, uint32_t *id)
{
	struct report *m = g->m;
	struct rpt_frame f = *src;
	uint64_t h, v;
	int err;

	if (f.module != RPT_NONE)
		f.module = g->map_mods[f.module];
	h = wframe_hash(f.kind, f.module, frame_key(&f), frame_name(&f));
	v = htab__find(&g->frame_tab, h, frame_eq, m, &f);
	if (v) {
		*id = (uint32_t)(v - 1);
		if (m->frames[*id].reason == RPT_FILE_NO_ANSWER && f.reason != RPT_FILE_NO_ANSWER)
			m->frames[*id] = f;
		return 0;
	}
	if (m->nr_frames >= RPT_ID_LIMIT)
		return -E2BIG;
	err = merger__reserve(g, &g->frame_tab);
	err = err ?: report__grow(m, (void **)&m->frames, &m->cap_frames, m->nr_frames + 1,
				  sizeof(*m->frames));
	if (err)
		return err;
	m->frames[m->nr_frames] = f;
	*id = (uint32_t)m->nr_frames++;
	return htab__add(&g->frame_tab, h, (uint64_t)*id + 1);
}

/* Stack @sid of @r, its frames already merged, as a merged id. */
static int merge_stack(struct merger *g, const struct report *r, uint32_t sid, uint32_t *id)
{
	const struct rstack *s = &r->stacks[sid];
	struct report *m = g->m;
	struct stack_key k;
	uint64_t h, v;
	uint32_t i, *ids;
	int err;

	/* The remapped ids go where the stack would be stored: no buffer of their own. */
	if (s->nr > SIZE_MAX - m->nr_stack_data)
		return -ENOMEM;
	err = report__grow(m, (void **)&m->stack_data, &m->cap_stack_data, m->nr_stack_data + s->nr,
			   sizeof(*m->stack_data));
	if (err)
		return err;
	/* An empty stack may come before any storage exists: no pointer arithmetic on NULL. */
	ids = s->nr ? m->stack_data + m->nr_stack_data : NULL;
	for (i = 0; i < s->nr; i++)
		ids[i] = g->map_frames[r->stack_data[s->off + i]];
	h = wstack_hash(ids, s->nr);
	k = (struct stack_key){ ids, s->nr };
	v = htab__find(&g->stack_tab, h, stack_eq, m, &k);
	if (v) {
		*id = (uint32_t)(v - 1);
		return 0;
	}
	if (m->nr_stacks >= RPT_ID_LIMIT)
		return -E2BIG;
	err = merger__reserve(g, &g->stack_tab);
	err = err ?: report__grow(m, (void **)&m->stacks, &m->cap_stacks, m->nr_stacks + 1,
				  sizeof(*m->stacks));
	if (err)
		return err;
	m->stacks[m->nr_stacks] = (struct rstack){ m->nr_stack_data, s->nr };
	m->nr_stack_data += s->nr;
	*id = (uint32_t)m->nr_stacks++;
	return htab__add(&g->stack_tab, h, (uint64_t)*id + 1);
}

/* Fill @g's id maps for input @r, growing them to its tables.  0 or -errno. */
static int merge_tables(struct merger *g, const struct report *r)
{
	size_t i, bytes = (r->nr_mods + r->nr_frames + r->nr_stacks + 3) * sizeof(uint32_t);
	size_t before = g->m->cgroups.bytes;
	int err = 0;

	free(g->map_mods);
	free(g->map_frames);
	free(g->map_stacks);
	g->map_mods = g->map_frames = g->map_stacks = NULL;
	err = report__charge(g->m, g->map_bytes, bytes);
	g->map_bytes = err ? 0 : bytes;
	if (err)
		return err;
	g->map_mods = malloc((r->nr_mods + 1) * sizeof(*g->map_mods));
	g->map_frames = malloc((r->nr_frames + 1) * sizeof(*g->map_frames));
	g->map_stacks = malloc((r->nr_stacks + 1) * sizeof(*g->map_stacks));
	if (!g->map_mods || !g->map_frames || !g->map_stacks)
		return -ENOMEM;
	for (i = 0; i < r->nr_mods && !err; i++)
		err = merge_module(g, &r->mods[i], &g->map_mods[i]);
	for (i = 0; i < r->nr_frames && !err; i++)
		err = merge_frame(g, &r->frames[i], &g->map_frames[i]);
	for (i = 0; i < r->nr_stacks && !err; i++)
		err = merge_stack(g, r, (uint32_t)i, &g->map_stacks[i]);
	/* Cgroup ids are the kernel's, not the file's: kept as they are, each path once. */
	for (i = 0; i < r->cgroups.nr && !err; i++)
		err = rpt_cgtab__add(&g->m->cgroups, r->cgroups.v[i].id, r->cgroups.v[i].path);
	return err ?: report__charge(g->m, before, g->m->cgroups.bytes);
}

/* Append @r's samples, @shift ns later than its own start.  0 or -errno. */
static int merge_samples(struct merger *g, const struct report *r, uint64_t shift)
{
	struct report *m = g->m;
	struct rpt_sample *s;
	size_t i;
	int err;

	if (r->nr_samples > MERGE_SAMPLES_MAX - m->nr_samples)
		return -E2BIG;
	err = report__grow(m, (void **)&m->samples, &m->cap_samples, m->nr_samples + r->nr_samples,
			   sizeof(*m->samples));
	if (err)
		return err;
	for (i = 0; i < r->nr_samples; i++) {
		s = &m->samples[m->nr_samples++];
		*s = r->samples[i];
		s->stack = g->map_stacks[s->stack];
		s->time += shift;
	}
	return 0;
}

/* Append @r's OFFCPU records, as merge_samples() its samples.  0 or -errno. */
static int merge_offcpu(struct merger *g, const struct report *r, uint64_t shift)
{
	struct report *m = g->m;
	struct rpt_offcpu *o;
	size_t i;
	int err;

	if (r->nr_offcpu > MERGE_SAMPLES_MAX - m->nr_offcpu)
		return -E2BIG;
	err = report__grow(m, (void **)&m->offcpu, &m->cap_offcpu, m->nr_offcpu + r->nr_offcpu,
			   sizeof(*m->offcpu));
	if (err)
		return err;
	for (i = 0; i < r->nr_offcpu; i++) {
		o = &m->offcpu[m->nr_offcpu++];
		*o = r->offcpu[i];
		o->stack = g->map_stacks[o->stack];
		o->time += shift;
	}
	return 0;
}

/*
 * Move @r's string chunks to the end of @m's list: the merged records
 * point into them.  Their bytes count in @m's memory now (over its bound:
 * -E2BIG, @m holds them all the same, to be freed with it).
 */
static int take_chunks(struct report *m, struct report *r)
{
	struct chunk **tail = &m->chunks, *ch;
	size_t bytes = 0;

	while (*tail)
		tail = &(*tail)->next;
	*tail = r->chunks;
	r->chunks = NULL;
	for (ch = *tail; ch; ch = ch->next)
		bytes += sizeof(*ch) + ch->cap;
	r->mem -= bytes < r->mem ? bytes : r->mem;
	if (report__charge(m, 0, bytes)) {
		m->mem += bytes;
		return -E2BIG;
	}
	return 0;
}

/* The earlier start first (wall clock; the given order between equals). */
static int by_start(const void *pa, const void *pb)
{
	const struct report *a = *(struct report *const *)pa, *b = *(struct report *const *)pb;

	if (a->hdr.start_wall_ns != b->hdr.start_wall_ns)
		return a->hdr.start_wall_ns < b->hdr.start_wall_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* ns from @first's start to @r's: by the monotonic clock within a boot, else by the wall clock. */
static uint64_t start_shift(const struct rpt_header *first, const struct rpt_header *r)
{
	if (!strcmp(first->boot_id, r->boot_id) && r->start_mono_ns >= first->start_mono_ns)
		return r->start_mono_ns - first->start_mono_ns;
	return r->start_wall_ns > first->start_wall_ns ? r->start_wall_ns - first->start_wall_ns : 0;
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))

/* Add @r's END counters into the merged header @h (the first file's fields already there). */
static void merge_counts(struct rpt_header *h, const struct rpt_header *r)
{
	struct rpt_unwind *u = &h->unw;
	const struct rpt_unwind *ru = &r->unw;
	size_t i;

	h->end_wall_ns = MAX_OF(h->end_wall_ns, r->end_wall_ns);
	h->samples += r->samples;
	h->lost_samples += r->lost_samples;
	h->lost_events += r->lost_events;
	h->idle += r->idle;
	h->lost_children += r->lost_children;
	h->missed_vma_busy += r->missed_vma_busy;
	h->missed_syscalls += r->missed_syscalls;
	h->bad_records += r->bad_records;
	h->unwritten += r->unwritten;
	for (i = 0; i < RPT_UEND_MAX; i++)
		h->uend[i] += r->uend[i];
	for (i = 0; i < RPT_CAPPED_MAX; i++)
		h->capped[i] += r->capped[i];
	for (i = 0; i < RPT_DINFOD_MAX; i++)
		h->dinfod[i] += r->dinfod[i];
	for (i = 0; i < RPT_INTERP_MAX; i++)
		h->interp[i] += r->interp[i];
	for (i = 0; i < RPT_OFFCPU_MAX; i++)
		h->offcpu[i] += r->offcpu[i];
	/* Off-CPU settings: recorded if any file recorded it, every state any kept, the largest minimum. */
	h->off_cpu |= r->off_cpu;
	h->off_cpu_states |= r->off_cpu_states;
	h->off_cpu_min_ns = MAX_OF(h->off_cpu_min_ns, r->off_cpu_min_ns);
	h->call_graph = h->call_graph ? h->call_graph : r->call_graph;
	h->complete = h->complete && r->complete;
	/* The unwinder's figures are its state when the file ended, not counts of the file's time. */
	u->tables = MAX_OF(u->tables, ru->tables);
	u->ready = MAX_OF(u->ready, ru->ready);
	u->none = MAX_OF(u->none, ru->none);
	u->failed = MAX_OF(u->failed, ru->failed);
	u->rows = MAX_OF(u->rows, ru->rows);
	u->bytes = MAX_OF(u->bytes, ru->bytes);
	u->build_ns = MAX_OF(u->build_ns, ru->build_ns);
	u->max_build_ns = MAX_OF(u->max_build_ns, ru->max_build_ns);
	u->over_mem = MAX_OF(u->over_mem, ru->over_mem);
	u->over_rows = MAX_OF(u->over_rows, ru->over_rows);
	u->over_tables = MAX_OF(u->over_tables, ru->over_tables);
	u->over_procs = MAX_OF(u->over_procs, ru->over_procs);
	u->over_ranges = MAX_OF(u->over_ranges, ru->over_ranges);
	u->pending = ru->pending;	/* the latest file's: those still unbuilt at its end */
}

/* Whether @a and @b disagree on what a merged view would mix up; the first such field named in @what. */
static bool header_mismatch(const struct rpt_header *a, const struct rpt_header *b, const char **what)
{
	*what = strcmp(a->hostname, b->hostname) ? "hosts" :
		strcmp(a->boot_id, b->boot_id) ? "boots" :
		strcmp(a->event, b->event) ? "events" :
		a->freq != b->freq ? "frequencies" :
		a->flags != b->flags ? "stack kinds (--user-only, --kernel-only)" :
		a->text_addr != b->text_addr ? "kernel _text addresses" :
		a->off_cpu != b->off_cpu || a->off_cpu_states != b->off_cpu_states ||
		a->off_cpu_min_ns != b->off_cpu_min_ns ? "off-CPU settings (--off-cpu, --off-cpu-thresh, "
		"--off-cpu-state)" : NULL;
	return *what != NULL;
}

/* Distinct pids of @m's samples: what "processes seen" is across files.  Its set counts in @m's bound. */
static int count_pids(struct report *m, uint64_t *nr)
{
	struct htab set = {};
	size_t i, bytes = 0;
	int err = 0;

	for (i = 0; i < m->nr_samples && !err; i++) {
		if (htab__has_u32(&set, m->samples[i].pid))
			continue;
		err = htab__add_u32(&set, m->samples[i].pid);
		err = err ?: report__charge(m, bytes, htab__bytes(&set));
		bytes = err ? bytes : htab__bytes(&set);
	}
	*nr = htab__nr(&set);
	htab__free(&set);
	m->mem -= bytes;
	return err;
}

/* "FIRST and N more files" as the merged report's source (the views' title). */
static int merge_source(struct report *m, const struct report *first, size_t n)
{
	const char *src = first->source ? first->source : "<memory>";
	size_t len = strlen(src) + 64;

	m->source = malloc(len);
	if (!m->source)
		return -ENOMEM;
	snprintf(m->source, len, "%s and %zu more file%s", src, n - 1, n == 2 ? "" : "s");
	return 0;
}

/* Merge the sorted @v into @g->m.  0 or -errno; @v's reports freed as they are merged. */
static int merge_all(struct merger *g, struct report **v, size_t n, char *warn, size_t warnlen)
{
	const struct rpt_header first_hdr = v[0]->hdr, *first = &first_hdr;
	struct report *m = g->m;
	const char *what;
	bool warned = false;
	size_t i;
	int err;

	m->hdr = *first;
	m->hdr.samples = 0;
	memset(&m->hdr.uend, 0, sizeof(m->hdr.uend));
	memset(&m->hdr.capped, 0, sizeof(m->hdr.capped));
	memset(&m->hdr.dinfod, 0, sizeof(m->hdr.dinfod));
	memset(&m->hdr.interp, 0, sizeof(m->hdr.interp));
	memset(&m->hdr.offcpu, 0, sizeof(m->hdr.offcpu));
	m->hdr.lost_samples = m->hdr.lost_events = m->hdr.idle = m->hdr.lost_children = 0;
	m->hdr.missed_vma_busy = m->hdr.missed_syscalls = m->hdr.bad_records = m->hdr.unwritten = 0;
	m->hdr.complete = true;
	err = merge_source(m, v[0], n);
	for (i = 0; i < n && !err; i++) {
		if (!warned && header_mismatch(first, &v[i]->hdr, &what)) {
			snprintf(warn, warnlen, "the %zu files come from different %s: their samples are "
				 "counted together, the header is the earliest file's", n, what);
			warned = true;
		}
		err = merge_tables(g, v[i]);
		err = err ?: merge_samples(g, v[i], start_shift(first, &v[i]->hdr));
		err = err ?: merge_offcpu(g, v[i], start_shift(first, &v[i]->hdr));
		if (err)
			break;
		merge_counts(&m->hdr, &v[i]->hdr);
		err = take_chunks(m, v[i]);
		/* Freed now: the merge holds its samples, an input need not stay beside it. */
		report__free(v[i]);
		v[i] = NULL;
	}
	err = err ?: count_pids(m, &m->hdr.nr_procs);
	if (!m->hdr.complete)
		m->hdr.end_wall_ns = 0;
	return err;
}

/* Free @g's maps and tables, and count them out of g->m's memory. */
static void merger__free(struct merger *g)
{
	size_t bytes = g->map_bytes + htab__bytes(&g->mod_tab) + htab__bytes(&g->frame_tab) +
		       htab__bytes(&g->stack_tab);

	if (g->m)
		g->m->mem -= bytes < g->m->mem ? bytes : g->m->mem;
	free(g->map_mods);
	free(g->map_frames);
	free(g->map_stacks);
	htab__free(&g->mod_tab);
	htab__free(&g->frame_tab);
	htab__free(&g->stack_tab);
}

int report__dedupe(struct report *r)
{
	struct merger g = {};
	struct report tmp;
	int err;

	g.m = calloc(1, sizeof(*g.m));
	if (!g.m)
		return -ENOMEM;
	/* A bound of its own, as large as the file's: both copies live until the swap. */
	g.m->mem_max = r->mem_max;
	g.m->mem = sizeof(*g.m);
	g.m->file_bytes = r->file_bytes;
	err = merge_tables(&g, r);
	err = err ?: merge_samples(&g, r, 0);
	err = err ?: merge_offcpu(&g, r, 0);
	merger__free(&g);
	err = err ?: take_chunks(g.m, r);
	if (err) {
		report__free(g.m);
		return err;
	}
	g.m->hdr = r->hdr;
	g.m->source = r->source;
	r->source = NULL;
	/* @r becomes the merged report; what it was is freed under the other name. */
	tmp = *r;
	*r = *g.m;
	*g.m = tmp;
	report__free(g.m);
	return 0;
}

struct report *report__merge(struct report **v, size_t n, char *warn, size_t warnlen)
{
	struct merger g = {};
	size_t i;
	int err = 0;

	if (warn && warnlen)
		warn[0] = '\0';
	if (!v || !n)
		err = -EINVAL;
	else if (n > REPORT_MERGE_MAX)
		err = -E2BIG;
	for (i = 0; i < n && !err; i++)
		if (!v[i])
			err = -EINVAL;
	if (!err && !(g.m = calloc(1, sizeof(*g.m))))
		err = -ENOMEM;
	/* The merge's bound: its inputs' together (each of them is freed once merged). */
	for (i = 0; i < n && !err; i++) {
		g.m->mem_max += v[i]->mem_max;
		g.m->file_bytes += v[i]->file_bytes;
	}
	if (!err) {
		g.m->mem = sizeof(*g.m);
		qsort(v, n, sizeof(*v), by_start);
		err = merge_all(&g, v, n, warn, warn ? warnlen : 0);
	}
	for (i = 0; v && i < n; i++)
		report__free(v[i]);
	merger__free(&g);
	if (err) {
		report__free(g.m);
		errno = -err;
		return NULL;
	}
	return g.m;
}
