// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debugfile: a stripped library finds its separate debug file by build-id
 * under a fake debug root, or by .gnu_debuglink next to it, in .debug/, or
 * under DEBUG_ROOT/DIR; and is refused a wrong CRC, another build-id, a
 * link to itself, a missing file, a name with '/' ("../" included), a FIFO,
 * a symlink leading out of the process's root.  Why a candidate was
 * refused is read from the debug log.  Last, a symbolizer resolves a
 * stripped library this process maps through its debuglink, through the
 * process's root.  Fixtures are built with cc, objcopy and strip.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zlib.h>

#include "symbolize/debugfile.h"
#include "symbolize/elf/elfsym.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"
#include "base/util.h"
#include "test.h"
#include "debug_fixture.h"

TEST_SUITE("debugfile")

static const char dl_src[] =
"#define NI __attribute__((noinline, used))\n"
"static int NI dl_local_helper(int x) { volatile int v = x; v ^= 0x55; v *= 3; return v; }\n"
"int NI dl_alpha(int x) { return dl_local_helper(x) + 1; }\n"
"void *dl_local_addr(void) { return (void *)dl_local_helper; }\n"
"#ifdef DL_OTHER\n"
"int NI dl_other(int x) { return x * 9; }\n"
"#endif\n";

static const char *const tools[] = { "cc", "nm", "objcopy", "strip", NULL };
static int built;
static uint64_t local_addr;	/* dl_local_helper in libdbg.so, from nm */

static bool build(void)
{
	static struct nmfunc funcs[64];
	char path[PATH_MAX];
	size_t n, i;

	if (!dsetup(tools))
		return false;
	if (!built) {
		built = -1;
		if (!dsh("cat > dl.c <<'EOF'\n%sEOF\n", dl_src) &&
		    !dsh("cc -O1 -fPIC -shared -Wl,--build-id=sha1 -o libdbg.so dl.c && "
			 "cc -O1 -fPIC -shared -DDL_OTHER -Wl,--build-id=sha1 -o libother.so dl.c && "
			 "objcopy --only-keep-debug libdbg.so libdbg.debug && "
			 "objcopy --only-keep-debug libother.so libother.debug && "
			 "strip --strip-all -o libdbg.stripped libdbg.so && mkdir empty"))
			built = 1;
		dpath(path, sizeof(path), "libdbg.so");
		n = nm_funcs(path, funcs, 64);
		for (i = 0; i < n; i++) {
			if (!strcmp(funcs[i].name, "dl_local_helper"))
				local_addr = funcs[i].addr;
		}
		if (built > 0 && !local_addr)
			built = -2;
	}
	if (built == -1) {
		dbuild_failed();
		return false;
	}
	if (built == -2) {
		test__fail_msg(__FILE__, __LINE__, "nm finds no dl_local_helper in libdbg.so");
		return false;
	}
	return true;
}

/*
 * A directory @dir holding libdbg.so stripped, with a debuglink to
 * libdbg.debug whose CRC is that of @debug_src (built next to it, then
 * removed: each test puts the debug file where it wants).
 */
static bool make_case(const char *dir, const char *debug_src)
{
	return !dsh("rm -rf %s && mkdir -p %s && cp libdbg.stripped %s/libdbg.so && "
		    "cp %s %s/libdbg.debug && cd %s && objcopy --add-gnu-debuglink=libdbg.debug libdbg.so && "
		    "rm libdbg.debug", dir, dir, dir, debug_src, dir, dir);
}

/*
 * debugfile__open() for @bin (a path in the temp directory, or @proc_path
 * as the process sees it inside @root_dir), the debug log in @log.
 */
static struct elfsym *lookup_debug(const char *bin, const char *root_dir, const char *proc_path,
				   const char *debug_root, uint64_t max_crc, char *log, size_t size)
{
	char path[PATH_MAX], droot[PATH_MAX], lpath[PATH_MAX];
	struct debugfile_query q = { .max_crc_size = max_crc, .owner = geteuid() };
	struct elfsym *es, *dbg = NULL;
	int saved, fd, err = 0;
	struct stat st;
	ssize_t n;

	log[0] = 0;
	dpath(path, sizeof(path), bin);
	es = elfsym__open(path, NULL);
	if (!ASSERT_OK_PTR(es, "open the binary") || !ASSERT_OK(stat(path, &st), "stat"))
		goto out;
	if (debug_root)
		dpath(droot, sizeof(droot), debug_root);
	q.es = es;
	q.path = proc_path ? proc_path : path;
	q.dev = st.st_dev;
	q.ino = st.st_ino;
	q.debug_root = debug_root ? droot : NULL;
	if (root_dir) {
		dpath(lpath, sizeof(lpath), root_dir);
		q.root_fd = open(lpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		q.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (!ASSERT_TRUE(q.root_fd >= 0, "open the root"))
		goto out;

	dpath(lpath, sizeof(lpath), "debug.log");
	fflush(stderr);
	saved = dup(2);
	fd = open(lpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (saved >= 0 && fd >= 0 && dup2(fd, 2) >= 0) {
		log_set_level(LOG_DEBUG);
		dbg = debugfile__open(&q);
		err = errno;
		log_set_level(LOG_WARN);
		fflush(stderr);
		dup2(saved, 2);
	}
	if (fd >= 0)
		close(fd);
	if (saved >= 0)
		close(saved);
	close(q.root_fd);
	fd = open(lpath, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, log, size - 1) : -1;
	log[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	errno = err;
out:
	elfsym__free(es);
	return dbg;
}

static struct elfsym *open_in_dir(const char *name)
{
	char path[PATH_MAX];

	dpath(path, sizeof(path), name);
	return elfsym__open(path, NULL);
}

/* The debug file was found, and holds the static function. */
static void expect_found(struct elfsym *dbg, const char *log, const char *what)
{
	const struct elfsym_sym *s;

	if (!ASSERT_OK_PTR(dbg, what)) {
		printf("     log:\n%s", log);
		return;
	}
	s = elfsym__lookup(dbg, local_addr + 1);
	ASSERT_STREQ(s ? s->name : NULL, "dl_local_helper", what);
	elfsym__free(dbg);
}

/* None was used, and the log says @why. */
static void expect_refused(struct elfsym *dbg, const char *log, const char *why, const char *what)
{
	if (!ASSERT_NULL(dbg, what)) {
		elfsym__free(dbg);
		return;
	}
	ASSERT_EQ(errno, ENOENT, what);
	if (!ASSERT_TRUE(strstr(log, why) != NULL, why))
		printf("     log:\n%s", log);
}

static void test_next_to_binary(void)
{
	char log[8192];

	if (!build() || !make_case("next", "libdbg.debug") ||
	    !ASSERT_OK(dsh("cp libdbg.debug next/"), "place"))
		return;
	expect_found(lookup_debug("next/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log, "DIR/NAME");
}

static void test_dot_debug(void)
{
	char log[8192];

	if (!build() || !make_case("dot", "libdbg.debug") ||
	    !ASSERT_OK(dsh("mkdir dot/.debug && cp libdbg.debug dot/.debug/"), "place"))
		return;
	expect_found(lookup_debug("dot/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log, "DIR/.debug/NAME");
}

static void test_debug_root_dir(void)
{
	char log[8192];

	if (!build() || !make_case("rootdir", "libdbg.debug") ||
	    !ASSERT_OK(dsh("mkdir -p droot%s/rootdir && cp libdbg.debug droot%s/rootdir/", dtmp, dtmp), "place"))
		return;
	expect_found(lookup_debug("rootdir/libdbg.so", NULL, NULL, "droot", 0, log, sizeof(log)), log,
		     "DEBUG_ROOT/DIR/NAME");
	expect_refused(lookup_debug("rootdir/libdbg.so", NULL, NULL, NULL, 0, log, sizeof(log)), log,
		       "cannot open", "no debug root");
}

/* A changed debug file is refused; the next candidate is still tried. */
static void test_wrong_crc(void)
{
	char log[8192];

	if (!build() || !make_case("crc", "libdbg.debug") ||
	    !ASSERT_OK(dsh("cp libdbg.debug crc/ && printf x >> crc/libdbg.debug"), "place"))
		return;
	expect_refused(lookup_debug("crc/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "CRC mismatch", "wrong CRC");
	if (!ASSERT_OK(dsh("mkdir crc/.debug && cp libdbg.debug crc/.debug/"), "place a good one"))
		return;
	expect_found(lookup_debug("crc/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		     "the next candidate");
	ASSERT_TRUE(strstr(log, "CRC mismatch") != NULL, "the first refused");
	expect_refused(lookup_debug("crc/libdbg.so", NULL, NULL, "empty", 1000, log, sizeof(log)), log,
		       "too large to check its CRC", "over the CRC size cap");
}

/*
 * A sparse debuglink target claiming 512 MiB (a few KiB on disk, anyone
 * can make one) is refused by size under the default cap, before a byte
 * of it is summed: a CRC over all of it took the recorder's thread half a
 * second per candidate (issue 25).
 */
static void test_sparse_crc(void)
{
	char log[8192];

	if (!build() || !make_case("sparse", "libdbg.debug") ||
	    !ASSERT_OK(dsh("cp libdbg.debug sparse/ && truncate -s 512M sparse/libdbg.debug"), "place"))
		return;
	expect_refused(lookup_debug("sparse/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "too large to check its CRC", "over the default CRC size cap (64 MiB)");
	ASSERT_TRUE(strstr(log, "CRC mismatch") == NULL, "never summed");
	dsh("rm -rf sparse");
}

static void test_self(void)
{
	char log[8192];

	if (!build() || !ASSERT_OK(dsh("rm -rf self && mkdir self && cp libdbg.stripped self/libdbg.so && "
				       "cd self && objcopy --add-gnu-debuglink=libdbg.so libdbg.so"), "link to itself"))
		return;
	expect_refused(lookup_debug("self/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "points to the binary itself", "debuglink to itself");
	/* Another name for the same file. */
	if (!make_case("hard", "libdbg.debug") || !ASSERT_OK(dsh("ln hard/libdbg.so hard/libdbg.debug"), "ln"))
		return;
	expect_refused(lookup_debug("hard/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "points to the binary itself", "a hard link to itself");
}

static void test_missing_fifo_dir(void)
{
	char log[8192];

	if (!build() || !make_case("missing", "libdbg.debug"))
		return;
	expect_refused(lookup_debug("missing/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "cannot open: No such file", "missing");
	if (!ASSERT_OK(dsh("mkfifo missing/libdbg.debug"), "mkfifo"))
		return;
	expect_refused(lookup_debug("missing/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "not a non-empty regular file", "a FIFO");
	if (!ASSERT_OK(dsh("rm missing/libdbg.debug && mkdir missing/libdbg.debug"), "mkdir"))
		return;
	expect_refused(lookup_debug("missing/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "not a non-empty regular file", "a directory");
}

/* A .gnu_debuglink section: @name, NUL, padding to 4, then @crc (little-endian). */
static bool add_link(const char *dir, const void *name, size_t name_len, uint32_t crc, size_t total)
{
	uint8_t sec[512] = { 0 };
	char path[2 * PATH_MAX];
	size_t off = (name_len + 4) & ~(size_t)3;
	FILE *f;

	if (total > sizeof(sec) || name_len >= sizeof(sec) - 8)
		return false;
	memcpy(sec, name, name_len);
	sec[off] = (uint8_t)crc;
	sec[off + 1] = (uint8_t)(crc >> 8);
	sec[off + 2] = (uint8_t)(crc >> 16);
	sec[off + 3] = (uint8_t)(crc >> 24);
	snprintf(path, sizeof(path), "%s/%s/link.bin", dtmp, dir);
	f = fopen(path, "wb");
	if (!f || fwrite(sec, 1, total ? total : off + 4, f) != (total ? total : off + 4)) {
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	return !dsh("cd %s && objcopy --add-section .gnu_debuglink=link.bin libdbg.so", dir);
}

static uint32_t file_crc(const char *name)
{
	size_t len;
	void *buf = dread(name, &len);
	uint32_t crc = buf ? (uint32_t)crc32(0, buf, (uInt)len) : 0;

	free(buf);
	return crc;
}

/* Names leading elsewhere are refused, though the file there would match. */
static void test_names_with_slash(void)
{
	static const char *names[] = { "../up/libdbg.debug", "sub/libdbg.debug", "/abs/libdbg.debug" };
	uint32_t crc, got;
	char log[8192];
	struct elfsym *es;
	size_t i;

	if (!build())
		return;
	crc = file_crc("libdbg.debug");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!ASSERT_OK(dsh("rm -rf slash up && mkdir -p slash/sub up && cp libdbg.stripped slash/libdbg.so && "
				   "cp libdbg.debug up/ && cp libdbg.debug slash/sub/"), "place") ||
		    !ASSERT_TRUE(add_link("slash", names[i], strlen(names[i]), crc, 0), "add the link"))
			return;
		es = open_in_dir("slash/libdbg.so");
		if (ASSERT_OK_PTR(es, "open")) {
			ASSERT_STREQ(elfsym__debuglink(es, &got), names[i], "the name as written");
			ASSERT_EQ(got, crc, "the CRC as written");
		}
		elfsym__free(es);
		expect_refused(lookup_debug("slash/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
			       "a debuglink name with '/'", names[i]);
	}
}

/* Malformed sections give no debuglink, and the file is still read. */
static void test_malformed_link(void)
{
	static const struct { const char *bytes; size_t name_len, total; const char *what; } bad[] = {
		{ "", 0, 8, "empty name" },
		{ "abcdefgh", 8, 8, "no NUL inside" },
		{ "abc", 3, 4, "no room for the CRC" },
		{ "abcd", 4, 10, "CRC cut short" },
	};
	struct elfsym *es;
	uint32_t crc = 1;
	size_t i;

	if (!build())
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!ASSERT_OK(dsh("rm -rf bad && mkdir bad && cp libdbg.stripped bad/libdbg.so"), "copy") ||
		    !ASSERT_TRUE(add_link("bad", bad[i].bytes, bad[i].name_len, 0x12345678, bad[i].total),
				 "add the link"))
			return;
		es = open_in_dir("bad/libdbg.so");
		if (ASSERT_OK_PTR(es, bad[i].what)) {
			ASSERT_NULL(elfsym__debuglink(es, &crc), bad[i].what);
			ASSERT_EQ(crc, (uint32_t)0, "no CRC");
			ASSERT_TRUE(elfsym__nr_syms(es) > 0, ".dynsym read");
		}
		elfsym__free(es);
	}
	/* objcopy's own, for comparison: the name, and the CRC zlib computes. */
	if (!make_case("good", "libdbg.debug"))
		return;
	es = open_in_dir("good/libdbg.so");
	if (ASSERT_OK_PTR(es, "open")) {
		ASSERT_STREQ(elfsym__debuglink(es, &crc), "libdbg.debug", "name");
		ASSERT_EQ(crc, file_crc("libdbg.debug"), "CRC");
	}
	elfsym__free(es);
}

/* DEBUG_ROOT/.build-id/xx/rest.debug, with no debuglink at all. */
static void test_build_id(void)
{
	char hex[2 * 64 + 1], log[8192];
	struct elfsym *es;
	const uint8_t *id;
	size_t len, i;

	if (!build())
		return;
	es = open_in_dir("libdbg.so");
	id = es ? elfsym__build_id(es, &len) : NULL;
	if (!ASSERT_OK_PTR(id, "build-id") || !ASSERT_EQ(len, (size_t)20, "sha1")) {
		elfsym__free(es);
		return;
	}
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	elfsym__free(es);
	if (!ASSERT_OK(dsh("rm -rf bid && mkdir -p bid/.build-id/%.2s && cp libdbg.stripped bid/libdbg.so && "
			   "cp libdbg.debug bid/.build-id/%.2s/%s.debug", hex, hex, hex + 2), "place"))
		return;
	expect_found(lookup_debug("bid/libdbg.so", NULL, NULL, "bid", 0, log, sizeof(log)), log, "by build-id");
	expect_refused(lookup_debug("bid/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "cannot open", "another debug root");

	/* Another library's debug file at that path. */
	if (!ASSERT_OK(dsh("cp libother.debug bid/.build-id/%.2s/%s.debug", hex, hex + 2), "replace"))
		return;
	expect_refused(lookup_debug("bid/libdbg.so", NULL, NULL, "bid", 0, log, sizeof(log)), log,
		       "another build-id", "by build-id, another build-id");
}

/* By debuglink, the CRC matches, but both have build-ids and they differ. */
static void test_debuglink_other_build_id(void)
{
	char log[8192];

	if (!build() || !make_case("other", "libother.debug") ||
	    !ASSERT_OK(dsh("cp libother.debug other/libdbg.debug"), "place"))
		return;
	expect_refused(lookup_debug("other/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "another build-id", "by debuglink, another build-id");
}

/*
 * The candidates next to the binary are the process's: resolved inside its
 * root, where an absolute symlink leads to the root's file, never the host's.
 */
static void test_in_root(void)
{
	char log[8192];

	if (!build() || !make_case("rootfs/usr/lib", "libdbg.debug") ||
	    !ASSERT_OK(dsh("mkdir -p hostonly rootfs/dbg && cp libdbg.debug hostonly/ && "
			   "ln -s %s/hostonly/libdbg.debug rootfs/usr/lib/libdbg.debug", dtmp), "place"))
		return;
	/*
	 * Next to the binary is where its user writes: a symlink there is
	 * never followed (issue 25), out of the root or inside it; the
	 * same file put there is found.
	 */
	expect_refused(lookup_debug("rootfs/usr/lib/libdbg.so", NULL, NULL, "empty", 0, log, sizeof(log)), log,
		       "reached through a symlink", "the link, as the host sees it");
	expect_refused(lookup_debug("rootfs/usr/lib/libdbg.so", "rootfs", "/usr/lib/libdbg.so", "empty", 0,
				    log, sizeof(log)), log, "reached through a symlink",
		       "an absolute symlink out of the root");
	if (!ASSERT_OK(dsh("cp libdbg.debug rootfs/dbg/ && rm rootfs/usr/lib/libdbg.debug && "
			   "ln -s /dbg/libdbg.debug rootfs/usr/lib/libdbg.debug"), "relink"))
		return;
	expect_refused(lookup_debug("rootfs/usr/lib/libdbg.so", "rootfs", "/usr/lib/libdbg.so", "empty", 0,
				    log, sizeof(log)), log, "reached through a symlink",
		       "an absolute symlink inside the root");
	if (!ASSERT_OK(dsh("rm rootfs/usr/lib/libdbg.debug && cp libdbg.debug rootfs/usr/lib/"), "copy"))
		return;
	expect_found(lookup_debug("rootfs/usr/lib/libdbg.so", "rootfs", "/usr/lib/libdbg.so", "empty", 0,
				  log, sizeof(log)), log, "the file itself inside the root");
	if (!ASSERT_OK(dsh("chmod o+w rootfs/usr/lib/libdbg.debug"), "chmod"))
		return;
	expect_refused(lookup_debug("rootfs/usr/lib/libdbg.so", "rootfs", "/usr/lib/libdbg.so", "empty", 0,
				    log, sizeof(log)), log, "writable by others", "the file, writable by others");
}

/* The static function at this process's address @addr, through a new symbolizer. */
static uint32_t resolve(const char *proc_root, struct proc *p, const void *addr, const char **sym)
{
	char droot[PATH_MAX];
	struct symbolizer_opts o = { .proc_root = proc_root, .no_kernel = 1, .debug_root = droot };
	struct symbolizer *s;
	struct sym_frame f;

	dpath(droot, sizeof(droot), "empty");
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "symbolizer"))
		return UINT32_MAX;
	symbolizer__user(s, (uint32_t)getpid(), p, (uint64_t)(uintptr_t)addr + 1, &f);
	*sym = f.sym && !strcmp(f.sym, "dl_local_helper") && f.sym_off == 1 ? "dl_local_helper" : f.sym;
	symbolizer__free(s);
	return f.reason;
}

/*
 * A stripped library mapped by this process: no name for its static
 * function until the debug file is there, next to it, in this process's
 * root; first a fake /proc whose PID/root holds it where the host has none.
 */
static void test_symbolizer(void)
{
	char lib[PATH_MAX], proc[PATH_MAX];
	struct proc_table *pt = NULL;
	void *(*local)(void), *h;
	const char *sym = NULL;
	struct proc *p;

	if (!build() || !make_case("sym", "libdbg.debug") ||
	    !ASSERT_OK(dsh("mkdir -p fakeproc/%d fakeroot%s/sym && ln -s %s/fakeroot fakeproc/%d/root && "
			   "ln sym/libdbg.so fakeroot%s/sym/libdbg.so && cp libdbg.debug fakeroot%s/sym/",
			   (int)getpid(), dtmp, dtmp, (int)getpid(), dtmp, dtmp), "fake proc"))
		return;
	dpath(lib, sizeof(lib), "sym/libdbg.so");
	dpath(proc, sizeof(proc), "fakeproc");
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "dlopen"))
		return;
	local = (void *(*)(void))dlsym(h, "dl_local_addr");
	pt = proc_table__new(0);
	p = pt ? proc_table__add(pt, (uint32_t)getpid(), 0) : NULL;
	if (!ASSERT_OK_PTR(local, "dl_local_addr") || !ASSERT_OK_PTR(p, "proc") ||
	    !ASSERT_TRUE(proc__load_maps(p, "/proc/self/maps") > 0, "maps"))
		goto out;

	ASSERT_EQ(resolve(NULL, p, local(), &sym), (uint32_t)RPT_OUTSIDE_SYMBOL, "no debug file");
	ASSERT_NULL(sym, "no name");
	ASSERT_EQ(resolve(proc, p, local(), &sym), (uint32_t)RPT_OK, "in the process's root");
	ASSERT_STREQ(sym, "dl_local_helper", "name and offset, through the process's root");
	if (!ASSERT_OK(dsh("cp libdbg.debug sym/"), "place on the host"))
		goto out;
	ASSERT_EQ(resolve(NULL, p, local(), &sym), (uint32_t)RPT_OK, "next to it");
	ASSERT_STREQ(sym, "dl_local_helper", "name and offset");
out:
	proc_table__free(pt);
	dlclose(h);
}

int main(void)
{
	RUN_TEST(test_next_to_binary);
	RUN_TEST(test_dot_debug);
	RUN_TEST(test_debug_root_dir);
	RUN_TEST(test_wrong_crc);
	RUN_TEST(test_sparse_crc);
	RUN_TEST(test_self);
	RUN_TEST(test_missing_fifo_dir);
	RUN_TEST(test_names_with_slash);
	RUN_TEST(test_malformed_link);
	RUN_TEST(test_build_id);
	RUN_TEST(test_debuglink_other_build_id);
	RUN_TEST(test_in_root);
	RUN_TEST(test_symbolizer);
	dcleanup();
	return TEST_EXIT();
}
