// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Older recordings still read (issue 27 bumped the format to version 2):
 * a version-1 file built record by record as the version-1 writer wrote
 * one (docs/FORMAT.md: no interpreter frames, no runtime in MODULE
 * records, an END that stops after the debuginfod counters) reads whole,
 * and every view shows it as before; the writer now writes version 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "test.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "view/report_view.h"

TEST_SUITE("report_v1");

#include "report_craft.h"
#include "view_render.h"

static char errbuf[512];

static void str_rec(struct craft *c, const char *s)
{
	craft_rec(c, RPT_REC_STRING, s, strlen(s));
}

/*
 * One sample of "bash": do_syscall_64 in the kernel over memcpy in libc,
 * as version 1 wrote it.
 */
static void craft_v1(struct craft *c)
{
	craft_begin_v(c, 1);
	craft_header(c);
	str_rec(c, "/usr/lib/x86_64-linux-gnu/libc.so.6");	/* 0 */
	str_rec(c, "memcpy");					/* 1 */
	str_rec(c, "bash");					/* 2 */
	str_rec(c, "do_syscall_64");				/* 3 */
	str_rec(c, "[kernel.kallsyms]");			/* 4 */
	craft_recv(c, RPT_REC_MODULE, 5, RPT_MOD_FILE, 0, 0, 8, 99);
	craft_recv(c, RPT_REC_MODULE, 5, RPT_MOD_KERNEL, 4, 0, 0, 0);
	craft_recv(c, RPT_REC_FRAME, 7, RPT_FRAME_USER, 1, 0x1234,
		   rpt_zz_encode(0x7f0000000000), 2, 4, RPT_OK);
	craft_recv(c, RPT_REC_FRAME, 7, RPT_FRAME_KERNEL, 2, 0xffffffff81000100ull, 0, 4, 0x10, RPT_OK);
	craft_recv(c, RPT_REC_STACK, 3, 2, 1, 0);
	craft_recv(c, RPT_REC_SAMPLE, 7, rpt_zz_encode(5), 42, 0, 1, 0, 2, 0);
	/* END through debuginfod's counters: version 1's last field. */
	craft_recv(c, RPT_REC_END, 18, 7, 1, 0, 0, 1, 0, 0, 0, 0, 0, RPT_CG_DWARF, 0, 0, 0, 0, 2, 3, 1);
	craft_block(c);
}

static void test_reads_version1(void)
{
	const struct rpt_header *h;
	const struct rpt_frame *f;
	struct report *r;
	struct craft c;
	char *out;

	craft_v1(&c);
	r = report__open_mem(c.file.data, c.file.len, errbuf, sizeof(errbuf));
	craft_free(&c);
	if (!ASSERT_OK_PTR(r, errbuf))
		return;
	h = report__header(r);
	ASSERT_TRUE(h->complete, "complete");
	ASSERT_EQ(h->samples, 1ULL, "samples");
	ASSERT_EQ(h->call_graph, (uint32_t)RPT_CG_DWARF, "call graph");
	ASSERT_EQ(h->dinfod[0], 3ULL, "the last field version 1 wrote");
	for (size_t i = 0; i < RPT_INTERP_MAX; i++)
		ASSERT_EQ(h->interp[i], 0ULL, "no interpreter counters in version 1");
	ASSERT_EQ(report__module(r, 0)->runtime, (uint32_t)RPT_RT_NONE, "modules have no runtime");
	f = report__frame(r, 0);
	if (ASSERT_OK_PTR(f, "frame 0")) {
		ASSERT_STREQ(f->sym, "memcpy", "user frame");
		ASSERT_EQ(f->addr, 0x7f0000001234ULL, "its address");
	}
	out = render(report_view__folded, r, NULL);
	ASSERT_STREQ(out, "bash;memcpy;do_syscall_64_[k] 1\n", "folded as before");
	free(out);
	report__free(r);
}

static void test_writes_version2(void)
{
	char path[] = "/tmp/test_report_v1.XXXXXX";
	struct rpt_header h = { .event = "cpu-clock" };
	struct report_writer *w;
	uint8_t fh[RPT_FILE_HDR_LEN];
	struct report *r;
	FILE *f;
	int fd = mkstemp(path);

	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		return;
	close(fd);
	w = report_writer__open(path, &h);
	if (ASSERT_OK_PTR(w, "writer"))
		ASSERT_OK(report_writer__close(w, &h), "close");
	f = fopen(path, "rb");
	if (ASSERT_OK_PTR(f, "fopen")) {
		ASSERT_EQ(fread(fh, 1, sizeof(fh), f), sizeof(fh), "file header");
		ASSERT_EQ(rpt_get_le32(fh + 8), 2u, "version 2");
		fclose(f);
	}
	r = report__open(path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	report__free(r);
	unlink(path);
}

int main(void)
{
	RUN_TEST(test_reads_version1);
	RUN_TEST(test_writes_version2);
	return TEST_EXIT();
}
