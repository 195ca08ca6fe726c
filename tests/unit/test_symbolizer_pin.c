// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer__pin: files read when they are mapped.  A pinned file still
 * symbolizes as what ran after it is deleted, replaced at its path, or its
 * process exits; copies share one symbol table; a file written in place is
 * a new version; hostile paths and non-files are refused without blocking;
 * the open files stay within their cap.
 *
 * Mappings are made with mmap(PROT_READ | PROT_EXEC) of the fixtures, never
 * run, so a fixture can be rewritten under its mapping safely.  The
 * fixtures (the same library built twice under other names) are built from
 * C at test time.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"

TEST_SUITE("symbolizer_pin");

/* PREFIX_alpha... : built as fx_ (the original) and as fy_ (the replacement). */
static const char lib_src[] =
	"#define F __attribute__((noinline, used))\n"
	"F int PREFIX_alpha(int x) { volatile int v = x; v += 3; v *= 7; return v; }\n"
	"F int PREFIX_beta(int x) { volatile int v = x; v -= 5; v *= 11; return v; }\n";

static const char exe_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline, used)) int fx_exe_one(int x) { volatile int v = x; v *= 17; return v; }\n"
	"int main(void)\n"
	"{\n"
	"	char c;\n"
	"	printf(\"%p\\n\", (void *)fx_exe_one);\n"
	"	fflush(stdout);\n"
	"	return read(0, &c, 1) < 0;	/* until the test closes the pipe */\n"
	"}\n";

static char dir[64];		/* the mkdtemp directory */
static bool cc_failed;		/* cc failed to build a fixture: see dir/build.log */
static char fx_path[PATH_MAX], fy_path[PATH_MAX], exe_path[PATH_MAX];
static uint64_t alpha_off;	/* file offset of fx_alpha (and fy_alpha) */
static struct proc_table *pt;
static struct proc *self;
static bool map_files_ok;	/* /proc/self/map_files/ opens for us */

/* A fixture mapped whole by mmap, and its mapping as a MAP event would give it. */
struct fmap {
	void *base;
	size_t len;
	struct mapping m;
	char path[PATH_MAX];
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	if (st)
		printf("     '%s' exited with status %d\n", cmd, st);
	return st;
}

static int reload_self(void)
{
	return proc__load_maps(self, "/proc/self/maps");
}

static struct symbolizer *new_sym(const char *proc_root, size_t max_fds, size_t max_files)
{
	struct symbolizer_opts o = {
		.proc_root = proc_root, .no_kernel = 1, .max_fds = max_fds, .max_files = max_files,
	};

	return symbolizer__new(&o);
}

/* cp @from @to: a new inode with the same bytes. */
static int copy(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return run(cmd);
}

/* Map @path read+exec at offset 0, its mapping (with the file's mtime) in @f. */
static bool fmap_open(struct fmap *f, const char *path)
{
	const struct mapping *m;
	struct stat st;
	int fd;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(fd >= 0, path) || !ASSERT_OK(fstat(fd, &st), "fstat")) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	f->len = st.st_size ? (size_t)st.st_size : 4096;
	f->base = mmap(NULL, f->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (!ASSERT_TRUE(f->base != MAP_FAILED, "mmap")) {
		f->base = NULL;
		return false;
	}
	m = reload_self() > 0 ? proc__find_mapping(self, (uint64_t)(uintptr_t)f->base) : NULL;
	if (!ASSERT_OK_PTR(m, "the mapping"))
		return false;
	f->m = *m;
	snprintf(f->path, sizeof(f->path), "%s", m->path ? m->path : "");
	f->m.path = f->path;
	f->m.mtime_sec = st.st_mtim.tv_sec;
	f->m.mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
	return true;
}

static void fmap_close(struct fmap *f)
{
	if (f->base)
		munmap(f->base, f->len);
	f->base = NULL;
}

static uint64_t alpha_ip(const struct fmap *f)
{
	return (uint64_t)(uintptr_t)f->base + alpha_off;
}

/* Symbolize fx_alpha's place in @f through @s: the frame in @out. */
static void sym_alpha(struct symbolizer *s, uint32_t pid, const struct fmap *f, struct sym_frame *out)
{
	symbolizer__user_mapping(s, pid, &f->m, alpha_ip(f), out);
}

/* A fake proc root DIR/NAME/PID/root -> @root, without map_files. */
static bool fake_proc(char *out, size_t len, const char *name, uint32_t pid, const char *root)
{
	char p[PATH_MAX];

	snprintf(out, len, "%s/%s", dir, name);
	snprintf(p, sizeof(p), "%s/%u", out, pid);
	if (!ASSERT_OK(mkdir(out, 0755), "mkdir") || !ASSERT_OK(mkdir(p, 0755), "mkdir"))
		return false;
	snprintf(p, sizeof(p), "%s/%u/root", out, pid);
	return ASSERT_OK(symlink(root, p), "symlink root");
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

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

static int build_lib(const char *prefix, const char *out)
{
	char src[PATH_MAX], cmd[4 * PATH_MAX];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s_lib.c", dir, prefix);
	f = fopen(src, "w");
	if (!f)
		return -errno;
	fprintf(f, "#define PREFIX_alpha %s_alpha\n#define PREFIX_beta %s_beta\n%s", prefix, prefix, lib_src);
	if (fclose(f))
		return -EIO;
	/* -Ttext-segment: addresses differ from file offsets, as in real libraries. */
	snprintf(cmd, sizeof(cmd), "cc -O1 -fPIC -shared -Wl,--build-id=sha1 "
		 "-Wl,-Ttext-segment=0x200000 -o '%s' '%s' >> '%s/build.log' 2>&1", out, src, dir);
	if (run(cmd)) {
		cc_failed = true;
		return -ENOEXEC;
	}
	return 0;
}

static int setup(void)
{
	char src[PATH_MAX], cmd[4 * PATH_MAX], mf[128];
	const struct mapping *m;
	void *lib, *alpha;
	FILE *f;
	int fd;

	strcpy(dir, "/tmp/bpfsym-pintest.XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(fx_path, sizeof(fx_path), "%s/libfx.so", dir);
	snprintf(fy_path, sizeof(fy_path), "%s/libfy.so", dir);
	snprintf(exe_path, sizeof(exe_path), "%s/fx_exe", dir);
	snprintf(src, sizeof(src), "%s/fx_exe.c", dir);
	if (build_lib("fx", fx_path) || build_lib("fy", fy_path))
		return -ENOEXEC;
	f = fopen(src, "w");
	if (!f || fputs(exe_src, f) < 0 || fclose(f))
		return -EIO;
	snprintf(cmd, sizeof(cmd), "cc -O1 -fPIE -pie -Wl,--build-id=sha1 -o '%s' '%s' >> '%s/build.log' 2>&1",
		 exe_path, src, dir);
	if (run(cmd)) {
		cc_failed = true;
		return -ENOEXEC;
	}
	pt = proc_table__new(0);
	self = pt ? proc_table__add(pt, (uint32_t)getpid(), 0) : NULL;
	if (!self)
		return -ENOMEM;
	/* fx_alpha's file offset, from where the loader put it. */
	lib = dlopen(fx_path, RTLD_NOW | RTLD_LOCAL);
	alpha = lib ? dlsym(lib, "fx_alpha") : NULL;
	m = alpha && reload_self() > 0 ? proc__find_mapping(self, (uint64_t)(uintptr_t)alpha) : NULL;
	if (m) {
		alpha_off = mapping__file_offset(m, (uint64_t)(uintptr_t)alpha);
		snprintf(mf, sizeof(mf), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = open(mf, O_RDONLY | O_CLOEXEC);
		map_files_ok = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	if (lib)
		dlclose(lib);
	return m ? 0 : -ENOENT;
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	int err;

	err = setup();
	if (err && !test__have("cc")) {
		TEST_SETUP_SKIP("'cc' not found: no fixtures");
	} else if (cc_failed) {
		char log[sizeof(dir) + 16], why[512];

		snprintf(log, sizeof(log), "%s/build.log", dir);
		TEST_SETUP_FAIL("cannot build the fixtures: %s", test__build_error(log, why, sizeof(why)));
	} else if (err) {
		TEST_SETUP_FAIL("cannot load the fixtures (dlopen, /proc): %s", strerror(-err));
	}
	RUN_TEST(test_pin_deleted);
	RUN_TEST(test_pin_exited_child);
	RUN_TEST(test_pin_replaced);
	RUN_TEST(test_shared_build_id);
	RUN_TEST(test_mtime_version);
	RUN_TEST(test_pin_escape);
	RUN_TEST(test_pin_not_files);
	RUN_TEST(test_pin_memfd);
	RUN_TEST(test_pin_memfd_jit);
	RUN_TEST(test_pin_truncated);
	RUN_TEST(test_fd_cap);
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	proc_table__free(pt);
	return TEST_EXIT();
}
