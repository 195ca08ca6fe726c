// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer__pin: files read when they are mapped.  A pinned file still
 * symbolizes as what ran after it is deleted, replaced at its path, or its
 * process exits; copies share one symbol table; a file written in place is
 * a new version; the open files stay within their cap.  Hostile paths and
 * non-files are test_symbolizer_pin_hostile's.
 *
 * Mappings are made with mmap(PROT_READ | PROT_EXEC) of the fixtures, never
 * run, so a fixture can be rewritten under its mapping safely.  The
 * fixtures (the same library built twice under other names) are built from
 * C at test time.
 */
#include "pin_fixture.h"

TEST_SUITE("symbolizer_pin");

/* Pinned, then deleted: resolves through the fd kept; unpinned it cannot. */
static void test_pin_deleted(void)
{
	uint32_t pid = (uint32_t)getpid();
	char path[PATH_MAX], proc[PATH_MAX];
	struct symbolizer *s = NULL, *cold = NULL;
	struct sym_frame f;
	struct fmap fm;

	snprintf(path, sizeof(path), "%s/libfx_del.so", dir);
	if (copy(fx_path, path) || !fmap_open(&fm, path))
		return;
	/* The path is the only route: map_files would find a deleted file too. */
	if (!fake_proc(proc, sizeof(proc), "p_del", pid, "/"))
		goto out;
	s = new_sym(proc, 0, 0);
	cold = new_sym(proc, 0, 0);
	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(cold, "new"))
		goto out;
	ASSERT_OK(symbolizer__pin(s, pid, 0, &fm.m), "pin");
	ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)0, "symbols are loaded on first use");
	ASSERT_OK(unlink(path), "unlink");
	sym_alpha(s, pid, &fm, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "pinned, deleted");
	ASSERT_STREQ(f.sym, "fx_alpha", "name");
	if (ASSERT_OK_PTR(f.module, "module"))
		ASSERT_EQ(f.module->rpt.build_id_len, (uint32_t)20, "build-id in the identity");
	sym_alpha(cold, pid, &fm, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "not pinned: gone");
	ASSERT_NULL(f.sym, "no name");
out:
	symbolizer__free(s);
	symbolizer__free(cold);
	fmap_close(&fm);
}

/* A child pinned at its start, then gone with its file: its frames still resolve. */
static void test_pin_exited_child(void)
{
	char copy_path[PATH_MAX], buf[64] = "", maps[64];
	struct symbolizer *s = NULL, *cold = NULL;
	int in[2], out[2], status;
	const struct mapping *m;
	struct sym_frame f;
	struct proc *p;
	void *one = NULL;
	pid_t pid;
	ssize_t n;

	snprintf(copy_path, sizeof(copy_path), "%s/fx_exe_copy", dir);
	if (copy(exe_path, copy_path) || !ASSERT_OK(pipe(in), "pipe"))
		return;
	if (!ASSERT_OK(pipe(out), "pipe")) {
		close(in[0]);
		close(in[1]);
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(copy_path, copy_path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	n = pid > 0 ? read(out[0], buf, sizeof(buf) - 1) : -1;
	close(out[0]);
	s = new_sym(NULL, 0, 0);
	cold = new_sym(NULL, 0, 0);
	p = proc_table__add(pt, (uint32_t)pid, 1);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!ASSERT_TRUE(pid > 0, "fork") ||
	    !ASSERT_TRUE(n > 0 && sscanf(buf, "%p", &one) == 1, "child address") ||
	    !ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(cold, "new") || !ASSERT_OK_PTR(p, "add") ||
	    !ASSERT_TRUE(proc__load_maps(p, maps) > 0, "child maps"))
		goto reap;
	m = proc__find_mapping(p, (uint64_t)(uintptr_t)one);
	if (ASSERT_OK_PTR(m, "exe mapping"))
		ASSERT_OK(symbolizer__pin(s, (uint32_t)pid, 0, m), "pin the child's exe");
reap:
	close(in[1]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	ASSERT_OK(unlink(copy_path), "unlink");
	if (!test__failed_now && p) {
		symbolizer__user(s, (uint32_t)pid, p, (uint64_t)(uintptr_t)one + 1, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "exited and deleted, pinned");
		ASSERT_STREQ(f.sym, "fx_exe_one", "name");
		symbolizer__user(cold, (uint32_t)pid, p, (uint64_t)(uintptr_t)one + 1, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "not pinned: nothing left to read");
	}
	if (p)
		proc_table__remove(pt, (uint32_t)pid);
	symbolizer__free(s);
	symbolizer__free(cold);
}

/*
 * Pinned, then another build renamed over its path: still the original's
 * names.  Unpinned, or with its fd closed since, the file at the path is
 * another one: a mismatch, never the new file's names.  Same when the file
 * is rewritten in place (same inode, other build-id).
 */
static void test_pin_replaced(void)
{
	char path[PATH_MAX], other[PATH_MAX], inplace[PATH_MAX], proc[PATH_MAX], cmd[5 * PATH_MAX];
	struct symbolizer *s = NULL, *cold = NULL, *small = NULL;
	struct fmap fm = {}, fo = {}, fw = {};
	uint32_t pid = (uint32_t)getpid();
	struct sym_frame f;

	snprintf(path, sizeof(path), "%s/libfx_repl.so", dir);
	snprintf(other, sizeof(other), "%s/libfx_other.so", dir);
	snprintf(inplace, sizeof(inplace), "%s/libfx_inplace.so", dir);
	if (copy(fx_path, path) || copy(fx_path, other) || copy(fx_path, inplace) ||
	    !fmap_open(&fm, path) || !fmap_open(&fo, other) || !fmap_open(&fw, inplace) ||
	    !fake_proc(proc, sizeof(proc), "p_repl", pid, "/"))
		goto out;
	s = new_sym(proc, 0, 0);
	cold = new_sym(proc, 0, 0);
	/* One fd, one loaded file: pinning another closes the first's fd. */
	small = new_sym(proc, 1, 1);
	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(cold, "new") || !ASSERT_OK_PTR(small, "new"))
		goto out;
	ASSERT_OK(symbolizer__pin(s, pid, 0, &fm.m), "pin");
	ASSERT_OK(symbolizer__pin(small, pid, 0, &fm.m), "pin, small");
	ASSERT_OK(symbolizer__pin(small, pid, 0, &fo.m), "pin another, small");

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", fy_path, path, path, path);
	if (!ASSERT_OK(run(cmd), "rename another build over it"))
		goto out;
	sym_alpha(s, pid, &fm, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "pinned, replaced");
	ASSERT_STREQ(f.sym, "fx_alpha", "the original's name");
	sym_alpha(cold, pid, &fm, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_BUILD_ID_MISMATCH, "not pinned: another file");
	ASSERT_NULL(f.sym, "not the new file's name");
	sym_alpha(small, pid, &fm, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_BUILD_ID_MISMATCH, "fd closed since: another file");
	ASSERT_NULL(f.sym, "not the new file's name either");

	/* Rewritten in place, mtime unknown (a maps-text model): only the build-id tells. */
	fw.m.mtime_sec = 0;
	fw.m.mtime_nsec = 0;
	ASSERT_OK(symbolizer__pin(small, pid, 0, &fw.m), "pin, small");
	ASSERT_OK(symbolizer__pin(small, pid, 0, &fo.m), "pin another, small");
	snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", fy_path, inplace);
	if (!ASSERT_OK(run(cmd), "rewrite in place"))
		goto out;
	sym_alpha(small, pid, &fw, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_BUILD_ID_MISMATCH, "same inode, other build-id");
	ASSERT_NULL(f.sym, "not the rewritten file's name");
out:
	symbolizer__free(s);
	symbolizer__free(cold);
	symbolizer__free(small);
	fmap_close(&fm);
	fmap_close(&fo);
	fmap_close(&fw);
}

/* Copies of one build (other inodes) are other modules sharing one symbol table. */
static void test_shared_build_id(void)
{
	char p1[PATH_MAX], p2[PATH_MAX];
	struct fmap f1 = {}, f2 = {}, f3 = {};
	struct sym_frame a, b, c;
	struct symbolizer *s;

	snprintf(p1, sizeof(p1), "%s/libfx_c1.so", dir);
	snprintf(p2, sizeof(p2), "%s/libfx_c2.so", dir);
	s = new_sym(NULL, 0, 0);
	if (!ASSERT_OK_PTR(s, "new") || copy(fx_path, p1) || copy(fx_path, p2) ||
	    !fmap_open(&f1, p1) || !fmap_open(&f2, p2) || !fmap_open(&f3, fx_path))
		goto out;
	ASSERT_OK(symbolizer__pin(s, (uint32_t)getpid(), 0, &f1.m), "pin 1");
	ASSERT_OK(symbolizer__pin(s, (uint32_t)getpid(), 0, &f2.m), "pin 2");
	sym_alpha(s, (uint32_t)getpid(), &f1, &a);
	sym_alpha(s, (uint32_t)getpid(), &f2, &b);
	/* Never pinned: read at its first frame, then shared as well. */
	sym_alpha(s, (uint32_t)getpid(), &f3, &c);
	ASSERT_STREQ(a.sym, "fx_alpha", "copy 1");
	ASSERT_STREQ(b.sym, "fx_alpha", "copy 2");
	ASSERT_STREQ(c.sym, "fx_alpha", "the original");
	ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)1, "one symbol table for one build-id");
	if (!ASSERT_OK_PTR(a.module, "module") || !ASSERT_OK_PTR(b.module, "module"))
		goto out;
	ASSERT_TRUE(a.module != b.module, "one module per file");
	ASSERT_NEQ(a.module->rpt.ino, b.module->rpt.ino, "each with its inode");
	ASSERT_EQ(a.module->rpt.build_id_len, (uint32_t)20, "build-id");
	ASSERT_TRUE(a.module->rpt.build_id_len == b.module->rpt.build_id_len &&
		    !memcmp(a.module->rpt.build_id, b.module->rpt.build_id, 20), "the same build-id");
out:
	symbolizer__free(s);
	fmap_close(&f1);
	fmap_close(&f2);
	fmap_close(&f3);
}

/*
 * The same inode with another mtime is another version: another module
 * (same bytes here, so the same symbols).  A version that is not the
 * file's any more is refused.
 */
static void test_mtime_version(void)
{
	struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000000000, .tv_nsec = 5 } };
	uint32_t pid = (uint32_t)getpid();
	struct symbolizer *s, *late = NULL;
	struct sym_frame a, b;
	char path[PATH_MAX];
	struct fmap fv = {};
	struct mapping m2;

	snprintf(path, sizeof(path), "%s/libfx_ver.so", dir);
	s = new_sym(NULL, 0, 0);
	if (!ASSERT_OK_PTR(s, "new") || copy(fx_path, path) || !fmap_open(&fv, path))
		goto out;
	ASSERT_OK(symbolizer__pin(s, pid, 0, &fv.m), "pin version 1");
	if (!ASSERT_OK(utimensat(AT_FDCWD, path, times, 0), "set mtime"))
		goto out;
	m2 = fv.m;
	m2.mtime_sec = times[1].tv_sec;
	m2.mtime_nsec = (uint32_t)times[1].tv_nsec;
	ASSERT_OK(symbolizer__pin(s, pid, 0, &m2), "pin version 2");
	sym_alpha(s, pid, &fv, &a);
	symbolizer__user_mapping(s, pid, &m2, alpha_ip(&fv), &b);
	ASSERT_STREQ(a.sym, "fx_alpha", "version 1");
	ASSERT_STREQ(b.sym, "fx_alpha", "version 2");
	ASSERT_TRUE(a.module && a.module != b.module, "two modules");
	if (a.module && b.module)
		ASSERT_EQ(a.module->rpt.ino, b.module->rpt.ino, "one inode");
	ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)1, "same bytes: one symbol table");

	late = new_sym(NULL, 0, 0);
	if (!ASSERT_OK_PTR(late, "new"))
		goto out;
	ASSERT_EQ(symbolizer__pin(late, pid, 0, &fv.m), -ESTALE, "version 1 is gone");
	sym_alpha(late, pid, &fv, &a);
	ASSERT_EQ(a.reason, (uint32_t)RPT_BUILD_ID_MISMATCH, "version 1 frames");
out:
	symbolizer__free(s);
	symbolizer__free(late);
	fmap_close(&fv);
}

/*
 * More files pinned than max_fds: never more open than that, and every one
 * still resolves (reopened through the process, checked).  Also what a pin
 * costs, for a new file and for a known one.
 */
static void test_fd_cap(void)
{
	enum { NR = 40, CAP = 8, KNOWN = 100000 };
	static struct fmap fms[NR];
	uint32_t pid = (uint32_t)getpid();
	size_t before, most = 0, i;
	struct symbolizer *s;
	struct sym_frame f;
	char path[PATH_MAX];
	double t_new = 0, t0;
	int ok = 0;

	s = new_sym(NULL, CAP, 4);
	if (!ASSERT_OK_PTR(s, "new"))
		return;
	for (i = 0; i < NR; i++) {
		snprintf(path, sizeof(path), "%s/libfx_cap%zu.so", dir, i);
		if (copy(fx_path, path) || !fmap_open(&fms[i], path))
			goto out;
	}
	before = count_fds();
	for (i = 0; i < NR; i++) {
		t0 = now_ns();
		ok += !symbolizer__pin(s, pid, 0, &fms[i].m);
		t_new += now_ns() - t0;
		if (count_fds() > most)
			most = count_fds();
	}
	ASSERT_EQ(ok, NR, "every pin");
	ASSERT_TRUE(most <= before + CAP, "no more fds open than the cap");
	for (i = 0; i < NR; i++) {
		sym_alpha(s, pid, &fms[i], &f);
		if (!ASSERT_STREQ(f.sym, "fx_alpha", "each file resolves"))
			break;
	}
	ASSERT_TRUE(count_fds() <= before + CAP, "still within the cap");
	t0 = now_ns();
	for (i = 0; i < KNOWN; i++)
		symbolizer__pin(s, pid, 0, &fms[NR - 1].m);
	printf("     symbolizer__pin: %.1f us for a new file (map_files%s), %.0f ns for a known one (this build)\n",
	       t_new / NR / 1e3, map_files_ok ? "" : " refused: root", (now_ns() - t0) / KNOWN);
	symbolizer__free(s);
	s = NULL;
	ASSERT_EQ(count_fds(), before, "every fd closed by symbolizer__free");
out:
	symbolizer__free(s);
	for (i = 0; i < NR; i++)
		fmap_close(&fms[i]);
}

int main(void)
{
	pin_setup();
	RUN_TEST(test_pin_deleted);
	RUN_TEST(test_pin_exited_child);
	RUN_TEST(test_pin_replaced);
	RUN_TEST(test_shared_build_id);
	RUN_TEST(test_mtime_version);
	RUN_TEST(test_fd_cap);
	pin_cleanup();
	return TEST_EXIT();
}
