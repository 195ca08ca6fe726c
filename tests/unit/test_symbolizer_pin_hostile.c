// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer__pin on what a hostile process maps: paths that escape its
 * root, things that are not regular files (refused without blocking),
 * memfds (a JIT's too) and a file truncated under its mapping.
 */
#include "pin_fixture.h"

TEST_SUITE("symbolizer_pin_hostile");

/* No way out of the process's root: absolute and ".." symlinks, /proc magic links. */
static void test_pin_escape(void)
{
	char root[PATH_MAX], esc[PATH_MAX], host[PATH_MAX], cmd[8 * PATH_MAX], paths[3][PATH_MAX];
	const char *procs[3] = { esc, esc, host };
	uint32_t pid = (uint32_t)getpid();
	struct symbolizer *s;
	struct sym_frame f;
	struct fmap fm;
	int i, fd = -1;

	if (!fmap_open(&fm, fx_path))
		return;
	/* In a container root: DIR/abs.so -> FIXTURE, /up/rel.so -> ../../(...)/FIXTURE. */
	snprintf(root, sizeof(root), "%s/r_escape", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s' '%s/up' && ln -s '%s' '%s%s/abs.so' && "
		 "ln -s '../../../../../../../../../..%s' '%s/up/rel.so'",
		 root, dir, root, fx_path, root, dir, fx_path, root);
	snprintf(paths[0], sizeof(paths[0]), "%s/abs.so", dir);
	snprintf(paths[1], sizeof(paths[1]), "/up/rel.so");
	/* In the host's root, /proc/self/fd/N is the very file: only a magic link gets there. */
	fd = open(fx_path, O_RDONLY | O_CLOEXEC);
	snprintf(paths[2], sizeof(paths[2]), "/proc/self/fd/%d", fd);
	if (run(cmd) || !ASSERT_TRUE(fd >= 0, "open") ||
	    !fake_proc(esc, sizeof(esc), "p_escape", pid, root) ||
	    !fake_proc(host, sizeof(host), "p_host", pid, "/"))
		goto out;
	for (i = 0; i < 3; i++) {
		fm.m.path = paths[i];
		s = new_sym(procs[i], 0, 0);
		if (!ASSERT_OK_PTR(s, "new"))
			break;
		ASSERT_TRUE(symbolizer__pin(s, pid, 0, &fm.m) < 0, paths[i]);
		sym_alpha(s, pid, &fm, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, paths[i]);
		ASSERT_NULL(f.sym, "never the host file's names");
		symbolizer__free(s);
	}
out:
	if (fd >= 0)
		close(fd);
	fmap_close(&fm);
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL symbolizer_pin/test_pin_not_files: blocked opening a non-file\n";

	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

/* FIFO, socket, device, directory, empty file as the mapped "file": refused, not blocked. */
static void test_pin_not_files(void)
{
	static const char *const names[] = { "fifo", "sock", "null", "dir", "empty" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint32_t pid = (uint32_t)getpid();
	char path[PATH_MAX], proc[PATH_MAX];
	struct symbolizer *s = NULL;
	struct fmap fe = {};
	struct sym_frame f;
	int sock = -1;
	size_t i;

	snprintf(path, sizeof(path), "%s/nf_fifo", dir);
	if (!ASSERT_OK(mkfifo(path, 0600), "mkfifo"))
		return;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/nf_sock", dir);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(path, sizeof(path), "%s/nf_dir", dir);
	if (!ASSERT_TRUE(sock >= 0, "socket") ||
	    !ASSERT_OK(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(mkdir(path, 0755), "mkdir") ||
	    !fake_proc(proc, sizeof(proc), "p_nf", pid, "/"))
		goto out;
	snprintf(path, sizeof(path), "%s/nf_empty", dir);
	if (!ASSERT_OK(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), "empty file") ||
	    !fmap_open(&fe, path))
		goto out;
	/* A blocking open fails the test instead of hanging it. */
	signal(SIGALRM, on_alarm);
	alarm(10);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct mapping m = { .start = 0x10000, .end = 0x11000, .kind = MAPPING_FILE };
		struct stat st;

		if (!strcmp(names[i], "null"))
			snprintf(path, sizeof(path), "/dev/null");
		else
			snprintf(path, sizeof(path), "%s/nf_%s", dir, names[i]);
		if (!ASSERT_OK(stat(path, &st), path))
			continue;
		m.dev = st.st_dev;
		m.ino = st.st_ino;
		m.path = path;
		s = new_sym(proc, 0, 0);
		if (!ASSERT_OK_PTR(s, "new"))
			break;
		ASSERT_EQ(symbolizer__pin(s, pid, 0, &m), -ENOEXEC, path);
		symbolizer__user_mapping(s, pid, &m, 0x10010, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, path);
		symbolizer__free(s);
		s = NULL;
	}
	/* The empty file really mapped, through map_files. */
	s = new_sym(NULL, 0, 0);
	if (ASSERT_OK_PTR(s, "new"))
		ASSERT_EQ(symbolizer__pin(s, pid, 0, &fe.m), -ENOEXEC, "empty, mapped");
	alarm(0);
out:
	symbolizer__free(s);
	fmap_close(&fe);
	if (sock >= 0)
		close(sock);
}

/* A memfd (a "/memfd:x (deleted)" mapping) is read through map_files while mapped. */
static void test_pin_memfd(void)
{
	char buf[4096], path[64];
	struct symbolizer *s = NULL;
	struct sym_frame f;
	struct fmap fm = {};
	int mfd, src = -1;
	ssize_t n;

	if (!map_files_ok) {
		test__skip("/proc/self/map_files refuses us");
		return;
	}
	mfd = memfd_create("fxmem", MFD_CLOEXEC);
	src = open(fx_path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(mfd >= 0 && src >= 0, "memfd, fixture"))
		goto out;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (!ASSERT_EQ(write(mfd, buf, (size_t)n), n, "write"))
			goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	if (!fmap_open(&fm, path))
		goto out;
	close(mfd);
	mfd = -1;
	ASSERT_TRUE(!strncmp(fm.path, "/memfd:fxmem", 12), "a memfd mapping");
	s = new_sym(NULL, 0, 0);
	if (!ASSERT_OK_PTR(s, "new"))
		goto out;
	ASSERT_OK(symbolizer__pin(s, (uint32_t)getpid(), 0, &fm.m), "pin");
	sym_alpha(s, (uint32_t)getpid(), &fm, &f);
	ASSERT_STREQ(f.sym, "fx_alpha", "memfd name");
out:
	symbolizer__free(s);
	fmap_close(&fm);
	if (mfd >= 0)
		close(mfd);
	if (src >= 0)
		close(src);
}

/*
 * quality.md case 8: the file is truncated after it was pinned, before its
 * symbols are read (they are read on first use).  The reader uses pread,
 * never mmap, so this is a reason, not a SIGBUS; and never a wrong name.
 * This process keeps the file mapped throughout, as the profiled one would.
 */
static void test_pin_truncated(void)
{
	static const struct { off_t len; bool gone; } cuts[] = {
		{ 64, true }, { 256, true }, { -4, false },	/* -4: three quarters */
	};
	uint32_t pid = (uint32_t)getpid();
	char path[PATH_MAX];
	struct symbolizer *s;
	struct sym_frame f;
	struct fmap fm;
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		snprintf(path, sizeof(path), "%s/libfx_trunc%zu.so", dir, i);
		if (copy(fx_path, path) || !fmap_open(&fm, path))
			return;
		s = new_sym(NULL, 0, 0);
		if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK(stat(path, &st), "stat"))
			goto next;
		ASSERT_OK(symbolizer__pin(s, pid, 0, &fm.m), "pin");
		ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)0, "symbols not read yet");
		if (!ASSERT_OK(truncate(path, cuts[i].len > 0 ? cuts[i].len : st.st_size * 3 / 4),
			       "truncate"))
			goto next;
		memset(&f, 0, sizeof(f));
		sym_alpha(s, pid, &fm, &f);
		if (cuts[i].gone) {
			ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "truncated: unreadable");
			ASSERT_NULL(f.sym, "truncated: no name");
		} else if (f.sym) {
			/* What survived of the file may still name it: only rightly. */
			ASSERT_STREQ(f.sym, "fx_alpha", "three quarters: right name or none");
		} else {
			ASSERT_NEQ(f.reason, (uint32_t)RPT_OK, "three quarters: a reason");
		}
		/* Asked again: the same answer, from what was decided. */
		sym_alpha(s, pid, &fm, &f);
		if (cuts[i].gone)
			ASSERT_NULL(f.sym, "truncated: still no name");
next:
		symbolizer__free(s);
		fmap_close(&fm);
	}
}

/*
 * quality.md case 12: a JIT's code in a memfd (no ELF at all), mapped
 * executable: a "/memfd:NAME (deleted)" module with a reason, no crash.
 */
static void test_pin_memfd_jit(void)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x5d, 0xc3 };
	uint32_t pid = (uint32_t)getpid();
	struct symbolizer *s = NULL;
	struct sym_frame f;
	struct fmap fm = {};
	char path[64];
	int mfd, err;

	if (!map_files_ok) {
		test__skip("/proc/self/map_files refuses us");
		return;
	}
	mfd = memfd_create("fxjit", MFD_CLOEXEC);
	if (!ASSERT_TRUE(mfd >= 0, "memfd") ||
	    !ASSERT_OK(ftruncate(mfd, 8192), "size") ||
	    !ASSERT_EQ(pwrite(mfd, code, sizeof(code), 4096), (ssize_t)sizeof(code), "code"))
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	if (!fmap_open(&fm, path))
		goto out;
	ASSERT_TRUE(!strncmp(fm.path, "/memfd:fxjit", 12), "a memfd mapping");
	s = new_sym(NULL, 0, 0);
	if (!ASSERT_OK_PTR(s, "new"))
		goto out;
	err = symbolizer__pin(s, pid, 0, &fm.m);
	ASSERT_TRUE(err == 0 || err == -ENOEXEC, "pin: done, or not an ELF file");
	memset(&f, 0, sizeof(f));
	symbolizer__user_mapping(s, pid, &fm.m, (uint64_t)(uintptr_t)fm.base + 4096, &f);
	ASSERT_NULL(f.sym, "no name");
	ASSERT_NEQ(f.reason, (uint32_t)RPT_OK, "a reason");
	if (ASSERT_OK_PTR(f.module, "a module"))
		ASSERT_TRUE(f.module->rpt.path && strstr(f.module->rpt.path, "memfd:fxjit"),
			    "named after the memfd");
	ASSERT_EQ(f.offset, (uint64_t)4096, "the file offset");
out:
	symbolizer__free(s);
	fmap_close(&fm);
	if (mfd >= 0)
		close(mfd);
}

int main(void)
{
	pin_setup();
	RUN_TEST(test_pin_escape);
	RUN_TEST(test_pin_not_files);
	RUN_TEST(test_pin_memfd);
	RUN_TEST(test_pin_memfd_jit);
	RUN_TEST(test_pin_truncated);
	pin_cleanup();
	return TEST_EXIT();
}
