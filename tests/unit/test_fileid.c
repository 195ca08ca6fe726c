// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fileid: the light build-id reader agrees with elfsym and survives
 * truncated and lying files; the fd cache stays within its cap and closes
 * the least recently used fd; files other users write are opened only by
 * the rule for them (fileid__open_owned).  The fixture is built from C at test time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"

TEST_SUITE("fileid");

static char dir[PATH_MAX / 2];
static char lib_path[PATH_MAX];
static uint8_t want[FILEID_BUILD_ID_MAX];	/* the fixture's build-id, as elfsym reads it */
static size_t want_len;
static unsigned char *lib;			/* the fixture's bytes */
static size_t lib_size;

/*
 * fileid__open_owned(), the rule for files another user writes for us
 * (perf maps, jitdumps): its own regular file, yes; through a symlink (to
 * that same file), not writable by others, or another owner's: no.
 */
static void test_open_owned(void)
{
	char tmpl[] = "/tmp/bpfsym-owned.XXXXXX", path[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int fd;

	if (!ASSERT_OK_PTR(mkdtemp(tmpl), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/perf-1.map", tmpl);
	snprintf(link, sizeof(link), "%s/perf-2.map", tmpl);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (ASSERT_TRUE(fd >= 0, "create") && ASSERT_EQ(write(fd, "1 2 f\n", 6), 6, "write"))
		close(fd);
	ASSERT_OK(symlink(path, link), "symlink");
	fd = fileid__open_owned(AT_FDCWD, path, geteuid(), false, &st);
	ASSERT_TRUE(fd >= 0, "the owner's regular file");
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(fileid__open_owned(AT_FDCWD, link, geteuid(), false, &st), -ELOOP, "a symlink to it");
	ASSERT_EQ(fileid__open_owned(AT_FDCWD, path, geteuid() + 1, false, &st), -EPERM,
		  "another owner");
	fd = fileid__open_owned(AT_FDCWD, path, geteuid() + 1, true, &st);
	ASSERT_EQ(fd >= 0, geteuid() == 0, "another owner, or root: only root's passes");
	if (fd >= 0)
		close(fd);
	ASSERT_OK(chmod(path, 0646), "chmod o+w");
	ASSERT_EQ(fileid__open_owned(AT_FDCWD, path, geteuid(), false, &st), -EPERM,
		  "writable by others");
	unlink(link);
	unlink(path);
	rmdir(tmpl);
}

static int run(const char *cmd)
{
	int st = system(cmd);

	if (st)
		printf("     '%s' exited with status %d\n", cmd, st);
	return st;
}

/* fileid__build_id() of @len bytes of @data written to a file. */
static int build_id_of(const void *data, size_t len, uint8_t *id, size_t *id_len)
{
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/probe", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write(fd, data, len) == (ssize_t)len ? 0 : -EIO;
	if (!err)
		err = fileid__build_id(fd, id, id_len);
	close(fd);
	return err;
}

static void test_agrees_with_elfsym(void)
{
	uint8_t id[FILEID_BUILD_ID_MAX];
	size_t len = 99;
	int fd = open(lib_path, O_RDONLY | O_CLOEXEC);

	if (!ASSERT_TRUE(fd >= 0, "open"))
		return;
	/* The offset is not used: a read position elsewhere changes nothing. */
	lseek(fd, 100, SEEK_SET);
	ASSERT_OK(fileid__build_id(fd, id, &len), "build-id");
	ASSERT_EQ(len, want_len, "length");
	ASSERT_TRUE(len == want_len && !memcmp(id, want, len), "the bytes elfsym reads");
	close(fd);
}

/* Truncated anywhere: no crash, and never a wrong build-id. */
static void test_truncated(void)
{
	size_t cuts[] = { 0, 8, 16, 63, 64, 256, 512, lib_size / 2, lib_size * 3 / 4, lib_size - 1 };
	uint8_t id[FILEID_BUILD_ID_MAX];
	size_t i, len;
	int err;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		len = 0;
		err = build_id_of(lib, cuts[i], id, &len);
		if (!ASSERT_TRUE(err == 0 || err == -ENOEXEC, "0 or -ENOEXEC"))
			printf("     cut at %zu: %d\n", cuts[i], err);
		if (len)
			ASSERT_TRUE(len == want_len && !memcmp(id, want, len), "a right build-id or none");
	}
	ASSERT_EQ(build_id_of("#!/bin/sh\necho not elf\n", 23, id, &len), -ENOEXEC, "not ELF");
}

/* Notes whose sizes lie: the build-id is not taken, nothing is read out of bounds. */
static void test_lying_notes(void)
{
	unsigned char *copy = malloc(lib_size);
	uint8_t id[FILEID_BUILD_ID_MAX];
	unsigned char *note = NULL;
	size_t i, len;
	uint32_t v;

	if (!ASSERT_OK_PTR(copy, "malloc"))
		return;
	/* namesz 4, descsz, type 3, "GNU\0", then the build-id. */
	for (i = 0; i + 16 + want_len <= lib_size; i++) {
		if (!memcmp(lib + i + 12, "GNU", 4) && !memcmp(lib + i + 16, want, want_len)) {
			note = lib + i;
			break;
		}
	}
	if (!ASSERT_OK_PTR(note, "the build-id note"))
		goto out;
	i = (size_t)(note - lib);
	for (v = 0; v < 5; v++) {
		/* 60: a plausible size, past the end of the note's area. */
		static const uint32_t descsz[] = { 0, 60, FILEID_BUILD_ID_MAX + 1, 0x10000, 0xffffffff };

		memcpy(copy, lib, lib_size);
		memcpy(copy + i + 4, &descsz[v], 4);
		ASSERT_OK(build_id_of(copy, lib_size, id, &len), "read");
		ASSERT_EQ(len, (size_t)0, "no build-id from a lying note");
	}
	memcpy(copy, lib, lib_size);
	v = 0xfffffff0;
	memcpy(copy + i, &v, 4);	/* namesz past the area */
	ASSERT_OK(build_id_of(copy, lib_size, id, &len), "read");
	ASSERT_EQ(len, (size_t)0, "namesz past the area");
out:
	free(copy);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_fd_cache(void)
{
	struct fd_cache c = { .cap = 2 };
	struct fd_slot a, b, d;
	int fa, fb, fd;

	fd_slot__init(&a);
	fd_slot__init(&b);
	fd_slot__init(&d);
	fa = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fb = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(fa >= 0 && fb >= 0 && fd >= 0, "open"))
		return;
	fd_cache__put(&c, &a, fa);
	fd_cache__put(&c, &b, fb);
	fd_cache__touch(&c, &a);	/* b is now the least recently used */
	fd_cache__put(&c, &d, fd);
	ASSERT_EQ(c.nr, (size_t)2, "at the cap");
	ASSERT_EQ(b.fd, -1, "the least recently used slot lost its fd");
	ASSERT_FALSE(fd_open(fb), "and that fd is closed");
	ASSERT_TRUE(a.fd == fa && fd_open(fa), "the touched one stays");
	ASSERT_TRUE(d.fd == fd && fd_open(fd), "the new one stays");
	fd_cache__drop(&c, &b);		/* no fd: nothing happens */
	fd_cache__drop(&c, &a);
	fd_cache__drop(&c, &d);
	ASSERT_EQ(c.nr, (size_t)0, "empty");
	ASSERT_FALSE(fd_open(fa) || fd_open(fd), "all closed");
}

/*
 * Build the fixture; 0, or -1 with TEST_SETUP_SKIP (no cc) or
 * TEST_SETUP_FAIL (anything else: cc's error when it failed) done.
 */
static int setup(void)
{
	char src[PATH_MAX + 16], log[PATH_MAX + 16], cmd[4 * PATH_MAX], err[512];
	const char *base = getenv("BPFSYM_TEST_TMP");
	const uint8_t *id;
	struct elfsym *es;
	struct stat st;
	FILE *f;
	int fd;

	if (!test__have("cc")) {
		TEST_SETUP_SKIP("'cc' not found: no fixture");
		return -1;
	}
	if (!base || !*base || strchr(base, '\'') || strlen(base) > sizeof(dir) - 32)
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/bpfsym-fileid.XXXXXX", base);
	if (!mkdtemp(dir)) {
		TEST_SETUP_FAIL("mkdtemp in '%s': %s", base, strerror(errno));
		dir[0] = 0;
		return -1;
	}
	snprintf(src, sizeof(src), "%s/lib.c", dir);
	snprintf(lib_path, sizeof(lib_path), "%s/lib.so", dir);
	f = fopen(src, "w");
	if (!f || fputs("int fx_one(int x) { return x * 3; }\n", f) < 0 || fclose(f)) {
		TEST_SETUP_FAIL("cannot write %s", src);
		return -1;
	}
	snprintf(log, sizeof(log), "%s/build.log", dir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -fPIC -shared -Wl,--build-id=sha1 -o '%s' '%s' > '%s' 2>&1",
		 lib_path, src, log);
	if (run(cmd)) {
		TEST_SETUP_FAIL("cannot build the fixture: %s", test__build_error(log, err, sizeof(err)));
		return -1;
	}
	es = elfsym__open(lib_path, NULL);
	id = es ? elfsym__build_id(es, &want_len) : NULL;
	if (id)
		memcpy(want, id, want_len);
	elfsym__free(es);
	fd = open(lib_path, O_RDONLY | O_CLOEXEC);
	if (!id || fd < 0 || fstat(fd, &st)) {
		TEST_SETUP_FAIL("the fixture %s: %s", lib_path, !id ? "elfsym finds no build-id" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	lib_size = (size_t)st.st_size;
	lib = malloc(lib_size);
	if (!lib || read(fd, lib, lib_size) != (ssize_t)lib_size) {
		TEST_SETUP_FAIL("cannot read the fixture %s", lib_path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	/* A setup that fails (or skips) reports so for the three tests using it. */
	setup();
	RUN_TEST(test_agrees_with_elfsym);
	RUN_TEST(test_truncated);
	RUN_TEST(test_lying_notes);
	TEST_SETUP_CLEAR();
	RUN_TEST(test_fd_cache);
	RUN_TEST(test_open_owned);
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	free(lib);
	return TEST_EXIT();
}
