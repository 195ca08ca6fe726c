// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * imgcache: images found by build-id or by file identity, the caps on the
 * loaded ones (count and bytes, least recently used dropped, the newest
 * always kept), and names that outlive an evicted image.  The symbols are
 * this test program's own (/proc/self/exe), read once per attach.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/elf/elfsym.h"
#include "symbolize/imgcache.h"
#include "test.h"

TEST_SUITE("imgcache");

/* A function of this program to look up by address. */
__attribute__((noinline, used)) int fx_imgcache_probe(int x)
{
	volatile int v = x;

	v ^= 0x5a;
	return v * 3;
}

static struct elfsym *self_syms(void)
{
	struct elfsym *es = elfsym__open("/proc/self/exe", NULL);

	ASSERT_OK_PTR(es, "read /proc/self/exe");
	return es;
}

static struct image *by_file(struct imgcache *c, uint64_t ino, uint32_t nsec)
{
	struct image_key k = { .dev = 1, .ino = ino, .mtime_sec = 100, .mtime_nsec = nsec };

	return imgcache__get(c, &k);
}

static void test_keys(void)
{
	static const uint8_t a[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[] = { 1, 2, 3, 4, 5, 6, 7, 9 };
	struct image_key ka = { .build_id = a, .build_id_len = sizeof(a), .dev = 1, .ino = 2 };
	struct image_key kb = { .build_id = b, .build_id_len = sizeof(b), .dev = 1, .ino = 2 };
	struct image *ia, *ib, *f1;
	struct imgcache c;

	imgcache__init(&c, 8, 1 << 20, false);
	ia = imgcache__get(&c, &ka);
	ib = imgcache__get(&c, &kb);
	f1 = by_file(&c, 2, 0);
	if (!ASSERT_OK_PTR(ia, "a") || !ASSERT_OK_PTR(ib, "b") || !ASSERT_OK_PTR(f1, "file"))
		goto out;
	ASSERT_TRUE(imgcache__get(&c, &ka) == ia, "the same build-id: the same image");
	ka.dev = 9;
	ASSERT_TRUE(imgcache__get(&c, &ka) == ia, "another file of that content: still the same");
	ASSERT_TRUE(ib != ia, "another build-id: another image");
	ASSERT_TRUE(f1 != ia && f1 != ib, "no build-id: never a build-id's image");
	ASSERT_TRUE(by_file(&c, 2, 0) == f1, "the same file version: the same image");
	ASSERT_TRUE(by_file(&c, 2, 1) != f1, "written again (another mtime): another image");
	ASSERT_TRUE(by_file(&c, 3, 0) != f1, "another inode: another image");
	ASSERT_EQ(imgcache__nr_loaded(&c), (size_t)0, "nothing read yet");
	ASSERT_NULL(ia->es, "not loaded");
out:
	imgcache__free(&c);
	imgcache__free(NULL);
}

/* Attach this program's symbols to @img; false when they cannot be read. */
static bool attach(struct imgcache *c, struct image *img)
{
	struct elfsym *es = self_syms();

	if (!es)
		return false;
	imgcache__attach(c, img, es, NULL);
	return true;
}

/* max_files 2: the least recently used of three goes, whatever was attached first. */
static void test_count_cap(void)
{
	struct image *a, *b, *d;
	struct imgcache c;

	imgcache__init(&c, 2, SIZE_MAX, false);
	a = by_file(&c, 1, 0);
	b = by_file(&c, 2, 0);
	d = by_file(&c, 3, 0);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b") || !ASSERT_OK_PTR(d, "d") ||
	    !attach(&c, a) || !attach(&c, b))
		goto out;
	ASSERT_EQ(imgcache__nr_loaded(&c), (size_t)2, "two loaded");
	ASSERT_EQ(imgcache__loaded_bytes(&c), a->bytes + b->bytes, "their bytes");
	imgcache__touch(&c, a);
	if (!attach(&c, d))
		goto out;
	ASSERT_EQ(imgcache__nr_loaded(&c), (size_t)2, "still two");
	ASSERT_NULL(b->es, "b, the least recently used, dropped");
	ASSERT_EQ(b->bytes, (size_t)0, "and not counted");
	ASSERT_OK_PTR(a->es, "a, touched, kept");
	ASSERT_OK_PTR(d->es, "d, the newest, kept");
	ASSERT_EQ(imgcache__loaded_bytes(&c), a->bytes + d->bytes, "the bytes of those two");
out:
	imgcache__free(&c);
}

/*
 * An image nobody holds goes when its symbols are not loaded: at once if
 * never loaded, else when the cap evicts them; one still held stays.
 */
static void test_put(void)
{
	struct image *a, *b, *d;
	struct imgcache c;

	imgcache__init(&c, 1, SIZE_MAX, false);
	a = by_file(&c, 1, 0);
	b = by_file(&c, 2, 0);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	ASSERT_TRUE(by_file(&c, 2, 0) == b, "b twice: two references");
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)2, "two images");
	imgcache__put(&c, b);
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)2, "b still held once");
	imgcache__put(&c, b);
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)1, "b held by nobody, never loaded: gone");
	if (!attach(&c, a))
		goto out;
	imgcache__put(&c, a);
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)1, "a held by nobody but loaded: kept");
	d = by_file(&c, 3, 0);
	if (!ASSERT_OK_PTR(d, "d") || !attach(&c, d))
		goto out;
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)1, "a's symbols evicted by d's: a gone");
	ASSERT_TRUE(by_file(&c, 1, 0) != NULL, "a again: made anew");
	ASSERT_EQ(imgcache__nr_images(&c), (size_t)2, "a and d");
	imgcache__put(&c, NULL);
out:
	imgcache__free(&c);
}

/* max_bytes 1: only the image attached last stays, and it always does. */
static void test_bytes_cap(void)
{
	struct image *a, *b;
	struct imgcache c;

	imgcache__init(&c, 100, 1, false);
	a = by_file(&c, 1, 0);
	b = by_file(&c, 2, 0);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b") || !attach(&c, a))
		goto out;
	ASSERT_OK_PTR(a->es, "over the cap alone: kept");
	if (!attach(&c, b))
		goto out;
	ASSERT_NULL(a->es, "dropped for the newer one");
	ASSERT_OK_PTR(b->es, "the newer one kept");
	ASSERT_EQ(imgcache__nr_loaded(&c), (size_t)1, "one loaded");
	ASSERT_EQ(imgcache__loaded_bytes(&c), b->bytes, "its bytes");
out:
	imgcache__free(&c);
}

/* The symbol of fx_imgcache_probe + 1 in @img's table, through /proc/self/maps. */
static const struct elfsym_sym *probe_sym(const struct image *img)
{
	uint64_t ip = (uint64_t)(uintptr_t)fx_imgcache_probe + 1, vaddr, off = 0;
	unsigned long long start, end, pgoff;
	const struct elfsym_sym *sym = NULL;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &pgoff) == 3 &&
		    ip >= start && ip < end) {
			off = ip - start + pgoff;
			break;
		}
	}
	if (f)
		fclose(f);
	if (ASSERT_TRUE(off, "the probe's mapping") &&
	    ASSERT_OK(elfsym__offset_to_vaddr(img->es, off, &vaddr), "offset to vaddr"))
		sym = elfsym__lookup(image__syms(img), vaddr);
	return sym;
}

/* A symbol's display name is made once, counted, and outlives its image. */
static void test_names(void)
{
	const struct elfsym_sym *sym;
	const char *name, *again;
	struct image *a, *b;
	struct imgcache c;
	size_t before;

	imgcache__init(&c, 1, SIZE_MAX, false);
	a = by_file(&c, 1, 0);
	b = by_file(&c, 2, 0);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b") || !attach(&c, a))
		goto out;
	sym = probe_sym(a);
	if (!ASSERT_OK_PTR(sym, "the probe's symbol"))
		goto out;
	before = imgcache__loaded_bytes(&c);
	name = imgcache__sym_name(&c, a, sym);
	if (!ASSERT_OK_PTR(name, "named"))
		goto out;
	ASSERT_STREQ(name, "fx_imgcache_probe", "as in the file");
	ASSERT_TRUE(imgcache__loaded_bytes(&c) > before, "the names table counted");
	ASSERT_EQ(imgcache__loaded_bytes(&c), a->bytes, "in the image's bytes");
	again = imgcache__sym_name(&c, a, sym);
	ASSERT_TRUE(again == name, "made once: the same string");
	if (!attach(&c, b))
		goto out;
	ASSERT_NULL(a->es, "evicted");
	ASSERT_STREQ(name, "fx_imgcache_probe", "the name outlives its image");
out:
	imgcache__free(&c);
}

/*
 * A debug file attached later (debuginfod's): the names table made from
 * the binary's symbols goes (it is by the index of the table in use), the
 * bytes count both files, the image stays loaded however full the cache.
 */
static void test_attach_debug(void)
{
	const struct elfsym_sym *sym;
	struct elfsym *dbg = NULL;
	struct image *a, *b;
	const char *name;
	struct imgcache c;

	imgcache__init(&c, 2, SIZE_MAX, false);
	a = by_file(&c, 1, 0);
	b = by_file(&c, 2, 0);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b") || !attach(&c, a) || !attach(&c, b))
		goto out;
	sym = probe_sym(a);
	if (!ASSERT_OK_PTR(sym, "the probe's symbol") || !ASSERT_OK_PTR(imgcache__sym_name(&c, a, sym), "named"))
		goto out;
	ASSERT_OK_PTR(a->names, "a names table, by the binary's symbols");
	dbg = self_syms();
	if (!dbg)
		goto out;
	imgcache__attach_debug(&c, a, dbg);
	ASSERT_TRUE(a->dbg == dbg, "the debug file is the image's");
	ASSERT_NULL(a->names, "the old names table gone");
	ASSERT_EQ(a->bytes, elfsym__mem_bytes(a->es) + elfsym__mem_bytes(dbg), "both files counted");
	ASSERT_EQ(imgcache__loaded_bytes(&c), a->bytes + b->bytes, "in the cache's bytes");
	ASSERT_EQ(imgcache__nr_loaded(&c), (size_t)2, "nothing evicted under the count cap");
	sym = probe_sym(a);
	name = sym ? imgcache__sym_name(&c, a, sym) : NULL;
	ASSERT_STREQ(name ? name : "(none)", "fx_imgcache_probe", "named from the debug file's table");
out:
	imgcache__free(&c);
}

/* image__matches: the build-id read is the image's, or the file changed. */
static void test_matches(void)
{
	struct elfsym *es = self_syms();
	static const uint8_t other[] = { 0xde, 0xad, 0xbe, 0xef };
	struct image_key k = {};
	struct image *own, *wrong, *none;
	struct imgcache c;

	imgcache__init(&c, 8, SIZE_MAX, false);
	if (!es)
		goto out;
	k.build_id = elfsym__build_id(es, &k.build_id_len);
	if (!k.build_id_len) {
		test__skip("this test program has no build-id");
		goto out;
	}
	own = imgcache__get(&c, &k);
	k.build_id = other;
	k.build_id_len = sizeof(other);
	wrong = imgcache__get(&c, &k);
	none = by_file(&c, 1, 0);
	if (!ASSERT_OK_PTR(own, "own") || !ASSERT_OK_PTR(wrong, "wrong") || !ASSERT_OK_PTR(none, "none"))
		goto out;
	ASSERT_TRUE(image__matches(own, es), "its own build-id");
	ASSERT_FALSE(image__matches(wrong, es), "another build-id");
	ASSERT_FALSE(image__matches(none, es), "an image without one");
out:
	elfsym__free(es);
	imgcache__free(&c);
}

static void test_display(void)
{
	struct imgcache c;
	const char *n;

	imgcache__init(&c, 8, SIZE_MAX, false);
	n = imgcache__name(&c, "_Z3fooi");
	if (ASSERT_OK_PTR(n, "demangled"))
		ASSERT_STREQ(n, "foo(int)", "readable");
	ASSERT_TRUE(imgcache__name(&c, "_Z3fooi") == n, "the same string again");
	n = imgcache__name(&c, "main");
	if (ASSERT_OK_PTR(n, "plain"))
		ASSERT_STREQ(n, "main", "a C name is itself");
	ASSERT_NULL(imgcache__display(&c, NULL), "no name: none");
	imgcache__free(&c);

	imgcache__init(&c, 8, SIZE_MAX, true);
	n = imgcache__name(&c, "_Z3fooi");
	if (ASSERT_OK_PTR(n, "kept"))
		ASSERT_STREQ(n, "_Z3fooi", "as in the file with no_demangle");
	imgcache__free(&c);
}

int main(void)
{
	RUN_TEST(test_keys);
	RUN_TEST(test_count_cap);
	RUN_TEST(test_put);
	RUN_TEST(test_bytes_cap);
	RUN_TEST(test_names);
	RUN_TEST(test_attach_debug);
	RUN_TEST(test_matches);
	RUN_TEST(test_display);
	return TEST_EXIT();
}
