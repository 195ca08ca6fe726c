// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The writer's dedupe index under its cap (report_windex.h): it stays
 * bounded under churn, keeps the working set's ids across a forget, and a
 * file whose writer forgot reads back as the same profile as one whose
 * writer never did: the same samples per stack, one id per identity.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "report/report.h"
#include "base/util.h"

TEST_SUITE("report_forget");

#include "report_fixture.h"

/* Modules, a pool of hot frames, and how deep stacks go. */
#define NR_MODS		3
#define HOT_FRAMES	64
#define HOT_STACKS	40
#define DEPTH_MAX	24

/*
 * One recording under churn, the same for every writer: each sample is a
 * hot stack (a working set) or, one time in two, a stack seen once made of
 * new frames (a short program's start-up), with a new comm now and then.
 * Driven by its own seed, so two writers get the same calls.
 */
struct churn {
	uint64_t seed;
	uint32_t hot[HOT_STACKS][DEPTH_MAX + 1];	/* [0]: depth; frame numbers */
};

static uint64_t churn_rng(struct churn *c)
{
	c->seed ^= c->seed >> 12;
	c->seed ^= c->seed << 25;
	c->seed ^= c->seed >> 27;
	return c->seed * 0x2545f4914f6cdd1dULL;
}

static int put_frame(struct report_writer *w, uint64_t n, uint32_t *id)
{
	static const char *const paths[NR_MODS] = { "/usr/lib/libc.so.6", "/usr/bin/python3.11", "/opt/a" };
	struct rpt_module m = { .kind = RPT_MOD_FILE, .dev = 8, .ino = 100 + n % NR_MODS,
				.path = paths[n % NR_MODS] };
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .offset = 0x1000 + n * 16,
			       .addr = 0x7f0000001000ULL + n * 16, .reason = RPT_OK };
	char sym[48];
	int err;

	snprintf(sym, sizeof(sym), "function_number_%llu", (unsigned long long)n);
	f.sym = sym;
	err = report_writer__module(w, &m, &f.module);
	return err ?: report_writer__frame(w, &f, id);
}

/*
 * Write @nr churn samples, @step ns apart, to @path with an index of
 * @index_max bytes (0: the default).
 */
static bool write_churn(const char *path, size_t index_max, uint64_t step, uint64_t nr,
			uint64_t *forgets, size_t *max_bytes)
{
	struct churn c = { .seed = 0x1234567887654321ULL };
	uint32_t ids[DEPTH_MAX], i, j, depth;
	struct rpt_sample s = {};
	struct report_writer *w;
	uint64_t k, fresh = 1000000;
	char comm[16];
	int err = 0;

	for (i = 0; i < HOT_STACKS; i++) {
		c.hot[i][0] = 1 + (uint32_t)(churn_rng(&c) % DEPTH_MAX);
		for (j = 1; j <= c.hot[i][0]; j++)
			c.hot[i][j] = (uint32_t)(churn_rng(&c) % HOT_FRAMES);
	}
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return false;
	if (index_max)
		report_writer__set_index_max(w, index_max, RPT_INDEX_AGE_NS);
	*max_bytes = 0;
	for (k = 0; k < nr && !err; k++) {
		bool hot = churn_rng(&c) % 2;
		uint32_t *h = c.hot[churn_rng(&c) % HOT_STACKS];

		depth = hot ? h[0] : 1 + (uint32_t)(churn_rng(&c) % DEPTH_MAX);
		for (j = 0; j < depth && !err; j++)
			err = put_frame(w, hot ? h[j + 1] : fresh++, &ids[j]);
		err = err ?: report_writer__stack(w, ids, depth, &s.stack);
		snprintf(comm, sizeof(comm), "prog%u", (unsigned int)(hot ? 0 : k / 500));
		s.comm = comm;
		s.pid = 100 + (uint32_t)(k / 50);
		s.tid = s.pid;
		s.time = k * step;
		err = err ?: report_writer__sample(w, &s);
		if (report_writer__index_bytes(w) > *max_bytes)
			*max_bytes = report_writer__index_bytes(w);
	}
	ASSERT_OK(err, "writing the churn");
	*forgets = report_writer__forgets(w);
	return ASSERT_OK(report_writer__close(w, &fx_hdr), "close") && !err;
}

/* "comm;module:sym+off;..." of sample @i of @r, root last, into @buf. */
static void folded(const struct report *r, size_t i, char *buf, size_t len)
{
	const struct rpt_sample *s = report__sample(r, i);
	const uint32_t *ids;
	uint32_t nr, j;
	size_t n;

	n = (size_t)snprintf(buf, len, "%s", s->comm);
	ids = report__stack(r, s->stack, &nr);
	for (j = 0; ids && j < nr && n < len; j++) {
		const struct rpt_frame *f = report__frame(r, ids[j]);
		const struct rpt_module *m = report__module(r, f->module);

		n += (size_t)snprintf(buf + n, len - n, ";%s:%s+%llx", m ? m->path : "?",
				      f->sym ? f->sym : "?", (unsigned long long)f->offset);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each sample's folded stack, sorted: the profile, whatever the ids. */
static char **profile_of(const struct report *r)
{
	size_t i, n = report__nr_samples(r);
	char **v = calloc(n + 1, sizeof(*v));
	char buf[4096];

	for (i = 0; v && i < n; i++) {
		folded(r, i, buf, sizeof(buf));
		v[i] = strdup(buf);
	}
	if (v)
		qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

static void free_profile(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Distinct stack ids the samples of @r use. */
static size_t stacks_used(const struct report *r)
{
	size_t i, n = 0, nr = report__nr_samples(r);
	uint32_t *ids = calloc(nr + 1, sizeof(*ids));

	for (i = 0; ids && i < nr; i++)
		ids[i] = report__sample(r, i)->stack;
	for (i = 0; ids && i < nr; i++) {
		size_t j;

		for (j = 0; j < i && ids[j] != ids[i]; j++)
			;
		n += j == i;
	}
	free(ids);
	return n;
}

/*
 * The files at @pa (a writer that never forgot) and @pb read back as the
 * same profile: as many samples, modules, frames and used stacks (one id
 * per identity), and the same sorted folded stacks.  Both are removed.
 */
static void check_same(const char *pa, const char *pb)
{
	struct report *a = report__open(pa, errbuf, sizeof(errbuf));
	struct report *b = a ? report__open(pb, errbuf, sizeof(errbuf)) : NULL;
	char **va = NULL, **vb = NULL;
	size_t i;

	if (!ASSERT_OK_PTR(a, errbuf) || !ASSERT_OK_PTR(b, errbuf))
		goto out;
	ASSERT_EQ(report__nr_samples(b), report__nr_samples(a), "samples");
	ASSERT_EQ(report__nr_modules(b), report__nr_modules(a), "one module per identity");
	ASSERT_EQ(report__nr_frames(b), report__nr_frames(a), "one frame per identity");
	ASSERT_EQ(stacks_used(b), stacks_used(a), "one stack per identity");
	va = profile_of(a);
	vb = profile_of(b);
	if (!ASSERT_OK_PTR(va, "profile") || !ASSERT_OK_PTR(vb, "profile"))
		goto out;
	for (i = 0; i < report__nr_samples(a); i++)
		if (!ASSERT_STREQ(vb[i], va[i], "the same folded stacks"))
			break;
out:
	free_profile(va);
	free_profile(vb);
	report__free(a);
	report__free(b);
	unlink(pa);
	unlink(pb);
}

/*
 * The same churn through a writer that never forgets and one with a small
 * index: the second forgets many times, stays near its cap, and reads
 * back as the same profile with as many frames, modules and stacks.
 */
static void test_forget_same_profile(void)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	uint64_t fa, fb;
	size_t ma, mb;
	const size_t cap = 64 << 10;

	tmp_path(pa, sizeof(pa), "forget_a");
	tmp_path(pb, sizeof(pb), "forget_b");
	if (!write_churn(pa, 0, 1000, 6000, &fa, &ma) || !write_churn(pb, cap, 1000, 6000, &fb, &mb))
		goto out;
	ASSERT_EQ(fa, (uint64_t)0, "the default index does not forget 6000 samples");
	ASSERT_TRUE(fb >= 5, "a 64 KiB index forgets under churn");
	printf("     %s/%s: index %zu bytes without a cap, at most %zu with %zu (%llu forgets)\n",
	       test__suite, test__name, ma, mb, cap, (unsigned long long)fb);
	ASSERT_TRUE(ma > 4 * cap, "churn grows an uncapped index past 4x the cap");
	/* Checked at every call, so one call's worth over at most: a stack of new frames. */
	ASSERT_TRUE(mb <= cap + 16 * 1024, "the capped index stays within one call of its cap");
out:
	check_same(pa, pb);
}

/* The working set keeps its ids across forgets; what was seen once comes back under a new id. */
static void test_forget_keeps_working_set(void)
{
	uint32_t hot[3], cold[2], hot_id, cold_id, id, f;
	struct report_writer *w;
	char path[PATH_MAX];
	uint64_t n, before;

	tmp_path(path, sizeof(path), "forget_ws");
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	report_writer__set_index_max(w, 8 << 10, RPT_INDEX_AGE_NS);
	for (f = 0; f < 3; f++)
		ASSERT_OK(put_frame(w, f, &hot[f]), "hot frame");
	ASSERT_OK(report_writer__stack(w, hot, 3, &hot_id), "hot stack");
	ASSERT_OK(put_frame(w, 99, &cold[0]), "cold frame");
	cold[1] = hot[0];
	ASSERT_OK(report_writer__stack(w, cold, 2, &cold_id), "cold stack");
	before = report_writer__forgets(w);
	/* Churn until two forgets passed, finding the hot stack again between. */
	for (n = 1000; report_writer__forgets(w) < before + 2 && n < 100000; n++) {
		ASSERT_OK(put_frame(w, n, &f), "churn frame");
		ASSERT_OK(report_writer__stack(w, &f, 1, &id), "churn stack");
		if (n % 16 == 0) {
			ASSERT_OK(report_writer__stack(w, hot, 3, &id), "hot stack again");
			if (!ASSERT_EQ(id, hot_id, "the hot stack keeps its id"))
				break;
			ASSERT_OK(put_frame(w, 0, &f), "hot frame again");
			ASSERT_EQ(f, hot[0], "a hot frame keeps its id");
		}
	}
	ASSERT_TRUE(report_writer__forgets(w) >= before + 2, "the index forgot twice");
	ASSERT_OK(put_frame(w, 99, &f), "cold frame again");
	ASSERT_TRUE(f != cold[0], "a frame seen once comes back under a new id");
	cold[0] = f;
	ASSERT_OK(report_writer__stack(w, cold, 2, &id), "cold stack again");
	ASSERT_TRUE(id != cold_id, "a stack seen once comes back under a new id");
	ASSERT_OK(report_writer__close(w, &fx_hdr), "close");
	unlink(path);
}

/* An index of 0 bytes forgets at every call: slower, but still the same profile. */
static void test_forget_always(void)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	uint64_t fa, fb;
	size_t ma, mb;

	tmp_path(pa, sizeof(pa), "always_a");
	tmp_path(pb, sizeof(pb), "always_b");
	if (write_churn(pa, 0, 1000, 300, &fa, &ma) && write_churn(pb, 1, 1000, 300, &fb, &mb))
		ASSERT_TRUE(fb > 300, "a forget at nearly every call");
	check_same(pa, pb);
}

/*
 * Ten minutes of churn at 10 samples a second under the default cap: the
 * index forgets by age once past a sixteenth of it, so it stays near that
 * instead of growing for the whole file, and the profile is the same.
 */
static void test_forget_by_age(void)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	uint64_t fa, fb, minute = RPT_INDEX_AGE_NS;
	size_t ma, mb;

	tmp_path(pa, sizeof(pa), "age_a");
	tmp_path(pb, sizeof(pb), "age_b");
	/* The same calls, 1 us apart (no age reached) and 100 ms apart. */
	if (!write_churn(pa, 0, 1000, 6000, &fa, &ma) || !write_churn(pb, 0, 100000000, 6000, &fb, &mb))
		goto out;
	ASSERT_EQ(fa, (uint64_t)0, "6 ms of samples: no forget");
	/* Past the floor at each age's end, which takes one or two ages of this churn. */
	ASSERT_TRUE(fb >= 600 * 1000000000ULL / minute / 3, "forgets by age over 10 minutes");
	ASSERT_TRUE(fb <= 600 * 1000000000ULL / minute, "at most one per age");
	printf("     %s/%s: index at most %zu bytes in 6 ms, %zu over 10 minutes (%llu forgets)\n",
	       test__suite, test__name, ma, mb, (unsigned long long)fb);
	/* A sixteenth of the cap plus what one or two ages bring (600 samples each). */
	ASSERT_TRUE(mb < ma / 2, "age keeps the index at less than half of the uncapped one");
out:
	check_same(pa, pb);
}

int main(void)
{
	RUN_TEST(test_forget_same_profile);
	RUN_TEST(test_forget_keeps_working_set);
	RUN_TEST(test_forget_always);
	RUN_TEST(test_forget_by_age);
	return TEST_EXIT();
}
