// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * MiniDebugInfo: a stripped binary carrying an xz-compressed ELF of its
 * missing function symbols in .gnu_debugdata, built here as Fedora's
 * find-debuginfo builds it (nm -D vs nm, objcopy --only-keep-debug, the
 * symbols cut down to the missing functions, xz, objcopy --add-section).
 * Oracle: nm of the unstripped build.  Then what a hostile section can
 * do: an xz bomb, truncated, corrupt or foreign data, a decoder asking for
 * too much memory; the file must keep its .dynsym each time.
 */
#include <elf.h>
#include <errno.h>
#include <time.h>
#include <zlib.h>

#include "symbolize/elf/elfsym.h"
#include "symbolize/elf/minidebug.h"
#include "base/util.h"
#include "test.h"
#include "debug_fixture.h"

TEST_SUITE("minidebug")

static const char md_src[] =
"#define NI __attribute__((noinline, used))\n"
"static int NI md_static_one(int x) { volatile int v = x; v *= 3; return v + 1; }\n"
"static int NI md_static_two(int x) { int s = 0; for (int i = 0; i < x; i++) s += md_static_one(i) ^ i; return s; }\n"
"static int NI md_static_three(int x) { return md_static_two(x) * 5 - 1; }\n"
"int NI md_global(int x) { return md_static_three(x) + 2; }\n"
"#ifndef MD_LIB\n"
"int main(int argc, char **argv) { (void)argv; return md_global(argc); }\n"
"#endif\n";

/* mkmini.sh BIN OUT: OUT is BIN stripped, with BIN's MiniDebugInfo added. */
static const char mkmini_sh[] =
"set -e\n"
"objcopy --only-keep-debug \"$1\" \"$2.dbg\"\n"
"strip --strip-all -o \"$2.stripped\" \"$1\"\n"
"nm -D --format=posix --defined-only \"$2.stripped\" 2>/dev/null | awk '{ print $1 }' | sort > \"$2.dynsyms\"\n"
"nm --format=posix --defined-only \"$2.dbg\" | awk '$2 == \"T\" || $2 == \"t\" { print $1 }' | sort > \"$2.funcsyms\"\n"
"comm -13 \"$2.dynsyms\" \"$2.funcsyms\" > \"$2.keep\"\n"
"objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=\"$2.keep\" \"$2.dbg\" \"$2.mini\"\n"
"xz -kf \"$2.mini\"\n"
"objcopy --add-section .gnu_debugdata=\"$2.mini.xz\" \"$2.stripped\" \"$2\"\n";

static const char *const tools[] = { "cc", "nm", "objcopy", "strip", "xz", "awk", "comm", NULL };
static int built;		/* 0: not tried, 1: built, -1: failed */

/* Build the fixtures once: exe and libmd.so, each full and MiniDebugInfo'd. */
static bool build(void)
{
	if (!dsetup(tools))
		return false;
	if (!built) {
		built = -1;
		if (!dsh("cat > md.c <<'EOF'\n%sEOF\ncat > mkmini.sh <<'EOF'\n%sEOF\n", md_src, mkmini_sh) &&
		    !dsh("cc -O1 -fPIE -pie -Wl,--build-id=sha1 -o exe md.c && sh mkmini.sh exe exe.md") &&
		    !dsh("cc -O1 -fPIC -shared -DMD_LIB -Wl,--build-id=sha1 -o libmd.so md.c && "
			 "sh mkmini.sh libmd.so libmd.so.md"))
			built = 1;
	}
	if (built < 0) {
		dbuild_failed();
		return false;
	}
	return true;
}

static struct elfsym *open_in_tmp(const char *name, const struct elfsym_opts *opts)
{
	char path[PATH_MAX];

	dpath(path, sizeof(path), name);
	return elfsym__open(path, opts);
}

static const char *name_at(const struct elfsym *es, uint64_t a)
{
	const struct elfsym_sym *s = elfsym__lookup(es, a);

	return s ? s->name : NULL;
}

/*
 * Every function nm sees in the unstripped @full (local ones included)
 * resolves in the MiniDebugInfo'd @mini as in nm, over its whole size;
 * the plain stripped file does not know the static ones.
 */
static void check_resolves(const char *full, const char *mini)
{
	static struct nmfunc funcs[512];
	char path[PATH_MAX], stripped[PATH_MAX];
	struct elfsym *es, *es_stripped;
	size_t n, i, statics = 0;

	if (!build())
		return;
	dpath(path, sizeof(path), full);
	n = nm_funcs(path, funcs, 512);
	snprintf(stripped, sizeof(stripped), "%s.stripped", mini);
	es = open_in_tmp(mini, NULL);
	es_stripped = open_in_tmp(stripped, NULL);
	if (!ASSERT_TRUE(n >= 4, "nm output") || !ASSERT_OK_PTR(es, "open MiniDebugInfo'd") ||
	    !ASSERT_OK_PTR(es_stripped, "open stripped"))
		goto out;
	for (i = 0; i < n; i++) {
		const struct nmfunc *f = &funcs[i];

		if (f->type != 't' && f->type != 'T')
			continue;	/* Fedora's recipe keeps t and T only */
		if (!ASSERT_STREQ(name_at(es, f->addr), f->name, "first byte") ||
		    !ASSERT_STREQ(name_at(es, f->addr + f->size - 1), f->name, "last byte"))
			break;
		if (!strncmp(f->name, "md_static_", 10)) {
			statics++;
			ASSERT_NULL(name_at(es_stripped, f->addr), "stripped: no static function");
		}
	}
	ASSERT_EQ(statics, (size_t)3, "static functions checked");
	ASSERT_TRUE(elfsym__nr_syms(es) > elfsym__nr_syms(es_stripped) + 2, "more symbols");
	printf("     %s: %zu functions, %zu without .gnu_debugdata\n", mini,
	       elfsym__nr_syms(es), elfsym__nr_syms(es_stripped));
out:
	elfsym__free(es);
	elfsym__free(es_stripped);
}

static void test_resolves_exe(void) { check_resolves("exe", "exe.md"); }
static void test_resolves_so(void) { check_resolves("libmd.so", "libmd.so.md"); }

/*
 * libmd.so stripped, with @xz_file as .gnu_debugdata, must read as the
 * stripped file: its .dynsym kept, nothing else.  Returns the seconds the
 * open took, or -1.
 */
static double check_kept(const char *xz_file, const char *what, const struct elfsym_opts *opts)
{
	struct elfsym *es = NULL, *ref = NULL;
	char out[PATH_MAX], full[PATH_MAX];
	static struct nmfunc funcs[256];
	struct timespec t0, t1;
	double secs = -1;
	size_t n, i;

	snprintf(out, sizeof(out), "bad-%s.so", xz_file);
	if (!ASSERT_OK(dsh("objcopy --add-section .gnu_debugdata='%s' libmd.so.md.stripped '%s'",
			   xz_file, out), what))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	es = open_in_tmp(out, opts);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ref = open_in_tmp("libmd.so.md.stripped", NULL);
	if (!ASSERT_OK_PTR(es, what) || !ASSERT_OK_PTR(ref, "the stripped file"))
		goto out;
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_EQ(elfsym__nr_syms(es), elfsym__nr_syms(ref), what);
	dpath(full, sizeof(full), "libmd.so");
	n = nm_funcs(full, funcs, 256);
	for (i = 0; i < n; i++) {
		if (!strcmp(funcs[i].name, "md_global"))
			ASSERT_STREQ(name_at(es, funcs[i].addr), "md_global", ".dynsym kept");
		else if (!strcmp(funcs[i].name, "md_static_one"))
			ASSERT_NULL(name_at(es, funcs[i].addr), "no static function");
	}
out:
	elfsym__free(es);
	elfsym__free(ref);
	return secs;
}

/* A few KiB of xz that expand past the 64 MiB cap: stopped there, never sized by its claim. */
static void test_xz_bomb(void)
{
	struct elfsym_opts small = { .max_debugdata = 1 << 20 };
	struct stat st;
	char path[PATH_MAX];
	double secs;

	if (!build() || !ASSERT_OK(dsh("head -c 80M /dev/zero | xz > bomb.xz"), "make the bomb"))
		return;
	dpath(path, sizeof(path), "bomb.xz");
	if (!ASSERT_OK(stat(path, &st), "stat") || !ASSERT_TRUE(st.st_size < 64 << 10, "a few KiB"))
		return;
	secs = check_kept("bomb.xz", "80 MiB bomb, default cap", NULL);
	if (secs >= 0)
		printf("     %lld bytes of xz expanding to 80 MiB: refused in %.3f s (cap 64 MiB)\n",
		       (long long)st.st_size, secs);
	secs = check_kept("bomb.xz", "80 MiB bomb, 1 MiB cap", &small);
	if (secs >= 0)
		printf("     the same with a 1 MiB cap: %.4f s\n", secs);
	/* Without its index (cut short), only the decoding itself is stopped by the cap. */
	if (!ASSERT_OK(dsh("head -c $(( $(wc -c < bomb.xz) - 64 )) bomb.xz > bomb-cut.xz"), "cut"))
		return;
	secs = check_kept("bomb-cut.xz", "80 MiB bomb without its index", NULL);
	if (secs >= 0)
		printf("     the same without its index: stopped at the cap in %.3f s\n", secs);
}

/* Truncated, corrupt, not xz, xz of something else than the matching ELF. */
static void test_bad_debugdata(void)
{
	if (!build())
		return;
	if (ASSERT_OK(dsh("head -c $(( $(wc -c < libmd.so.md.mini.xz) / 2 )) libmd.so.md.mini.xz > half.xz"),
		      "truncate"))
		check_kept("half.xz", "truncated xz", NULL);
	if (ASSERT_OK(dsh("cp libmd.so.md.mini.xz flip.xz && printf '\\377' | "
			  "dd of=flip.xz bs=1 seek=200 conv=notrunc"), "flip a byte"))
		check_kept("flip.xz", "corrupt xz", NULL);
	if (ASSERT_OK(dsh("yes 'not xz at all' | head -c 4000 > garbage.xz"), "garbage"))
		check_kept("garbage.xz", "garbage", NULL);
	if (ASSERT_OK(dsh("head -c 5000 /dev/urandom | xz > random.xz"), "xz of random bytes"))
		check_kept("random.xz", "xz of random bytes", NULL);
	if (ASSERT_OK(dsh("cc -O1 -c -o md.o md.c && xz -kf md.o"), "xz of an ET_REL"))
		check_kept("md.o.xz", "an ET_REL inside", NULL);
	/* Both ET_DYN, but another build-id. */
	if (ASSERT_OK(dsh("xz -kc exe.md.mini > exe-mini.xz"), "xz of another file's MiniDebugInfo"))
		check_kept("exe-mini.xz", "another file's MiniDebugInfo", NULL);
	if (ASSERT_OK(dsh("cat libmd.so.md.mini.xz > trail.xz && printf 'junk' >> trail.xz"), "trailing junk"))
		check_kept("trail.xz", "trailing junk", NULL);
}

/* max_debugdata bounds the decompressed size, exactly. */
static void test_cap_exact(void)
{
	struct elfsym_opts opts = {};
	struct elfsym *es;
	char path[PATH_MAX];
	struct stat st;
	size_t with, without;

	if (!build())
		return;
	dpath(path, sizeof(path), "libmd.so.md.mini");
	if (!ASSERT_OK(stat(path, &st), "stat the MiniDebugInfo"))
		return;
	es = open_in_tmp("libmd.so.md.stripped", NULL);
	if (!ASSERT_OK_PTR(es, "stripped"))
		return;
	without = elfsym__nr_syms(es);
	elfsym__free(es);
	opts.max_debugdata = (size_t)st.st_size;
	es = open_in_tmp("libmd.so.md", &opts);
	if (!ASSERT_OK_PTR(es, "cap = its size"))
		return;
	with = elfsym__nr_syms(es);
	elfsym__free(es);
	ASSERT_TRUE(with > without, "merged at cap = its size");
	opts.max_debugdata = (size_t)st.st_size - 1;
	es = open_in_tmp("libmd.so.md", &opts);
	if (ASSERT_OK_PTR(es, "cap = its size - 1"))
		ASSERT_EQ(elfsym__nr_syms(es), without, "not merged one byte over the cap");
	elfsym__free(es);
}

static int decompress_file(const char *name, size_t max_out, size_t *out_len, void **out)
{
	size_t len;
	void *in = dread(name, &len);
	int err;

	*out = NULL;
	if (!in)
		return -EIO;
	err = minidebug__decompress(in, len, max_out, out, out_len);
	free(in);
	return err;
}

/* Set the LZMA2 dictionary of the single-block .xz @buf to 1 GiB; false if not that layout. */
static bool huge_dict(uint8_t *buf, size_t len)
{
	size_t hsize;
	uint32_t crc;

	/* Stream header (12 bytes), then the block header: size, flags, LZMA2, 1 byte of props. */
	if (len < 32 || buf[13] != 0x00 || buf[14] != 0x21 || buf[15] != 0x01)
		return false;
	hsize = ((size_t)buf[12] + 1) * 4;
	if (12 + hsize > len)
		return false;
	buf[16] = 36;		/* (2 | 0) << (36 / 2 + 11): 1 GiB */
	crc = (uint32_t)crc32(0, buf + 12, (uInt)(hsize - 4));
	buf[12 + hsize - 4] = (uint8_t)crc;
	buf[12 + hsize - 3] = (uint8_t)(crc >> 8);
	buf[12 + hsize - 2] = (uint8_t)(crc >> 16);
	buf[12 + hsize - 1] = (uint8_t)(crc >> 24);
	return true;
}

/* minidebug__decompress itself: caps to the byte, errors, concatenation, memlimit. */
static void test_decompress(void)
{
	const size_t mib8 = 8 << 20;
	size_t len = 0, in_len, i;
	uint8_t *in;
	void *out;
	bool zero = true;

	if (!dsetup(tools) || !ASSERT_OK(dsh("head -c 8M /dev/zero | xz > z8.xz && cat z8.xz z8.xz > z16.xz && "
					   "head -c 3000 /dev/urandom > r.bin && xz -k r.bin && "
					   "head -c $(( $(wc -c < z8.xz) - 64 )) z8.xz > z8-cut.xz"), "make inputs"))
		return;
	ASSERT_EQ(decompress_file("z8.xz", 1 << 20, &len, &out), -E2BIG, "8 MiB, cap 1 MiB");
	ASSERT_NULL(out, "no buffer on error");
	ASSERT_EQ(decompress_file("z8.xz", mib8 - 1, &len, &out), -E2BIG, "8 MiB, cap 8 MiB - 1");
	if (ASSERT_OK(decompress_file("z8.xz", mib8, &len, &out), "8 MiB, cap 8 MiB") &&
	    ASSERT_EQ(len, mib8, "length")) {
		for (i = 0; i < len && zero; i++)
			zero = ((uint8_t *)out)[i] == 0;
		ASSERT_TRUE(zero, "zeros");
	}
	free(out);
	if (ASSERT_OK(decompress_file("z16.xz", 2 * mib8, &len, &out), "two streams"))
		ASSERT_EQ(len, 2 * mib8, "both");
	free(out);
	if (ASSERT_OK(decompress_file("r.bin.xz", 3000, &len, &out), "random bytes"))
		ASSERT_EQ(len, (size_t)3000, "length");
	free(out);
	/* Its index cut off: nothing to read the size from, the decoder is stopped at the cap. */
	ASSERT_EQ(decompress_file("z8-cut.xz", 1 << 20, &len, &out), -E2BIG, "8 MiB, no index, cap 1 MiB");
	ASSERT_NULL(out, "no buffer on error");
	ASSERT_EQ(decompress_file("z8-cut.xz", 2 * mib8, &len, &out), -EBADMSG, "no index, cap 16 MiB");
	ASSERT_EQ(decompress_file("r.bin", 1 << 20, &len, &out), -EBADMSG, "not xz");
	ASSERT_EQ(minidebug__decompress("", 0, 1 << 20, &out, &len), -EBADMSG, "empty");

	in = dread("r.bin.xz", &in_len);
	if (!ASSERT_OK_PTR(in, "read r.bin.xz"))
		return;
	for (i = 0; i < in_len; i += in_len / 7 + 1)
		ASSERT_EQ(minidebug__decompress(in, i, 1 << 20, &out, &len), -EBADMSG, "truncated");
	if (huge_dict(in, in_len))
		ASSERT_EQ(minidebug__decompress(in, in_len, 1 << 20, &out, &len), -E2BIG,
			  "a 1 GiB dictionary: over the decoder's memory limit");
	else
		printf("     the 1 GiB dictionary case not checked: unexpected .xz layout\n");
	free(in);
}

int main(void)
{
	RUN_TEST(test_resolves_exe);
	RUN_TEST(test_resolves_so);
	RUN_TEST(test_xz_bomb);
	RUN_TEST(test_bad_debugdata);
	RUN_TEST(test_cap_exact);
	RUN_TEST(test_decompress);
	dcleanup();
	return TEST_EXIT();
}
