// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgpaths: a cgroup id to its path, over a hierarchy and a /proc built in
 * a temporary directory (any file system: the id is the directory's inode,
 * as in cgroup2fs).  Resolved from /proc/PID/cgroup when the process is
 * still in that cgroup, else by a walk no more often than the rescan
 * interval; the cache is bounded; the counters say which way each went.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "model/cgpaths.h"

TEST_SUITE("cgpaths");

static char top[PATH_MAX], mnt[PATH_MAX], proc[PATH_MAX];

static uint64_t mkcg(const char *rel)
{
	char p[PATH_MAX * 2];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", mnt, rel);
	if (mkdir(p, 0755) && errno != EEXIST)
		return 0;
	return stat(p, &st) ? 0 : (uint64_t)st.st_ino;
}

static void mkproc(uint32_t pid, const char *cg)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%u", proc, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%u/cgroup", proc, pid);
	f = fopen(p, "w");
	if (f) {
		/* A hybrid machine's file: v1 lines first. */
		fprintf(f, "12:pids:/whatever\n1:name=systemd:%s\n0::%s\n", cg, cg);
		fclose(f);
	}
}

static bool setup(void)
{
	const char *dir = getenv("BPFSYM_TEST_TMP");

	snprintf(top, sizeof(top), "%s/test_cgpaths.%d", dir && *dir ? dir : "/tmp", (int)getpid());
	test__fmt(mnt, sizeof(mnt), "%s/cg", top);
	test__fmt(proc, sizeof(proc), "%s/proc", top);
	return ASSERT_OK(mkdir(top, 0755), top) && ASSERT_OK(mkdir(mnt, 0755), mnt) &&
	       ASSERT_OK(mkdir(proc, 0755), proc);
}

static void test_resolve(void)
{
	struct cgpaths_opts o = { .mount = mnt, .proc = proc, .rescan_ns = 1000 };
	uint64_t sys, dock, sess, gone, late;
	const struct cgpaths_stats *st;
	struct cgpaths *c;

	sys = mkcg("/system.slice");
	dock = mkcg("/system.slice/docker-abc.scope");
	sess = mkcg("/user.slice");
	sess = mkcg("/user.slice/session-3.scope");
	if (!ASSERT_TRUE(sys && dock && sess, "hierarchy"))
		return;
	mkproc(100, "/system.slice/docker-abc.scope");
	/* Process 200 says it is in docker-abc, but its sample's cgroup is session-3: it moved. */
	mkproc(200, "/system.slice/docker-abc.scope");
	c = cgpaths__new(&o);
	if (!ASSERT_OK_PTR(c, "cgpaths__new"))
		return;
	st = cgpaths__stats(c);
	ASSERT_STREQ(cgpaths__lookup(c, dock, 100, 10), "/system.slice/docker-abc.scope", "from /proc");
	ASSERT_EQ(st->by_proc, (uint64_t)1, "by /proc");
	ASSERT_STREQ(cgpaths__lookup(c, dock, 999, 11), "/system.slice/docker-abc.scope", "cached");
	ASSERT_EQ(st->misses, (uint64_t)1, "one miss");
	ASSERT_STREQ(cgpaths__lookup(c, sess, 200, 12), "/user.slice/session-3.scope", "moved: walked");
	ASSERT_EQ(st->walks, (uint64_t)1, "one walk");
	ASSERT_EQ(st->by_walk, (uint64_t)1, "by the walk");
	/* A cgroup made after the walk, its process gone: not before the interval. */
	gone = mkcg("/system.slice/late.scope");
	ASSERT_NULL(cgpaths__lookup(c, gone, 300, 500), "rate-limited");
	ASSERT_NULL(cgpaths__lookup(c, gone, 300, 900), "still rate-limited");
	ASSERT_EQ(st->walks, (uint64_t)1, "no second walk yet");
	ASSERT_STREQ(cgpaths__lookup(c, gone, 300, 1012), "/system.slice/late.scope", "the next walk");
	ASSERT_EQ(st->walks, (uint64_t)2, "two walks");
	ASSERT_STREQ(cgpaths__lookup(c, mkcg(""), 300, 5000), "/", "the root");
	ASSERT_NULL(cgpaths__lookup(c, 0, 100, 6000), "id 0");
	/* An id nowhere: walks back off while they find nothing. */
	ASSERT_NULL(cgpaths__lookup(c, 1, 100, 7000), "an id nowhere");
	ASSERT_EQ(st->walks, (uint64_t)4, "walked for it");
	ASSERT_NULL(cgpaths__lookup(c, 1, 100, 8500), "within twice the interval");
	ASSERT_EQ(st->walks, (uint64_t)4, "no walk");
	ASSERT_NULL(cgpaths__lookup(c, 1, 100, 9000), "after twice the interval");
	ASSERT_EQ(st->walks, (uint64_t)5, "a walk");
	ASSERT_NULL(cgpaths__lookup(c, 1, 100, 12000), "within four times");
	ASSERT_EQ(st->walks, (uint64_t)5, "no walk");
	/* An unknown id asks /proc again once per interval, not per sample. */
	late = mkcg("/system.slice/later.scope");
	ASSERT_NULL(cgpaths__lookup(c, late, 600, 12100), "no process, no walk yet");
	mkproc(600, "/system.slice/later.scope");
	ASSERT_NULL(cgpaths__lookup(c, late, 600, 12200), "/proc not asked again yet");
	ASSERT_STREQ(cgpaths__lookup(c, late, 600, 13100), "/system.slice/later.scope", "asked again");
	ASSERT_EQ(st->by_proc, (uint64_t)2, "by /proc");
	/* Outside our cgroup namespace: "/../x" is not followed out of the mount. */
	late = mkcg("/ns.scope");
	mkproc(700, "/../ns.scope");
	ASSERT_STREQ(cgpaths__lookup(c, late, 700, 13200), "/ns.scope", "found by the walk instead");
	ASSERT_EQ(st->by_proc, (uint64_t)2, "not by /proc");
	cgpaths__free(c);
	cgpaths__free(NULL);
}

static void test_bounded(void)
{
	struct cgpaths_opts o = { .mount = mnt, .proc = proc, .cap = 8, .rescan_ns = 1 };
	const struct cgpaths_stats *st;
	struct cgpaths *c;
	uint64_t ids[40];
	char rel[64];
	int i, ok = 0;

	mkcg("/many");
	for (i = 0; i < 40; i++) {
		snprintf(rel, sizeof(rel), "/many/c%d", i);
		ids[i] = mkcg(rel);
	}
	c = cgpaths__new(&o);
	if (!ASSERT_OK_PTR(c, "cgpaths__new"))
		return;
	st = cgpaths__stats(c);
	for (i = 0; i < 40; i++) {
		const char *p = cgpaths__lookup(c, ids[i], 0, (uint64_t)i * 10);

		snprintf(rel, sizeof(rel), "/many/c%d", i);
		ok += p && !strcmp(p, rel);
	}
	ASSERT_EQ(ok, 40, "every one found by a walk");
	ASSERT_EQ(st->cached, (size_t)8, "the cap");
	ASSERT_EQ(st->evictions, (uint64_t)32, "evictions");
	cgpaths__free(c);
}

static void test_no_mount(void)
{
	struct cgpaths_opts o = { .mount = "/nonexistent-cgroup-mount", .proc = proc };
	struct cgpaths *c = cgpaths__new(&o);

	/* A mount that vanished: every lookup misses, nothing breaks. */
	if (ASSERT_OK_PTR(c, "cgpaths__new"))
		ASSERT_NULL(cgpaths__lookup(c, 12345, 1, 1), "no hierarchy");
	cgpaths__free(c);
}

/* The "0::" line of /proc/PID/cgroup text: the first one decides, up to its line feed. */
static void test_proc_v2(void)
{
	const char *path = NULL;
	size_t len = 0;

	if (ASSERT_OK(cgpaths__proc_v2("12:pids:/x\n1:name=systemd:/y\n0::/a/b\n", &path, &len), "hybrid"))
		ASSERT_TRUE(len == 4 && !strncmp(path, "/a/b", 4), "the v2 path");
	if (ASSERT_OK(cgpaths__proc_v2("0::/last", &path, &len), "no final line feed"))
		ASSERT_TRUE(len == 5 && !strcmp(path, "/last"), "to the end");
	if (ASSERT_OK(cgpaths__proc_v2("0::\n0::/a\n", &path, &len), "an empty first"))
		ASSERT_EQ(len, (size_t)0, "the first line decides");
	ASSERT_EQ(cgpaths__proc_v2("1:cpu:/x\n10::/y\n", &path, &len), -ENOENT, "v1 only");
	ASSERT_EQ(cgpaths__proc_v2("", &path, &len), -ENOENT, "empty");
}

/* cgroup2 mounts at their root, in order; others skipped. */
static void test_mountinfo(void)
{
	char text[] =
		"22 1 0:21 / /proc rw - proc proc rw\n"
		"30 25 0:26 /sub /mnt/sub rw - cgroup2 cgroup2 rw\n"
		"31 25 0:27 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw\n"
		"32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
		"33 25 0:29 / /mnt/two rw - cgroup2 none rw\n"
		"35 25 0:31 / /mnt/a\\040b\\134c\\0111 rw - cgroup2 none rw\n"
		"34 25 0:30 - cgroup2 x rw\n";
	char mp[CGPATHS_MOUNT_MAX], *save = NULL;

	if (ASSERT_TRUE(cgpaths__next_cgroup2(text, &save, mp), "first"))
		ASSERT_STREQ(mp, "/sys/fs/cgroup", "not the one mounted at /sub");
	if (ASSERT_TRUE(cgpaths__next_cgroup2(text, &save, mp), "second"))
		ASSERT_STREQ(mp, "/mnt/two", "past the v1 line");
	if (ASSERT_TRUE(cgpaths__next_cgroup2(text, &save, mp), "third"))
		ASSERT_STREQ(mp, "/mnt/a b\\134c\t1", "mountinfo's escapes of whitespace undone");
	ASSERT_FALSE(cgpaths__next_cgroup2(text, &save, mp), "a line without its root and mount point is none");
	ASSERT_FALSE(cgpaths__next_cgroup2(text, &save, mp), "still none");
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	if (!setup())
		return 1;
	RUN_TEST(test_resolve);
	RUN_TEST(test_bounded);
	RUN_TEST(test_no_mount);
	RUN_TEST(test_proc_v2);
	RUN_TEST(test_mountinfo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd))
		fprintf(stderr, "test_cgpaths: cannot remove %s\n", top);
	return TEST_EXIT();
}
