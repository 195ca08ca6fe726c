// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest's deferral: a sample whose file has not answered yet waits for
 * its names.  The symbolizer's file jobs run on a real offload pool and
 * each reads a byte from a pipe first (the symbolizer's test gate): the
 * test makes the library as slow as it likes, or never answer.  The
 * recording format keeps a frame's first names, so a sample written
 * before its file answered would keep its frames unnamed for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "ingest_fixture.h"
#include "base/offload.h"
#include "symbolize/symbolizer_int.h"

TEST_SUITE("ingest_defer");

#define PID		(FAKE_PID + 30)
#define MSEC		1000000ull

static int gate[2] = { -1, -1 };	/* the jobs read gate[0]; the test writes gate[1] */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * rec_open() with a pool and the gate (shut: every file job waits on it),
 * deferral's patience @stall_ns (0: its default), @max_modules file
 * modules (0: the default).
 */
static bool open_gated(struct rec *r, const char *name, uint64_t stall_ns, size_t max_modules)
{
	bool ok;

	if (!ASSERT_OK(pipe2(gate, O_CLOEXEC), "the gate"))
		return false;
	watch_offload = offload__new(NULL);
	if (!ASSERT_OK_PTR(watch_offload, "offload__new"))
		return false;
	watch_stall_ns = stall_ns;
	watch_max_modules = max_modules;
	ok = rec_open(r, name, false);
	watch_stall_ns = 0;
	watch_max_modules = 0;
	if (ok)
		r->sym->test_gate_fd = gate[0];
	return ok;
}

/* Open the gate for @n jobs. */
static void let_through(int n)
{
	while (n-- > 0)
		ASSERT_EQ(write(gate[1], "x", 1), 1, "a byte through the gate");
}

/* Everything open_gated() made, the jobs let go first (a shut gate holds a worker). */
static void close_gated(struct rec *r)
{
	if (gate[1] >= 0)
		close(gate[1]);	/* jobs still waiting read end of file and run */
	rec_close(r);
	offload__free(watch_offload);
	watch_offload = NULL;
	if (gate[0] >= 0)
		close(gate[0]);
	gate[0] = gate[1] = -1;
}

/* A sample of PID in the kernel only: no file to wait for. */
static int feed_kernel(struct rec *r, uint64_t ts)
{
	const uint64_t ips[] = { K_TWO };

	return feed_sample(r, PID, ts, ips, 1, 0);
}

/* ingest__tick() every 10 ms until @want samples were written, at most @ms. */
static bool tick_until(struct rec *r, uint64_t want, unsigned int ms)
{
	uint64_t end = mono_ns() + ms * MSEC;

	do {
		if (!ASSERT_OK(ingest__tick(r->in), "ingest__tick"))
			return false;
		if (ingest__stats(r->in)->samples >= want)
			return true;
		usleep(10000);
	} while (mono_ns() < end);
	return false;
}

/* Sample @si: k_one, then the three library functions named as nm names them. */
static bool chain_named(const struct rec *r, size_t si)
{
	return frame_is(r, si, 0, "k_one", 0, "[kernel.kallsyms]") &&
	       frame_is(r, si, 1, "ing_alpha", 4, lib_path) &&
	       frame_is(r, si, 2, "ing_beta", 4, lib_path) &&
	       frame_is(r, si, 3, "ing_gamma", 4, lib_path);
}

/* Sample @si's library frames are unnamed: the file did not answer. */
static bool chain_unanswered(const struct rec *r, size_t si)
{
	for (uint32_t i = 1; i < 4; i++) {
		const struct rpt_frame *f = frame_of(r, si, i);

		if (!ASSERT_OK_PTR(f, "frame") || !ASSERT_NULL(f->sym, "an unanswered frame's name") ||
		    !ASSERT_EQ(f->reason, (uint32_t)RPT_FILE_NO_ANSWER, "its reason"))
			return false;
	}
	return true;
}

/*
 * A slow file: its open takes longer than the symbolizer's 100 ms.  The
 * samples taken meanwhile are kept (a kernel-only one behind them is not)
 * and written named, in order, once the file answered; the comm and time
 * are each sample's.
 */
static void test_slow_file_named(void)
{
	struct rec r;

	if (!open_gated(&r, "slow", 0, 0))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);	/* its open is held at the gate: no answer in 100 ms */
	for (int i = 0; i < 3; i++)
		ASSERT_OK(feed_chain(&r, PID, START_NS + 10 + i), "a sample in the slow file");
	ASSERT_OK(feed_kernel(&r, START_NS + 20), "a sample in the kernel");
	ASSERT_EQ(ingest__stats(r.in)->deferred, (uint64_t)3, "the first three kept");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)1, "the kernel's written");
	/* Still at the gate: a tick writes nothing. */
	ASSERT_OK(ingest__tick(r.in), "a tick while the file is slow");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)1, "still kept");
	let_through(2);		/* its open, then its symbols' read */
	if (!ASSERT_TRUE(tick_until(&r, 4, 5000), "written within 5 s of the file's answer"))
		goto out;
	ASSERT_OK(feed_chain(&r, PID, START_NS + 30), "a sample after the answer");
	ASSERT_EQ(ingest__stats(r.in)->deferred, (uint64_t)3, "not kept: named at once");
	ASSERT_EQ(ingest__stats(r.in)->deferred_unnamed, (uint64_t)0, "none gave up");
	if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)5, "samples"))
		goto out;
	/* The kernel's first, as written; the kept ones next, each with its own time and comm. */
	ASSERT_EQ(stack_len(&r, 0), 1u, "the kernel sample");
	for (size_t si = 1; si < 5; si++)
		if (!chain_named(&r, si))
			goto out;
	for (size_t si = 1; si < 4; si++) {
		ASSERT_EQ(report__sample(r.rpt, si)->time, (uint64_t)(9 + si), "a kept sample's time");
		ASSERT_STREQ(report__sample(r.rpt, si)->comm, "ingest-test-comm", "its comm");
	}
out:
	close_gated(&r);
}

/*
 * A file that never answers: the kept sample goes out unnamed once its
 * job's worker stood still for the patience (shortened to 300 ms here),
 * not before; a sample taken after that is not kept at all.
 */
static void test_hung_file_gives_up(void)
{
	uint64_t t0, waited;
	struct rec r;

	if (!open_gated(&r, "hung", 300 * MSEC, 0))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	t0 = mono_ns();
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "a sample in the hung file");
	ASSERT_EQ(ingest__stats(r.in)->deferred, (uint64_t)1, "kept");
	if (!ASSERT_TRUE(tick_until(&r, 1, 5000), "written within 5 s"))
		goto out;
	waited = mono_ns() - t0;
	ASSERT_TRUE(waited >= 300 * MSEC, "not before the patience");
	ASSERT_EQ(ingest__stats(r.in)->deferred_unnamed, (uint64_t)1, "counted as given up");
	ASSERT_OK(feed_chain(&r, PID, START_NS + 20), "a sample once the file is judged hung");
	ASSERT_EQ(ingest__stats(r.in)->deferred, (uint64_t)1, "not kept");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)2, "written at once");
	if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)2, "samples"))
		goto out;
	chain_unanswered(&r, 0);
	chain_unanswered(&r, 1);
out:
	close_gated(&r);
}

/*
 * The end of a recording: a file that answers during the flush names its
 * sample; one still for 1 s (the end's patience) does not hold it: the
 * flush ends well within the 5 s it was given.
 */
static void test_flush(void)
{
	uint64_t t0;
	struct rec r;

	if (!open_gated(&r, "flush", 0, 0))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "a sample in the slow file");
	let_through(2);
	ASSERT_OK(ingest__flush_deferred(r.in, 5000 * MSEC, NULL), "flush");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)1, "written");
	ASSERT_EQ(ingest__stats(r.in)->deferred_unnamed, (uint64_t)0, "named");
	if (rec_finish(&r) && ASSERT_EQ(report__nr_samples(r.rpt), (size_t)1, "samples"))
		chain_named(&r, 0);
	close_gated(&r);

	/* Never answers: written unnamed after about 1 s. */
	if (!open_gated(&r, "flush_hung", 0, 0))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "a sample in the hung file");
	t0 = mono_ns();
	ASSERT_OK(ingest__flush_deferred(r.in, 5000 * MSEC, NULL), "flush");
	ASSERT_TRUE(mono_ns() - t0 < 2500 * MSEC, "a still worker does not hold the end");
	ASSERT_EQ(ingest__stats(r.in)->deferred_unnamed, (uint64_t)1, "given up");
	if (rec_finish(&r) && ASSERT_EQ(report__nr_samples(r.rpt), (size_t)1, "samples"))
		chain_unanswered(&r, 0);
out:
	close_gated(&r);
}

/*
 * A kept sample holds its module: with room for one file module, a
 * second file seen meanwhile does not evict the first (whose frames the
 * sample points to; ASan sees a use after free otherwise).
 */
static void test_module_held(void)
{
	char copy[PATH_MAX + 32], cmd[2 * PATH_MAX + 80];
	struct symbolizer_stats st;
	struct mapping mp = { 0 };
	struct sym_frame f;
	struct stat cst;
	struct rec r;

	snprintf(copy, sizeof(copy), "%s/libing_copy.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib_path, copy);
	if (!ASSERT_OK(system(cmd), "copy the library") || !ASSERT_OK(stat(copy, &cst), "stat it"))
		return;
	if (!open_gated(&r, "held", 0, 1))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	ASSERT_OK(feed_chain(&r, PID, START_NS + 10), "a sample in the slow file");
	ASSERT_EQ(ingest__stats(r.in)->deferred, (uint64_t)1, "kept");
	/* Another file: a second module, past the cap of one. */
	mp.start = BASE;
	mp.end = BASE + (uint64_t)cst.st_size;
	mp.dev = cst.st_dev;
	mp.ino = cst.st_ino;
	mp.mtime_sec = cst.st_mtim.tv_sec;
	mp.mtime_nsec = (uint32_t)cst.st_mtim.tv_nsec;
	mp.kind = MAPPING_FILE;
	mp.path = copy;
	symbolizer__user_mapping(r.sym, PID, &mp, BASE + 16, &f);
	symbolizer__stats(r.sym, &st);
	ASSERT_EQ(st.modules_evicted, (uint64_t)0, "the held module stays");
	let_through(2);
	if (!ASSERT_TRUE(tick_until(&r, 1, 5000), "written once the file answered"))
		goto out;
	if (rec_finish(&r) && ASSERT_EQ(report__nr_samples(r.rpt), (size_t)1, "samples"))
		chain_named(&r, 0);
out:
	close_gated(&r);
	unlink(copy);
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_slow_file_named);
	RUN_TEST(test_hung_file_gives_up);
	RUN_TEST(test_flush);
	RUN_TEST(test_module_held);
	cleanup();
	return TEST_EXIT();
}
