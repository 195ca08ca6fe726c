// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report reader's memory bound (docs/FORMAT.md, "Reader limits"): what
 * it allocates for a file is at most RPT_MEM_RATIO bytes per file byte
 * and RPT_MEM_FLOOR more, whatever counts the file's records declare or
 * repeat; a merge, at most twice its inputs' bounds together.
 *
 * The oracle is the allocator, not the reader's own count: ASan's malloc
 * and free hooks add up the bytes live at every moment, so the peak seen
 * while a file is read is every allocation made, transient ones too.
 * The files are crafted by tests/fixtures/report_bomb.c (a record
 * repeated, squeezed by zstd: the 6.2 KB file that read as 5 M samples),
 * and written by the real writer for a recording's shape.
 */
#include <stdio.h>
#include <unistd.h>
#include <zstd.h>

#define REPORT_BOMB_LIB
#include "../fixtures/report_bomb.c"

#include "test.h"
#include "base/util.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/format/report_flame.h"
#include "view/report_agg.h"
#include "view/report_view.h"

TEST_SUITE("report_bound")

static char errbuf[512];

/* ASan's allocator interface (libasan exports it; gcc installs no header for it). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					       void (*free_hook)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

/* Bytes live and their peak, from the allocator's hooks (one thread: no locking). */
static size_t live, peak;

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	live += n;
	if (live > peak)
		peak = live;
}

static void on_free(const volatile void *p)
{
	live -= __sanitizer_get_allocated_size(p);
}

/*
 * What the reader allocates beside the file's bound: zstd's context, as
 * the allocator sees it, and a page of slack.
 */
static size_t fixed_cost(void)
{
	static size_t dctx;
	size_t base = live;
	ZSTD_DCtx *d;

	if (!dctx) {
		peak = live;
		d = ZSTD_createDCtx();
		dctx = peak - base;
		ZSTD_freeDCtx(d);
	}
	return dctx + 4096;
}

static size_t bound_of(size_t len)
{
	return len * RPT_MEM_RATIO + RPT_MEM_FLOOR;
}

/* A bomb of @kind with @want bytes of records, in memory.  NULL on failure. */
static uint8_t *bomb(const char *kind, size_t want, size_t *len)
{
	char *buf = NULL;
	size_t size = 0, written;
	FILE *f = open_memstream(&buf, &size);
	int err;

	if (!f)
		return NULL;
	err = report_bomb__write(f, kind, want, &written);
	if (fclose(f) || err || written != size) {
		free(buf);
		return NULL;
	}
	*len = size;
	return (uint8_t *)buf;
}

/*
 * Read @data: the peak of the bytes allocated meanwhile, over what was
 * live before, in *@used; the report (NULL: refused, why in @err).
 */
static struct report *open_measured(const uint8_t *data, size_t len, size_t *used, char *err, size_t errlen)
{
	size_t base = live;
	struct report *r;

	fixed_cost();
	peak = live;
	r = report__open_mem(data, len, err, errlen);
	*used = peak - base;
	return r;
}

static const char *const kinds[] = { "samples", "strings", "modules", "frames", "stacks", "cgroups", "forget",
				     "offcpu" };

/*
 * Each kind of bomb, at 16 MiB of records (the old reader took 64 from a
 * file of kilobytes), and from 64 KiB up to 2 MiB of records around the
 * new caps: read or refused, never more than the file's bound allocated.
 */
static void test_bombs(void)
{
	static const size_t wants[] = { 16u << 20, 64u << 10, 512u << 10, 1u << 20, 1300u << 10, 2u << 20 };
	char err[512];
	size_t k, w, len, used;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (w = 0; w < sizeof(wants) / sizeof(wants[0]); w++) {
			uint8_t *data = bomb(kinds[k], wants[w], &len);
			struct report *r;

			if (!ASSERT_OK_PTR(data, "report_bomb__write"))
				return;
			err[0] = '\0';
			r = open_measured(data, len, &used, err, sizeof(err));
			if (!ASSERT_TRUE(used <= bound_of(len) + fixed_cost(), "bytes allocated for the file")) {
				printf("     %s, %zu KiB of records in %zu bytes: %s; %zu bytes allocated, bound %zu\n",
				       kinds[k], wants[w] >> 10, len, r ? "read" : err, used, bound_of(len));
				report__free(r);
				free(data);
				return;
			}
			if (r) {
				ASSERT_TRUE(report__mem(r) <= report__mem_max(r), "the reader's count");
				ASSERT_EQ(report__mem_max(r), bound_of(len), "the bound docs/FORMAT.md states");
			} else {
				ASSERT_TRUE(strstr(err, "memory bound") || strstr(err, "of records from a"),
					    "refused at a bound");
			}
			report__free(r);
			free(data);
		}
	}
}

/* A recording's shape, with the real writer: many stacks, samples spread over them. */
static uint8_t *recording(size_t nr, size_t *len)
{
	char path[256];
	const char *dir = getenv("BPFSYM_TEST_TMP");
	struct rpt_header hdr = { .hostname = "h", .event = "cpu-clock", .freq = 999, .nr_cpus = 4 };
	struct report_writer *w;
	uint32_t frames[40], stack, i, j;
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .module = RPT_NONE, .reason = RPT_NO_MAPPING };
	uint8_t *buf = NULL;
	int err = 0;

	snprintf(path, sizeof(path), "%s/test_report_bound.%d", dir && *dir ? dir : "/tmp", (int)getpid());
	w = report_writer__open(path, &hdr);
	if (!w)
		return NULL;
	for (i = 0; i < nr && !err; i++) {
		/* 40 frames: a deep stack, its leaf one of 4096 places, its root shared. */
		for (j = 0; j < 40 && !err; j++) {
			f.offset = f.addr = j ? 0x400000 + j * 64 : 0x500000 + (i * 2654435761u) % 4096 * 16;
			err = report_writer__frame(w, &f, &frames[j]);
		}
		err = err ?: report_writer__stack(w, frames, 40, &stack);
		err = err ?: report_writer__sample(w, &(struct rpt_sample){ .time = i * 1001001ull, .pid = 100 + i % 8,
									 .tid = 100 + i % 8, .comm = "app",
									 .stack = stack });
		if (!err && i % 999 == 998)
			err = report_writer__flush(w);
	}
	err = report_writer__close(w, &hdr) ?: err;
	if (!err && !read_file_capped(path, 1u << 30, (char **)&buf, len))
		err = 0;
	else
		err = -1;
	unlink(path);
	return err ? NULL : buf;
}

/* A recording the writer made reads within its bound, with room to spare: say how much. */
static void test_recording(void)
{
	size_t len, used;
	uint8_t *data = recording(20000, &len);
	struct report *r;

	if (!ASSERT_OK_PTR(data, "writing the recording"))
		return;
	r = open_measured(data, len, &used, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_EQ(report__nr_samples(r), (size_t)20000, "samples");
		ASSERT_TRUE(used <= bound_of(len) + fixed_cost(), "bytes allocated for the file");
		/* Without the floor, still under half the factor: legitimate files are far from it. */
		ASSERT_TRUE(report__mem(r) < len * RPT_MEM_RATIO / 2 + (1u << 20), "room under the factor");
		printf("     report_bound/test_recording: %zu bytes (%.1f B/sample): %zu held (%.1fx), "
		       "%zu at the peak\n", len, (double)len / 20000, report__mem(r),
		       (double)report__mem(r) / (double)len, used);
	}
	report__free(r);
	free(data);
}

/*
 * Several files: the merge holds at most its inputs' bounds together, and
 * frees each input once merged, so its peak is at most twice that.  A
 * FORGET bomb among them makes its reader index it again (report__dedupe)
 * under a bound of the same kind.
 */
static void test_merge(void)
{
	struct report *v[3] = {};
	uint8_t *data[3] = {};
	size_t len[3], used, sum = 0, i, n = 0;
	struct report *m;
	char warn[256];

	data[0] = recording(5000, &len[0]);
	data[1] = recording(3000, &len[1]);
	data[2] = bomb("forget", 1u << 20, &len[2]);
	peak = live;
	used = live;
	for (i = 0; i < 3; i++) {
		if (!ASSERT_OK_PTR(data[i], "an input"))
			goto out;
		v[n] = report__open_mem(data[i], len[i], errbuf, sizeof(errbuf));
		if (v[n])
			sum += bound_of(len[n++]);
	}
	ASSERT_TRUE(n >= 2, "two inputs read at least");
	m = report__merge(v, n, warn, sizeof(warn));
	memset(v, 0, sizeof(v));
	used = peak - used;
	if (ASSERT_OK_PTR(m, "report__merge")) {
		ASSERT_TRUE(report__mem(m) <= report__mem_max(m), "the merge's count");
		ASSERT_EQ(report__mem_max(m), sum, "the merge's bound: its inputs' together");
	}
	if (!ASSERT_TRUE(used <= 2 * sum + n * fixed_cost(), "bytes allocated for the merge"))
		printf("     %zu allocated, inputs' bounds %zu\n", used, sum);
	report__free(m);
out:
	for (i = 0; i < 3; i++) {
		report__free(v[i]);
		free(data[i]);
	}
}

/* Bytes the views may allocate per frame they walk (the flame graph's node, its hash slots, its layout). */
#define VIEW_PER_VISIT 256

/*
 * The views on a file of a new comm per sample, all in one stack of 2000
 * frames: the table, the folded lines and the flame graph walk (and the
 * last two hold) 2000 frames per sample, pairs x depth from a file of a
 * few KiB.  Each either refuses (-E2BIG, past agg__visits_max()) or
 * allocates at most VIEW_PER_VISIT bytes per frame it may walk, over the
 * report.  And a recording the writer made is far from the cap.
 */
static void test_views(void)
{
	static const size_t wants[] = { 2u << 10, 4u << 10, 16u << 10, 64u << 10 };
	FILE *null = fopen("/dev/null", "w");
	size_t w, v, len, used, base;
	struct report *r;
	uint8_t *data;
	int err;

	if (!ASSERT_OK_PTR(null, "/dev/null"))
		return;
	for (w = 0; w < sizeof(wants) / sizeof(wants[0]) + 1; w++) {
		data = w < sizeof(wants) / sizeof(wants[0]) ? bomb("pairs", wants[w], &len) : recording(3000, &len);
		r = data ? report__open_mem(data, len, errbuf, sizeof(errbuf)) : NULL;
		if (!ASSERT_OK_PTR(r, "the pairs file or the recording read")) {
			free(data);
			break;
		}
		for (v = 0; v < 3; v++) {
			base = live;
			peak = live;
			err = v == 0 ? report_view__table(null, r, NULL) :
			      v == 1 ? report_view__folded(null, r, NULL) : report_flame__fprint(null, r, NULL, NULL);
			used = peak - base;
			if (!ASSERT_TRUE(err == 0 || (err == -E2BIG && w < 4), "a view works, or refuses a bomb") ||
			    !ASSERT_TRUE(used <= VIEW_PER_VISIT * agg__visits_max(r), "bytes allocated for a view"))
				printf("     %s of %zu bytes, view %zu: %d, %zu bytes allocated, cap %" PRIu64 " frames\n",
				       w < 4 ? "pairs" : "recording", len, v, err, used, agg__visits_max(r));
		}
		report__free(r);
		free(data);
	}
	fclose(null);
}

int main(void)
{
	__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	RUN_TEST(test_bombs);
	RUN_TEST(test_recording);
	RUN_TEST(test_merge);
	RUN_TEST(test_views);
	return TEST_EXIT();
}
