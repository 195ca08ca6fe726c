// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the report reader (and the views, which trust what
 * the reader accepted).
 *
 * Every input is read as a whole bpfsym.data file, and what reads is
 * merged with a second copy of itself (`report FILE...`).  That alone would leave
 * the record parser nearly unreached: each block is a zstd frame with a
 * content checksum, so almost any mutation inside it is rejected before a
 * record is looked at.  So an input whose first byte is not the file
 * magic's is also read in "records mode": the rest is a list of chunks
 * (a little-endian u16 length, then that many bytes; the last chunk takes
 * whatever is left), and each chunk becomes one block, compressed here
 * with the checksum and declared size the reader insists on.  The
 * mutations then land on the records themselves.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "view/frame_namer.h"
#include "symbolize/kernel/kallsyms.h"
#include "report/report.h"
#include "view/format/report_flame.h"
#include "report/report_fmt.h"
#include "view/format/report_script.h"
#include "view/report_view.h"
#include "view/view_ctr.h"

#define FUZZ_NAME "fuzz_report"
#include "fuzz_common.h"
#include "fuzz_report_input.h"

/* Made once: costly to create, and they hold no state between inputs. */
static ZSTD_CCtx *cctx;
static FILE *devnull;
static struct ksyms *ksyms;

/*
 * The kallsyms text --kallsyms re-resolves kernel frames from: its _text
 * is the usual one, so a report's own text_addr decides the delta, and a
 * kernel frame may land in vmlinux, a module, [bpf], or nothing.
 */
static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 t do_one\n"
	"ffffffff81002000 T _etext\n"
	"ffffffffc0001000 t mod_fn\t[ext4]\n"
	"ffffffffc0002000 t bpf_prog_0123456789abcdef_f\t[bpf]\n";

static void setup(void)
{
	if (cctx)
		return;
	cctx = fuzz_report_cctx();
	devnull = fopen("/dev/null", "w");
	ksyms = ksyms__parse(kallsyms_text, sizeof(kallsyms_text) - 1);
	if (!cctx || !devnull || !ksyms) {
		fprintf(stderr, "fuzz_report: cannot set up zstd or /dev/null\n");
		exit(1);
	}
}

static bool has_nul(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/*
 * Walk everything the reader handed out and hold it to report.h.  The
 * strlen() calls make ASan read each string to its end: a missing NUL or a
 * pointer into freed memory shows up there.
 */
static void walk(const struct report *r)
{
	const struct rpt_header *h = report__header(r);
	size_t nm = report__nr_modules(r), nf = report__nr_frames(r), ns = report__nr_samples(r);
	const uint32_t *ids;
	char name[64];
	uint32_t i, j, n;

	CHECK(has_nul(h->hostname, sizeof(h->hostname)) && has_nul(h->release, sizeof(h->release)) &&
	      has_nul(h->boot_id, sizeof(h->boot_id)) && has_nul(h->event, sizeof(h->event)) &&
	      has_nul(h->target, sizeof(h->target)));
	/* END's count is checked against the file; without END it is what was read. */
	CHECK(h->samples == ns);
	for (i = 0; i < nm; i++) {
		const struct rpt_module *m = report__module(r, i);

		CHECK(m && m->path && m->build_id_len <= RPT_BUILD_ID_MAX);
		CHECK(strlen(m->path) < SIZE_MAX);
	}
	CHECK(!report__module(r, (uint32_t)nm));
	for (i = 0; i < nf; i++) {
		const struct rpt_frame *f = report__frame(r, i);

		CHECK(f && f->kind <= RPT_FRAME_USER);
		CHECK(f->module == RPT_NONE || f->module < nm);
		CHECK(!f->sym || strlen(f->sym) < SIZE_MAX);
		CHECK(rpt_reason__str(f->reason));
		CHECK(view__frame_name(NULL, r, f, name, sizeof(name)) == name);
		CHECK(strlen(name) < sizeof(name));
		/* The smallest buffers: the truncation paths. */
		view__frame_name(NULL, r, f, name, 1);
		CHECK(name[0] == '\0');
		view__frame_name(NULL, r, f, name, 4);
	}
	CHECK(!report__frame(r, (uint32_t)nf));
	/* There is no stack count: ids run from 0 until the first out of range. */
	for (i = 0; (ids = report__stack(r, i, &n)); i++)
		for (j = 0; j < n; j++)
			CHECK(ids[j] < nf);
	for (i = 0; i < ns; i++) {
		const struct rpt_sample *s = report__sample(r, i);

		CHECK(s && s->comm && strlen(s->comm) < SIZE_MAX);
		CHECK(report__stack(r, s->stack, &n));
	}
	CHECK(!report__sample(r, ns));
	/* OFFCPU records (issue 28): as SAMPLE's, and a known state, some time, an interval. */
	CHECK(h->offcpu[RPT_OC_RECORDS] == report__nr_offcpu(r));
	for (i = 0; i < report__nr_offcpu(r); i++) {
		const struct rpt_offcpu *o = report__offcpu(r, i);

		CHECK(o && o->comm && strlen(o->comm) < SIZE_MAX);
		CHECK(report__stack(r, o->stack, &n));
		CHECK(o->state <= RPT_OS_OTHER && rpt_offstate__str(o->state) && o->ns && o->count);
	}
	CHECK(!report__offcpu(r, report__nr_offcpu(r)));
	for (i = 0; i < report__nr_cgroups(r); i++) {
		const struct rpt_cgroup *g = report__cgroup(r, i);

		CHECK(g && g->id && g->path && g->path[0] == '/' && strlen(g->path) <= RPT_CGROUP_PATH_MAX);
		CHECK(report__cgroup_path(r, g->id) == g->path);
	}
	CHECK(!report__cgroup(r, report__nr_cgroups(r)));
}

/* --container with the first container of @r, if it has one: only its cgroups' samples pass. */
static void container_views(const struct report *r)
{
	struct container_id c;
	struct view_opts o = { .sort = { VIEW_KEY_CONTAINER }, .nr_sort = 1 };
	char full[CONTAINER_ID_LEN + 1], err[256];
	uint64_t *cgs = NULL;
	size_t i, nr = 0;

	report_view__table(devnull, r, &o);
	for (i = 0; i < report__nr_cgroups(r); i++)
		if (container__from_cgroup(report__cgroup(r, i)->path, &c))
			break;
	if (i == report__nr_cgroups(r)) {
		CHECK(view_ctr__resolve(r, "0123456789ab", &cgs, &nr, full, err, sizeof(err)) == -EINVAL);
		return;
	}
	c.id[CONTAINER_SHORT_LEN] = '\0';
	if (view_ctr__resolve(r, c.id, &cgs, &nr, full, err, sizeof(err)))
		return;	/* two containers share the prefix */
	CHECK(nr >= 1 && !strncmp(full, c.id, CONTAINER_SHORT_LEN));
	o.container = full;
	o.cgroups = cgs;
	o.nr_cgroups = nr;
	report_view__table(devnull, r, &o);
	report_view__folded(devnull, r, &o);
	report_script__write(devnull, r, &o);
	free(cgs);
}

/*
 * The flame graph of @r: whatever the names hold, no control byte reaches
 * the SVG and no name opens or closes an element (one </title> per <title>).
 */
static void flame(const struct report *r, const struct view_opts *o)
{
	char *buf = NULL, *p;
	size_t len = 0, open = 0, close = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	if (report_flame__fprint(f, r, o, NULL) == 0) {
		fflush(f);
		for (p = buf; p < buf + len; p++)
			CHECK((unsigned char)*p >= 0x20 || *p == '\n');
		for (p = buf; (p = strstr(p, "<title>")); p++)
			open++;
		for (p = buf; (p = strstr(p, "</title>")); p++)
			close++;
		CHECK(open == close);
	}
	fclose(f);
	free(buf);
}

/* The views over everything, then filtered by the first sample's process. */
static void views(const struct report *r)
{
	const struct rpt_sample *s = report__sample(r, 0);
	struct view_opts all = {}, some = { .nr_pids = 1, .nr_comms = 1, .limit = 2,
					    .sort = { VIEW_KEY_MODULE, VIEW_KEY_TOTAL }, .nr_sort = 2 };
	const char *comm;

	struct frame_namer *namer;
	char err[256];
	size_t i;

	report_view__table(devnull, r, &all);
	report_view__folded(devnull, r, &all);
	flame(r, &all);
	report_script__write(devnull, r, &all);
	/* Kernel frames re-resolved: a namer exactly when the report has a _text. */
	namer = frame_namer__new(r, ksyms, "fuzz", err, sizeof(err));
	CHECK(!namer == !report__header(r)->text_addr);
	if (namer) {
		struct view_opts renamed = { .namer = namer };
		char name[64];

		for (i = 0; i < report__nr_frames(r); i++)
			CHECK(view__frame_name(&renamed, r, report__frame(r, (uint32_t)i), name,
					       sizeof(name)) == name);
		report_view__table(devnull, r, &renamed);
		report_view__folded(devnull, r, &renamed);
		flame(r, &renamed);
		report_script__write(devnull, r, &renamed);
		frame_namer__free(namer);
	}
	/* Off-CPU time alone, then wall-clock time, one state of it (issue 28). */
	for (i = 0; i < 2; i++) {
		struct view_opts timed = { .metric = i ? VIEW_METRIC_WALL : VIEW_METRIC_OFFCPU,
					   .off_states = i ? 1u << RPT_OS_DISK : 0 };

		report_view__table(devnull, r, &timed);
		report_view__folded(devnull, r, &timed);
		flame(r, &timed);
		report_script__write(devnull, r, &timed);
	}
	if (!s)
		return;
	comm = s->comm;
	some.pids = &s->pid;
	some.comms = &comm;
	report_view__table(devnull, r, &some);
	report_view__folded(devnull, r, &some);
	report_script__write(devnull, r, &some);
}

/*
 * @r merged with a second reading of the same bytes (report__merge, the
 * reader of `report FILE...`): twice the samples, no more modules or
 * frames than one copy has (the copy's are the same identities), no
 * warning, and every view works on it.  Consumes @r.
 */
static void merged(struct report *r, const uint8_t *data, size_t len)
{
	size_t ns = report__nr_samples(r), nm = report__nr_modules(r), nf = report__nr_frames(r);
	size_t no = report__nr_offcpu(r);
	struct report *v[2] = { r, report__open_mem(data, len, NULL, 0) }, *m;
	char warn[256] = "x";

	CHECK(v[1]);
	m = report__merge(v, 2, warn, sizeof(warn));
	if (!m) {
		CHECK(errno == ENOMEM || errno == E2BIG);
		return;
	}
	CHECK(!warn[0]);
	CHECK(report__nr_samples(m) == 2 * ns && report__nr_offcpu(m) == 2 * no);
	CHECK(report__nr_modules(m) <= nm && report__nr_frames(m) <= nf);
	walk(m);
	views(m);
	report__free(m);
}

static void check(const uint8_t *data, size_t len)
{
	char err[256] = "";
	struct report *r;

	r = report__open_mem(data, len, err, sizeof(err));
	if (!r) {
		/* Corrupt input: EINVAL and a message naming the offset (report.h). */
		CHECK(errno == EINVAL || errno == ENOMEM);
		CHECK(strlen(err) < sizeof(err) && (errno == ENOMEM || strstr(err, "offset ")));
		return;
	}
	walk(r);
	views(r);
	container_views(r);
	merged(r, data, len);	/* consumes r */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t *file;
	size_t flen;

	setup();
	check(data, len);
	if (len && data[0] != (uint8_t)RPT_FILE_MAGIC[0]) {
		file = fuzz_report_wrap(cctx, data, len, &flen);
		if (!file)
			return 0;
		check(file, flen);
		free(file);
	}
	return 0;
}
