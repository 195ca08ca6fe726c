// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_flame: the flame graph SVG.  The tree of frames, bounded and laid
 * out, is report_flame_tree.c's; this writes it, with a colour per frame
 * picked from its family by its name, labels cut to fit, a header with the
 * recording's facts and the script that zooms and searches.  Every name
 * is clean text (xml_text.h), escaped as it is written.
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

#include "base/util.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/format/report_flame.h"
#include "view/format/report_flame_int.h"
#include "view/format/report_flame_js.h"
#include "view/format/xml_text.h"

#define DEF_WIDTH	1200
#define DEF_MIN_WIDTH	0.1	/* pixels, FlameGraph's --minwidth default */
#define DEF_MAX_FRAMES	50000	/* a browser still zooms and searches this many quickly */
#define PAD		10	/* left and right margin */
#define ROW		16	/* pixels per stack level (a rectangle and a 1 px gap) */
#define TOP		66	/* title, subtitle and legend above the frames */
#define BOTTOM		28	/* the details line below them */
#define CHAR_W		7.3	/* monospace advance at 12 px, a little wide: labels never overflow */
#define HIGHLIGHT	"#e600e6"	/* search hits: no family comes near magenta */

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
 * aqua; JIT/anonymous: green; interpreter (Python) frames: purple to
 * pink; off-CPU stacks: the blue-violet of Brendan Gregg's off-CPU flame
 * graphs (his "io" palette), apart from the kernel's aqua; processes and
 * the root: grey.
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
	case C_INTERP:
		return (160 + a * 70 / 255) << 16 | (90 + b * 50 / 255) << 8 | (200 + c * 55 / 255);
	case C_OFF:
		v = 80 + a * 60 / 255;
		return v << 16 | v << 8 | (190 + c * 55 / 255);
	default:
		v = cls == C_ROOT ? 190 : 170 + a * 40 / 255;
		return v << 16 | v << 8 | v;
	}
}

/* A header string of the file, cleaned and escaped. */
static int put_clean(FILE *out, struct rpt_buf *b, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	int err;

	b->len = 0;
	err = xml_text__clean(b, s, n, false);
	if (!err)
		xml_text__put(out, (const char *)b->data);
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
		xml_text__put(out, name);
		return;
	}
	tmp = strndup(name, cut);
	if (tmp)
		xml_text__put(out, tmp);
	free(tmp);
	fputs("..", out);
}

/*
 * @v (>= 0) as the page's script writes it, v.toFixed(1): the nearest
 * tenth, an exact tie to the larger one.  printf's "%.1f" takes an exact
 * tie to the even tenth, which differs for a fraction of exactly .25
 * (1.25: "1.2", where toFixed says "1.3"), and the page compares its
 * widths after an unzoom with the ones written here.  Ties are exact
 * binary values (k + 0.25, k + 0.75), so they are found exactly.
 */
static double tenth_as_js(double v)
{
	double q = v * 4;	/* exact: a power of two */

	if (q == floor(q) && fmod(q, 4) == 1)
		return v + 0.01;	/* k.25 -> k.26: "%.1f" then rounds up, as toFixed */
	return v;
}

static void put_frame(FILE *out, const struct flame *fl, uint32_t id, double scale, unsigned int height)
{
	const struct node *n = &fl->nodes[id];
	const char *name = flame__name_of(fl, n);
	double x = PAD + (double)n->off * scale, w = (double)n->total * scale;
	unsigned int y = height - BOTTOM - (n->depth + 1) * ROW;

	fprintf(out, "<g%s data-o=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>", id ? "" : " id=\"root\"",
		n->off, n->total);
	xml_text__put(out, name);
	if (fl->timed)
		fprintf(out, " (%.3f ms", (double)n->total / 1e6);
	else
		fprintf(out, " (%" PRIu64 " samples", n->total);
	fprintf(out, ", %.2f%%)</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" "
		"height=\"%u\" fill=\"#%06x\"/><text x=\"%.1f\" y=\"%u\">",
		100.0 * (double)n->total / (double)fl->total, tenth_as_js(x), y, tenth_as_js(w), ROW - 1,
		colour(n->cls, name), tenth_as_js(x + 3), y + ROW - 5);
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

static void put_legend(FILE *out, unsigned int y, bool timed)
{
	static const struct {
		uint8_t cls;
		const char *what, *sample;
	} keys[] = {
		{ C_USER, "user", "main" },
		{ C_KERNEL, "kernel", "do_syscall_64_[k]" },
		{ C_JIT, "JIT / anonymous", "[anon]" },
		{ C_INTERP, "Python", "main_[p]" },
		{ C_PROC, "process", "bash" },
		{ C_OFF, "off-CPU", "[sleeping]" },	/* last: shown with a timed metric only */
	};
	unsigned int x = PAD;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) - !timed; i++) {
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
		"<text id=\"title\" x=\"%u\" y=\"22\" text-anchor=\"middle\">%s</text>\n"
		"<text id=\"subtitle\" x=\"%u\" y=\"40\" text-anchor=\"middle\">",
		width, height, width, height, style, width, height, width / 2,
		view__metric(fl->o) == VIEW_METRIC_OFFCPU ? "Off-CPU time flame graph" :
		view__metric(fl->o) == VIEW_METRIC_WALL ? "Wall-clock time flame graph" : "Flame graph",
		width / 2);
	err = put_clean(out, b, h->hostname, sizeof(h->hostname));
	fputs(", ", out);
	err = err ?: put_clean(out, b, h->release, sizeof(h->release));
	fputs(": ", out);
	err = err ?: put_clean(out, b, h->event, sizeof(h->event));
	fprintf(out, " at %u Hz, target ", h->freq);
	err = err ?: put_clean(out, b, h->target, sizeof(h->target));
	if (fl->timed)
		fprintf(out, ", %.3f s (%" PRIu64 " samples, %" PRIu64 " off-CPU records)", (double)fl->total / 1e9,
			fl->a.kept_samples, fl->a.kept_offcpu);
	else
		fprintf(out, ", %" PRIu64 " samples", fl->total);
	if (!fl->timed && fl->total != report__nr_samples(fl->r))
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
	put_legend(out, 58, fl->timed);
	return err;
}

/*
 * The page's script; with a timed metric, the search's sum is in ns, its
 * frames' widths (data-n) being ns: the one word of it that says so.
 */
static void put_script(FILE *out, bool timed)
{
	static const char word[] = " samples)";
	const char *at = timed ? strstr(report_flame_js, word) : NULL;

	if (!at) {
		fputs(report_flame_js, out);
		return;
	}
	fwrite(report_flame_js, 1, (size_t)(at - report_flame_js), out);
	fputs(" ns)", out);
	fputs(at + sizeof(word) - 1, out);
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
		"<script type=\"text/ecmascript\"><![CDATA[\n", PAD, height - 10,
		fl.total ? " " : fl.timed ? "No time" : "No samples", width - PAD, height - 10);
	put_script(out, fl.timed);
	fputs("]]></script>\n</svg>\n", out);
	err = fflush(out) ? -errno : out_err(out);
out:
	flame__free(&fl);
	return err;
}

int report_flame__write(const char *path, const struct report *r, const struct view_opts *o,
			const struct flame_opts *fo)
{
	size_t len;
	char *tmp;
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
	/*
	 * mkstemp makes it 0600, and so it stays: the graph names commands and
	 * kernel functions, as the recording does (base/outfile.h).
	 */
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
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
