// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * base: the one hash table (htab) and the one string interner (strtab)
 * that every table of the program uses.  The table is checked against a
 * plain array through random adds and deletes, with hashes chosen to
 * collide and runs that wrap around the end of the slots, because the
 * backward-shift delete is where such tables go wrong.  The hash's
 * per-run secret spreads names crafted to collide (hash flooding).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/strtab.h"
#include "test.h"

TEST_SUITE("base");

/* How many times @val is stored under @hash, by walking htab__next(). */
static int count_of(const struct htab *t, uint64_t hash, uint64_t val)
{
	size_t pos = HTAB_START;
	uint64_t v;
	int n = 0;

	while (htab__next(t, hash, &pos, &v))
		n += v == val;
	return n;
}

static void test_htab_empty(void)
{
	struct htab t = {};
	size_t pos = HTAB_START;
	uint64_t v;

	ASSERT_FALSE(htab__next(&t, 1, &pos, &v), "an empty table has nothing");
	ASSERT_FALSE(htab__del(&t, 1, 1), "nothing to delete");
	ASSERT_EQ(htab__add(&t, 1, 0), -EINVAL, "0 is no value");
	ASSERT_EQ(htab__nr(&t), (size_t)0, "still empty");
	htab__free(&t);
	htab__free(NULL);
}

/* Against a reference array: random adds and deletes over few hashes. */
static void test_htab_random(void)
{
	enum { N = 4000, HASHES = 37 };
	static uint64_t ref_h[N], ref_v[N];
	struct htab t = {};
	size_t nref = 0, i, k;
	uint64_t next_val = 1;
	unsigned int seed = 12345;

	for (i = 0; i < 20000; i++) {
		int op = rand_r(&seed) % 3;

		if (op < 2 || !nref) {
			/* Low bits equal, so every value lands in one long run that wraps. */
			uint64_t h = ((uint64_t)(rand_r(&seed) % HASHES) << 40) | 0x3f;

			if (nref == N)
				continue;
			if (!ASSERT_OK(htab__add(&t, h, next_val), "add"))
				goto out;
			ref_h[nref] = h;
			ref_v[nref++] = next_val++;
		} else {
			k = (size_t)rand_r(&seed) % nref;
			if (!ASSERT_TRUE(htab__del(&t, ref_h[k], ref_v[k]), "delete a stored value"))
				goto out;
			ASSERT_FALSE(htab__del(&t, ref_h[k], ref_v[k]), "deleted once only");
			ref_h[k] = ref_h[--nref];
			ref_v[k] = ref_v[nref];
		}
		if (i % 97 == 0) {
			for (k = 0; k < nref; k++)
				if (!ASSERT_EQ(count_of(&t, ref_h[k], ref_v[k]), 1, "each stored value found once"))
					goto out;
			if (!ASSERT_EQ(htab__nr(&t), nref, "count"))
				goto out;
		}
	}
	ASSERT_TRUE(t.nr * 2 <= t.mask + 1, "load at most 1/2");
out:
	htab__free(&t);
}

/* A value stored twice under one hash is two entries; a delete takes one. */
static void test_htab_duplicates(void)
{
	struct htab t = {};

	ASSERT_OK(htab__add(&t, 7, 99), "add");
	ASSERT_OK(htab__add(&t, 7, 99), "add again");
	ASSERT_EQ(count_of(&t, 7, 99), 2, "twice");
	ASSERT_TRUE(htab__del(&t, 7, 99), "delete one");
	ASSERT_EQ(count_of(&t, 7, 99), 1, "once");
	ASSERT_EQ(count_of(&t, 8, 99), 0, "another hash has none");
	htab__free(&t);
}

static bool val_is(const void *ctx, const void *key, uint64_t val)
{
	return val == *(const uint64_t *)key;
}

/* htab__find() finds what a walk of htab__next() finds, over runs that wrap. */
static void test_htab_find(void)
{
	struct htab t = {};
	uint64_t v, h;

	ASSERT_EQ(htab__find(&t, 5, val_is, NULL, &(uint64_t){ 1 }), (uint64_t)0, "empty: 0");
	for (v = 1; v <= 500; v++) {
		h = ((v % 7) << 40) | 0x3f0;	/* few hashes, one run past the end of the slots */
		if (!ASSERT_OK(htab__add(&t, h, v), "add"))
			goto out;
	}
	for (v = 1; v <= 500; v++) {
		h = ((v % 7) << 40) | 0x3f0;
		if (!ASSERT_EQ(htab__find(&t, h, val_is, NULL, &v), v, "found under its hash") ||
		    !ASSERT_EQ(htab__find(&t, h + (1 << 20), val_is, NULL, &v), (uint64_t)0,
			       "not under another"))
			goto out;
	}
	h = ((uint64_t)3 << 40) | 0x3f0;
	ASSERT_TRUE(htab__del(&t, h, 3), "delete");
	ASSERT_EQ(htab__find(&t, h, val_is, NULL, &(uint64_t){ 3 }), (uint64_t)0, "deleted: 0");
	ASSERT_EQ(htab__find(&t, h, val_is, NULL, &(uint64_t){ 10 }), (uint64_t)10,
		  "its neighbour still found");
out:
	htab__free(&t);
}

static void test_strtab_ids(void)
{
	struct strtab st = {};
	const char *a, *b, *c;
	uint32_t id1, id2, id3;
	char buf[32];
	size_t i;

	ASSERT_OK(strtab__intern_id(&st, "mod\0sym", 7, &id1), "bytes with a NUL");
	ASSERT_OK(strtab__intern_id(&st, "mod", 3, &id2), "its prefix");
	ASSERT_NEQ(id1, id2, "a prefix is another string");
	ASSERT_EQ(strtab__len(&st, id1), (size_t)7, "length kept");
	ASSERT_TRUE(!memcmp(strtab__str(&st, id1), "mod\0sym", 8), "bytes and the NUL after them");
	ASSERT_OK(strtab__intern_id(&st, "mod\0sym", 7, &id3), "again");
	ASSERT_EQ(id3, id1, "equal bytes, one id");
	ASSERT_NULL(strtab__str(&st, 99), "no such id");
	ASSERT_EQ(strtab__len(&st, 99), (size_t)0, "no such id: 0");
	/* An empty buffer that never had bytes (NULL, 0): the empty string (UBSan: fuzz_pprof). */
	ASSERT_OK(strtab__intern_id(&st, NULL, 0, &id1), "NULL, 0");
	ASSERT_OK(strtab__intern_id(&st, "", 0, &id2), "\"\", 0");
	ASSERT_EQ(id1, id2, "one empty string");

	a = strtab__intern(&st, "hot_a");
	/* Enough strings for several chunks and reallocations of the id array. */
	for (i = 0; i < 50000; i++) {
		snprintf(buf, sizeof(buf), "name_%zu", i);
		if (!ASSERT_OK_PTR(strtab__intern(&st, buf), "intern"))
			goto out;
	}
	b = strtab__intern(&st, "hot_a");
	ASSERT_TRUE(a && a == b, "the same pointer for equal strings, after growth");
	c = strtab__intern(&st, "name_49999");
	ASSERT_STREQ(c, "name_49999", "the bytes");
	ASSERT_EQ(strtab__nr(&st), (size_t)50004, "distinct strings counted once (the empty one above too)");
	ASSERT_OK(strtab__intern_id(&st, "", 0, &id1), "the empty string");
	ASSERT_STREQ(strtab__str(&st, id1), "", "is a string");
out:
	strtab__free(&st);
	strtab__free(NULL);
}

/* A find is a lookup only: a miss adds nothing, a hit gives the id intern gave. */
static void test_strtab_find(void)
{
	struct strtab st = {};
	uint32_t id = 99, got = 77;

	ASSERT_EQ(strtab__find_id(&st, "a", 1, &id), -ENOENT, "an empty table has nothing");
	ASSERT_EQ(id, (uint32_t)99, "a miss leaves the id alone");
	ASSERT_OK(strtab__intern_id(&st, "x\0y", 3, &id), "intern");
	ASSERT_EQ(strtab__find_id(&st, "x", 1, &got), -ENOENT, "a prefix is not found");
	ASSERT_EQ(strtab__nr(&st), (size_t)1, "nor interned");
	ASSERT_OK(strtab__find_id(&st, "x\0y", 3, &got), "found");
	ASSERT_EQ(got, id, "the id intern gave");
	strtab__free(&st);
}

/* The inverse of @m modulo 2^64 (@m odd): Newton's iteration. */
static uint64_t inv64(uint64_t m)
{
	uint64_t x = m;

	for (int i = 0; i < 6; i++)
		x *= 2 - m * x;
	return x;
}

/* The inverse of hash_fin: what an attacker who knows the key computes. */
static uint64_t unfin(uint64_t y)
{
	y ^= (y >> 31) ^ (y >> 62);
	y *= inv64(0x94d049bb133111ebULL);
	y ^= (y >> 27) ^ (y >> 54);
	y *= inv64(0xbf58476d1ce4e5b9ULL);
	y ^= (y >> 30) ^ (y >> 60);
	return y;
}

/*
 * Hash flooding (issue 25): with a known key (0, every run's before),
 * 1000 names of 16 bytes made to collide do collide; with the run's
 * secret they spread, and two runs draw two secrets.
 */
static void test_hash_secret(void)
{
	enum { N = 1000 };
	static uint64_t names[N][2], h[N];
	uint64_t h1, target, s1;
	size_t i, j, distinct = 0;

	hash_secret = 0;
	target = unfin(0x5eed);
	for (i = 0; i < N; i++) {
		h1 = hash_u64(0, i);
		names[i][0] = i;
		names[i][1] = (target ^ h1) - 0x9e3779b97f4a7c15ULL - (h1 << 6) - (h1 >> 2);
	}
	for (i = 1; i < N; i++)
		if (hash_bytes(0, names[i], 16) != hash_bytes(0, names[0], 16))
			break;
	ASSERT_EQ(i, (size_t)N, "with a known key, every crafted name has one hash");
	hash_secret_init();
	s1 = hash_secret;
	for (i = 0; i < N; i++)
		h[i] = hash_bytes(0, names[i], 16);
	for (i = 0; i < N; i++) {
		for (j = 0; j < i && h[j] != h[i]; j++)
			;
		distinct += j == i;
	}
	ASSERT_EQ(distinct, (size_t)N, "with the run's secret, the crafted names spread");
	hash_secret_init();
	ASSERT_TRUE(hash_secret != s1, "each run draws its own secret");
	hash_secret = 0;
}

int main(void)
{
	RUN_TEST(test_htab_empty);
	RUN_TEST(test_htab_random);
	RUN_TEST(test_htab_duplicates);
	RUN_TEST(test_htab_find);
	RUN_TEST(test_strtab_ids);
	RUN_TEST(test_strtab_find);
	RUN_TEST(test_hash_secret);
	return TEST_EXIT();
}
