// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * util: the strict parsers the command line relies on.  -m/--mmap-pages
 * reads perf's two spellings (pages, or a size with a unit) and, unlike
 * perf, refuses rather than rounds a size that is not a power of two pages.
 */
#include <errno.h>
#include <string.h>

#include "test.h"
#include "base/util.h"

TEST_SUITE("util");

static void test_mmap_pages_good(void)
{
	static const struct {
		const char *s;
		uint64_t page, pages;
	} v[] = {
		{ "1", 4096, 1 },
		{ "64", 4096, 64 },
		{ "008", 4096, 8 },		/* decimal, as perf reads it */
		{ "4K", 4096, 1 },
		{ "4k", 4096, 1 },
		{ "4096B", 4096, 1 },
		{ "1M", 4096, 256 },
		{ "1G", 4096, 262144 },		/* the cap itself */
		{ "262144", 4096, 262144 },
		{ "64K", 65536, 1 },		/* 64 KiB pages (arm64, ppc64) */
	};
	uint64_t pages;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pages = 0;
		if (!ASSERT_OK(parse_mmap_pages(v[i].s, v[i].page, &pages), v[i].s) ||
		    !ASSERT_EQ(pages, v[i].pages, v[i].s))
			return;
	}
}

static void test_mmap_pages_bad(void)
{
	static const struct {
		const char *s;
		int err;
	} v[] = {
		{ "", -EINVAL }, { "-1", -EINVAL }, { "+4", -EINVAL }, { " 4", -EINVAL },
		{ "4 ", -EINVAL }, { "0x10", -EINVAL }, { "4KB", -EINVAL }, { "4T", -EINVAL },
		{ "K", -EINVAL }, { "1.5M", -EINVAL },
		{ "0", -ERANGE }, { "0K", -ERANGE }, { "2G", -ERANGE }, { "1025M", -ERANGE },
		{ "262145", -ERANGE }, { "99999999999999999999999", -ERANGE },
		{ "3", -EDOM }, { "010", -EDOM }, { "12K", -EDOM }, { "100", -EDOM },
		{ "1000B", -EDOM },		/* not whole pages */
		{ "2K", -EDOM },		/* half a page */
	};
	uint64_t pages = 77;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!ASSERT_EQ(parse_mmap_pages(v[i].s, 4096, &pages), v[i].err, v[i].s))
			return;
	}
	ASSERT_EQ(pages, (uint64_t)77, "a refused value leaves the result alone");
	ASSERT_EQ(parse_mmap_pages("4", 0, &pages), -EINVAL, "page size 0");
	ASSERT_EQ(parse_mmap_pages("4", 3000, &pages), -EINVAL, "page size not a power of two");
	ASSERT_EQ(parse_mmap_pages(NULL, 4096, &pages), -EINVAL, "NULL");
}

static void test_size(void)
{
	static const struct {
		const char *s;
		int err;
		uint64_t v;
	} v[] = {
		{ "0", 0, 0 }, { "4096", 0, 4096 }, { "64M", 0, 64ull << 20 }, { "2g", 0, 2ull << 30 },
		{ "7k", 0, 7168 }, { "12B", 0, 12 }, { "4611686018427387904", 0, 1ull << 62 },
		{ "", -EINVAL, 0 }, { "M", -EINVAL, 0 }, { "1MB", -EINVAL, 0 }, { "-1", -EINVAL, 0 },
		{ "1T", -EINVAL, 0 }, { " 1", -EINVAL, 0 }, { "1.5M", -EINVAL, 0 },
		{ "4611686018427387905", -ERANGE, 0 }, { "4294967297G", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
	};
	uint64_t out;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		out = 77;
		if (!ASSERT_EQ(parse_size(v[i].s, &out), v[i].err, v[i].s))
			return;
		if (!ASSERT_EQ(out, v[i].err ? (uint64_t)77 : v[i].v, v[i].s))
			return;
	}
}

static void test_duration(void)
{
	static const struct {
		const char *s;
		int err;
		uint64_t v;
	} v[] = {
		{ "1s", 0, 1000000000ull }, { "0s", 0, 0 }, { "90s", 0, 90000000000ull },
		{ "5m", 0, 300000000000ull }, { "2h", 0, 7200000000000ull }, { "1d", 0, 86400000000000ull },
		{ "53375d", 0, 53375ull * 86400 * 1000000000ull },
		{ "", -EINVAL, 0 }, { "s", -EINVAL, 0 }, { "10", -EINVAL, 0 }, { "10M", -EINVAL, 0 },
		{ "1S", -EINVAL, 0 }, { "1ms", -EINVAL, 0 }, { "-1s", -EINVAL, 0 }, { "1.5h", -EINVAL, 0 },
		{ " 1s", -EINVAL, 0 }, { "1s ", -EINVAL, 0 }, { "1w", -EINVAL, 0 },
		{ "53376d", -ERANGE, 0 }, { "4611686019s", -ERANGE, 0 },
		{ "99999999999999999999999s", -ERANGE, 0 },
	};
	uint64_t out;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		out = 77;
		if (!ASSERT_EQ(parse_duration_ns(v[i].s, &out), v[i].err, v[i].s))
			return;
		if (!ASSERT_EQ(out, v[i].err ? (uint64_t)77 : v[i].v, v[i].s))
			return;
	}
	ASSERT_EQ(parse_duration_ns(NULL, &out), -EINVAL, "NULL");
}

int main(void)
{
	RUN_TEST(test_mmap_pages_good);
	RUN_TEST(test_mmap_pages_bad);
	RUN_TEST(test_size);
	RUN_TEST(test_duration);
	return TEST_EXIT();
}
