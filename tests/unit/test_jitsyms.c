// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* jitsyms: later entries win, splits, batches, caps, and a brute-force reference. */
#include <errno.h>
#include <time.h>

#include "test.h"
#include "symbolize/jit/jitsyms.h"

TEST_SUITE("jitsyms");

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int add(struct jitsyms *js, uint64_t start, uint64_t size, const char *name)
{
	return jitsyms__add(js, start, size, name, strlen(name));
}

/* @addr names @want (NULL: nothing), whose entry is [start, start + size). */
static bool expect(struct jitsyms *js, uint64_t addr, const char *want, uint64_t start, uint64_t size)
{
	const struct jitsym *s = jitsyms__lookup(js, addr);
	char what[64];

	snprintf(what, sizeof(what), "lookup 0x%llx", (unsigned long long)addr);
	if (!want)
		return ASSERT_NULL(s, what) && ASSERT_EQ(errno, ENOENT, "errno of a miss");
	return ASSERT_OK_PTR(s, what) && ASSERT_STREQ(s->name, want, what) &&
	       ASSERT_EQ(s->start, start, "start as added") && ASSERT_EQ(s->size, size, "size as added");
}

static void test_basic(void)
{
	struct jitsyms *js = jitsyms__new(NULL);

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	ASSERT_NULL(jitsyms__lookup(js, 0x1000), "empty table");
	ASSERT_OK(add(js, 0x2000, 0x100, "second"), "add");
	ASSERT_OK(add(js, 0x1000, 0x10, "first"), "add out of order");
	ASSERT_OK(jitsyms__add(js, 0x3000, 0x20, "third and junk", 5), "name by length");
	ASSERT_OK(add(js, 0x1800, 0, "empty"), "size 0");
	ASSERT_EQ(jitsyms__nr_syms(js), (size_t)3, "size 0 not stored");

	expect(js, 0xfff, NULL, 0, 0);
	expect(js, 0x1000, "first", 0x1000, 0x10);
	expect(js, 0x100f, "first", 0x1000, 0x10);
	expect(js, 0x1010, NULL, 0, 0);
	expect(js, 0x1800, NULL, 0, 0);
	expect(js, 0x2000, "second", 0x2000, 0x100);
	expect(js, 0x20ff, "second", 0x2000, 0x100);
	expect(js, 0x2100, NULL, 0, 0);
	expect(js, 0x3000, "third", 0x3000, 0x20);
	expect(js, 0, NULL, 0, 0);
	expect(js, UINT64_MAX, NULL, 0, 0);
	jitsyms__free(js);
	jitsyms__free(NULL);
}

static void test_invalid(void)
{
	struct jitsyms *js = jitsyms__new(NULL);

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	ASSERT_EQ(jitsyms__add(js, 0x1000, 0x10, "", 0), -EINVAL, "empty name");
	ASSERT_EQ(jitsyms__add(js, 0x1000, 0x10, "a\0b", 3), -EINVAL, "NUL in name");
	ASSERT_EQ(jitsyms__add(js, 0x1000, 0, "", 0), -EINVAL, "empty name, size 0");
	ASSERT_EQ(add(js, UINT64_MAX - 0xf, 0x11, "wraps"), -EINVAL, "wraps past 2^64");
	ASSERT_EQ(add(js, 1, UINT64_MAX, "wraps"), -EINVAL, "size 2^64 - 1 from 1");
	ASSERT_OK(add(js, UINT64_MAX - 0xf, 0xf, "top"), "ends at 2^64 - 1");
	ASSERT_OK(add(js, 0, 0x10, "bottom"), "starts at 0");
	ASSERT_EQ(jitsyms__nr_syms(js), (size_t)2, "invalid ones not stored");
	ASSERT_EQ(jitsyms__nr_dropped(js), (size_t)0, "invalid ones are not drops");
	expect(js, UINT64_MAX - 1, "top", UINT64_MAX - 0xf, 0xf);
	expect(js, UINT64_MAX, NULL, 0, 0);
	expect(js, 0, "bottom", 0, 0x10);
	errno = 0;
	ASSERT_NULL(jitsyms__store_name(js, "", 0), "store empty");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	ASSERT_EQ(jitsyms__add_stored(js, 0, 1, NULL), -EINVAL, "stored NULL");
	jitsyms__free(js);
}

/* Later entries win where they overlap; one splits an older one in three. */
static void test_later_wins(void)
{
	struct jitsyms *js = jitsyms__new(NULL);

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	/* In one batch. */
	ASSERT_OK(add(js, 0x1000, 0x1000, "old"), "old");
	ASSERT_OK(add(js, 0x1400, 0x400, "new"), "new inside");
	expect(js, 0x1000, "old", 0x1000, 0x1000);
	expect(js, 0x13ff, "old", 0x1000, 0x1000);
	expect(js, 0x1400, "new", 0x1400, 0x400);
	expect(js, 0x17ff, "new", 0x1400, 0x400);
	expect(js, 0x1800, "old", 0x1000, 0x1000);
	expect(js, 0x1fff, "old", 0x1000, 0x1000);
	expect(js, 0x2000, NULL, 0, 0);

	/* In a later batch: over the index already built. */
	ASSERT_OK(add(js, 0x1900, 0x100, "newer"), "newer in old's tail");
	expect(js, 0x1800, "old", 0x1000, 0x1000);
	expect(js, 0x18ff, "old", 0x1000, 0x1000);
	expect(js, 0x1900, "newer", 0x1900, 0x100);
	expect(js, 0x1a00, "old", 0x1000, 0x1000);
	expect(js, 0x1400, "new", 0x1400, 0x400);

	/* An older, smaller entry is hidden whole; the bigger later one covers it. */
	ASSERT_OK(add(js, 0x1200, 0x100, "hidden"), "hidden");
	ASSERT_OK(add(js, 0x1100, 0x300, "cover"), "cover");
	expect(js, 0x1250, "cover", 0x1100, 0x300);
	expect(js, 0x10ff, "old", 0x1000, 0x1000);
	expect(js, 0x1400, "new", 0x1400, 0x400);

	/* An entry over everything, then one reappearing under it. */
	ASSERT_OK(add(js, 0x800, 0x2000, "all"), "all");
	expect(js, 0x1400, "all", 0x800, 0x2000);
	expect(js, 0x27ff, "all", 0x800, 0x2000);
	ASSERT_OK(add(js, 0x1000, 0x10, "old"), "old again, same name");
	expect(js, 0x1008, "old", 0x1000, 0x10);
	expect(js, 0x1010, "all", 0x800, 0x2000);
	/* The same range twice: the second. */
	ASSERT_OK(add(js, 0x5000, 0x10, "a"), "a");
	ASSERT_OK(add(js, 0x5000, 0x10, "b"), "b");
	expect(js, 0x5000, "b", 0x5000, 0x10);
	/* Adjacent, not overlapping: each its own. */
	ASSERT_OK(add(js, 0x5010, 0x10, "c"), "c");
	expect(js, 0x500f, "b", 0x5000, 0x10);
	expect(js, 0x5010, "c", 0x5010, 0x10);
	jitsyms__free(js);
}

/* Caps stop adding and count; they are not errors of the table. */
static void test_caps(void)
{
	struct jitsyms_opts opts = { .max_syms = 3, .max_name_bytes = 12 };
	struct jitsyms *js = jitsyms__new(&opts);
	const char *s;

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	ASSERT_OK(add(js, 0x1000, 1, "abcd"), "5 bytes");
	ASSERT_OK(add(js, 0x2000, 1, "efgh"), "10 bytes");
	ASSERT_EQ(add(js, 0x3000, 1, "ijk"), -E2BIG, "14 bytes: over");
	ASSERT_OK(add(js, 0x3000, 1, "i"), "12 bytes: fits");
	ASSERT_EQ(jitsyms__nr_dropped(js), (size_t)1, "one drop");
	ASSERT_EQ(add(js, 0x4000, 1, "x"), -E2BIG, "4th entry: over");
	ASSERT_EQ(jitsyms__nr_dropped(js), (size_t)2, "two drops");
	ASSERT_EQ(jitsyms__nr_syms(js), (size_t)3, "3 kept");
	expect(js, 0x3000, "i", 0x3000, 1);
	expect(js, 0x4000, NULL, 0, 0);
	jitsyms__free(js);

	opts.max_syms = 0;
	opts.max_name_bytes = 8;
	js = jitsyms__new(&opts);
	if (!ASSERT_OK_PTR(js, "new"))
		return;
	s = jitsyms__store_name(js, "abc", 3);
	if (ASSERT_OK_PTR(s, "store"))
		ASSERT_STREQ(s, "abc", "stored copy");
	errno = 0;
	ASSERT_NULL(jitsyms__store_name(js, "defgh", 5), "over the name cap");
	ASSERT_EQ(errno, E2BIG, "E2BIG");
	ASSERT_EQ(jitsyms__nr_dropped(js), (size_t)1, "counted");
	ASSERT_NULL(jitsyms__store_name(js, "12345678", 8), "a name as long as the cap");
	/* One stored name, two symbols: not copied again. */
	ASSERT_OK(jitsyms__add_stored(js, 0x100, 0x10, s), "add stored");
	ASSERT_OK(jitsyms__add_stored(js, 0x200, 0x10, s), "add stored twice");
	ASSERT_TRUE(jitsyms__lookup(js, 0x100)->name == s && jitsyms__lookup(js, 0x208)->name == s,
		    "the stored pointer");
	ASSERT_OK(add(js, 0x300, 0x10, "d"), "fits after the refused one");
	jitsyms__free(js);
}

/* Names and symbols handed out stay put while the table grows (ASan would see a move). */
static void test_stable_pointers(void)
{
	struct jitsyms *js = jitsyms__new(NULL);
	const struct jitsym *first, *mid;
	char name[32], *longname;
	size_t i, n = 50000;

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	longname = malloc(100000);
	if (!ASSERT_OK_PTR(longname, "malloc"))
		goto out;
	memset(longname, 'L', 99999);
	longname[99999] = '\0';
	ASSERT_OK(add(js, 0x10, 0x10, "first"), "first");
	first = jitsyms__lookup(js, 0x10);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		if (!ASSERT_OK(add(js, 0x1000 + i * 0x100, 0x100, name), "add"))
			break;
		if (i == n / 2)
			ASSERT_OK(add(js, 0x20, 0x10, longname), "a name bigger than a block");
	}
	mid = jitsyms__lookup(js, 0x1000 + (n / 2) * 0x100);
	for (i = 0; i < n; i += 97)
		ASSERT_OK(add(js, 0x1000 + i * 0x100 + 0x80, 0x10, "late"), "late adds");
	if (ASSERT_OK_PTR(first, "first") && ASSERT_OK_PTR(mid, "mid")) {
		ASSERT_TRUE(jitsyms__lookup(js, 0x10) == first, "same symbol after growth");
		ASSERT_STREQ(first->name, "first", "first name intact");
		snprintf(name, sizeof(name), "fn_%zu", n / 2);
		ASSERT_STREQ(mid->name, name, "mid name intact");
		ASSERT_EQ(strlen(jitsyms__lookup(js, 0x20)->name), (size_t)99999, "long name");
	}
	ASSERT_EQ(jitsyms__nr_syms(js), n + 2 + (n + 96) / 97, "count");
out:
	free(longname);
	jitsyms__free(js);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;	/* xorshift64: reproducible */
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

#define REF_MAX 4096

struct ref_ent {
	uint64_t start, size;
	char name[16];
};

/* The brute-force answer: the last entry added that covers @addr. */
static const struct ref_ent *ref_lookup(const struct ref_ent *ref, size_t n, uint64_t addr)
{
	while (n--) {
		if (addr - ref[n].start < ref[n].size)
			return &ref[n];
	}
	return NULL;
}

/*
 * Random entries in batches over a small space (many overlaps), at @base;
 * after each batch every address (and both ends of the space) is looked up
 * and compared with the brute-force reference.
 */
static bool random_round(uint64_t base, uint64_t space, size_t batches, size_t per_batch)
{
	struct ref_ent *ref = calloc(REF_MAX, sizeof(*ref));
	struct jitsyms *js = jitsyms__new(NULL);
	size_t n = 0, b, i;
	uint64_t a;
	bool ok = true;

	if (!ASSERT_OK_PTR(ref, "calloc") || !ASSERT_OK_PTR(js, "new")) {
		ok = false;
		goto out;
	}
	for (b = 0; b < batches && ok; b++) {
		size_t k = 1 + rnd() % per_batch;

		for (i = 0; i < k && n < REF_MAX; i++) {
			struct ref_ent *e = &ref[n];
			uint64_t r = rnd();

			e->start = base + rnd() % space;
			/* Mostly short, some long, some empty. */
			e->size = r % 8 == 0 ? rnd() % space : r % 16 == 1 ? 0 : rnd() % (space / 16);
			if (e->size > base + space - e->start)
				e->size = base + space - e->start;
			snprintf(e->name, sizeof(e->name), "s%zu", n);
			if (!ASSERT_OK(add(js, e->start, e->size, e->name), "add")) {
				ok = false;
				break;
			}
			n++;
		}
		for (a = base - 1; ok && a != base + space + 1; a++) {
			const struct ref_ent *want = ref_lookup(ref, n, a);
			const struct jitsym *got = jitsyms__lookup(js, a);
			char what[64];

			snprintf(what, sizeof(what), "batch %zu addr 0x%llx", b, (unsigned long long)a);
			if (!want)
				ok = ASSERT_NULL(got, what);
			else
				ok = ASSERT_OK_PTR(got, what) && ASSERT_STREQ(got->name, want->name, what) &&
				     ASSERT_EQ(got->start, want->start, what) &&
				     ASSERT_EQ(got->size, want->size, what);
		}
	}
out:
	jitsyms__free(js);
	free(ref);
	return ok;
}

static void test_random_reference(void)
{
	/* Single-entry batches, middling ones, and one big batch; near 0 and near 2^64. */
	if (!random_round(1, 512, 300, 1))
		return;
	if (!random_round(0x7f0000000000ull, 2048, 40, 40))
		return;
	if (!random_round(0x1000, 4096, 2, 2000))
		return;
	random_round(UINT64_MAX - 1024, 1024, 60, 20);
}

/* What a big JIT costs: 1 Mi entries in batches, then lookups (timings printed, not asserted). */
static void test_scale(void)
{
	size_t n = (size_t)1 << 20, batch = n / 16, i, hits = 0, nr_look = 1000000;
	double t0, t_add, t_first, t_look;
	struct jitsyms *js = jitsyms__new(NULL);
	char name[32];

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		/* A JIT reusing a 64 MiB code area: later batches overwrite earlier ones. */
		uint64_t start = 0x7f0000000000ull + (rnd() % (64 << 20));

		snprintf(name, sizeof(name), "LazyCompile:fn_%zu", i);
		if (!ASSERT_OK(add(js, start, 64 + rnd() % 512, name), "add"))
			break;
		if ((i + 1) % batch == 0 && i + 1 < n)
			jitsyms__lookup(js, start);	/* index what is there */
	}
	t_add = now_ms() - t0;
	t0 = now_ms();
	jitsyms__lookup(js, 0);
	t_first = now_ms() - t0;
	t0 = now_ms();
	for (i = 0; i < nr_look; i++)
		hits += jitsyms__lookup(js, 0x7f0000000000ull + rnd() % (64 << 20)) != NULL;
	t_look = now_ms() - t0;
	ASSERT_EQ(jitsyms__nr_syms(js), n, "all kept");
	ASSERT_TRUE(hits > nr_look / 2, "most of the area is named");
	printf("     jitsyms: %zu entries added in 16 batches, each indexed: %.0f ms; last index %.0f ms; "
	       "lookup %.0f ns (%zu/%zu hit)\n", n, t_add, t_first, t_look * 1e6 / nr_look, hits, nr_look);
	jitsyms__free(js);
}

int main(void)
{
	RUN_TEST(test_basic);
	RUN_TEST(test_invalid);
	RUN_TEST(test_later_wins);
	RUN_TEST(test_caps);
	RUN_TEST(test_stable_pointers);
	RUN_TEST(test_random_reference);
	RUN_TEST(test_scale);
	return TEST_EXIT();
}
