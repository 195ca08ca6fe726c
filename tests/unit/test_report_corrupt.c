// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report reader against damaged input: truncation at every byte,
 * flipped bytes everywhere, random bytes, crafted records that break one
 * rule each, and decompression bombs.  Crafted files are built here with
 * the format helpers, so these tests follow docs/FORMAT.md, not the writer.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>
#include <zstd.h>

#include "test.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "base/util.h"

TEST_SUITE("report_corrupt");

#include "report_fixture.h"
#include "report_craft.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	char *buf = NULL;

	if (!ASSERT_OK(read_file_capped(path, 1 << 26, &buf, len), "read file"))
		return NULL;
	return (uint8_t *)buf;
}

static void test_truncation(void)
{
	char path[PATH_MAX];
	struct report *r;
	uint8_t *buf, *z;
	size_t len, cut, b;

	tmp_path(path, sizeof(path), "trunc");
	if (!fx_write(path, 300, 50))
		return;
	buf = slurp(path, &len);
	if (!buf)
		goto out;
	ASSERT_EQ(fx.nr_bounds, (size_t)7, "header block + 6 data blocks");
	/* Every prefix: what a SIGKILL at any moment of the write could leave. */
	for (cut = 0, b = 0; cut <= len; cut++) {
		bool ok;

		while (b + 1 < fx.nr_bounds && fx.bounds[b + 1] <= cut)
			b++;
		r = report__open_mem(buf, cut, errbuf, sizeof(errbuf));
		if (cut < fx.bounds[0]) {
			ok = ASSERT_NULL(r, "cut before the header block") &&
			     ASSERT_EQ(errno, EINVAL, "errno") &&
			     ASSERT_TRUE(strstr(errbuf, "offset"), errbuf);
		} else if (!(ok = ASSERT_OK_PTR(r, errbuf))) {
			printf("     at cut %zu\n", cut);
		} else {
			size_t want = cut == len ? 300 : fx.bound_samples[b];

			ok = ASSERT_EQ(report__nr_samples(r), want, "samples up to the last whole block") &&
			     ASSERT_EQ(report__header(r)->complete, cut == len, "complete only when whole");
			if (ok && (cut == fx.bounds[b] || cut == len) && b > 0)
				fx_check(r, want, cut == len);
		}
		report__free(r);
		if (!ok || test__failed_now)
			break;
	}
	/* A zero-filled tail after a block boundary is truncation too. */
	z = calloc(1, fx.bounds[3] + 4096);
	if (ASSERT_OK_PTR(z, "calloc")) {
		memcpy(z, buf, fx.bounds[3]);
		r = report__open_mem(z, fx.bounds[3] + 4096, errbuf, sizeof(errbuf));
		if (ASSERT_OK_PTR(r, errbuf))
			ASSERT_EQ(report__nr_samples(r), fx.bound_samples[3], "zero tail");
		report__free(r);
		free(z);
	}
	/* And from a file, cut in the middle of a block. */
	if (ASSERT_OK(truncate(path, (off_t)(fx.bounds[4] + 10)), "truncate")) {
		r = report__open(path, errbuf, sizeof(errbuf));
		if (ASSERT_OK_PTR(r, errbuf)) {
			ASSERT_FALSE(report__header(r)->complete, "complete");
			ASSERT_EQ(report__nr_samples(r), fx.bound_samples[4], "samples");
		}
		report__free(r);
	}
	free(buf);
out:
	unlink(path);
}

static bool same_report(const struct report *a, const struct report *b)
{
	const struct rpt_header *ha = report__header(a), *hb = report__header(b);
	uint32_t i, na, nb;

	if (strcmp(ha->hostname, hb->hostname) || strcmp(ha->release, hb->release) ||
	    strcmp(ha->boot_id, hb->boot_id) || strcmp(ha->event, hb->event) ||
	    strcmp(ha->target, hb->target) || ha->text_addr != hb->text_addr || ha->freq != hb->freq ||
	    ha->flags != hb->flags || ha->nr_cpus != hb->nr_cpus ||
	    ha->start_wall_ns != hb->start_wall_ns || ha->start_mono_ns != hb->start_mono_ns ||
	    ha->end_wall_ns != hb->end_wall_ns || ha->samples != hb->samples ||
	    ha->lost_samples != hb->lost_samples || ha->lost_events != hb->lost_events ||
	    ha->nr_procs != hb->nr_procs || ha->complete != hb->complete ||
	    report__nr_modules(a) != report__nr_modules(b) || report__nr_frames(a) != report__nr_frames(b) ||
	    report__nr_samples(a) != report__nr_samples(b))
		return false;
	for (i = 0; i < report__nr_modules(a); i++) {
		const struct rpt_module *x = report__module(a, i), *y = report__module(b, i);

		if (x->kind != y->kind || strcmp(x->path, y->path) || x->build_id_len != y->build_id_len ||
		    memcmp(x->build_id, y->build_id, x->build_id_len) || x->dev != y->dev || x->ino != y->ino)
			return false;
	}
	for (i = 0; i < report__nr_frames(a); i++) {
		const struct rpt_frame *x = report__frame(a, i), *y = report__frame(b, i);

		if (x->kind != y->kind || x->module != y->module || x->offset != y->offset ||
		    x->addr != y->addr || !same_str(x->sym, y->sym) || x->sym_off != y->sym_off ||
		    x->reason != y->reason)
			return false;
	}
	for (i = 0; report__stack(a, i, &na); i++) {
		const uint32_t *x = report__stack(a, i, &na), *y = report__stack(b, i, &nb);

		if (!y || na != nb || (na && memcmp(x, y, na * sizeof(*x))))
			return false;
	}
	if (report__stack(b, i, &nb))
		return false;
	for (i = 0; i < report__nr_samples(a); i++) {
		const struct rpt_sample *x = report__sample(a, i), *y = report__sample(b, i);

		if (x->time != y->time || x->pid != y->pid || x->tid != y->tid || x->cpu != y->cpu ||
		    x->cgroup != y->cgroup || strcmp(x->comm, y->comm) || x->stack != y->stack)
			return false;
	}
	return true;
}

/* Flip bytes everywhere: headers must be refused, and nothing may read back different. */
static void test_flips(void)
{
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	size_t len, pos, off, nr_detected = 0, nr_tries = 0;
	char path[PATH_MAX];
	struct report *orig, *r;
	uint8_t *buf, *is_hdr;
	unsigned int k;

	tmp_path(path, sizeof(path), "flip");
	if (!fx_write(path, 120, 40))
		return;
	buf = slurp(path, &len);
	unlink(path);
	if (!buf)
		return;
	is_hdr = calloc(1, len);
	orig = report__open_mem(buf, len, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(is_hdr, "calloc") || !ASSERT_OK_PTR(orig, errbuf))
		goto out;
	memset(is_hdr, 1, RPT_FILE_HDR_LEN);
	for (off = RPT_FILE_HDR_LEN; off + RPT_BLOCK_HDR_LEN <= len;
	     off += RPT_BLOCK_HDR_LEN + rpt_get_le32(buf + off + 4))
		memset(is_hdr + off, 1, RPT_BLOCK_HDR_LEN);
	ASSERT_EQ(off, len, "blocks tile the file");
	for (pos = 0; pos < len && !test__failed_now; pos++) {
		for (k = 0; k < sizeof(masks); k++) {
			buf[pos] ^= masks[k];
			errbuf[0] = '\0';
			r = report__open_mem(buf, len, errbuf, sizeof(errbuf));
			buf[pos] ^= masks[k];
			nr_tries++;
			if (!r) {
				nr_detected++;
				ASSERT_EQ(errno, EINVAL, "errno");
				ASSERT_TRUE(strstr(errbuf, "offset"), errbuf);
			} else {
				if (is_hdr[pos])
					ASSERT_NULL(r, "a flipped header byte is refused");
				ASSERT_TRUE(same_report(orig, r), "an accepted flip reads back the same");
			}
			report__free(r);
			if (test__failed_now) {
				printf("     at byte %zu, mask 0x%02x\n", pos, masks[k]);
				break;
			}
		}
	}
	printf("     %s/%s: %zu of %zu flips refused, the rest read back identical\n",
	       test__suite, test__name, nr_detected, nr_tries);
out:
	report__free(orig);
	free(is_hdr);
	free(buf);
}

static void test_random(void)
{
	uint8_t buf[2048];
	size_t i, j, len;
	struct report *r;

	for (i = 0; i < 3000 && !test__failed_now; i++) {
		len = rng() % sizeof(buf);
		for (j = 0; j < len; j++)
			buf[j] = (uint8_t)rng();
		/* Two thirds get a valid file header, so the block checks are reached. */
		if (i % 3 && len >= RPT_FILE_HDR_LEN) {
			memcpy(buf, RPT_FILE_MAGIC, RPT_MAGIC_LEN);
			rpt_put_le32(buf + 8, RPT_VERSION);
			rpt_put_le32(buf + 12, 0);
		}
		errbuf[0] = '\0';
		r = report__open_mem(buf, len, errbuf, sizeof(errbuf));
		ASSERT_NULL(r, "random bytes are refused");
		ASSERT_EQ(errno, EINVAL, "errno");
		ASSERT_TRUE(strstr(errbuf, "offset"), errbuf);
		report__free(r);
	}
}

/* Expect @c to be refused with a message holding "offset" and @what; frees @c. */
static void expect_bad(struct craft *c, const char *what)
{
	struct report *r;

	errbuf[0] = '\0';
	r = report__open_mem(c->file.data, c->file.len, errbuf, sizeof(errbuf));
	if (ASSERT_NULL(r, what) && ASSERT_EQ(errno, EINVAL, what)) {
		ASSERT_TRUE(strstr(errbuf, "offset"), errbuf);
		if (!strstr(errbuf, what))
			test__fail_msg(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", errbuf, what);
	}
	report__free(r);
	craft_free(c);
}

static void test_crafted(void)
{
	static const uint8_t nul_str[] = { 'a', 0, 'b' }, long_host[] = { 65 };
	struct craft c;
	struct report *r;
	size_t i;

	craft_begin(&c);
	expect_bad(&c, "ends before its header");

	craft_begin(&c);
	c.file.len = 0;
	expect_bad(&c, "empty file");

	craft_begin(&c);
	c.file.data[3] ^= 0x20;
	expect_bad(&c, "bad magic");

	craft_begin(&c);
	rpt_put_le32(c.file.data + 8, RPT_VERSION + 1);
	expect_bad(&c, "unsupported version 3");

	craft_begin(&c);
	rpt_put_le32(c.file.data + 8, 0);
	expect_bad(&c, "unsupported version 0");

	craft_begin(&c);
	rpt_put_le32(c.file.data + 12, 1);
	expect_bad(&c, "feature flags");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_STACK, 2, 1, 0);
	craft_block(&c);
	expect_bad(&c, "frame 0 out of range (0 frames)");

	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_recv(&c, RPT_REC_SAMPLE, 7, 0, 1, 0, 0, 0, 0, 5);
	craft_block(&c);
	expect_bad(&c, "stack 5 out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_STACK, 1, 0);
	craft_recv(&c, RPT_REC_SAMPLE, 7, 0, 1, 0, 0, 0, 9, 0);
	craft_block(&c);
	expect_bad(&c, "comm string 9 out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_FRAME, 7, 1, 4, 0, 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "module 3 out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_FRAME, 7, 1, 0, 0, 0, 3, 0, 0);
	craft_block(&c);
	expect_bad(&c, "symbol string 2 out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_FRAME, 7, 3, 0, 0, 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "unknown kind 3");

	/* Version 1 had no interpreter frames: kind 2 there is damage. */
	craft_begin(&c);
	rpt_put_le32(c.file.data + 8, 1);
	craft_header(&c);
	craft_recv(&c, RPT_REC_FRAME, 7, 2, 0, 0, 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "unknown kind 2");

	/* A source module is an interpreter frame's, and only theirs. */
	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, "x.py", 4);
	craft_recv(&c, RPT_REC_MODULE, 6, RPT_MOD_SOURCE, 0, 0, 0, 0, RPT_RT_PYTHON);
	craft_recv(&c, RPT_REC_FRAME, 7, RPT_FRAME_USER, 1, 3, 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "kind 1 in a module of kind 4");

	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_recv(&c, RPT_REC_MODULE, 5, RPT_MOD_FILE, 0, 0, 0, 0);
	craft_recv(&c, RPT_REC_FRAME, 7, RPT_FRAME_INTERP, 1, 3, 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "kind 2 in a module of kind 1");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_MODULE, 5, 1, 7, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "path string 7 out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, "", 0);
	craft_recv(&c, RPT_REC_MODULE, 5, 1, 0, 65, 0, 0);
	craft_block(&c);
	expect_bad(&c, "build-id of 65 bytes");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, 9, 1, 0);
	craft_block(&c);
	expect_bad(&c, "not optional");

	craft_begin(&c);
	craft_header(&c);
	rpt_buf__uv(&c.blk, RPT_REC_STRING);
	rpt_buf__uv(&c.blk, 100);
	rpt_buf__put(&c.blk, "abc", 3);
	craft_block(&c);
	expect_bad(&c, "100 bytes long, 3 left");

	craft_begin(&c);
	craft_header(&c);
	rpt_buf__put(&c.blk, "\x82\x00\x00", 3);	/* type 2 in two bytes: not the shortest form */
	craft_block(&c);
	expect_bad(&c, "malformed type or length");

	craft_begin(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_header(&c);
	craft_block(&c);
	expect_bad(&c, "the first record must be HEADER");

	craft_begin(&c);
	craft_header(&c);
	craft_header(&c);
	craft_block(&c);
	expect_bad(&c, "a second one");

	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, nul_str, sizeof(nul_str));
	craft_block(&c);
	expect_bad(&c, "NUL byte inside");

	craft_begin(&c);
	craft_rec(&c, RPT_REC_HEADER, long_host, sizeof(long_host));
	craft_block(&c);
	expect_bad(&c, "HEADER record: malformed field");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_STACK, 2, 1000000000, 0);
	craft_block(&c);
	expect_bad(&c, "1000000000 frames in 1 bytes");

	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_recv(&c, RPT_REC_STACK, 1, 0);
	craft_recv(&c, RPT_REC_SAMPLE, 7, 0, 5, rpt_zz_encode(-6), 0, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "tid out of range");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 5, 0, 5, 0, 0, 0);
	craft_block(&c);
	expect_bad(&c, "counts 5 samples, the file holds 0");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 5, 0, 0, 0, 0, 0);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_block(&c);
	expect_bad(&c, "after the END record");

	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 5, 0, 0, 0, 0, 0);
	craft_block(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_block(&c);
	expect_bad(&c, "bytes after the END record");

	craft_begin(&c);
	craft_header(&c);
	craft_block_adj(&c, 1);
	expect_bad(&c, "zstd frame claims 13 bytes, the block header 14");

	/* Two frames in one block. */
	craft_begin(&c);
	craft_header(&c);
	craft_block(&c);
	craft_rec(&c, RPT_REC_STRING, "x", 1);
	craft_block(&c);
	{
		size_t first = RPT_FILE_HDR_LEN, second = first + RPT_BLOCK_HDR_LEN +
						       rpt_get_le32(c.file.data + first + 4);
		uint8_t *h = c.file.data + first;

		/* Merge: the first block's header now covers both frames. */
		memmove(c.file.data + second, c.file.data + second + RPT_BLOCK_HDR_LEN,
			c.file.len - second - RPT_BLOCK_HDR_LEN);
		c.file.len -= RPT_BLOCK_HDR_LEN;
		rpt_block_hdr_fill(h, (uint32_t)(c.file.len - first - RPT_BLOCK_HDR_LEN),
				   rpt_get_le32(h + 8));
	}
	expect_bad(&c, "does not fill");

	/* A frame without its checksum: damage inside could go unseen. */
	craft_begin(&c);
	craft_header(&c);
	{
		uint8_t frame[256];
		size_t n;

		n = ZSTD_compress(frame, sizeof(frame), c.blk.data, c.blk.len, 3);
		if (ASSERT_FALSE(ZSTD_isError(n), "ZSTD_compress")) {
			uint8_t hdr[RPT_BLOCK_HDR_LEN];

			rpt_block_hdr_fill(hdr, (uint32_t)n, (uint32_t)c.blk.len);
			rpt_buf__put(&c.file, hdr, sizeof(hdr));
			rpt_buf__put(&c.file, frame, n);
		}
	}
	expect_bad(&c, "no checksum");

	/* What later minor revisions may add: optional records, fields after the known ones. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_OPTIONAL + 6, 3, 1, 2, 3);
	craft_rec(&c, RPT_REC_STRING, "comm", 4);
	craft_recv(&c, RPT_REC_STACK, 2, 0, 42);
	craft_recv(&c, RPT_REC_SAMPLE, 8, 20, 7, 2, 1, 9, 0, 0, 77);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		const struct rpt_sample *s = report__sample(r, 0);

		ASSERT_FALSE(report__header(r)->complete, "no END: truncated");
		if (ASSERT_OK_PTR(s, "sample")) {
			ASSERT_EQ(s->time, (uint64_t)10, "time");
			ASSERT_EQ(s->tid, (uint32_t)8, "tid");
			ASSERT_EQ(s->cgroup, (uint64_t)9, "cgroup");
			ASSERT_STREQ(s->comm, "comm", "comm");
		}
	}
	report__free(r);
	craft_free(&c);

	/* Block headers that claim too much, with a valid check. */
	for (i = 0; i < 2; i++) {
		uint8_t hdr[RPT_BLOCK_HDR_LEN];

		craft_begin(&c);
		rpt_block_hdr_fill(hdr, i ? 64 : UINT32_MAX, i ? UINT32_MAX : 64);
		rpt_buf__put(&c.file, hdr, sizeof(hdr));
		rpt_buf__put(&c.file, long_sym, 64);
		expect_bad(&c, i ? "offset 16: block claims 4.0 GiB uncompressed (cap 64 MiB)" :
				   "offset 16: block claims 4.0 GiB compressed (cap 64 MiB)");
	}
}

/* Decompression bombs: a frame that claims a lot, and many small frames that add up. */
/* END's fields appended later: absent in older files, skipped past when newer. */
static void test_end_fields(void)
{
	const struct rpt_header *h;
	struct report *r;
	struct craft c;

	/* An older writer's END: five fields, the later ones read as 0. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 5, 7, 0, 1, 2, 3);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		h = report__header(r);
		ASSERT_TRUE(h->complete, "complete");
		ASSERT_EQ(h->nr_procs, 3ULL, "nr_procs");
		ASSERT_EQ(h->idle + h->lost_children + h->missed_vma_busy + h->missed_syscalls +
			  h->bad_records, 0ULL, "later fields absent: 0");
	}
	report__free(r);
	craft_free(&c);

	/* Some of them: those present are read. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 7, 7, 0, 1, 2, 3, 40, 41);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		h = report__header(r);
		ASSERT_EQ(h->idle, 40ULL, "idle");
		ASSERT_EQ(h->lost_children, 41ULL, "lost_children");
		ASSERT_EQ(h->missed_vma_busy, 0ULL, "missed_vma_busy absent");
	}
	report__free(r);
	craft_free(&c);

	/* A newer writer's: one more field than this reader knows, skipped. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 11, 7, 0, 1, 2, 3, 40, 41, 42, 43, 44, 99);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		h = report__header(r);
		ASSERT_EQ(h->bad_records, 44ULL, "the last known field");
	}
	report__free(r);
	craft_free(&c);

	/* The unwind fields: call graph, counted end reasons, counted table counters. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 23, 7, 0, 1, 2, 3, 40, 41, 42, 43, 44,
		   2, 3, 0, 500, 6, 6, 10, 9, 1, 0, 20000, 2 << 20, 77);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		h = report__header(r);
		ASSERT_EQ(h->call_graph, (uint32_t)RPT_CG_DWARF, "call graph");
		ASSERT_EQ(h->uend[1], 500ULL, "end reason 1 (root)");
		ASSERT_EQ(h->uend[2], 6ULL, "end reason 2");
		ASSERT_EQ(h->uend[3], 0ULL, "past the count: 0");
		ASSERT_EQ(h->unw.tables, 10ULL, "tables");
		ASSERT_EQ(h->unw.bytes, 2ULL << 20, "table bytes");
		ASSERT_EQ(h->unw.build_ns, 0ULL, "past the count: 0");
		ASSERT_EQ(h->unw.rows, 20000ULL, "rows (a trailing unknown field after them skipped)");
	}
	report__free(r);
	craft_free(&c);

	/* A count no writer makes is damage. */
	craft_begin(&c);
	craft_header(&c);
	craft_recv(&c, RPT_REC_END, 12, 7, 0, 1, 2, 3, 40, 41, 42, 43, 44, 2, 5000);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	ASSERT_NULL(r, "an end-reason count of 5000");
	report__free(r);
	craft_free(&c);

	/* A later field cut in the middle of its varint is damage. */
	craft_begin(&c);
	craft_header(&c);
	craft_rec(&c, RPT_REC_END, "\x07\x00\x01\x02\x03\x80", 6);
	craft_block(&c);
	expect_bad(&c, "END record: malformed field");
}

/*
 * HEADER's kfeatures, appended later (issue 24): absent from an older
 * writer's file, it reads as empty; present, as written; longer than its
 * field, the file is refused.
 */
/* Expect a file of HEADER @payload (@n bytes) alone to read with kfeatures @want. */
static void expect_kfeatures(const uint8_t *payload, size_t n, const char *want)
{
	struct report *r;
	struct craft c;

	craft_begin(&c);
	craft_rec(&c, RPT_REC_HEADER, payload, n);
	craft_block(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf))
		ASSERT_STREQ(report__header(r)->kfeatures, want, "kfeatures");
	report__free(r);
	craft_free(&c);
}

static void test_header_kfeatures(void)
{
	static const uint8_t older[11];		/* five empty strings, six zero numbers */
	static const uint8_t with[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 'y', 'e', 's' };
	uint8_t too_long[11 + 2 + 200] = { 0 };
	struct craft c;

	expect_kfeatures(older, sizeof(older), "");
	expect_kfeatures(with, sizeof(with), "yes");
	/* 200 bytes claimed (varint 0xc8 0x01) where the field holds 127. */
	too_long[11] = 0xc8;
	too_long[12] = 0x01;
	memset(too_long + 13, 'a', 200);
	craft_begin(&c);
	craft_rec(&c, RPT_REC_HEADER, too_long, sizeof(too_long));
	craft_block(&c);
	expect_bad(&c, "HEADER");
}

static void test_bombs(void)
{
	const size_t big = RPT_BLOCK_MAX + (1 << 20), fill = 40u << 20;
	uint8_t *zeros, *frame = NULL;
	size_t n, bound = ZSTD_compressBound(big), i;
	uint8_t hdr[RPT_BLOCK_HDR_LEN];
	struct craft c;

	zeros = calloc(1, big);
	if (ASSERT_OK_PTR(zeros, "calloc"))
		frame = malloc(bound);
	if (!ASSERT_OK_PTR(frame, "malloc"))
		goto out;
	n = ZSTD_compress(frame, bound, zeros, big, 1);
	if (!ASSERT_FALSE(ZSTD_isError(n), "ZSTD_compress"))
		goto out;

	/* The block header tells the truth: refused on the cap before any work. */
	craft_begin(&c);
	rpt_block_hdr_fill(hdr, (uint32_t)n, (uint32_t)big);
	rpt_buf__put(&c.file, hdr, sizeof(hdr));
	rpt_buf__put(&c.file, frame, n);
	expect_bad(&c, "uncompressed (cap 64 MiB)");

	/* The block header lies small: the frame's own claim gives it away. */
	craft_begin(&c);
	rpt_block_hdr_fill(hdr, (uint32_t)n, 1000);
	rpt_buf__put(&c.file, hdr, sizeof(hdr));
	rpt_buf__put(&c.file, frame, n);
	expect_bad(&c, "zstd frame claims 68157440 bytes, the block header 1000");

	/*
	 * Valid blocks of empty optional records (2 bytes each, compressing
	 * to almost nothing): the total, not each block, hits the ratio cap.
	 */
	craft_begin(&c);
	for (i = 0; i < 2; i++) {
		if (!i)
			craft_header(&c);
		if (!ASSERT_OK(rpt_buf__reserve(&c.blk, fill), "reserve"))
			break;
		while (c.blk.len + 2 <= fill) {
			c.blk.data[c.blk.len++] = 127;	/* an optional type no reader knows */
			c.blk.data[c.blk.len++] = 0;
		}
		craft_block(&c);
	}
	ASSERT_TRUE(c.file.len * RPT_RATIO_MAX < 2 * fill, "the crafted file is small");
	expect_bad(&c, "of records from a");
out:
	free(frame);
	free(zeros);
}

int main(void)
{
	fx_init();
	RUN_TEST(test_truncation);
	RUN_TEST(test_flips);
	RUN_TEST(test_random);
	RUN_TEST(test_crafted);
	RUN_TEST(test_end_fields);
	RUN_TEST(test_header_kfeatures);
	RUN_TEST(test_bombs);
	return TEST_EXIT();
}
