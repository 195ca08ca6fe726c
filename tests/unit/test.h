/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tiny test harness in the style of the kernel's BPF selftests: ASSERT_*
 * print the actual and expected values and evaluate to a bool, so a test
 * can bail out with `if (!ASSERT_...) return;`.  Each RUN_TEST(fn) prints
 * exactly one line that tests/run.sh counts:
 *   PASS <suite>/<fn>
 *   FAIL <suite>/<fn>: <why>		(later failures: "     <suite>/<fn>: ...")
 *   SKIP <suite>/<fn>: <why>
 * A test that fails and also asked to be skipped is a FAIL (the skip's
 * reason follows as a continuation line).  tests/run.sh reads the RUN_TEST
 * lines of the source: a test that reports nothing (the program ended
 * before it) or twice is a failure.
 * A missing prerequisite (a tool, a kernel feature) is a SKIP, never a PASS;
 * a fixture that fails to build while its tools are there is a FAIL
 * (FAIL_BUILD), never a SKIP.
 */
#ifndef BPFSYM_TEST_H
#define BPFSYM_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *test__suite = "unit";
static const char *test__name;
static int test__failed_now, test__skipped_now;
static int test__nr_fail;
static char test__skip_why[512];
static char test__setup_fail[512], test__setup_skip[512];

#define TEST_SUITE(name) static void __attribute__((constructor)) test__set_suite(void) { test__suite = (name); }

static inline void test__fail_msg(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#include <stdarg.h>

/* snprintf that may cut (no -Wformat-truncation: cutting is intended). */
static inline __attribute__((format(printf, 3, 4), unused)) void test__fmt(char *buf, size_t size,
									   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
static inline void test__fail_msg(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	/* Outside RUN_TEST (main's own setup): "setup", never "(null)". */
	if (!test__failed_now)
		printf("FAIL %s/%s: ", test__suite, test__name ? test__name : "setup");
	else
		printf("     %s/%s: ", test__suite, test__name ? test__name : "setup");
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

/*
 * Mark the running test skipped, with a reason; the caller then returns.
 * The SKIP line is printed when the test ends, and only if it did not fail
 * (the first reason is kept).
 */
#define test__skip(...) do {						\
	if (!test__skipped_now)						\
		test__fmt(test__skip_why, sizeof(test__skip_why), __VA_ARGS__); \
	test__skipped_now = 1;						\
} while (0)

/* Write @text to the file @path (created or truncated): 0 or -errno (-EIO for a failed write). */
static inline __attribute__((unused)) int test__write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = fputs(text, f) < 0 ? -EIO : 0;
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

/* Is @tool installed (a command in PATH)? */
static inline __attribute__((unused)) bool test__have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/*
 * The compiler's last error line in the build log @log (its last line when
 * none looks like one) into @buf, for a FAIL message.
 */
static inline __attribute__((unused)) const char *test__build_error(const char *log, char *buf,
								    size_t size)
{
	char line[1024], last[512] = "(no output)";
	FILE *f = fopen(log, "r");

	test__fmt(buf, size, "%s", "");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		test__fmt(last, sizeof(last), "%s", line);
		if (strncmp(line, "collect2: ", 10) &&
		    (strstr(line, "error") || strstr(line, "undefined reference") ||
		     strstr(line, "cannot find") || strstr(line, "No such file")))
			test__fmt(buf, size, "%s", line);
	}
	if (f)
		fclose(f);
	if (!buf[0])
		test__fmt(buf, size, "%s", f ? last : "(no build log)");
	return buf;
}

/*
 * A fixture that did not build although its tools are there (their absence
 * is a SKIP, checked before): a FAIL with the compiler's last error line
 * from the build log @log.
 */
#define FAIL_BUILD(log, what) do {					\
	char ___e[512];							\
	test__fail_msg(__FILE__, __LINE__, "cannot build %s: %s (log: %s)", (what), \
		       test__build_error((log), ___e, sizeof(___e)), (log)); \
} while (0)

/*
 * main's own setup failed (FAIL), or lacks a tool or kernel feature
 * (SKIP): every later RUN_TEST reports that without running, until
 * TEST_SETUP_CLEAR().  So each test still reports once.
 */
#define TEST_SETUP_FAIL(...) test__fmt(test__setup_fail, sizeof(test__setup_fail), __VA_ARGS__)
#define TEST_SETUP_SKIP(...) test__fmt(test__setup_skip, sizeof(test__setup_skip), __VA_ARGS__)
#define TEST_SETUP_CLEAR() (test__setup_fail[0] = test__setup_skip[0] = 0)

/*
 * How main's fixture setup ended, said before the first RUN_TEST: @err
 * its result, @cc_failed whether the compiler failed (its log is
 * @dir/build.log).  No cc: SKIP; a build or a load that failed: FAIL.
 */
static inline __attribute__((unused)) void test__fixtures_setup(int err, bool cc_failed,
								  const char *dir)
{
	char log[PATH_MAX], why[512];

	if (err && !test__have("cc")) {
		TEST_SETUP_SKIP("'cc' not found: no fixtures");
	} else if (cc_failed) {
		snprintf(log, sizeof(log), "%s/build.log", dir);
		TEST_SETUP_FAIL("cannot build the fixtures: %s", test__build_error(log, why, sizeof(why)));
	} else if (err) {
		TEST_SETUP_FAIL("cannot load the fixtures (dlopen, /proc): %s", strerror(-err));
	}
}

#define RUN_TEST(fn) do {						\
	test__name = #fn;						\
	test__failed_now = test__skipped_now = 0;			\
	if (test__setup_fail[0])					\
		test__fail_msg(__FILE__, __LINE__, "not run: %s", test__setup_fail); \
	else if (test__setup_skip[0])					\
		test__skip("%s", test__setup_skip);			\
	else								\
		fn();							\
	if (test__failed_now) {						\
		test__nr_fail++;					\
		if (test__skipped_now)					\
			printf("     %s/%s: (it also asked to be skipped: %s)\n", \
			       test__suite, test__name, test__skip_why); \
	} else if (test__skipped_now) {					\
		printf("SKIP %s/%s: %s\n", test__suite, test__name, test__skip_why); \
	} else {							\
		printf("PASS %s/%s\n", test__suite, test__name);	\
	}								\
	test__name = NULL;						\
	fflush(stdout);							\
} while (0)

#define TEST_EXIT() (test__nr_fail ? 1 : 0)

#endif /* BPFSYM_TEST_H */
