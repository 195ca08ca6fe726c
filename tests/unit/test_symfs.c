// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report --symfs DIR`: user frames of a recording named again from
 * copies of its files under DIR.  A library is built at test time in
 * several forms (whole, stripped, its debug file two ways, another build);
 * a recording written with the real writer names its frames by file
 * offset, as the recorder does; each test lays DIR out one way and checks
 * what symfs__name(), the frame namer and the table make of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "debug_fixture.h"
#include "symbolize/elf/elfsym.h"
#include "view/frame_namer.h"
#include "symbolize/kernel/kallsyms.h"
#include "report/report.h"
#include "view/report_view.h"
#include "symbolize/symfs.h"
#include "base/util.h"

TEST_SUITE("symfs")

static const char lib_src[] =
"#define NI __attribute__((noinline, used))\n"
"static int NI sf_local(int x) { volatile int v = x; v ^= 0x55; v *= 3; return v; }\n"
"int NI sf_alpha(int x) { return sf_local(x) + 1; }\n"
"int sf_cpp(int x) __asm__(\"_ZN2sf3cppEi\");\n"
"int NI sf_cpp(int x) { volatile int v = x; v += 7; return v * sf_alpha(x); }\n"
"#ifdef OTHER\n"
"int NI sf_other(int x) { return x * 9; }\n"
"#endif\n";

static const char *const tools[] = { "cc", "nm", "objcopy", "strip", NULL };
static int built;
static bool have_eu_strip;
static char lib_hex[2 * RPT_BUILD_ID_MAX + 1];	/* libsf.so's build-id */
static struct rpt_module lib_mod, nobid_mod;
static uint64_t off_local, off_alpha, off_cpp;	/* file offsets of the functions' first bytes */
static char errbuf[512];

#define LIB_PATH	"/opt/sf/lib/libsf.so"
#define NOBID_PATH	"/opt/sf/lib/libnobid.so"

/* The file offset of function @name in @es (from nm's address). */
static bool func_offset(const struct elfsym *es, const struct nmfunc *f, size_t n, const char *name,
			uint64_t *off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return !elfsym__vaddr_to_offset(es, f[i].addr, off);
	return false;
}

static bool build(void)
{
	static struct nmfunc funcs[64];
	const uint8_t *id;
	char path[PATH_MAX];
	struct elfsym *es;
	size_t n, len, i;
	bool ok;

	if (!dsetup(tools))
		return false;
	if (!built) {
		built = -1;
		have_eu_strip = !system("command -v eu-strip >/dev/null 2>&1");
		if (dsh("cat > sf.c <<'EOF'\n%sEOF\n", lib_src) ||
		    dsh("cc -O1 -fPIC -shared -Wl,--build-id=sha1 -o libsf.so sf.c && "
			"cc -O1 -fPIC -shared -DOTHER -Wl,--build-id=sha1 -o libother.so sf.c && "
			"cc -O1 -fPIC -shared -Wl,--build-id=none -o libnobid.so sf.c && "
			"objcopy --only-keep-debug libsf.so libsf.debug && "
			"strip --strip-all -o libsf.stripped libsf.so && mkdir empty") ||
		    (have_eu_strip && dsh("eu-strip -f libsf.eudebug -o libsf.eustripped libsf.so")))
			goto out;
		/* Built: what fails from here on is elfsym, or nm. */
		built = -2;
		dpath(path, sizeof(path), "libsf.so");
		n = nm_funcs(path, funcs, 64);
		es = elfsym__open(path, NULL);
		if (!es)
			goto out;
		id = elfsym__build_id(es, &len);
		ok = id && len >= 2 && len <= RPT_BUILD_ID_MAX &&
		     func_offset(es, funcs, n, "sf_local", &off_local) &&
		     func_offset(es, funcs, n, "sf_alpha", &off_alpha) &&
		     func_offset(es, funcs, n, "_ZN2sf3cppEi", &off_cpp);
		if (ok) {
			lib_mod = (struct rpt_module){ .kind = RPT_MOD_FILE, .path = LIB_PATH,
						       .build_id_len = (uint32_t)len, .dev = 8, .ino = 100 };
			memcpy(lib_mod.build_id, id, len);
			for (i = 0; i < len; i++)
				snprintf(lib_hex + 2 * i, 3, "%02x", id[i]);
			nobid_mod = (struct rpt_module){ .kind = RPT_MOD_FILE, .path = NOBID_PATH,
							 .dev = 8, .ino = 101 };
			built = 1;
		}
		elfsym__free(es);
	}
out:
	if (built == -1) {
		dbuild_failed();
		return false;
	}
	if (built == -2) {
		test__fail_msg(__FILE__, __LINE__, "libsf.so built, but its build-id or the offsets of "
			       "sf_local, sf_alpha, _ZN2sf3cppEi (nm, elfsym) are not there");
		return false;
	}
	return true;
}

/*
 * The recording: libsf.so at LIB_PATH (another copy of the same build at
 * another path, as in a second container), libnobid.so, a library DIR
 * never has, anonymous memory and a kernel frame.  Each user frame is a
 * function's first byte + 1, looked up as the recorder would (offset),
 * with what the recorder found then: libsf.so was stripped, so only its
 * exported functions have names.
 */
enum { M_K, M_LIB, M_LIB2, M_NOBID, M_GONE, M_ANON, NR_MODS };
enum {
	F_KERN, F_LOCAL, F_ALPHA, F_CPP, F_HDR, F_HDR_NAMED, F_LIB2_LOCAL, F_NOBID_LOCAL,
	F_GONE, F_GONE_NAMED, F_ANON, NR_FRAMES
};
static struct rpt_module mods[NR_MODS];
static struct rpt_frame frames[NR_FRAMES];
static uint32_t fid[NR_FRAMES];
static char data_path[PATH_MAX];

static const struct {
	uint32_t nr, ids[3];
	uint32_t count;
} stacks[] = {
	{ 3, { F_KERN, F_LOCAL, F_ALPHA }, 5 },
	{ 2, { F_CPP, F_ALPHA }, 3 },
	{ 1, { F_HDR }, 1 },
	{ 1, { F_HDR_NAMED }, 1 },
	{ 1, { F_LIB2_LOCAL }, 1 },
	{ 1, { F_NOBID_LOCAL }, 2 },
	{ 2, { F_GONE, F_GONE_NAMED }, 2 },
	{ 1, { F_ANON }, 1 },
};

static void fixture_frames(void)
{
	memset(mods, 0, sizeof(mods));
	mods[M_K] = (struct rpt_module){ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" };
	mods[M_LIB] = lib_mod;
	mods[M_LIB2] = lib_mod;
	mods[M_LIB2].path = "/containers/c1/usr/lib/libsf.so";
	mods[M_LIB2].ino = 200;
	mods[M_NOBID] = nobid_mod;
	mods[M_GONE] = (struct rpt_module){ .kind = RPT_MOD_FILE, .path = "/usr/lib/libgone.so.1",
					    .build_id_len = 20, .dev = 8, .ino = 102 };
	memset(mods[M_GONE].build_id, 0x5a, 20);
	mods[M_ANON] = (struct rpt_module){ .kind = RPT_MOD_ANON, .path = "" };

	frames[F_KERN] = (struct rpt_frame){ RPT_FRAME_KERNEL, M_K, 0xffffffff81000123ULL,
					     0xffffffff81000123ULL, "do_syscall_64", 0x23, RPT_OK };
	frames[F_LOCAL] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB, off_local + 1, 0x7f0000000000ULL + off_local + 1,
					      NULL, 0, RPT_OUTSIDE_SYMBOL };
	frames[F_ALPHA] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB, off_alpha + 1, 0x7f0000000000ULL + off_alpha + 1,
					      "sf_alpha", 1, RPT_OK };
	frames[F_CPP] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB, off_cpp + 1, 0x7f0000000000ULL + off_cpp + 1,
					    "sf::cpp(int)", 1, RPT_OK };
	/* The ELF header: mapped, no function there. */
	frames[F_HDR] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB, 0x10, 0x7f0000000010ULL, NULL, 0,
					    RPT_OUTSIDE_SYMBOL };
	frames[F_HDR_NAMED] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB, 0x20, 0x7f0000000020ULL,
						  "recorded_there", 0x20, RPT_OK };
	frames[F_LIB2_LOCAL] = (struct rpt_frame){ RPT_FRAME_USER, M_LIB2, off_local + 2,
						   0x7f1000000000ULL + off_local + 2, NULL, 0, RPT_OUTSIDE_SYMBOL };
	frames[F_NOBID_LOCAL] = (struct rpt_frame){ RPT_FRAME_USER, M_NOBID, off_local + 1,
						    0x7f2000000000ULL + off_local + 1, NULL, 0, RPT_NO_SYMBOLS };
	frames[F_GONE] = (struct rpt_frame){ RPT_FRAME_USER, M_GONE, 0x1234, 0x7f3000001234ULL, NULL, 0,
					     RPT_OUTSIDE_SYMBOL };
	frames[F_GONE_NAMED] = (struct rpt_frame){ RPT_FRAME_USER, M_GONE, 0x2000, 0x7f3000002000ULL,
						   "gone_fn", 0, RPT_OK };
	frames[F_ANON] = (struct rpt_frame){ RPT_FRAME_USER, M_ANON, 0x40, 0x7f4000000040ULL, NULL, 0, RPT_ANON };
}

/* The recording above, read back; NULL (a failure) on error. */
static struct report *recording(void)
{
	struct rpt_header h = {
		.hostname = "recorder", .release = "6.18.0-test", .event = "cpu-clock",
		.target = "all", .freq = 99, .nr_cpus = 2, .text_addr = 0xffffffff81000000ULL,
		.start_wall_ns = 1714560000000000000ULL,
	};
	uint32_t id, ids[3], sid, j;
	struct report_writer *w;
	struct report *r;
	size_t i, k;

	fixture_frames();
	dpath(data_path, sizeof(data_path), "sf.data");
	w = report_writer__open(data_path, &h);
	if (!ASSERT_OK_PTR(w, "open"))
		return NULL;
	for (i = 0; i < NR_MODS; i++)
		if (!ASSERT_OK(report_writer__module(w, &mods[i], &id), "module") ||
		    !ASSERT_EQ(id, (uint32_t)i, "module id"))
			goto fail;
	for (i = 0; i < NR_FRAMES; i++)
		if (!ASSERT_OK(report_writer__frame(w, &frames[i], &fid[i]), "frame"))
			goto fail;
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		for (j = 0; j < stacks[i].nr; j++)
			ids[j] = fid[stacks[i].ids[j]];
		if (!ASSERT_OK(report_writer__stack(w, ids, stacks[i].nr, &sid), "stack"))
			goto fail;
		for (k = 0; k < stacks[i].count; k++) {
			struct rpt_sample s = { .time = (i * 10 + k) * 1000000ULL, .pid = 100, .tid = 100,
						.comm = "app", .stack = sid };

			if (!ASSERT_OK(report_writer__sample(w, &s), "sample"))
				goto fail;
		}
	}
	h.end_wall_ns = h.start_wall_ns + 1000000000ULL;
	if (!ASSERT_OK(report_writer__close(w, &h), "close"))
		return NULL;
	r = report__open(data_path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	return r;
fail:
	report_writer__abort(w);
	return NULL;
}

/*
 * A fresh DIR laid out by the shell commands @fmt, run in it with $F the
 * fixtures' directory and libsf.so's build-id split as .build-id wants it:
 * $H its first byte, $R the rest, in hex.
 */
static bool layout(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool layout(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (!ASSERT_TRUE(n > 0 && (size_t)n < sizeof(cmd), "layout command"))
		return false;
	return ASSERT_OK(dsh("rm -rf symfs && mkdir symfs && cd symfs && F=.. H=%.2s R=%s && %s",
			     lib_hex, lib_hex + 2, cmd), "layout");
}

struct env {
	struct report *r;
	struct symfs *fs;
};

/* The recording and a symfs over the DIR just laid out (@o may be NULL). */
static bool env_open(struct env *e, const struct symfs_opts *o)
{
	char dir[PATH_MAX];

	memset(e, 0, sizeof(*e));
	e->r = recording();
	if (!e->r)
		return false;
	dpath(dir, sizeof(dir), "symfs");
	e->fs = symfs__open(dir, e->r, o, errbuf, sizeof(errbuf));
	return ASSERT_OK_PTR(e->fs, errbuf);
}

static void env_close(struct env *e)
{
	symfs__free(e->fs);
	report__free(e->r);
	unlink(data_path);
}

/* symfs__name() of frame @f: decided (or not) with that name, offset and reason. */
static void expect(struct env *e, int f, bool decides, const char *sym, uint64_t sym_off, uint32_t reason,
		   const char *what)
{
	struct symfs_name n = { .sym = "unset", .reason = 999 };
	bool got = symfs__name(e->fs, report__frame(e->r, fid[f]), &n);

	if (!ASSERT_EQ(got, decides, what) || !decides)
		return;
	if (sym)
		ASSERT_STREQ(n.sym, sym, what);
	else
		ASSERT_NULL(n.sym, what);
	ASSERT_EQ(n.sym_off, sym_off, what);
	ASSERT_EQ(n.reason, reason, what);
}

/* The stats, field by field: by build-id, by path, debug only, mismatch, no offsets, not found. */
static void expect_stats(struct env *e, size_t bid, size_t path, size_t dbg, size_t mis, size_t noff,
			 size_t nf)
{
	struct symfs_stats st;

	symfs__stats(e->fs, &st);
	ASSERT_EQ(st.modules, (size_t)4, "file modules");	/* LIB, LIB2, NOBID, GONE */
	ASSERT_EQ(st.by_build_id, bid, "by build-id");
	ASSERT_EQ(st.by_path, path, "by path");
	ASSERT_EQ(st.debug_only, dbg, "debug only");
	ASSERT_EQ(st.mismatch, mis, "mismatch");
	ASSERT_EQ(st.no_offsets, noff, "no offsets");
	ASSERT_EQ(st.not_found, nf, "not found");
}

/* What every layout that gives the whole library must name. */
static void expect_whole_lib(struct env *e)
{
	expect(e, F_LOCAL, true, "sf_local", 1, RPT_OK, "a static function, unnamed when recorded");
	expect(e, F_ALPHA, true, "sf_alpha", 1, RPT_OK, "an exported one");
	expect(e, F_CPP, true, "sf::cpp(int)", 1, RPT_OK, "demangled");
	expect(e, F_HDR, true, NULL, 0, RPT_OUTSIDE_SYMBOL, "no function there, unnamed when recorded");
	expect(e, F_HDR_NAMED, false, NULL, 0, 0, "no function there: the recorded name stays");
	expect(e, F_LIB2_LOCAL, true, "sf_local", 2, RPT_OK, "the same build at another path");
	expect(e, F_GONE, false, NULL, 0, 0, "not under DIR");
	expect(e, F_GONE_NAMED, false, NULL, 0, 0, "not under DIR, named");
	expect(e, F_KERN, false, NULL, 0, 0, "kernel frame");
	expect(e, F_ANON, false, NULL, 0, 0, "anonymous memory");
}

static void test_by_build_id(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p .build-id/$H && cp $F/libsf.so .build-id/$H/$R") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 2, 0, 0, 0, 0, 2);
	expect_whole_lib(&e);
	expect(&e, F_NOBID_LOCAL, false, NULL, 0, 0, "no build-id, not at its path");
	env_close(&e);
}

static void test_by_path(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p opt/sf/lib && cp $F/libsf.so $F/libnobid.so opt/sf/lib/") ||
	    !env_open(&e, NULL))
		return;
	/* LIB2 shares LIB's build-id: found where LIB is. */
	expect_stats(&e, 0, 3, 0, 0, 0, 1);
	expect_whole_lib(&e);
	expect(&e, F_NOBID_LOCAL, true, "sf_local", 1, RPT_OK, "no build-id recorded, none in the file");
	env_close(&e);
}

/* Another build at the recorded path: refused, never names a frame. */
static void test_mismatch(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p opt/sf/lib && cp $F/libother.so opt/sf/lib/libsf.so && "
				"cp $F/libsf.so opt/sf/lib/libnobid.so") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 0, 0, 3, 0, 1);
	expect(&e, F_LOCAL, true, NULL, 0, RPT_BUILD_ID_MISMATCH, "unnamed: says why DIR did not help");
	expect(&e, F_ALPHA, false, NULL, 0, 0, "named: the recorded name stays");
	expect(&e, F_CPP, false, NULL, 0, 0, "named: the recorded name stays");
	expect(&e, F_NOBID_LOCAL, true, NULL, 0, RPT_BUILD_ID_MISMATCH,
	       "no build-id recorded, one in the file: another build");
	env_close(&e);
}

/* Replaced by another build between finding and reading: refused then too. */
static void test_changed_after_open(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p opt/sf/lib && cp $F/libsf.so opt/sf/lib/") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 2, 0, 0, 0, 2);
	if (ASSERT_OK(dsh("cp libother.so symfs" LIB_PATH), "replace")) {
		log_set_level(LOG_ERROR);	/* the warning it logs is expected */
		expect(&e, F_LOCAL, true, NULL, 0, RPT_BUILD_ID_MISMATCH, "unnamed: says why");
		log_set_level(LOG_WARN);
		expect(&e, F_ALPHA, false, NULL, 0, 0, "named: the recorded name stays");
	}
	env_close(&e);
}

/* The binary stripped, its debug file wherever the recorder would look, inside DIR. */
static void test_debug_files(void)
{
	static const struct {
		const char *what, *cmd;
	} cases[] = {
		{ "DIR/.build-id/xx/rest.debug", "mkdir -p .build-id/$H && cp $F/libsf.debug .build-id/$H/$R.debug" },
		{ "DIR/usr/lib/debug/.build-id/xx/rest.debug",
		  "mkdir -p usr/lib/debug/.build-id/$H && cp $F/libsf.debug usr/lib/debug/.build-id/$H/$R.debug" },
		{ "debuglink next to it", "cp $F/libsf.debug opt/sf/lib/libsf.debug" },
		{ "debuglink in .debug/", "mkdir opt/sf/lib/.debug && cp $F/libsf.debug opt/sf/lib/.debug/libsf.debug" },
		{ "debuglink under DIR/usr/lib/debug",
		  "mkdir -p usr/lib/debug/opt/sf/lib && cp $F/libsf.debug usr/lib/debug/opt/sf/lib/libsf.debug" },
	};
	struct env e;
	size_t i;

	if (!build())
		return;
	/* Stripped, no debug file: the exported functions only. */
	if (!layout("mkdir -p opt/sf/lib && cp $F/libsf.stripped opt/sf/lib/libsf.so") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 2, 0, 0, 0, 2);
	expect(&e, F_LOCAL, true, NULL, 0, RPT_OUTSIDE_SYMBOL, "stripped: no name for a static function");
	expect(&e, F_ALPHA, true, "sf_alpha", 1, RPT_OK, "stripped: .dynsym");
	env_close(&e);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!layout("mkdir -p opt/sf/lib && cp $F/libsf.stripped opt/sf/lib/libsf.so && "
			    "(cd opt/sf/lib && objcopy --add-gnu-debuglink=../../../$F/libsf.debug libsf.so) && %s",
			    cases[i].cmd) || !env_open(&e, NULL))
			return;
		expect(&e, F_LOCAL, true, "sf_local", 1, RPT_OK, cases[i].what);
		expect(&e, F_CPP, true, "sf::cpp(int)", 1, RPT_OK, cases[i].what);
		env_close(&e);
	}
}

/*
 * A debug file and no binary: objcopy's has no file offsets left (refused,
 * counted: its binary is needed); eu-strip's keeps them and names alone.
 */
static void test_debug_only(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p .build-id/$H && cp $F/libsf.debug .build-id/$H/$R.debug") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 0, 0, 0, 2, 2);
	expect(&e, F_LOCAL, false, NULL, 0, 0, "objcopy's debug file alone");
	env_close(&e);

	if (!have_eu_strip) {
		test__skip("no eu-strip: a debug file with its file offsets not tested");
		return;
	}
	if (!layout("mkdir -p usr/lib/debug/.build-id/$H && cp $F/libsf.eudebug usr/lib/debug/.build-id/$H/$R.debug") ||
	    !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 0, 2, 0, 0, 2);
	expect_whole_lib(&e);
	env_close(&e);
}

/* DIR is a root: an absolute symlink in it points into it, not to the host's file. */
static void test_symlinks_stay_inside(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p .build-id/$H && ln -s %s/libsf.so .build-id/$H/$R", dtmp) || !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 0, 0, 0, 0, 4);
	expect(&e, F_LOCAL, false, NULL, 0, 0, "a link to the host's file");
	env_close(&e);

	if (!layout("mkdir -p .build-id/$H opt/sf/lib && cp $F/libsf.so opt/sf/lib/libsf.so && "
		    "ln -s " LIB_PATH " .build-id/$H/$R") || !env_open(&e, NULL))
		return;
	expect_stats(&e, 2, 0, 0, 0, 0, 2);
	expect(&e, F_LOCAL, true, "sf_local", 1, RPT_OK, "a link inside DIR, as perf's build-id cache makes");
	env_close(&e);
}

/* A file that is not ELF, a directory, a FIFO at the paths: not found, nothing blocks. */
static void test_not_files(void)
{
	struct env e;

	if (!build() || !layout("mkdir -p opt/sf/lib/libsf.so .build-id/$H && mkfifo opt/sf/lib/libnobid.so && "
				"echo text > .build-id/$H/$R") ||
	    !env_open(&e, NULL))
		return;
	expect_stats(&e, 0, 0, 0, 0, 0, 4);
	expect(&e, F_LOCAL, false, NULL, 0, 0, "nothing usable");
	env_close(&e);
}

/* One file loaded at a time: evicted, read again, names still valid. */
static void test_cache_bound(void)
{
	struct symfs_opts o = { .max_loaded = 1 };
	struct symfs_name a, b;
	struct symfs_stats st;
	struct env e;

	if (!build() || !layout("mkdir -p opt/sf/lib && cp $F/libsf.so $F/libnobid.so opt/sf/lib/") ||
	    !env_open(&e, &o))
		return;
	ASSERT_TRUE(symfs__name(e.fs, report__frame(e.r, fid[F_LOCAL]), &a), "lib");
	ASSERT_TRUE(symfs__name(e.fs, report__frame(e.r, fid[F_NOBID_LOCAL]), &b), "nobid: lib evicted");
	symfs__stats(e.fs, &st);
	ASSERT_EQ(st.loads, (size_t)2, "two loads");
	ASSERT_EQ(st.loaded, (size_t)1, "one held");
	ASSERT_STREQ(a.sym, "sf_local", "a name outlives its file");
	/* Answered before: no load.  A new offset: read again. */
	expect(&e, F_LOCAL, true, "sf_local", 1, RPT_OK, "again");
	symfs__stats(e.fs, &st);
	ASSERT_EQ(st.loads, (size_t)2, "remembered, not read again");
	expect(&e, F_CPP, true, "sf::cpp(int)", 1, RPT_OK, "another offset");
	symfs__stats(e.fs, &st);
	ASSERT_EQ(st.loads, (size_t)3, "read again");
	ASSERT_EQ(st.loaded, (size_t)1, "still one held");
	expect(&e, F_NOBID_LOCAL, true, "sf_local", 1, RPT_OK, "the other, remembered");
	env_close(&e);
}

static void test_bad_dir(void)
{
	char dir[PATH_MAX];
	struct report *r;

	if (!build() || !(r = recording()))
		return;
	dpath(dir, sizeof(dir), "no-such-dir");
	errno = 0;
	ASSERT_NULL(symfs__open(dir, r, NULL, errbuf, sizeof(errbuf)), "missing");
	ASSERT_EQ(errno, ENOENT, "ENOENT");
	ASSERT_TRUE(strstr(errbuf, "No such file"), errbuf);
	dpath(dir, sizeof(dir), "sf.c");
	errno = 0;
	ASSERT_NULL(symfs__open(dir, r, NULL, errbuf, sizeof(errbuf)), "a file");
	ASSERT_EQ(errno, ENOTDIR, "ENOTDIR");
	symfs__free(NULL);
	report__free(r);
	unlink(data_path);
}

/* Whether a line of @text has @a and, after it, @b at its end. */
static bool has_line(const char *text, const char *a, const char *b)
{
	const char *l, *end, *p;

	for (l = text; *l; l = *end ? end + 1 : end) {
		end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		p = strstr(l, a);
		if (p && p < end && (size_t)(end - l) >= strlen(b) && !strncmp(end - strlen(b), b, strlen(b)) &&
		    p + strlen(a) <= end - strlen(b))
			return true;
	}
	return false;
}

/* Everything a view prints, into a string. */
static char *render(const struct report *r, const struct frame_namer *n, bool folded)
{
	struct view_opts vo = { .namer = n };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = folded ? report_view__folded(f, r, &vo) : report_view__table(f, r, &vo);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Through the frame namer, as every view asks: user frames from DIR,
 * kernel frames as recorded or from a kallsyms text, and the table says
 * what DIR held.
 */
static void test_namer(void)
{
	static const char ks_text[] =
		"ffffffff91000000 T _text\n"
		"ffffffff91000100 T do_syscall_64_elsewhere\n"
		"ffffffff91000400 T _etext\n";
	struct frame_namer *n = NULL;
	struct ksyms *ks = NULL;
	struct frame_name fn;
	char *table = NULL, *folded = NULL, want[PATH_MAX + 256];
	struct env e;

	if (!build() || !layout("mkdir -p .build-id/$H && cp $F/libsf.so .build-id/$H/$R") || !env_open(&e, NULL))
		return;
	n = frame_namer__new(e.r, NULL, NULL, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	ASSERT_NULL(frame_namer__source(n), "no kallsyms");
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_LOCAL]), &fn);
	ASSERT_NULL(fn.sym, "no symfs yet: as recorded");
	frame_namer__set_symfs(n, e.fs);
	ASSERT_TRUE(frame_namer__symfs(n) == e.fs, "symfs");
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_LOCAL]), &fn);
	ASSERT_STREQ(fn.sym, "sf_local", "from DIR");
	ASSERT_EQ(fn.reason, (uint32_t)RPT_OK, "reason");
	ASSERT_TRUE(fn.module && !strcmp(fn.module->path, LIB_PATH), "the recorded module");
	ASSERT_EQ(fn.offset, off_local + 1, "offset");
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_KERN]), &fn);
	ASSERT_STREQ(fn.sym, "do_syscall_64", "kernel: as recorded");
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_GONE_NAMED]), &fn);
	ASSERT_STREQ(fn.sym, "gone_fn", "not under DIR: as recorded");

	table = render(e.r, n, false);
	folded = render(e.r, n, true);
	if (!ASSERT_OK_PTR(table, "table") || !ASSERT_OK_PTR(folded, "folded"))
		goto out;
	snprintf(want, sizeof(want), "# user symbols: from --symfs %s: 2 of 4 file modules (2 by build-id); "
		 "not there, recorded names kept: 2\n", symfs__dir(e.fs));
	if (!ASSERT_TRUE(strstr(table, want), "the header says what DIR held"))
		printf("     want: %s     got:\n%s", want, table);
	ASSERT_TRUE(has_line(table, "libsf.so", "sf_local"), "a row named from DIR");
	ASSERT_TRUE(!strstr(table, "# kernel symbols"), "no kallsyms line");
	ASSERT_TRUE(strstr(folded, "app;sf_alpha;sf_local;do_syscall_64_[k] 5\n"), "folded");
	ASSERT_TRUE(strstr(folded, "app;sf_alpha;sf::cpp(int) 3\n"), "folded, demangled");
	free(table);
	free(folded);
	table = folded = NULL;
	frame_namer__free(n);

	/* And with a kallsyms text: both re-resolved. */
	ks = ksyms__parse(ks_text, strlen(ks_text));
	n = ks ? frame_namer__new(e.r, ks, "ks.txt", errbuf, sizeof(errbuf)) : NULL;
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	frame_namer__set_symfs(n, e.fs);
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_KERN]), &fn);
	ASSERT_STREQ(fn.sym, "do_syscall_64_elsewhere", "kernel from kallsyms");
	frame_namer__name(n, e.r, report__frame(e.r, fid[F_LOCAL]), &fn);
	ASSERT_STREQ(fn.sym, "sf_local", "user from DIR");
	table = render(e.r, n, false);
	if (ASSERT_OK_PTR(table, "table")) {
		ASSERT_TRUE(strstr(table, "# kernel symbols: from ks.txt"), "kallsyms line");
		ASSERT_TRUE(strstr(table, "# user symbols: from --symfs "), "symfs line");
	}
out:
	free(table);
	free(folded);
	frame_namer__free(n);
	ksyms__free(ks);
	env_close(&e);
}

int main(void)
{
	RUN_TEST(test_by_build_id);
	RUN_TEST(test_by_path);
	RUN_TEST(test_mismatch);
	RUN_TEST(test_changed_after_open);
	RUN_TEST(test_debug_files);
	RUN_TEST(test_debug_only);
	RUN_TEST(test_symlinks_stay_inside);
	RUN_TEST(test_not_files);
	RUN_TEST(test_cache_bound);
	RUN_TEST(test_bad_dir);
	RUN_TEST(test_namer);
	dcleanup();
	return TEST_EXIT();
}
