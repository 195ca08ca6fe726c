// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfmap: line syntax, malformed lines, partial lines, and the reader on
 * a growing file: only new bytes read, truncation, rewrite, byte cap.
 */
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/jit/perfmap.h"

TEST_SUITE("perfmap");

/* @addr names @want (NULL: nothing). */
static bool expect(struct jitsyms *js, uint64_t addr, const char *want)
{
	const struct jitsym *s = jitsyms__lookup(js, addr);
	char what[64];

	snprintf(what, sizeof(what), "lookup 0x%llx", (unsigned long long)addr);
	if (!want)
		return ASSERT_NULL(s, what);
	return ASSERT_OK_PTR(s, what) && ASSERT_STREQ(s->name, want, what);
}

/* Parse @text whole into a new table; its stats in @st. */
static struct jitsyms *parse_all(const char *text, size_t len, struct perfmap_stats *st)
{
	struct jitsyms *js = jitsyms__new(NULL);
	size_t used = 0;

	memset(st, 0, sizeof(*st));
	if (!js)
		return NULL;
	if (perfmap__parse(js, text, len, 0, &used, st) || used != len) {
		jitsyms__free(js);
		return NULL;
	}
	return js;
}

static void test_syntax(void)
{
	static const char text[] =
		"7f0000001000 40 plain_hex\n"
		"0x7f0000002000 0x80 with_prefix\n"
		"0X7F0000003000 0X10 UPPER_prefix\n"
		"7f0000004000\t20\tLazyCompile:*foo bar.js:12:3\n"
		"7f0000005000   8   spaces before name\r\n"
		"7f0000006000 0 size_zero\n"
		"\n"
		"0000000000000000000000007f0000007000 10 many_leading_zeros\n"
		"ffffffffffffff00 ff at_the_top\n"
		"7f0000008000 10 name with trailing space \n";
	struct perfmap_stats st;
	struct jitsyms *js = parse_all(text, sizeof(text) - 1, &st);
	const struct jitsym *s;

	if (!ASSERT_OK_PTR(js, "parse"))
		return;
	ASSERT_EQ(st.lines, (uint64_t)9, "well-formed lines");
	ASSERT_EQ(st.bad_lines, (uint64_t)0, "no bad line; the empty one is not counted");
	ASSERT_EQ(jitsyms__nr_syms(js), (size_t)8, "size 0 not stored");
	expect(js, 0x7f0000001000, "plain_hex");
	expect(js, 0x7f000000103f, "plain_hex");
	expect(js, 0x7f0000001040, NULL);
	expect(js, 0x7f000000207f, "with_prefix");
	expect(js, 0x7f0000003000, "UPPER_prefix");
	expect(js, 0x7f0000004010, "LazyCompile:*foo bar.js:12:3");
	expect(js, 0x7f0000005007, "spaces before name");
	expect(js, 0x7f0000006000, NULL);
	expect(js, 0x7f0000007000, "many_leading_zeros");
	expect(js, 0xfffffffffffffffe, "at_the_top");
	expect(js, 0x7f0000008000, "name with trailing space ");
	s = jitsyms__lookup(js, 0x7f0000002040);
	if (ASSERT_OK_PTR(s, "prefix"))
		ASSERT_TRUE(s->start == 0x7f0000002000 && s->size == 0x80, "0x fields");
	jitsyms__free(js);
}

/* Each malformed line is skipped and counted; the good ones around it kept. */
static void test_malformed(void)
{
	static const char *const bad[] = {
		"1000\n",				/* one field */
		"1000 10\n",				/* no name */
		"1000 10 \n",				/* separator, then nothing */
		"1000 10 \t \r\n",			/* blanks only */
		"10g0 10 bad_hex\n",
		"1000 1x bad_size\n",
		"0x 10 prefix_without_digits\n",
		"1000,10 comma\n",
		" 1000 10 leading_space\n",
		"-1000 10 negative\n",
		"10000000000000000 1 seventeen_digits\n",
		"1000 10000000000000000 size_overflow\n",
		"ffffffffffffff00 101 wraps\n",
		"ffffffffffffffff 1 wraps_by_one\n",
		"1000 10 nul\0in_name\n",
		"\0\n",
		"1000\t\n",
	};
	char *text = malloc(16384), *p;
	struct perfmap_stats st;
	struct jitsyms *js;
	size_t i, len;

	if (!ASSERT_OK_PTR(text, "malloc"))
		return;
	p = text;
	p += sprintf(p, "2000 10 good_first\n");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* Up to the \n, not strlen(): some hold a NUL. */
		const char *nl = bad[i];

		while (*nl != '\n')
			nl++;
		len = (size_t)(nl + 1 - bad[i]);
		memcpy(p, bad[i], len);
		p += len;
	}
	/* Over-long: 4097 bytes before the \n; then exactly 4096, which is kept. */
	p += sprintf(p, "3000 10 ");
	memset(p, 'x', 4097 - 8);
	p += 4097 - 8;
	*p++ = '\n';
	p += sprintf(p, "4000 10 ");
	memset(p, 'y', 4096 - 8);
	p += 4096 - 8;
	*p++ = '\n';
	p += sprintf(p, "5000 10 good_last\n");
	js = parse_all(text, (size_t)(p - text), &st);
	if (ASSERT_OK_PTR(js, "parse")) {
		ASSERT_EQ(st.bad_lines, (uint64_t)(sizeof(bad) / sizeof(bad[0]) + 1), "every bad line");
		ASSERT_EQ(st.lines, (uint64_t)3, "good lines");
		expect(js, 0x2000, "good_first");
		expect(js, 0x5000, "good_last");
		expect(js, 0x1000, NULL);
		expect(js, 0x3000, NULL);
		if (ASSERT_OK_PTR(jitsyms__lookup(js, 0x4000), "a line of 4096"))
			ASSERT_EQ(strlen(jitsyms__lookup(js, 0x4000)->name), (size_t)4088, "kept whole");
		jitsyms__free(js);
	}
	free(text);
}

/* Only complete lines are consumed: the rest waits, even at the end of a file. */
static void test_partial_lines(void)
{
	static const char text[] = "1000 10 one\n2000 10 two\n3000 10 thr";
	struct jitsyms *js = jitsyms__new(NULL);
	struct perfmap_stats st = {};
	size_t used = 99;

	if (!ASSERT_OK_PTR(js, "new"))
		return;
	ASSERT_OK(perfmap__parse(js, text, 5, 0, &used, &st), "parse a piece");
	ASSERT_EQ(used, (size_t)0, "no complete line");
	ASSERT_OK(perfmap__parse(js, text, sizeof(text) - 1, 0, &used, &st), "parse");
	ASSERT_EQ(used, (size_t)24, "two lines");
	ASSERT_EQ(st.lines, (uint64_t)2, "two lines counted");
	expect(js, 0x3000, NULL);
	ASSERT_OK(perfmap__parse(js, "3000 10 three\n", 14, 0, &used, NULL), "the rest, no stats");
	ASSERT_EQ(used, (size_t)14, "complete");
	expect(js, 0x3000, "three");
	ASSERT_OK(perfmap__parse(js, "", 0, 0, &used, &st), "nothing");
	ASSERT_EQ(used, (size_t)0, "nothing consumed");
	jitsyms__free(js);
}

/* ---- the reader ---- */

static int memfd(void)
{
	return memfd_create("perfmap-test", MFD_CLOEXEC);
}

static bool append(int fd, const char *s, size_t len)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end >= 0 && pwrite(fd, s, len, end) == (ssize_t)len;
}

static bool append_str(int fd, const char *s)
{
	return append(fd, s, strlen(s));
}

static bool put_at(int fd, const char *s, off_t off)
{
	return pwrite(fd, s, strlen(s), off) == (ssize_t)strlen(s);
}

/* Growth: each read takes the new lines only; a partial line waits. */
static void test_reader_growth(void)
{
	/* The second line is past the first 64 bytes: a change to it is not seen as a rewrite. */
	static const char text[] = "7f0000001000 100 first_function_with_a_long_name\n"
				   "7f0000002000 100 second_function_name\n"
				   "7f0000003000 100 par";
	struct perfmap_reader *r = perfmap_reader__new(NULL);
	const struct perfmap_stats *st;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = perfmap_reader__stats(r);
	ASSERT_EQ(perfmap_reader__read(r, fd), 0, "empty file");
	append_str(fd, text);
	ASSERT_EQ(perfmap_reader__read(r, fd), 2, "two complete lines");
	ASSERT_EQ(st->bytes, (uint64_t)(strrchr(text, '\n') + 1 - text), "consumed up to the partial line");
	expect(perfmap_reader__syms(r), 0x7f0000003000, NULL);
	ASSERT_EQ(perfmap_reader__read(r, fd), 0, "nothing new");

	/*
	 * Change a line already read, in place: a reader that read the file
	 * again from 0 would now see "SECOND".  Then complete the partial line.
	 */
	ASSERT_TRUE(strstr(text, "second") - text > 64, "past the fingerprint");
	put_at(fd, "SECOND", strstr(text, "second") - text);
	append_str(fd, "tial_done\n7f0000002000 10 overrides_second\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 2, "two new lines");
	expect(perfmap_reader__syms(r), 0x7f0000003000, "partial_done");
	expect(perfmap_reader__syms(r), 0x7f0000002000, "overrides_second");
	expect(perfmap_reader__syms(r), 0x7f0000002010, "second_function_name");
	ASSERT_EQ(st->restarts, (uint64_t)0, "no restart");
	ASSERT_EQ(st->lines, (uint64_t)4, "four lines in all");

	/* A long partial line waits; once over line_max it is skipped as it grows. */
	{
		char chunk[3001];

		memset(chunk, 'z', 3000);
		chunk[3000] = '\0';
		append_str(fd, "7f0000009000 10 ");
		append_str(fd, chunk);
		ASSERT_EQ(perfmap_reader__read(r, fd), 0, "long partial line");
		ASSERT_EQ(st->bad_lines, (uint64_t)0, "not bad yet");
		append_str(fd, chunk);
		ASSERT_EQ(perfmap_reader__read(r, fd), 0, "longer");
		ASSERT_EQ(st->bad_lines, (uint64_t)1, "now too long");
		append_str(fd, chunk);
		ASSERT_EQ(perfmap_reader__read(r, fd), 0, "longer still");
		append_str(fd, "end\n7f000000a000 10 after_long\n");
		ASSERT_EQ(perfmap_reader__read(r, fd), 1, "the line after");
		ASSERT_EQ(st->bad_lines, (uint64_t)1, "counted once");
		expect(perfmap_reader__syms(r), 0x7f0000009000, NULL);
		expect(perfmap_reader__syms(r), 0x7f000000a000, "after_long");
	}
	ASSERT_EQ(perfmap_reader__read(r, -1), -EBADF, "a bad fd");
out:
	if (fd >= 0)
		close(fd);
	perfmap_reader__free(r);
	perfmap_reader__free(NULL);
}

/* Truncated, or rewritten with other first bytes: a fresh table from 0. */
static void test_reader_rewrite(void)
{
	struct perfmap_reader *r = perfmap_reader__new(NULL);
	const struct perfmap_stats *st;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = perfmap_reader__stats(r);
	append_str(fd, "1000 10 old_one\n2000 10 old_two\n3000 10 old_three\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 3, "three");

	/* Shorter than what was consumed. */
	ASSERT_OK(ftruncate(fd, 0), "truncate");
	append_str(fd, "1000 10 new_one\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 1, "read again");
	ASSERT_EQ(st->restarts, (uint64_t)1, "one restart");
	ASSERT_EQ(st->bytes, (uint64_t)16, "bytes of the new file");
	expect(perfmap_reader__syms(r), 0x1000, "new_one");
	expect(perfmap_reader__syms(r), 0x2000, NULL);
	ASSERT_EQ(jitsyms__nr_syms(perfmap_reader__syms(r)), (size_t)1, "a fresh table");

	/* Longer than before, other first bytes. */
	ASSERT_OK(ftruncate(fd, 0), "truncate");
	append_str(fd, "1000 10 newer_one\n2000 10 newer_two\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 2, "read again");
	ASSERT_EQ(st->restarts, (uint64_t)2, "two restarts");
	expect(perfmap_reader__syms(r), 0x1000, "newer_one");
	ASSERT_EQ(jitsyms__nr_syms(perfmap_reader__syms(r)), (size_t)2, "a fresh table");

	/* Appending is not a rewrite. */
	append_str(fd, "3000 10 newer_three\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 1, "appended");
	ASSERT_EQ(st->restarts, (uint64_t)2, "no restart");
out:
	if (fd >= 0)
		close(fd);
	perfmap_reader__free(r);
}

/* The byte cap: what is below it is kept, then the reader stops and says so. */
static void test_reader_cap(void)
{
	struct perfmap_opts opts = { .max_bytes = 40 };
	struct perfmap_reader *r = perfmap_reader__new(&opts);
	const struct perfmap_stats *st;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = perfmap_reader__stats(r);
	/* 16 bytes a line: the third ends at 48, past the cap. */
	append_str(fd, "1000 10 line_1\n2000 10 line_2\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 2, "under the cap");
	append_str(fd, "3000 10 line_3\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), -E2BIG, "past the cap");
	ASSERT_TRUE(st->capped, "capped");
	ASSERT_EQ(perfmap_reader__read(r, fd), -E2BIG, "and stays so");
	expect(perfmap_reader__syms(r), 0x2000, "line_2");
	expect(perfmap_reader__syms(r), 0x3000, NULL);
	ASSERT_EQ(st->bytes, (uint64_t)30, "bytes");

	errno = 0;
	opts.line_max = ((size_t)1 << 20) + 1;
	ASSERT_NULL(perfmap_reader__new(&opts), "line_max too big");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
out:
	if (fd >= 0)
		close(fd);
	perfmap_reader__free(r);
}

/*
 * quality.md case 11: a huge perf map (300 MiB, sparse: a hole of zeros
 * between real lines) with the default cap: the reader stops at 256 MiB,
 * never sees the line past it, and says it is capped.
 */
static void test_reader_huge_sparse(void)
{
	const uint64_t cap = (uint64_t)256 << 20, size = (uint64_t)300 << 20;
	static const char tail[] = "9000 10 past_the_cap\n";
	struct perfmap_reader *r = perfmap_reader__new(NULL);
	const struct perfmap_stats *st;
	struct timespec t0, t1;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = perfmap_reader__stats(r);
	append_str(fd, "1000 10 first_line\n");
	if (!ASSERT_OK(ftruncate(fd, (off_t)(size - (sizeof(tail) - 1))), "sparse hole") ||
	    !ASSERT_TRUE(append_str(fd, tail), "a line past the cap"))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(perfmap_reader__read(r, fd), -E2BIG, "past the cap");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("     300 MiB sparse perf map: %.2f s to reach the cap (this build)\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	ASSERT_TRUE(st->capped, "capped");
	ASSERT_TRUE(st->bytes <= cap, "read no more than the cap");
	ASSERT_TRUE(st->bytes > cap - (1 << 20), "read up to the cap");
	expect(perfmap_reader__syms(r), 0x1000, "first_line");
	expect(perfmap_reader__syms(r), 0x9000, NULL);
	ASSERT_EQ(perfmap_reader__read(r, fd), -E2BIG, "and stays so, without reading");
	ASSERT_TRUE(st->bytes <= cap, "still no more than the cap");
out:
	if (fd >= 0)
		close(fd);
	perfmap_reader__free(r);
}

/* The table's caps reach the reader as drops. */
static void test_reader_table_caps(void)
{
	struct perfmap_opts opts = { .syms = { .max_syms = 2 }, .line_max = 16 };
	struct perfmap_reader *r = perfmap_reader__new(&opts);
	const struct perfmap_stats *st;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = perfmap_reader__stats(r);
	append_str(fd, "1000 10 a\n2000 10 b\n3000 10 c\n4000 10 too_long_name\n5000 10 e\n");
	ASSERT_EQ(perfmap_reader__read(r, fd), 2, "two kept");
	ASSERT_EQ(st->lines, (uint64_t)4, "four well-formed");
	ASSERT_EQ(st->dropped, (uint64_t)2, "two dropped");
	ASSERT_EQ(st->bad_lines, (uint64_t)1, "one over line_max 16");
	ASSERT_EQ(jitsyms__nr_dropped(perfmap_reader__syms(r)), (size_t)2, "the table's count");
out:
	if (fd >= 0)
		close(fd);
	perfmap_reader__free(r);
}

/*
 * A big map written in uneven pieces (lines cut by every read and by the
 * reader's 64 KiB buffer), read after each: the same table as one parse.
 */
static void test_reader_pieces(void)
{
	size_t n = 20000, len = 0, i, at, step, cap = n * 80;
	struct perfmap_reader *r = perfmap_reader__new(NULL);
	char *text = malloc(cap);
	struct perfmap_stats ref_st;
	struct jitsyms *ref = NULL;
	long total = 0;
	int fd = memfd(), got;

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_OK_PTR(text, "malloc") ||
	    !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	for (i = 0; i < n; i++) {
		/* Overlapping entries, both hex forms, a bad line now and then. */
		if (i % 1000 == 999)
			len += (size_t)sprintf(text + len, "zz %zx bad\n", i);
		len += (size_t)sprintf(text + len, i % 2 ? "%llx %x fn_%zu_%s\n" : "0x%llx 0x%x fn_%zu_%s\n",
				       0x7f0000000000ull + (i * 7919 % n) * 0x40, 0x40 + (unsigned)(i % 3) * 0x40,
				       i, i % 5 ? "x" : "a_longer_suffix_for_variety");
	}
	ref = parse_all(text, len, &ref_st);
	if (!ASSERT_OK_PTR(ref, "reference parse"))
		goto out;
	for (at = 0, step = 1; at < len; at += step, step = step * 3 % 100003 + 1) {
		if (step > len - at)
			step = len - at;
		if (!ASSERT_TRUE(append(fd, text + at, step), "append"))
			goto out;
		got = perfmap_reader__read(r, fd);
		if (!ASSERT_TRUE(got >= 0, "read"))
			goto out;
		total += got;
	}
	ASSERT_EQ(total, (long)n, "every line once");
	ASSERT_EQ(perfmap_reader__stats(r)->bad_lines, ref_st.bad_lines, "bad lines");
	ASSERT_EQ(perfmap_reader__stats(r)->bytes, (uint64_t)len, "every byte");
	for (i = 0; i < n * 3; i++) {
		uint64_t a = 0x7f0000000000ull + i * 0x15;
		const struct jitsym *x = jitsyms__lookup(perfmap_reader__syms(r), a);
		const struct jitsym *y = jitsyms__lookup(ref, a);

		if (!ASSERT_TRUE(!x == !y, "same coverage") ||
		    (x && !ASSERT_STREQ(x->name, y->name, "same name")))
			break;
	}
out:
	if (fd >= 0)
		close(fd);
	jitsyms__free(ref);
	free(text);
	perfmap_reader__free(r);
}

int main(void)
{
	RUN_TEST(test_syntax);
	RUN_TEST(test_malformed);
	RUN_TEST(test_partial_lines);
	RUN_TEST(test_reader_growth);
	RUN_TEST(test_reader_rewrite);
	RUN_TEST(test_reader_cap);
	RUN_TEST(test_reader_huge_sparse);
	RUN_TEST(test_reader_table_caps);
	RUN_TEST(test_reader_pieces);
	return TEST_EXIT();
}
