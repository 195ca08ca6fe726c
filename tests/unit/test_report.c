// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report file, written and read back: every field of a round trip,
 * the size of a sample, deduplication, write errors (a full disk) and
 * aborted recordings.  Damaged input is test_report_corrupt's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "report/report.h"
#include "base/util.h"

TEST_SUITE("report");

#include "report_fixture.h"

static void test_round_trip(void)
{
	char path[PATH_MAX];
	struct report *r;

	tmp_path(path, sizeof(path), "rt");
	if (!fx_write(path, 1000, 97))
		return;
	ASSERT_EQ(fx.nr_bounds, (size_t)(1 + 1000 / 97), "blocks flushed");
	r = report__open(path, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf))
		fx_check(r, 1000, true);
	report__free(r);
	report__free(NULL);
	unlink(path);
}

/* Bytes per sample for a whole-system-like workload: the target is 1/5 of perf -g's ~105. */
static void test_size(void)
{
	struct rpt_sample s = { .comm = "x" };
	uint32_t frames[64], fids[500], sids[200];
	struct report_writer *w;
	char path[PATH_MAX];
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .sym = "f" };
	struct rpt_module m = { .kind = RPT_MOD_FILE, .path = "/usr/lib/libfoo.so" };
	const uint64_t nr = 100000;
	static const char *const comms[] = { "postgres", "nginx", "java", "python3", "kworker/0:1" };
	char name[32];
	uint64_t i, t = 0;
	double per;
	struct report *r;

	tmp_path(path, sizeof(path), "size");
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	ASSERT_OK(report_writer__module(w, &m, &f.module), "module");
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "func_%u", (unsigned int)i);
		f.sym = name;
		f.offset = 0x1000 + i * 0x40;
		f.addr = 0x7f0000000000ULL + f.offset;
		ASSERT_OK(report_writer__frame(w, &f, &fids[i]), "frame");
	}
	for (i = 0; i < 200; i++) {
		uint32_t j, depth = 8 + (uint32_t)(rng() % 24);

		for (j = 0; j < depth; j++)
			frames[j] = fids[rng() % 500];
		ASSERT_OK(report_writer__stack(w, frames, depth, &sids[i]), "stack");
	}
	for (i = 0; i < nr; i++) {
		/* 8 CPUs at 99 Hz: a sample every ~1.26 ms, a few us of jitter. */
		t += 1262626 + rng() % 4000;
		s.time = t;
		s.cpu = (uint32_t)(i % 8);
		s.pid = 1000 + (uint32_t)(rng() % 5) * 37;
		s.tid = s.pid + (uint32_t)(rng() % 3);
		s.cgroup = 4000 + s.pid % 3;
		s.comm = comms[(s.pid - 1000) / 37];
		/* Skewed: a few stacks are hot, as in real profiles. */
		s.stack = sids[(rng() % 200) * (rng() % 200) / 200];
		if (!ASSERT_OK(report_writer__sample(w, &s), "sample"))
			break;
		if (i % 792 == 791)
			ASSERT_OK(report_writer__flush(w), "flush");
	}
	ASSERT_OK(report_writer__close(w, &fx_hdr), "close");
	r = report__open(path, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		struct stat st;

		ASSERT_EQ(report__nr_samples(r), (size_t)nr, "samples");
		stat(path, &st);
		per = (double)st.st_size / (double)nr;
		printf("     %s/%s: %lld bytes, %.2f bytes/sample\n", test__suite, test__name,
		       (long long)st.st_size, per);
		ASSERT_TRUE(per < 21.0, "under 1/5 of perf -g's 105 bytes/sample");
	}
	report__free(r);
	unlink(path);
}

static void test_dedup(void)
{
	struct rpt_module m = { .kind = RPT_MOD_FILE, .path = "/lib/a.so", .dev = 1, .ino = 2 };
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .offset = 0x100, .addr = 0x7f100, .sym = "one" };
	struct rpt_sample s = { .comm = "app" };
	uint32_t ma, mb, mc, md, fa, fb, fc, fd, fe, ff, sa, sb, sc, se, sf, x;
	struct report_writer *w;
	const struct rpt_sample *s0, *s1;
	char path[PATH_MAX];
	struct report *r;

	tmp_path(path, sizeof(path), "dedup");
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	ASSERT_OK(report_writer__module(w, &m, &ma), "module");
	ASSERT_OK(report_writer__module(w, &m, &mb), "module again");
	ASSERT_EQ(mb, ma, "same module, same id");
	m.dev = 3;
	ASSERT_OK(report_writer__module(w, &m, &mc), "module, other dev");
	ASSERT_NEQ(mc, ma, "other dev, other id");
	m.build_id_len = 20;
	ASSERT_OK(report_writer__module(w, &m, &md), "module with build-id");
	ASSERT_NEQ(md, mc, "build-id is part of the identity");

	f.module = ma;
	ASSERT_OK(report_writer__frame(w, &f, &fa), "frame");
	f.sym = "two";
	f.addr = 0x8f100;
	ASSERT_OK(report_writer__frame(w, &f, &fb), "frame again, other name and addr");
	ASSERT_EQ(fb, fa, "same (kind, module, offset), same id");
	f.kind = RPT_FRAME_KERNEL;
	ASSERT_OK(report_writer__frame(w, &f, &fc), "kernel frame");
	ASSERT_NEQ(fc, fa, "kind is part of the identity");
	f.kind = RPT_FRAME_USER;
	f.module = RPT_NONE;
	f.sym = NULL;
	f.addr = 0x1000;
	ASSERT_OK(report_writer__frame(w, &f, &fd), "unmapped frame");
	f.offset = 0x999;
	ASSERT_OK(report_writer__frame(w, &f, &fe), "unmapped frame, other offset");
	ASSERT_EQ(fe, fd, "no module: keyed on addr");
	f.addr = 0x2000;
	ASSERT_OK(report_writer__frame(w, &f, &ff), "unmapped frame, other addr");
	ASSERT_NEQ(ff, fd, "other addr, other id");

	ASSERT_OK(report_writer__stack(w, (uint32_t[]){ fa, fd }, 2, &sa), "stack");
	ASSERT_OK(report_writer__stack(w, (uint32_t[]){ fa, fd }, 2, &sb), "stack again");
	ASSERT_EQ(sb, sa, "same stack, same id");
	ASSERT_OK(report_writer__stack(w, (uint32_t[]){ fd, fa }, 2, &sc), "reversed stack");
	ASSERT_NEQ(sc, sa, "order matters");
	ASSERT_OK(report_writer__stack(w, NULL, 0, &se), "empty stack");
	ASSERT_OK(report_writer__stack(w, NULL, 0, &sf), "empty stack again");
	ASSERT_EQ(sf, se, "one empty stack");

	/* Refused calls leave the file and the ids consistent. */
	f.module = 99;
	ASSERT_EQ(report_writer__frame(w, &f, &x), -EINVAL, "unknown module");
	f.module = ma;
	f.kind = RPT_FRAME_INTERP + 1;
	ASSERT_EQ(report_writer__frame(w, &f, &x), -EINVAL, "unknown frame kind");
	m.build_id_len = RPT_BUILD_ID_MAX + 1;
	ASSERT_EQ(report_writer__module(w, &m, &x), -EINVAL, "build-id too long");
	ASSERT_EQ(report_writer__stack(w, (uint32_t[]){ fa, 99 }, 2, &x), -EINVAL, "unknown frame");
	s.stack = 99;
	ASSERT_EQ(report_writer__sample(w, &s), -EINVAL, "unknown stack");
	ASSERT_EQ(report_writer__sample(NULL, &s), -EINVAL, "NULL writer");
	s.stack = sa;
	ASSERT_OK(report_writer__sample(w, &s), "sample");
	s.stack = se;
	ASSERT_OK(report_writer__sample(w, &s), "sample, empty stack");
	ASSERT_OK(report_writer__close(w, NULL), "close");

	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		goto out;
	ASSERT_EQ(report__nr_modules(r), (size_t)3, "modules");
	ASSERT_EQ(report__nr_frames(r), (size_t)4, "frames");
	ASSERT_STREQ(report__frame(r, fa)->sym, "one", "the first name wins");
	ASSERT_EQ(report__frame(r, fa)->addr, (uint64_t)0x7f100, "the first addr wins");
	/* One STRING record per text: the reader hands out the same pointer. */
	ASSERT_TRUE(report__module(r, ma)->path == report__module(r, mc)->path, "path interned once");
	s0 = report__sample(r, 0);
	s1 = report__sample(r, 1);
	if (ASSERT_OK_PTR(s1, "two samples")) {
		ASSERT_TRUE(s0->comm == s1->comm, "comm interned once");
		ASSERT_EQ(s1->stack, se, "empty stack sample");
	}
out:
	report__free(r);
	unlink(path);
}

/*
 * A frame whose file had not answered yet (reason 8) is written again once
 * it comes with its name, under a new id, which later lookups get; the
 * first id keeps its record.  Merging files, the named frame wins over the
 * unnamed one wherever it comes from; otherwise the first file's names do.
 */
static void test_waiting_frame(void)
{
	struct rpt_module m = { .kind = RPT_MOD_FILE, .path = "/lib/a.so", .dev = 1, .ino = 2 };
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .offset = 0x100, .addr = 0x7f100,
			       .reason = RPT_FILE_NO_ANSWER };
	struct rpt_sample smp = { .comm = "app" };
	uint32_t mod, fa, fb, fc, fd, st;
	struct report *r[2] = {}, *mg = NULL;
	struct report_writer *w;
	char path[2][PATH_MAX];
	const struct rpt_frame *rf;
	int i;

	for (i = 0; i < 2; i++) {
		tmp_path(path[i], sizeof(path[i]), i ? "waiting1" : "waiting0");
		w = report_writer__open(path[i], &fx_hdr);
		if (!ASSERT_OK_PTR(w, "open"))
			goto out;
		ASSERT_OK(report_writer__module(w, &m, &mod), "module");
		f.module = mod;
		f.sym = NULL;
		f.reason = RPT_FILE_NO_ANSWER;
		ASSERT_OK(report_writer__frame(w, &f, &fa), "unnamed: did not answer");
		ASSERT_OK(report_writer__frame(w, &f, &fb), "again, still waiting");
		ASSERT_EQ(fb, fa, "still waiting: the same id");
		if (i == 0) {
			f.sym = "named";
			f.reason = RPT_OK;
			ASSERT_OK(report_writer__frame(w, &f, &fc), "now named");
			ASSERT_NEQ(fc, fa, "named: a new id");
			ASSERT_OK(report_writer__frame(w, &f, &fd), "named again");
			ASSERT_EQ(fd, fc, "then that id");
			f.sym = NULL;
			f.reason = RPT_FILE_NO_ANSWER;
			ASSERT_OK(report_writer__frame(w, &f, &fd), "a late unnamed lookup");
			ASSERT_EQ(fd, fc, "the named frame stays");
		}
		ASSERT_OK(report_writer__stack(w, &fa, 1, &st), "stack");
		smp.stack = st;
		ASSERT_OK(report_writer__sample(w, &smp), "sample");
		ASSERT_OK(report_writer__close(w, NULL), "close");
		r[i] = report__open(path[i], errbuf, sizeof(errbuf));
		if (!ASSERT_OK_PTR(r[i], errbuf))
			goto out;
	}
	/* Read back, the two records of one identity are one frame, named. */
	ASSERT_EQ(report__nr_frames(r[0]), (size_t)1, "file 0: one frame");
	rf = report__frame(r[0], 0);
	ASSERT_STREQ(rf ? rf->sym : NULL, "named", "file 0: named, its first sample's stack too");
	ASSERT_EQ(report__nr_frames(r[1]), (size_t)1, "file 1: only unnamed");
	/* File 1 (unnamed) first: file 0's name still wins. */
	mg = report__merge((struct report *[]){ r[1], r[0] }, 2, errbuf, sizeof(errbuf));
	r[0] = r[1] = NULL;	/* consumed */
	if (!ASSERT_OK_PTR(mg, "merge"))
		goto out;
	ASSERT_EQ(report__nr_frames(mg), (size_t)1, "merged: one frame");
	rf = report__frame(mg, 0);
	ASSERT_STREQ(rf ? rf->sym : NULL, "named", "merged: the named record wins over reason 8");
out:
	report__free(mg);
	for (i = 0; i < 2; i++) {
		report__free(r[i]);
		unlink(path[i]);
	}
}

/*
 * Ids at scale: every table grows many times while earlier keys come back.
 * A new key gets the next id, a known one its first id, and the file
 * holds one record per id, in id order.
 */
static void test_dedup_scale(void)
{
	enum { MODS = 300, FRAMES = 20000, ROUNDS = 3 };
	static uint32_t mids[MODS], fids[FRAMES], sids[FRAMES];
	struct rpt_frame f = { .kind = RPT_FRAME_USER };
	struct rpt_module m = { .kind = RPT_MOD_FILE };
	struct report_writer *w;
	char path[PATH_MAX], name[32], sym[32];
	struct report *r = NULL;
	uint32_t id, k, st[2];
	int round, bad = 0;

	tmp_path(path, sizeof(path), "dedup_scale");
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	for (round = 0; round < ROUNDS && !bad; round++) {
		for (k = 0; k < MODS && !bad; k++) {
			snprintf(name, sizeof(name), "/lib/m%u.so", k);
			m.path = name;
			m.ino = k;
			bad |= report_writer__module(w, &m, &id) || id != (round ? mids[k] : k);
			mids[k] = id;
		}
		for (k = 0; k < FRAMES && !bad; k++) {
			snprintf(sym, sizeof(sym), "fn_%u", k % 5000);
			f.module = mids[k % MODS];
			f.offset = k;
			f.addr = 0x1000 + k;
			f.sym = sym;
			bad |= report_writer__frame(w, &f, &id) || id != (round ? fids[k] : k);
			fids[k] = id;
			st[0] = fids[k];
			st[1] = fids[k / 2];
			bad |= report_writer__stack(w, st, 2, &id) || id != (round ? sids[k] : k);
			sids[k] = id;
		}
	}
	ASSERT_FALSE(bad, "first ids, dense, the same each round");
	ASSERT_OK(report_writer__close(w, NULL), "close");
	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		goto out;
	ASSERT_EQ(report__nr_modules(r), (size_t)MODS, "one record per module");
	ASSERT_EQ(report__nr_frames(r), (size_t)FRAMES, "one record per frame");
	ASSERT_STREQ(report__frame(r, 12345)->sym, "fn_2345", "frame 12345's name");
	ASSERT_TRUE(report__frame(r, 2345)->sym == report__frame(r, 12345)->sym, "one string per name");
	ASSERT_STREQ(report__module(r, report__frame(r, 12345)->module)->path, "/lib/m45.so",
		     "frame 12345's module");
	ASSERT_OK_PTR(report__stack(r, FRAMES - 1, &k), "one record per stack");
	ASSERT_NULL(report__stack(r, FRAMES, &k), "and no more");
out:
	report__free(r);
	unlink(path);
}

static void test_open_errors(void)
{
	struct report *r;

	errbuf[0] = '\0';
	r = report__open("/nonexistent/bpfsym.data", errbuf, sizeof(errbuf));
	ASSERT_NULL(r, "missing file");
	ASSERT_EQ(errno, ENOENT, "errno");
	ASSERT_TRUE(strstr(errbuf, "'/nonexistent/bpfsym.data'"), errbuf);
	r = report__open("/", errbuf, sizeof(errbuf));
	ASSERT_NULL(r, "directory");
	ASSERT_EQ(errno, EISDIR, "errno");
	/* No room for a message is fine. */
	r = report__open_mem("", 0, NULL, 0);
	ASSERT_NULL(r, "empty, no message buffer");
	ASSERT_EQ(errno, EINVAL, "errno");
}

/* The lowest free descriptor: what the writer's open() will get in this single-threaded test. */
/* The descriptor of ours open on @path (its /proc/self/fd link), or -1. */
static int fd_of(const char *path)
{
	char link[sizeof("/proc/self/fd/") + 256], target[PATH_MAX];
	struct dirent *de;
	int fd = -1;
	ssize_t n;
	DIR *d = opendir("/proc/self/fd");

	while (d && fd < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (int)strtol(de->d_name, NULL, 10) == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = '\0', !strcmp(target, path)))
			fd = (int)strtol(de->d_name, NULL, 10);
	}
	if (d)
		closedir(d);
	return fd;
}

/*
 * Swap the writer's descriptor for /dev/full after @nr good samples and
 * a flush; @flush_first says whether the failing flush comes before close.
 */
static void write_error_case(bool flush_first)
{
	struct rpt_sample s = { .comm = "app" };
	struct report_writer *w;
	char path[PATH_MAX];
	int fd, full, i;
	uint32_t fid, sid;
	struct report *r;
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .module = RPT_NONE, .addr = 0x1000 };

	tmp_path(path, sizeof(path), "enospc");
	full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (full < 0) {
		test__skip("/dev/full: %s", strerror(errno));
		return;
	}
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		goto out;
	fd = fd_of(path);
	if (!ASSERT_TRUE(fd >= 0, "a descriptor open on the file (/proc/self/fd)")) {
		report_writer__abort(w);
		goto out;
	}
	ASSERT_OK(report_writer__frame(w, &f, &fid), "frame");
	ASSERT_OK(report_writer__stack(w, &fid, 1, &sid), "stack");
	s.stack = sid;
	for (i = 0; i < 10; i++)
		ASSERT_OK(report_writer__sample(w, &s), "sample");
	ASSERT_OK(report_writer__flush(w), "flush");
	if (!ASSERT_EQ(dup2(full, fd), fd, "dup2")) {
		report_writer__abort(w);
		goto out;
	}
	if (flush_first) {
		ASSERT_OK(report_writer__sample(w, &s), "sample, still in memory");
		ASSERT_EQ(report_writer__flush(w), -ENOSPC, "flush to a full disk");
		ASSERT_EQ(report_writer__sample(w, &s), -ENOSPC, "sticky");
		ASSERT_EQ(report_writer__flush(w), -ENOSPC, "sticky flush");
	}
	ASSERT_EQ(report_writer__close(w, &fx_hdr), -ENOSPC, "close");
	/* The file on disk holds what got there, and does not claim to be complete. */
	r = report__open(path, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_FALSE(report__header(r)->complete, "no END record");
		ASSERT_EQ(report__nr_samples(r), (size_t)10, "the flushed samples");
	}
	report__free(r);
out:
	close(full);
	unlink(path);
}

static void test_write_errors(void)
{
	struct report_writer *w;

	if (access("/dev/full", W_OK)) {
		test__skip("/dev/full: %s", strerror(errno));
		return;
	}
	/* The header block goes out at open: a full disk is known before recording starts. */
	w = report_writer__open("/dev/full", &fx_hdr);
	ASSERT_NULL(w, "open on a full device");
	ASSERT_EQ(errno, ENOSPC, "errno");
	report_writer__abort(w);
	write_error_case(true);
	if (!test__failed_now && !test__skipped_now)
		write_error_case(false);
	ASSERT_NULL(report_writer__open("/nonexistent/x", &fx_hdr), "bad directory");
	ASSERT_EQ(errno, ENOENT, "errno");
	ASSERT_EQ(report_writer__close(NULL, NULL), -EINVAL, "close NULL");
	report_writer__abort(NULL);
}

/* Abort leaves what was flushed, readable and marked truncated. */
static void test_abort(void)
{
	char path[PATH_MAX];
	struct report_writer *w;
	struct rpt_sample s = { .comm = "app" };
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .module = RPT_NONE, .addr = 0x1000 };
	uint32_t fid;
	struct report *r;

	tmp_path(path, sizeof(path), "abort");
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	ASSERT_OK(report_writer__frame(w, &f, &fid), "frame");
	ASSERT_OK(report_writer__stack(w, &fid, 1, &s.stack), "stack");
	ASSERT_OK(report_writer__sample(w, &s), "sample");
	ASSERT_OK(report_writer__flush(w), "flush");
	ASSERT_OK(report_writer__sample(w, &s), "unflushed sample");
	report_writer__abort(w);
	r = report__open(path, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_FALSE(report__header(r)->complete, "complete");
		ASSERT_EQ(report__nr_samples(r), (size_t)1, "the flushed sample");
		ASSERT_EQ(report__header(r)->samples, (uint64_t)1, "header samples");
	}
	report__free(r);
	unlink(path);
}

int main(void)
{
	fx_init();
	RUN_TEST(test_round_trip);
	RUN_TEST(test_size);
	RUN_TEST(test_dedup);
	RUN_TEST(test_waiting_frame);
	RUN_TEST(test_dedup_scale);
	RUN_TEST(test_open_errors);
	RUN_TEST(test_write_errors);
	RUN_TEST(test_abort);
	return TEST_EXIT();
}
