// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report --pprof`: a hand-built recording (written with the real
 * writer, read back with the real reader) turned into a pprof profile,
 * gunzipped and decoded with protobuf-c's generated unpacker, and checked
 * table by table: mappings, locations, functions, samples with their
 * values and labels, the header; then filters, kernel names from another
 * kallsyms, hostile strings, aggregation at scale, and failures that must
 * leave the output file as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test.h"
#include "view/frame_namer.h"
#include "symbolize/kernel/kallsyms.h"
#include "profile.pb-c.h"
#include "report/report.h"
#include "view/format/report_pprof.h"
#include "view/report_view.h"
#include "pprof_read.h"

TEST_SUITE("report_pprof");

static char errbuf[512];
static char dir[PATH_MAX];	/* this test's scratch directory */

static const struct rpt_header hdr = {
	.hostname = "testhost",
	.release = "6.18.0-test",
	.boot_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
	.event = "cpu-clock",
	.target = "all",
	.text_addr = 0xffffffff81000000ULL,
	.freq = 100,		/* a 10 ms period: cpu = count x 10000000 */
	.nr_cpus = 4,
	.start_wall_ns = 1714560000000000000ULL,
};

enum { M_KERNEL, M_APP, M_LIBC, M_ANON, M_BAD, NR_MODS };
static const struct rpt_module mods[] = {
	[M_KERNEL] = { .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	[M_APP] = { .kind = RPT_MOD_FILE, .path = "/usr/bin/app", .build_id = { 0xde, 0xad, 0xbe, 0xef },
		    .build_id_len = 4, .dev = 1, .ino = 2 },
	[M_LIBC] = { .kind = RPT_MOD_FILE, .path = "/lib/x86_64-linux-gnu/libc.so.6", .dev = 1, .ino = 3 },
	[M_ANON] = { .kind = RPT_MOD_ANON, .path = "" },
	/* Not UTF-8, with an escape sequence: what a hostile process can map. */
	[M_BAD] = { .kind = RPT_MOD_FILE, .path = "/tmp/\xff\xfe\x1b[2J\xc3\xa9t\xc3", .dev = 1, .ino = 4 },
};

enum {
	F_SYSCALL, F_KUNNAMED, F_MAIN, F_WORK, F_WORK2, F_WRITE, F_APPUNNAMED, F_UNK1, F_UNK2,
	F_LIBCMAIN, F_ANON, F_BADSYM, NR_FRAMES
};
static const struct rpt_frame frames[] = {
	[F_SYSCALL] = { RPT_FRAME_KERNEL, M_KERNEL, 0xffffffff81234567ULL, 0xffffffff81234567ULL,
			"do_syscall_64", 7, RPT_OK },
	[F_KUNNAMED] = { RPT_FRAME_KERNEL, M_KERNEL, 0xffffffff81001000ULL, 0xffffffff81001000ULL,
			 NULL, 0, RPT_KALLSYMS_RESTRICTED },
	/* Callers: the offset looked up is the return address's - 1. */
	[F_MAIN] = { RPT_FRAME_USER, M_APP, 0x10ff, 0x555555555100ULL, "main", 0, RPT_OK },
	[F_WORK] = { RPT_FRAME_USER, M_APP, 0x11ff, 0x555555555200ULL, "work", 0, RPT_OK },
	/* A leaf in work: another location of the same function. */
	[F_WORK2] = { RPT_FRAME_USER, M_APP, 0x1210, 0x555555555210ULL, "work", 0x10, RPT_OK },
	[F_WRITE] = { RPT_FRAME_USER, M_LIBC, 0x28000, 0x7f0000028000ULL, "write", 0, RPT_OK },
	[F_APPUNNAMED] = { RPT_FRAME_USER, M_APP, 0x1abc, 0x555555555abcULL, NULL, 0, RPT_OUTSIDE_SYMBOL },
	[F_UNK1] = { RPT_FRAME_USER, RPT_NONE, 0, 0xdead, NULL, 0, RPT_NO_MAPPING },
	[F_UNK2] = { RPT_FRAME_USER, RPT_NONE, 0, 0xbeef, NULL, 0, RPT_NO_MAPPING },
	/* Same name as the app's main, other module: another function. */
	[F_LIBCMAIN] = { RPT_FRAME_USER, M_LIBC, 0x30000, 0x7f0000030000ULL, "main", 0, RPT_OK },
	[F_ANON] = { RPT_FRAME_USER, M_ANON, 0x7f1000000040ULL, 0x7f1000000040ULL, NULL, 0, RPT_ANON },
	[F_BADSYM] = { RPT_FRAME_USER, M_BAD, 0x100, 0x600000000100ULL, "bad\xe0\x80\xafname\x7f\xc2\x85x",
		       0, RPT_OK },
};

/* Leaf first, kernel frames before user frames, as the recorder writes them. */
enum { S_WRITE, S_WORK, S_APPUNNAMED, S_UNK1, S_UNK2, S_KUNNAMED, S_EMPTY, S_ODD, NR_STACKS };
static const struct {
	uint32_t nr, ids[4];
} stacks[] = {
	[S_WRITE] = { 4, { F_SYSCALL, F_WRITE, F_WORK, F_MAIN } },
	[S_WORK] = { 2, { F_WORK2, F_MAIN } },
	[S_APPUNNAMED] = { 2, { F_APPUNNAMED, F_MAIN } },
	[S_UNK1] = { 2, { F_UNK1, F_MAIN } },
	[S_UNK2] = { 2, { F_UNK2, F_MAIN } },
	[S_KUNNAMED] = { 1, { F_KUNNAMED } },
	[S_EMPTY] = { 0, { 0 } },
	[S_ODD] = { 3, { F_BADSYM, F_ANON, F_LIBCMAIN } },
};

/* Written round-robin, so equal keys are never adjacent. */
static const struct {
	uint32_t pid, tid;
	const char *comm;
	uint64_t cgroup;
	uint32_t stack, count;
} samples[] = {
	{ 100, 100, "app", 5, S_WRITE, 3 },
	{ 100, 101, "app", 5, S_WRITE, 2 },	/* another thread: another sample */
	{ 100, 100, "app", 5, S_WORK, 5 },
	{ 100, 100, "app", 6, S_WORK, 1 },	/* another cgroup */
	{ 100, 100, "app2", 5, S_WORK, 1 },	/* another comm */
	{ 100, 100, "app", 5, S_APPUNNAMED, 1 },
	{ 100, 100, "app", 5, S_UNK1, 2 },
	{ 100, 100, "app", 5, S_UNK2, 1 },
	{ 200, 200, "other", 0, S_KUNNAMED, 1 },	/* no cgroup: no label */
	{ 300, 300, "", 7, S_EMPTY, 1 },		/* no comm: no label */
	{ 400, 401, "we\x1bird\xff", 8, S_ODD, 4 },
};
#define NR_SAMPLES (sizeof(samples) / sizeof(samples[0]))
#define TOTAL 22

static struct report *build(const char *name)
{
	struct rpt_header final = hdr;
	uint32_t fid[NR_FRAMES], sid[NR_STACKS], id, ids[4], j, left[NR_SAMPLES];
	struct report_writer *w;
	struct report *r = NULL;
	char path[PATH_MAX + 64];
	uint64_t t = 0;
	bool more = true;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s.data", dir, name);
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return NULL;
	for (i = 0; i < NR_MODS; i++)
		if (!ASSERT_OK(report_writer__module(w, &mods[i], &id), "module"))
			goto fail;
	for (i = 0; i < NR_FRAMES; i++)
		if (!ASSERT_OK(report_writer__frame(w, &frames[i], &fid[i]), "frame"))
			goto fail;
	for (i = 0; i < NR_STACKS; i++) {
		for (j = 0; j < stacks[i].nr; j++)
			ids[j] = fid[stacks[i].ids[j]];
		if (!ASSERT_OK(report_writer__stack(w, ids, stacks[i].nr, &sid[i]), "stack"))
			goto fail;
	}
	for (i = 0; i < NR_SAMPLES; i++)
		left[i] = samples[i].count;
	while (more) {
		more = false;
		for (i = 0; i < NR_SAMPLES; i++) {
			struct rpt_sample s = {
				.time = t += 1000000, .pid = samples[i].pid, .tid = samples[i].tid,
				.comm = samples[i].comm, .cgroup = samples[i].cgroup,
				.stack = sid[samples[i].stack],
			};

			if (!left[i])
				continue;
			left[i]--;
			more = true;
			if (!ASSERT_OK(report_writer__sample(w, &s), "sample"))
				goto fail;
		}
	}
	final.end_wall_ns = hdr.start_wall_ns + 10000000000ULL;
	final.lost_samples = 3;
	final.lost_events = 2;
	if (!ASSERT_OK(report_writer__close(w, &final), "close"))
		return NULL;
	r = report__open(path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	unlink(path);
	return r;
fail:
	report_writer__abort(w);
	unlink(path);
	return NULL;
}

/* Gunzip and decode @path; NULL (a failure reported) if it is not a pprof profile. */
static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf at the end of @buf; what does not fit is cut (and fails the comparison). */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* "FILE BUILDID START LIMIT OFFSET [FN]" */
static void render_mapping(char *buf, size_t len, const pb_profile *p, size_t i)
{
	const Perftools__Profiles__Mapping *m = p->mapping[i];

	snprintf(buf, len, "%" PRIu64 ": %s %s 0x%" PRIx64 "/0x%" PRIx64 "/0x%" PRIx64 "%s%s%s", m->id,
		 str(p, m->filename), str(p, m->build_id), m->memory_start, m->memory_limit,
		 m->file_offset, m->has_functions ? " FN" : "", m->has_filenames ? " FILES" : "",
		 m->has_line_numbers ? " LINES" : "");
}

/* "ID: ADDR M=MAPPING F=FUNCTION-ID:LINE..." */
static void render_location(char *buf, size_t len, const pb_profile *p, size_t i)
{
	const Perftools__Profiles__Location *l = p->location[i];
	size_t j;

	snprintf(buf, len, "%" PRIu64 ": 0x%" PRIx64 " M=%" PRIu64, l->id, l->address, l->mapping_id);
	for (j = 0; j < l->n_line; j++)
		append(buf, len, " F=%" PRIu64 ":%" PRId64, l->line[j]->function_id, l->line[j]->line);
	if (l->is_folded)
		append(buf, len, " folded");
}

/* "ID: NAME | SYSTEM-NAME | FILE" */
static void render_function(char *buf, size_t len, const pb_profile *p, size_t i)
{
	const Perftools__Profiles__Function *f = p->function[i];

	snprintf(buf, len, "%" PRIu64 ": %s | %s | %s start=%" PRId64, f->id, str(p, f->name),
		 str(p, f->system_name), str(p, f->filename), f->start_line);
}

/* "COUNT CPU: LOC-ID... | KEY=VALUE..." */
static void render_sample(char *buf, size_t len, const pb_profile *p, size_t i)
{
	const Perftools__Profiles__Sample *s = p->sample[i];
	size_t j;

	buf[0] = '\0';
	for (j = 0; j < s->n_value; j++)
		append(buf, len, "%s%" PRId64, j ? " " : "", s->value[j]);
	append(buf, len, ":");
	for (j = 0; j < s->n_location_id; j++)
		append(buf, len, " %" PRIu64, s->location_id[j]);
	append(buf, len, " |");
	for (j = 0; j < s->n_label; j++) {
		const Perftools__Profiles__Label *l = s->label[j];

		if (l->str)
			append(buf, len, " %s=%s", str(p, l->key), str(p, l->str));
		else
			append(buf, len, " %s=%" PRId64 "%s%s", str(p, l->key), l->num,
			       l->num_unit ? " " : "", l->num_unit ? str(p, l->num_unit) : "");
	}
}

typedef void (*render_fn)(char *buf, size_t len, const pb_profile *p, size_t i);

/* Compare @n rendered entries with @want, each line reported on its own. */
static void check_table(const char *what, const pb_profile *p, size_t n, render_fn fn,
			const char *const *want, size_t nr_want)
{
	char buf[1024], label[64];
	size_t i;

	ASSERT_EQ(n, nr_want, what);
	for (i = 0; i < n && i < nr_want; i++) {
		fn(buf, sizeof(buf), p, i);
		snprintf(label, sizeof(label), "%s %zu", what, i + 1);
		ASSERT_STREQ(buf, want[i], label);
	}
}

/* Ids must be 1..n in order, or pprof readers that index by id break. */
static void check_ids(const pb_profile *p)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		ASSERT_EQ(p->mapping[i]->id, (uint64_t)i + 1, "mapping id");
	for (i = 0; i < p->n_location; i++)
		ASSERT_EQ(p->location[i]->id, (uint64_t)i + 1, "location id");
	for (i = 0; i < p->n_function; i++)
		ASSERT_EQ(p->function[i]->id, (uint64_t)i + 1, "function id");
}

static bool valid_utf8_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		if (*p >= 0x80) {
			/* The fixture's only non-ASCII survivor is U+00E9 (c3 a9). */
			if (p[0] != 0xc3 || p[1] != 0xa9)
				return false;
			p++;
		}
	}
	return true;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Entries of the scratch directory whose name starts with @prefix. */
static int count_files(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static void test_profile(void)
{
	static const char *const want_maps[] = {
		"1: [kernel.kallsyms]  0xffffffff81001000/0xffffffff81234568/0x0 FN",
		"2: /lib/x86_64-linux-gnu/libc.so.6  0x7f0000028000/0x7f0000030001/0x28000 FN",
		/* Callers are one byte off; the leaf at 0x555555555210 gives the bias. */
		"3: /usr/bin/app deadbeef 0x555555555100/0x555555555abd/0x1100 FN",
		"4: /tmp/??" "?[2J\xc3\xa9t?  0x600000000100/0x600000000101/0x100 FN",
		"5: [anon]  0x7f1000000040/0x7f1000000041/0x0 FN",
	};
	static const char *const want_locs[] = {
		"1: 0xffffffff81234567 M=1 F=1:0",	/* do_syscall_64 */
		"2: 0x7f0000028000 M=2 F=2:0",		/* write */
		"3: 0x555555555200 M=3 F=3:0",		/* work (caller) */
		"4: 0x555555555100 M=3 F=4:0",		/* main */
		"5: 0x555555555210 M=3 F=3:0",		/* work (leaf): same function */
		"6: 0x555555555abc M=3 F=5:0",		/* [app+0x1abc] */
		"7: 0xdead M=0 F=6:0",			/* [unknown] */
		"8: 0xbeef M=0 F=6:0",			/* [unknown], another address */
		"9: 0xffffffff81001000 M=1 F=7:0",
		"10: 0x0 M=0 F=6:0",			/* the empty stack */
		"11: 0x600000000100 M=4 F=8:0",
		"12: 0x7f1000000040 M=5 F=9:0",
		"13: 0x7f0000030000 M=2 F=10:0",	/* libc's main */
	};
	static const char *const want_funcs[] = {
		"1: do_syscall_64 | do_syscall_64 | [kernel.kallsyms] start=0",
		"2: write | write | /lib/x86_64-linux-gnu/libc.so.6 start=0",
		"3: work | work | /usr/bin/app start=0",
		"4: main | main | /usr/bin/app start=0",
		"5: [app+0x1abc] | [app+0x1abc] | /usr/bin/app start=0",
		"6: [unknown] | [unknown] |  start=0",
		"7: [kernel.kallsyms+0xffffffff81001000] | [kernel.kallsyms+0xffffffff81001000] | [kernel.kallsyms] start=0",
		"8: bad???name???x | bad???name???x | /tmp/??" "?[2J\xc3\xa9t? start=0",
		"9: [anon+0x7f1000000040] | [anon+0x7f1000000040] | [anon] start=0",
		"10: main | main | /lib/x86_64-linux-gnu/libc.so.6 start=0",
	};
	static const char *const want_samples[] = {
		"3 30000000: 1 2 3 4 | pid=100 tid=100 comm=app cgroup=5",
		"2 20000000: 1 2 3 4 | pid=100 tid=101 comm=app cgroup=5",
		"5 50000000: 5 4 | pid=100 tid=100 comm=app cgroup=5",
		"1 10000000: 5 4 | pid=100 tid=100 comm=app cgroup=6",
		"1 10000000: 5 4 | pid=100 tid=100 comm=app2 cgroup=5",
		"1 10000000: 6 4 | pid=100 tid=100 comm=app cgroup=5",
		"2 20000000: 7 4 | pid=100 tid=100 comm=app cgroup=5",
		"1 10000000: 8 4 | pid=100 tid=100 comm=app cgroup=5",
		"1 10000000: 9 | pid=200 tid=200 comm=other",
		"1 10000000: 10 | pid=300 tid=300 cgroup=7",
		"4 40000000: 11 12 13 | pid=400 tid=401 comm=we?ird? cgroup=8",
	};
	struct report *r = build("profile");
	char out[PATH_MAX + 64];
	pb_profile *p;
	int64_t total = 0;
	size_t i;

	if (!r)
		return;
	path_of(out, sizeof(out), "profile.pb.gz");
	if (!ASSERT_OK(report_pprof__write(out, r, NULL), "write"))
		goto out;
	p = decode(out);
	if (!p)
		goto out;
	ASSERT_TRUE(p->n_string_table > 0 && !strcmp(p->string_table[0], ""), "string 0 is empty");
	for (i = 0; i < p->n_string_table; i++)
		if (!ASSERT_TRUE(valid_utf8_text(p->string_table[i]), p->string_table[i]))
			break;
	if (ASSERT_EQ(p->n_sample_type, (size_t)2, "sample types")) {
		ASSERT_STREQ(str(p, p->sample_type[0]->type), "samples", "type 0");
		ASSERT_STREQ(str(p, p->sample_type[0]->unit), "count", "unit 0");
		ASSERT_STREQ(str(p, p->sample_type[1]->type), "cpu", "type 1");
		ASSERT_STREQ(str(p, p->sample_type[1]->unit), "nanoseconds", "unit 1");
	}
	if (ASSERT_OK_PTR(p->period_type, "period type")) {
		ASSERT_STREQ(str(p, p->period_type->type), "cpu", "period type");
		ASSERT_STREQ(str(p, p->period_type->unit), "nanoseconds", "period unit");
	}
	ASSERT_EQ(p->period, (int64_t)10000000, "period: 1e9 / freq");
	ASSERT_EQ(p->time_nanos, (int64_t)hdr.start_wall_ns, "time_nanos");
	ASSERT_EQ(p->duration_nanos, (int64_t)10000000000LL, "duration_nanos");
	ASSERT_STREQ(str(p, p->default_sample_type), "cpu", "default sample type");
	if (ASSERT_EQ(p->n_comment, (size_t)3, "comments")) {
		ASSERT_STREQ(str(p, p->comment[0]), "bpfsym recording: host testhost, kernel 6.18.0-test, "
			     "boot id 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "comment 0");
		ASSERT_STREQ(str(p, p->comment[1]), "event: cpu-clock at 100 Hz on 4 CPUs, target: all",
			     "comment 1");
		ASSERT_STREQ(str(p, p->comment[2]), "lost: 3 samples (ring buffer full), 2 mapping/process events",
			     "comment 2");
	}
	ASSERT_EQ(p->drop_frames, (int64_t)0, "drop_frames");
	ASSERT_EQ(p->keep_frames, (int64_t)0, "keep_frames");
	check_ids(p);
	check_table("mapping", p, p->n_mapping, render_mapping, want_maps,
		    sizeof(want_maps) / sizeof(want_maps[0]));
	check_table("location", p, p->n_location, render_location, want_locs,
		    sizeof(want_locs) / sizeof(want_locs[0]));
	check_table("function", p, p->n_function, render_function, want_funcs,
		    sizeof(want_funcs) / sizeof(want_funcs[0]));
	check_table("sample", p, p->n_sample, render_sample, want_samples,
		    sizeof(want_samples) / sizeof(want_samples[0]));
	for (i = 0; i < p->n_sample; i++)
		total += p->sample[i]->value[0];
	ASSERT_EQ(total, (int64_t)TOTAL, "every sample counted once");
	perftools__profiles__profile__free_unpacked(p, NULL);
	ASSERT_EQ(count_files("profile.pb.gz."), 0, "no temporary file left");
out:
	unlink(out);
	report__free(r);
}

static void test_filters(void)
{
	static const uint32_t pids[] = { 300, 200 };
	static const char *const comms[] = { "app2", "other" };
	struct view_opts by_pid = { .pids = pids, .nr_pids = 2 };
	struct view_opts by_comm = { .comms = comms, .nr_comms = 2 };
	struct report *r = build("filters");
	char out[PATH_MAX + 64];
	pb_profile *p;

	if (!r)
		return;
	path_of(out, sizeof(out), "filters.pb.gz");
	if (ASSERT_OK(report_pprof__write(out, r, &by_pid), "write --pid") && (p = decode(out))) {
		static const char *const want[] = {
			"1 10000000: 1 | pid=200 tid=200 comm=other",
			"1 10000000: 2 | pid=300 tid=300 cgroup=7",
		};

		check_table("sample", p, p->n_sample, render_sample, want, 2);
		/* Only what the kept samples reach. */
		ASSERT_EQ(p->n_mapping, (size_t)1, "mappings: the kernel's");
		ASSERT_EQ(p->n_location, (size_t)2, "locations");
		ASSERT_EQ(p->n_function, (size_t)2, "functions");
		if (ASSERT_EQ(p->n_comment, (size_t)4, "comments"))
			ASSERT_STREQ(str(p, p->comment[3]), "filters: 2 of 22 samples kept", "filter comment");
		check_ids(p);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	if (ASSERT_OK(report_pprof__write(out, r, &by_comm), "write --comm") && (p = decode(out))) {
		static const char *const want[] = {
			"1 10000000: 1 2 | pid=100 tid=100 comm=app2 cgroup=5",
			"1 10000000: 3 | pid=200 tid=200 comm=other",
		};

		check_table("sample", p, p->n_sample, render_sample, want, 2);
		check_ids(p);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	unlink(out);
	report__free(r);
}

/* Kernel names from another boot's kallsyms, _text 0x200000 higher: --kallsyms applies. */
static void test_namer(void)
{
	static const char text[] =
		"ffffffff81200000 T _text\n"
		"ffffffff81201000 T relocated_entry\n"
		"ffffffff81434000 T relocated_syscall\n"
		"ffffffff81500000 T _etext\n";
	struct ksyms *ks = ksyms__parse(text, strlen(text));
	struct report *r = build("namer");
	struct frame_namer *n = NULL;
	struct view_opts o = {};
	char out[PATH_MAX + 64];
	pb_profile *p;
	size_t i;
	bool saw_syscall = false, saw_entry = false;

	if (!ASSERT_OK_PTR(ks, "ksyms__parse") || !r)
		goto out;
	n = frame_namer__new(r, ks, "kallsyms.other", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	o.namer = n;
	path_of(out, sizeof(out), "namer.pb.gz");
	if (!ASSERT_OK(report_pprof__write(out, r, &o), "write") || !(p = decode(out)))
		goto out;
	for (i = 0; i < p->n_function; i++) {
		const char *name = str(p, p->function[i]->name);

		saw_syscall |= !strcmp(name, "relocated_syscall");
		saw_entry |= !strcmp(name, "relocated_entry");
		ASSERT_TRUE(strcmp(name, "do_syscall_64"), "no recorded kernel name left");
		if (!strncmp(name, "relocated_", 10))
			ASSERT_STREQ(str(p, p->function[i]->filename), "[kernel.kallsyms]", "kernel file");
	}
	ASSERT_TRUE(saw_syscall, "do_syscall_64 renamed from the other kallsyms");
	ASSERT_TRUE(saw_entry, "the recorded-unnamed kernel frame named");
	/* Locations keep the recorded runtime addresses. */
	ASSERT_EQ(p->location[0]->address, (uint64_t)0xffffffff81234567ULL, "address as recorded");
	if (ASSERT_EQ(p->n_comment, (size_t)4, "comments"))
		ASSERT_STREQ(str(p, p->comment[3]), "kernel symbols: from kallsyms.other, relocated by +0x200000",
			     "namer comment");
	perftools__profiles__profile__free_unpacked(p, NULL);
	unlink(out);
out:
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

/* No samples at all: still a profile pprof can open, with nothing in it. */
static void test_empty(void)
{
	static const uint32_t nobody[] = { 999 };
	struct view_opts o = { .pids = nobody, .nr_pids = 1 };
	struct report *r = build("empty");
	char out[PATH_MAX + 64];
	pb_profile *p;

	if (!r)
		return;
	path_of(out, sizeof(out), "empty.pb.gz");
	if (ASSERT_OK(report_pprof__write(out, r, &o), "write") && (p = decode(out))) {
		ASSERT_EQ(p->n_sample, (size_t)0, "samples");
		ASSERT_EQ(p->n_mapping + p->n_location + p->n_function, (size_t)0, "tables");
		ASSERT_EQ(p->n_sample_type, (size_t)2, "sample types still there");
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	unlink(out);
	report__free(r);
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fputs(text, f);
	return !fclose(f);
}

static bool file_is(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return !strcmp(buf, text);
}

/* A failure leaves OUT as it was and no temporary file behind. */
static void test_failures(void)
{
	struct report *r = build("failures");
	char out[PATH_MAX + 64], sub[PATH_MAX + 64];
	struct rlimit old, tiny = { 200, 200 };
	void (*old_sig)(int);
	int err;

	if (!r)
		return;
	ASSERT_EQ(report_pprof__write(NULL, r, NULL), -EINVAL, "no path");
	ASSERT_EQ(report_pprof__write("x.pb.gz", NULL, NULL), -EINVAL, "no report");
	ASSERT_EQ(report_pprof__write("", r, NULL), -EINVAL, "empty path");

	path_of(out, sizeof(out), "missing/dir/out.pb.gz");
	ASSERT_EQ(report_pprof__write(out, r, NULL), -ENOENT, "directory missing");

	/* OUT is a directory: the rename fails, the directory stays. */
	path_of(sub, sizeof(sub), "adir");
	if (ASSERT_OK(mkdir(sub, 0755), "mkdir")) {
		err = report_pprof__write(sub, r, NULL);
		ASSERT_TRUE(err == -EISDIR || err == -ENOTEMPTY || err == -EEXIST, "OUT is a directory");
		ASSERT_EQ(count_files("adir."), 0, "no temporary file left (rename)");
		rmdir(sub);
	}

	/* A write fails halfway (file size limit): the old OUT stays whole. */
	path_of(out, sizeof(out), "old.pb.gz");
	if (ASSERT_TRUE(write_text(out, "old contents"), "write the old OUT") &&
	    ASSERT_OK(getrlimit(RLIMIT_FSIZE, &old), "getrlimit")) {
		tiny.rlim_max = old.rlim_max;
		old_sig = signal(SIGXFSZ, SIG_IGN);
		if (ASSERT_OK(setrlimit(RLIMIT_FSIZE, &tiny), "setrlimit")) {
			err = report_pprof__write(out, r, NULL);
			setrlimit(RLIMIT_FSIZE, &old);
			ASSERT_EQ(err, -EFBIG, "write error reported");
		}
		signal(SIGXFSZ, old_sig);
		ASSERT_TRUE(file_is(out, "old contents"), "OUT unchanged after a failed write");
		ASSERT_EQ(count_files("old.pb.gz."), 0, "no temporary file left (write)");
		/* And a success replaces it. */
		ASSERT_OK(report_pprof__write(out, r, NULL), "write over the old OUT");
		ASSERT_TRUE(!file_is(out, "old contents"), "OUT replaced");
		unlink(out);
	}
	report__free(r);
}

/*
 * A whole-system-like recording: 200k samples over 1000 stacks, 50
 * processes of 4 threads.  Every sample lands in exactly one pprof sample,
 * one per distinct key, and the file stays small.
 */
static void test_scale(void)
{
	enum { NR_STK = 1000, NR_PROC = 50, NR = 200000, DEPTH = 12 };
	struct rpt_module m = { .kind = RPT_MOD_FILE, .path = "/usr/bin/big", .dev = 1, .ino = 9 };
	char data[PATH_MAX + 64], out[PATH_MAX + 64], name[32];
	static uint32_t sid[NR_STK], fid[NR_STK + DEPTH];
	static uint8_t seen[NR_STK][NR_PROC][4];
	struct report_writer *w;
	struct report *r = NULL;
	uint32_t mid, ids[DEPTH], distinct = 0;
	uint64_t x = 12345;
	pb_profile *p = NULL;
	struct stat st, dst;
	int64_t total = 0;
	size_t i, j;

	path_of(data, sizeof(data), "scale.data");
	path_of(out, sizeof(out), "scale.pb.gz");
	w = report_writer__open(data, &hdr);
	if (!ASSERT_OK_PTR(w, "open") || !ASSERT_OK(report_writer__module(w, &m, &mid), "module"))
		goto out;
	for (i = 0; i < NR_STK + DEPTH; i++) {
		struct rpt_frame f = { RPT_FRAME_USER, mid, 0x1000 + i * 16, 0x400000 + 0x1000 + i * 16,
				       name, 0, RPT_OK };

		snprintf(name, sizeof(name), "fn%zu", i);
		if (!ASSERT_OK(report_writer__frame(w, &f, &fid[i]), "frame"))
			goto out;
	}
	for (i = 0; i < NR_STK; i++) {
		for (j = 0; j < DEPTH; j++)
			ids[j] = fid[i + j];
		if (!ASSERT_OK(report_writer__stack(w, ids, DEPTH, &sid[i]), "stack"))
			goto out;
	}
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < NR; i++) {
		uint32_t s, proc, thr;
		char comm[16];
		struct rpt_sample smp;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		s = (uint32_t)((x >> 33) % NR_STK);
		proc = (uint32_t)((x >> 20) % NR_PROC);
		thr = (uint32_t)((x >> 10) % 4);
		snprintf(comm, sizeof(comm), "proc%u", proc);
		smp = (struct rpt_sample){ .time = i * 1000, .pid = 1000 + proc, .tid = 1000 + proc + thr,
					   .cgroup = 1 + proc % 3, .comm = comm, .stack = sid[s] };
		distinct += !seen[s][proc][thr];
		seen[s][proc][thr] = 1;
		if (!ASSERT_OK(report_writer__sample(w, &smp), "sample"))
			goto out;
	}
	if (!ASSERT_OK(report_writer__close(w, &hdr), "close"))
		goto out2;
	w = NULL;
	r = report__open(data, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf) || !ASSERT_OK(report_pprof__write(out, r, NULL), "write"))
		goto out2;
	p = decode(out);
	if (!p)
		goto out2;
	ASSERT_EQ(p->n_sample, (size_t)distinct, "one pprof sample per distinct key");
	ASSERT_EQ(p->n_location, (size_t)(NR_STK + DEPTH - 1), "one location per frame used");
	ASSERT_EQ(p->n_function, (size_t)(NR_STK + DEPTH - 1), "one function per name");
	ASSERT_EQ(p->n_mapping, (size_t)1, "one mapping");
	for (i = 0; i < p->n_sample; i++) {
		total += p->sample[i]->value[0];
		ASSERT_EQ(p->sample[i]->value[1], p->sample[i]->value[0] * 10000000, "cpu = count x period");
		if (!ASSERT_EQ(p->sample[i]->n_location_id, (size_t)DEPTH, "depth"))
			break;
	}
	ASSERT_EQ(total, (int64_t)NR, "every sample counted once");
	if (ASSERT_OK(stat(out, &st), "stat") && ASSERT_OK(stat(data, &dst), "stat data"))
		printf("# scale: %d samples, %u distinct keys: pprof %lld bytes (%.2f B/sample), "
		       "bpfsym.data %lld bytes (%.2f B/sample)\n", NR, distinct, (long long)st.st_size,
		       (double)st.st_size / NR, (long long)dst.st_size, (double)dst.st_size / NR);
	goto out2;
out:
	report_writer__abort(w);
out2:
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	report__free(r);
	unlink(data);
	unlink(out);
}

int main(void)
{
	const char *tmp = getenv("BPFSYM_TEST_TMP");

	snprintf(dir, sizeof(dir), "%s/test_report_pprof.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	if (mkdir(dir, 0755)) {
		printf("FAIL report_pprof/setup: mkdir '%s': %s\n", dir, strerror(errno));
		return 1;
	}
	RUN_TEST(test_profile);
	RUN_TEST(test_filters);
	RUN_TEST(test_namer);
	RUN_TEST(test_empty);
	RUN_TEST(test_failures);
	RUN_TEST(test_scale);
	rmdir(dir);
	return TEST_EXIT();
}
