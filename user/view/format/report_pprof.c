// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_pprof: the pprof writer, pass one.  The kept samples are
 * aggregated on (stack, pid, tid, comm, cgroup), and every frame, module
 * and function they reach gets an id, every string the profile will hold
 * interned: the other tables refer to the string table by index, so it
 * must be complete before anything is packed (report_pprof_pack.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "report/container.h"
#include "view/format/report_pprof.h"
#include "view/format/report_pprof_int.h"

/* ---- the string table ---- */

/* Intern @len bytes at @p, which must not point into @s. */
static int strs__add(struct strs *s, const char *p, size_t len, uint32_t *id)
{
	return strtab__intern_id(&s->set, p, len, id);
}

/*
 * The length of the UTF-8 character at @p (before @end) if it is valid,
 * printable text, else 0: no C0/C1 control or DEL (a name must not drive
 * the terminal pprof prints it on), no overlong form, surrogate or code
 * point past U+10FFFF (proto3 strings must be valid UTF-8).
 */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xc2)
		lo = 0xa0;	/* U+0080..U+009F: C1 controls */
	else if (c == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (c == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (c == 0xf0)
		lo = 0x90;	/* overlong */
	else if (c == 0xf4)
		hi = 0x8f;	/* past U+10FFFF */
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Intern @str with every byte that utf8_len() refuses replaced by '?'. */
static int strs__clean(struct strs *s, const char *str, uint32_t *id)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + strlen(str);
	struct rpt_buf *b = &s->clean;
	int err;

	b->len = 0;
	err = rpt_buf__reserve(b, (size_t)(end - p));
	if (err)
		return err;
	while (p < end) {
		size_t n = utf8_len(p, end);

		if (n) {
			memcpy(b->data + b->len, p, n);
			b->len += n;
			p += n;
		} else {
			b->data[b->len++] = '?';
			p++;
		}
	}
	return strs__add(s, (const char *)b->data, b->len, id);
}

static int strs__printf(struct strs *s, uint32_t *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Intern a formatted string, cleaned; the arguments may point into nothing of @s. */
static int strs__printf(struct strs *s, uint32_t *id, const char *fmt, ...)
{
	va_list ap;
	char *str;
	int n, err;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	err = strs__clean(s, str, id);
	free(str);
	return err;
}

static void strs__free(struct strs *s)
{
	strtab__free(&s->set);
	rpt_buf__free(&s->clean);
}

/* ---- the profile being built ---- */

/* Append an element to the array *@arr of *@nr (capacity *@cap); its index in *@idx. */
static int push(void **arr, size_t *nr, size_t *cap, size_t elem, uint32_t *idx)
{
	int err;

	if (*nr >= RPT_ID_LIMIT)
		return -E2BIG;
	err = rpt_grow(arr, cap, *nr + 1, elem);
	if (err)
		return err;
	*idx = (uint32_t)(*nr)++;
	return 0;
}

/* What a module is called when its path is empty, as the folded format says it. */
static const char *module_file(const struct rpt_module *m)
{
	if (m->path && m->path[0])
		return m->path;
	switch (m->kind) {
	case RPT_MOD_KERNEL:
		return "[kernel.kallsyms]";
	case RPT_MOD_ANON:
		return "[anon]";
	default:
		return "[unknown]";
	}
}

static bool map_eq(const void *ctx, const void *key, uint64_t val)
{
	return ((const struct pprof *)ctx)->maps[val - 1].mod == key;
}

/* A new mapping of @m, its index in *@idx. */
static int pprof__new_mapping(struct pprof *p, const struct rpt_module *m, uint64_t h,
			      uint32_t *idx)
{
	char hex[2 * RPT_BUILD_ID_MAX + 1];
	struct map *mp;
	uint32_t i;
	int err;

	err = htab__reserve(&p->map_tab, 1);
	err = err ?: push((void **)&p->maps, &p->nr_maps, &p->cap_maps, sizeof(*p->maps), idx);
	if (err)
		return err;
	mp = &p->maps[*idx];
	*mp = (struct map){ .mod = m, .start = UINT64_MAX };
	err = htab__add(&p->map_tab, h, (uint64_t)*idx + 1);	/* reserved: cannot fail */
	for (i = 0; i < m->build_id_len && i < RPT_BUILD_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	hex[2 * i] = '\0';
	err = err ?: strs__clean(&p->strs, module_file(m), &mp->file);
	return err ?: strs__add(&p->strs, hex, 2 * i, &mp->build_id);
}

/*
 * The mapping of @m, widened to cover frame @f.  Its file offset is
 * memory_start - bias, bias being the lowest (address - file offset) of
 * its frames: a caller frame's offset is the one of its return address
 * - 1 (what was looked up), one less than a leaf's.  Exact when the module
 * sat at one address in every process sampled, which is pprof's model of
 * one address space.  Kernel and anonymous memory have no file offset.
 */
static int pprof__mapping(struct pprof *p, const struct rpt_module *m, const struct rpt_frame *f,
			  uint32_t *idx)
{
	uint64_t h = hash_u64(2, (uintptr_t)m), v = htab__find(&p->map_tab, h, map_eq, p, m);
	bool has_off = f->kind == RPT_FRAME_USER && m->kind != RPT_MOD_KERNEL && m->kind != RPT_MOD_ANON;
	struct map *mp;
	int err;

	*idx = v ? (uint32_t)(v - 1) : RPT_NONE;
	if (*idx == RPT_NONE) {
		err = pprof__new_mapping(p, m, h, idx);
		if (err)
			return err;
	}
	mp = &p->maps[*idx];
	if (f->addr < mp->start)
		mp->start = f->addr;
	if (has_off && (!mp->has_bias || f->addr - f->offset < mp->bias)) {
		mp->bias = f->addr - f->offset;
		mp->has_bias = true;
	}
	if (f->addr >= mp->limit)
		mp->limit = f->addr == UINT64_MAX ? UINT64_MAX : f->addr + 1;
	return 0;
}

static bool func_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct func *a = &((const struct pprof *)ctx)->funcs[val - 1], *b = key;

	return a->name == b->name && a->file == b->file;
}

/* The function (@name, @file), both string ids. */
static int pprof__function(struct pprof *p, uint32_t name, uint32_t file, uint32_t *idx)
{
	struct func k = { .name = name, .file = file };
	uint64_t h = hash_u64(hash_u64(3, name), file), v = htab__find(&p->func_tab, h, func_eq, p, &k);
	int err;

	if (v) {
		*idx = (uint32_t)(v - 1);
		return 0;
	}
	err = htab__reserve(&p->func_tab, 1);
	err = err ?: push((void **)&p->funcs, &p->nr_funcs, &p->cap_funcs, sizeof(*p->funcs), idx);
	if (err)
		return err;
	p->funcs[*idx] = k;
	return htab__add(&p->func_tab, h, (uint64_t)*idx + 1);	/* reserved: cannot fail */
}

/*
 * The name frame @f shows: the namer's symbol, else what the folded format
 * prints for it ("[MODULE+0xOFF]", "[unknown]"), without its "_[k]" or
 * "_[p]": pprof tells kernel frames by their mapping, interpreters' by
 * their file and line.  Points into @p->name or
 * the report.
 */
static int pprof__frame_name(struct pprof *p, const struct rpt_frame *f,
			     const struct frame_name *fn, const char **name)
{
	/* "[" base "+0x" 16 digits "]_[k]": the module path bounds it. */
	size_t need = (fn->module && fn->module->path ? strlen(fn->module->path) : 0) + 64, n;
	char *buf;
	int err;

	if (fn->sym) {
		*name = fn->sym;
		return 0;
	}
	p->name.len = 0;
	err = rpt_buf__reserve(&p->name, need);
	if (err)
		return err;
	buf = (char *)p->name.data;
	view__frame_name(p->o, p->r, f, buf, need);
	n = strlen(buf);
	if (f->kind == RPT_FRAME_KERNEL && n > 4 && !strcmp(buf + n - 4, "_[k]"))
		buf[n - 4] = '\0';
	if (f->kind == RPT_FRAME_INTERP && n > 4 && !strcmp(buf + n - 4, VIEW_INTERP_SUFFIX))
		buf[n - 4] = '\0';
	*name = buf;
	return 0;
}

/*
 * The location of interpreter frame @frame (@f, named @fn), as pprof
 * writers for Python do (Parca's, py-spy's): no mapping (a source file is
 * no address range), a Function of the qualified name, the source file
 * and its first line, and a Line of the frame's line.
 */
static int pprof__interp(struct pprof *p, uint32_t frame, const struct rpt_frame *f,
			 const struct frame_name *fn, uint32_t *idx)
{
	const char *path = fn->module && fn->module->path ? fn->module->path : "";
	uint32_t name_id, file = 0, func;
	const char *name;
	int err;

	err = pprof__frame_name(p, f, fn, &name);
	err = err ?: strs__clean(&p->strs, name, &name_id);
	err = err ?: path[0] ? strs__clean(&p->strs, path, &file) : 0;
	err = err ?: pprof__function(p, name_id, file, &func);
	err = err ?: push((void **)&p->locs, &p->nr_locs, &p->cap_locs, sizeof(*p->locs), idx);
	if (err)
		return err;
	/* sym_off: the line's offset into its function (docs/FORMAT.md). */
	if (fn->sym && !p->funcs[func].start_line && fn->offset > fn->sym_off)
		p->funcs[func].start_line = (uint32_t)(fn->offset - fn->sym_off);
	p->locs[*idx] = (struct loc){ .addr = f->addr, .func = func,
				      .line = fn->offset <= UINT32_MAX ? (uint32_t)fn->offset : 0 };
	p->frame_loc[frame] = *idx;
	return 0;
}

/* The location of report frame @frame, created with its mapping and function on first use. */
static int pprof__location(struct pprof *p, uint32_t frame, uint32_t *idx)
{
	const struct rpt_frame *f;
	struct frame_name fn;
	uint32_t map = 0, file = 0, name_id, func;
	const char *name;
	int err;

	if (frame >= p->nr_frames)
		return -EINVAL;
	if (p->frame_loc[frame] != RPT_NONE) {
		*idx = p->frame_loc[frame];
		return 0;
	}
	f = report__frame(p->r, frame);
	if (!f)
		return -EINVAL;
	frame_namer__name(p->o ? p->o->namer : NULL, p->r, f, &fn);
	if (f->kind == RPT_FRAME_INTERP)
		return pprof__interp(p, frame, f, &fn, idx);
	if (fn.module) {
		err = pprof__mapping(p, fn.module, f, &map);
		if (err)
			return err;
		file = p->maps[map].file;
		map++;
	}
	err = pprof__frame_name(p, f, &fn, &name);
	err = err ?: strs__clean(&p->strs, name, &name_id);
	err = err ?: pprof__function(p, name_id, file, &func);
	err = err ?: push((void **)&p->locs, &p->nr_locs, &p->cap_locs, sizeof(*p->locs), idx);
	if (err)
		return err;
	p->locs[*idx] = (struct loc){ .addr = f->addr, .map = map, .func = func };
	p->frame_loc[frame] = *idx;
	return 0;
}

/* The locations of stack @stack; an empty stack gets the one "[unknown]" location. */
static int pprof__stack(struct pprof *p, uint32_t stack)
{
	const uint32_t *ids;
	uint32_t nr = 0, j, idx, name, func;
	int err = 0;

	ids = report__stack(p->r, stack, &nr);
	if (!ids)
		return -EINVAL;
	for (j = 0; j < nr && !err; j++)
		err = pprof__location(p, ids[j], &idx);
	if (err || nr || p->unknown_loc != RPT_NONE)
		goto out;
	err = strs__add(&p->strs, "[unknown]", strlen("[unknown]"), &name);
	err = err ?: pprof__function(p, name, 0, &func);
	err = err ?: push((void **)&p->locs, &p->nr_locs, &p->cap_locs, sizeof(*p->locs), &idx);
	if (err)
		return err;
	p->locs[idx] = (struct loc){ .func = func };
	p->unknown_loc = idx;
out:
	if (nr > p->max_depth)
		p->max_depth = nr;
	return err;
}

static bool sample_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct psample *a = &((const struct pprof *)ctx)->samples[val - 1], *b = key;

	return a->stack == b->stack && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->cgroup == b->cgroup && a->state == b->state;
}

/* Count @k (a CPU sample; with a state, an OFFCPU record of @k->off_ns) in its pprof sample. */
static int pprof__add(struct pprof *p, const struct psample *k)
{
	uint64_t h = hash_u64(hash_u64(hash_u64(hash_u64(hash_u64(hash_u64(4, k->stack), k->pid),
							     k->tid), k->comm), k->cgroup), k->state);
	uint64_t v = htab__find(&p->sample_tab, h, sample_eq, p, k);
	uint32_t idx = v ? (uint32_t)(v - 1) : RPT_NONE;
	int err;

	if (idx == RPT_NONE) {
		/* New stacks only: the per-sample cost is the lookup. */
		err = pprof__stack(p, k->stack);
		err = err ?: htab__reserve(&p->sample_tab, 1);
		err = err ?: push((void **)&p->samples, &p->nr_samples, &p->cap_samples,
				  sizeof(*p->samples), &idx);
		if (err)
			return err;
		p->samples[idx] = *k;
		p->samples[idx].off_ns = 0;
		err = htab__add(&p->sample_tab, h, (uint64_t)idx + 1);	/* reserved: cannot fail */
		if (err)
			return err;
	}
	if (k->state) {
		/* Saturated: a hostile file's ns may sum past 64 bits (the value saturates at INT64_MAX anyway). */
		p->samples[idx].off_ns = p->samples[idx].off_ns > UINT64_MAX - k->off_ns ? UINT64_MAX :
					 p->samples[idx].off_ns + k->off_ns;
		p->kept_off++;
	} else {
		p->samples[idx].count++;
		p->kept++;
	}
	return 0;
}

/*
 * The labels of cgroup @cg: "cgroup", its path when the recording names
 * it, else its id in decimal (older files), and "container_id", the
 * container that path names (0: none).
 */
static int pprof__cgroup(struct pprof *p, uint64_t cg, uint32_t *cgroup, uint32_t *ctr)
{
	const char *path = report__cgroup_path(p->r, cg);
	struct container_id c;
	int err;

	*ctr = 0;
	if (!path)
		return strs__printf(&p->strs, cgroup, "%" PRIu64, cg);
	err = strs__clean(&p->strs, path, cgroup);
	if (!err && container__from_cgroup(path, &c))
		err = strs__add(&p->strs, c.id, CONTAINER_ID_LEN, ctr);
	return err;
}

/* The labels' string ids of a kept sample or record, with a one-entry cache: they come in runs. */
struct plabels {
	const char *last_comm;
	uint64_t last_cgroup;
	uint32_t comm, cgroup, ctr;
};

/* @comm's and @cg's labels into @l.  0 or -errno. */
static int pprof__labels(struct pprof *p, struct plabels *l, const char *comm, uint64_t cg)
{
	int err;

	if (comm != l->last_comm) {
		err = strs__clean(&p->strs, comm, &l->comm);
		if (err)
			return err;
		l->last_comm = comm;
	}
	if (cg != l->last_cgroup) {
		err = pprof__cgroup(p, cg, &l->cgroup, &l->ctr);
		if (err)
			return err;
		l->last_cgroup = cg;
	}
	return 0;
}

/* The OFFCPU records @p->o keeps, each a psample of its state and ns.  0 or -errno. */
static int pprof__collect_off(struct pprof *p)
{
	size_t i, nr = report__nr_offcpu(p->r);
	struct plabels l = {};
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		const struct rpt_offcpu *x = report__offcpu(p->r, i);

		if (!view__keep_offcpu(p->o, x))
			continue;
		err = pprof__labels(p, &l, x->comm ? x->comm : "", x->cgroup);
		err = err ?: pprof__add(p, &(struct psample){ .stack = x->stack, .pid = x->pid,
							       .tid = x->tid, .comm = l.comm,
							       .cgroup = x->cgroup ? l.cgroup : 0,
							       .ctr = x->cgroup ? l.ctr : 0,
							       .state = 1 + x->state, .off_ns = x->ns });
	}
	return err;
}

/*
 * Pass one: the kept samples (and, of a recording with off-CPU time, its
 * kept OFFCPU records: the off_cpu sample type's; with the off-CPU
 * metric, those only), aggregated, and everything they refer to.
 */
static int pprof__collect(struct pprof *p)
{
	size_t i, nr = view__wants_samples(p->o) ? report__nr_samples(p->r) : 0;
	struct plabels l = {};
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(p->r, i);

		if (!view__keep(p->o, s))
			continue;
		err = pprof__labels(p, &l, s->comm ? s->comm : "", s->cgroup);
		err = err ?: pprof__add(p, &(struct psample){ .stack = s->stack, .pid = s->pid,
							       .tid = s->tid, .comm = l.comm,
							       .cgroup = s->cgroup ? l.cgroup : 0,
							       .ctr = s->cgroup ? l.ctr : 0 });
	}
	return err ?: p->off ? pprof__collect_off(p) : 0;
}


/*
 * Of a recording with off-CPU time: the third sample type's strings, the
 * state label's, and a comment saying how much it holds.  0 or -errno.
 */
static int pprof__off_strings(struct pprof *p)
{
	const struct rpt_header *h = report__header(p->r);
	struct strs *s = &p->strs;
	uint32_t i;
	int err;

	err = strs__add(s, "off_cpu", 7, &p->s_off_cpu);
	err = err ?: strs__add(s, "state", 5, &p->s_state);
	for (i = 0; i < RPT_OS__NR && !err; i++)
		err = strs__add(s, rpt_offstate__str(i), strlen(rpt_offstate__str(i)), &p->s_states[i]);
	return err ?: strs__printf(s, &p->comments[p->nr_comments++],
				   "off-CPU: %zu records, %" PRIu64 " of them kept (sample type off_cpu); "
				   "intervals dropped as short: %" PRIu64 ", lost: %" PRIu64,
				   report__nr_offcpu(p->r), p->kept_off, h->offcpu[RPT_OC_SHORT],
				   h->offcpu[RPT_OC_LOST]);
}

/* The strings the header and labels use, and comments with the recording's facts. */
static int pprof__header_strings(struct pprof *p)
{
	const struct rpt_header *h = report__header(p->r);
	const struct frame_namer *namer = p->o ? p->o->namer : NULL;
	struct strs *s = &p->strs;
	int err;

	err = strs__add(s, "samples", 7, &p->s_samples);
	err = err ?: strs__add(s, "count", 5, &p->s_count);
	err = err ?: strs__add(s, "cpu", 3, &p->s_cpu);
	err = err ?: strs__add(s, "nanoseconds", 11, &p->s_ns);
	err = err ?: strs__add(s, "pid", 3, &p->s_pid);
	err = err ?: strs__add(s, "tid", 3, &p->s_tid);
	err = err ?: strs__add(s, "comm", 4, &p->s_comm);
	err = err ?: strs__add(s, "cgroup", 6, &p->s_cgroup);
	err = err ?: strs__add(s, "container_id", 12, &p->s_ctr);
	err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
				  "bpfsym recording: host %s, kernel %s, boot id %s", h->hostname,
				  h->release, h->boot_id);
	err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
				  "event: %s at %u Hz on %u CPUs%s, target: %s", h->event, h->freq,
				  h->nr_cpus, h->flags & RPT_HF_USER_ONLY ? " (user stacks only)" :
				  h->flags & RPT_HF_KERNEL_ONLY ? " (kernel stacks only)" : "", h->target);
	if (h->complete)
		err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
					  "lost: %" PRIu64 " samples (ring buffer full), %" PRIu64
					  " mapping/process events", h->lost_samples, h->lost_events);
	else
		err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
					  "truncated recording (no END record): samples up to the last complete block");
	if (view__wants_samples(p->o) && p->kept != report__nr_samples(p->r))
		err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
					  "filters: %" PRIu64 " of %zu samples kept", p->kept,
					  report__nr_samples(p->r));
	if (namer) {
		uint64_t d = frame_namer__delta(namer);

		err = err ?: strs__printf(s, &p->comments[p->nr_comments++],
					  "kernel symbols: from %s, relocated by %s0x%" PRIx64,
					  frame_namer__source(namer), d >> 63 ? "-" : "+",
					  d >> 63 ? -d : d);
	}
	err = err ?: p->off ? pprof__off_strings(p) : 0;
	return err;
}

static void pprof__free(struct pprof *p)
{
	strs__free(&p->strs);
	free(p->samples);
	htab__free(&p->sample_tab);
	free(p->locs);
	free(p->frame_loc);
	free(p->maps);
	htab__free(&p->map_tab);
	free(p->funcs);
	htab__free(&p->func_tab);
	rpt_buf__free(&p->name);
}

/* Both ways out: to @path (renamed into place) or, when @path is NULL, into @fd. */
static int pprof__make(const char *path, int fd, const struct report *r, const struct view_opts *o)
{
	struct pprof p = { .r = r, .o = o, .unknown_loc = RPT_NONE };
	const struct rpt_header *h = report__header(r);
	size_t nf;
	uint32_t empty;
	int err;

	nf = p.nr_frames = report__nr_frames(r);
	p.off = h->off_cpu || report__nr_offcpu(r);
	p.frame_loc = malloc((nf ? nf : 1) * sizeof(*p.frame_loc));
	if (!p.frame_loc)
		return -ENOMEM;
	memset(p.frame_loc, 0xff, (nf ? nf : 1) * sizeof(*p.frame_loc));
	err = strs__add(&p.strs, "", 0, &empty);
	err = err ?: pprof__collect(&p);
	err = err ?: pprof__header_strings(&p);
	err = err ?: (path ? pprof__write_file(&p, path) : pprof__write_fd(&p, fd));
	pprof__free(&p);
	return err;
}

int report_pprof__write(const char *path, const struct report *r, const struct view_opts *o)
{
	if (!path || !path[0] || !r)
		return -EINVAL;
	if (!strcmp(path, "-"))
		return pprof__make(NULL, STDOUT_FILENO, r, o);
	return pprof__make(path, -1, r, o);
}

int report_pprof__write_fd(int fd, const struct report *r, const struct view_opts *o)
{
	if (fd < 0 || !r)
		return -EINVAL;
	return pprof__make(NULL, fd, r, o);
}
