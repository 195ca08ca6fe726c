// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer: real addresses of this process and of a child, resolved
 * through /proc/PID/maps, the pgoff arithmetic and the fixture's ELF
 * symbols.  The fixture (a shared library whose segments' addresses differ
 * from their file offsets, and a PIE) is built from C at test time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/elf/elfsym.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"
#include "base/util.h"

TEST_SUITE("symbolizer");

/* Functions big enough for the small offsets probed; a local one too. */
static const char lib_src[] =
	"#define F __attribute__((noinline, used))\n"
	"static F int fx_local_helper(int x) { volatile int v = x; v ^= 0x55; v *= 3; return v; }\n"
	"F int fx_alpha(int x) { volatile int v = x; v += 3; v *= 7; return v; }\n"
	"F int fx_beta(int x) { volatile int v = x; v -= 5; v *= 11; return v + fx_local_helper(x); }\n"
	"F int fx_gamma(int x) { volatile int v = x; v |= 9; v *= 13; return v; }\n"
	"void *fx_local_addr(void) { return (void *)fx_local_helper; }\n";

static const char exe_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"#define F __attribute__((noinline, used))\n"
	"F int fx_exe_one(int x) { volatile int v = x; v += 1; v *= 17; return v; }\n"
	"F int fx_exe_two(int x) { volatile int v = x; v += 2; v *= 19; return v; }\n"
	"int main(void)\n"
	"{\n"
	"	char c;\n"
	"	printf(\"%p %p\\n\", (void *)fx_exe_one, (void *)fx_exe_two);\n"
	"	fflush(stdout);\n"
	"	return read(0, &c, 1) < 0;	/* until the test closes the pipe */\n"
	"}\n";

static char dir[64];		/* the mkdtemp directory */
static bool cc_failed;		/* cc failed to build a fixture: see dir/build.log */
static char lib_path[PATH_MAX], exe_path[PATH_MAX];
static void *lib;		/* dlopen'd fixture */
static struct proc_table *pt;
static struct proc *self;	/* this process, maps loaded */
static bool map_files_ok;	/* /proc/self/map_files/ opens for us */

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
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	return proc__load_maps(self, path);
}

static struct symbolizer *user_symbolizer(const char *proc_root, size_t max_files)
{
	struct symbolizer_opts o = { .proc_root = proc_root, .no_kernel = 1, .max_files = max_files };

	return symbolizer__new(&o);
}

static void *lib_sym(void *handle, const char *name)
{
	void *p = dlsym(handle, name);

	if (!p)
		printf("     dlsym '%s': %s\n", name, dlerror());
	return p;
}

/* @addr + @off must name @name + @off, with the file offset holding the same bytes. */
static bool check_user(struct symbolizer *s, uint32_t pid, struct proc *p, const void *addr,
		       uint64_t off, const char *name, const char *file)
{
	uint64_t ip = (uint64_t)(uintptr_t)addr + off;
	unsigned char want[16], got[16];
	struct sym_frame f;
	struct stat st;
	bool ok = true;
	int fd;

	ASSERT_OK(symbolizer__user(s, pid, p, ip, &f), "symbolizer__user");
	ok &= ASSERT_EQ(f.reason, (uint32_t)RPT_OK, name);
	ok &= ASSERT_STREQ(f.sym, name, "name");
	ok &= ASSERT_EQ(f.sym_off, off, "offset into the symbol");
	if (!ASSERT_OK_PTR(f.module, "module"))
		return false;
	ok &= ASSERT_EQ(f.module->rpt.kind, (uint32_t)RPT_MOD_FILE, "file module");
	if (!file || !ok)
		return ok;
	ok &= ASSERT_EQ(f.module->rpt.build_id_len, (uint32_t)20, "sha1 build-id");
	if (!stat(file, &st)) {
		ok &= ASSERT_EQ(f.module->rpt.ino, (uint64_t)st.st_ino, "ino");
		ok &= ASSERT_EQ(f.module->rpt.dev, (uint64_t)st.st_dev, "dev");
	}
	/* The file offset is right if the file holds the bytes we run. */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(fd >= 0, "open the fixture"))
		return false;
	memcpy(want, (const void *)(uintptr_t)ip, sizeof(want));
	ok &= ASSERT_EQ(pread(fd, got, sizeof(got), (off_t)f.offset), (ssize_t)sizeof(got), "pread");
	ok &= ASSERT_TRUE(!memcmp(want, got, sizeof(got)), "the file offset holds the code");
	close(fd);
	return ok;
}

static void test_dlopen_self(void)
{
	static const char *const names[] = { "fx_alpha", "fx_beta", "fx_gamma" };
	static const uint64_t offs[] = { 0, 1, 5 };
	struct symbolizer *s = user_symbolizer(NULL, 0);
	void *(*local_addr)(void);
	size_t i, j;

	if (!ASSERT_OK_PTR(s, "new"))
		return;
	for (i = 0; i < 3; i++) {
		void *a = lib_sym(lib, names[i]);

		if (!ASSERT_OK_PTR(a, names[i]))
			goto out;
		for (j = 0; j < 3; j++)
			if (!check_user(s, (uint32_t)getpid(), self, a, offs[j], names[i], lib_path))
				goto out;
	}
	/* A local symbol: only in .symtab. */
	local_addr = (void *(*)(void))lib_sym(lib, "fx_local_addr");
	if (ASSERT_OK_PTR(local_addr, "fx_local_addr"))
		check_user(s, (uint32_t)getpid(), self, local_addr(), 2, "fx_local_helper", lib_path);
out:
	symbolizer__free(s);
}

static void test_pie_child(void)
{
	void *one = NULL, *two = NULL;
	int in[2], out[2], status;
	struct symbolizer *s;
	char buf[128] = "", path[64];
	struct proc *p;
	ssize_t n;
	pid_t pid;

	if (!ASSERT_OK(pipe(in), "pipe") || !ASSERT_OK(pipe(out), "pipe"))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(exe_path, exe_path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto close;
	n = read(out[0], buf, sizeof(buf) - 1);
	if (!ASSERT_TRUE(n > 0 && sscanf(buf, "%p %p", &one, &two) == 2, "child addresses"))
		goto reap;
	p = proc_table__add(pt, (uint32_t)pid, 1);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!ASSERT_OK_PTR(p, "add") || !ASSERT_TRUE(proc__load_maps(p, path) > 0, "child maps"))
		goto reap;
	s = user_symbolizer(NULL, 0);
	if (ASSERT_OK_PTR(s, "new")) {
		check_user(s, (uint32_t)pid, p, one, 0, "fx_exe_one", NULL);
		check_user(s, (uint32_t)pid, p, two, 3, "fx_exe_two", NULL);
		symbolizer__free(s);
	}
	proc_table__remove(pt, (uint32_t)pid);
reap:
	close(in[1]);
	in[1] = -1;
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit");
close:
	if (in[1] >= 0)
		close(in[1]);
	close(out[0]);
}

static int data_var = 42;	/* rw-: never in the executable mapping model */

/*
 * A vdso function named as nm names it in a copy of the vdso written to a
 * file: the oracle reads the image independently of the symbolizer.
 */
static void check_vdso_function(struct symbolizer *s, const struct mapping *m)
{
	char path[256], cmd[512], line[256];
	unsigned long long value = 0;
	struct sym_frame f;
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/test_symbolizer.vdso.%d",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!ASSERT_TRUE(fd >= 0, "vdso copy"))
		return;
	ASSERT_EQ(write(fd, (void *)(uintptr_t)m->start, m->end - m->start), (ssize_t)(m->end - m->start),
		  "write the vdso");
	close(fd);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	while (fp && fgets(line, sizeof(line), fp))
		if (strstr(line, " __vdso_clock_gettime\n") || strstr(line, " __vdso_clock_gettime@"))
			sscanf(line, "%llx", &value);
	if (fp)
		pclose(fp);
	unlink(path);
	if (!value) {
		printf("     (nm finds no __vdso_clock_gettime in this vdso: not checked)\n");
		return;
	}
	symbolizer__user(s, (uint32_t)getpid(), self, m->start + value + 1, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "vdso function reason");
	if (ASSERT_OK_PTR(f.sym, "vdso function"))
		ASSERT_STREQ(f.sym, "__vdso_clock_gettime", "as nm names it");
	ASSERT_EQ(f.sym_off, 1ull, "offset into it");
}

static void test_anon_none_vdso(void)
{
	struct symbolizer *s = user_symbolizer(NULL, 0);
	const struct mapping *m;
	struct sym_frame f;
	unsigned char *code;
	uint64_t vdso;

	if (!ASSERT_OK_PTR(s, "new"))
		return;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(code != MAP_FAILED, "mmap"))
		goto out;
	code[0] = 0xc3;	/* ret: a JIT's output */
	ASSERT_OK(mprotect(code, 4096, PROT_READ | PROT_EXEC), "mprotect RX");
	ASSERT_TRUE(reload_self() > 0, "reload maps");
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)code + 16, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_ANON, "anon reason");
	ASSERT_NULL(f.sym, "never a name");
	ASSERT_EQ(f.offset, (uint64_t)(uintptr_t)code + 16, "offset is the address");
	if (ASSERT_OK_PTR(f.module, "anon module")) {
		ASSERT_EQ(f.module->rpt.kind, (uint32_t)RPT_MOD_ANON, "kind");
		ASSERT_STREQ(f.module->rpt.path, "[anon]", "path");
	}
	munmap(code, 4096);

	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)&data_var, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_NO_MAPPING, "data: no executable mapping");
	ASSERT_NULL(f.module, "no module");
	symbolizer__user(s, (uint32_t)getpid(), self, 0x1000, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_NO_MAPPING, "low address");
	symbolizer__user(s, (uint32_t)getpid(), NULL, 0x1000, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_NO_MAPPING, "no process model");

	vdso = getauxval(AT_SYSINFO_EHDR);
	m = vdso ? proc__find_mapping(self, vdso) : NULL;
	if (m) {
		symbolizer__user(s, (uint32_t)getpid(), self, vdso + 0x10, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OUTSIDE_SYMBOL, "vdso's ELF header: no function");
		ASSERT_EQ(f.offset, vdso + 0x10 - m->start, "offset into the vdso");
		if (ASSERT_OK_PTR(f.module, "vdso module")) {
			ASSERT_EQ(f.module->rpt.kind, (uint32_t)RPT_MOD_SPECIAL, "kind");
			ASSERT_STREQ(f.module->rpt.path, "[vdso]", "path");
		}
		check_vdso_function(s, m);
	}
out:
	symbolizer__free(s);
}

/* A JIT's perf map is one module, found again for each frame it names. */
static void test_jit_module_once(void)
{
	struct symbolizer *s = user_symbolizer(NULL, 0);
	const struct sym_module *first = NULL;
	char path[64], text[128];
	struct sym_frame f;
	unsigned char *code;
	uint64_t base;

	if (!ASSERT_OK_PTR(s, "new"))
		return;
	code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(code != MAP_FAILED, "mmap"))
		goto out;
	base = (uint64_t)(uintptr_t)code;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text), "%llx 100 fx_jit_one\n%llx 100 fx_jit_two\n",
		 (unsigned long long)base, (unsigned long long)base + 0x1000);
	if (!ASSERT_OK(test__write_file(path, text), "write the perf map") ||
	    !ASSERT_TRUE(reload_self() > 0, "reload maps"))
		goto unmap;
	symbolizer__user(s, (uint32_t)getpid(), self, base + 0x10, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "named by the perf map");
	if (ASSERT_OK_PTR(f.sym, "first"))
		ASSERT_STREQ(f.sym, "fx_jit_one", "first");
	first = f.module;
	ASSERT_OK_PTR(first, "a module");
	symbolizer__user(s, (uint32_t)getpid(), self, base + 0x1010, &f);
	if (ASSERT_OK_PTR(f.sym, "second"))
		ASSERT_STREQ(f.sym, "fx_jit_two", "second");
	ASSERT_TRUE(f.module == first, "the same module for the same file");
unmap:
	unlink(path);
	munmap(code, 8192);
out:
	symbolizer__free(s);
}

/* A fake proc root: D/NAME/PID/{root,map_files} as symlinks to @root / @map_files. */
static int fake_proc(char *out, size_t len, const char *name, uint32_t pid,
		     const char *root, const char *map_files)
{
	char p[PATH_MAX];

	snprintf(out, len, "%s/%s", dir, name);
	snprintf(p, sizeof(p), "%s/%u", out, pid);
	if (mkdir(out, 0755) || mkdir(p, 0755))
		return -errno;
	if (root) {
		snprintf(p, sizeof(p), "%s/%u/root", out, pid);
		if (symlink(root, p))
			return -errno;
	}
	if (map_files) {
		snprintf(p, sizeof(p), "%s/%u/map_files", out, pid);
		if (symlink(map_files, p))
			return -errno;
	}
	return 0;
}

/* The reason @addr gets through proc root @root (this process, fresh symbolizer). */
static uint32_t reason_via(const char *root, const void *addr, const char **sym)
{
	struct symbolizer *s = user_symbolizer(root, 0);
	struct sym_frame f;

	if (!s)
		return UINT32_MAX;
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)addr, &f);
	if (sym)
		*sym = f.sym && !strcmp(f.sym, "fx_alpha") ? "fx_alpha" : NULL;
	symbolizer__free(s);
	return f.reason;
}

/* A copy of the fixture (another inode) or @how at the fixture's path under @root_dir. */
static int fake_root(char *root_dir, size_t len, const char *name, const char *how)
{
	char cmd[3 * PATH_MAX];

	snprintf(root_dir, len, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s' && %s '%s%s/libfx.so'",
		 root_dir, dir, how, root_dir, dir);
	return run(cmd);
}

static void test_open_routes(void)
{
	char proc[PATH_MAX], root[PATH_MAX], mf[64], cmd[3 * PATH_MAX];
	uint32_t pid = (uint32_t)getpid();
	void *alpha = lib_sym(lib, "fx_alpha");
	const char *sym = NULL;
	struct symbolizer *s;
	struct sym_frame f;

	if (!ASSERT_OK_PTR(alpha, "fx_alpha"))
		return;
	/* Through the process's root only (what works without CAP_SYS_ADMIN). */
	if (!ASSERT_OK(fake_proc(proc, sizeof(proc), "p_root", pid, "/", NULL), "fake proc"))
		return;
	ASSERT_EQ(reason_via(proc, alpha, &sym), (uint32_t)RPT_OK, "root route");
	ASSERT_STREQ(sym, "fx_alpha", "root route name");

	/* Through map_files only. */
	snprintf(mf, sizeof(mf), "/proc/%u/map_files", pid);
	if (!ASSERT_OK(fake_proc(proc, sizeof(proc), "p_mapfiles", pid, NULL, mf), "fake proc"))
		return;
	if (map_files_ok) {
		ASSERT_EQ(reason_via(proc, alpha, &sym), (uint32_t)RPT_OK, "map_files route");
		ASSERT_STREQ(sym, "fx_alpha", "map_files route name");
	} else {
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_FILE_UNREADABLE,
			  "map_files refused, no root: unreadable");
		printf("     map_files route not checked: /proc/self/map_files refuses us\n");
	}

	/* Another file at the path: not the one mapped. */
	snprintf(cmd, sizeof(cmd), "cp '%s'", lib_path);
	if (!fake_root(root, sizeof(root), "r_copy", cmd) &&
	    ASSERT_OK(fake_proc(proc, sizeof(proc), "p_copy", pid, root, NULL), "fake proc"))
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_BUILD_ID_MISMATCH, "copy");

	/* A FIFO at the path: refused without blocking. */
	if (!fake_root(root, sizeof(root), "r_fifo", "mkfifo") &&
	    ASSERT_OK(fake_proc(proc, sizeof(proc), "p_fifo", pid, root, NULL), "fake proc"))
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_BUILD_ID_MISMATCH, "fifo");

	/* An absolute symlink resolves inside the root, not on the host. */
	snprintf(cmd, sizeof(cmd), "ln -s '%s'", lib_path);
	if (!fake_root(root, sizeof(root), "r_escape", cmd) &&
	    ASSERT_OK(fake_proc(proc, sizeof(proc), "p_escape", pid, root, NULL), "fake proc"))
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_FILE_UNREADABLE,
			  "container symlink does not escape");

	/* Nothing there. */
	snprintf(root, sizeof(root), "%s/r_empty", dir);
	if (ASSERT_OK(mkdir(root, 0755), "mkdir") &&
	    ASSERT_OK(fake_proc(proc, sizeof(proc), "p_empty", pid, root, NULL), "fake proc"))
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_FILE_UNREADABLE, "missing");

	/*
	 * A failure is remembered for the process (not retried per frame),
	 * but another process mapping the file may succeed.
	 */
	snprintf(root, sizeof(root), "%s/r_later", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s'", root, dir);
	if (!ASSERT_OK(run(cmd), "mkdir") ||
	    !ASSERT_OK(fake_proc(proc, sizeof(proc), "p_later", pid, root, NULL), "fake proc"))
		return;
	s = user_symbolizer(proc, 0);
	if (!ASSERT_OK_PTR(s, "new"))
		return;
	symbolizer__user(s, pid, self, (uint64_t)(uintptr_t)alpha, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "not there yet");
	snprintf(cmd, sizeof(cmd), "ln '%s' '%s%s/libfx.so'", lib_path, root, dir);	/* same inode */
	ASSERT_OK(run(cmd), "hard link");
	symbolizer__user(s, pid, self, (uint64_t)(uintptr_t)alpha, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_FILE_UNREADABLE, "remembered for this pid");
	snprintf(cmd, sizeof(cmd), "%s/%u", proc, pid + 1);
	snprintf(root, sizeof(root), "%.4000s/%u", proc, pid);
	if (ASSERT_OK(symlink(root, cmd), "other pid")) {
		symbolizer__user(s, pid + 1, self, (uint64_t)(uintptr_t)alpha, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "another process retries");
		ASSERT_STREQ(f.sym, "fx_alpha", "then resolves");
	}
	symbolizer__free(s);
}

/* A deleted library still resolves through map_files, and never through its path. */
static void test_deleted_library(void)
{
	char copy[PATH_MAX], cmd[3 * PATH_MAX], proc[PATH_MAX];
	const char *sym = NULL;
	void *h, *alpha;

	snprintf(copy, sizeof(copy), "%s/libfx_deleted.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib_path, copy);
	if (!ASSERT_OK(run(cmd), "copy"))
		return;
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "dlopen copy"))
		return;
	alpha = lib_sym(h, "fx_alpha");
	ASSERT_OK(unlink(copy), "unlink");
	if (!ASSERT_OK_PTR(alpha, "fx_alpha") || !ASSERT_TRUE(reload_self() > 0, "reload maps"))
		goto out;
	if (map_files_ok) {
		ASSERT_EQ(reason_via("/proc", alpha, &sym), (uint32_t)RPT_OK, "deleted, via map_files");
		ASSERT_STREQ(sym, "fx_alpha", "name");
	}
	if (ASSERT_OK(fake_proc(proc, sizeof(proc), "p_deleted", (uint32_t)getpid(), "/", NULL), "fake"))
		ASSERT_EQ(reason_via(proc, alpha, NULL), (uint32_t)RPT_FILE_UNREADABLE, "deleted, via root");
out:
	dlclose(h);
	reload_self();
}

/*
 * A stripped library keeps only .dynsym; its static functions come back
 * from the debug file under DEBUG_ROOT/.build-id/xx/rest.debug, and only
 * when that file carries the same build-id.
 */
static void test_debug_file(void)
{
	char copy[PATH_MAX], cmd[8 * PATH_MAX], dbg_dir[PATH_MAX], dbg[2 * PATH_MAX], hex[2 * RPT_BUILD_ID_MAX + 1];
	struct symbolizer_opts o = { .no_kernel = 1 };
	void *(*local_addr)(void);
	struct symbolizer *s = NULL;
	const uint8_t *id;
	struct elfsym *es;
	struct sym_frame f;
	void *h = NULL, *local;
	size_t len, i;

	snprintf(copy, sizeof(copy), "%s/libfx_stripped.so", dir);
	snprintf(dbg_dir, sizeof(dbg_dir), "%s/debug", dir);
	es = elfsym__open(lib_path, NULL);
	if (!ASSERT_OK_PTR(es, "open fixture"))
		return;
	id = elfsym__build_id(es, &len);
	if (!ASSERT_TRUE(id && len == 20, "fixture build-id")) {
		elfsym__free(es);
		return;
	}
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	elfsym__free(es);
	snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", dbg_dir, hex, hex + 2);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug '%s' '%s' && "
		 "cp '%s' '%s' && strip --strip-all '%s'", dbg_dir, hex, lib_path, dbg, lib_path, copy, copy);
	if (!test__have("objcopy") || !test__have("strip")) {
		test__skip("objcopy or strip not found");
		return;
	}
	if (!ASSERT_OK(run(cmd), "objcopy --only-keep-debug, strip"))
		return;
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "dlopen stripped copy"))
		return;
	local_addr = (void *(*)(void))lib_sym(h, "fx_local_addr");
	if (!ASSERT_OK_PTR(local_addr, "fx_local_addr") || !ASSERT_TRUE(reload_self() > 0, "reload maps"))
		goto out;
	local = local_addr();

	/* No debug file: the static function is not in .dynsym. */
	o.debug_root = dir;
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "symbolizer without debug files"))
		goto out;
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)local + 1, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OUTSIDE_SYMBOL, "stripped, no debug file");
	ASSERT_NULL(f.sym, "no name");
	symbolizer__free(s);

	o.debug_root = dbg_dir;
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "symbolizer with debug files"))
		goto out;
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)local + 1, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "stripped + debug file");
	ASSERT_STREQ(f.sym, "fx_local_helper", "static function from the debug file");
	ASSERT_EQ(f.sym_off, (uint64_t)1, "offset");
	check_user(s, (uint32_t)getpid(), self, lib_sym(h, "fx_beta"), 2, "fx_beta", copy);
	symbolizer__free(s);

	/* A debug file with another build-id at that path is not used. */
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s'", exe_path, dbg);
	if (!ASSERT_OK(run(cmd), "replace the debug file"))
		goto out;
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "symbolizer with a wrong debug file"))
		goto out;
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)local + 1, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OUTSIDE_SYMBOL, "wrong build-id ignored");
	ASSERT_NULL(f.sym, "no name from the wrong file");
out:
	symbolizer__free(s);
	if (h)
		dlclose(h);
	reload_self();
}

/* max_files 1: two files in turns, each evicting the other; names stay valid. */
static void test_eviction(void)
{
	struct symbolizer *s = user_symbolizer(NULL, 1);
	void *alpha = lib_sym(lib, "fx_alpha"), *libc_fn = (void *)&memchr;
	const char *first = NULL;
	struct sym_frame f;
	double t0;
	size_t i, n = 200000;
	int round;

	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(alpha, "fx_alpha"))
		goto out;
	for (round = 0; round < 3; round++) {
		symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)alpha + 1, &f);
		if (!ASSERT_STREQ(f.sym, "fx_alpha", "fixture after eviction"))
			goto out;
		if (!first)
			first = f.sym;
		symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)libc_fn, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "libc");
		ASSERT_OK_PTR(f.sym, "libc name");
	}
	/* ASan would catch a name freed with its file. */
	ASSERT_STREQ(first, "fx_alpha", "a name outlives its file's eviction");

	t0 = now_ns();
	for (i = 0; i < n; i++)
		symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)alpha + (i & 7), &f);
	printf("     symbolizer: %.0f ns per user frame (file loaded, this build)\n",
	       (now_ns() - t0) / n);
out:
	symbolizer__free(s);
}

/*
 * max_modules 1: the fixture and libc in turns, each module evicting the
 * other (its fd closed); each comes back named, names stay valid, the
 * counts say so.
 */
static void test_module_cap(void)
{
	struct symbolizer_opts o = { .no_kernel = 1, .max_modules = 1 };
	struct symbolizer *s = symbolizer__new(&o);
	void *alpha = lib_sym(lib, "fx_alpha"), *libc_fn = (void *)&memchr;
	struct symbolizer_stats st;
	const char *first = NULL;
	struct sym_frame f;
	int round;

	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(alpha, "fx_alpha"))
		goto out;
	for (round = 0; round < 3; round++) {
		symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)alpha + 1, &f);
		if (!ASSERT_STREQ(f.sym, "fx_alpha", "the fixture, its module made again"))
			goto out;
		first = first ? first : f.sym;
		symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)libc_fn, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "libc");
		ASSERT_EQ(f.module->rpt.kind, (uint32_t)RPT_MOD_FILE, "libc's module");
	}
	symbolizer__stats(s, &st);
	ASSERT_EQ(st.file_modules, 1ull, "one file module held");
	ASSERT_EQ(st.modules_evicted, 5ull, "each turn evicted the other");
	ASSERT_TRUE(st.fds <= 1, "the evicted one's fd closed");
	ASSERT_STREQ(first, "fx_alpha", "a name outlives its module");
out:
	symbolizer__free(s);
}

/* max_mem 1 byte: only the table in use stays, and it always does. */
static void test_memory_cap(void)
{
	struct symbolizer_opts o = { .no_kernel = 1, .max_mem = 1 };
	struct symbolizer *s = symbolizer__new(&o);
	void *alpha = lib_sym(lib, "fx_alpha"), *libc_fn = (void *)&memchr;
	struct sym_frame f;
	size_t one;

	if (!ASSERT_OK_PTR(s, "new") || !ASSERT_OK_PTR(alpha, "fx_alpha"))
		goto out;
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)alpha + 1, &f);
	ASSERT_STREQ(f.sym, "fx_alpha", "named past the cap: the table in use is kept");
	ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)1, "one table");
	one = symbolizer__loaded_bytes(s);
	ASSERT_TRUE(one > 0, "its bytes are counted");
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)libc_fn, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_OK, "libc");
	ASSERT_EQ(symbolizer__nr_loaded(s), (size_t)1, "the other one was dropped");
	ASSERT_TRUE(symbolizer__loaded_bytes(s) != one, "the bytes are libc's now");
	symbolizer__user(s, (uint32_t)getpid(), self, (uint64_t)(uintptr_t)alpha + 1, &f);
	ASSERT_STREQ(f.sym, "fx_alpha", "reloaded");
	ASSERT_EQ(symbolizer__loaded_bytes(s), one, "and counted again");
out:
	symbolizer__free(s);
}

static bool check_map_files(void)
{
	const struct mapping *m = proc__find_mapping(self, (uint64_t)(uintptr_t)&memchr);
	char path[128];
	int fd;

	if (!m)
		return false;
	snprintf(path, sizeof(path), "/proc/self/map_files/%llx-%llx",
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int setup(void)
{
	char src[PATH_MAX], cmd[4 * PATH_MAX];

	strcpy(dir, "/tmp/bpfsym-symtest.XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(src, sizeof(src), "%s/fx_lib.c", dir);
	snprintf(lib_path, sizeof(lib_path), "%s/libfx.so", dir);
	if (test__write_file(src, lib_src))
		return -EIO;
	/*
	 * -Ttext-segment moves every segment's address away from its file
	 * offset, so only the real arithmetic finds the symbols.
	 */
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -fPIC -shared -Wl,--build-id=sha1 "
		 "-Wl,-Ttext-segment=0x200000 -o '%s' '%s' >> '%s/build.log' 2>&1", lib_path, src, dir);
	if (run(cmd)) {
		cc_failed = true;
		return -ENOEXEC;
	}
	snprintf(src, sizeof(src), "%s/fx_exe.c", dir);
	snprintf(exe_path, sizeof(exe_path), "%s/fx_exe", dir);
	if (test__write_file(src, exe_src))
		return -EIO;
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -fPIE -pie -Wl,--build-id=sha1 "
		 "-Wl,-Ttext-segment=0x300000 -o '%s' '%s' >> '%s/build.log' 2>&1", exe_path, src, dir);
	if (run(cmd)) {
		cc_failed = true;
		return -ENOEXEC;
	}
	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("     dlopen '%s': %s\n", lib_path, dlerror());
		return -ENOEXEC;
	}
	pt = proc_table__new(0);
	if (!pt)
		return -ENOMEM;
	self = proc_table__add(pt, (uint32_t)getpid(), 0);
	if (!self || reload_self() <= 0)
		return -ENOENT;
	map_files_ok = check_map_files();
	return 0;
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	int err;

	err = setup();
	test__fixtures_setup(err, cc_failed, dir);
	RUN_TEST(test_dlopen_self);
	RUN_TEST(test_pie_child);
	RUN_TEST(test_anon_none_vdso);
	RUN_TEST(test_jit_module_once);
	RUN_TEST(test_open_routes);
	RUN_TEST(test_deleted_library);
	RUN_TEST(test_debug_file);
	RUN_TEST(test_eviction);
	RUN_TEST(test_module_cap);
	RUN_TEST(test_memory_cap);
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	if (lib)
		dlclose(lib);
	proc_table__free(pt);
	return TEST_EXIT();
}
