// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report` output: the folded stacks and the hot-function table of
 * a hand-built recording (written with the real writer, read back with the
 * real reader), the filters, and the frame naming rules of docs/cli.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "test.h"
#include "view_render.h"
#include "report/report.h"
#include "view/report_view.h"

TEST_SUITE("report_view");

static char errbuf[512];
static char path[PATH_MAX];

static const struct rpt_header hdr = {
	.hostname = "testhost",
	.release = "6.18.0-test",
	.boot_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
	.event = "cpu-clock",
	.target = "all",
	.freq = 99,
	.nr_cpus = 4,
	.start_wall_ns = 1714560000000000000ULL,	/* 2024-05-01 10:40:00 UTC */
	.kfeatures = "task work no, VMA iterator yes -> mappings followed from exec",
};

enum { M_KERNEL, M_APP, M_LIBC };
static const struct rpt_module mods[] = {
	[M_KERNEL] = { .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	[M_APP] = { .kind = RPT_MOD_FILE, .path = "/usr/bin/app", .dev = 1, .ino = 2 },
	[M_LIBC] = { .kind = RPT_MOD_FILE, .path = "/lib/x86_64-linux-gnu/libc.so.6", .dev = 1, .ino = 3 },
};

enum { F_SYSCALL, F_KUNNAMED, F_MAIN, F_WORK, F_WRITE, F_APPUNNAMED, F_UNK1, F_UNK2, F_REC, NR_FRAMES };
static const struct rpt_frame frames[] = {
	[F_SYSCALL] = { RPT_FRAME_KERNEL, M_KERNEL, 0xffffffff81234567ULL, 0xffffffff81234567ULL,
			"do_syscall_64", 7, RPT_OK },
	[F_KUNNAMED] = { RPT_FRAME_KERNEL, M_KERNEL, 0xffffffff81001000ULL, 0xffffffff81001000ULL,
			 NULL, 0, RPT_KALLSYMS_RESTRICTED },
	[F_MAIN] = { RPT_FRAME_USER, M_APP, 0x1100, 0x555555555100ULL, "main", 0, RPT_OK },
	[F_WORK] = { RPT_FRAME_USER, M_APP, 0x1200, 0x555555555200ULL, "work", 0, RPT_OK },
	[F_WRITE] = { RPT_FRAME_USER, M_LIBC, 0x28000, 0x7f0000028000ULL, "write", 0, RPT_OK },
	[F_APPUNNAMED] = { RPT_FRAME_USER, M_APP, 0x1abc, 0x555555555abcULL, NULL, 0, RPT_OUTSIDE_SYMBOL },
	[F_UNK1] = { RPT_FRAME_USER, RPT_NONE, 0, 0xdead, NULL, 0, RPT_NO_MAPPING },
	[F_UNK2] = { RPT_FRAME_USER, RPT_NONE, 0, 0xbeef, NULL, 0, RPT_NO_MAPPING },
	[F_REC] = { RPT_FRAME_USER, M_APP, 0x1300, 0x555555555300ULL, "rec", 0, RPT_OK },
};

/* Leaf first, kernel frames before user frames, as the recorder writes them. */
static const struct {
	uint32_t nr, ids[4];
} stacks[] = {
	{ 4, { F_SYSCALL, F_WRITE, F_WORK, F_MAIN } },
	{ 2, { F_WORK, F_MAIN } },
	{ 2, { F_APPUNNAMED, F_MAIN } },
	{ 2, { F_UNK1, F_MAIN } },
	{ 2, { F_UNK2, F_MAIN } },
	{ 4, { F_REC, F_REC, F_REC, F_MAIN } },
	{ 1, { F_KUNNAMED } },
	{ 0, { 0 } },
};

static const struct {
	uint32_t pid;
	const char *comm;
	uint32_t stack, count;
} samples[] = {
	{ 100, "app", 0, 3 }, { 100, "app", 1, 5 }, { 100, "app", 2, 1 }, { 100, "app", 3, 2 },
	{ 100, "app", 4, 1 }, { 100, "app", 5, 4 }, { 200, "other", 1, 2 }, { 200, "other", 6, 1 },
	{ 300, "a;b", 1, 1 }, { 400, "empty", 7, 1 },
};
#define TOTAL 21

/* Write the recording; @complete false leaves it without an END record. */
static struct report *build(bool complete)
{
	struct rpt_header final = hdr;
	uint32_t fid[NR_FRAMES], sid[8], id, ids[4], j;
	struct report_writer *w;
	struct report *r = NULL;
	size_t i, k;

	snprintf(path, sizeof(path), "%s/test_report_view.%d.data",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp", (int)getpid());
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return NULL;
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (!ASSERT_OK(report_writer__module(w, &mods[i], &id), "module"))
			goto fail;
	for (i = 0; i < NR_FRAMES; i++)
		if (!ASSERT_OK(report_writer__frame(w, &frames[i], &fid[i]), "frame"))
			goto fail;
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		for (j = 0; j < stacks[i].nr; j++)
			ids[j] = fid[stacks[i].ids[j]];
		if (!ASSERT_OK(report_writer__stack(w, ids, stacks[i].nr, &sid[i]), "stack"))
			goto fail;
	}
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		for (k = 0; k < samples[i].count; k++) {
			struct rpt_sample s = {
				.time = (i * 10 + k) * 1000000ULL, .pid = samples[i].pid,
				.tid = samples[i].pid, .comm = samples[i].comm, .stack = sid[samples[i].stack],
			};

			if (!ASSERT_OK(report_writer__sample(w, &s), "sample"))
				goto fail;
		}
	}
	if (!complete) {
		ASSERT_OK(report_writer__flush(w), "flush");
		report_writer__abort(w);
	} else {
		final.end_wall_ns = hdr.start_wall_ns + 10000000000ULL;
		final.lost_samples = 3;
		final.lost_events = 2;
		final.nr_procs = 4;
		final.idle = 40;
		final.missed_vma_busy = 5;
		final.bad_records = 3;
		if (!ASSERT_OK(report_writer__close(w, &final), "close"))
			return NULL;
	}
	r = report__open(path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	unlink(path);
	return r;
fail:
	report_writer__abort(w);
	unlink(path);
	return NULL;
}

static void test_frame_names(void)
{
	struct report *r = build(true);
	char buf[128];

	if (!r)
		return;
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_MAIN), buf, sizeof(buf)), "main", "user");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_SYSCALL), buf, sizeof(buf)),
		     "do_syscall_64_[k]", "kernel");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_APPUNNAMED), buf, sizeof(buf)),
		     "[app+0x1abc]", "module known, symbol not: basename + file offset");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_UNK1), buf, sizeof(buf)), "[unknown]",
		     "no mapping");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_KUNNAMED), buf, sizeof(buf)),
		     "[kernel.kallsyms+0xffffffff81001000]_[k]", "unnamed kernel frame");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_SYSCALL), buf, 6), "do_sy",
		     "truncated to the buffer");
	report__free(r);
}

static void test_folded(void)
{
	static const char want[] =
		"a:b;main;work 1\n"
		"app;main;[app+0x1abc] 1\n"
		"app;main;[unknown] 3\n"
		"app;main;rec;rec;rec 4\n"
		"app;main;work 5\n"
		"app;main;work;write;do_syscall_64_[k] 3\n"
		"empty;[unknown] 1\n"
		"other;[kernel.kallsyms+0xffffffff81001000]_[k] 1\n"
		"other;main;work 2\n";
	struct report *r = build(true);
	char *out;

	if (!r)
		return;
	out = render(report_view__folded, r, NULL);
	ASSERT_STREQ(out, want, "folded");
	free(out);
	report__free(r);
}

static void test_filters(void)
{
	static const uint32_t pids[] = { 200, 300 }, unsorted[] = { 300, 7, 200, 300 };
	static const char *const comms[] = { "app" }, *const other[] = { "other" };
	struct view_opts o = { .pids = unsorted, .nr_pids = 4 };
	struct rpt_sample s = { .pid = 200, .comm = "other" };
	struct report *r = build(true);
	char *out;

	if (!r)
		return;
	ASSERT_TRUE(view__keep(NULL, &s), "no options: kept");
	ASSERT_TRUE(view__keep(&o, &s), "pid listed");
	s.pid = 100;
	ASSERT_FALSE(view__keep(&o, &s), "pid not listed");

	out = render(report_view__folded, r, &o);
	ASSERT_STREQ(out, "a:b;main;work 1\n"
			  "other;[kernel.kallsyms+0xffffffff81001000]_[k] 1\n"
			  "other;main;work 2\n", "--pid 300,7,200,300");
	free(out);

	o = (struct view_opts){ .comms = comms, .nr_comms = 1 };
	out = render(report_view__folded, r, &o);
	ASSERT_TRUE(out && !strstr(out, "other") && !strstr(out, "a:b") &&
		    strstr(out, "app;main;work 5\n"), "--comm app");
	free(out);

	/* Both filters: a sample must pass each. */
	o = (struct view_opts){ .pids = pids, .nr_pids = 1, .comms = other, .nr_comms = 1 };
	out = render(report_view__folded, r, &o);
	ASSERT_STREQ(out, "other;[kernel.kallsyms+0xffffffff81001000]_[k] 1\n"
			  "other;main;work 2\n", "--pid 200 --comm other");
	free(out);
	o.comms = comms;
	out = render(report_view__folded, r, &o);
	ASSERT_STREQ(out, "", "--pid 200 --comm app: nothing");
	free(out);
	report__free(r);
}

struct trow {
	double self, total;
	uint64_t samples;
	char comm[64], mod[64], sym[128];
};

/* The table's data rows, parsed back. */
static size_t parse_rows(const char *out, struct trow *rows, size_t max)
{
	const char *line;
	size_t n = 0;

	for (line = out; line && *line && n < max; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (*line == '#' || *line == '\n')
			continue;
		if (sscanf(line, "%lf%% %lf%% %" SCNu64 " %63s %63s %127s", &rows[n].self, &rows[n].total,
			   &rows[n].samples, rows[n].comm, rows[n].mod, rows[n].sym) != 6)
			break;
		n++;
	}
	return n;
}

static bool row_is(const struct trow *t, const char *comm, const char *mod, const char *sym,
		   uint64_t self, uint64_t total, uint64_t all)
{
	double ps = 100.0 * (double)self / (double)all, pt = 100.0 * (double)total / (double)all;

	if (strcmp(t->comm, comm) || strcmp(t->mod, mod) || strcmp(t->sym, sym) || t->samples != self ||
	    t->self < ps - 0.006 || t->self > ps + 0.006 || t->total < pt - 0.006 || t->total > pt + 0.006) {
		test__fail_msg(__FILE__, __LINE__,
			       "row %s %s %s %.2f%% %.2f%% %" PRIu64 ", expected %s %s %s %.2f%% %.2f%% %" PRIu64,
			       t->comm, t->mod, t->sym, t->self, t->total, t->samples, comm, mod, sym, ps, pt, self);
		return false;
	}
	return true;
}

static void test_table(void)
{
	struct trow rows[32];
	struct view_opts o = {};
	struct report *r = build(true);
	char *out, want[PATH_MAX + 32];
	size_t n;

	if (!r)
		return;
	out = render(report_view__table, r, NULL);
	if (!ASSERT_OK_PTR(out, "table"))
		goto out;
	snprintf(want, sizeof(want), "# bpfsym report: %s\n", path);
	ASSERT_TRUE(!strncmp(out, want, strlen(want)), "names the file first");
	ASSERT_TRUE(strstr(out, "# host: testhost, kernel: 6.18.0-test, boot id: 0f1e2d3c-"), out);
	ASSERT_TRUE(strstr(out, "\n# kernel: 6.18.0-test; task work no, VMA iterator yes -> "
			    "mappings followed from exec\n"), out);
	ASSERT_TRUE(strstr(out, "# event: cpu-clock at 99 Hz on 4 CPUs, target: all\n"), out);
	ASSERT_TRUE(strstr(out, "# started: 2024-05-01 10:40:00 UTC, duration: 10.000 s\n"), out);
	ASSERT_TRUE(strstr(out, "# samples: 21; idle CPU ticks (not recorded): 40\n"
			       "# lost: 3 samples (ring buffer full: 12.5% of those taken), "
			       "2 mapping/process events (ring buffer full); processes seen: 4\n"
			       "# also missed: 5 mapping events (VMA unreadable: mmap lock busy), "
			       "3 malformed ring-buffer records\n"), out);
	ASSERT_FALSE(strstr(out, "truncated"), "complete recording");
	/*
	 * 53 frames in the 21 samples (the empty stack has none): 3 with no
	 * mapping, 1 outside any symbol, 1 restricted; the tie goes by reason.
	 */
	ASSERT_TRUE(strstr(out, "records\n# unnamed frames: 9.4% of 53 (no mapping 5.7%, "
			       "outside any symbol 1.9%, kallsyms restricted 1.9%)\n"
			       "# rows: 13, sorted by self\n#\n"), out);
	ASSERT_FALSE(strstr(out, "# filters:"), "no filters, no filter line");
	ASSERT_FALSE(strstr(out, "# kernel symbols:"), "no namer, no relocation line");
	n = parse_rows(out, rows, 32);
	/* Self first, then total, then the name; recursion counts once in total. */
	if (ASSERT_EQ(n, (size_t)13, "rows")) {
		row_is(&rows[0], "app", "app", "work", 5, 8, TOTAL);
		row_is(&rows[1], "app", "app", "rec", 4, 4, TOTAL);
		row_is(&rows[2], "app", "[unknown]", "[unknown]", 3, 3, TOTAL);
		row_is(&rows[3], "app", "[kernel.kallsyms]", "do_syscall_64", 3, 3, TOTAL);
		row_is(&rows[4], "other", "app", "work", 2, 2, TOTAL);
		row_is(&rows[5], "app", "app", "[app+0x1abc]", 1, 1, TOTAL);
		row_is(&rows[6], "other", "[kernel.kallsyms]", "[kernel.kallsyms+0xffffffff81001000]", 1, 1, TOTAL);
		row_is(&rows[7], "empty", "[unknown]", "[unknown]", 1, 1, TOTAL);
		row_is(&rows[8], "a;b", "app", "work", 1, 1, TOTAL);
		row_is(&rows[9], "app", "app", "main", 0, 16, TOTAL);
		row_is(&rows[10], "app", "libc.so.6", "write", 0, 3, TOTAL);
		row_is(&rows[11], "other", "app", "main", 0, 2, TOTAL);
		row_is(&rows[12], "a;b", "app", "main", 0, 1, TOTAL);
	}
	free(out);

	o.limit = 2;
	o.pids = (const uint32_t[]){ 200 };
	o.nr_pids = 1;
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# samples: 21, 3 after filters; idle"), out);
	ASSERT_TRUE(out && strstr(out, "# filters: --pid 200\n"), "the filter in effect");
	ASSERT_TRUE(out && strstr(out, "# rows: 3, the first 2 shown (--limit), sorted by self\n"), out);
	ASSERT_TRUE(out && strstr(out, "# unnamed frames: 20.0% of 5 (kallsyms restricted 20.0%)\n"),
		    "the summary follows the filters");
	n = parse_rows(out, rows, 32);
	if (ASSERT_EQ(n, (size_t)2, "--limit 2")) {
		row_is(&rows[0], "other", "app", "work", 2, 2, 3);
		row_is(&rows[1], "other", "[kernel.kallsyms]", "[kernel.kallsyms+0xffffffff81001000]", 1, 1, 3);
	}
	free(out);

	o.pids = (const uint32_t[]){ 300 };
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# unnamed frames: none\n"), "every frame named");
	free(out);

	o.pids = (const uint32_t[]){ 999 };
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# no samples\n"), "empty after filters");
	free(out);
out:
	report__free(r);
}

static void test_sort_parse(void)
{
	struct view_opts o = {};
	char err[256] = "";

	if (ASSERT_OK(view_sort__parse(&o, "total,comm", err, sizeof(err)), err) &&
	    ASSERT_EQ(o.nr_sort, (size_t)2, "two keys")) {
		ASSERT_EQ(o.sort[0], VIEW_KEY_TOTAL, "total");
		ASSERT_EQ(o.sort[1], VIEW_KEY_COMM, "comm");
	}
	/* perf's names. */
	if (ASSERT_OK(view_sort__parse(&o, "dso,sym,samples", err, sizeof(err)), err) &&
	    ASSERT_EQ(o.nr_sort, (size_t)3, "three keys")) {
		ASSERT_EQ(o.sort[0], VIEW_KEY_MODULE, "dso");
		ASSERT_EQ(o.sort[1], VIEW_KEY_SYMBOL, "sym");
		ASSERT_EQ(o.sort[2], VIEW_KEY_SELF, "samples");
	}
	ASSERT_OK(view_sort__parse(&o, "process,module,symbol,total,self,container,pid", err, sizeof(err)),
		  "every key");
	ASSERT_EQ(o.nr_sort, (size_t)VIEW_KEY_MAX, "every key once");
	ASSERT_STREQ(view_key__name(VIEW_KEY_COMM), "comm", "printed name");
	ASSERT_STREQ(view_key__name(VIEW_KEY_SELF), "self", "printed name");

	o = (struct view_opts){ .nr_sort = 1, .sort = { VIEW_KEY_TOTAL } };
	ASSERT_EQ(view_sort__parse(&o, "total,bogus", err, sizeof(err)), -EINVAL, "unknown key");
	ASSERT_TRUE(strstr(err, "'bogus'") && strstr(err, "keys: self"), err);
	ASSERT_EQ(view_sort__parse(&o, "self,samples", err, sizeof(err)), -EINVAL, "a key twice, by alias");
	ASSERT_TRUE(strstr(err, "'samples' given twice"), err);
	ASSERT_EQ(view_sort__parse(&o, "", err, sizeof(err)), -EINVAL, "empty");
	ASSERT_EQ(view_sort__parse(&o, "self,", err, sizeof(err)), -EINVAL, "empty last key");
	ASSERT_EQ(view_sort__parse(&o, "Self", err, sizeof(err)), -EINVAL, "case matters");
	ASSERT_EQ(o.nr_sort, (size_t)1, "unchanged on error");
	ASSERT_EQ(o.sort[0], VIEW_KEY_TOTAL, "unchanged on error");
}

static void test_sort(void)
{
	struct trow rows[32];
	struct view_opts o = {};
	struct report *r = build(true);
	char err[256] = "", *out;
	size_t n;

	if (!r)
		return;
	ASSERT_OK(view_sort__parse(&o, "total", err, sizeof(err)), err);
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# rows: 13, sorted by total\n#\n"), out);
	n = parse_rows(out, rows, 32);
	/* Total first; ties by self, then the default order. */
	if (ASSERT_EQ(n, (size_t)13, "rows")) {
		row_is(&rows[0], "app", "app", "main", 0, 16, TOTAL);
		row_is(&rows[1], "app", "app", "work", 5, 8, TOTAL);
		row_is(&rows[2], "app", "app", "rec", 4, 4, TOTAL);
		row_is(&rows[3], "app", "[unknown]", "[unknown]", 3, 3, TOTAL);
		row_is(&rows[4], "app", "[kernel.kallsyms]", "do_syscall_64", 3, 3, TOTAL);
		row_is(&rows[5], "app", "libc.so.6", "write", 0, 3, TOTAL);
		row_is(&rows[6], "other", "app", "work", 2, 2, TOTAL);
		row_is(&rows[7], "other", "app", "main", 0, 2, TOTAL);
	}
	free(out);

	/* perf's -s: the name keys make the rows (module merged), by self, then comm, symbol. */
	ASSERT_OK(view_sort__parse(&o, "comm,sym", err, sizeof(err)), err);
	o.limit = 5;
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, ", the first 5 shown (--limit), sorted by self, comm, symbol\n"), out);
	ASSERT_TRUE(out && strstr(out, "#  self%   total%   samples  process  symbol\n"
				   "  23.81%   38.10%         5  app      work\n"
				   "  19.05%   19.05%         4  app      rec\n"), out);
	free(out);

	/* One row per module of app's samples, by total. */
	ASSERT_OK(view_sort__parse(&o, "dso,total", err, sizeof(err)), err);
	o.limit = 0;
	o.comms = (const char *const[]){ "app" };
	o.nr_comms = 1;
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# filters: --comm app\n"), out);
	ASSERT_TRUE(out && strstr(out, "sorted by total, module\n"), out);
	ASSERT_TRUE(out && strstr(out, "  0.00%  100.00%         0  app\n") == NULL, out);
	ASSERT_TRUE(out && strstr(out, "%  100.00% "), out);
	free(out);
	report__free(r);
}

/* A filter list echoed in the header: bounded, terminal-safe. */
static void test_header_filters(void)
{
	static const uint32_t pids[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 100 };
	static const char *const comms[] = { "app", "evil\x1b[2J" };
	struct view_opts o = { .pids = pids, .nr_pids = 10, .comms = comms, .nr_comms = 2 };
	struct report *r = build(true);
	char *out;

	if (!r)
		return;
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "# filters: --pid 1,2,3,4,5,6,7,8,... (10 in all) --comm app,evil?[2J\n"),
		    out);
	ASSERT_FALSE(out && strchr(out, 0x1b), "no escape byte reaches the terminal");
	free(out);
	report__free(r);
}

static void test_truncated(void)
{
	struct report *r = build(false);
	char *out;

	if (!r)
		return;
	out = render(report_view__table, r, NULL);
	ASSERT_TRUE(out && strstr(out, "# WARNING: truncated recording"), "warns");
	ASSERT_TRUE(out && strstr(out, "# samples: 21\n# lost: unknown (no END record)\n"), out);
	ASSERT_TRUE(out && strstr(out, "duration: 0.090 s to the last sample"), out);
	free(out);
	out = render(report_view__folded, r, NULL);
	ASSERT_TRUE(out && strstr(out, "app;main;work 5\n"), "folded still works");
	free(out);
	report__free(r);
}

int main(void)
{
	RUN_TEST(test_frame_names);
	RUN_TEST(test_folded);
	RUN_TEST(test_filters);
	RUN_TEST(test_table);
	RUN_TEST(test_sort_parse);
	RUN_TEST(test_sort);
	RUN_TEST(test_header_filters);
	RUN_TEST(test_truncated);
	return TEST_EXIT();
}
