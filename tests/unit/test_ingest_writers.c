// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest's writers: the recording's file swapped for another (rotation),
 * taps that get the samples of a window (the pull endpoint), and no file
 * at all (a disk that is full).  Each file read back must stand on its
 * own: every module, frame and stack its samples use is in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "ingest_fixture.h"

TEST_SUITE("ingest_writers");

#define PID (FAKE_PID + 20)

/* Open a second file @name beside @r's, with @r's header. */
static struct report_writer *open_beside(const struct rec *r, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.data", dir, name);
	return report_writer__open(path, &r->hdr);
}

/* Read @path back; NULL (a failure already reported) if it does not read. */
static struct report *read_back(const char *path)
{
	char err[256] = "";
	struct report *rpt = report__open(path, err, sizeof(err));

	if (!rpt)
		printf("     report__open(%s): %s\n", path, err);
	return ASSERT_OK_PTR(rpt, "read the file back") ? rpt : NULL;
}

/* Sample @si of @rpt has the three library frames, named as nm names them, in the library. */
static bool sample_named(const struct report *rpt, size_t si)
{
	static const int order[] = { ALPHA, BETA, GAMMA };
	const struct rpt_sample *s = report__sample(rpt, si);
	const struct rpt_frame *f;
	const struct rpt_module *m;
	const uint32_t *ids;
	uint32_t nr = 0, i;

	if (!ASSERT_OK_PTR(s, "sample"))
		return false;
	ids = report__stack(rpt, s->stack, &nr);
	if (!ASSERT_OK_PTR(ids, "stack") || !ASSERT_EQ(nr, 4u, "one kernel and three user frames"))
		return false;
	f = report__frame(rpt, ids[0]);
	if (!ASSERT_OK_PTR(f, "kernel frame") || !ASSERT_STREQ(f->sym, "k_one", "kernel frame"))
		return false;
	for (i = 1; i < nr; i++) {
		f = report__frame(rpt, ids[i]);
		if (!ASSERT_OK_PTR(f, "user frame") || !ASSERT_STREQ(f->sym, func_names[order[i - 1]], "user frame"))
			return false;
		m = report__module(rpt, f->module);
		if (!ASSERT_OK_PTR(m, "its module") || !ASSERT_STREQ(m->path, lib_path, "its module"))
			return false;
	}
	return ASSERT_EQ(s->pid, PID, "pid") && ASSERT_STREQ(s->comm, "ingest-test-comm", "comm");
}

/*
 * 2 samples to the first file; a tap added; 3 more to both; the file
 * swapped; 4 to the tap and the second file; the tap removed; 5 to the
 * second file only.  Counts and names in each file, and the second file
 * complete although its modules were first seen while the first was open.
 */
static void test_swap_and_tap(void)
{
	char p2[PATH_MAX + 32], pt[PATH_MAX + 32];
	struct report_writer *w2 = NULL, *tap = NULL;
	struct report *r2 = NULL, *rt = NULL;
	struct rec r;
	int i;

	if (!rec_open(&r, "swap", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	for (i = 0; i < 2; i++)
		ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "to the first file");
	tap = open_beside(&r, "tap", pt, sizeof(pt));
	if (!ASSERT_OK_PTR(tap, "the tap's writer") || !ASSERT_OK(ingest__add_writer(r.in, tap), "add the tap"))
		goto out;
	for (i = 0; i < 3; i++)
		ASSERT_OK(feed_chain(&r, PID, START_NS + 20), "to the file and the tap");
	/* Rotation: END of the first file, then the second. */
	ingest__fill_header(r.in, &r.hdr);
	ASSERT_EQ(r.hdr.samples, (uint64_t)5, "the first file's samples");
	w2 = open_beside(&r, "swap2", p2, sizeof(p2));
	if (!ASSERT_OK_PTR(w2, "the second file"))
		goto out;
	ASSERT_OK(ingest__set_writer(r.in, w2), "swap");
	if (!rec_finish(&r))
		goto out;
	r.w = w2;	/* rec_close aborts it if the test stops early */
	for (i = 0; i < 4; i++)
		ASSERT_OK(feed_chain(&r, PID, START_NS + 30), "to the second file and the tap");
	ASSERT_OK(ingest__remove_writer(r.in, tap), "remove the tap");
	ASSERT_EQ(ingest__remove_writer(r.in, tap), -ENOENT, "no tap twice");
	ASSERT_OK(report_writer__close(tap, &r.hdr), "close the tap");
	tap = NULL;
	for (i = 0; i < 5; i++)
		ASSERT_OK(feed_chain(&r, PID, START_NS + 40), "to the second file only");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)14, "samples the files took");
	ASSERT_EQ(ingest__stats(r.in)->symbolized, (uint64_t)14, "samples named");
	r.w = NULL;
	ASSERT_OK(report_writer__close(w2, &r.hdr), "close the second file");
	w2 = NULL;
	ASSERT_EQ(report__nr_samples(r.rpt), (size_t)5, "the first file: before the swap");
	r2 = read_back(p2);
	rt = read_back(pt);
	if (!r2 || !rt)
		goto out;
	ASSERT_EQ(report__nr_samples(r2), (size_t)9, "the second file: after the swap");
	ASSERT_EQ(report__nr_samples(rt), (size_t)7, "the tap: while it was added");
	ASSERT_EQ(report__nr_modules(r2), report__nr_modules(r.rpt),
		  "the second file has its own module records: the kernel and the library");
	for (i = 0; i < 9; i++)
		if (!sample_named(r2, (size_t)i))
			goto out;
	for (i = 0; i < 7; i++)
		if (!sample_named(rt, (size_t)i))
			goto out;
	ASSERT_TRUE(sample_named(r.rpt, 0), "the first file's names");
out:
	report__free(r2);
	report__free(rt);
	if (tap)
		report_writer__abort(tap);
	if (w2 && w2 != r.w)
		report_writer__abort(w2);
	unlink(p2);
	unlink(pt);
	rec_close(&r);
}

/* No file (say the disk is full): samples are named for the taps and not counted as written. */
static void test_no_file(void)
{
	char pt[PATH_MAX + 32];
	struct report_writer *tap = NULL;
	struct report *rt = NULL;
	struct rec r;

	if (!rec_open(&r, "nofile", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "to the file");
	ASSERT_OK(ingest__set_writer(r.in, NULL), "no file");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 20), "to nowhere");
	tap = open_beside(&r, "tap2", pt, sizeof(pt));
	if (!ASSERT_OK_PTR(tap, "a tap") || !ASSERT_OK(ingest__add_writer(r.in, tap), "add it"))
		goto out;
	ASSERT_OK(feed_chain(&r, PID, START_NS + 30), "to the tap");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)1, "written to a file");
	ASSERT_EQ(ingest__stats(r.in)->symbolized, (uint64_t)3, "named");
	ASSERT_OK(ingest__set_writer(r.in, r.w), "the file back");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 40), "to the file and the tap");
	ASSERT_OK(ingest__remove_writer(r.in, tap), "remove the tap");
	ASSERT_OK(report_writer__close(tap, &r.hdr), "close the tap");
	tap = NULL;
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(report__nr_samples(r.rpt), (size_t)2, "the file: before and after");
	rt = read_back(pt);
	if (rt)
		ASSERT_EQ(report__nr_samples(rt), (size_t)2, "the tap");
out:
	report__free(rt);
	if (tap)
		report_writer__abort(tap);
	unlink(pt);
	rec_close(&r);
}

/* A tap that cannot write stops alone; the file goes on; the error comes back at removal. */
static void test_tap_error(void)
{
	struct report_writer *taps[INGEST_MAX_TAPS + 1] = {};
	char pt[PATH_MAX + 32], name[32];
	struct rlimit old, lim;
	struct stat st;
	struct rec r;
	int i, err;

	if (!rec_open(&r, "taperr", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_EQ(ingest__add_writer(r.in, NULL), -EINVAL, "no writer");
	for (i = 0; i <= INGEST_MAX_TAPS; i++) {
		snprintf(name, sizeof(name), "tap%d", i);
		taps[i] = open_beside(&r, name, pt, sizeof(pt));
		if (!ASSERT_OK_PTR(taps[i], "a tap's writer"))
			goto out;
		err = ingest__add_writer(r.in, taps[i]);
		ASSERT_EQ(err, i < INGEST_MAX_TAPS ? 0 : -ENOSPC, "taps up to the limit");
	}
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "a sample");
	if (!ASSERT_OK(getrlimit(RLIMIT_FSIZE, &old), "getrlimit"))
		goto out;
	/* Tap 0 may not grow: its next block fails with EFBIG (SIGXFSZ ignored). */
	snprintf(pt, sizeof(pt), "%s/tap0.data", dir);
	if (!ASSERT_OK(stat(pt, &st), "stat tap 0"))
		goto out;
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size;
	if (!ASSERT_OK(setrlimit(RLIMIT_FSIZE, &lim), "setrlimit"))
		goto out;
	err = report_writer__flush(taps[0]);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	ASSERT_EQ(err, -EFBIG, "tap 0 cannot write");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 20), "the recording goes on");
	ASSERT_EQ(ingest__remove_writer(r.in, taps[0]), -EFBIG, "tap 0's error, at removal");
	for (i = 1; i < INGEST_MAX_TAPS; i++)
		ASSERT_OK(ingest__remove_writer(r.in, taps[i]), "the others are fine");
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(report__nr_samples(r.rpt), (size_t)2, "the file has both samples");
out:
	for (i = 0; i <= INGEST_MAX_TAPS; i++) {
		if (taps[i])
			report_writer__abort(taps[i]);
		snprintf(pt, sizeof(pt), "%s/tap%d.data", dir, i);
		unlink(pt);
	}
	rec_close(&r);
}

/*
 * Each writer's samples are timed from its own header's start_mono_ns (a
 * rotated file's start, a tap's window): the first file from START_NS, a
 * second from START_NS + 25, a tap from START_NS + 28; a sample taken
 * before a file began (read after the switch) is at that file's time 0.
 */
static void test_time_base(void)
{
	char p2[PATH_MAX + 32] = "", pt[PATH_MAX + 32] = "";
	struct report_writer *w2 = NULL, *tap = NULL;
	struct report *r2 = NULL, *rt = NULL;
	struct rpt_header h;
	struct rec r;

	if (!rec_open(&r, "tbase", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "to the first file");
	h = r.hdr;
	h.start_mono_ns = START_NS + 25;
	snprintf(p2, sizeof(p2), "%s/tbase2.data", dir);
	w2 = report_writer__open(p2, &h);
	h.start_mono_ns = START_NS + 28;
	snprintf(pt, sizeof(pt), "%s/tbase_tap.data", dir);
	tap = report_writer__open(pt, &h);
	if (!ASSERT_OK_PTR(w2, "second file") || !ASSERT_OK_PTR(tap, "tap"))
		goto out;
	ASSERT_OK(ingest__set_writer(r.in, w2), "swap");
	if (!rec_finish(&r))
		goto out;
	ASSERT_OK(ingest__add_writer(r.in, tap), "add the tap");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 20), "taken before the second file began");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 30), "after");
	ASSERT_OK(ingest__remove_writer(r.in, tap), "remove the tap");
	ASSERT_OK(report_writer__close(tap, &h), "close the tap");
	tap = NULL;
	ASSERT_OK(report_writer__close(w2, &h), "close the second file");
	w2 = NULL;
	r2 = read_back(p2);
	rt = read_back(pt);
	if (!r2 || !rt || !ASSERT_EQ(report__nr_samples(r2), (size_t)2, "second file") ||
	    !ASSERT_EQ(report__nr_samples(rt), (size_t)2, "tap"))
		goto out;
	ASSERT_EQ(report__sample(r.rpt, 0)->time, (uint64_t)10, "first file: from START_NS");
	ASSERT_EQ(report__sample(r2, 0)->time, (uint64_t)0, "second file: taken before it, at its 0");
	ASSERT_EQ(report__sample(r2, 1)->time, (uint64_t)5, "second file: from START_NS + 25");
	ASSERT_EQ(report__sample(rt, 0)->time, (uint64_t)0, "tap: taken before it, at its 0");
	ASSERT_EQ(report__sample(rt, 1)->time, (uint64_t)2, "tap: from START_NS + 28");
out:
	report__free(r2);
	report__free(rt);
	report_writer__abort(w2);
	report_writer__abort(tap);
	unlink(p2);
	unlink(pt);
	rec_close(&r);
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_swap_and_tap);
	RUN_TEST(test_no_file);
	RUN_TEST(test_tap_error);
	RUN_TEST(test_time_base);
	cleanup();
	return TEST_EXIT();
}
