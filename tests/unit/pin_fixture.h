/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pin_fixture: what test_symbolizer_pin and test_symbolizer_pin_hostile
 * share: the fixtures (a library built twice under other names, an
 * executable), built from C at test time, mapped whole by mmap and never
 * run, and the helpers around them.
 */
#ifndef BPFSYM_PIN_FIXTURE_H
#define BPFSYM_PIN_FIXTURE_H

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

#include "test.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"

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

static __attribute__((unused)) double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static __attribute__((unused)) int run(const char *cmd)
{
	int st = system(cmd);

	if (st)
		printf("     '%s' exited with status %d\n", cmd, st);
	return st;
}

static __attribute__((unused)) int reload_self(void)
{
	return proc__load_maps(self, "/proc/self/maps");
}

static __attribute__((unused)) struct symbolizer *new_sym(const char *proc_root, size_t max_fds, size_t max_files)
{
	struct symbolizer_opts o = {
		.proc_root = proc_root, .no_kernel = 1, .max_fds = max_fds, .max_files = max_files,
	};

	return symbolizer__new(&o);
}

/* cp @from @to: a new inode with the same bytes. */
static __attribute__((unused)) int copy(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return run(cmd);
}

/* Map @path read+exec at offset 0, its mapping (with the file's mtime) in @f. */
static __attribute__((unused)) bool fmap_open(struct fmap *f, const char *path)
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

static __attribute__((unused)) void fmap_close(struct fmap *f)
{
	if (f->base)
		munmap(f->base, f->len);
	f->base = NULL;
}

static __attribute__((unused)) uint64_t alpha_ip(const struct fmap *f)
{
	return (uint64_t)(uintptr_t)f->base + alpha_off;
}

/* Symbolize fx_alpha's place in @f through @s: the frame in @out. */
static __attribute__((unused)) void sym_alpha(struct symbolizer *s, uint32_t pid, const struct fmap *f, struct sym_frame *out)
{
	symbolizer__user_mapping(s, pid, &f->m, alpha_ip(f), out);
}

/* A fake proc root DIR/NAME/PID/root -> @root, without map_files. */
static __attribute__((unused)) bool fake_proc(char *out, size_t len, const char *name, uint32_t pid, const char *root)
{
	char p[PATH_MAX];

	snprintf(out, len, "%s/%s", dir, name);
	snprintf(p, sizeof(p), "%s/%u", out, pid);
	if (!ASSERT_OK(mkdir(out, 0755), "mkdir") || !ASSERT_OK(mkdir(p, 0755), "mkdir"))
		return false;
	snprintf(p, sizeof(p), "%s/%u/root", out, pid);
	return ASSERT_OK(symlink(root, p), "symlink root");
}

static __attribute__((unused)) size_t count_fds(void)
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

static __attribute__((unused)) int build_lib(const char *prefix, const char *out)
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

static __attribute__((unused)) int setup(void)
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

/* The fixtures, built and loaded, or the whole binary skipped or failed as main()'s first step. */
static __attribute__((unused)) void pin_setup(void)
{
	int err = setup();

	test__fixtures_setup(err, cc_failed, dir);
}

static __attribute__((unused)) void pin_cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	proc_table__free(pt);
}

#endif /* BPFSYM_PIN_FIXTURE_H */
