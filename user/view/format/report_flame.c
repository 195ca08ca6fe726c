// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_flame: the flame graph SVG.  Kept samples are counted per
 * distinct (comm, stack), then each pair is walked once into a tree of
 * frames keyed by (parent, name, colour family), so the work scales with
 * distinct stacks, not samples.  The file is bounded whatever the
 * recording: frames narrower than the minimum width are left out, and so
 * are the narrowest past max_frames (with their subtrees: a child is never
 * wider than its parent), and a name is cut at NAME_CAP bytes.
 *
 * Names come from binaries we do not trust: each is made valid UTF-8 of
 * characters XML allows (control bytes become '?', invalid sequences
 * U+FFFD) before it is interned, and XML-escaped when written, so nothing
 * in a name can end an element, an attribute or the script.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "view/format/report_flame.h"
#include "view/format/report_flame_js.h"
#include "report/report_fmt.h"
#include "view/report_view.h"
#include "base/util.h"

#define DEF_WIDTH	1200
#define DEF_MIN_WIDTH	0.1	/* pixels, FlameGraph's --minwidth default */
#define DEF_MAX_FRAMES	50000	/* a browser still zooms and searches this many quickly */
#define PAD		10	/* left and right margin */
#define ROW		16	/* pixels per stack level (a rectangle and a 1 px gap) */
#define TOP		66	/* title, subtitle and legend above the frames */
#define BOTTOM		28	/* the details line below them */
#define CHAR_W		7.3	/* monospace advance at 12 px, a little wide: labels never overflow */
#define NAME_CAP	1024	/* bytes of a name kept; longer ones end in "..." */
#define HIGHLIGHT	"#e600e6"	/* search hits: no family comes near magenta */

/* Colour families. */
enum cls { C_ROOT, C_PROC, C_USER, C_KERNEL, C_JIT };

/* Interned NUL-terminated strings, found by content. */
struct names {
	struct rpt_buf data;
	size_t *off;
	size_t nr, cap;
	struct rpt_htab tab;
};

static bool names_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct names *s = ctx;

	return !strcmp((const char *)s->data.data + s->off[id], key);
}

/* Intern @p (which must not point into @s). */
static int names__intern(struct names *s, const char *p, uint32_t *id)
{
	size_t len = strlen(p), slot;
	uint32_t h = (uint32_t)hash_bytes(0, p, len);
	int err;

	err = rpt_htab__reserve(&s->tab, 1);
	if (err)
		return err;
	*id = rpt_htab__find(&s->tab, h, names_eq, s, p, &slot);
	if (*id != RPT_NONE)
		return 0;
	if (s->nr >= RPT_ID_LIMIT)
		return -E2BIG;
	err = rpt_grow((void **)&s->off, &s->cap, s->nr + 1, sizeof(*s->off));
	if (err)
		return err;
	s->off[s->nr] = s->data.len;
	err = rpt_buf__put(&s->data, p, len + 1);
	if (err)
		return err;
	*id = (uint32_t)s->nr++;
	rpt_htab__insert_at(&s->tab, slot, h, *id);
	return 0;
}

/* Valid until the next intern. */
static const char *names__str(const struct names *s, uint32_t id)
{
	return (const char *)s->data.data + s->off[id];
}

static void names__free(struct names *s)
{
	rpt_buf__free(&s->data);
	free(s->off);
	rpt_htab__free(&s->tab);
}

/*
 * The length of the UTF-8 sequence at @p (@n bytes left) when it encodes
 * a character XML 1.0 allows (shortest form, no surrogate, not U+FFFE or
 * U+FFFF, no C0/C1 control); 0 otherwise.
 */
static size_t xml_char(const unsigned char *p, size_t n)
{
	uint32_t cp, min;
	size_t len, i;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/*
 * Append @n bytes of @s to @b as clean UTF-8 (see the file comment), then
 * "..." when @cut (@s was cut at NAME_CAP, maybe inside a sequence), then
 * a NUL.
 */
static int clean_put(struct rpt_buf *b, const char *s, size_t n, bool cut)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	int err = 0;

	while (i < n && !err) {
		k = xml_char(p + i, n - i);
		if (k) {
			err = rpt_buf__put(b, p + i, k);
			i += k;
		} else if (p[i] < 0x80 || (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)) {
			/* An ASCII or C1 control: one visible character, as the table prints. */
			err = rpt_buf__put(b, "?", 1);
			i += p[i] < 0x80 ? 1 : 2;
		} else if (cut && n - i < 4 && p[i] >= 0xc2) {
			break;	/* the start of a character NAME_CAP cut: drop it */
		} else {
			err = rpt_buf__put(b, repl, sizeof(repl) - 1);
			i++;
		}
	}
	if (cut)
		err = err ?: rpt_buf__put(b, "...", 3);
	return err ?: rpt_buf__put(b, "", 1);
}

/* Kept samples counted per distinct (comm, stack). */
struct pair {
	const char *comm;
	uint32_t stack;
	uint64_t count;
};

struct node {
	uint64_t total;		/* samples at or above this frame */
	uint64_t off;		/* samples left of it (layout) */
	uint32_t parent;	/* RPT_NONE for the root */
	uint32_t name;
	uint32_t depth;
	uint32_t first, nr;	/* children: order[first, first + nr) (layout) */
	uint8_t cls;
	bool kept;
};

struct flame {
	const struct report *r;
	const struct view_opts *o;
	struct names names;
	struct pair *pairs;
	size_t nr_pairs, cap_pairs;
	struct rpt_htab pair_tab;
	uint32_t *frame_name;	/* per frame id, RPT_NONE until named */
	uint8_t *frame_cls;
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct rpt_htab node_tab;
	struct rpt_buf scratch;
	uint64_t total;
	/* Layout. */
	uint32_t *order;	/* kept nodes but the root, grouped by parent, sorted by name */
	size_t nr_order;
	uint32_t *dfs;		/* kept nodes in the order they are written */
	size_t nr_dfs;
	uint32_t max_depth;
	size_t omitted;		/* nodes left out */
};

static bool pair_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct pair *a = &((const struct flame *)ctx)->pairs[id], *b = key;

	return a->stack == b->stack && !strcmp(a->comm, b->comm);
}

static int flame__count(struct flame *fl, const char *comm, uint32_t stack)
{
	struct pair k = { comm, stack, 0 };
	uint32_t h = (uint32_t)hash_bytes(stack, comm, strlen(comm)), id;
	size_t slot;
	int err;

	err = rpt_htab__reserve(&fl->pair_tab, 1);
	if (err)
		return err;
	id = rpt_htab__find(&fl->pair_tab, h, pair_eq, fl, &k, &slot);
	if (id == RPT_NONE) {
		if (fl->nr_pairs >= RPT_ID_LIMIT)
			return -E2BIG;
		err = rpt_grow((void **)&fl->pairs, &fl->cap_pairs, fl->nr_pairs + 1, sizeof(*fl->pairs));
		if (err)
			return err;
		id = (uint32_t)fl->nr_pairs++;
		fl->pairs[id] = k;
		rpt_htab__insert_at(&fl->pair_tab, slot, h, id);
	}
	fl->pairs[id].count++;
	fl->total++;
	return 0;
}

/* Intern the clean form of @raw (cut when it filled NAME_CAP bytes). */
static int flame__name(struct flame *fl, const char *raw, uint32_t *id)
{
	size_t n = strlen(raw);
	int err;

	fl->scratch.len = 0;
	err = clean_put(&fl->scratch, raw, n, n >= NAME_CAP);
	return err ?: names__intern(&fl->names, (const char *)fl->scratch.data, id);
}

/* The interned name and colour family of frame @id, computed once. */
static int flame__frame(struct flame *fl, uint32_t id, uint32_t *name, uint8_t *cls)
{
	const struct rpt_frame *f;
	const struct rpt_module *m;
	char raw[NAME_CAP + 1];
	int err;

	if (fl->frame_name[id] == RPT_NONE) {
		f = report__frame(fl->r, id);
		if (!f)
			return -EINVAL;
		view__frame_name(fl->o, fl->r, f, raw, sizeof(raw));
		err = flame__name(fl, raw, &fl->frame_name[id]);
		if (err)
			return err;
		m = f->module != RPT_NONE ? report__module(fl->r, f->module) : NULL;
		if (f->kind == RPT_FRAME_KERNEL)
			fl->frame_cls[id] = C_KERNEL;
		else if (m && m->kind == RPT_MOD_ANON)
			fl->frame_cls[id] = C_JIT;
		else
			fl->frame_cls[id] = C_USER;
	}
	*name = fl->frame_name[id];
	*cls = fl->frame_cls[id];
	return 0;
}

static bool node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct node *a = &((const struct flame *)ctx)->nodes[id], *b = key;

	return a->parent == b->parent && a->name == b->name && a->cls == b->cls;
}

/* The child (@name, @cls) of @parent, created if new; @count samples added to it. */
static int flame__child(struct flame *fl, uint32_t parent, uint32_t name, uint8_t cls, uint64_t count,
			uint32_t *id)
{
	struct node k = { .parent = parent, .name = name, .cls = cls };
	uint32_t h = (uint32_t)hash_u64(hash_u64(hash_u64(2, parent), name), cls);
	size_t slot;
	int err;

	err = rpt_htab__reserve(&fl->node_tab, 1);
	if (err)
		return err;
	*id = rpt_htab__find(&fl->node_tab, h, node_eq, fl, &k, &slot);
	if (*id == RPT_NONE) {
		if (fl->nr_nodes >= RPT_ID_LIMIT)
			return -E2BIG;
		err = rpt_grow((void **)&fl->nodes, &fl->cap_nodes, fl->nr_nodes + 1, sizeof(*fl->nodes));
		if (err)
			return err;
		*id = (uint32_t)fl->nr_nodes++;
		fl->nodes[*id] = k;
		rpt_htab__insert_at(&fl->node_tab, slot, h, *id);
	}
	fl->nodes[*id].total += count;
	return 0;
}

/* Count the kept samples, then walk each (comm, stack) into the tree. */
static int flame__build(struct flame *fl)
{
	size_t i, nr = report__nr_samples(fl->r), nf = report__nr_frames(fl->r);
	uint32_t name, id;
	uint8_t cls;
	int err = 0;

	fl->frame_name = malloc((nf ? nf : 1) * sizeof(*fl->frame_name));
	fl->frame_cls = malloc(nf ? nf : 1);
	if (!fl->frame_name || !fl->frame_cls)
		return -ENOMEM;
	memset(fl->frame_name, 0xff, (nf ? nf : 1) * sizeof(*fl->frame_name));
	for (i = 0; i < nr && !err; i++) {
		const struct rpt_sample *s = report__sample(fl->r, i);

		if (view__keep(fl->o, s))
			err = flame__count(fl, s->comm ? s->comm : "", s->stack);
	}
	err = err ?: names__intern(&fl->names, "all", &name);
	err = err ?: flame__child(fl, RPT_NONE, name, C_ROOT, fl->total, &id);
	for (i = 0; i < fl->nr_pairs && !err; i++) {
		const struct pair *p = &fl->pairs[i];
		const uint32_t *ids;
		uint32_t n = 0, j, node;

		err = flame__name(fl, p->comm[0] ? p->comm : "[no comm]", &name);
		err = err ?: flame__child(fl, 0, name, C_PROC, p->count, &node);
		ids = err ? NULL : report__stack(fl->r, p->stack, &n);
		if (!ids)
			n = 0;
		/* Leaf first, kernel before user: reversed, that is root first. */
		for (j = n; j-- > 0 && !err;) {
			err = flame__frame(fl, ids[j], &name, &cls);
			err = err ?: flame__child(fl, node, name, cls, p->count, &node);
		}
		if (!n && !err) {
			/* As the folded view prints an empty stack. */
			err = names__intern(&fl->names, "[unknown]", &name);
			err = err ?: flame__child(fl, node, name, C_USER, p->count, &node);
		}
	}
	return err;
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/*
 * The fewest samples a kept frame has: min_width pixels at the full
 * width, raised until at most @max frames are kept.  Any threshold keeps
 * a frame's ancestors with it, as none is narrower than its children.
 */
static int flame__cut(const struct flame *fl, double usable, double min_width, size_t max,
		      uint64_t *cut)
{
	double want = ceil(min_width * (double)fl->total / usable);
	uint64_t *v;
	size_t i, n = 0;

	*cut = want > 1 ? (want < 1e18 ? (uint64_t)want : UINT64_MAX) : 1;
	for (i = 0; i < fl->nr_nodes; i++)
		n += fl->nodes[i].total >= *cut;
	if (n <= max)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0, n = 0; i < fl->nr_nodes; i++)
		if (fl->nodes[i].total >= *cut)
			v[n++] = fl->nodes[i].total;
	qsort(v, n, sizeof(*v), u64_desc);
	/* Strictly more than the (max+1)-th widest: at most max of them. */
	*cut = v[max] + 1;
	free(v);
	return 0;
}

static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct flame *fl = ctx;
	const struct node *a = &fl->nodes[*(const uint32_t *)pa], *b = &fl->nodes[*(const uint32_t *)pb];
	int c;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	c = strcmp(names__str(&fl->names, a->name), names__str(&fl->names, b->name));
	return c ?: (a->cls > b->cls) - (a->cls < b->cls);
}

/* Choose the kept frames, order siblings by name, give each its offset and depth. */
static int flame__layout(struct flame *fl, double usable, double min_width, size_t max)
{
	uint64_t cut, off;
	size_t i, j, top = 0;
	uint32_t *stack;
	int err;

	err = flame__cut(fl, usable, min_width, max, &cut);
	if (err)
		return err;
	fl->order = malloc(fl->nr_nodes * sizeof(*fl->order));
	fl->dfs = malloc(fl->nr_nodes * sizeof(*fl->dfs));
	stack = malloc(fl->nr_nodes * sizeof(*stack));
	if (!fl->order || !fl->dfs || !stack) {
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < fl->nr_nodes; i++) {
		fl->nodes[i].kept = fl->nodes[i].total >= cut;
		if (!fl->nodes[i].kept)
			fl->omitted++;
		else if (i)
			fl->order[fl->nr_order++] = (uint32_t)i;
	}
	qsort_r(fl->order, fl->nr_order, sizeof(*fl->order), order_cmp, fl);
	for (i = 0; i < fl->nr_order; i = j) {
		struct node *p = &fl->nodes[fl->nodes[fl->order[i]].parent];

		for (j = i; j < fl->nr_order && fl->nodes[fl->order[j]].parent == fl->nodes[fl->order[i]].parent; j++)
			;
		p->first = (uint32_t)i;
		p->nr = (uint32_t)(j - i);
	}
	/* Depth first from the root; a parent is placed before its children. */
	if (fl->nodes[0].kept)
		stack[top++] = 0;
	while (top) {
		struct node *n = &fl->nodes[stack[--top]];

		fl->dfs[fl->nr_dfs++] = (uint32_t)(n - fl->nodes);
		if (n->depth > fl->max_depth)
			fl->max_depth = n->depth;
		off = n->off;
		for (i = 0; i < n->nr; i++) {
			struct node *c = &fl->nodes[fl->order[n->first + i]];

			c->off = off;
			c->depth = n->depth + 1;
			off += c->total;
		}
		/* Pushed right to left, so written left to right. */
		for (i = n->nr; i-- > 0;)
			stack[top++] = fl->order[n->first + i];
	}
	free(stack);
	return 0;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * A colour of @cls's family picked by a hash of @name: the same name has
 * the same colour in every graph.  user: red to yellow; kernel: blue to
 * aqua; JIT/anonymous: green; processes and the root: grey.
 */
static uint32_t colour(uint8_t cls, const char *name)
{
	uint32_t h = fnv1a(name), a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff, v;

	switch (cls) {
	case C_KERNEL:
		return (40 + a * 60 / 255) << 16 | (130 + b * 80 / 255) << 8 | (200 + c * 55 / 255);
	case C_JIT:
		return (60 + a * 60 / 255) << 16 | (175 + b * 65 / 255) << 8 | (60 + c * 50 / 255);
	case C_USER:
		return (215 + a * 40 / 255) << 16 | (70 + b * 150 / 255) << 8 | (40 + c * 40 / 255);
	default:
		v = cls == C_ROOT ? 190 : 170 + a * 40 / 255;
		return v << 16 | v << 8 | v;
	}
}

/* Write @s XML-escaped (@s is clean: see clean_put()). */
static void xml_puts(FILE *out, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *e;

		switch (*s) {
		case '&': e = "&amp;"; break;
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '"': e = "&quot;"; break;
		case '\'': e = "&#39;"; break;
		default: continue;
		}
		fwrite(run, 1, (size_t)(s - run), out);
		fputs(e, out);
		run = s + 1;
	}
	fwrite(run, 1, (size_t)(s - run), out);
}

/* A header string of the file, cleaned and escaped. */
static int put_clean(FILE *out, struct rpt_buf *b, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	int err;

	b->len = 0;
	err = clean_put(b, s, n, false);
	if (!err)
		xml_puts(out, (const char *)b->data);
	return err;
}

/*
 * The label of a frame @w pixels wide: the name when it fits, else its
 * first characters and "..", nothing below 3 characters.  The script's
 * label() does the same when zooming.
 */
static void put_label(FILE *out, const char *name, double w)
{
	double fit = floor((w - 6) / CHAR_W);
	size_t max = fit > 0 ? (size_t)fit : 0, chars = 0, cut = 0;
	const char *p;
	char *tmp;

	if (max < 3)
		return;
	for (p = name; *p; p++) {
		if (((unsigned char)*p & 0xc0) == 0x80)
			continue;
		if (chars == max - 2)
			cut = (size_t)(p - name);
		chars++;
	}
	if (chars <= max) {
		xml_puts(out, name);
		return;
	}
	tmp = strndup(name, cut);
	if (tmp)
		xml_puts(out, tmp);
	free(tmp);
	fputs("..", out);
}

static void put_frame(FILE *out, const struct flame *fl, uint32_t id, double scale, unsigned int height)
{
	const struct node *n = &fl->nodes[id];
	const char *name = names__str(&fl->names, n->name);
	double x = PAD + (double)n->off * scale, w = (double)n->total * scale;
	unsigned int y = height - BOTTOM - (n->depth + 1) * ROW;

	fprintf(out, "<g%s data-o=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>", id ? "" : " id=\"root\"",
		n->off, n->total);
	xml_puts(out, name);
	fprintf(out, " (%" PRIu64 " samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" "
		"height=\"%u\" fill=\"#%06x\"/><text x=\"%.1f\" y=\"%u\">", n->total,
		100.0 * (double)n->total / (double)fl->total, x, y, w, ROW - 1, colour(n->cls, name),
		x + 3, y + ROW - 5);
	put_label(out, name, w);
	fputs("</text></g>\n", out);
}

static const char style[] =
	"text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 16px; }\n"
	"#subtitle { font-size: 11px; fill: #555; }\n"
	".btn { cursor: pointer; fill: #036; text-decoration: underline; }\n"
	"#frames text { pointer-events: none; }\n"
	"#frames g { cursor: pointer; }\n"
	"#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"#frames g.anc { opacity: 0.5; }\n";

static void put_legend(FILE *out, unsigned int y)
{
	static const struct {
		uint8_t cls;
		const char *what, *sample;
	} keys[] = {
		{ C_USER, "user", "main" },
		{ C_KERNEL, "kernel", "do_syscall_64_[k]" },
		{ C_JIT, "JIT / anonymous", "[anon]" },
		{ C_PROC, "process", "bash" },
	};
	unsigned int x = PAD;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" fill=\"#%06x\"/>"
			"<text x=\"%u\" y=\"%u\">%s</text>\n", x, y - 10, colour(keys[i].cls, keys[i].sample),
			x + 16, y, keys[i].what);
		x += 16 + (unsigned int)(strlen(keys[i].what) * CHAR_W) + 20;
	}
}

static int put_header(FILE *out, struct flame *fl, unsigned int width, unsigned int height,
		      double min_width)
{
	const struct rpt_header *h = report__header(fl->r);
	struct rpt_buf *b = &fl->scratch;
	int err;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\">\n<style>\n%s</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f4\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"22\" text-anchor=\"middle\">Flame graph</text>\n"
		"<text id=\"subtitle\" x=\"%u\" y=\"40\" text-anchor=\"middle\">",
		width, height, width, height, style, width, height, width / 2, width / 2);
	err = put_clean(out, b, h->hostname, sizeof(h->hostname));
	fputs(", ", out);
	err = err ?: put_clean(out, b, h->release, sizeof(h->release));
	fputs(": ", out);
	err = err ?: put_clean(out, b, h->event, sizeof(h->event));
	fprintf(out, " at %u Hz, target ", h->freq);
	err = err ?: put_clean(out, b, h->target, sizeof(h->target));
	fprintf(out, ", %" PRIu64 " samples", fl->total);
	if (fl->total != report__nr_samples(fl->r))
		fprintf(out, " (of %zu, filtered)", report__nr_samples(fl->r));
	if (!h->complete)
		fputs(", truncated recording", out);
	if (fl->omitted)
		fprintf(out, ", %zu frames narrower than %.1f px left out", fl->omitted, min_width);
	fprintf(out, "</text>\n"
		"<text id=\"unzoom\" class=\"btn\" x=\"%u\" y=\"22\" visibility=\"hidden\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"clear\" class=\"btn\" x=\"%u\" y=\"40\" text-anchor=\"end\" "
		"visibility=\"hidden\">Clear search</text>\n",
		PAD, width - PAD, width - PAD);
	put_legend(out, 58);
	return err;
}

/*
 * The error of @out: stdio keeps only a flag, so it is read right after
 * each frame, while errno still holds what the failed write() said
 * (ENOSPC rather than a bare EIO).
 */
static int out_err(FILE *out)
{
	return ferror(out) ? (errno > 0 ? -errno : -EIO) : 0;
}

int report_flame__fprint(FILE *out, const struct report *r, const struct view_opts *o,
			 const struct flame_opts *fo)
{
	unsigned int width = fo && fo->width ? fo->width : DEF_WIDTH, height;
	double min_width = fo && fo->min_width > 0 ? fo->min_width : DEF_MIN_WIDTH, usable, scale;
	size_t max = fo && fo->max_frames ? fo->max_frames : DEF_MAX_FRAMES, i;
	struct flame fl = { .r = r, .o = o };
	int err;

	if (!out || !r || width < 2 * PAD + 1 || width > 1000000)
		return -EINVAL;
	usable = width - 2 * PAD;
	err = flame__build(&fl);
	if (!err && fl.total)
		err = flame__layout(&fl, usable, min_width, max);
	if (err)
		goto out;
	height = TOP + (fl.total ? (fl.max_depth + 1) * ROW : 0) + BOTTOM;
	scale = fl.total ? usable / (double)fl.total : 0;
	err = put_header(out, &fl, width, height, min_width);
	err = err ?: out_err(out);
	if (err)
		goto out;
	fprintf(out, "<g id=\"frames\" data-total=\"%" PRIu64 "\" data-width=\"%u\" data-pad=\"%u\" "
		"data-cw=\"%.1f\" data-hl=\"%s\">\n", fl.total, width, PAD, CHAR_W, HIGHLIGHT);
	for (i = 0; i < fl.nr_dfs && fl.total && !err; i++) {
		put_frame(out, &fl, fl.dfs[i], scale, height);
		err = out_err(out);
	}
	if (err)
		goto out;
	fprintf(out, "</g>\n<text id=\"details\" x=\"%u\" y=\"%u\">%s</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		PAD, height - 10, fl.total ? " " : "No samples", width - PAD, height - 10, report_flame_js);
	err = fflush(out) ? -errno : out_err(out);
out:
	names__free(&fl.names);
	free(fl.pairs);
	rpt_htab__free(&fl.pair_tab);
	free(fl.frame_name);
	free(fl.frame_cls);
	free(fl.nodes);
	rpt_htab__free(&fl.node_tab);
	rpt_buf__free(&fl.scratch);
	free(fl.order);
	free(fl.dfs);
	return err;
}

int report_flame__write(const char *path, const struct report *r, const struct view_opts *o,
			const struct flame_opts *fo)
{
	size_t len;
	char *tmp;
	mode_t mask;
	FILE *f;
	int fd, err;

	if (!path || !path[0])
		return -EINVAL;
	if (!strcmp(path, "-"))
		return report_flame__fprint(stdout, r, o, fo);
	err = output_open_special(path, &fd);
	if (err)
		return err;
	if (fd >= 0) {
		f = fdopen(fd, "w");
		if (!f) {
			err = -errno;
			close(fd);
			return err;
		}
		err = report_flame__fprint(f, r, o, fo);
		if (fclose(f) && !err)
			err = -errno;
		return err;
	}
	len = strlen(path);
	tmp = malloc(len + sizeof(".XXXXXX"));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".XXXXXX", sizeof(".XXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	/* mkstemp makes it 0600; the result is an ordinary file for the user's umask. */
	mask = umask(0);
	umask(mask);
	err = fchmod(fd, 0666 & ~mask) ? -errno : 0;
	f = err ? NULL : fdopen(fd, "w");
	if (!f) {
		err = err ?: -errno;
		close(fd);
		goto out;
	}
	err = report_flame__fprint(f, r, o, fo);
	if (!err && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
