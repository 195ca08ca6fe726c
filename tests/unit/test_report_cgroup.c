// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CGROUP record: written once per cgroup id at its first use, read
 * back by id; an old file (none) reads with no paths; crafted records that
 * break one rule each are refused with their offset; an unknown optional
 * record is still skipped.
 */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <zstd.h>

#include "test.h"
#include "report/report.h"
#include "report/report_fmt.h"

TEST_SUITE("report_cgroup");

static char errbuf[512];
static const struct rpt_header hdr = { .hostname = "h", .event = "cpu-clock", .freq = 99 };

static void tmp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("BPFSYM_TEST_TMP");

	snprintf(buf, len, "%s/test_report_cgroup.%d.%s", dir && *dir ? dir : "/tmp", (int)getpid(), name);
}

/* A file with @n samples in cgroups 1000 + i % 3, paths declared for 1000 and 1001 only. */
static struct report *write_read(const char *name, int n, bool declare)
{
	static const char *const paths[] = { "/system.slice/docker-a.scope", "/user.slice/session-3.scope" };
	struct report_writer *w;
	struct report *r = NULL;
	char path[PATH_MAX];
	uint32_t stack;
	int i, err = 0;

	tmp_path(path, sizeof(path), name);
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "writer"))
		return NULL;
	err = report_writer__stack(w, NULL, 0, &stack);
	for (i = 0; i < n && !err; i++) {
		uint64_t cg = 1000 + (uint64_t)(i % 3);

		if (declare && cg < 1002)
			err = report_writer__cgroup(w, cg, paths[cg - 1000]);
		err = err ?: report_writer__sample(w, &(struct rpt_sample){ .time = (uint64_t)i, .pid = 7,
				.tid = 7, .cgroup = cg, .comm = "x", .stack = stack });
		/* A flush between: the record is not repeated in the next block. */
		if (i == n / 2)
			err = err ?: report_writer__flush(w);
	}
	if (ASSERT_OK(err, "write") && ASSERT_OK(report_writer__close(w, &hdr), "close"))
		r = report__open(path, errbuf, sizeof(errbuf));
	else if (err)
		report_writer__abort(w);
	unlink(path);
	return r;
}

static void test_round_trip(void)
{
	struct report *r = write_read("rt", 30, true);
	struct report_writer *w;
	char path[PATH_MAX];

	if (!ASSERT_OK_PTR(r, errbuf))
		return;
	ASSERT_EQ(report__nr_cgroups(r), (size_t)2, "two CGROUP records, once each");
	ASSERT_STREQ(report__cgroup_path(r, 1000), "/system.slice/docker-a.scope", "cgroup 1000");
	ASSERT_STREQ(report__cgroup_path(r, 1001), "/user.slice/session-3.scope", "cgroup 1001");
	ASSERT_NULL(report__cgroup_path(r, 1002), "an undeclared cgroup has no path");
	ASSERT_EQ(report__cgroup(r, 0)->id, (uint64_t)1000, "file order");
	ASSERT_NULL(report__cgroup(r, 2), "out of range");
	ASSERT_EQ(report__nr_samples(r), (size_t)30, "samples");
	report__free(r);
	/* What a file without the record (an older writer) reads as. */
	r = write_read("old", 9, false);
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_EQ(report__nr_cgroups(r), (size_t)0, "no CGROUP record");
		ASSERT_NULL(report__cgroup_path(r, 1000), "no path");
		ASSERT_EQ(report__sample(r, 0)->cgroup, (uint64_t)1000, "the sample keeps its id");
	}
	report__free(r);
	/* The writer refuses what the reader would. */
	tmp_path(path, sizeof(path), "refuse");
	w = report_writer__open(path, &hdr);
	if (ASSERT_OK_PTR(w, "writer")) {
		ASSERT_EQ(report_writer__cgroup(w, 0, "/a"), -EINVAL, "id 0");
		ASSERT_EQ(report_writer__cgroup(w, 5, "a"), -EINVAL, "relative path");
		ASSERT_EQ(report_writer__cgroup(w, 5, ""), -EINVAL, "empty path");
		ASSERT_EQ(report_writer__cgroup(w, 5, NULL), -EINVAL, "no path");
		ASSERT_OK(report_writer__cgroup(w, 5, "/a"), "a good one");
		ASSERT_OK(report_writer__cgroup(w, 5, "/b"), "again: a no-op");
		report_writer__abort(w);
	}
	unlink(path);
}

/* A file names at most RPT_CGROUP_MAX cgroups, as many as the reader takes; the rest stay bare ids. */
static void test_cgroup_cap(void)
{
	struct rpt_sample s = { .comm = "app", .pid = 1, .tid = 1 };
	struct report_writer *w;
	char path[PATH_MAX], cg[32];
	struct report *r;
	uint64_t id;
	int err = 0;

	tmp_path(path, sizeof(path), "cap");
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "writer"))
		return;
	ASSERT_OK(report_writer__stack(w, NULL, 0, &s.stack), "stack");
	for (id = 1; id <= RPT_CGROUP_MAX && !err; id++) {
		snprintf(cg, sizeof(cg), "/c%llu", (unsigned long long)id);
		err = report_writer__cgroup(w, id, cg);
	}
	ASSERT_OK(err, "RPT_CGROUP_MAX cgroups");
	ASSERT_EQ(report_writer__cgroup(w, id, "/one-too-many"), -E2BIG, "one more");
	ASSERT_OK(report_writer__cgroup(w, 1, "/c1"), "a known one: still a no-op");
	s.cgroup = id;
	ASSERT_OK(report_writer__sample(w, &s), "a sample of the unnamed one");
	ASSERT_OK(report_writer__close(w, &hdr), "close");
	r = report__open(path, errbuf, sizeof(errbuf));
	if (ASSERT_OK_PTR(r, errbuf)) {
		ASSERT_EQ(report__nr_cgroups(r), (size_t)RPT_CGROUP_MAX, "every named cgroup");
		ASSERT_NULL(report__cgroup_path(r, id), "the one past the cap: a bare id");
		ASSERT_STREQ(report__cgroup_path(r, 7), "/c7", "a named one");
	}
	report__free(r);
	unlink(path);
}

/* A file of one block: the HEADER record, then @rec (@n bytes: type, length, payload). */
static struct report *open_crafted(const uint8_t *rec, size_t n)
{
	uint8_t hdr_rec[2 + 11] = { RPT_REC_HEADER, 11 };	/* five empty strings, six zeros */
	struct rpt_buf blk = {}, file = {};
	size_t bound, z;
	struct report *r = NULL;
	uint8_t fh[RPT_FILE_HDR_LEN];

	memcpy(fh, RPT_FILE_MAGIC, RPT_MAGIC_LEN);
	rpt_put_le32(fh + 8, RPT_VERSION);
	rpt_put_le32(fh + 12, 0);
	if (rpt_buf__put(&file, fh, sizeof(fh)) || rpt_buf__put(&blk, hdr_rec, sizeof(hdr_rec)) ||
	    rpt_buf__put(&blk, rec, n))
		goto out;
	bound = ZSTD_compressBound(blk.len);
	if (rpt_buf__reserve(&file, RPT_BLOCK_HDR_LEN + bound))
		goto out;
	{
		ZSTD_CCtx *cctx = ZSTD_createCCtx();

		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		z = ZSTD_compress2(cctx, file.data + file.len + RPT_BLOCK_HDR_LEN, bound, blk.data, blk.len);
		ZSTD_freeCCtx(cctx);
	}
	if (!ASSERT_FALSE(ZSTD_isError(z), "compress"))
		goto out;
	rpt_block_hdr_fill(file.data + file.len, (uint32_t)z, (uint32_t)blk.len);
	file.len += RPT_BLOCK_HDR_LEN + z;
	errbuf[0] = '\0';
	r = report__open_mem(file.data, file.len, errbuf, sizeof(errbuf));
out:
	rpt_buf__free(&blk);
	rpt_buf__free(&file);
	return r;
}

/* A CGROUP record (type, length, payload) of @id and the @n bytes of @path into @out; its length. */
static size_t cg_rec(uint8_t *out, uint64_t id, const char *path, size_t n)
{
	struct rpt_buf p = {};
	size_t len;

	rpt_buf__uv(&p, id);
	rpt_buf__uv(&p, n);
	rpt_buf__put(&p, path, n);
	len = rpt_uv_encode(out, RPT_REC_CGROUP);
	len += rpt_uv_encode(out + len, p.len);
	memcpy(out + len, p.data, p.len);
	len += p.len;
	rpt_buf__free(&p);
	return len;
}

static void expect_bad(const uint8_t *rec, size_t n, const char *what)
{
	struct report *r = open_crafted(rec, n);

	if (ASSERT_NULL(r, what) && ASSERT_EQ(errno, EINVAL, what)) {
		ASSERT_TRUE(strstr(errbuf, "offset"), errbuf);
		ASSERT_TRUE(strstr(errbuf, "CGROUP"), errbuf);
		if (!strstr(errbuf, what))
			test__fail_msg(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", errbuf, what);
	}
	report__free(r);
}

static void test_corrupt(void)
{
	static uint8_t rec[2 * (RPT_CGROUP_PATH_MAX + 64)];
	static char longp[RPT_CGROUP_PATH_MAX + 2];
	struct report *r;
	size_t n;

	n = cg_rec(rec, 42, "/a/b", 4);
	r = open_crafted(rec, n);
	if (ASSERT_OK_PTR(r, errbuf))
		ASSERT_STREQ(report__cgroup_path(r, 42), "/a/b", "a good record");
	report__free(r);

	n = cg_rec(rec, 0, "/a", 2);
	expect_bad(rec, n, "cgroup id 0");
	n = cg_rec(rec, 42, "a/b", 3);
	expect_bad(rec, n, "not absolute");
	n = cg_rec(rec, 42, "", 0);
	expect_bad(rec, n, "path empty");
	n = cg_rec(rec, 42, "/a\0b", 4);
	expect_bad(rec, n, "with a NUL");
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	n = cg_rec(rec, 42, longp, RPT_CGROUP_PATH_MAX + 1);
	expect_bad(rec, n, "too long");
	n = cg_rec(rec, 42, longp, RPT_CGROUP_PATH_MAX);
	r = open_crafted(rec, n);
	ASSERT_OK_PTR(r, "a path of exactly the cap");
	report__free(r);
	n = cg_rec(rec, 42, "/a", 2);
	n += cg_rec(rec + n, 42, "/b", 2);
	expect_bad(rec, n, "named twice");
	/* The path's length runs past the record. */
	n = cg_rec(rec, 42, "/abc", 4);
	rec[1] -= 2;
	expect_bad(rec, n - 2, "malformed field");
	/* A malformed id varint (not in its shortest form). */
	rec[0] = RPT_REC_CGROUP;
	rec[1] = 2;
	rec[2] = 0x80;
	rec[3] = 0x00;
	expect_bad(rec, 4, "malformed field");
	/* Fields a later writer appends after the path are skipped. */
	n = cg_rec(rec, 42, "/a", 2);
	rec[1] += 1;
	rec[n] = 7;
	r = open_crafted(rec, n + 1);
	if (ASSERT_OK_PTR(r, errbuf))
		ASSERT_STREQ(report__cgroup_path(r, 42), "/a", "an appended field");
	report__free(r);
	/* Other optional types are still skipped. */
	rec[0] = 127;	/* an optional type no reader knows */
	rec[1] = 1;
	rec[2] = 0;
	r = open_crafted(rec, 3);
	ASSERT_OK_PTR(r, "an unknown optional record");
	report__free(r);
}

int main(void)
{
	RUN_TEST(test_round_trip);
	RUN_TEST(test_corrupt);
	RUN_TEST(test_cgroup_cap);
	return TEST_EXIT();
}
