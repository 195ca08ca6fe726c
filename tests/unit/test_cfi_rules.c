// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi on synthetic files (cfi_fixture.h), each rule of the row format
 * with a case of its own:
 *
 *   rules      one FDE per case, its rows exactly (CFA on rsp/rbp, the
 *              PLT expression, signal frames, END, rbp slots, state
 *              stack, every advance, and what must be UNSUPPORTED)
 *   merge      overlapping FDEs, gaps, FDEs outside the code, the zero
 *              terminator, .debug_frame filling what .eh_frame leaves,
 *              .eh_frame found through .eh_frame_hdr
 *
 * The ways of lying are test_cfi_hostile.c's.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bpfsym.h"
#include "unwind/cfi.h"
#include "cfi_fixture.h"

TEST_SUITE("cfi_rules")

/* One FDE over [0x401000, 0x401000 + @len) with @insns under the CIE (@aug, @init): its rows. */
static void one_case(const char *what, const char *aug, const uint8_t *init, size_t ninit,
		     const uint8_t *insns, size_t n, uint32_t len, const struct want *w, size_t nw)
{
	struct fb f = { 0 };
	struct cfi_table *t;
	char msg[256];
	int ret;

	fde(&f, cie(&f, aug, init, ninit), TEXT_VA, len, insns, n);
	t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
	if (ASSERT_OK(ret, msg))
		rows_are(t, w, nw, what);
	cfi_table__free(t);
	free(f.b);
}

#define CASE(what, insns, len, ...) do {						\
	static const uint8_t i_[] = { insns };						\
	static const struct want w_[] = { __VA_ARGS__ };				\
	one_case(what, "zR", std_init, sizeof(std_init), i_, sizeof(i_), len, w_,	\
		 sizeof(w_) / sizeof(w_[0]));						\
} while (0)
#define CASE_CIE(what, aug, init, insns, len, ...) do {					\
	static const uint8_t c_[] = { init };						\
	static const uint8_t i_[] = { insns };						\
	static const struct want w_[] = { __VA_ARGS__ };				\
	one_case(what, aug, c_, sizeof(c_), i_, sizeof(i_), len, w_,			\
		 sizeof(w_) / sizeof(w_[0]));						\
} while (0)

static void test_rules(void)
{
	/* push rbp; mov rsp,rbp; ...; pop rbp; ret: the usual frame. */
	CASE("frame", L(0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x6c, 0x0c, 0x07, 0x08, 0xc6), 0x100,
	     W(0, R(CFA_SP, 8, 0, 0)), W(1, R(CFA_SP, 16, 1, 16)), W(4, R(CFA_FP, 16, 1, 16)),
	     W(0x30, R(CFA_SP, 8, 0, 0)), W(0x100, FP_END));
	/* An FDE without instructions: the CIE's rules. */
	CASE("no instructions", L(NOP), 0x10, W(0, R(CFA_SP, 8, 0, 0)), W(0x10, FP_END));
	/* The PLT expressions, lit11 and lit10. */
	CASE("plt", L(0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22), 0x20,
	     W(0, R(PLT, 11, 0, 0)), W(0x20, FP_END));
	CASE("plt.sec", L(0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22), 0x20,
	     W(0, R(PLT, 10, 0, 0)), W(0x20, FP_END));
	CASE("other expression", L(0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3c, 0x2a, 0x33, 0x24, 0x22),
	     0x20, W(0, UNSUP), W(0x20, FP_END));
	/* def_cfa_offset after an expression keeps the expression (as libgcc does). */
	CASE("offset after expression", L(0x0f, 2, 0x77, 0x10, 0x0e, 0x10), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("register after expression", L(0x0f, 2, 0x77, 0x10, 0x0d, 0x07), 0x10,
	     W(0, R(CFA_SP, 8, 0, 0)), W(0x10, FP_END));
	/* The outermost frame: return address undefined. */
	CASE("end", L(0x07, 0x10), 0x10, W(0, R(END, 0, 0, 0)), W(0x10, FP_END));
	CASE_CIE("end from the CIE", "zR", L(0x0c, 0x07, 0x08, 0x07, 0x10), L(0x41, 0x0e, 0x10), 0x10,
		 W(0, R(END, 0, 0, 0)), W(0x10, FP_END));
	/* A signal frame's CIE: every row, whatever the rules. */
	CASE_CIE("signal", "zRS", L(0x0c, 0x07, 0x08), L(0x41, 0x0f, 0x01, 0x11), 0x10,
		 W(0, R(SIGNAL, 0, 0, 0)), W(0x10, FP_END));
	/* No augmentation at all: absolute 8-byte addresses. */
	CASE_CIE("no augmentation", "", L(0x0c, 0x07, 0x08, 0x90, 0x01), L(0x41, 0x0e, 0x10), 0x10,
		 W(0, R(CFA_SP, 8, 0, 0)), W(1, R(CFA_SP, 16, 0, 0)), W(0x10, FP_END));
	/* CFA rules the format cannot hold. */
	CASE("cfa r12", L(0x0c, 0x0c, 0x08), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("cfa too far", L(0x0e, 0xa0, 0x9c, 0x01), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("cfa at the limit", L(0x0e, 0xff, 0x7f), 0x10, W(0, R(CFA_SP, 16383, 0, 0)), W(0x10, FP_END));
	CASE("cfa negative", L(0x12, 0x07, 0x01), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("def_cfa_sf", L(0x12, 0x06, 0x7e), 0x10, W(0, R(CFA_FP, 16, 0, 0)), W(0x10, FP_END));
	CASE("def_cfa_offset_sf", L(0x13, 0x7c), 0x10, W(0, R(CFA_SP, 32, 0, 0)), W(0x10, FP_END));
	/* Return address elsewhere than CFA - 8. */
	CASE("ra at cfa-16", L(0x90, 0x02), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("ra in a register", L(0x09, 0x10, 0x03), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("ra same value", L(0x08, 0x10), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE_CIE("ra never set", "zR", L(0x0c, 0x07, 0x08), L(NOP), 0x10, W(0, UNSUP), W(0x10, FP_END));
	/* rbp: saved below the CFA, or not at all; anything else is unsupported. */
	CASE("rbp offset_extended_sf", L(0x11, 0x06, 0x03), 0x10, W(0, R(CFA_SP, 8, 1, 24)), W(0x10, FP_END));
	CASE("rbp offset_extended", L(0x05, 0x06, 0x02), 0x10, W(0, R(CFA_SP, 8, 1, 16)), W(0x10, FP_END));
	CASE("rbp above the CFA", L(0x11, 0x06, 0x7e), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp negative_offset", L(0x2f, 0x06, 0x02), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp val_offset", L(0x14, 0x06, 0x02), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp val_offset_sf", L(0x15, 0x06, 0x7e), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp register", L(0x09, 0x06, 0x03), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp expression", L(0x10, 0x06, 0x01, 0x30), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp val_expression", L(0x16, 0x06, 0x01, 0x30), 0x10, W(0, UNSUP), W(0x10, FP_END));
	CASE("rbp same/undefined", L(0x86, 0x02, 0x41, 0x08, 0x06, 0x41, 0x86, 0x02, 0x41, 0x07, 0x06), 0x10,
	     W(0, R(CFA_SP, 8, 1, 16)), W(1, R(CFA_SP, 8, 0, 0)), W(2, R(CFA_SP, 8, 1, 16)),
	     W(3, R(CFA_SP, 8, 0, 0)), W(0x10, FP_END));
	CASE("rbp restore_extended", L(0x86, 0x02, 0x41, 0x06, 0x06), 0x10,
	     W(0, R(CFA_SP, 8, 1, 16)), W(1, R(CFA_SP, 8, 0, 0)), W(0x10, FP_END));
	/* Other registers do not matter: rows merge. */
	CASE("rbx pushed", L(0x41, 0x83, 0x02, 0x41, 0x0e, 0x10), 0x10,
	     W(0, R(CFA_SP, 8, 0, 0)), W(2, R(CFA_SP, 16, 0, 0)), W(0x10, FP_END));
	/* remember_state / restore_state, nested. */
	CASE("state", L(0x41, 0x0a, 0x0e, 0x20, 0x41, 0x0a, 0x0e, 0x30, 0x41, 0x0b, 0x41, 0x0b), 0x10,
	     W(0, R(CFA_SP, 8, 0, 0)), W(1, R(CFA_SP, 32, 0, 0)), W(2, R(CFA_SP, 48, 0, 0)),
	     W(3, R(CFA_SP, 32, 0, 0)), W(4, R(CFA_SP, 8, 0, 0)), W(0x10, FP_END));
	/* Every advance; args_size and nop ignored. */
	CASE("advances", L(0x02, 0x02, 0x0e, 0x10, 0x03, 0x02, 0x00, 0x0e, 0x18, 0x04, 0x02, 0x00, 0x00, 0x00,
			   0x2e, 0x08, NOP, 0x0e, 0x20, 0x1d, 0x04, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x28), 0x20,
	     W(0, R(CFA_SP, 8, 0, 0)), W(2, R(CFA_SP, 16, 0, 0)), W(4, R(CFA_SP, 24, 0, 0)),
	     W(6, R(CFA_SP, 32, 0, 0)), W(10, R(CFA_SP, 40, 0, 0)), W(0x20, FP_END));
	/* set_loc, pcrel from the operand: 0 is the operand's own address, past the FDE. */
	CASE("set_loc", L(0x01, 0x00, 0x00, 0x00, 0x00, 0x0e, 0x10), 0x20,
	     W(0, R(CFA_SP, 8, 0, 0)), W(0x20, FP_END));
	/* Instructions past the end are not run. */
	CASE("past the end", L(0x48, 0x0e, 0x10, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 0x20), 0x08,
	     W(0, R(CFA_SP, 8, 0, 0)), W(8, FP_END));
}

/* An .eh_frame of the usual CIE and FDEs given as (start, len, cfa offset), in that order. */
static struct fb frames(const uint32_t (*spec)[3], size_t n)
{
	struct fb f = { 0 };
	size_t c = cie(&f, "zR", std_init, sizeof(std_init)), i;
	uint8_t insns[2];

	for (i = 0; i < n; i++) {
		insns[0] = 0x0e;
		insns[1] = (uint8_t)spec[i][2];
		fde(&f, c, TEXT_VA + spec[i][0], spec[i][1], insns, sizeof(insns));
	}
	return f;
}

static void merge_case(const char *what, const uint32_t (*spec)[3], size_t n, const struct want *w,
		       size_t nw)
{
	struct fb f = frames(spec, n);
	struct cfi_table *t;
	char msg[256];
	int ret;

	t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
	if (ASSERT_OK(ret, msg))
		rows_are(t, w, nw, what);
	cfi_table__free(t);
	free(f.b);
}

#define MERGE(what, spec, ...) do {						\
	static const uint32_t s_[][3] = { spec };				\
	static const struct want w_[] = { __VA_ARGS__ };			\
	merge_case(what, s_, sizeof(s_) / sizeof(s_[0]), w_, sizeof(w_) / sizeof(w_[0])); \
} while (0)
#define F(start, len, off)	{ start, len, off }

static void test_merge(void)
{
	MERGE("overlap: the earlier start keeps it", L(F(0x20, 0x60, 24), F(0, 0x40, 16)),
	      W(0, R(CFA_SP, 16, 0, 0)), W(0x40, R(CFA_SP, 24, 0, 0)), W(0x80, FP_END));
	MERGE("same start: the first in the section", L(F(0, 0x40, 16), F(0, 0x20, 24)),
	      W(0, R(CFA_SP, 16, 0, 0)), W(0x40, FP_END));
	MERGE("nested", L(F(0, 0x100, 16), F(0x10, 0x10, 24)), W(0, R(CFA_SP, 16, 0, 0)), W(0x100, FP_END));
	MERGE("gap", L(F(0, 0x10, 16), F(0x20, 0x10, 24)),
	      W(0, R(CFA_SP, 16, 0, 0)), W(0x10, FP_END), W(0x20, R(CFA_SP, 24, 0, 0)), W(0x30, FP_END));
	MERGE("padding under 16 bytes: covered by the rule before", L(F(0, 0x18, 16), F(0x20, 0x10, 24)),
	      W(0, R(CFA_SP, 16, 0, 0)), W(0x20, R(CFA_SP, 24, 0, 0)), W(0x30, FP_END));
	MERGE("adjacent and equal", L(F(0x10, 0x10, 16), F(0, 0x10, 16)),
	      W(0, R(CFA_SP, 16, 0, 0)), W(0x20, FP_END));
	MERGE("outside the code, empty", L(F(0x7ff000, 0x10, 16), F(0x10, 0, 16), F(0xfff000, 0x10, 24)));
	MERGE("past the segment: clipped", L(F(0x1fe000, 0x2000, 16)),
	      W(0x1fe000, R(CFA_SP, 16, 0, 0)), W(0x1ff000, FP_END));
}

/* The zero terminator ends .eh_frame; FDE and CIE statistics. */
static void test_terminator_stats(void)
{
	struct fb f = { 0 };
	struct cfi_table *t;
	uint8_t insns[] = { SP(16) };
	size_t c;
	char msg[256];
	int ret;

	c = cie(&f, "zR", std_init, sizeof(std_init));
	fde(&f, c, TEXT_VA, 0x10, insns, sizeof(insns));
	fde(&f, c, TEXT_VA + 0x1000000, 0x10, insns, sizeof(insns));
	put_u32(&f, 0);
	fde(&f, c, TEXT_VA + 0x20, 0x10, insns, sizeof(insns));
	t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
	if (ASSERT_OK(ret, msg)) {
		ASSERT_EQ(t->nr, (size_t)2, "rows: the FDE before the terminator");
		ASSERT_EQ(t->stats.cies, 1u, "CIEs");
		ASSERT_EQ(t->stats.fdes, 2u, "FDEs");
		ASSERT_EQ(t->stats.fdes_skipped, 1u, "FDEs skipped");
		ASSERT_EQ(t->stats.fde_starts, 1u, "FDE starts");
	}
	cfi_table__free(t);
	free(f.b);
}

/* No section headers: .eh_frame found through PT_GNU_EH_FRAME. */
static void test_eh_frame_hdr(void)
{
	static const uint32_t spec[][3] = { F(0, 0x10, 16), F(0x10, 0x10, 24) };
	static const struct want w[] = { W(0, R(CFA_SP, 16, 0, 0)), W(0x10, R(CFA_SP, 24, 0, 0)),
					 W(0x20, FP_END) };
	struct img_opts o = { .no_shdrs = true };
	struct fb f = frames(spec, 2);
	struct cfi_table *t;
	char msg[256];
	int ret;

	t = build(&f, &o, 0, &ret, msg, sizeof(msg));
	if (ASSERT_OK(ret, msg))
		rows_are(t, w, 3, "through .eh_frame_hdr");
	cfi_table__free(t);
	free(f.b);
}

/* @im into a new memfd; -1 (a FAIL) when it cannot. */
static int to_memfd(const struct img *im)
{
	int fd = memfd_create("test_cfi", MFD_CLOEXEC);

	if (!ASSERT_TRUE(fd >= 0, "memfd_create"))
		return -1;
	if (!ASSERT_EQ(pwrite(fd, im->b, im->len, 0), (ssize_t)im->len, "pwrite")) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A CIE of .debug_frame version 4 (address and segment selector sizes). */
static size_t cie_v4(struct fb *f)
{
	size_t off = f->n;

	put_u32(f, 0);
	put_u32(f, 0xffffffffu);
	put_u8(f, 4);
	put_u8(f, 0);
	put_u8(f, 8);
	put_u8(f, 0);
	put_uleb(f, 1);
	put_sleb(f, -8);
	put_uleb(f, 16);
	put(f, std_init, sizeof(std_init));
	patch_len(f, off);
	f->abs = true;
	f->z = false;
	return off;
}

/* The separate debug file's .debug_frame fills what .eh_frame leaves; .eh_frame wins. */
static void test_debug_file(void)
{
	static const uint32_t spec[][3] = { F(0, 0x40, 16) };
	static const uint8_t fp16[] = { 0x0c, 0x06, 0x10 }, sp32[] = { SP(32) };
	static const struct want w[] = {
		W(0, R(CFA_SP, 16, 0, 0)), W(0x40, R(CFA_FP, 16, 0, 0)), W(0x80, FP_END),
		W(0xc0, R(CFA_SP, 32, 0, 0)), W(0xd0, FP_END), W(0x100, R(CFA_SP, 8, 0, 0)), W(0x110, FP_END),
	};
	struct img_opts dopt = { .debug_frame = true };
	struct cfi_opts co = { .debug_fd = -1 };
	struct fb main_f = frames(spec, 1), dbg = { .debug = true };
	struct img mi = make_img(&main_f, NULL), di;
	struct cfi_table *t = NULL;
	int mfd, dfd = -1, ret;
	size_t c;
	char msg[256];

	c = cie(&dbg, "", std_init, sizeof(std_init));
	fde(&dbg, c, TEXT_VA + 0x20, 0x60, fp16, sizeof(fp16));
	fde(&dbg, c, TEXT_VA + 0xc0, 0x10, sp32, sizeof(sp32));
	c = cie_v4(&dbg);
	fde(&dbg, c, TEXT_VA + 0x100, 0x10, NULL, 0);
	di = make_img(&dbg, &dopt);
	mfd = to_memfd(&mi);
	if (mfd >= 0)
		dfd = to_memfd(&di);
	if (dfd >= 0) {
		co.debug_fd = dfd;
		ret = cfi_table__build_fd(mfd, &co, &t, msg, sizeof(msg));
		if (ASSERT_OK(ret, msg) && rows_are(t, w, sizeof(w) / sizeof(w[0]), "with the debug file"))
			ASSERT_EQ(t->stats.from_debug_frame, 3u, "FDEs from .debug_frame");
		cfi_table__free(t);
		/* Roles swapped: a file's own .debug_frame, a debug file without one. */
		co.debug_fd = mfd;
		ret = cfi_table__build_fd(dfd, &co, &t, msg, sizeof(msg));
		ASSERT_OK(ret, msg);
		cfi_table__free(t);
		/* A debug file that is not an ELF file is an error, not ignored. */
		if (ASSERT_EQ(ftruncate(dfd, 3), 0, "ftruncate")) {
			co.debug_fd = dfd;
			ret = cfi_table__build_fd(mfd, &co, &t, msg, sizeof(msg));
			ASSERT_EQ(ret, -ENOEXEC, "a truncated debug file");
			ASSERT_TRUE(strstr(msg, "debug file") != NULL, msg);
		}
	}
	if (mfd >= 0)
		close(mfd);
	if (dfd >= 0)
		close(dfd);
	free(mi.b);
	free(di.b);
	free(main_f.b);
	free(dbg.b);
}

int main(void)
{
	RUN_TEST(test_rules);
	RUN_TEST(test_merge);
	RUN_TEST(test_terminator_stats);
	RUN_TEST(test_eh_frame_hdr);
	RUN_TEST(test_debug_file);
	return TEST_EXIT();
}
