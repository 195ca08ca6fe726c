// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flame graph SVG of the report fixture: well-formed XML (a small
 * checker here, and xmllint when installed), hostile names escaped, the
 * frame tree equal to the folded view's stacks, widths proportional to
 * samples, colours by kind and stable, the bounds (minimum width, frame
 * cap, name cap), filters, and the temp-file-and-rename write.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "report/report.h"
#include "view/format/report_flame.h"
#include "view/report_view.h"
#include "base/util.h"

TEST_SUITE("report_flame");

#include "report_fixture.h"

#define NR_SAMPLES 600

/* A frame name with everything that could break the SVG or its script. */
static const char hostile[] = "w<&\"'>\x01\x1b[31m\x7f\xff\xc0\xaf\xed\xa0\x80\xef\xbf\xbe\xc2\x85"
			      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80]]></script>";
/* What the graph must show for it: controls '?', invalid UTF-8 and non-characters U+FFFD. */
#define FFFD "\xef\xbf\xbd"
static const char hostile_esc[] = "w&lt;&amp;&quot;&#39;&gt;??[31m?" FFFD FFFD FFFD FFFD FFFD FFFD
				  FFFD FFFD FFFD "?\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80]]&gt;&lt;/script&gt;";

/* The fixture, with frame 2 (__libc_write) renamed to @sym2 and frame 7 (5000 letters) to @sym7. */
static struct report *load2(const char *sym2, const char *sym7)
{
	const char *saved = fx_frames[2].sym, *saved7 = fx_frames[7].sym;
	char path[PATH_MAX];
	struct report *r = NULL;

	tmp_path(path, sizeof(path), "flame");
	if (sym2)
		fx_frames[2].sym = sym2;
	if (sym7)
		fx_frames[7].sym = sym7;
	if (fx_write(path, NR_SAMPLES, 100)) {
		r = report__open(path, errbuf, sizeof(errbuf));
		if (ASSERT_OK_PTR(r, errbuf))
			fx_check(r, NR_SAMPLES, true);
	}
	fx_frames[2].sym = saved;
	fx_frames[7].sym = saved7;
	unlink(path);
	return r;
}

static struct report *load(const char *sym2)
{
	return load2(sym2, NULL);
}

/* Render into a string (freed by the caller); NULL on failure. */
static char *render(const struct report *r, const struct view_opts *o, const struct flame_opts *fo)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!ASSERT_OK_PTR(f, "open_memstream"))
		return NULL;
	err = report_flame__fprint(f, r, o, fo);
	fclose(f);
	if (!ASSERT_OK(err, "report_flame__fprint")) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- a small XML well-formedness checker ---- */

/* Length of the XML 1.0 character (valid UTF-8) at @p, 0 if there is none. */
static size_t xchar(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (p[0] < 0x80)
		return p[0] >= 0x20 || p[0] == '\n' || p[0] == '\t' || p[0] == '\r';
	len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 && p[0] < 0xf0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (!len || len > n)
		return 0;
	cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':' || c == '.';
}

/* A reference at @p ("&...;"): its length, 0 if it is not a valid one. */
static size_t xref(const char *p)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	size_t i;

	for (i = 0; i < 5; i++)
		if (!strncmp(p, named[i], strlen(named[i])))
			return strlen(named[i]);
	if (p[1] != '#')
		return 0;
	i = p[2] == 'x' ? 3 : 2;
	if (!(p[2] == 'x' ? strchr("0123456789abcdefABCDEF", p[i]) : strchr("0123456789", p[i])) || !p[i])
		return 0;
	while (p[i] && strchr(p[2] == 'x' ? "0123456789abcdefABCDEF" : "0123456789", p[i]))
		i++;
	return p[i] == ';' ? i + 1 : 0;
}

/* NULL when @s is a well-formed XML document, else what is wrong (at *@at). */
static const char *xml_check(const char *s, size_t *at)
{
	const char *open[256], *p = s, *q;
	size_t lens[256], depth = 0, roots = 0, k, n;

	for (k = 0, n = strlen(s); k < n; k += xchar((const unsigned char *)s + k, n - k))
		if (!xchar((const unsigned char *)s + k, n - k)) {
			*at = k;
			return "not an XML character (or not UTF-8)";
		}
	if (!strncmp(p, "<?xml", 5)) {
		q = strstr(p, "?>");
		if (!q)
			return "unterminated XML declaration";
		p = q + 2;
	}
	while (*p) {
		*at = (size_t)(p - s);
		if (!strncmp(p, "<!--", 4)) {
			q = strstr(p + 4, "-->");
			if (!q)
				return "unterminated comment";
			p = q + 3;
		} else if (!strncmp(p, "<![CDATA[", 9)) {
			if (!depth)
				return "CDATA outside the root";
			q = strstr(p + 9, "]]>");
			if (!q)
				return "unterminated CDATA";
			p = q + 3;
		} else if (!strncmp(p, "</", 2)) {
			for (q = p + 2; name_char(*q); q++)
				;
			if (!depth || (size_t)(q - p - 2) != lens[depth - 1] || strncmp(p + 2, open[depth - 1], lens[depth - 1]))
				return "mismatched end tag";
			while (*q == ' ' || *q == '\n' || *q == '\t')
				q++;
			if (*q != '>')
				return "bad end tag";
			depth--;
			p = q + 1;
		} else if (*p == '<') {
			if (!depth && roots++)
				return "a second root element";
			for (q = p + 1; name_char(*q); q++)
				;
			if (q == p + 1)
				return "element without a name";
			if (depth == 256)
				return "too deep for the checker";
			open[depth] = p + 1;
			lens[depth] = (size_t)(q - p - 1);
			for (;;) {
				const char *a;
				char quote;

				while (*q == ' ' || *q == '\n' || *q == '\t')
					q++;
				if (*q == '>') {
					depth++;
					break;
				}
				if (q[0] == '/' && q[1] == '>') {
					q++;
					break;
				}
				for (a = q; name_char(*q); q++)
					;
				if (q == a || *q != '=' || (q[1] != '"' && q[1] != '\''))
					return "bad attribute";
				quote = q[1];
				for (q += 2; *q && *q != quote; q++) {
					if (*q == '<')
						return "'<' in an attribute value";
					if (*q == '&' && !xref(q))
						return "bad reference in an attribute value";
				}
				if (!*q)
					return "unterminated attribute value";
				q++;
				if (*q != ' ' && *q != '\n' && *q != '>' && *q != '/')
					return "no space between attributes";
			}
			p = q + 1;
		} else if (*p == '&') {
			if (!(k = xref(p)))
				return "bad reference in text";
			if (!depth)
				return "text outside the root";
			p += k;
		} else {
			if (!depth && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
				return "text outside the root";
			if (!strncmp(p, "]]>", 3))
				return "']]>' in text";
			p++;
		}
	}
	*at = (size_t)(p - s);
	if (depth)
		return "unclosed element";
	return roots == 1 ? NULL : "no root element";
}

/* ---- the frames, parsed back ---- */

struct pframe {
	uint64_t o, n;
	double x, w;
	unsigned int y, fill;
	char name[1200];	/* unescaped */
	int parent;
};

#define MAX_PFRAMES 256

static void unescape(char *dst, size_t size, const char *src, size_t len)
{
	static const struct {
		const char *ent, c;
	} ents[] = { { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&#39;", '\'' } };
	size_t i, j, k;

	for (i = j = 0; i < len && j + 1 < size;) {
		for (k = 0; k < 5 && strncmp(src + i, ents[k].ent, strlen(ents[k].ent)); k++)
			;
		if (src[i] == '&' && k < 5) {
			dst[j++] = ents[k].c;
			i += strlen(ents[k].ent);
		} else {
			dst[j++] = src[i++];
		}
	}
	dst[j] = '\0';
}

/* Parse the frames of @svg into @v; the count, or -1 (a test failure) when one does not parse. */
static int parse_frames(const char *svg, struct pframe *v, int max)
{
	const char *p = strstr(svg, "<g id=\"frames\""), *t, *e;
	int n = 0, i, j;

	if (!ASSERT_OK_PTR(p, "frames group"))
		return -1;
	for (p = strstr(p + 1, "<g"); p; p = strstr(p + 1, "\n<g")) {
		struct pframe *f = &v[n];

		if (!ASSERT_TRUE(n < max, "frame count within the parser's room"))
			return -1;
		t = strstr(p, "data-o=\"");
		e = strstr(p, "<title>");
		if (!ASSERT_TRUE(t && e && sscanf(t, "data-o=\"%" SCNu64 "\" data-n=\"%" SCNu64 "\"", &f->o, &f->n) == 2,
				 "frame attributes"))
			return -1;
		/* The name ends at the last " (" of the title. */
		for (t = strstr(e, "</title>"); t && t > e && strncmp(t, " (", 2); t--)
			;
		if (!ASSERT_TRUE(t && t > e, "title"))
			return -1;
		unescape(f->name, sizeof(f->name), e + 7, (size_t)(t - e - 7));
		t = strstr(e, "<rect ");
		if (!ASSERT_TRUE(t && sscanf(t, "<rect x=\"%lf\" y=\"%u\" width=\"%lf\" height=\"15\" fill=\"#%x\"",
					     &f->x, &f->y, &f->w, &f->fill) == 4, "rect attributes"))
			return -1;
		n++;
	}
	/* The parent: one row down, its samples around this one's. */
	for (i = 0; i < n; i++) {
		v[i].parent = -1;
		for (j = 0; j < n; j++)
			if (v[j].y == v[i].y + 16 && v[j].o <= v[i].o && v[i].o + v[i].n <= v[j].o + v[j].n)
				v[i].parent = j;
	}
	return n;
}

static int find_frame(const struct pframe *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return i;
	return -1;
}

/* ---- tests ---- */

static void test_well_formed(void)
{
	struct report *r = load(hostile);
	char *svg, path[PATH_MAX], cmd[PATH_MAX + 64];
	const char *why;
	size_t at = 0;
	FILE *f;

	if (!r)
		return;
	svg = render(r, NULL, NULL);
	if (svg) {
		why = xml_check(svg, &at);
		if (!ASSERT_NULL(why, "well-formed XML"))
			printf("     %s at byte %zu: %.80s\n", why, at, svg + at);
		ASSERT_TRUE(!strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"", 36), "XML declaration");
		ASSERT_OK_PTR(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""), "SVG namespace");
		ASSERT_TRUE(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA[") &&
			    strstr(svg, "]]></script>\n</svg>\n"), "the script inline, at the end");
		/* The checker is not xmllint: run it too when it is there. */
		tmp_path(path, sizeof(path), "wf.svg");
		f = fopen(path, "w");
		if (ASSERT_OK_PTR(f, "fopen")) {
			fputs(svg, f);
			fclose(f);
			snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
			if (system("command -v xmllint >/dev/null 2>&1") == 0)
				ASSERT_OK(system(cmd), "xmllint --noout");
			unlink(path);
		}
	}
	free(svg);
	report__free(r);
}

/* Self-contained: the only URI is the SVG namespace, nothing is fetched. */
static void test_self_contained(void)
{
	struct report *r = load(NULL);
	char *svg, *p;
	int uris = 0;

	if (!r)
		return;
	svg = render(r, NULL, NULL);
	for (p = svg; p && (p = strstr(p, "http")); p++, uris++)
		ASSERT_TRUE(!strncmp(p, "http://www.w3.org/2000/svg\"", 27), "the only URI is the SVG namespace");
	ASSERT_EQ(uris, 1, "one URI");
	ASSERT_NULL(svg ? strstr(svg, "href") : NULL, "no href");
	ASSERT_NULL(svg ? strstr(svg, "url(") : NULL, "no url()");
	ASSERT_NULL(svg ? strstr(svg, "@import") : NULL, "no @import");
	free(svg);
	report__free(r);
}

static void test_hostile_names(void)
{
	struct report *r = load(hostile);
	char *svg, *title;
	const char *p;

	if (!r)
		return;
	svg = render(r, NULL, NULL);
	if (!svg)
		goto out;
	/* In the title, whole; in the label, its first characters. */
	if (asprintf(&title, "<title>%s (", hostile_esc) > 0) {
		ASSERT_OK_PTR(strstr(svg, title), "hostile name escaped and cleaned in its title");
		free(title);
	}
	ASSERT_OK_PTR(strstr(svg, ">w&lt;&amp;&quot;&#39;&gt;??[31m?"), "and in its label");
	ASSERT_NULL(strstr(svg, "]]></script>]"), "no early end of the script");
	for (p = svg; *p; p++)
		if (!ASSERT_TRUE((unsigned char)*p >= 0x20 || *p == '\n', "no control byte in the output"))
			break;
	/* The comm "a;b c" keeps its ';' (only the folded format needs it replaced); "" is named. */
	ASSERT_OK_PTR(strstr(svg, "<title>a;b c ("), "comm with ';' and ' '");
	ASSERT_OK_PTR(strstr(svg, "<title>[no comm] ("), "empty comm");
	/* The 5000-character name is cut at 1024 bytes. */
	p = strstr(svg, "<title>abcdefghijklmnopqrstuvwxyz");
	if (ASSERT_OK_PTR(p, "long name"))
		ASSERT_TRUE(!strncmp(p + 7 + 1024, "... (", 5), "long name cut at 1024 bytes");
out:
	free(svg);
	report__free(r);
}

/*
 * The frames are the folded view's stacks merged into a tree: each
 * frame's samples are the sum of the folded lines under its path.
 */
static void test_tree_is_folded(void)
{
	static struct pframe v[MAX_PFRAMES];
	static const char name300[] = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
	/* Names under the cap: the folded view never cuts them. */
	struct report *r = load2(NULL, name300);
	char *svg = NULL, *folded = NULL, path[4096], *line, *save = NULL;
	size_t flen = 0, leaves = 0;
	int n, i, j, chain[MAX_PFRAMES], depth;
	FILE *f;

	if (!r)
		return;
	f = open_memstream(&folded, &flen);
	if (!ASSERT_OK_PTR(f, "open_memstream") || !ASSERT_OK(report_view__folded(f, r, NULL), "folded"))
		goto out;
	fclose(f);
	f = NULL;
	svg = render(r, NULL, NULL);
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	if (n < 0)
		goto out;
	ASSERT_STREQ(v[0].name, "all", "root first");
	ASSERT_EQ(v[0].n, (uint64_t)NR_SAMPLES, "root: every sample");
	ASSERT_EQ(v[0].o, (uint64_t)0, "root offset");
	for (i = 0; i < n; i++) {
		uint64_t want = 0, children = 0, next;
		size_t plen;
		char *l, *nl;

		if (i && !ASSERT_TRUE(v[i].parent >= 0, v[i].name))
			continue;
		/* The folded path of frame i: its ancestors below the root, ';'-joined. */
		for (j = i, depth = 0; j > 0 && depth < MAX_PFRAMES; j = v[j].parent)
			chain[depth++] = j;
		path[0] = '\0';
		while (depth-- > 0) {
			const struct pframe *a = &v[chain[depth]];
			const char *nm = a->parent == 0 && !strcmp(a->name, "[no comm]") ? "" : a->name;
			size_t at = strlen(path), k;

			if (!ASSERT_TRUE(at + strlen(nm) + 2 < sizeof(path), "path room"))
				goto out;
			for (k = 0; nm[k]; k++)
				path[at + k] = nm[k] == ';' ? ':' : nm[k];
			path[at + k] = a == &v[i] ? '\0' : ';';
			path[at + k + 1] = '\0';
		}
		plen = strlen(path);
		for (l = folded; l && *l; l = nl ? nl + 1 : NULL) {
			const char *sp;

			nl = strchr(l, '\n');
			for (sp = nl ? nl : l + strlen(l); sp > l && sp[-1] != ' '; sp--)
				;
			if (i == 0 || (!strncmp(l, path, plen) && (l[plen] == ';' || l[plen] == ' ')))
				want += strtoull(sp, NULL, 10);
		}
		if (!ASSERT_EQ(v[i].n, want, "frame samples = its folded lines'"))
			printf("     frame '%s' (path '%s')\n", v[i].name, path);
		/* Children lie side by side inside their parent, left to right from its start. */
		next = v[i].o;
		for (j = 0; j < n; j++) {
			if (v[j].parent != i)
				continue;
			ASSERT_EQ(v[j].o, next, "children packed from the parent's start");
			next = v[j].o + v[j].n;
			children += v[j].n;
		}
		ASSERT_TRUE(children <= v[i].n, "children within the parent");
		/* Widths are proportional: 1180 px for the root. */
		ASSERT_TRUE(fabs(v[i].w - 1180.0 * (double)v[i].n / NR_SAMPLES) < 0.06, "width = samples * scale");
		ASSERT_TRUE(fabs(v[i].x - 10 - 1180.0 * (double)v[i].o / NR_SAMPLES) < 0.06, "x = offset * scale");
	}
	/*
	 * Every folded line is a frame with self samples: its own line's
	 * count (the sums above), so as many of them as lines.
	 */
	for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		leaves++;
	for (i = 0, j = 0; i < n; i++) {
		uint64_t children = 0;
		int k;

		for (k = 0; k < n; k++)
			children += v[k].parent == i ? v[k].n : 0;
		j += v[i].n > children;
	}
	ASSERT_EQ((size_t)j, leaves, "one frame with self samples per folded line");
out:
	if (f)
		fclose(f);
	free(folded);
	free(svg);
	report__free(r);
}

static unsigned int ch(unsigned int rgb, int shift)
{
	return (rgb >> shift) & 0xff;
}

static void test_colours(void)
{
	static struct pframe v[MAX_PFRAMES];
	struct report *r = load(NULL);
	char *svg = NULL, *again = NULL;
	int n, i;

	if (!r)
		return;
	svg = render(r, NULL, NULL);
	again = render(r, NULL, NULL);
	ASSERT_TRUE(svg && again && !strcmp(svg, again), "the same graph twice");
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	for (i = 0; i < n; i++) {
		unsigned int c = v[i].fill, red = ch(c, 16), green = ch(c, 8), blue = ch(c, 0);
		size_t len = strlen(v[i].name);

		if (i == 0 || v[i].parent == 0) {
			ASSERT_TRUE(red == green && green == blue, "root and processes grey");
		} else if (len > 4 && !strcmp(v[i].name + len - 4, "_[k]")) {
			ASSERT_TRUE(blue >= 200 && red < 110, "kernel frames blue");
		} else if (!strncmp(v[i].name, "[anon+", 6)) {
			ASSERT_TRUE(green >= 175 && red < 130 && blue < 120, "anonymous (JIT) frames green");
		} else {
			if (!ASSERT_TRUE(red >= 215 && blue <= 80 && green < red, "user frames red to yellow"))
				printf("     '%s' #%06x\n", v[i].name, c);
		}
	}
	ASSERT_TRUE(find_frame(v, n, "do_syscall_64_[k]") >= 0, "a kernel frame");
	ASSERT_TRUE(find_frame(v, n, "[anon+0x40]") >= 0, "an anonymous frame");
	/* The same name, the same colour, wherever it is. */
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, "main"))
			ASSERT_EQ(v[i].fill, v[find_frame(v, n, "main")].fill, "main's colour");
	free(svg);
	free(again);
	report__free(r);
}

/* Narrow frames are left out, their ancestors never; the cap bounds the count. */
/*
 * Widths and offsets written as the page's script writes them after an
 * unzoom, v.toFixed(1): an exact tie goes to the larger tenth.  At 1.25
 * px a sample every odd count is one (1.25, 3.75, 6.25...), where "%.1f"
 * would take 1.25 to "1.2" and the page to "1.3".
 */
static void test_js_rounding(void)
{
	static struct pframe v[MAX_PFRAMES];
	enum { NR = 604 };	/* a multiple of 4, each comm 151: odd counts */
	struct flame_opts fo = { .width = 20 + NR * 5 / 4 };	/* 2 x 10 px margins */
	struct report *r = NULL;
	char path[PATH_MAX], got[32], want[32];
	int n, i, ties = 0;
	double t;

	tmp_path(path, sizeof(path), "flame-js");
	if (fx_write(path, NR, 100)) {
		r = report__open(path, errbuf, sizeof(errbuf));
		ASSERT_OK_PTR(r, errbuf);
	}
	unlink(path);
	if (!r)
		return;
	{
		char *svg = render(r, NULL, &fo);

		n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
		free(svg);
	}
	ASSERT_TRUE(n > 0 && v[0].n == NR, "the root holds every sample (1.25 px each)");
	for (i = 0; i < n; i++) {
		/* In tenths, exactly (12.5 n), then half up as toFixed. */
		t = floor(12.5 * (double)v[i].n + 0.5);
		ties += (v[i].n & 1) != 0 || (v[i].o & 1) != 0;
		snprintf(want, sizeof(want), "%.1f", t / 10);
		snprintf(got, sizeof(got), "%.1f", v[i].w);
		ASSERT_STREQ(got, want, "a width as toFixed(1) writes it");
		t = floor(100 + 12.5 * (double)v[i].o + 0.5);	/* x = 10 + 1.25 o */
		snprintf(want, sizeof(want), "%.1f", t / 10);
		snprintf(got, sizeof(got), "%.1f", v[i].x);
		ASSERT_STREQ(got, want, "an offset as toFixed(1) writes it");
	}
	ASSERT_TRUE(ties > 0, "some widths are ties");
	report__free(r);
}

static void test_bounds(void)
{
	static struct pframe v[MAX_PFRAMES];
	struct flame_opts fo = { .max_frames = 6 };
	struct report *r = load(NULL);
	char *svg;
	int n, i, all;

	if (!r)
		return;
	svg = render(r, NULL, NULL);
	all = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	ASSERT_NULL(svg ? strstr(svg, "left out") : "", "nothing left out by default");
	free(svg);

	svg = render(r, NULL, &fo);
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	ASSERT_TRUE(n > 0 && n <= 6, "at most max_frames");
	for (i = 1; i < n; i++)
		ASSERT_TRUE(v[i].parent >= 0, "kept frames keep their parents");
	if (svg && n > 0) {
		char want[64];

		snprintf(want, sizeof(want), ", %d frames narrower than", all - n);
		ASSERT_OK_PTR(strstr(svg, want), "the subtitle counts what was left out");
	}
	free(svg);

	/* 200 px of 1180 is 101.7 samples of 600: only frames of 102 and more. */
	fo = (struct flame_opts){ .min_width = 200 };
	svg = render(r, NULL, &fo);
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	ASSERT_TRUE(n > 1 && n < all, "some kept, some left out");
	for (i = 0; i < n; i++)
		ASSERT_TRUE(v[i].n >= 102 && v[i].w >= 200, "no frame narrower than min_width");
	free(svg);
	report__free(r);
}

static void test_filters(void)
{
	static struct pframe v[MAX_PFRAMES];
	static const uint32_t pids[] = { 200 }, none[] = { 12345 };
	struct view_opts o = { .pids = pids, .nr_pids = 1 };
	struct report *r = load(NULL);
	uint64_t want = 0;
	size_t i;
	char *svg;
	int n;

	if (!r)
		return;
	for (i = 0; i < report__nr_samples(r); i++)
		want += view__keep(&o, report__sample(r, i));
	svg = render(r, &o, NULL);
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	if (n > 0)
		ASSERT_EQ(v[0].n, want, "--pid: only its samples");
	ASSERT_OK_PTR(svg ? strstr(svg, " (of 600, filtered)") : NULL, "the subtitle says filtered");
	free(svg);

	o.pids = none;
	svg = render(r, &o, NULL);
	n = svg ? parse_frames(svg, v, MAX_PFRAMES) : -1;
	ASSERT_EQ(n, 0, "no samples: no frames");
	ASSERT_OK_PTR(svg ? strstr(svg, ">No samples</text>") : NULL, "and says so");
	if (svg) {
		size_t at;

		ASSERT_NULL(xml_check(svg, &at), "still well-formed");
	}
	free(svg);
	report__free(r);
}

static size_t leftovers(const char *dir, const char *prefix)
{
	struct dirent *d;
	size_t n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return 0;
	while ((d = readdir(dp)))
		n += !strncmp(d->d_name, prefix, strlen(prefix)) && strcmp(d->d_name, prefix);
	closedir(dp);
	return n;
}

static void test_write(void)
{
	const char *dir = getenv("BPFSYM_TEST_TMP") && *getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp";
	struct flame_opts bad = { .width = 5 };
	struct report *r = load(NULL);
	char path[PATH_MAX], name[64], *svg = NULL, *buf = NULL;
	size_t len;
	struct stat st;
	mode_t mask = umask(0);
	FILE *f;

	/* 0600 whatever the umask: under 0 too. */
	if (!r) {
		umask(mask);
		return;
	}
	snprintf(name, sizeof(name), "test_flame.%d.svg", (int)getpid());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (ASSERT_OK(report_flame__write(path, r, NULL, NULL), "write")) {
		svg = render(r, NULL, NULL);
		ASSERT_OK(read_file_capped(path, 1 << 24, &buf, &len), "read back");
		ASSERT_TRUE(svg && buf && !strcmp(svg, buf), "the file is the rendering");
		ASSERT_OK(stat(path, &st), "stat");
		ASSERT_EQ(st.st_mode & 07777, (mode_t)0600, "0600, as the recording it shows (issue 25)");
		ASSERT_EQ(leftovers(dir, name), (size_t)0, "no temporary file left");
	}
	free(buf);
	buf = NULL;

	/* A failure after the temporary file exists: the old file stays as it was. */
	f = fopen(path, "w");
	if (ASSERT_OK_PTR(f, "old file")) {
		fputs("old", f);
		fclose(f);
	}
	ASSERT_EQ(report_flame__write(path, r, NULL, &bad), -EINVAL, "bad width");
	ASSERT_OK(read_file_capped(path, 1 << 24, &buf, &len), "read old");
	ASSERT_STREQ(buf, "old", "the old file untouched");
	ASSERT_EQ(leftovers(dir, name), (size_t)0, "no temporary file left after a failure");
	unlink(path);

	snprintf(path, sizeof(path), "%s/no-such-dir.%d/x.svg", dir, (int)getpid());
	ASSERT_EQ(report_flame__write(path, r, NULL, NULL), -ENOENT, "missing directory");

	/* A full disk reaches the caller as ENOSPC. */
	f = fopen("/dev/full", "w");
	if (!f) {
		test__skip("no /dev/full");
	} else {
		ASSERT_EQ(report_flame__fprint(f, r, NULL, NULL), -ENOSPC, "/dev/full");
		fclose(f);
	}
	umask(mask);
	free(buf);
	free(svg);
	report__free(r);
}

int main(void)
{
	fx_init();
	RUN_TEST(test_well_formed);
	RUN_TEST(test_self_contained);
	RUN_TEST(test_hostile_names);
	RUN_TEST(test_tree_is_folded);
	RUN_TEST(test_colours);
	RUN_TEST(test_bounds);
	RUN_TEST(test_js_rounding);
	RUN_TEST(test_filters);
	RUN_TEST(test_write);
	return TEST_EXIT();
}
