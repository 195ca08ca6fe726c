// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the ring-buffer record parser (ingest/ingest.c and
 * ingest/mapevents.c).  The records come from our BPF programs, but they
 * carry what processes did (paths, addresses, pids) and a record can be
 * cut short or misread; ingest is the first code to read them.
 *
 * Input: records, each a little-endian u16 length and that many bytes
 * (the last takes what is left), each copied to a buffer of exactly its
 * length, as the ring buffer hands one over, and fed through a whole
 * recording as record.c builds it and tests/unit/test_ingest.c does
 * without root: a small process table (evictions), a symbolizer with a
 * saved kallsyms, an empty fake /proc and no perf maps (nothing of this
 * machine's processes is read), cgroup paths over a fake cgroup2 mount,
 * two watched pids, a runtime for Python frames (named, missed, never
 * answering or breaking its contract, by the code address's low bits),
 * and a report writer, whose file is read back.
 * Besides not crashing: every record taken (0 returned), each whole
 * sample (its header, frame counts within BPFSYM_MAX_FRAMES, its frames
 * within the record) counted and written (those waiting for the runtime
 * at the end), the file holding exactly those, with END's count of
 * malformed records the stats' count, its interpreter counters those the
 * slots make as include/bpfsym.h defines them, and a watched pid gone
 * exactly when an EXIT record named it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfsym.h"
#include "ingest/ingest.h"
#include "ingest/mapevents.h"
#include "model/cgpaths.h"
#include "model/procmap.h"
#include "report/report.h"
#include "runtime/runtime.h"
#include "symbolize/symbolizer.h"

#define FUZZ_NAME "fuzz_ingest"
#include "fuzz_common.h"

static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T k_one\n"
	"ffffffff81000200 t k_two\n"
	"ffffffffc0001000 t mod_fn\t[ext4]\n";

static char dir[PATH_MAX], ksyms[PATH_MAX + 16], proc[PATH_MAX + 16], cg[PATH_MAX + 16],
	    out[PATH_MAX + 16];
static const uint32_t watched[] = { 1, 4242 };

static void fatal(const char *what)
{
	perror(what);
	exit(1);
}

static void setup(void)
{
	char p[2 * PATH_MAX];
	FILE *f;

	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "%s", fuzz_tmpdir());
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	snprintf(out, sizeof(out), "%s/out.data", dir);
	snprintf(p, sizeof(p), "%s/a", cg);
	f = fopen(ksyms, "w");
	if (!f || fputs(kallsyms_text, f) < 0 || fclose(f))
		fatal("fuzz_ingest: kallsyms");
	if (mkdir(proc, 0755) || mkdir(cg, 0755) || mkdir(p, 0755))
		fatal("fuzz_ingest: mkdir");
}

/* What this file expects from the records fed: counted here, not by ingest. */
struct expect {
	uint64_t samples;
	uint64_t interp, cut_kind, cut_short;	/* interpreter frames; user sides cut */
	uint64_t off;				/* off-CPU stack records (each summed twice) */
	bool gone[sizeof(watched) / sizeof(watched[0])];
};

/*
 * A whole sample's user slots (@nu after @nk), as include/bpfsym.h lays
 * them out; @named: its interpreter frames are counted (a sample's, when
 * written; an off-CPU stack's are not, only its cut sides).
 */
static void expect_slots(struct expect *x, const uint8_t *rec, uint32_t nk, uint32_t nu, bool named)
{
	uint32_t i, kind, slots;
	__u64 slot;

	for (i = 0; i < nu; i += slots) {
		memcpy(&slot, rec + BPFSYM_SAMPLE_HDR_SIZE + (size_t)(nk + i) * sizeof(slot), sizeof(slot));
		kind = (uint32_t)(slot >> 60);
		slots = kind == 0 ? 1 : kind == 1 ? 2 : 0;
		if (!slots) {
			x->cut_kind++;
			return;
		}
		if (i + slots > nu) {
			x->cut_short++;
			return;
		}
		x->interp += named && kind == 1;
	}
}

/* The fuzz runtime: by the code address's low bits, a name, a miss, no answer ever, a breach. */
static int frt_name(void *ctx, const struct rt_frame *f, const struct proc *p, struct rt_name *nm)
{
	static const char *const funcs[] = { "main", "Outer.run", "<listcomp>", "leaf" };
	uint64_t a = f->slot0 & BPFSYM_FK_ADDR_MASK;

	(void)ctx, (void)p;
	switch (a & 3) {
	case 0:
		*nm = (struct rt_name){ .func = funcs[(a >> 2) & 3], .file = (a & 16) ? "/a.py" : NULL,
					 .line = (uint32_t)f->slot1, .first_line = (uint32_t)(f->slot1 >> 32) };
		return 0;
	case 1:
		*nm = (struct rt_name){ .reason = (uint32_t)(a >> 2) % RT_MISS_MAX };
		return 0;
	case 2:
		return -EAGAIN;
	default:
		*nm = (struct rt_name){ .reason = (uint32_t)(a >> 2) };
		return (a & 4) ? -EIO : 0;
	}
}

static const struct runtime_ops frt_ops = {
	.name = "python",
	.frame_kind = BPFSYM_FK_PYTHON,
	.name_frame = frt_name,
};

/* Count @rec (@len bytes) into @x as include/bpfsym.h defines a whole record. */
static void expect_record(struct expect *x, const uint8_t *rec, size_t len)
{
	struct bpfsym_ev_hdr h;
	struct bpfsym_sample s;
	struct bpfsym_task_ev t;
	size_t i;

	if (len < sizeof(h))
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.size > len)
		return;
	if (h.type == BPFSYM_EV_SAMPLE && len >= BPFSYM_SAMPLE_HDR_SIZE) {
		memcpy(&s, rec, BPFSYM_SAMPLE_HDR_SIZE);
		if (s.nr_kernel <= BPFSYM_MAX_FRAMES && s.nr_user <= BPFSYM_MAX_FRAMES &&
		    len >= BPFSYM_SAMPLE_HDR_SIZE + (size_t)(s.nr_kernel + s.nr_user) * sizeof(__u64)) {
			x->samples++;
			expect_slots(x, rec, s.nr_kernel, s.nr_user, true);
		}
	}
	if (h.type == BPFSYM_EV_OFFCPU_STACK && len >= BPFSYM_SAMPLE_HDR_SIZE) {
		memcpy(&s, rec, BPFSYM_SAMPLE_HDR_SIZE);
		if (s.aux && s.nr_kernel <= BPFSYM_MAX_FRAMES && s.nr_user <= BPFSYM_MAX_FRAMES &&
		    len >= BPFSYM_SAMPLE_HDR_SIZE + (size_t)(s.nr_kernel + s.nr_user) * sizeof(__u64))
			expect_slots(x, rec, s.nr_kernel, s.nr_user, false);
	}
	if (h.type == BPFSYM_EV_EXIT && len >= sizeof(t)) {
		memcpy(&t, rec, sizeof(t));
		for (i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
			x->gone[i] |= t.pid == watched[i];
	}
}

/* The recording's pieces, new for each input: nothing carries over. */
struct rec {
	struct proc_table *pt;
	struct symbolizer *sym;
	struct mapevents *mev;
	struct cgpaths *cgroups;
	struct report_writer *w;
	struct runtimes *rts;
	struct ingest *in;
	struct rpt_header hdr;
};

static void rec_open(struct rec *r)
{
	struct cgpaths_opts co = { .mount = cg, .proc = proc, .cap = 4 };
	struct symbolizer_opts so = { .kallsyms = ksyms, .proc_root = proc, .debug_root = proc,
				      .no_jit = 1, .max_files = 4, .max_fds = 4, .max_modules = 8 };

	memset(r, 0, sizeof(*r));
	snprintf(r->hdr.event, sizeof(r->hdr.event), "cpu-clock");
	snprintf(r->hdr.target, sizeof(r->hdr.target), "fuzz");
	r->hdr.start_mono_ns = 1000;
	r->pt = proc_table__new(4);
	so.procs = r->pt;
	r->sym = r->pt ? symbolizer__new(&so) : NULL;
	r->mev = r->sym ? mapevents__new(r->pt, r->sym) : NULL;
	r->cgroups = r->mev ? cgpaths__new(&co) : NULL;
	r->w = r->cgroups ? report_writer__open(out, &r->hdr) : NULL;
	r->rts = runtimes__new();
	CHECK(r->w && r->rts && !runtimes__add(r->rts, &frt_ops, NULL));
	r->in = ingest__new(&(struct ingest_opts){
		.procs = r->pt, .mev = r->mev, .sym = r->sym, .w = r->w,
		.start_mono_ns = r->hdr.start_mono_ns, .kernel_only = true,
		.pids = watched, .nr_pids = sizeof(watched) / sizeof(watched[0]),
		.cgroups = r->cgroups, .runtimes = r->rts,
	});
	CHECK(r->in);
}

static void rec_close(struct rec *r)
{
	ingest__free(r->in);
	runtimes__free(r->rts);
	cgpaths__free(r->cgroups);
	mapevents__free(r->mev);
	symbolizer__free(r->sym);
	proc_table__free(r->pt);
}

/* Close the file and hold what it says to @x and ingest's counters. */
static void check_file(struct rec *r, const struct expect *x)
{
	const struct ingest_stats *st = ingest__stats(r->in);
	const struct rpt_header *h;
	char err[256] = "";
	struct report *rpt;
	uint64_t interp = 0;
	size_t i;

	/* The end of a recording: what waits for the runtime is written now, unnamed. */
	CHECK(ingest__flush_deferred(r->in, 0, NULL) == 0);
	CHECK(st->samples == x->samples && st->symbolized == x->samples);
	for (i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		CHECK(ingest__pid_is_gone(r->in, watched[i]) == x->gone[i]);
	ingest__fill_header(r->in, &r->hdr);
	CHECK(report_writer__close(r->w, &r->hdr) == 0);
	rpt = report__open(out, err, sizeof(err));
	if (!rpt) {
		fprintf(stderr, "fuzz_ingest: reading back: %s\n", err);
		CHECK(rpt);
	}
	h = report__header(rpt);
	CHECK(report__nr_samples(rpt) == x->samples && h->samples == x->samples);
	/* Every OFFCPU record written reads back, each with a stack. */
	CHECK(report__nr_offcpu(rpt) == st->offcpu[RPT_OC_RECORDS] && h->offcpu[RPT_OC_RECORDS] == st->offcpu[RPT_OC_RECORDS]);
	/* Four sums a stack record (below): each written, or counted lost. */
	CHECK(st->offcpu[RPT_OC_RECORDS] + st->offcpu[RPT_OC_LOST] == 4 * x->off);
	for (i = 0; i < report__nr_offcpu(rpt); i++) {
		const struct rpt_offcpu *o = report__offcpu(rpt, i);
		uint32_t n;

		CHECK(o && o->ns && o->count && o->state < RPT_OS__NR && report__stack(rpt, o->stack, &n));
	}
	CHECK(h->bad_records == st->bad + mapevents__stats(r->mev)->bad);
	for (i = RPT_IC_NAMED; i <= RPT_IC_NO_ANSWER; i++)
		interp += h->interp[i];
	CHECK(interp == x->interp && h->interp[RPT_IC_CUT_KIND] == x->cut_kind &&
	      h->interp[RPT_IC_CUT_SHORT] == x->cut_short);
	for (i = 0; i < report__nr_samples(rpt); i++) {
		const struct rpt_sample *s = report__sample(rpt, i);
		uint32_t n;

		CHECK(s && strlen(s->comm) <= BPFSYM_COMM_LEN && report__stack(rpt, s->stack, &n));
		CHECK(n <= 2 * BPFSYM_MAX_FRAMES);
	}
	report__free(rpt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct expect x = {};
	struct rec r;
	size_t pos = 0, n;
	uint64_t last_key = 0;
	uint8_t *rec;

	setup();
	rec_open(&r);
	while (pos < len) {
		n = len - pos >= 2 ? (size_t)data[pos] | (size_t)data[pos + 1] << 8 : 0;
		pos += len - pos >= 2 ? 2 : 1;
		if (n > len - pos)
			n = len - pos;
		rec = malloc(n ? n : 1);
		CHECK(rec);
		memcpy(rec, data + pos, n);
		expect_record(&x, rec, n);
		CHECK(ingest__record(r.in, rec, n) == 0);
		/* An off-CPU stack's key summed at once, and a key perhaps never sent. */
		if (n >= BPFSYM_SAMPLE_HDR_SIZE && ((const struct bpfsym_ev_hdr *)rec)->type == BPFSYM_EV_OFFCPU_STACK) {
			struct bpfsym_sample s;

			memcpy(&s, rec, BPFSYM_SAMPLE_HDR_SIZE);
			CHECK(ingest__offcpu(r.in, s.aux, 0, s.hdr.ts | 1, 1, s.hdr.ts) == 0);
			CHECK(ingest__offcpu(r.in, s.aux ^ 1, 0, 7, 1, s.hdr.ts) == 0);
			/* As a kernel side under the last whole stack seen, and the reverse. */
			CHECK(ingest__offcpu(r.in, last_key, s.aux, 3, 1, s.hdr.ts) == 0);
			CHECK(ingest__offcpu(r.in, s.aux, last_key, 3, 1, s.hdr.ts) == 0);
			last_key = s.aux;
			x.off++;
		}
		free(rec);
		pos += n;
	}
	CHECK(ingest__sync_unwind(r.in) == 0);
	check_file(&r, &x);
	rec_close(&r);
	return 0;
}
