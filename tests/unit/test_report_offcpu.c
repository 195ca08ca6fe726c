// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Off-CPU time in the recording (issue 28): OFFCPU records and the
 * HEADER's and END's off-CPU fields through the real writer and reader;
 * a reader that skips OFFCPU records (as an older one does) decoding the
 * same SAMPLE times; merging files and indexing a file again after a
 * FORGET; then every format's output of a recording holding CPU samples
 * and OFFCPU records, with the expected values computed here from what
 * was written: folded microseconds with the state frame, --wall's
 * period-weighted samples, pprof's sample types read back, perf-script's
 * offcpu-time lines, the table's ms, the flame graph's tooltips.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "test.h"
#include "profile.pb-c.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/format/report_flame.h"
#include "view/format/report_pprof.h"
#include "view/format/report_script.h"
#include "view/report_view.h"
#include "pprof_read.h"
#include "report_craft.h"
#include "view_render.h"

TEST_SUITE("report_offcpu");

static char errbuf[512];
static char dir[PATH_MAX];

#define FREQ 99
#define PERIOD (1000000000ULL / FREQ)	/* what a CPU sample weighs in --wall */

static const struct rpt_header hdr = {
	.hostname = "offhost",
	.release = "6.18.0-test",
	.boot_id = "11111111-2222-3333-4444-555555555555",
	.event = "cpu-clock",
	.target = "pid 100",
	.freq = FREQ,
	.nr_cpus = 2,
	.start_wall_ns = 1714560000000000000ULL,
	.start_mono_ns = 5000000000ULL,
	.off_cpu = 1,
	.off_cpu_states = RPT_OS_ALL,
	.off_cpu_min_ns = 1000000,
};

enum { F_SCHED, F_SLEEP, F_READ, F_MAIN, F_WAITER, F_BURN, NR_FRAMES };

static const struct rpt_module mods[] = {
	{ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	{ .kind = RPT_MOD_FILE, .path = "/opt/app", .dev = 1, .ino = 2 },
};

static const struct rpt_frame frames[NR_FRAMES] = {
	[F_SCHED] = { RPT_FRAME_KERNEL, 0, 0xffffffff81000100ULL, 0xffffffff81000100ULL, "schedule", 0, RPT_OK },
	[F_SLEEP] = { RPT_FRAME_KERNEL, 0, 0xffffffff81000200ULL, 0xffffffff81000200ULL, "do_nanosleep", 0, RPT_OK },
	[F_READ] = { RPT_FRAME_KERNEL, 0, 0xffffffff81000300ULL, 0xffffffff81000300ULL, "io_schedule", 0, RPT_OK },
	[F_MAIN] = { RPT_FRAME_USER, 1, 0x1000, 0x401000, "main", 0, RPT_OK },
	[F_WAITER] = { RPT_FRAME_USER, 1, 0x2000, 0x402000, "waiter", 0, RPT_OK },
	[F_BURN] = { RPT_FRAME_USER, 1, 0x3000, 0x403000, "burn", 0, RPT_OK },
};

/* Leaf first, kernel before user. */
enum { S_BURN, S_SLEEP, S_DISK, NR_STACKS };
static const uint32_t stack_frames[NR_STACKS][4] = {
	[S_BURN] = { F_BURN, F_MAIN },
	[S_SLEEP] = { F_SCHED, F_SLEEP, F_WAITER, F_MAIN },
	[S_DISK] = { F_SCHED, F_READ, F_WAITER, F_MAIN },
};
static const uint32_t stack_nr[NR_STACKS] = { 2, 4, 4 };

#define NR_SAMPLES 30
#define NR_OFF 12

/* What was written, for the checks. */
struct written {
	struct rpt_sample s[NR_SAMPLES];
	struct rpt_offcpu o[NR_OFF];
	uint64_t sleep_ns, disk_ns, preempt_ns;
	struct rpt_header final;
};

/*
 * A recording of pid 100 (threads 100, 101): CPU samples in burn, and
 * OFFCPU records in three states, their times interleaved with the
 * samples', blocks cut in between, a second time base @t0.  States:
 * records 0..7 sleeping (2.5 ms each, 3 intervals), 8..10 disk (0.3337 ms:
 * microsecond rounding), 11 preempted on the burning stack.
 */
static bool write_file_at(const char *path, uint64_t t0, struct written *wr, uint64_t later)
{
	struct rpt_header h = hdr;
	struct report_writer *w;
	uint32_t id, sids[NR_STACKS];
	size_t i, si = 0, oi = 0;

	h.start_mono_ns += later;
	h.start_wall_ns += later;
	w = report_writer__open(path, &h);
	memset(wr, 0, sizeof(*wr));
	if (!ASSERT_OK_PTR(w, "report_writer__open"))
		return false;
	for (i = 0; i < 2; i++)
		ASSERT_OK(report_writer__module(w, &mods[i], &id), "module");
	for (i = 0; i < NR_FRAMES; i++)
		ASSERT_OK(report_writer__frame(w, &frames[i], &id), "frame");
	for (i = 0; i < NR_STACKS; i++)
		ASSERT_OK(report_writer__stack(w, stack_frames[i], stack_nr[i], &sids[i]), "stack");
	for (i = 0; si < NR_SAMPLES || oi < NR_OFF; i++) {
		if (si < NR_SAMPLES && (i % 3 || oi == NR_OFF)) {
			struct rpt_sample *s = &wr->s[si++];

			*s = (struct rpt_sample){ .time = t0 + i * 1000000, .comm = "app", .pid = 100, .tid = 100,
						  .cpu = 1, .stack = sids[S_BURN] };
			if (!ASSERT_OK(report_writer__sample(w, s), "sample"))
				goto fail;
		} else {
			struct rpt_offcpu *o = &wr->o[oi];

			/* The OFFCPU time chain runs backwards once: a signed delta. */
			*o = (struct rpt_offcpu){ .time = t0 + i * 1000000 - (oi == 5 ? 7000000 : 0),
						  .comm = "app", .pid = 100, .tid = 101, .cgroup = 77,
						  .stack = sids[oi < 8 ? S_SLEEP : oi < 11 ? S_DISK : S_BURN],
						  .state = oi < 8 ? RPT_OS_SLEEP : oi < 11 ? RPT_OS_DISK : RPT_OS_PREEMPT,
						  .ns = oi < 8 ? 2500000 : oi < 11 ? 333700 : 42000, .count = oi < 8 ? 3 : 1 };
			*(o->state == RPT_OS_SLEEP ? &wr->sleep_ns : o->state == RPT_OS_DISK ? &wr->disk_ns :
			  &wr->preempt_ns) += o->ns;
			if (!ASSERT_OK(report_writer__offcpu(w, o), "offcpu"))
				goto fail;
			oi++;
		}
		if (i == 10 || i == 25)
			ASSERT_OK(report_writer__flush(w), "flush");
	}
	wr->final = h;
	wr->final.end_wall_ns = h.start_wall_ns + 1000000000ULL;
	wr->final.offcpu[RPT_OC_SHORT] = 17;
	wr->final.offcpu[RPT_OC_SHORT_NS] = 170000;
	wr->final.offcpu[RPT_OC_LOST] = 2;
	wr->final.offcpu[RPT_OC_LOST_NS] = 5000000;
	/* The writer's own counts win over what the caller says. */
	wr->final.offcpu[RPT_OC_RECORDS] = 999;
	return ASSERT_OK(report_writer__close(w, &wr->final), "close");
fail:
	report_writer__abort(w);
	return false;
}

static bool write_file(const char *path, uint64_t t0, struct written *wr)
{
	return write_file_at(path, t0, wr, 0);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Frame names of stack @id of @r, root first, ";"-joined, into @buf. */
static const char *stack_names(const struct report *r, uint32_t id, char *buf, size_t len)
{
	uint32_t nr = 0, j;
	const uint32_t *ids = report__stack(r, id, &nr);
	size_t n = 0;

	buf[0] = '\0';
	for (j = nr; ids && j-- > 0;)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ";" : "",
				      report__frame(r, ids[j])->sym);
	return buf;
}

/* @r's OFFCPU records from the first, those of @wr, their times @shift ns later. */
static void check_offcpu(const struct report *r, const struct written *wr, uint64_t shift)
{
	char a[256], b[256];
	size_t i;

	if (!ASSERT_TRUE(report__nr_offcpu(r) >= NR_OFF, "OFFCPU records read"))
		return;
	for (i = 0; i < NR_OFF; i++) {
		const struct rpt_offcpu *o = report__offcpu(r, i), *e = &wr->o[i];

		if (!ASSERT_EQ(o->time, e->time + shift, "time") || !ASSERT_EQ(o->pid, e->pid, "pid") ||
		    !ASSERT_EQ(o->tid, e->tid, "tid") || !ASSERT_EQ(o->cgroup, e->cgroup, "cgroup") ||
		    !ASSERT_STREQ(o->comm, e->comm, "comm") || !ASSERT_EQ(o->state, e->state, "state") ||
		    !ASSERT_EQ(o->ns, e->ns, "ns") || !ASSERT_EQ(o->count, e->count, "count"))
			return;
		snprintf(b, sizeof(b), "%s", e->stack == S_SLEEP ? "main;waiter;do_nanosleep;schedule" :
			 e->stack == S_DISK ? "main;waiter;io_schedule;schedule" : "main;burn");
		ASSERT_STREQ(stack_names(r, o->stack, a, sizeof(a)), b, "stack");
	}
	ASSERT_NULL(report__offcpu(r, report__nr_offcpu(r)), "OFFCPU record out of range");
}

/* Every field back as written; the header's off-CPU fields; END's counters, its records and ns the file's own. */
static void test_roundtrip(void)
{
	struct written wr;
	struct report *r;
	char path[PATH_MAX];
	size_t i;

	path_of(path, sizeof(path), "rt.data");
	if (!write_file(path, 1000, &wr))
		return;
	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		return;
	ASSERT_EQ(report__header(r)->off_cpu, (uint32_t)1, "header off_cpu");
	ASSERT_EQ(report__header(r)->off_cpu_states, (uint32_t)RPT_OS_ALL, "header off_cpu_states");
	ASSERT_EQ(report__header(r)->off_cpu_min_ns, (uint64_t)1000000, "header off_cpu_min_ns");
	ASSERT_TRUE(report__header(r)->complete, "complete");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_RECORDS], (uint64_t)NR_OFF, "END records: the writer's own");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_NS], wr.sleep_ns + wr.disk_ns + wr.preempt_ns, "END ns");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_SHORT], (uint64_t)17, "END short");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_SHORT_NS], (uint64_t)170000, "END short ns");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_LOST], (uint64_t)2, "END lost");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_LOST_NS], (uint64_t)5000000, "END lost ns");
	ASSERT_EQ(report__nr_offcpu(r), (size_t)NR_OFF, "OFFCPU records read");
	check_offcpu(r, &wr, 0);
	ASSERT_EQ(report__nr_samples(r), (size_t)NR_SAMPLES, "samples");
	for (i = 0; i < NR_SAMPLES && i < report__nr_samples(r); i++)
		if (!ASSERT_EQ(report__sample(r, i)->time, wr.s[i].time, "sample time"))
			break;
	report__free(r);
}

/* A writer of scratch file @name with one empty stack (id 0), or NULL (a failure). */
static struct report_writer *open_bare(const char *name, char *path, size_t len)
{
	struct report_writer *w;
	uint32_t sid;

	path_of(path, len, name);
	w = report_writer__open(path, &hdr);
	if (ASSERT_OK_PTR(w, "open") && !ASSERT_OK(report_writer__stack(w, NULL, 0, &sid), "stack")) {
		report_writer__abort(w);
		return NULL;
	}
	return w;
}

/*
 * A recording killed after a flush: the OFFCPU records of its whole
 * blocks read, and counted as the header's records (no END to check).
 */
static void test_truncated(void)
{
	struct rpt_offcpu o = { .comm = "x", .pid = 1, .tid = 1, .state = RPT_OS_OTHER, .ns = 5, .count = 1 };
	char path[PATH_MAX];
	struct report_writer *w = open_bare("killed.data", path, sizeof(path));
	struct report *r;
	int i;

	if (!w)
		return;
	for (i = 0; i < 5; i++) {
		o.time = (uint64_t)i;
		ASSERT_OK(report_writer__offcpu(w, &o), "offcpu");
		if (i == 2)
			ASSERT_OK(report_writer__flush(w), "flush");
	}
	report_writer__abort(w);	/* the last two never reach the file */
	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		return;
	ASSERT_FALSE(report__header(r)->complete, "truncated");
	ASSERT_EQ(report__nr_offcpu(r), (size_t)3, "the flushed records");
	ASSERT_EQ(report__header(r)->offcpu[RPT_OC_RECORDS], (uint64_t)3, "counted as read");
	ASSERT_EQ(report__offcpu(r, 2)->time, (uint64_t)2, "their times");
	report__free(r);
}

/* The writer refuses what the reader would: a state past other, no ns, no interval, an unknown stack. */
static void test_writer_refuses(void)
{
	struct rpt_offcpu bad[] = {
		{ .state = RPT_OS__NR, .ns = 1, .count = 1 },
		{ .state = RPT_OS_SLEEP, .ns = 0, .count = 1 },
		{ .state = RPT_OS_SLEEP, .ns = 1, .count = 0 },
		{ .state = RPT_OS_SLEEP, .ns = 1, .count = 1, .stack = 1 },
	};
	char path[PATH_MAX];
	struct report_writer *w = open_bare("refuse.data", path, sizeof(path));
	size_t i;

	if (!w)
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(report_writer__offcpu(w, &bad[i]), -EINVAL, "refused");
	ASSERT_EQ(report_writer__offcpu(w, NULL), -EINVAL, "NULL refused");
	report_writer__abort(w);
}

/*
 * OFFCPU records the reader refuses, crafted from docs/FORMAT.md (the
 * writer refuses them first): each names the record and what is wrong;
 * and an END whose count of OFFCPU records is not the file's.
 */
static void test_refused(void)
{
	static const struct {
		uint64_t f[9];	/* time_delta pid tid_delta cgroup comm stack state ns count */
		const char *why;
	} bad[] = {
		{ { 0, 1, 0, 0, 0, 0, RPT_OS__NR, 1, 1 }, "OFFCPU record: unknown state" },
		{ { 0, 1, 0, 0, 0, 0, 0, 0, 1 }, "OFFCPU record: no time or no interval" },
		{ { 0, 1, 0, 0, 0, 0, 0, 1, 0 }, "OFFCPU record: no time or no interval" },
		{ { 0, 1, 0, 0, 0, 1, 0, 1, 1 }, "OFFCPU record: stack out of range" },
		{ { 0, 1, 0, 0, 1, 0, 0, 1, 1 }, "OFFCPU record: comm string out of range" },
		{ { 0, 1, 3, 0, 0, 0, 0, 1, 1 }, "OFFCPU record: tid out of range" },	/* zz 3: -2 */
		{ { 0, 1, 0, 0, 0, 0, 0, 1, 1 }, "END record: counts 0 OFFCPU records, the file holds 1" },
	};
	struct craft c;
	struct report *r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const uint64_t *f = bad[i].f;

		craft_begin(&c);
		craft_header(&c);
		craft_rec(&c, RPT_REC_STRING, "x", 1);
		craft_recv(&c, RPT_REC_STACK, 1, (uint64_t)0);
		craft_recv(&c, RPT_REC_OFFCPU, 9, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
		/* An END of an older writer: no offcpu counters, so 0 of them. */
		craft_recv(&c, RPT_REC_END, 5, (uint64_t)1, (uint64_t)0, (uint64_t)0, (uint64_t)0, (uint64_t)0);
		craft_block(&c);
		r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
		if (ASSERT_NULL(r, bad[i].why))
			ASSERT_TRUE(strstr(errbuf, bad[i].why) != NULL, errbuf);
		report__free(r);
		craft_free(&c);
	}
}

/*
 * @data (a file) with its OFFCPU records' type changed to 127, a type
 * this reader does not know, and its END record's block dropped (an older
 * reader knows no END counter of OFFCPU records): what an older reader
 * sees of the file.  Blocks are decompressed, rewritten, compressed
 * again.  The new file's bytes in @out.
 */
static bool as_older_reader(const uint8_t *data, size_t len, struct rpt_buf *out)
{
	size_t off = RPT_FILE_HDR_LEN, changed = 0;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	bool ok = true;

	rpt_buf__put(out, data, RPT_FILE_HDR_LEN);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
	while (ok && off + RPT_BLOCK_HDR_LEN <= len) {
		uint32_t clen = rpt_get_le32(data + off + 4), ulen = rpt_get_le32(data + off + 8);
		uint8_t *recs = malloc(ulen), *hdrp;
		struct rpt_cur c = { recs, recs + ulen };
		bool end = false;
		size_t n, bound;

		ok = recs && ZSTD_decompress(recs, ulen, data + off + RPT_BLOCK_HDR_LEN, clen) == ulen;
		while (ok && c.p < c.end) {
			uint64_t type, rlen;
			uint8_t *at = (uint8_t *)c.p;

			ok = !rpt_cur__uv(&c, &type) && !rpt_cur__uv(&c, &rlen);
			/* One byte each: 66 and 127 are both one-byte varints. */
			if (ok && type == RPT_REC_OFFCPU) {
				*at = 127;
				changed++;
			}
			end |= type == RPT_REC_END;
			c.p += rlen;
		}
		if (ok && !end) {
			bound = ZSTD_compressBound(ulen);
			rpt_buf__reserve(out, RPT_BLOCK_HDR_LEN + bound);
			hdrp = out->data + out->len;
			n = ZSTD_compress2(cc, hdrp + RPT_BLOCK_HDR_LEN, bound, recs, ulen);
			ok = !ZSTD_isError(n);
			rpt_block_hdr_fill(hdrp, (uint32_t)n, ulen);
			out->len += RPT_BLOCK_HDR_LEN + n;
		}
		free(recs);
		off += RPT_BLOCK_HDR_LEN + clen;
	}
	ZSTD_freeCCtx(cc);
	return ASSERT_TRUE(ok, "rewrite the blocks") && ASSERT_EQ(changed, (size_t)NR_OFF, "OFFCPU records hidden");
}

/*
 * OFFCPU times are a chain of their own: a reader that skips OFFCPU
 * records decodes every SAMPLE time as written, and the ids the file
 * defines are the same.
 */
static void test_older_reader(void)
{
	struct rpt_buf file = {}, old = {};
	char path[PATH_MAX], name[256];
	struct written wr;
	struct report *r;
	struct stat st;
	FILE *f;
	size_t i;

	path_of(path, sizeof(path), "old.data");
	if (!write_file(path, 3000000, &wr) || !ASSERT_OK(stat(path, &st), "stat"))
		return;
	f = fopen(path, "rb");
	rpt_buf__reserve(&file, (size_t)st.st_size);
	if (!ASSERT_OK_PTR(f, "fopen") || !ASSERT_EQ(fread(file.data, 1, (size_t)st.st_size, f), (size_t)st.st_size, "read"))
		goto out;
	file.len = (size_t)st.st_size;
	if (!as_older_reader(file.data, file.len, &old))
		goto out;
	r = report__open_mem(old.data, old.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_EQ(report__nr_offcpu(r), (size_t)0, "no OFFCPU record read");
		ASSERT_STREQ(stack_names(r, report__sample(r, 0)->stack, name, sizeof(name)), "main;burn",
			     "the samples' stacks: the ids are the same");
		if (ASSERT_EQ(report__nr_samples(r), (size_t)NR_SAMPLES, "every sample"))
			for (i = 0; i < NR_SAMPLES; i++)
				if (!ASSERT_EQ(report__sample(r, i)->time, wr.s[i].time, "sample time as written"))
					break;
		report__free(r);
	}
out:
	if (f)
		fclose(f);
	rpt_buf__free(&file);
	rpt_buf__free(&old);
}

/*
 * Two files merged: OFFCPU records of both, their stacks on the merged
 * ids, their times on the earlier start's base; END counters summed.
 */
static void test_merge(void)
{
	struct report *v[2], *m;
	struct written w1, w2;
	char p1[PATH_MAX], p2[PATH_MAX], warn[256];
	size_t i;

	path_of(p1, sizeof(p1), "m1.data");
	path_of(p2, sizeof(p2), "m2.data");
	/* The second file starts 2 s later (write_file's header, moved): merged second, its times 2 s on. */
	if (!write_file(p1, 1000, &w1) || !write_file_at(p2, 2000, &w2, 2000000000ULL))
		return;
	v[0] = report__open(p2, errbuf, sizeof(errbuf));
	v[1] = report__open(p1, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(v[0], errbuf) || !ASSERT_OK_PTR(v[1], errbuf)) {
		report__free(v[0]);
		report__free(v[1]);
		return;
	}
	m = report__merge(v, 2, warn, sizeof(warn));
	if (!ASSERT_OK_PTR(m, "merge"))
		return;
	ASSERT_STREQ(warn, "", "the files agree");
	ASSERT_EQ(report__nr_offcpu(m), (size_t)(2 * NR_OFF), "OFFCPU records of both");
	ASSERT_EQ(report__header(m)->offcpu[RPT_OC_RECORDS], (uint64_t)(2 * NR_OFF), "END records summed");
	ASSERT_EQ(report__header(m)->offcpu[RPT_OC_LOST], (uint64_t)4, "END lost summed");
	ASSERT_EQ(report__header(m)->off_cpu, (uint32_t)1, "off_cpu");
	if (report__nr_offcpu(m) == 2 * NR_OFF) {
		check_offcpu(m, &w1, 0);
		for (i = 0; i < NR_OFF; i++)
			ASSERT_EQ(report__offcpu(m, NR_OFF + i)->time, w2.o[i].time + 2000000000ULL,
				  "the second file's times, 2 s on");
	}
	report__free(m);
}

/*
 * A writer that forgets its index at every call writes the stacks again
 * under new ids; the reader indexes the file again (report__dedupe) and
 * the OFFCPU records follow their stacks there.
 */
static void test_forget(void)
{
	struct report_writer *w;
	struct report *r;
	char path[PATH_MAX], name[256];
	uint32_t sid;
	size_t i, j;

	path_of(path, sizeof(path), "forget.data");
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	report_writer__set_index_max(w, 0, 0);
	for (i = 0; i < 3; i++) {
		uint32_t fids[NR_FRAMES], mids[2];
		struct rpt_frame f[NR_FRAMES];
		struct rpt_offcpu o = { .time = i, .comm = "app", .pid = 5, .tid = 5, .state = RPT_OS_DISK,
					.ns = 1000, .count = 1 };

		for (j = 0; j < 2; j++)
			ASSERT_OK(report_writer__module(w, &mods[j], &mids[j]), "module");
		for (j = 0; j < NR_FRAMES; j++) {
			f[j] = frames[j];
			f[j].module = mids[f[j].module];
			ASSERT_OK(report_writer__frame(w, &f[j], &fids[j]), "frame");
		}
		{
			uint32_t ids[4] = { fids[F_SCHED], fids[F_READ], fids[F_WAITER], fids[F_MAIN] };

			ASSERT_OK(report_writer__stack(w, ids, 4, &sid), "stack");
		}
		o.stack = sid;
		ASSERT_OK(report_writer__offcpu(w, &o), "offcpu");
	}
	ASSERT_TRUE(report_writer__forgets(w) > 0, "the writer forgot");
	ASSERT_OK(report_writer__close(w, &hdr), "close");
	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		return;
	if (ASSERT_EQ(report__nr_offcpu(r), (size_t)3, "records")) {
		for (i = 0; i < 3; i++)
			ASSERT_EQ(report__offcpu(r, i)->stack, report__offcpu(r, 0)->stack, "one stack id again");
		ASSERT_STREQ(stack_names(r, report__offcpu(r, 2)->stack, name, sizeof(name)),
			     "main;waiter;io_schedule;schedule", "its frames");
	}
	report__free(r);
}

/* ---- the views ---- */

#define SLEEP_LINE "app;main;waiter;do_nanosleep_[k];schedule_[k];[sleeping] 20000\n"
#define DISK_LINE "app;main;waiter;io_schedule_[k];schedule_[k];[disk] 1001\n"	/* 3 x 333.7 us */
#define PREEMPT_LINE "app;main;burn;[preempted] 42\n"

static struct report *views_report(struct written *wr)
{
	char path[PATH_MAX];
	struct report *r;

	path_of(path, sizeof(path), "views.data");
	if (!write_file(path, 1000, wr))
		return NULL;
	r = report__open(path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	return r;
}

/* A check of a rendered view: @got is @want; frees @got. */
static void same_text(char *got, const char *want, const char *what)
{
	if (ASSERT_OK_PTR(got, what))
		ASSERT_STREQ(got, want, what);
	free(got);
}

/* Folded: CPU samples alone by default; OFFCPU records in us with their state; --wall both; --off-cpu-state. */
static void test_folded(void)
{
	struct view_opts o = {};
	struct written wr;
	struct report *r = views_report(&wr);
	char want[512];

	if (!r)
		return;
	same_text(render(report_view__folded, r, NULL), "app;main;burn 30\n", "the default: CPU samples");
	o.metric = VIEW_METRIC_OFFCPU;
	same_text(render(report_view__folded, r, &o), PREEMPT_LINE SLEEP_LINE DISK_LINE, "--off-cpu");
	o.off_states = 1u << RPT_OS_DISK;
	same_text(render(report_view__folded, r, &o), DISK_LINE, "--off-cpu --off-cpu-state D");
	o.off_states = 0;
	o.metric = VIEW_METRIC_WALL;
	/* Each sample weighs the period: 30 x 1e9 / 99 ns, in us. */
	snprintf(want, sizeof(want), "app;main;burn %" PRIu64 "\n" PREEMPT_LINE SLEEP_LINE DISK_LINE,
		 (uint64_t)((NR_SAMPLES * PERIOD + 500) / 1000));
	same_text(render(report_view__folded, r, &o), want, "--wall");
	report__free(r);
}

/* The table: the header's off-CPU lines, ms, --sort by off-CPU time. */
static void test_table(void)
{
	struct view_opts o = { .limit = 50 };
	struct written wr;
	struct report *r = views_report(&wr);
	char *t;

	if (!r)
		return;
	t = render(report_view__table, r, &o);
	if (ASSERT_OK_PTR(t, "table")) {
		ASSERT_TRUE(strstr(t, "# off-CPU: 12 records, 0.021 s off the CPU (states all, intervals under "
				   "1.000 ms dropped); dropped as short: 17 intervals (0.000 s); lost: 2 "
				   "intervals (0.005 s); user stack cut short: 0 intervals (0.000 s)\n") != NULL, t);
		ASSERT_TRUE(strstr(t, "# shown: CPU samples; --off-cpu shows") != NULL, "names --off-cpu, --wall");
		ASSERT_TRUE(strstr(t, "samples  process") != NULL, "CPU: samples");
	}
	free(t);
	o.metric = VIEW_METRIC_OFFCPU;
	o.nr_sort = 0;
	t = render(report_view__table, r, &o);
	if (ASSERT_OK_PTR(t, "table --off-cpu")) {
		ASSERT_TRUE(strstr(t, "# shown: off-CPU time (--off-cpu): 0.021 s in 12 records\n") != NULL, t);
		ASSERT_TRUE(strstr(t, "       ms  process") != NULL, "a column of ms");
		/* schedule: the leaf of sleeping and disk, 20 + 1.0011 ms of 21.0431: first. */
		ASSERT_TRUE(strstr(t, "  symbol\n  99.80%   99.80%     21.00  app      [kernel.kallsyms]  schedule\n"
				   "   0.20%    0.20%      0.04  app      app                burn\n") != NULL,
			    "schedule first, in ms");
	}
	free(t);
	report__free(r);
}

/* pprof: three sample types, values per kind, a state label; default off_cpu with --off-cpu. */
static void test_pprof(void)
{
	struct view_opts o = {};
	struct written wr;
	struct report *r = views_report(&wr);
	char path[PATH_MAX];
	int pass;

	if (!r)
		return;
	path_of(path, sizeof(path), "off.pb.gz");
	for (pass = 0; pass < 2; pass++) {
		uint64_t sum[3] = {}, sleeping = 0;
		pb_profile *p;
		size_t i, k;

		o.metric = pass ? VIEW_METRIC_OFFCPU : VIEW_METRIC_CPU;
		if (!ASSERT_OK(report_pprof__write(path, r, &o), "pprof") || !(p = decode(path)))
			break;
		if (ASSERT_EQ(p->n_sample_type, (size_t)3, "three sample types")) {
			ASSERT_STREQ(str(p, p->sample_type[0]->type), "samples", "samples");
			ASSERT_STREQ(str(p, p->sample_type[1]->type), "cpu", "cpu");
			ASSERT_STREQ(str(p, p->sample_type[2]->type), "off_cpu", "off_cpu");
			ASSERT_STREQ(str(p, p->sample_type[2]->unit), "nanoseconds", "in ns");
		}
		ASSERT_STREQ(str(p, p->default_sample_type), pass ? "off_cpu" : "cpu", "default sample type");
		for (i = 0; i < p->n_sample; i++) {
			const char *state = NULL;

			for (k = 0; k < 3 && k < p->sample[i]->n_value; k++)
				sum[k] += (uint64_t)p->sample[i]->value[k];
			for (k = 0; k < p->sample[i]->n_label; k++)
				if (!strcmp(str(p, p->sample[i]->label[k]->key), "state"))
					state = str(p, p->sample[i]->label[k]->str);
			ASSERT_TRUE(!state == !p->sample[i]->value[2], "a state label on off-CPU samples only");
			if (state && !strcmp(state, "sleeping"))
				sleeping += (uint64_t)p->sample[i]->value[2];
		}
		ASSERT_EQ(sum[0], pass ? 0 : (uint64_t)NR_SAMPLES, "samples/count");
		ASSERT_EQ(sum[1], pass ? 0 : NR_SAMPLES * PERIOD, "cpu/nanoseconds");
		ASSERT_EQ(sum[2], wr.sleep_ns + wr.disk_ns + wr.preempt_ns, "off_cpu/nanoseconds");
		ASSERT_EQ(sleeping, wr.sleep_ns, "sleeping");
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	report__free(r);
}

/* perf-script: OFFCPU records as perf's offcpu-time samples, the period their ns; --wall in time order. */
static void test_script(void)
{
	struct view_opts o = { .metric = VIEW_METRIC_OFFCPU };
	struct written wr;
	struct report *r = views_report(&wr);
	char *t, *p, want[128];
	size_t n = 0, cpu = 0;
	uint64_t last = 0;

	if (!r)
		return;
	t = render(report_script__write, r, &o);
	for (p = t; p && (p = strstr(p, " offcpu-time: \n")); p++)
		n++;
	ASSERT_EQ(n, (size_t)NR_OFF, "an offcpu-time sample per record");
	ASSERT_TRUE(t && !strstr(t, "cpu-clock"), "no CPU sample");
	snprintf(want, sizeof(want), "app   100/101   [000]     5.%06" PRIu64 ":    2500000 offcpu-time: \n"
		 "\tffffffff81000100 schedule+0x0 ([kernel.kallsyms])\n",
		 (uint64_t)((hdr.start_mono_ns + wr.o[0].time) % 1000000000 / 1000));
	ASSERT_TRUE(t && strstr(t, want), want);
	free(t);
	o.metric = VIEW_METRIC_WALL;
	t = render(report_script__write, r, &o);
	n = 0;
	for (p = t; p && (p = strchr(p, '[')); p++) {
		char *colon = strstr(p, ": ");
		double secs = strtod(p + 6, NULL);

		if (p[4] != ']' || !colon)
			continue;
		ASSERT_TRUE((uint64_t)(secs * 1e6 + 0.5) >= last, "time order");
		last = (uint64_t)(secs * 1e6 + 0.5);
		n += !!strstr(colon, " offcpu-time: \n") && strstr(colon, " offcpu-time: \n") < strchr(colon, '\n');
		cpu += !!strstr(colon, " cpu-clock: \n") && strstr(colon, " cpu-clock: \n") < strchr(colon, '\n');
	}
	ASSERT_EQ(n, (size_t)NR_OFF, "--wall: every OFFCPU record");
	ASSERT_EQ(cpu, (size_t)NR_SAMPLES, "--wall: every sample");
	free(t);
	report__free(r);
}

static int flame_fprint(FILE *out, const struct report *r, const struct view_opts *o)
{
	return report_flame__fprint(out, r, o, NULL);
}

/* The flame graph: off-CPU's title, states on top in their colour family, tooltips in ms. */
static void test_flame(void)
{
	struct view_opts o = { .metric = VIEW_METRIC_OFFCPU };
	struct written wr;
	struct report *r = views_report(&wr);
	char *t;

	if (!r)
		return;
	t = render(flame_fprint, r, &o);
	if (ASSERT_OK_PTR(t, "flame")) {
		ASSERT_TRUE(strstr(t, ">Off-CPU time flame graph<") != NULL, "title");
		ASSERT_TRUE(strstr(t, "<title>[sleeping] (20.000 ms, 95.04%)</title>") != NULL, "the state on top, ms");
		ASSERT_TRUE(strstr(t, "<title>all (21.043 ms, 100.00%)</title>") != NULL, "the root: all the time");
		ASSERT_TRUE(strstr(t, " ns)\";") != NULL, "the search sums ns");
		ASSERT_TRUE(strstr(t, ">off-CPU</text>") != NULL, "the legend");
	}
	free(t);
	t = render(flame_fprint, r, NULL);
	if (ASSERT_OK_PTR(t, "flame"))
		ASSERT_TRUE(strstr(t, ">Flame graph<") && !strstr(t, "[sleeping]") && !strstr(t, "off-CPU"),
			    "the default: CPU samples only, as before");
	free(t);
	report__free(r);
}

int main(void)
{
	static const char *const names[] = { "rt.data", "killed.data", "refuse.data", "old.data", "m1.data", "m2.data",
					     "forget.data", "views.data", "off.pb.gz" };
	const char *t = getenv("BPFSYM_TEST_TMP");
	char path[PATH_MAX];
	size_t i;

	snprintf(dir, sizeof(dir), "%s/test_report_offcpu.%d", t && *t ? t : "/tmp", (int)getpid());
	if (mkdir(dir, 0700))
		TEST_SETUP_FAIL("mkdir '%s': %s", dir, strerror(errno));
	RUN_TEST(test_roundtrip);
	RUN_TEST(test_truncated);
	RUN_TEST(test_writer_refuses);
	RUN_TEST(test_refused);
	RUN_TEST(test_older_reader);
	RUN_TEST(test_merge);
	RUN_TEST(test_forget);
	RUN_TEST(test_folded);
	RUN_TEST(test_table);
	RUN_TEST(test_pprof);
	RUN_TEST(test_script);
	RUN_TEST(test_flame);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_of(path, sizeof(path), names[i]);
		unlink(path);
	}
	rmdir(dir);
	return TEST_EXIT();
}
