// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * When ingest writes the unwinder's process views (issue 15: the tracker
 * keeps fresh views of new processes itself, so a short program costs the
 * reader no view): records built as the BPF side builds them, through a
 * real unwinder whose sink counts the views written and deleted.
 *
 *   views_fresh       FORK, EXEC, a MAP the tracker took whole
 *                     (BPFSYM_MF_VIEWED), samples, EXIT: no view written,
 *                     none deleted.
 *   views_wanted      the same MAP without the flag (a file without a
 *                     table yet): its view is written before the next
 *                     sample, not later.
 *   views_fork        a child made by fork alone gets its view by the
 *                     batch's end (ingest__sync_unwind), not before the
 *                     next sample (it walks with its parent's meanwhile),
 *                     and none if it exec'd in the same batch.
 *   views_ours        a process with a view of ours: a flagged MAP still
 *                     rewrites it (ours would lag behind the fresh one),
 *                     and its EXEC deletes it.
 *   views_resync      lazy_maps: a process taken whole at its first
 *                     sample (RESYNC, then its MAPs) loses a view of ours
 *                     (it lagged), and gets one again, before its first
 *                     sample, only for a MAP the tracker's fresh view did
 *                     not take.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "test.h"
#include "ingest_fixture.h"
#include "unwind/unwinder.h"

TEST_SUITE("ingest_views");

#define PARENT	(FAKE_PID + 30)
#define CHILD	(FAKE_PID + 31)
#define OTHER	(FAKE_PID + 32)

struct count_sink {
	int puts, dels, last_put;
};

static struct count_sink cs;

static int put_rows(void *ctx, uint32_t first, const struct cfi_row *rows, uint32_t nr)
{
	(void)ctx, (void)first, (void)rows, (void)nr;
	return 0;
}

static int put_table(void *ctx, uint32_t id, const struct bpfsym_unw_table *t)
{
	(void)ctx, (void)id, (void)t;
	return 0;
}

static int put_proc(void *ctx, uint32_t pid, const struct bpfsym_unw_proc *v)
{
	(void)ctx, (void)v;
	cs.puts++;
	cs.last_put = (int)pid;
	return 0;
}

static int del_proc(void *ctx, uint32_t pid)
{
	(void)ctx, (void)pid;
	cs.dels++;
	return 0;
}

static int open_lib(void *ctx, uint32_t pid, uint64_t pstart, const struct mapping *m, int *debug_fd)
{
	int fd = open(lib_path, O_RDONLY | O_CLOEXEC);

	(void)ctx, (void)pid, (void)pstart, (void)m;
	*debug_fd = -1;
	return fd < 0 ? -errno : fd;
}

/* A recording with an unwinder over the counting sink; false: failed (reported). */
static bool open_rec(struct rec *r, const char *name)
{
	memset(&cs, 0, sizeof(cs));
	watch_unw = unwinder__new(&(struct unwind_opts){
		.sink = { .put_rows = put_rows, .put_table = put_table, .put_proc = put_proc,
			  .del_proc = del_proc },
		.open = open_lib, .sync = true,
	});
	if (!ASSERT_OK_PTR(watch_unw, "unwinder__new"))
		return false;
	return rec_open(r, name, false);
}

static void close_rec(struct rec *r)
{
	rec_close(r);
	unwinder__free(watch_unw);
	watch_unw = NULL;
}

static int feed_one(struct rec *r, uint32_t pid, uint64_t ts)
{
	const uint64_t ips[] = { K_ONE, BASE + func_value[ALPHA] + 4 };

	return feed_sample(r, pid, ts, ips, 1, 1);
}

/* CHILD forked from PARENT and exec'd, its library mapped with BPFSYM_MF_* @flags. */
static void exec_child(struct rec *r, uint32_t flags)
{
	task_ev(r, BPFSYM_EV_FORK, CHILD, PARENT, START_NS + 10);
	task_ev(r, BPFSYM_EV_EXEC, CHILD, 0, START_NS + 20);
	map_lib_flags(r, CHILD, our_mnt_ns, START_NS + 30, flags);
}

/* PARENT exec'd with a mapping the tracker did not take: we write its view (one put). */
static void parent_with_our_view(struct rec *r)
{
	task_ev(r, BPFSYM_EV_EXEC, PARENT, 0, START_NS + 5);
	map_lib_flags(r, PARENT, our_mnt_ns, START_NS + 6, 0);
	ASSERT_OK(ingest__sync_unwind(r->in), "the batch's end");
}

static void test_views_fresh(void)
{
	struct rec r;

	if (!open_rec(&r, "views_fresh"))
		return;
	exec_child(&r, BPFSYM_MF_VIEWED);
	ASSERT_OK(feed_one(&r, CHILD, START_NS + 40), "a sample");
	ASSERT_OK(feed_one(&r, OTHER, START_NS + 50), "a sample of another process");
	ASSERT_OK(ingest__sync_unwind(r.in), "the batch's end");
	ASSERT_EQ(cs.puts, 0, "views written for a process its fresh view covers");
	task_ev(&r, BPFSYM_EV_EXIT, CHILD, 0, START_NS + 60);
	ASSERT_EQ(cs.dels, 0, "views deleted at its exit (none of ours)");
	ASSERT_EQ(ingest__stats(r.in)->views_wanted, 0ull, "views wanted");
	close_rec(&r);
}

static void test_views_wanted(void)
{
	struct rec r;

	if (!open_rec(&r, "views_wanted"))
		return;
	exec_child(&r, 0);
	ASSERT_EQ(cs.puts, 0, "views written before any sample");
	ASSERT_OK(feed_one(&r, OTHER, START_NS + 40), "a sample of another process");
	ASSERT_EQ(cs.puts, 1, "views written once a sample comes");
	ASSERT_EQ(cs.last_put, (int)CHILD, "the view written is the child's");
	ASSERT_EQ(ingest__stats(r.in)->views_wanted, 1ull, "views wanted");
	task_ev(&r, BPFSYM_EV_EXIT, CHILD, 0, START_NS + 60);
	ASSERT_EQ(cs.dels, 1, "our view deleted at its exit");
	close_rec(&r);
}

static void test_views_fork(void)
{
	struct rec r;

	if (!open_rec(&r, "views_fork"))
		return;
	parent_with_our_view(&r);
	ASSERT_EQ(cs.puts, 1, "the parent's view");
	/* A child by fork alone: its view waits for the batch's end. */
	task_ev(&r, BPFSYM_EV_FORK, CHILD, PARENT, START_NS + 10);
	ASSERT_OK(feed_one(&r, OTHER, START_NS + 20), "a sample of another process");
	ASSERT_EQ(cs.puts, 1, "views written before the batch's end");
	ASSERT_OK(ingest__sync_unwind(r.in), "the batch's end");
	ASSERT_EQ(cs.puts, 2, "views written by the batch's end");
	ASSERT_EQ(cs.last_put, (int)CHILD, "the view written is the child's");
	/* A child that exec'd in the batch it was forked in: none. */
	task_ev(&r, BPFSYM_EV_FORK, OTHER, PARENT, START_NS + 30);
	task_ev(&r, BPFSYM_EV_EXEC, OTHER, 0, START_NS + 31);
	map_lib_flags(&r, OTHER, our_mnt_ns, START_NS + 32, BPFSYM_MF_VIEWED);
	ASSERT_OK(ingest__sync_unwind(r.in), "the batch's end");
	ASSERT_EQ(cs.puts, 2, "views written for a child that exec'd at once");
	close_rec(&r);
}

static void test_views_ours(void)
{
	struct rec r;

	if (!open_rec(&r, "views_ours"))
		return;
	parent_with_our_view(&r);
	ASSERT_EQ(cs.puts, 1, "the view of ours");
	map_lib_flags(&r, PARENT, our_mnt_ns, START_NS + 7, BPFSYM_MF_VIEWED);
	ASSERT_OK(feed_one(&r, OTHER, START_NS + 8), "a sample of another process");
	ASSERT_EQ(cs.puts, 2, "ours rewritten for a flagged MAP: it would lag");
	task_ev(&r, BPFSYM_EV_EXEC, PARENT, 0, START_NS + 9);
	ASSERT_EQ(cs.dels, 1, "ours deleted at exec");
	ASSERT_OK(ingest__sync_unwind(r.in), "the batch's end");
	ASSERT_EQ(cs.puts, 2, "views written after the exec with no MAP since");
	close_rec(&r);
}

static void test_views_resync(void)
{
	struct rec r;

	if (!open_rec(&r, "views_resync"))
		return;
	parent_with_our_view(&r);
	ASSERT_EQ(cs.puts, 1, "the view of ours");
	task_ev(&r, BPFSYM_EV_RESYNC, PARENT, 0, START_NS + 10);
	ASSERT_EQ(cs.dels, 1, "ours deleted at a RESYNC");
	map_lib_flags(&r, PARENT, our_mnt_ns, START_NS + 11, BPFSYM_MF_VIEWED);
	ASSERT_OK(feed_one(&r, PARENT, START_NS + 12), "its first sample");
	ASSERT_OK(ingest__sync_unwind(r.in), "the batch's end");
	ASSERT_EQ(cs.puts, 1, "views written when the fresh view took it all");
	task_ev(&r, BPFSYM_EV_RESYNC, CHILD, 0, START_NS + 20);
	map_lib_flags(&r, CHILD, our_mnt_ns, START_NS + 21, 0);
	ASSERT_OK(feed_one(&r, CHILD, START_NS + 22), "its first sample");
	ASSERT_EQ(cs.puts, 2, "views written before the sample when the fresh view lacks a table");
	ASSERT_EQ(cs.last_put, (int)CHILD, "the child's");
	close_rec(&r);
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_views_fresh);
	RUN_TEST(test_views_wanted);
	RUN_TEST(test_views_fork);
	RUN_TEST(test_views_ours);
	RUN_TEST(test_views_resync);
	cleanup();
	return TEST_EXIT();
}
