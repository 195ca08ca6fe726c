// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * offload: jobs that block on a pipe nobody writes to (a file that never
 * answers) until the test writes the byte that releases them.  Checked:
 * a deadline is kept, a late job is adopted or dropped on its worker, a
 * pool whose every worker is stuck refuses at once, the per-second budget
 * cuts waits short, a stuck worker outlives offload__free() and cleans up
 * after itself (ASan sees the rest), workers block every signal.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/offload.h"
#include "base/util.h"
#include "test.h"

TEST_SUITE("offload");

struct tjob {
	struct offload_job job;
	int fd;			/* read one byte from it; -1: return at once */
	int got;		/* run()'s result: bytes read */
	int sigint_blocked;	/* SIGINT blocked in the worker */
	atomic_int *dropped;	/* incremented by drop() */
	atomic_int *spin;	/* not NULL: burn CPU until it is set (a slow file) */
};

static void tjob_run(struct offload_job *oj)
{
	struct tjob *j = (struct tjob *)oj;
	sigset_t mask;
	char c;

	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	j->sigint_blocked = sigismember(&mask, SIGINT);
	if (j->spin)
		while (!atomic_load(j->spin))
			;
	j->got = j->fd >= 0 ? (int)read(j->fd, &c, 1) : 0;
}

static void tjob_drop(struct offload_job *oj)
{
	struct tjob *j = (struct tjob *)oj;

	atomic_fetch_add(j->dropped, 1);
	free(j);
}

static struct tjob *tjob_new(int fd, atomic_int *dropped)
{
	struct tjob *j = calloc(1, sizeof(*j));

	if (j) {
		j->job.run = tjob_run;
		j->job.drop = tjob_drop;
		j->fd = fd;
		j->got = -2;
		j->dropped = dropped;
	}
	return j;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait up to 2 s for *@n to reach @want. */
static bool wait_count(atomic_int *n, int want)
{
	int i;

	for (i = 0; i < 200 && atomic_load(n) < want; i++)
		usleep(10000);
	return atomic_load(n) >= want;
}

static void test_in_time(void)
{
	struct offload *p = offload__new(NULL);
	atomic_int dropped = 0;
	struct tjob *j = tjob_new(-1, &dropped);
	struct offload_stats st;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK_PTR(j, "job"))
		goto out;
	ASSERT_OK(offload__run(p, &j->job, 1000000000ull), "a job that returns at once");
	ASSERT_EQ(j->got, 0, "run() ran");
	ASSERT_EQ(j->sigint_blocked, 1, "SIGINT blocked on the worker");
	offload__stats(p, &st);
	ASSERT_EQ(st.jobs, 1ull, "one job");
	ASSERT_EQ(st.threads, 1ull, "one worker made");
	ASSERT_EQ(st.busy, 0ull, "idle again");
	ASSERT_EQ(st.timeouts, 0ull, "no timeout");
out:
	free(j);
	offload__free(p);
}

static void test_deadline_then_late(void)
{
	struct offload *p = offload__new(NULL);
	atomic_int dropped = 0;
	struct tjob *j = NULL;
	int pfd[2] = { -1, -1 };
	uint64_t t0, el;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	j = tjob_new(pfd[0], &dropped);
	if (!ASSERT_OK_PTR(j, "job"))
		goto out;
	t0 = ms_now();
	ASSERT_EQ(offload__run(p, &j->job, 50000000ull), -ETIMEDOUT, "a file that does not answer");
	el = ms_now() - t0;
	ASSERT_TRUE(el >= 45 && el < 1000, "waited about the 50 ms deadline");
	ASSERT_EQ(offload__wait(p, &j->job, 0), -ETIMEDOUT, "a look: still running");
	ASSERT_EQ(write(pfd[1], "x", 1), 1, "answer");
	ASSERT_OK(offload__wait(p, &j->job, 2000000000ull), "adopted once it ends");
	ASSERT_EQ(j->got, 1, "its result is there");
	ASSERT_EQ(atomic_load(&dropped), 0, "not dropped: taken back");
out:
	free(j);
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

static void test_abandon_drops_late(void)
{
	struct offload *p = offload__new(NULL);
	atomic_int dropped = 0;
	int pfd[2] = { -1, -1 };
	struct offload_stats st;
	struct tjob *j;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	j = tjob_new(pfd[0], &dropped);
	if (!ASSERT_OK_PTR(j, "job"))
		goto out;
	ASSERT_EQ(offload__run(p, &j->job, 20000000ull), -ETIMEDOUT, "times out");
	offload__abandon(p, &j->job);
	ASSERT_EQ(atomic_load(&dropped), 0, "not dropped while it runs");
	ASSERT_EQ(write(pfd[1], "x", 1), 1, "answer");
	ASSERT_TRUE(wait_count(&dropped, 1), "dropped on its worker when it ended");
	offload__stats(p, &st);
	ASSERT_EQ(st.abandoned, 1ull, "one abandoned");
	ASSERT_EQ(st.late, 1ull, "one ended late");
	/* A job already ended is dropped by abandon itself. */
	j = tjob_new(-1, &dropped);
	if (ASSERT_OK_PTR(j, "job") && ASSERT_OK(offload__submit(p, &j->job), "submit")) {
		usleep(50000);
		offload__abandon(p, &j->job);
		ASSERT_TRUE(wait_count(&dropped, 2), "dropped");
	}
out:
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

static void test_all_stuck_refuses(void)
{
	struct offload *p = offload__new(&(struct offload_opts){ .max_threads = 2 });
	struct tjob *stuck[2] = { NULL, NULL }, *j = NULL;
	atomic_int dropped = 0;
	int pfd[2] = { -1, -1 };
	struct offload_stats st;
	uint64_t t0;
	int i;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	for (i = 0; i < 2; i++) {
		stuck[i] = tjob_new(pfd[0], &dropped);
		if (!ASSERT_OK_PTR(stuck[i], "job"))
			goto out;
		ASSERT_EQ(offload__run(p, &stuck[i]->job, 10000000ull), -ETIMEDOUT, "stuck");
		offload__abandon(p, &stuck[i]->job);
	}
	j = tjob_new(-1, &dropped);
	if (!ASSERT_OK_PTR(j, "job"))
		goto out;
	t0 = ms_now();
	ASSERT_EQ(offload__run(p, &j->job, 1000000000ull), -EAGAIN, "every worker stuck");
	ASSERT_TRUE(ms_now() - t0 < 50, "refused at once, no wait");
	ASSERT_EQ(j->got, -2, "not run");
	offload__stats(p, &st);
	ASSERT_EQ(st.refused, 1ull, "counted");
	ASSERT_EQ(st.threads, 2ull, "no third worker");
	ASSERT_EQ(st.busy, 2ull, "both busy");
	/* Two answers free both workers; the next job reuses one. */
	ASSERT_EQ(write(pfd[1], "xy", 2), 2, "answer both");
	ASSERT_TRUE(wait_count(&dropped, 2), "both dropped");
	ASSERT_OK(offload__run(p, &j->job, 1000000000ull), "runs again");
	offload__stats(p, &st);
	ASSERT_EQ(st.threads, 2ull, "a worker reused");
out:
	free(j);
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

static void test_budget(void)
{
	struct offload *p = offload__new(&(struct offload_opts){ .budget_ns = 100000000ull });
	struct tjob *a = NULL, *b = NULL;
	atomic_int dropped = 0;
	int pfd[2] = { -1, -1 };
	struct offload_stats st;
	uint64_t t0, el;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	a = tjob_new(pfd[0], &dropped);
	b = tjob_new(pfd[0], &dropped);
	if (!ASSERT_OK_PTR(a, "job") || !ASSERT_OK_PTR(b, "job"))
		goto out;
	ASSERT_EQ(offload__run(p, &a->job, 80000000ull), -ETIMEDOUT, "first: 80 ms in vain");
	t0 = ms_now();
	ASSERT_EQ(offload__run(p, &b->job, 80000000ull), -ETIMEDOUT, "second: cut");
	el = ms_now() - t0;
	ASSERT_TRUE(el >= 20 && el < 60, "waited only what was left of 100 ms (20), or the 25 ms floor");
	offload__stats(p, &st);
	ASSERT_EQ(st.over_budget, 1ull, "the cut counted");
	ASSERT_EQ(st.timeouts, 2ull, "two waits in vain");
	offload__abandon(p, &a->job);
	offload__abandon(p, &b->job);
	ASSERT_EQ(write(pfd[1], "xy", 2), 2, "answer both");
	ASSERT_TRUE(wait_count(&dropped, 2), "both dropped");
out:
	if (!a || !b) {
		free(a);
		free(b);
	}
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

/* A worker still stuck when the pool is freed ends on its own later. */
static void test_free_with_stuck_worker(void)
{
	struct offload *p = offload__new(NULL);
	atomic_int dropped = 0;
	int pfd[2] = { -1, -1 };
	struct tjob *j;
	uint64_t t0;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe")) {
		offload__free(p);
		return;
	}
	j = tjob_new(pfd[0], &dropped);
	if (ASSERT_OK_PTR(j, "job") &&
	    ASSERT_EQ(offload__run(p, &j->job, 10000000ull), -ETIMEDOUT, "stuck"))
		offload__abandon(p, &j->job);
	t0 = ms_now();
	offload__free(p);
	ASSERT_TRUE(ms_now() - t0 < 100, "free does not wait for a stuck worker");
	ASSERT_EQ(write(pfd[1], "x", 1), 1, "answer");
	ASSERT_TRUE(wait_count(&dropped, 1), "dropped by its worker after the free");
	usleep(20000);	/* the worker's own exit, after the drop */
	close(pfd[0]);
	close(pfd[1]);
}

/* Poll offload__stalled() on @j every 10 ms for @ms: whether it ever said stalled. */
static bool stalled_within(struct offload *p, struct tjob *j, uint64_t ms, uint64_t stall_ns)
{
	struct offload_watch w = {};
	uint64_t end = ms_now() + ms;

	while (ms_now() < end) {
		if (offload__stalled(p, &j->job, &w, clock_ns(CLOCK_MONOTONIC), stall_ns))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * A job blocked in a read (a file system that does not answer) stalls; one
 * burning CPU (a large file being read on a loaded machine) does not; one
 * that ended is not stalled.
 */
static void test_stalled(void)
{
	struct offload *p = offload__new(NULL);
	atomic_int dropped = 0, spin = 0;
	struct tjob *blocked = NULL, *busy = NULL;
	int pfd[2] = { -1, -1 };

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	blocked = tjob_new(pfd[0], &dropped);
	busy = tjob_new(-1, &dropped);
	if (!ASSERT_OK_PTR(blocked, "job") || !ASSERT_OK_PTR(busy, "job"))
		goto out;
	busy->spin = &spin;
	if (!ASSERT_OK(offload__submit(p, &blocked->job), "blocked job started") ||
	    !ASSERT_OK(offload__submit(p, &busy->job), "busy job started"))
		goto out;
	ASSERT_TRUE(stalled_within(p, blocked, 2000, 300000000ull),
		    "a job waiting in read() with no CPU for 300 ms is stalled");
	/* A whole second without CPU would take a machine far past any test's load. */
	ASSERT_FALSE(stalled_within(p, busy, 1500, 1000000000ull), "a job burning CPU is not stalled");
	atomic_store(&spin, 1);
	ASSERT_OK(offload__wait(p, &busy->job, 2000000000ull), "the busy job ends");
	ASSERT_FALSE(stalled_within(p, busy, 50, 1), "a job that ended is not stalled");
	ASSERT_EQ(write(pfd[1], "x", 1), 1, "answer");
	ASSERT_OK(offload__wait(p, &blocked->job, 2000000000ull), "the blocked job ends");
out:
	free(blocked);
	free(busy);
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

/* offload__wait_long() is neither cut by the budget nor charged to it. */
static void test_wait_long(void)
{
	struct offload *p = offload__new(&(struct offload_opts){ .budget_ns = 1000000ull });
	atomic_int dropped = 0;
	struct tjob *j = NULL;
	int pfd[2] = { -1, -1 };
	struct offload_stats st;
	uint64_t t0, el;

	if (!ASSERT_OK_PTR(p, "pool") || !ASSERT_OK(pipe(pfd), "pipe"))
		goto out;
	j = tjob_new(pfd[0], &dropped);
	if (!ASSERT_OK_PTR(j, "job") || !ASSERT_OK(offload__submit(p, &j->job), "started"))
		goto out;
	t0 = ms_now();
	ASSERT_EQ(offload__wait_long(p, &j->job, 200000000ull), -ETIMEDOUT, "no answer");
	el = ms_now() - t0;
	ASSERT_TRUE(el >= 190, "waited the whole 200 ms, past a 1 ms budget");
	offload__stats(p, &st);
	ASSERT_EQ(st.over_budget, 0ull, "not cut");
	t0 = ms_now();
	ASSERT_EQ(offload__wait(p, &j->job, 200000000ull), -ETIMEDOUT, "no answer");
	el = ms_now() - t0;
	ASSERT_TRUE(el < 150, "offload__wait() on the same pool is still cut to the minimum");
	ASSERT_EQ(write(pfd[1], "x", 1), 1, "answer");
	ASSERT_OK(offload__wait_long(p, &j->job, 2000000000ull), "ends");
out:
	free(j);
	offload__free(p);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

static void test_no_pool_runs_here(void)
{
	atomic_int dropped = 0;
	struct tjob *j = tjob_new(-1, &dropped);

	if (!ASSERT_OK_PTR(j, "job"))
		return;
	ASSERT_OK(offload__run(NULL, &j->job, 1), "no pool");
	ASSERT_EQ(j->got, 0, "run on the caller's thread");
	ASSERT_EQ(j->sigint_blocked, 0, "with the caller's signal mask");
	free(j);
}

int main(void)
{
	RUN_TEST(test_in_time);
	RUN_TEST(test_deadline_then_late);
	RUN_TEST(test_abandon_drops_late);
	RUN_TEST(test_all_stuck_refuses);
	RUN_TEST(test_budget);
	RUN_TEST(test_free_with_stuck_worker);
	RUN_TEST(test_no_pool_runs_here);
	RUN_TEST(test_stalled);
	RUN_TEST(test_wait_long);
	return TEST_EXIT();
}
