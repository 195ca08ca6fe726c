// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fileid__open_mapped when the process that mapped the file is gone (its
 * MAP record read after it exited): the file is opened by its path in the
 * mount namespace it was mapped in, ours or a live process's of it that
 * the model knows, and only if it is still the file mapped.
 *
 * A fake proc root stands in for /proc: PROC/self and PROC/PID are
 * directories whose ns/mnt is a symlink to a file of this test (one file
 * per "namespace": its inode is the namespace's number, all on one
 * device, as nsfs's are) and whose root is a symlink to a directory
 * holding that namespace's files.  The pid that mapped the file has no
 * directory: it has exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/fileid.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"

TEST_SUITE("fileid_mntns");

enum { GONE = 42, ALIVE = 43, PEER = 100, REUSED = 101, DEAD_PEER = 102, NO_NS = 103 };

static char dir[64];
static char proc[PATH_MAX];
static uint32_t ns_a, ns_b;		/* ours (PROC/self), and the other one */
static struct proc_table *pt;		/* the model: who is in which namespace */

/* A function of this test's own file, to name through a copy of it. */
__attribute__((noinline, used)) int fx_mntns_probe(int x)
{
	volatile int v = x;

	return v * 3;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	if (st)
		printf("     '%s' exited with status %d\n", cmd, st);
	return st;
}

/* DIR/@rel as an absolute path in @out. */
static const char *at(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, rel);
	return out;
}

/* Write @text to DIR/@rel (a new file). */
static int put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f = fopen(at(p, rel), "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

/* The mapping of DIR/@rel, as a MAP record in namespace @ns would give it: path @path. */
static bool mapping_of(struct mapping *m, const char *rel, const char *path, uint32_t ns)
{
	char p[PATH_MAX];
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (!ASSERT_OK(stat(at(p, rel), &st), rel))
		return false;
	m->start = 0x400000;
	m->end = 0x401000;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->mtime_sec = st.st_mtim.tv_sec;
	m->mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
	m->kind = MAPPING_FILE;
	m->prot = 5;
	m->path = path;
	m->mnt_ns = ns;
	return true;
}

/* The inode of what @fd is open on (0 when it is not open). */
static uint64_t ino_of(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) ? (uint64_t)st.st_ino : 0;
}

static uint64_t ino_at(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	return stat(at(p, rel), &st) ? 0 : (uint64_t)st.st_ino;
}

/* A file named in our namespace, its process gone: found through PROC/self. */
static void test_own_namespace(void)
{
	struct mapping m;
	int fd;

	if (!mapping_of(&m, "root_a/files/lib.so", "/files/lib.so", ns_a))
		return;
	fd = fileid__open_mapped(proc, NULL, GONE, &m);
	ASSERT_TRUE(fd >= 0, "opened in our namespace");
	ASSERT_EQ(ino_of(fd), m.ino, "the file mapped");
	if (fd >= 0)
		close(fd);
	/* An absolute symlink in that root stays in it. */
	m.path = "/files/inroot.so";
	fd = fileid__open_mapped(proc, NULL, GONE, &m);
	ASSERT_EQ(ino_of(fd), m.ino, "through a symlink inside the root");
	if (fd >= 0)
		close(fd);
}

/*
 * A file named in another namespace is never looked for in ours, where
 * the same path holds another file.  Without a model, a live process of
 * its namespace is found by reading PROC (under -a the model follows a
 * process from its first sample only, so it may know none); without
 * one at all, the process's own error stands.
 */
static void test_other_namespace(void)
{
	struct mapping m;
	int fd;

	if (!mapping_of(&m, "root_b/files/lib.so", "/files/lib.so", ns_b))
		return;
	fd = fileid__open_mapped(proc, NULL, GONE, &m);
	ASSERT_TRUE(fd >= 0, "no model: a process of its namespace found in PROC");
	ASSERT_EQ(ino_of(fd), m.ino, "the file mapped there, not our namespace's");
	if (fd >= 0)
		close(fd);
	/* A namespace no process is in. */
	for (m.mnt_ns = ns_b + 1; m.mnt_ns == ns_a; m.mnt_ns++)
		;
	ASSERT_EQ(fileid__open_mapped(proc, NULL, GONE, &m), -ENOENT, "none in PROC: the pid's error");
	/* Namespace unknown (an exiting task's record): no route by path. */
	if (!mapping_of(&m, "root_a/files/lib.so", "/files/lib.so", 0))
		return;
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &m), -ENOENT, "namespace unknown");
}

/*
 * Through a live process of the namespace: the model's candidates are
 * tried most recently used first; one whose pid now belongs to a process
 * of another namespace, one that exited, one without namespaces (a
 * zombie) and the gone process itself are passed over.
 */
static void test_peer(void)
{
	struct mapping m;
	int fd;

	if (!mapping_of(&m, "root_b/files/lib.so", "/files/lib.so", ns_b))
		return;
	fd = fileid__open_mapped(proc, pt, GONE, &m);
	ASSERT_TRUE(fd >= 0, "opened through a live process of its namespace");
	ASSERT_EQ(ino_of(fd), m.ino, "the file mapped, not our namespace's");
	if (fd >= 0)
		close(fd);
}

/*
 * A process still there is looked at through its own view only (here a
 * root without the file: chrooted, say), not through ours or a peer's,
 * which would find it.
 */
static void test_alive_own_view(void)
{
	struct mapping m;

	if (!mapping_of(&m, "root_b/files/lib.so", "/files/lib.so", ns_b))
		return;
	ASSERT_EQ(fileid__open_mapped(proc, pt, ALIVE, &m), -ENOENT, "its own root decides");
}

/* Replaced at its path (another inode), or written in place (mtime): refused. */
static void test_replaced(void)
{
	struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000000000 } };
	char p[PATH_MAX], q[PATH_MAX];
	struct mapping m, w;

	if (!mapping_of(&m, "root_a/files/repl.so", "/files/repl.so", ns_a) ||
	    !mapping_of(&w, "root_a/files/inplace.so", "/files/inplace.so", ns_a))
		return;
	if (!ASSERT_OK(put("root_a/files/repl.so.new", "another build\n"), "new file") ||
	    !ASSERT_OK(rename(at(p, "root_a/files/repl.so.new"), at(q, "root_a/files/repl.so")),
		       "rename over"))
		return;
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &m), -ESTALE, "another inode");
	if (!ASSERT_OK(utimensat(AT_FDCWD, at(p, "root_a/files/inplace.so"), t, 0), "mtime"))
		return;
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &w), -ESTALE, "same inode, another mtime");
	/* In the other namespace too: the live process's file is checked the same way. */
	if (!mapping_of(&m, "root_b/files/lib.so", "/files/lib.so", ns_b))
		return;
	m.ino++;
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &m), -ESTALE, "through a peer: another inode");
}

/*
 * An absolute symlink to a host path is resolved inside the namespace's
 * root, so it never reaches the host's file, even one with the identity
 * the mapping names.
 */
static void test_escape(void)
{
	struct mapping m;

	if (!mapping_of(&m, "root_b/files/lib.so", "/files/abs.so", ns_a))
		return;
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &m), -ENOENT, "no way out of the root");
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL fileid_mntns/test_not_regular: blocked opening a FIFO\n";

	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

/* A FIFO with the mapping's identity: refused, not blocked on. */
static void test_not_regular(void)
{
	char p[PATH_MAX];
	struct mapping m;

	if (!ASSERT_OK(mkfifo(at(p, "root_a/files/fifo"), 0600), "mkfifo") ||
	    !mapping_of(&m, "root_a/files/fifo", "/files/fifo", ns_a))
		return;
	signal(SIGALRM, on_alarm);
	alarm(10);
	ASSERT_EQ(fileid__open_mapped(proc, pt, GONE, &m), -ENOEXEC, "not a regular file");
	alarm(0);
}

/*
 * End to end in the symbolizer: an ELF file (a copy of this test) mapped
 * by a process gone before its MAP record is read is pinned and names its
 * frames; with the namespace unknown it cannot be.
 */
static void test_symbolizer_pin_gone(void)
{
	struct symbolizer_opts o = { .proc_root = proc, .no_kernel = 1, .procs = pt };
	struct symbolizer *s = NULL, *cold = NULL;
	char copy[PATH_MAX], cmd[3 * PATH_MAX];
	uint64_t ip = (uint64_t)(uintptr_t)fx_mntns_probe;
	struct proc_table *self_pt;
	const struct mapping *mine;
	struct proc *self;
	struct sym_frame f;
	struct mapping m;
	char self_path[PATH_MAX];

	self_pt = proc_table__new(0);
	self = self_pt ? proc_table__add(self_pt, (uint32_t)getpid(), 0) : NULL;
	mine = self && proc__load_maps(self, "/proc/self/maps") > 0 ? proc__find_mapping(self, ip) : NULL;
	if (!ASSERT_OK_PTR(mine, "this test's mapping of fx_mntns_probe"))
		goto out;
	snprintf(self_path, sizeof(self_path), "%s", mine->path ? mine->path : "");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", self_path, at(copy, "root_a/prog"));
	if (run(cmd) || !mapping_of(&m, "root_a/prog", "/prog", ns_a))
		goto out;
	m.start = mine->start;
	m.end = mine->end;
	m.pgoff = mine->pgoff;
	s = symbolizer__new(&o);
	o.procs = NULL;
	cold = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(cold, "new"))
		goto out;
	ASSERT_OK(symbolizer__pin(s, GONE, 1, &m), "pinned though the process is gone");
	symbolizer__user_mapping(s, GONE, &m, ip, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "named");
	ASSERT_STREQ(f.sym, "fx_mntns_probe", "the function");
	m.mnt_ns = 0;
	ASSERT_EQ(symbolizer__pin(cold, GONE, 1, &m), -ENOENT, "namespace unknown: gone with it");
	symbolizer__user_mapping(cold, GONE, &m, ip, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "unnamed, with its reason");
out:
	symbolizer__free(s);
	symbolizer__free(cold);
	proc_table__free(self_pt);
}

/* PROC/@who: ns/mnt -> DIR/@ns (NULL: none), root -> DIR/@root. */
static int fake_pid(const char *who, const char *ns, const char *root)
{
	char p[2 * PATH_MAX], q[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s/ns", proc, who);
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	snprintf(p, sizeof(p), "%s/%s/root", proc, who);
	if (symlink(at(q, root), p))
		return -errno;
	if (!ns)
		return 0;
	snprintf(p, sizeof(p), "%s/%s/ns/mnt", proc, who);
	return symlink(at(q, ns), p) ? -errno : 0;
}

/* The model knows @pid in namespace @ns (it made a mapping there). */
static int model_pid(uint32_t pid, uint32_t ns)
{
	struct mapping m = { .start = 0x1000, .end = 0x2000, .kind = MAPPING_FILE, .mnt_ns = ns };
	struct proc *p = proc_table__add(pt, pid, 1);

	return p ? proc__map(p, &m) : -ENOMEM;
}

static int setup(void)
{
	static const char *const dirs[] = {
		"ns", "root_a", "root_a/files", "root_b", "root_b/files", "root_empty", "proc",
		"proc/self", "proc/43", "proc/100", "proc/101", "proc/103",
	};
	char p[PATH_MAX], q[PATH_MAX];
	uint64_t a, b;
	size_t i;
	int err;

	strcpy(dir, "/tmp/bpfsym-fileid-mntns.XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(at(p, dirs[i]), 0755))
			return -errno;
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	err = put("ns/a", "a\n") ?: put("ns/b", "b\n") ?:
	      put("root_a/files/lib.so", "file A\n") ?: put("root_b/files/lib.so", "file B\n") ?:
	      put("root_a/files/repl.so", "repl\n") ?: put("root_a/files/inplace.so", "inplace\n");
	if (err)
		return err;
	if (symlink(at(q, "root_b/files/lib.so"), at(p, "root_a/files/abs.so")) ||
	    symlink("/files/lib.so", at(p, "root_a/files/inroot.so")))
		return -errno;
	a = ino_at("ns/a");
	b = ino_at("ns/b");
	if (!a || !b || a > UINT32_MAX || b > UINT32_MAX)
		return -EOVERFLOW;	/* the kernel's namespace numbers are 32-bit */
	ns_a = (uint32_t)a;
	ns_b = (uint32_t)b;
	err = fake_pid("self", "ns/a", "root_a") ?: fake_pid("43", "ns/b", "root_empty") ?:
	      fake_pid("100", "ns/b", "root_b") ?: fake_pid("101", "ns/a", "root_a") ?:
	      fake_pid("103", NULL, "root_b");
	if (err)
		return err;
	/* Most recently used first: GONE, REUSED, DEAD_PEER, NO_NS, then PEER. */
	pt = proc_table__new(0);
	if (!pt)
		return -ENOMEM;
	return model_pid(PEER, ns_b) ?: model_pid(NO_NS, ns_b) ?: model_pid(DEAD_PEER, ns_b) ?:
	       model_pid(REUSED, ns_b) ?: model_pid(GONE, ns_b);
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	int err;

	err = setup();
	if (err) {
		test__name = "setup";
		test__skip("cannot make the fake proc root: %s", strerror(-err));
	} else {
		RUN_TEST(test_own_namespace);
		RUN_TEST(test_other_namespace);
		RUN_TEST(test_peer);
		RUN_TEST(test_alive_own_view);
		RUN_TEST(test_replaced);
		RUN_TEST(test_escape);
		RUN_TEST(test_not_regular);
		RUN_TEST(test_symbolizer_pin_gone);
	}
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	proc_table__free(pt);
	return TEST_EXIT();
}
