// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_pprof: the pprof writer.  Two passes.  The first aggregates the
 * kept samples on (stack, pid, tid, comm, cgroup) and gives every frame,
 * module and function they reach an id, interning every string the profile
 * will hold, because the others refer to the string table by index.  The
 * second packs the profile in pieces: a protobuf message may be cut between
 * fields and parsed back as one (repeated fields append), so the header and
 * the string table are packed as one Profile, then each mapping, location,
 * function and sample as a one-element Profile through one reused struct,
 * straight into the gzip stream.  Memory is the aggregation, never a copy
 * of the whole profile as protobuf-c structs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report_fmt.h"
#include "report_pprof.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* ---- the string table: id 0 is "", as the format requires ---- */

struct strs {
	struct rpt_buf data;	/* the strings, each NUL-terminated */
	struct sref {
		size_t off, len;
	} *v;
	size_t nr, cap;
	struct rpt_htab tab;
	struct rpt_buf clean;	/* strs__clean()'s scratch */
};

struct skey {
	const char *p;
	size_t len;
};

static bool strs_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct strs *s = ctx;
	const struct skey *k = key;

	return s->v[id].len == k->len && !memcmp(s->data.data + s->v[id].off, k->p, k->len);
}

/* Intern @len bytes at @p, which must not point into @s->data. */
static int strs__add(struct strs *s, const char *p, size_t len, uint32_t *id)
{
	struct skey k = { p, len };
	uint32_t h = (uint32_t)hash_bytes(0, p, len);
	size_t slot;
	int err;

	err = rpt_htab__reserve(&s->tab, 1);
	if (err)
		return err;
	*id = rpt_htab__find(&s->tab, h, strs_eq, s, &k, &slot);
	if (*id != RPT_NONE)
		return 0;
	if (s->nr >= RPT_ID_LIMIT)
		return -E2BIG;
	err = rpt_grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v));
	err = err ?: rpt_buf__reserve(&s->data, len + 1);
	if (err)
		return err;
	s->v[s->nr] = (struct sref){ s->data.len, len };
	if (len)
		memcpy(s->data.data + s->data.len, p, len);
	s->data.data[s->data.len + len] = '\0';
	s->data.len += len + 1;
	*id = (uint32_t)s->nr++;
	rpt_htab__insert_at(&s->tab, slot, h, *id);
	return 0;
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
	rpt_buf__free(&s->data);
	rpt_buf__free(&s->clean);
	free(s->v);
	rpt_htab__free(&s->tab);
}

/* ---- the profile being built ---- */

/* One pprof sample: the kept samples of one (stack, pid, tid, comm, cgroup). */
struct psample {
	uint32_t stack, pid, tid;
	uint32_t comm, cgroup;	/* string ids; 0: no label */
	uint64_t count;
};

struct loc {
	uint64_t addr;
	uint32_t map;		/* mapping index + 1; 0: none */
	uint32_t func;		/* function index */
};

struct map {
	const struct rpt_module *mod;
	uint64_t start, limit;
	uint64_t bias;		/* lowest address - file offset of its frames */
	bool has_bias;		/* a file module: the file offset is known */
	uint32_t file, build_id;	/* string ids */
};

struct func {
	uint32_t name, file;	/* string ids */
};

struct pprof {
	const struct report *r;
	const struct view_opts *o;
	struct strs strs;
	struct psample *samples;
	size_t nr_samples, cap_samples;
	struct rpt_htab sample_tab;
	struct loc *locs;
	size_t nr_locs, cap_locs;
	uint32_t *frame_loc;	/* per report frame id: location index, RPT_NONE until used */
	size_t nr_frames;
	uint32_t unknown_loc;	/* the location of empty stacks, RPT_NONE until used */
	struct map *maps;
	size_t nr_maps, cap_maps;
	struct rpt_htab map_tab;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct rpt_htab func_tab;
	struct rpt_buf name;	/* an unnamed frame's name */
	uint32_t max_depth;	/* of the stacks kept */
	uint64_t kept;
	/* String ids the header uses. */
	uint32_t s_samples, s_count, s_cpu, s_ns, s_pid, s_tid, s_comm, s_cgroup;
	uint32_t comments[5];
	size_t nr_comments;
};

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

static bool map_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct pprof *)ctx)->maps[id].mod == key;
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
	uint32_t h = (uint32_t)hash_u64(2, (uintptr_t)m);
	bool has_off = f->kind == RPT_FRAME_USER && m->kind != RPT_MOD_KERNEL && m->kind != RPT_MOD_ANON;
	char hex[2 * RPT_BUILD_ID_MAX + 1];
	struct map *mp;
	size_t slot;
	uint32_t i;
	int err;

	err = rpt_htab__reserve(&p->map_tab, 1);
	if (err)
		return err;
	*idx = rpt_htab__find(&p->map_tab, h, map_eq, p, m, &slot);
	if (*idx == RPT_NONE) {
		err = push((void **)&p->maps, &p->nr_maps, &p->cap_maps, sizeof(*p->maps), idx);
		if (err)
			return err;
		mp = &p->maps[*idx];
		*mp = (struct map){ .mod = m, .start = UINT64_MAX };
		rpt_htab__insert_at(&p->map_tab, slot, h, *idx);
		for (i = 0; i < m->build_id_len && i < RPT_BUILD_ID_MAX; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
		hex[2 * i] = '\0';
		err = strs__clean(&p->strs, module_file(m), &mp->file);
		err = err ?: strs__add(&p->strs, hex, 2 * i, &mp->build_id);
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

static bool func_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct func *a = &((const struct pprof *)ctx)->funcs[id], *b = key;

	return a->name == b->name && a->file == b->file;
}

/* The function (@name, @file), both string ids. */
static int pprof__function(struct pprof *p, uint32_t name, uint32_t file, uint32_t *idx)
{
	struct func k = { name, file };
	uint32_t h = (uint32_t)hash_u64(hash_u64(3, name), file);
	size_t slot;
	int err;

	err = rpt_htab__reserve(&p->func_tab, 1);
	if (err)
		return err;
	*idx = rpt_htab__find(&p->func_tab, h, func_eq, p, &k, &slot);
	if (*idx != RPT_NONE)
		return 0;
	err = push((void **)&p->funcs, &p->nr_funcs, &p->cap_funcs, sizeof(*p->funcs), idx);
	if (err)
		return err;
	p->funcs[*idx] = k;
	rpt_htab__insert_at(&p->func_tab, slot, h, *idx);
	return 0;
}

/*
 * The name frame @f shows: the namer's symbol, else what the folded format
 * prints for it ("[MODULE+0xOFF]", "[unknown]"), without its "_[k]":
 * pprof tells kernel frames by their mapping.  Points into @p->name or
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
	*name = buf;
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

static bool sample_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct psample *a = &((const struct pprof *)ctx)->samples[id], *b = key;

	return a->stack == b->stack && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->cgroup == b->cgroup;
}

static int pprof__add(struct pprof *p, const struct psample *k)
{
	uint32_t h = (uint32_t)hash_u64(hash_u64(hash_u64(hash_u64(hash_u64(4, k->stack), k->pid),
							   k->tid), k->comm), k->cgroup);
	uint32_t idx;
	size_t slot;
	int err;

	err = rpt_htab__reserve(&p->sample_tab, 1);
	if (err)
		return err;
	idx = rpt_htab__find(&p->sample_tab, h, sample_eq, p, k, &slot);
	if (idx == RPT_NONE) {
		/* New stacks only: the per-sample cost is the lookup. */
		err = pprof__stack(p, k->stack);
		err = err ?: push((void **)&p->samples, &p->nr_samples, &p->cap_samples,
				  sizeof(*p->samples), &idx);
		if (err)
			return err;
		p->samples[idx] = *k;
		rpt_htab__insert_at(&p->sample_tab, slot, h, idx);
	}
	p->samples[idx].count++;
	p->kept++;
	return 0;
}

/* Pass one: the kept samples, aggregated, and everything they refer to. */
static int pprof__collect(struct pprof *p)
{
	size_t i, nr = report__nr_samples(p->r);
	const char *last_comm = NULL;
	uint64_t last_cgroup = 0;
	uint32_t comm = 0, cgroup = 0;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(p->r, i);
		const char *c = s->comm ? s->comm : "";

		if (!view__keep(p->o, s))
			continue;
		/* Samples come in runs of one process: a one-entry cache saves the hashing. */
		if (c != last_comm) {
			err = strs__clean(&p->strs, c, &comm);
			if (err)
				break;
			last_comm = c;
		}
		if (s->cgroup != last_cgroup) {
			err = strs__printf(&p->strs, &cgroup, "%" PRIu64, s->cgroup);
			if (err)
				break;
			last_cgroup = s->cgroup;
		}
		err = pprof__add(p, &(struct psample){ .stack = s->stack, .pid = s->pid,
							.tid = s->tid, .comm = comm,
							.cgroup = s->cgroup ? cgroup : 0 });
	}
	return err;
}

/* How long the recording lasted; without an END record, up to its last sample. */
static uint64_t duration_ns(const struct report *r)
{
	const struct rpt_header *h = report__header(r);
	uint64_t last = 0;
	size_t i;

	if (h->complete)
		return h->end_wall_ns > h->start_wall_ns ? h->end_wall_ns - h->start_wall_ns : 0;
	for (i = 0; i < report__nr_samples(r); i++)
		if (report__sample(r, i)->time > last)
			last = report__sample(r, i)->time;
	return last;
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
	if (p->kept != report__nr_samples(p->r))
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
	return err;
}

static void pprof__free(struct pprof *p)
{
	strs__free(&p->strs);
	free(p->samples);
	rpt_htab__free(&p->sample_tab);
	free(p->locs);
	free(p->frame_loc);
	free(p->maps);
	rpt_htab__free(&p->map_tab);
	free(p->funcs);
	rpt_htab__free(&p->func_tab);
	rpt_buf__free(&p->name);
}

/* ---- the gzip stream protobuf-c packs into ---- */

struct gz_sink {
	ProtobufCBuffer base;	/* first: protobuf-c hands back &base */
	z_stream z;
	int fd;
	int err;		/* the first error; later appends do nothing */
	uint8_t out[1 << 16];
};

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Run deflate over what is pending with @flush, writing its output. */
static void sink__deflate(struct gz_sink *s, int flush)
{
	int ret;

	do {
		s->z.next_out = s->out;
		s->z.avail_out = sizeof(s->out);
		ret = deflate(&s->z, flush);
		if (ret == Z_STREAM_ERROR) {
			s->err = -EIO;
			return;
		}
		s->err = write_all(s->fd, s->out, sizeof(s->out) - s->z.avail_out);
	} while (!s->err && (s->z.avail_in || !s->z.avail_out || (flush == Z_FINISH && ret != Z_STREAM_END)));
}

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_sink *s = (struct gz_sink *)b;

	while (len && !s->err) {
		uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;

		s->z.next_in = (Bytef *)data;
		s->z.avail_in = n;
		sink__deflate(s, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/* Pack @m (a Profile, usually a piece of one) into @s. */
static void sink__pack(struct gz_sink *s, const pb_profile *m)
{
	if (!s->err)
		perftools__profiles__profile__pack_to_buffer(m, &s->base);
}

static void emit_header(struct gz_sink *s, const struct pprof *p, char **strings, int64_t *comments)
{
	const struct rpt_header *h = report__header(p->r);
	uint64_t dur = duration_ns(p->r);
	pb_value_type st[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	pb_value_type pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *stp[2] = { &st[0], &st[1] };
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t i;

	st[0].type = p->s_samples;
	st[0].unit = p->s_count;
	st[1].type = p->s_cpu;
	st[1].unit = p->s_ns;
	pt.type = p->s_cpu;
	pt.unit = p->s_ns;
	for (i = 0; i < p->strs.nr; i++)
		strings[i] = (char *)p->strs.data.data + p->strs.v[i].off;
	for (i = 0; i < p->nr_comments; i++)
		comments[i] = p->comments[i];
	m.n_sample_type = 2;
	m.sample_type = stp;
	m.n_string_table = p->strs.nr;
	m.string_table = strings;
	m.time_nanos = (int64_t)(h->start_wall_ns > INT64_MAX ? INT64_MAX : h->start_wall_ns);
	m.duration_nanos = (int64_t)(dur > INT64_MAX ? INT64_MAX : dur);
	m.period_type = &pt;
	m.period = h->freq ? 1000000000 / h->freq : 0;
	m.n_comment = p->nr_comments;
	m.comment = comments;
	m.default_sample_type = p->s_cpu;
	sink__pack(s, &m);
}

static void emit_tables(struct gz_sink *s, const struct pprof *p)
{
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT, *mpp = &mp;
	pb_location lc = PERFTOOLS__PROFILES__LOCATION__INIT, *lcp = &lc;
	pb_line ln = PERFTOOLS__PROFILES__LINE__INIT, *lnp = &ln;
	pb_function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fnp = &fn;
	size_t i;

	m.n_mapping = 1;
	m.mapping = &mpp;
	for (i = 0; i < p->nr_maps && !s->err; i++) {
		const struct map *x = &p->maps[i];

		mp.id = i + 1;
		mp.memory_start = x->start;
		mp.memory_limit = x->limit;
		mp.file_offset = x->has_bias ? x->start - x->bias : 0;
		mp.filename = x->file;
		mp.build_id = x->build_id;
		mp.has_functions = 1;
		sink__pack(s, &m);
	}
	m.n_mapping = 0;
	m.mapping = NULL;
	m.n_location = 1;
	m.location = &lcp;
	lc.n_line = 1;
	lc.line = &lnp;
	for (i = 0; i < p->nr_locs && !s->err; i++) {
		lc.id = i + 1;
		lc.mapping_id = p->locs[i].map;
		lc.address = p->locs[i].addr;
		ln.function_id = p->locs[i].func + 1;
		sink__pack(s, &m);
	}
	m.n_location = 0;
	m.location = NULL;
	m.n_function = 1;
	m.function = &fnp;
	for (i = 0; i < p->nr_funcs && !s->err; i++) {
		fn.id = i + 1;
		fn.name = p->funcs[i].name;
		fn.system_name = p->funcs[i].name;
		fn.filename = p->funcs[i].file;
		sink__pack(s, &m);
	}
}

static int64_t sat_mul(uint64_t a, uint64_t b)
{
	if (b && a > (uint64_t)INT64_MAX / b)
		return INT64_MAX;
	return (int64_t)(a * b);
}

/* @locids holds max_depth (at least 1) ids. */
static void emit_samples(struct gz_sink *s, const struct pprof *p, uint64_t *locids)
{
	uint64_t period = report__header(p->r)->freq ? 1000000000 / report__header(p->r)->freq : 0;
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_sample sm = PERFTOOLS__PROFILES__SAMPLE__INIT, *smp = &sm;
	pb_label lb[4], *lbp[4];
	int64_t values[2];
	size_t i, k;

	m.n_sample = 1;
	m.sample = &smp;
	sm.location_id = locids;
	sm.n_value = 2;
	sm.value = values;
	sm.label = lbp;
	for (i = 0; i < 4; i++)
		lbp[i] = &lb[i];
	for (i = 0; i < p->nr_samples && !s->err; i++) {
		const struct psample *x = &p->samples[i];
		uint32_t nr = 0, j;
		const uint32_t *ids = report__stack(p->r, x->stack, &nr);

		for (j = 0; j < nr; j++)
			locids[j] = (uint64_t)p->frame_loc[ids[j]] + 1;
		if (!nr)
			locids[nr++] = (uint64_t)p->unknown_loc + 1;
		sm.n_location_id = nr;
		values[0] = (int64_t)(x->count > INT64_MAX ? INT64_MAX : x->count);
		values[1] = sat_mul(x->count, period);
		for (k = 0; k < 4; k++)
			lb[k] = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
		k = 0;
		lb[k].key = p->s_pid;
		lb[k++].num = x->pid;
		lb[k].key = p->s_tid;
		lb[k++].num = x->tid;
		if (x->comm) {
			lb[k].key = p->s_comm;
			lb[k++].str = x->comm;
		}
		if (x->cgroup) {
			lb[k].key = p->s_cgroup;
			lb[k++].str = x->cgroup;
		}
		sm.n_label = k;
		sink__pack(s, &m);
	}
}

/* Pass two: the whole profile into @fd, gzip-compressed.  0 or -errno. */
static int pprof__emit(const struct pprof *p, int fd)
{
	struct gz_sink *s;
	char **strings;
	int64_t comments[sizeof(p->comments) / sizeof(p->comments[0])];
	uint64_t *locids;
	int err;

	s = calloc(1, sizeof(*s));
	strings = calloc(p->strs.nr, sizeof(*strings));
	locids = calloc(p->max_depth ? p->max_depth : 1, sizeof(*locids));
	if (!s || !strings || !locids) {
		err = -ENOMEM;
		goto out;
	}
	s->base.append = sink_append;
	s->fd = fd;
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&s->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto out;
	}
	emit_header(s, p, strings, comments);
	emit_tables(s, p);
	emit_samples(s, p, locids);
	if (!s->err)
		sink__deflate(s, Z_FINISH);
	err = s->err;
	deflateEnd(&s->z);
out:
	free(s);
	free(strings);
	free(locids);
	return err;
}

/* Create a file beside @path that nothing else uses; its name in *@tmp (freed by the caller). */
static int open_temp(const char *path, char **tmp)
{
	size_t len = strlen(path) + 40;
	unsigned int i;
	int fd = -1;

	*tmp = malloc(len);
	if (!*tmp)
		return -ENOMEM;
	for (i = 0; i < 100; i++) {
		snprintf(*tmp, len, "%s.tmp.%d.%u", path, (int)getpid(), i);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fd = -errno;
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

int report_pprof__write(const char *path, const struct report *r, const struct view_opts *o)
{
	struct pprof p = { .r = r, .o = o, .unknown_loc = RPT_NONE };
	size_t nf;
	char *tmp = NULL;
	uint32_t empty;
	int fd, err;

	if (!path || !path[0] || !r)
		return -EINVAL;
	nf = p.nr_frames = report__nr_frames(r);
	p.frame_loc = malloc((nf ? nf : 1) * sizeof(*p.frame_loc));
	if (!p.frame_loc)
		return -ENOMEM;
	memset(p.frame_loc, 0xff, (nf ? nf : 1) * sizeof(*p.frame_loc));
	err = strs__add(&p.strs, "", 0, &empty);
	err = err ?: pprof__collect(&p);
	err = err ?: pprof__header_strings(&p);
	if (err)
		goto out;
	fd = open_temp(path, &tmp);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = pprof__emit(&p, fd);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	pprof__free(&p);
	return err;
}
