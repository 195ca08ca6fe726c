// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest and cgroups: a sample's cgroup id becomes a CGROUP record in
 * each file that has its samples (the recording's and a tap added later,
 * each self-contained), once per file; an id no one can resolve leaves
 * the samples with their bare id.  The hierarchy and /proc are built in
 * the fixture's directory (cgpaths reads any file system).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "ingest_fixture.h"

TEST_SUITE("ingest_cgroup");

#define PID (FAKE_PID + 30)
#define CG_REL "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"

static char mnt[PATH_MAX + 8], proc[PATH_MAX + 8];

/* The fake hierarchy and PID's /proc/PID/cgroup; the cgroup's id. */
static uint64_t make_tree(void)
{
	char p[3 * PATH_MAX];
	struct stat st;
	FILE *f;

	snprintf(mnt, sizeof(mnt), "%s/cg", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	mkdir(mnt, 0755);
	mkdir(proc, 0755);
	snprintf(p, sizeof(p), "%s/system.slice", mnt);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s%s", mnt, CG_REL);
	if (mkdir(p, 0755) && errno != EEXIST)
		return 0;
	if (stat(p, &st))
		return 0;
	snprintf(p, sizeof(p), "%s/%u", proc, PID);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%u/cgroup", proc, PID);
	f = fopen(p, "w");
	if (!f)
		return 0;
	fprintf(f, "0::%s\n", CG_REL);
	fclose(f);
	return (uint64_t)st.st_ino;
}

static int feed_cg(struct rec *r, uint64_t cg, uint64_t ts)
{
	const uint64_t ips[] = { K_ONE };
	struct bpfsym_sample s;
	size_t len = sample(&s, PID, ts, ips, 1, 0);

	s.cgroup_id = cg;
	return feed(r, &s, len);
}

static void test_records(void)
{
	struct cgpaths_opts o = { .mount = mnt, .proc = proc };
	char pt[PATH_MAX + 32], err[256];
	struct report_writer *tap = NULL;
	struct report *rt = NULL;
	uint64_t cg = make_tree();
	struct rec r;
	int i;

	if (!ASSERT_TRUE(cg != 0, "the fake hierarchy"))
		return;
	watch_cgroups = cgpaths__new(&o);
	if (!ASSERT_OK_PTR(watch_cgroups, "cgpaths__new") || !rec_open(&r, "cg", true))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	for (i = 0; i < 3; i++)
		ASSERT_OK(feed_cg(&r, cg, START_NS + 10), "a sample in the container");
	/* An id in no directory: the sample keeps it bare. */
	ASSERT_OK(feed_cg(&r, 77, START_NS + 11), "a sample in an unknown cgroup");
	snprintf(pt, sizeof(pt), "%s/cgtap.data", dir);
	tap = report_writer__open(pt, &r.hdr);
	if (!ASSERT_OK_PTR(tap, "tap") || !ASSERT_OK(ingest__add_writer(r.in, tap), "add the tap"))
		goto out;
	for (i = 0; i < 2; i++)
		ASSERT_OK(feed_cg(&r, cg, START_NS + 20), "to the file and the tap");
	ASSERT_OK(ingest__remove_writer(r.in, tap), "remove the tap");
	ASSERT_OK(report_writer__close(tap, &r.hdr), "close the tap");
	tap = NULL;
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(report__nr_samples(r.rpt), (size_t)6, "samples");
	ASSERT_EQ(report__nr_cgroups(r.rpt), (size_t)1, "one CGROUP record");
	ASSERT_STREQ(report__cgroup_path(r.rpt, cg), CG_REL, "its path");
	ASSERT_NULL(report__cgroup_path(r.rpt, 77), "the unknown id");
	ASSERT_EQ(report__sample(r.rpt, 3)->cgroup, (uint64_t)77, "kept bare");
	rt = report__open(pt, err, sizeof(err));
	if (ASSERT_OK_PTR(rt, err)) {
		ASSERT_EQ(report__nr_samples(rt), (size_t)2, "the tap's samples");
		ASSERT_STREQ(report__cgroup_path(rt, cg), CG_REL, "the tap names it too");
	}
	ASSERT_EQ(cgpaths__stats(watch_cgroups)->by_proc, (uint64_t)1, "resolved once, from /proc");
out:
	report__free(rt);
	if (tap)
		report_writer__abort(tap);
	unlink(pt);
	rec_close(&r);
	cgpaths__free(watch_cgroups);
	watch_cgroups = NULL;
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_records);
	cleanup();
	return TEST_EXIT();
}
