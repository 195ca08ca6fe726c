// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * base/outfile: what a file system says of the names it made and refused
 * (fstatat, readlink, the bytes read back), in a scratch directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "base/outfile.h"

static char dir[PATH_MAX];
static int dfd = -1;

static void scratch(void)
{
	const char *top = getenv("BPFSYM_TEST_TMP");

	snprintf(dir, sizeof(dir), "%s/test_outfile.XXXXXX", top && *top ? top : "/tmp");
	if (!mkdtemp(dir))
		abort();
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void put(const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

/* The bytes of @name (a link followed), "" when it cannot be read. */
static const char *text_of(const char *name)
{
	static char buf[128];
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool is_link(const char *name)
{
	struct stat st;

	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
}

static void test_outdir_split(void)
{
	char name[OUTFILE_NAME_MAX];
	int fd;

	ASSERT_OK(outdir__open("a.data", &fd, name, sizeof(name)), "a bare name");
	ASSERT_STREQ(name, "a.data", "its name");
	close(fd);
	ASSERT_OK(outdir__open("/tmp/x", &fd, name, sizeof(name)), "/tmp/x");
	ASSERT_STREQ(name, "x", "its name");
	close(fd);
	ASSERT_EQ(outdir__open("/tmp/", &fd, name, sizeof(name)), -EISDIR, "a directory");
	ASSERT_EQ(outdir__open("..", &fd, name, sizeof(name)), -EISDIR, "..");
	ASSERT_EQ(outdir__open("/nonexistent-dir-of-test/x", &fd, name, sizeof(name)), -ENOENT,
		  "a missing directory");
	ASSERT_EQ(fd, -1, "no fd then");
}

static void test_create_refuses(void)
{
	struct outfile of;
	struct stat st;
	mode_t old = umask(0);

	ASSERT_OK(outfile__create(dfd, "new", 0, &of), "a new name");
	umask(old);
	ASSERT_OK(fstat(of.fd, &st), "fstat");
	ASSERT_EQ(st.st_mode & 07777, 0600u, "0600 under umask 0");
	close(outfile__take(&of));

	put("old", "older\n");
	ASSERT_EQ(outfile__create(dfd, "old", 0, &of), -EEXIST, "an existing file");
	ASSERT_STREQ(text_of("old"), "older\n", "left as it was");
	ASSERT_EQ(of.fd, -1, "no fd");

	/* A dangling link: O_CREAT alone would create its target. */
	ASSERT_OK(symlinkat("target", dfd, "dangling"), "symlink");
	ASSERT_EQ(outfile__create(dfd, "dangling", 0, &of), -EEXIST, "a dangling link");
	ASSERT_EQ(faccessat(dfd, "target", F_OK, AT_SYMLINK_NOFOLLOW), -1, "its target not created");
}

static void test_force_replaces_link(void)
{
	struct outfile of;
	struct stat st;

	put("victim", "keep\n");
	ASSERT_OK(symlinkat("victim", dfd, "link"), "symlink");
	ASSERT_OK(outfile__create(dfd, "link", OUTFILE_FORCE, &of), "-f over a link");
	ASSERT_TRUE(of.tmp[0] != '\0', "a temporary name until committed");
	ASSERT_TRUE(is_link("link"), "the link still there before the commit");
	ASSERT_EQ(write(of.fd, "new\n", 4), 4, "write");
	ASSERT_OK(outfile__commit(dfd, "link", &of), "commit");
	ASSERT_FALSE(is_link("link"), "the link replaced");
	ASSERT_STREQ(text_of("link"), "new\n", "by the new file");
	ASSERT_STREQ(text_of("victim"), "keep\n", "its target untouched");
	ASSERT_OK(outfile__is(dfd, "link", &of), "the name is the file made");
	ASSERT_OK(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW), "stat");
	ASSERT_EQ(st.st_mode & 07777, 0600u, "0600");
	close(outfile__take(&of));
}

static void test_discard_only_ours(void)
{
	struct outfile of;

	ASSERT_OK(outfile__create(dfd, "mine", 0, &of), "create");
	close(outfile__take(&of));
	/* Moved away and another file put at the name since: discard leaves that one. */
	ASSERT_OK(renameat(dfd, "mine", dfd, "mine.moved"), "rename");
	put("mine", "theirs\n");
	ASSERT_EQ(outfile__is(dfd, "mine", &of), -ESTALE, "another file at the name");
	outfile__discard(dfd, "mine", &of);
	ASSERT_STREQ(text_of("mine"), "theirs\n", "theirs kept");

	ASSERT_OK(outfile__create(dfd, "mine2", 0, &of), "create");
	outfile__discard(dfd, "mine2", &of);
	ASSERT_EQ(faccessat(dfd, "mine2", F_OK, AT_SYMLINK_NOFOLLOW), -1, "ours removed");
	ASSERT_EQ(of.fd, -1, "and closed");
}

static void test_rename_new(void)
{
	put("from", "a\n");
	put("to", "b\n");
	ASSERT_EQ(outfile__rename_new(dfd, "from", "to"), -EEXIST, "a taken name");
	ASSERT_STREQ(text_of("to"), "b\n", "not replaced");
	ASSERT_STREQ(text_of("from"), "a\n", "nothing moved");
	ASSERT_OK(symlinkat("victim", dfd, "to2"), "symlink");
	ASSERT_EQ(outfile__rename_new(dfd, "from", "to2"), -EEXIST, "a link at the name");
	ASSERT_OK(outfile__rename_new(dfd, "from", "to3"), "a free name");
	ASSERT_STREQ(text_of("to3"), "a\n", "moved");
}

static void test_special(void)
{
	struct outfile of;

	ASSERT_OK(symlinkat("/dev/null", dfd, "null"), "symlink");
	/* Our own link to a device: written in place, no file made. */
	ASSERT_OK(outfile__create(dfd, "null", OUTFILE_SPECIAL, &of), "our link to /dev/null");
	ASSERT_TRUE(of.special, "written in place");
	ASSERT_TRUE(is_link("null"), "the link stays");
	outfile__discard(dfd, "null", &of);
	ASSERT_TRUE(is_link("null"), "a device is never removed");
	/* Without OUTFILE_SPECIAL it is a name like any other. */
	ASSERT_EQ(outfile__create(dfd, "null", 0, &of), -EEXIST, "refused without SPECIAL");
	put("plain", "x\n");
	ASSERT_EQ(outfile__open_special(dfd, "plain", &of), 1, "a regular file is not special");
	if (geteuid() == 0) {
		/* Another user's link to a device: not followed. */
		ASSERT_OK(fchownat(dfd, "null", 65534, 65534, AT_SYMLINK_NOFOLLOW), "lchown");
		ASSERT_EQ(outfile__open_special(dfd, "null", &of), -EPERM, "another user's link");
	}
}

int main(void)
{
	scratch();
	if (dfd < 0)
		return 1;
	RUN_TEST(test_outdir_split);
	RUN_TEST(test_create_refuses);
	RUN_TEST(test_force_replaces_link);
	RUN_TEST(test_discard_only_ours);
	RUN_TEST(test_rename_new);
	RUN_TEST(test_special);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "test_outfile: '%s' not removed\n", dir);
	}
	return TEST_EXIT();
}
