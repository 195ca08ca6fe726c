// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_view: the hot-function table and the folded stacks.  Both start
 * from the same aggregation: kept samples counted per distinct (comm,
 * stack), so the per-sample work is a few array reads and everything after
 * scales with the number of distinct stacks, not samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "report_fmt.h"
#include "report_view.h"

#define UNKNOWN "[unknown]"

/* Interned strings, NUL-terminated in one buffer, found by content. */
struct strset {
	struct rpt_buf data;
	struct sref {
		size_t off, len;
	} *v;
	size_t nr, cap;
	struct rpt_htab tab;
};

struct skey {
	const char *p;
	size_t len;
};

static bool strset_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct strset *s = ctx;
	const struct skey *k = key;

	return s->v[id].len == k->len && !memcmp(s->data.data + s->v[id].off, k->p, k->len);
}

/* Intern @len bytes at @p (which may hold NULs).  @p must not point into @s. */
static int strset__intern(struct strset *s, const char *p, size_t len, uint32_t *id)
{
	struct skey k = { p, len };
	uint32_t h = (uint32_t)hash_bytes(0, p, len);
	size_t slot;
	int err;

	err = rpt_htab__reserve(&s->tab, 1);
	if (err)
		return err;
	*id = rpt_htab__find(&s->tab, h, strset_eq, s, &k, &slot);
	if (*id != RPT_NONE)
		return 0;
	if (s->nr >= RPT_ID_LIMIT)
		return -E2BIG;
	err = rpt_grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v));
	err = err ?: rpt_buf__reserve(&s->data, len + 1);
	if (err)
		return err;
	s->v[s->nr] = (struct sref){ s->data.len, len };
	memcpy(s->data.data + s->data.len, p, len);
	s->data.data[s->data.len + len] = '\0';
	s->data.len += len + 1;
	*id = (uint32_t)s->nr++;
	rpt_htab__insert_at(&s->tab, slot, h, *id);
	return 0;
}

/* Valid until the next intern. */
static const char *strset__str(const struct strset *s, uint32_t id)
{
	return (const char *)s->data.data + s->v[id].off;
}

static void strset__free(struct strset *s)
{
	rpt_buf__free(&s->data);
	free(s->v);
	rpt_htab__free(&s->tab);
}

static const char *module_base(const struct rpt_module *m)
{
	const char *slash;

	if (!m->path || !m->path[0]) {
		switch (m->kind) {
		case RPT_MOD_KERNEL:
			return "[kernel.kallsyms]";
		case RPT_MOD_ANON:
			return "[anon]";
		default:
			return UNKNOWN;
		}
	}
	slash = strrchr(m->path, '/');
	return slash && slash[1] ? slash + 1 : m->path;
}

/* snprintf-like: the length the name of @fn (a frame of @kind) needs, whatever @len is. */
static int frame_fmt(const struct frame_name *fn, uint32_t kind, char *buf, size_t len,
		     bool ksuffix)
{
	/* Every kernel frame, named or not, so FlameGraph colors it as kernel. */
	const char *sfx = ksuffix && kind == RPT_FRAME_KERNEL ? "_[k]" : "";

	if (fn->sym)
		return snprintf(buf, len, "%s%s", fn->sym, sfx);
	if (fn->module) {
		const char *base = module_base(fn->module);
		size_t n = strlen(base);

		/* "[vdso]" and "[kernel.kallsyms]" are bracketed already: no "[[vdso]+0x..]". */
		if (n >= 2 && base[0] == '[' && base[n - 1] == ']') {
			base++;
			n -= 2;
		}
		return snprintf(buf, len, "[%.*s+0x%" PRIx64 "]%s", (int)n, base, fn->offset, sfx);
	}
	return snprintf(buf, len, UNKNOWN "%s", sfx);
}

static const struct frame_namer *namer_of(const struct view_opts *o)
{
	return o ? o->namer : NULL;
}

const char *view__frame_name(const struct view_opts *o, const struct report *r,
			     const struct rpt_frame *f, char *buf, size_t len)
{
	struct frame_name fn;

	frame_namer__name(namer_of(o), r, f, &fn);
	if (len)
		frame_fmt(&fn, f->kind, buf, len, true);
	return buf;
}

static bool comm_ok(const struct view_opts *o, const char *comm)
{
	size_t i;

	if (!o || !o->comms || !o->nr_comms)
		return true;
	for (i = 0; i < o->nr_comms; i++)
		if (!strcmp(o->comms[i], comm))
			return true;
	return false;
}

int view__keep(const struct view_opts *o, const struct rpt_sample *s)
{
	size_t i;

	if (o && o->pids && o->nr_pids) {
		for (i = 0; i < o->nr_pids && o->pids[i] != s->pid; i++)
			;
		if (i == o->nr_pids)
			return 0;
	}
	return comm_ok(o, s->comm ? s->comm : "");
}

/* Folded lines split on ';' and end at whitespace + count: keep names from breaking that. */
static void sanitize(char *p, size_t n, bool folded)
{
	for (; n--; p++) {
		if (folded && *p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

/* Append the display name @fn of a frame of @kind to @b (no NUL). */
static int buf__frame(struct rpt_buf *b, const struct frame_name *fn, uint32_t kind, bool folded)
{
	size_t room = b->cap - b->len;
	int n, err;

	n = frame_fmt(fn, kind, room ? (char *)b->data + b->len : NULL, room, folded);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= room) {
		err = rpt_buf__reserve(b, (size_t)n + 1);
		if (err)
			return err;
		frame_fmt(fn, kind, (char *)b->data + b->len, (size_t)n + 1, folded);
	}
	sanitize((char *)b->data + b->len, (size_t)n, folded);
	b->len += (size_t)n;
	return 0;
}

/* Kept samples counted per distinct (comm, stack). */
struct pair {
	uint32_t comm, stack;
	uint32_t next;		/* next pair of the same stack, or RPT_NONE */
	uint64_t count;
};

#define COMM_CACHE 256

struct agg {
	struct strset comms;
	struct pair *pairs;
	size_t nr_pairs, cap_pairs;
	/*
	 * Per stack id, its first pair: a stack is nearly always sampled in
	 * one process name, so finding a pair is one array read and one
	 * compare, with no hashing in the per-sample loop.
	 */
	uint32_t *head;
	size_t nr_head, cap_head;
	/*
	 * The reader interns comm strings, so a pointer seen before has the
	 * same id and passes --comm the same way.
	 */
	struct {
		const char *p;
		uint32_t id;
		bool keep;
	} cache[COMM_CACHE];
	uint64_t total;
};

static int agg__comm(struct agg *a, const struct view_opts *o, const char *comm, uint32_t *id,
		     bool *keep)
{
	size_t c = (size_t)(((uintptr_t)comm >> 3) * 0x9e3779b97f4a7c15ULL >> 56) % COMM_CACHE;
	int err;

	if (a->cache[c].p != comm) {
		err = strset__intern(&a->comms, comm, strlen(comm), &a->cache[c].id);
		if (err)
			return err;
		a->cache[c].p = comm;
		a->cache[c].keep = comm_ok(o, comm);
	}
	*id = a->cache[c].id;
	*keep = a->cache[c].keep;
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int agg__add(struct agg *a, uint32_t comm, uint32_t stack)
{
	uint32_t id;
	int err;

	if (stack >= a->nr_head) {
		err = rpt_grow((void **)&a->head, &a->cap_head, (size_t)stack + 1, sizeof(*a->head));
		if (err)
			return err;
		memset(a->head + a->nr_head, 0xff, (stack + 1 - a->nr_head) * sizeof(*a->head));
		a->nr_head = (size_t)stack + 1;
	}
	for (id = a->head[stack]; id != RPT_NONE && a->pairs[id].comm != comm; id = a->pairs[id].next)
		;
	if (id == RPT_NONE) {
		if (a->nr_pairs >= RPT_ID_LIMIT)
			return -E2BIG;
		err = rpt_grow((void **)&a->pairs, &a->cap_pairs, a->nr_pairs + 1, sizeof(*a->pairs));
		if (err)
			return err;
		id = (uint32_t)a->nr_pairs++;
		a->pairs[id] = (struct pair){ comm, stack, a->head[stack], 0 };
		a->head[stack] = id;
	}
	a->pairs[id].count++;
	a->total++;
	return 0;
}

/* Count the samples that pass @o: what view__keep() decides, without its linear scans. */
static int agg__build(struct agg *a, const struct report *r, const struct view_opts *o)
{
	size_t i, nr = report__nr_samples(r), nr_pids = o && o->pids ? o->nr_pids : 0;
	uint32_t *pids = NULL, comm;
	bool keep;
	int err = 0;

	if (nr_pids) {
		pids = malloc(nr_pids * sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		memcpy(pids, o->pids, nr_pids * sizeof(*pids));
		qsort(pids, nr_pids, sizeof(*pids), u32_cmp);
	}
	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(r, i);

		if (pids && !bsearch(&s->pid, pids, nr_pids, sizeof(*pids), u32_cmp))
			continue;
		err = agg__comm(a, o, s->comm ? s->comm : "", &comm, &keep);
		if (!err && keep)
			err = agg__add(a, comm, s->stack);
	}
	free(pids);
	return err;
}

static void agg__free(struct agg *a)
{
	strset__free(&a->comms);
	free(a->pairs);
	free(a->head);
}

struct line {
	const char *text;
	uint64_t count;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Folded frame names, rendered once per frame: deep stacks share most of theirs. */
struct names {
	const struct frame_namer *namer;
	struct rpt_buf text;
	struct sref *v;		/* per frame id; off SIZE_MAX until rendered */
};

static int names__init(struct names *n, const struct report *r)
{
	size_t i, nr = report__nr_frames(r);

	n->v = malloc((nr ? nr : 1) * sizeof(*n->v));
	if (!n->v)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		n->v[i].off = SIZE_MAX;
	return 0;
}

/* Append the folded name of frame @id to @b. */
static int names__put(struct names *n, const struct report *r, uint32_t id, struct rpt_buf *b)
{
	struct sref *s = &n->v[id];
	int err;

	if (s->off == SIZE_MAX) {
		const struct rpt_frame *f = report__frame(r, id);
		size_t start = n->text.len;
		struct frame_name fn;

		frame_namer__name(n->namer, r, f, &fn);
		err = buf__frame(&n->text, &fn, f->kind, true);
		if (err)
			return err;
		*s = (struct sref){ start, n->text.len - start };
	}
	return rpt_buf__put(b, n->text.data + s->off, s->len);
}

/* Render each (comm, stack) pair as a folded line; lines that print alike are merged. */
static int folded__lines(const struct report *r, const struct view_opts *o, const struct agg *a,
			 struct strset *lines, uint64_t **counts)
{
	struct names names = { .namer = namer_of(o) };
	struct rpt_buf b = {};
	size_t i, before, cap = 0;
	int err;

	err = names__init(&names, r);
	for (i = 0; i < a->nr_pairs && !err; i++) {
		const struct pair *p = &a->pairs[i];
		const char *comm = strset__str(&a->comms, p->comm);
		uint32_t nr = 0, j, id;
		const uint32_t *ids = report__stack(r, p->stack, &nr);

		b.len = 0;
		err = rpt_buf__put(&b, comm, strlen(comm));
		if (err)
			break;
		sanitize((char *)b.data, b.len, true);
		/* Leaf first, kernel before user: reversed, that is root first. */
		for (j = nr; j-- > 0 && !err;) {
			err = rpt_buf__put(&b, ";", 1);
			err = err ?: names__put(&names, r, ids[j], &b);
		}
		if (!nr)
			err = err ?: rpt_buf__put(&b, ";" UNKNOWN, strlen(";" UNKNOWN));
		/* Two unnamed addresses in one module print alike, for one. */
		before = lines->nr;
		err = err ?: strset__intern(lines, (const char *)b.data, b.len, &id);
		err = err ?: rpt_grow((void **)counts, &cap, lines->nr, sizeof(**counts));
		if (err)
			break;
		if (lines->nr > before)
			(*counts)[id] = 0;
		(*counts)[id] += p->count;
	}
	rpt_buf__free(&b);
	rpt_buf__free(&names.text);
	free(names.v);
	return err;
}

int report_view__folded(FILE *out, const struct report *r, const struct view_opts *o)
{
	struct agg a = {};
	struct strset lines = {};
	uint64_t *counts = NULL;
	struct line *sorted = NULL;
	size_t i;
	int err;

	if (!out || !r)
		return -EINVAL;
	err = agg__build(&a, r, o);
	err = err ?: folded__lines(r, o, &a, &lines, &counts);
	if (!err && lines.nr) {
		sorted = calloc(lines.nr, sizeof(*sorted));
		if (!sorted)
			err = -ENOMEM;
	}
	if (!err) {
		for (i = 0; i < lines.nr; i++)
			sorted[i] = (struct line){ strset__str(&lines, (uint32_t)i), counts[i] };
		if (lines.nr)
			qsort(sorted, lines.nr, sizeof(*sorted), line_cmp);
		for (i = 0; i < lines.nr; i++)
			fprintf(out, "%s %" PRIu64 "\n", sorted[i].text, sorted[i].count);
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	free(sorted);
	free(counts);
	strset__free(&lines);
	agg__free(&a);
	return err;
}

/* A row of the table: one (process, module, symbol). */
struct row {
	uint32_t comm, fkey;
	uint64_t self, total;
	size_t stamp;		/* 1 + the last pair counted in total: recursion counts once */
	const char *comm_s, *mod_s, *sym_s;	/* set once interning is over */
};

/* Frames without a name, by reason; the last slot for a reason we do not know. */
struct unnamed {
	uint64_t frames;	/* every frame of every kept sample */
	uint64_t by_reason[RPT_REASON_MAX + 1];
};

struct table {
	const struct report *r;
	const struct frame_namer *namer;
	struct agg a;
	struct strset fkeys;	/* "MODULE\0SYMBOL" */
	uint32_t *frame_fkey;	/* per frame id, RPT_NONE until computed */
	uint8_t *frame_reason;	/* per frame id, the unnamed slot; RPT_OK: named.  With fkey */
	struct unnamed unnamed;
	struct rpt_buf scratch;
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct rpt_htab row_tab;
};

/* The (module, symbol) key of @frame; RPT_NONE stands for the frame of an empty stack. */
static int table__fkey(struct table *t, uint32_t frame, uint32_t *fk)
{
	static const char unknown2[] = UNKNOWN "\0" UNKNOWN;
	struct rpt_buf *b = &t->scratch;
	const struct rpt_frame *f;
	const char *mod = UNKNOWN;
	struct frame_name fn;
	int err;

	if (frame == RPT_NONE)
		return strset__intern(&t->fkeys, unknown2, sizeof(unknown2) - 1, fk);
	if (t->frame_fkey[frame] != RPT_NONE) {
		*fk = t->frame_fkey[frame];
		return 0;
	}
	f = report__frame(t->r, frame);
	frame_namer__name(t->namer, t->r, f, &fn);
	if (fn.module)
		mod = module_base(fn.module);
	b->len = 0;
	err = rpt_buf__put(b, mod, strlen(mod) + 1);
	if (err)
		return err;
	sanitize((char *)b->data, b->len - 1, false);
	err = buf__frame(b, &fn, f->kind, false);
	err = err ?: strset__intern(&t->fkeys, (const char *)b->data, b->len, fk);
	if (err)
		return err;
	t->frame_fkey[frame] = *fk;
	/* Unnamed means no symbol, whatever the file says the reason is. */
	if (fn.sym)
		t->frame_reason[frame] = RPT_OK;
	else if (fn.reason > RPT_OK && fn.reason < RPT_REASON_MAX)
		t->frame_reason[frame] = (uint8_t)fn.reason;
	else
		t->frame_reason[frame] = RPT_REASON_MAX;
	return 0;
}

static bool row_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct row *a = &((const struct table *)ctx)->rows[id], *b = key;

	return a->comm == b->comm && a->fkey == b->fkey;
}

/* The index of the row (comm, fkey), created empty if new. */
static int table__row(struct table *t, uint32_t comm, uint32_t fkey, uint32_t *id)
{
	struct row k = { .comm = comm, .fkey = fkey };
	uint32_t h = (uint32_t)hash_u64(hash_u64(1, comm), fkey);
	size_t slot;
	int err;

	err = rpt_htab__reserve(&t->row_tab, 1);
	if (err)
		return err;
	*id = rpt_htab__find(&t->row_tab, h, row_eq, t, &k, &slot);
	if (*id != RPT_NONE)
		return 0;
	err = rpt_grow((void **)&t->rows, &t->cap_rows, t->nr_rows + 1, sizeof(*t->rows));
	if (err)
		return err;
	*id = (uint32_t)t->nr_rows++;
	t->rows[*id] = k;
	rpt_htab__insert_at(&t->row_tab, slot, h, *id);
	return 0;
}

static int table__count(struct table *t)
{
	size_t i;
	int err;

	for (i = 0; i < t->a.nr_pairs; i++) {
		const struct pair *p = &t->a.pairs[i];
		uint32_t nr = 0, j, fk, id;
		const uint32_t *ids = report__stack(t->r, p->stack, &nr);

		for (j = 0; j < (nr ? nr : 1); j++) {
			struct row *row;

			err = table__fkey(t, nr ? ids[j] : RPT_NONE, &fk);
			err = err ?: table__row(t, p->comm, fk, &id);
			if (err)
				return err;
			row = &t->rows[id];
			if (nr) {
				t->unnamed.frames += p->count;
				t->unnamed.by_reason[t->frame_reason[ids[j]]] += p->count;
			}
			if (j == 0)
				row->self += p->count;
			if (row->stamp != i + 1) {
				row->total += p->count;
				row->stamp = i + 1;
			}
		}
	}
	return 0;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c;

	/* Comparisons, not subtraction: the counts are u64. */
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	c = strcmp(a->sym_s, b->sym_s);
	c = c ?: strcmp(a->comm_s, b->comm_s);
	return c ?: strcmp(a->mod_s, b->mod_s);
}

static const char *fmt_time(char *buf, size_t len, uint64_t wall_ns)
{
	time_t secs = (time_t)(wall_ns / 1000000000ULL);
	struct tm tm;

	if (!wall_ns || !gmtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "unknown");
	return buf;
}

/* A header string from the file, made safe for a terminal. */
static const char *clean(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
	sanitize(dst, strlen(dst), false);
	return dst;
}

/* One slot of the unnamed-frame summary. */
struct share {
	uint32_t reason;
	uint64_t count;
};

static int share_cmp(const void *pa, const void *pb)
{
	const struct share *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

/* A share of @total as "4.2%"; "<0.1%" rather than "0.0%" for a few. */
static const char *fmt_share(char *buf, size_t len, uint64_t count, uint64_t total)
{
	double pct = 100.0 * (double)count / (double)total;

	if (count && pct < 0.05)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", pct);
	return buf;
}

/*
 * "unnamed frames: 4.2% of 12345 (anonymous memory 3.0%, no mapping 1.2%)":
 * how much of what the table shows has no name, and why, weighted by samples.
 */
static void print_unnamed(FILE *out, const struct unnamed *u)
{
	struct share v[RPT_REASON_MAX + 1];
	uint64_t unnamed = u->frames - u->by_reason[RPT_OK];
	size_t i, n = 0;
	char pct[16];

	if (!unnamed) {
		fprintf(out, "# unnamed frames: none\n");
		return;
	}
	for (i = RPT_OK + 1; i <= RPT_REASON_MAX; i++)
		if (u->by_reason[i])
			v[n++] = (struct share){ (uint32_t)i, u->by_reason[i] };
	qsort(v, n, sizeof(*v), share_cmp);
	fprintf(out, "# unnamed frames: %s of %" PRIu64 " (", fmt_share(pct, sizeof(pct), unnamed, u->frames),
		u->frames);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%s %s", i ? ", " : "", rpt_reason__str(v[i].reason),
			fmt_share(pct, sizeof(pct), v[i].count, u->frames));
	fprintf(out, ")\n");
}

static void print_header(FILE *out, const struct report *r, uint64_t kept,
			 const struct frame_namer *namer, const struct unnamed *u)
{
	const struct rpt_header *h = report__header(r);
	const char *src = report__source(r);
	char a[sizeof(h->target)], b[sizeof(h->target)], c[sizeof(h->target)];
	uint64_t last = 0;
	size_t i;

	fprintf(out, "# bpfsym report%s%s\n", src ? ": " : "", src ? src : "");
	fprintf(out, "# host: %s, kernel: %s, boot id: %s\n", clean(a, sizeof(a), h->hostname),
		clean(b, sizeof(b), h->release), clean(c, sizeof(c), h->boot_id));
	fprintf(out, "# event: %s at %u Hz on %u CPUs%s, target: %s\n", clean(a, sizeof(a), h->event),
		h->freq, h->nr_cpus,
		h->flags & RPT_HF_USER_ONLY ? " (user stacks only)" :
		h->flags & RPT_HF_KERNEL_ONLY ? " (kernel stacks only)" : "",
		clean(b, sizeof(b), h->target));
	fmt_time(a, sizeof(a), h->start_wall_ns);
	if (h->complete) {
		uint64_t d = h->end_wall_ns > h->start_wall_ns ? h->end_wall_ns - h->start_wall_ns : 0;

		fprintf(out, "# started: %s, duration: %.3f s\n", a, (double)d / 1e9);
	} else {
		/* No END record, no end time: the last sample is the best lower bound. */
		for (i = 0; i < report__nr_samples(r); i++)
			if (report__sample(r, i)->time > last)
				last = report__sample(r, i)->time;
		fprintf(out, "# started: %s, duration: %.3f s to the last sample\n", a,
			(double)last / 1e9);
	}
	fprintf(out, "# samples: %" PRIu64, h->samples);
	if (kept != report__nr_samples(r))
		fprintf(out, ", %" PRIu64 " after filters", kept);
	if (h->complete)
		fprintf(out, "\n# lost: %" PRIu64 " samples (ring buffer full), %" PRIu64
			" mapping/process events; processes seen: %" PRIu64 "\n",
			h->lost_samples, h->lost_events, h->nr_procs);
	else
		fprintf(out, "\n# lost: unknown (no END record)\n"
			"# WARNING: truncated recording (no END record, the recorder was killed?): "
			"shown up to the last complete block\n");
	if (frame_namer__source(namer)) {
		uint64_t d = frame_namer__delta(namer);
		const char *p;

		/* A path the user typed, but still nothing a terminal would act on. */
		fprintf(out, "# kernel symbols: from ");
		for (p = frame_namer__source(namer); *p; p++)
			fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, out);
		fprintf(out, ", relocated by %s0x%" PRIx64 " from the recorded _text 0x%" PRIx64 "\n",
			d >> 63 ? "-" : "+", d >> 63 ? -d : d, h->text_addr);
	}
	if (frame_namer__symfs(namer))
		symfs__print_header(frame_namer__symfs(namer), out);
	print_unnamed(out, u);
	fprintf(out, "#\n");
}

int report_view__table(FILE *out, const struct report *r, const struct view_opts *o)
{
	struct table t = { .r = r, .namer = namer_of(o) };
	size_t i, nr, nf, cw = strlen("process"), mw = strlen("module");
	int err;

	if (!out || !r)
		return -EINVAL;
	nf = report__nr_frames(r);
	t.frame_fkey = malloc((nf ? nf : 1) * sizeof(*t.frame_fkey));
	t.frame_reason = malloc(nf ? nf : 1);
	if (!t.frame_fkey || !t.frame_reason) {
		free(t.frame_fkey);
		free(t.frame_reason);
		return -ENOMEM;
	}
	memset(t.frame_fkey, 0xff, (nf ? nf : 1) * sizeof(*t.frame_fkey));
	err = agg__build(&t.a, r, o);
	err = err ?: table__count(&t);
	if (err)
		goto out;
	for (i = 0; i < t.nr_rows; i++) {
		struct row *row = &t.rows[i];

		row->comm_s = strset__str(&t.a.comms, row->comm);
		row->mod_s = strset__str(&t.fkeys, row->fkey);
		row->sym_s = row->mod_s + strlen(row->mod_s) + 1;
	}
	if (t.nr_rows)
		qsort(t.rows, t.nr_rows, sizeof(*t.rows), row_cmp);
	nr = o && o->limit && o->limit < t.nr_rows ? o->limit : t.nr_rows;
	for (i = 0; i < nr; i++) {
		size_t c = strlen(t.rows[i].comm_s), m = strlen(t.rows[i].mod_s);

		cw = c > cw ? (c < 16 ? c : 16) : cw;
		mw = m > mw ? (m < 32 ? m : 32) : mw;
	}
	print_header(out, r, t.a.total, t.namer, &t.unnamed);
	if (!t.a.total)
		fprintf(out, "# no samples\n");
	else
		fprintf(out, "# %6s %8s %9s  %-*s  %-*s  %s\n", "self%", "total%", "samples",
			(int)cw, "process", (int)mw, "module", "symbol");
	for (i = 0; i < nr && t.a.total; i++) {
		const struct row *row = &t.rows[i];
		char comm[64];

		snprintf(comm, sizeof(comm), "%s", row->comm_s);
		sanitize(comm, strlen(comm), false);
		fprintf(out, "%7.2f%% %7.2f%% %9" PRIu64 "  %-*s  %-*s  %s\n",
			100.0 * (double)row->self / (double)t.a.total,
			100.0 * (double)row->total / (double)t.a.total, row->self,
			(int)cw, comm, (int)mw, row->mod_s, row->sym_s);
	}
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	free(t.frame_fkey);
	free(t.frame_reason);
	rpt_buf__free(&t.scratch);
	free(t.rows);
	rpt_htab__free(&t.row_tab);
	strset__free(&t.fkeys);
	agg__free(&t.a);
	return err;
}
