/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tiny test harness in the style of the kernel's BPF selftests: ASSERT_*
 * print the actual and expected values and evaluate to a bool, so a test
 * can bail out with `if (!ASSERT_...) return;`.  Each test prints one line
 * that tests/run.sh counts:
 *   PASS <suite>/<test>
 *   FAIL <suite>/<test>: <why>
 *   SKIP <suite>/<test>: <why>
 * A missing prerequisite is a SKIP, never a PASS.
 */
#ifndef BPFSYM_TEST_H
#define BPFSYM_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *test__suite = "unit";
static const char *test__name;
static int test__failed_now, test__skipped_now;
static int test__nr_fail;

#define TEST_SUITE(name) static void __attribute__((constructor)) test__set_suite(void) { test__suite = (name); }

static inline void test__fail_msg(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static inline void test__fail_msg(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!test__failed_now)
		printf("FAIL %s/%s: ", test__suite, test__name);
	else
		printf("     %s/%s: ", test__suite, test__name);
	printf("%s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	test__failed_now = 1;
}

#define ASSERT_TRUE(cond, what) ({					\
	bool ___ok = !!(cond);						\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: expected true", (what)); \
	___ok; })

#define ASSERT_FALSE(cond, what) ({					\
	bool ___ok = !(cond);						\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: expected false", (what)); \
	___ok; })

#define ASSERT_EQ(actual, expected, what) ({				\
	__typeof__(actual) ___a = (actual);				\
	__typeof__(expected) ___e = (expected);				\
	bool ___ok = ___a == ___e;					\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: actual %lld (0x%llx) != expected %lld (0x%llx)", \
			       (what), (long long)___a, (unsigned long long)___a, \
			       (long long)___e, (unsigned long long)___e); \
	___ok; })

#define ASSERT_NEQ(actual, expected, what) ({				\
	__typeof__(actual) ___a = (actual);				\
	__typeof__(expected) ___e = (expected);				\
	bool ___ok = ___a != ___e;					\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: unexpected %lld", \
			       (what), (long long)___a);		\
	___ok; })

#define ASSERT_OK(res, what) ({						\
	long long ___r = (res);						\
	bool ___ok = ___r == 0;						\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: unexpected error %lld (%s)", \
			       (what), ___r, strerror(___r < 0 ? (int)-___r : (int)___r)); \
	___ok; })

#define ASSERT_OK_PTR(ptr, what) ({					\
	const void *___p = (ptr);					\
	bool ___ok = ___p != NULL;					\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: unexpected NULL (errno %d: %s)", \
			       (what), errno, strerror(errno));		\
	___ok; })

#define ASSERT_NULL(ptr, what) ({					\
	const void *___p = (ptr);					\
	bool ___ok = ___p == NULL;					\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: expected NULL", (what)); \
	___ok; })

#define ASSERT_STREQ(actual, expected, what) ({				\
	const char *___a = (actual), *___e = (expected);		\
	bool ___ok = ___a && ___e && strcmp(___a, ___e) == 0;		\
	if (!___ok)							\
		test__fail_msg(__FILE__, __LINE__, "%s: actual \"%s\" != expected \"%s\"", \
			       (what), ___a ? ___a : "(null)", ___e ? ___e : "(null)"); \
	___ok; })

/* Mark the running test skipped, with a reason; the caller then returns. */
#define test__skip(...) do {						\
	printf("SKIP %s/%s: ", test__suite, test__name);		\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	test__skipped_now = 1;						\
} while (0)

#define RUN_TEST(fn) do {						\
	test__name = #fn;						\
	test__failed_now = test__skipped_now = 0;			\
	fn();								\
	if (test__failed_now)						\
		test__nr_fail++;					\
	else if (!test__skipped_now)					\
		printf("PASS %s/%s\n", test__suite, test__name);	\
	fflush(stdout);							\
} while (0)

#define TEST_EXIT() (test__nr_fail ? 1 : 0)

#endif /* BPFSYM_TEST_H */
