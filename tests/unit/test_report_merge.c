// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report__merge: files written with the report writer, read back and
 * merged, every field of the result checked against what was written
 * (ids remapped, shared modules/frames/stacks once, times rebased, the
 * header's counters summed), and the END record's unwritten and debuginfod counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "report/report.h"

TEST_SUITE("unit")

static char dir[256];

/* A file's content: which of the shared frames its stacks use, its samples. */
struct file_spec {
	const char *name;
	uint64_t start_wall, start_mono;
	const char *boot, *event;
	uint32_t freq;
	size_t nr_samples;
	uint32_t pid0;			/* sample i: pid pid0 + i % 3 */
	int frame_order;		/* 0: frames A, B, C; 1: C, D, A (other ids for the same frames) */
	uint64_t lost, unwritten;
	bool close;			/* false: no END record (truncated) */
};

static const struct rpt_module mods[3] = {
	{ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	{ .kind = RPT_MOD_FILE, .path = "/usr/bin/app", .build_id_len = 4, .build_id = { 1, 2, 3, 4 },
	  .dev = 8, .ino = 99 },
	{ .kind = RPT_MOD_FILE, .path = "/usr/lib/libx.so", .dev = 8, .ino = 100 },
};

/* A: kernel; B: app main; C: libx f; D: unnamed, no module. */
static const struct rpt_frame frames[4] = {
	{ RPT_FRAME_KERNEL, 0, 0xffffffff81000100ULL, 0xffffffff81000100ULL, "schedule", 0, RPT_OK },
	{ RPT_FRAME_USER, 1, 0x1130, 0x555555555130ULL, "main", 0x10, RPT_OK },
	{ RPT_FRAME_USER, 2, 0x2200, 0x7f0000002200ULL, "f", 0, RPT_OK },
	{ RPT_FRAME_USER, RPT_NONE, 0, 0x1000, NULL, 0, RPT_NO_MAPPING },
};

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/*
 * Write @f: modules in file order 2, 0, 1 for frame_order 1 (so ids
 * differ from the other file's), stacks [B A] and [C B] or [D C A], each
 * sample i at time 1000 * (i + 1) with stack i % 2.
 */
static bool write_file(const struct file_spec *f)
{
	static const int order[2][3] = { { 0, 1, 2 }, { 2, 3, 0 } };
	struct rpt_header h = { .hostname = "host", .release = "6.18", .text_addr = 0xffffffff81000000ULL,
				.nr_cpus = 2, .target = "all" };
	uint32_t mid[3], fid[4] = {}, st[2], ids[3];
	struct report_writer *w;
	struct rpt_frame fr;
	char path[512];
	size_t i;
	int k, err = 0;

	snprintf(h.boot_id, sizeof(h.boot_id), "%s", f->boot);
	snprintf(h.event, sizeof(h.event), "%s", f->event);
	h.freq = f->freq;
	h.start_wall_ns = f->start_wall;
	h.start_mono_ns = f->start_mono;
	path_of(path, sizeof(path), f->name);
	w = report_writer__open(path, &h);
	if (!ASSERT_OK_PTR(w, "open a writer"))
		return false;
	for (i = 0; i < 3 && !err; i++) {
		int m = f->frame_order ? (int)(2 - i) : (int)i;

		err = report_writer__module(w, &mods[m], &mid[m]);
	}
	for (i = 0; i < 3 && !err; i++) {
		k = order[f->frame_order][i];
		fr = frames[k];
		if (fr.module != RPT_NONE)
			fr.module = mid[fr.module];
		err = report_writer__frame(w, &fr, &fid[k]);
	}
	if (!f->frame_order) {
		ids[0] = fid[1], ids[1] = fid[0];
		err = err ?: report_writer__stack(w, ids, 2, &st[0]);
		ids[0] = fid[2], ids[1] = fid[1];
		err = err ?: report_writer__stack(w, ids, 2, &st[1]);
	} else {
		ids[0] = fid[3], ids[1] = fid[2], ids[2] = fid[0];
		err = err ?: report_writer__stack(w, ids, 3, &st[0]);
		ids[0] = fid[2], ids[1] = fid[1];	/* B was not interned here: use C alone */
		err = err ?: report_writer__stack(w, ids, 1, &st[1]);
	}
	/* Cgroup 7 in every file; 100 + frame_order only in its own. */
	err = err ?: report_writer__cgroup(w, 7, "/docker/app");
	err = err ?: report_writer__cgroup(w, 100 + (uint64_t)f->frame_order, f->frame_order ? "/b" : "/a");
	for (i = 0; i < f->nr_samples && !err; i++) {
		struct rpt_sample s = { .time = 1000 * (i + 1), .pid = f->pid0 + (uint32_t)(i % 3),
					.tid = f->pid0 + (uint32_t)(i % 3), .cpu = (uint32_t)(i % 2),
					.cgroup = 7, .comm = i % 2 ? "worker" : "app", .stack = st[i % 2] };

		err = report_writer__sample(w, &s);
	}
	if (!ASSERT_OK(err, "write the records")) {
		report_writer__abort(w);
		return false;
	}
	if (!f->close) {
		err = report_writer__flush(w);
		report_writer__abort(w);
		return ASSERT_OK(err, "flush the truncated file");
	}
	h.end_wall_ns = f->start_wall + 5000000000ULL;
	h.lost_samples = f->lost;
	h.unwritten = f->unwritten;
	h.dinfod[0] = f->lost + 1;	/* debuginfod: asked */
	h.dinfod[3] = 1;		/* ...timed out */
	h.uend[1] = f->nr_samples;
	h.nr_procs = 3;
	h.unw.tables = f->nr_samples;	/* a gauge: the merge keeps the largest */
	return ASSERT_OK(report_writer__close(w, &h), "close the file");
}

static struct report *open_file(const char *name)
{
	char path[512], err[512] = "";
	struct report *r;

	path_of(path, sizeof(path), name);
	r = report__open(path, err, sizeof(err));
	if (!r)
		printf("     report__open: %s\n", err);
	return r;
}

static const struct file_spec spec_a = {
	"a.data", 1700000000000000000ULL, 5000000000ULL, "boot-1", "cpu-clock", 49, 5, 100, 0, 3, 0, true,
};
static const struct file_spec spec_b = {
	"b.data", 1700000002000000000ULL, 7000000000ULL, "boot-1", "cpu-clock", 49, 4, 101, 1, 4, 6, true,
};

/* A frame of @r as "kind module-path offset/addr sym". */
static void frame_str(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const struct rpt_frame *f = report__frame(r, id);
	const struct rpt_module *m = f ? report__module(r, f->module) : NULL;

	if (!f) {
		snprintf(buf, len, "(bad frame %u)", id);
		return;
	}
	snprintf(buf, len, "%u %s %#llx %#llx %s", f->kind, m ? m->path : "-", (unsigned long long)f->offset,
		 (unsigned long long)f->addr, f->sym ? f->sym : "-");
}

/* Stack @id of @r as its frames' strings joined with '|'. */
static void stack_str(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const uint32_t *ids;
	uint32_t nr = 0, i;
	size_t off = 0;
	char f[256];

	buf[0] = '\0';
	ids = report__stack(r, id, &nr);
	for (i = 0; ids && i < nr && off < len; i++) {
		frame_str(r, ids[i], f, sizeof(f));
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "", f);
	}
}

/* Every sample of @m equals @src's sample at the same place, its time moved by @shift. */
static bool same_samples(const struct report *m, size_t at, const struct report *src, uint64_t shift)
{
	char a[1024], b[1024];
	size_t i;

	for (i = 0; i < report__nr_samples(src); i++) {
		const struct rpt_sample *x = report__sample(m, at + i), *y = report__sample(src, i);

		if (!ASSERT_OK_PTR(x, "merged sample"))
			return false;
		stack_str(m, x->stack, a, sizeof(a));
		stack_str(src, y->stack, b, sizeof(b));
		if (!ASSERT_EQ(x->time, y->time + shift, "time rebased") || !ASSERT_EQ(x->pid, y->pid, "pid") ||
		    !ASSERT_EQ(x->tid, y->tid, "tid") || !ASSERT_EQ(x->cpu, y->cpu, "cpu") ||
		    !ASSERT_EQ(x->cgroup, y->cgroup, "cgroup") || !ASSERT_STREQ(x->comm, y->comm, "comm") ||
		    !ASSERT_STREQ(a, b, "the same stack, frame by frame"))
			return false;
	}
	return true;
}

static void test_merge_two(void)
{
	struct report *v[2], *ra = NULL, *rb = NULL, *m = NULL;
	const struct rpt_header *h;
	char warn[256] = "x";

	if (!write_file(&spec_a) || !write_file(&spec_b))
		return;
	ra = open_file("a.data");
	rb = open_file("b.data");
	/* Given latest first: the merge orders them by start. */
	v[0] = open_file("b.data");
	v[1] = open_file("a.data");
	if (!ASSERT_OK_PTR(ra, "a") || !ASSERT_OK_PTR(rb, "b") || !ASSERT_OK_PTR(v[0], "b") ||
	    !ASSERT_OK_PTR(v[1], "a"))
		goto out;
	m = report__merge(v, 2, warn, sizeof(warn));
	if (!ASSERT_OK_PTR(m, "merge"))
		goto out;
	ASSERT_STREQ(warn, "", "no warning for files of one recording");
	h = report__header(m);
	ASSERT_EQ(report__nr_samples(m), (size_t)9, "samples: 5 + 4");
	ASSERT_EQ(h->samples, (uint64_t)9, "header samples summed");
	ASSERT_EQ(h->lost_samples, (uint64_t)7, "losses summed: 3 + 4");
	ASSERT_EQ(h->unwritten, (uint64_t)6, "unwritten summed");
	ASSERT_EQ(h->dinfod[0], (uint64_t)9, "debuginfod asked summed: 4 + 5");
	ASSERT_EQ(h->dinfod[3], (uint64_t)2, "debuginfod timed out summed");
	ASSERT_EQ(h->uend[1], (uint64_t)9, "user-stack ends summed");
	ASSERT_EQ(h->unw.tables, (uint64_t)5, "unwinder gauge: the largest");
	ASSERT_EQ(h->nr_procs, (uint64_t)4, "processes: pids 100-102 and 101-103 counted again as distinct pids");
	ASSERT_EQ(h->start_wall_ns, spec_a.start_wall, "the earliest start");
	ASSERT_EQ(h->start_mono_ns, spec_a.start_mono, "the earliest start's time base");
	ASSERT_EQ(h->end_wall_ns, spec_b.start_wall + 5000000000ULL, "the latest end");
	ASSERT_TRUE(h->complete, "complete: both files are");
	ASSERT_EQ(h->freq, (uint32_t)49, "freq");
	/* Modules: 3 distinct identities; frames: A B C D; stacks: [B A] [C B] [D C A] [C]. */
	ASSERT_EQ(report__nr_modules(m), (size_t)3, "modules once each");
	ASSERT_EQ(report__nr_frames(m), (size_t)4, "frames once each");
	same_samples(m, 0, ra, 0);
	same_samples(m, report__nr_samples(ra), rb, spec_b.start_mono - spec_a.start_mono);
	/* Cgroup paths: by the kernel's ids, each once, both files' own ones kept. */
	ASSERT_EQ(report__nr_cgroups(m), (size_t)3, "cgroups: 7 once, 100 and 101");
	ASSERT_STREQ(report__cgroup_path(m, 7), "/docker/app", "the shared cgroup");
	ASSERT_STREQ(report__cgroup_path(m, 100), "/a", "a's own cgroup");
	ASSERT_STREQ(report__cgroup_path(m, 101), "/b", "b's own cgroup");
out:
	report__free(m);
	report__free(ra);
	report__free(rb);
}

/* Across boots the wall clock places the files; a mix of events is said once; truncated is not complete. */
static void test_merge_mixed(void)
{
	struct file_spec c = spec_b, d = spec_a;
	struct report *v[3], *m;
	char warn[256] = "";
	size_t i;

	c.name = "c.data", c.boot = "boot-2", c.start_mono = 1000, c.close = false;
	d.name = "d.data", d.event = "cycles";
	if (!write_file(&c) || !write_file(&d) || !write_file(&spec_a))
		return;
	v[0] = open_file("c.data");
	v[1] = open_file("d.data");
	v[2] = open_file("a.data");
	for (i = 0; i < 3; i++)
		if (!ASSERT_OK_PTR(v[i], "open"))
			return;
	ASSERT_FALSE(report__header(v[0])->complete, "c is truncated");
	m = report__merge(v, 3, warn, sizeof(warn));
	if (!ASSERT_OK_PTR(m, "merge"))
		return;
	ASSERT_TRUE(strstr(warn, "events") || strstr(warn, "boots"), "a warning names what differs");
	ASSERT_FALSE(report__header(m)->complete, "one truncated file: not complete");
	ASSERT_EQ(report__nr_samples(m), (size_t)14, "5 + 5 + 4 samples");
	/* c starts 2 s after a and d by the wall clock; its boot differs, so its monotonic time is not used. */
	ASSERT_EQ(report__sample(m, 10)->time, (uint64_t)2000000000ULL + 1000, "c's first sample, by the wall clock");
	report__free(m);
}

static void test_merge_args(void)
{
	struct report *v[2] = { open_file("a.data"), NULL };

	errno = 0;
	ASSERT_NULL(report__merge(v, 2, NULL, 0), "a NULL input");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	/* v[0] was consumed by the failed merge. */
	errno = 0;
	ASSERT_NULL(report__merge(NULL, 0, NULL, 0), "nothing to merge");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
}

/* The END record's unwritten count and processes come back as written. */
static void test_unwritten_roundtrip(void)
{
	struct report *r = open_file("b.data");

	if (!ASSERT_OK_PTR(r, "open b"))
		return;
	ASSERT_EQ(report__header(r)->unwritten, (uint64_t)6, "unwritten read back");
	ASSERT_EQ(report__header(r)->nr_procs, (uint64_t)3, "nr_procs as written");
	ASSERT_EQ(report__header(r)->dinfod[0], (uint64_t)5, "debuginfod asked read back");
	ASSERT_EQ(report__header(r)->dinfod[1], (uint64_t)0, "debuginfod found read back");
	report__free(r);
}

int main(void)
{
	const char *t = getenv("BPFSYM_TEST_TMP");
	static const char *const names[] = { "a.data", "b.data", "c.data", "d.data" };
	char path[512];
	size_t i;

	snprintf(dir, sizeof(dir), "%s/test_report_merge.%d", t && *t ? t : "/tmp", (int)getpid());
	if (mkdir(dir, 0700))
		TEST_SETUP_FAIL("mkdir '%s': %s", dir, strerror(errno));
	RUN_TEST(test_merge_two);
	RUN_TEST(test_merge_mixed);
	RUN_TEST(test_merge_args);
	RUN_TEST(test_unwritten_roundtrip);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_of(path, sizeof(path), names[i]);
		unlink(path);
	}
	rmdir(dir);
	return TEST_EXIT();
}
