// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_script: the perf-script text of a recording (report_script.h has
 * the layout).  The readers of this text (stackcollapse-perf.pl, Firefox
 * Profiler's and speedscope's importers) split a frame line at its first
 * blank run and at its last " (", and a sample header at the PID field, so
 * what matters is the line grammar, not the column widths; the widths
 * are perf's anyway.
 *
 * Each frame's name and DSO are rendered once per frame id, then every
 * sample is a header line and one fprintf per frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/format/report_script.h"
#include "view/report_view_int.h"

/* perf's name for anonymous memory, which readers know. */
#define ANON_DSO "//anon"

/* One frame id's line, but for the address and offset, rendered on first use. */
struct sframe {
	size_t sym, dso;	/* offsets in the text buffer; sym SIZE_MAX: "[unknown]" */
	uint64_t addr;		/* the looked-up address (see frame_addr) */
	uint64_t sym_off;	/* of that address into sym */
	bool done, exact;	/* exact: addr is the raw address, no return-address fix-up */
	bool interp;		/* an interpreter's frame: no byte offset to print */
};

struct script {
	const struct report *r;
	const struct frame_namer *namer;
	struct sframe *frames;
	struct rpt_buf text;
};

/* The DSO perf would print for @m (NULL: no module known). */
static const char *dso_name(const struct rpt_module *m)
{
	if (!m)
		return VIEW_UNKNOWN;
	if (m->kind == RPT_MOD_ANON && (!m->path || !m->path[0] || !strcmp(m->path, "[anon]")))
		return ANON_DSO;
	if (m->path && m->path[0])
		return m->path;
	return m->kind == RPT_MOD_KERNEL ? "[kernel.kallsyms]" : VIEW_UNKNOWN;
}

/* Append @s, NUL included, made printable; its offset in *@at. */
static int put_str(struct rpt_buf *b, const char *s, size_t *at)
{
	size_t len = strlen(s), start = b->len;
	int err = rpt_buf__put(b, s, len + 1);

	if (err)
		return err;
	view__sanitize((char *)b->data + start, len, false);
	*at = start;
	return 0;
}

/*
 * An interpreter frame as perf prints Python's (3.12's -X perf:
 * "py::QUALNAME:FILE+0xOFF" from /tmp/perf-PID.map): "py::QUALNAME" for
 * the symbol (the runtime's prefix), +0x the line's distance from the
 * function's first (its offset in the function, in lines: perf's grammar
 * wants one, and its readers drop it), and where it is, "FILE:LINE", in
 * the DSO's place, which stackcollapse-perf.pl and the profilers'
 * importers take as the frame's module.  Unnamed: "[unknown] ([interpreter])".
 */
static int script__interp(struct script *sc, const struct frame_name *fn, struct sframe *sf)
{
	const struct rpt_module *m = fn->module;
	const char *pfx = m && m->runtime == RPT_RT_PYTHON ? "py::" : "";
	struct rpt_buf *b = &sc->text;
	char line[24];
	size_t at;
	int err;

	sf->interp = true;
	sf->sym_off = fn->sym_off;
	if (fn->sym) {
		at = b->len;
		err = rpt_buf__put(b, pfx, strlen(pfx));
		err = err ?: put_str(b, fn->sym, &sf->sym);
		if (err)
			return err;
		view__sanitize((char *)b->data + at, b->len - 1 - at, false);
		sf->sym = at;
	}
	if (!m || !fn->sym)
		return put_str(b, VIEW_INTERP_UNNAMED, &sf->dso);
	at = b->len;
	snprintf(line, sizeof(line), ":%" PRIu64, fn->offset);
	err = rpt_buf__put(b, m->path ? m->path : "", m->path ? strlen(m->path) : 0);
	err = err ?: put_str(b, fn->offset ? line : "", &sf->dso);
	if (err)
		return err;
	view__sanitize((char *)b->data + at, b->len - 1 - at, false);
	sf->dso = at;
	return 0;
}

static int script__frame(struct script *sc, uint32_t id, const struct sframe **out)
{
	struct sframe *sf = &sc->frames[id];
	const struct rpt_frame *f;
	struct frame_name fn;
	int err;

	if (sf->done) {
		*out = sf;
		return 0;
	}
	f = report__frame(sc->r, id);
	frame_namer__name(sc->namer, sc->r, f, &fn);
	sf->sym = SIZE_MAX;
	if (f->kind == RPT_FRAME_INTERP) {
		sf->exact = true;
		sf->addr = f->addr;	/* the code object's address */
		err = script__interp(sc, &fn, sf);
		if (err)
			return err;
		sf->done = true;
	} else {
		if (fn.sym) {
			err = put_str(&sc->text, fn.sym, &sf->sym);
			if (err)
				return err;
		}
		err = put_str(&sc->text, dso_name(fn.module), &sf->dso);
		if (err)
			return err;
		/*
		 * A frame recorded in no module is keyed by its raw address,
		 * which is then exact; everything else keeps the address the
		 * recorder looked up (a caller's return address - 1), in the
		 * module's terms: a file offset, or the (relocated) kernel address.
		 */
		sf->exact = f->kind == RPT_FRAME_USER && f->module == RPT_NONE;
		sf->addr = sf->exact ? f->addr : fn.offset;
		sf->sym_off = fn.sym_off;
		sf->done = true;
	}
	*out = sf;
	return 0;
}

/* A kept OFFCPU record's index in kept_items(): above every sample's. */
#define OFF_BIT ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* The time of kept item @i: a sample, or an OFFCPU record with OFF_BIT. */
static uint64_t item_time(const struct report *r, size_t i)
{
	return i & OFF_BIT ? report__offcpu(r, i & ~OFF_BIT)->time : report__sample(r, i)->time;
}

/* Item order: time, then the order in the file, samples before OFFCPU records (a stable sort). */
static int by_time(const void *pa, const void *pb, void *ctx)
{
	const struct report *r = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	uint64_t ta = item_time(r, a), tb = item_time(r, b);

	if (ta != tb)
		return ta < tb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * The indexes of the samples @o keeps (with @o's off-CPU or wall metric,
 * of its OFFCPU records too, OFF_BIT set; with the off-CPU one, those
 * only), in time order; *@nr set.  0 or -errno.
 */
static int kept_items(const struct report *r, const struct view_opts *o, size_t **out, size_t *nr)
{
	size_t i, n = 0, total = view__wants_samples(o) ? report__nr_samples(r) : 0;
	size_t noff = view__wants_offcpu(o) ? report__nr_offcpu(r) : 0;
	const char *last = NULL;
	bool last_keep = false;
	struct pid_set pids;
	size_t *v;
	int err;

	if (noff > SIZE_MAX / sizeof(*v) - total - 1)
		return -ENOMEM;
	v = malloc((total + noff + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = pid_set__init(&pids, o);
	for (i = 0; i < total && !err; i++) {
		const struct rpt_sample *s = report__sample(r, i);
		const char *comm = s->comm ? s->comm : "";

		if (!pid_set__keep(&pids, s) || !view__cgroup_ok(o, s->cgroup))
			continue;
		/* The reader interns comms: runs of one process share a pointer. */
		if (comm != last) {
			last = comm;
			last_keep = view__comm_ok(o, comm);
		}
		if (last_keep)
			v[n++] = i;
	}
	for (i = 0; i < noff; i++)
		if (view__keep_offcpu(o, report__offcpu(r, i)))
			v[n++] = i | OFF_BIT;
	pid_set__free(&pids);
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort_r(v, n, sizeof(*v), by_time, (void *)r);
	*out = v;
	*nr = n;
	return 0;
}

/* "cpu-clock": one token, as perf's grammar wants it. */
static void event_name(char *dst, size_t size, const char *ev)
{
	size_t i;

	snprintf(dst, size, "%s", ev[0] ? ev : "unknown");
	for (i = 0; dst[i]; i++)
		if ((unsigned char)dst[i] <= ' ' || dst[i] == 0x7f || dst[i] == ':')
			dst[i] = '_';
}

/*
 * COMM as perf prints it: as is, ":PID" when there is none (perf's name for
 * a thread it has no comm for); a leading blank would make the line read
 * as a frame.
 */
static const char *comm_name(char *dst, size_t size, const char *comm, uint32_t pid)
{
	if (!comm || !comm[0]) {
		snprintf(dst, size, ":%" PRIu32, pid);
		return dst;
	}
	snprintf(dst, size, "%s", comm);
	view__sanitize(dst, strlen(dst), false);
	if (dst[0] == ' ')
		dst[0] = '?';
	return dst;
}

/* What a sample's header line says: a CPU sample's, or an OFFCPU record's (perf's offcpu-time). */
struct sline {
	const char *comm;
	uint32_t pid, tid, cpu, stack;
	uint64_t time, period;
	const char *event;
};

static int print_sample(FILE *out, struct script *sc, const struct sline *s, uint64_t base)
{
	uint64_t t = base + s->time < base ? s->time : base + s->time;
	const uint32_t *ids;
	uint32_t nr = 0, j;
	char comm[64];
	int err;

	fprintf(out, "%s %5" PRIu32 "/%-5" PRIu32 " [%03" PRIu32 "] %5" PRIu64 ".%06" PRIu64 ": %10" PRIu64
		" %s: \n", comm_name(comm, sizeof(comm), s->comm, s->pid), s->pid, s->tid, s->cpu,
		t / 1000000000u, t % 1000000000u / 1000u, s->period, s->event);
	ids = report__stack(sc->r, s->stack, &nr);
	for (j = 0; ids && j < nr; j++) {
		const struct sframe *sf;
		uint64_t adj;

		err = script__frame(sc, ids[j], &sf);
		if (err)
			return err;
		/*
		 * The leaf of each side (kernel, then user) is where the CPU
		 * was; every other frame a return address, looked up at - 1.
		 */
		adj = j && (report__frame(sc->r, ids[j - 1])->kind == RPT_FRAME_KERNEL) ==
			   (report__frame(sc->r, ids[j])->kind == RPT_FRAME_KERNEL);
		if (sf->exact)
			adj = 0;
		if (sf->interp && sf->sym != SIZE_MAX)
			fprintf(out, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", sf->addr,
				(const char *)sc->text.data + sf->sym, sf->sym_off,
				(const char *)sc->text.data + sf->dso);
		else if (sf->sym == SIZE_MAX)
			fprintf(out, "\t%16" PRIx64 " " VIEW_UNKNOWN " (%s)\n", sf->addr + adj,
				(const char *)sc->text.data + sf->dso);
		else
			fprintf(out, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", sf->addr + adj,
				(const char *)sc->text.data + sf->sym, sf->sym_off + adj,
				(const char *)sc->text.data + sf->dso);
	}
	fputc('\n', out);
	return 0;
}

int report_script__write(FILE *out, const struct report *r, const struct view_opts *o)
{
	const struct rpt_header *h;
	struct script sc = { .r = r, .namer = view__namer(o) };
	size_t *kept = NULL, nr = 0, i, nf;
	uint64_t period;
	char event[sizeof(h->event) + 1];
	int err;

	if (!out || !r)
		return -EINVAL;
	h = report__header(r);
	nf = report__nr_frames(r);
	sc.frames = calloc(nf ? nf : 1, sizeof(*sc.frames));
	if (!sc.frames)
		return -ENOMEM;
	err = kept_items(r, o, &kept, &nr);
	event_name(event, sizeof(event), h->event);
	period = 1000000000ULL / (h->freq ? h->freq : 1);
	for (i = 0; i < nr && !err; i++) {
		struct sline l;

		if (kept[i] & OFF_BIT) {
			const struct rpt_offcpu *x = report__offcpu(r, kept[i] & ~OFF_BIT);

			/* As perf prints its off-CPU samples: no CPU (0), the time off it as the period. */
			l = (struct sline){ x->comm, x->pid, x->tid, 0, x->stack, x->time, x->ns, "offcpu-time" };
		} else {
			const struct rpt_sample *s = report__sample(r, kept[i]);

			l = (struct sline){ s->comm, s->pid, s->tid, s->cpu, s->stack, s->time, period, event };
		}
		err = print_sample(out, &sc, &l, h->start_mono_ns);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	free(kept);
	free(sc.frames);
	rpt_buf__free(&sc.text);
	return err;
}
