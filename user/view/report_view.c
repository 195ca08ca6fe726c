// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_view: how every view names a frame, and the folded stacks.  The
 * table is in report_table.c, its header in report_header.c, the counting
 * both start from in report_agg.c, the filters in view_opts.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strtab.h"
#include "view/report_agg.h"
#include "view/report_view_int.h"

const char *view__module_base(const struct rpt_module *m)
{
	const char *slash;

	if (!m->path || !m->path[0]) {
		switch (m->kind) {
		case RPT_MOD_KERNEL:
			return "[kernel.kallsyms]";
		case RPT_MOD_ANON:
			return "[anon]";
		default:
			return VIEW_UNKNOWN;
		}
	}
	slash = strrchr(m->path, '/');
	return slash && slash[1] ? slash + 1 : m->path;
}

/* snprintf-like: the length the name of @fn (a frame of @kind) needs, whatever @len is. */
static int frame_fmt(const struct frame_name *fn, uint32_t kind, char *buf, size_t len,
		     bool ksuffix)
{
	/* Every kernel frame, named or not, so FlameGraph colors it as kernel; interpreters' too. */
	const char *sfx = !ksuffix ? "" : kind == RPT_FRAME_KERNEL ? "_[k]" :
			  kind == RPT_FRAME_INTERP ? VIEW_INTERP_SUFFIX : "";

	if (fn->sym)
		return snprintf(buf, len, "%s%s", fn->sym, sfx);
	if (kind == RPT_FRAME_INTERP)
		return snprintf(buf, len, VIEW_INTERP_UNNAMED "%s", sfx);
	if (fn->module) {
		const char *base = view__module_base(fn->module);
		size_t n = strlen(base);

		/* "[vdso]" and "[kernel.kallsyms]" are bracketed already: no "[[vdso]+0x..]". */
		if (n >= 2 && base[0] == '[' && base[n - 1] == ']') {
			base++;
			n -= 2;
		}
		return snprintf(buf, len, "[%.*s+0x%" PRIx64 "]%s", (int)n, base, fn->offset, sfx);
	}
	return snprintf(buf, len, VIEW_UNKNOWN "%s", sfx);
}

const char *view__frame_name(const struct view_opts *o, const struct report *r,
			     const struct rpt_frame *f, char *buf, size_t len)
{
	struct frame_name fn;

	frame_namer__name(view__namer(o), r, f, &fn);
	if (len)
		frame_fmt(&fn, f->kind, buf, len, true);
	return buf;
}

/* Folded lines split on ';' and end at whitespace + count: keep names from breaking that. */
void view__sanitize(char *p, size_t n, bool folded)
{
	for (; n--; p++) {
		if (folded && *p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

/* Append the display name @fn of a frame of @kind to @b (no NUL). */
int view__buf_frame(struct rpt_buf *b, const struct frame_name *fn, uint32_t kind, bool folded)
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
	view__sanitize((char *)b->data + b->len, (size_t)n, folded);
	b->len += (size_t)n;
	return 0;
}

struct line {
	const char *text;
	uint64_t count;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Where a folded frame name is in names.text. */
struct sref {
	size_t off, len;
};

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
		err = view__buf_frame(&n->text, &fn, f->kind, true);
		if (err)
			return err;
		*s = (struct sref){ start, n->text.len - start };
	}
	return rpt_buf__put(b, n->text.data + s->off, s->len);
}

/* Render each (comm, stack) pair as a folded line; lines that print alike are merged. */
static int folded__lines(const struct report *r, const struct view_opts *o, const struct agg *a,
			 struct strtab *lines, uint64_t **counts)
{
	struct names names = { .namer = view__namer(o) };
	struct rpt_buf b = {};
	size_t i, before, cap = 0;
	int err;

	err = names__init(&names, r);
	for (i = 0; i < a->nr_pairs && !err; i++) {
		const struct pair *p = &a->pairs[i];
		const char *comm = agg__comm_str(a, p);
		uint32_t nr = 0, j, id;
		const uint32_t *ids = report__stack(r, p->stack, &nr);

		b.len = 0;
		err = rpt_buf__put(&b, comm, strlen(comm));
		if (err)
			break;
		view__sanitize((char *)b.data, b.len, true);
		/* Leaf first, kernel before user: reversed, that is root first. */
		for (j = nr; j-- > 0 && !err;) {
			err = rpt_buf__put(&b, ";", 1);
			err = err ?: names__put(&names, r, ids[j], &b);
		}
		if (!nr)
			err = err ?: rpt_buf__put(&b, ";" VIEW_UNKNOWN, strlen(";" VIEW_UNKNOWN));
		/* Off the CPU: the state as a pseudo frame above the leaf, as bcc's offcputime -f. */
		if (p->state) {
			const char *st = rpt_offstate__str(p->state - 1);

			err = err ?: rpt_buf__put(&b, ";[", 2);
			err = err ?: rpt_buf__put(&b, st, strlen(st));
			err = err ?: rpt_buf__put(&b, "]", 1);
		}
		/* Two unnamed addresses in one module print alike, for one. */
		before = strtab__nr(lines);
		err = err ?: strtab__intern_id(lines, b.data, b.len, &id);
		err = err ?: rpt_grow((void **)counts, &cap, strtab__nr(lines), sizeof(**counts));
		if (err)
			break;
		if (strtab__nr(lines) > before)
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
	struct strtab lines = {};
	uint64_t *counts = NULL;
	struct line *sorted = NULL;
	size_t i, nr = 0;
	int err;

	if (!out || !r)
		return -EINVAL;
	err = agg__build(&a, r, o);
	err = err ?: folded__lines(r, o, &a, &lines, &counts);
	if (!err)
		nr = strtab__nr(&lines);
	if (!err && nr) {
		sorted = calloc(nr, sizeof(*sorted));
		if (!sorted)
			err = -ENOMEM;
	}
	if (!err) {
		for (i = 0; i < nr; i++)
			sorted[i] = (struct line){ strtab__str(&lines, (uint32_t)i), counts[i] };
		if (nr)
			qsort(sorted, nr, sizeof(*sorted), line_cmp);
		/* Timed metrics: the ns of a line in microseconds, offcputime -f's unit. */
		for (i = 0; i < nr; i++)
			fprintf(out, "%s %" PRIu64 "\n", sorted[i].text, view__metric(o) == VIEW_METRIC_CPU ?
				sorted[i].count : (sorted[i].count + 500) / 1000);
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	free(sorted);
	free(counts);
	strtab__free(&lines);
	agg__free(&a);
	return err;
}
