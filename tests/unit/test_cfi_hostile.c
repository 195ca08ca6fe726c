// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi on hostile synthetic files (cfi_fixture.h):
 *
 *   hostile    truncated entries, CIE pointers at FDEs, at themselves or
 *              out of range, reserved and huge lengths, bad augmentations
 *              and encodings, state stack underflow and overflow, row
 *              bombs against max_rows, advance floods, sections declared
 *              1 GiB in sparse files (-EFBIG, counted), not-x86-64 files:
 *              each a clear -errno with its reason, in bounded time
 *   mutations  random bytes of a valid image: a clean error or a
 *              well-formed table, never a crash (ASan/UBSan watch)
 *
 * What each rule gives on honest files is test_cfi_rules.c's.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bpfsym.h"
#include "base/inputcap.h"
#include "unwind/cfi.h"
#include "cfi_fixture.h"

TEST_SUITE("cfi_hostile")

/* Building @f fails with @want and a reason containing @needle, in bounded time. */
static void expect_err(const char *what, const struct fb *f, const struct img_opts *o, size_t max_rows,
		       int want, const char *needle)
{
	struct timespec a, b;
	struct cfi_table *t;
	char msg[256] = "unset";
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t = build(f, o, max_rows, &ret, msg, sizeof(msg));
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!ASSERT_EQ(ret, want, what))
		printf("     (%s: \"%s\")\n", what, msg);
	else if (!strstr(msg, needle))
		test__fail_msg(__FILE__, __LINE__, "%s: reason \"%s\" lacks \"%s\"", what, msg, needle);
	ASSERT_NULL(t, what);
	ASSERT_TRUE(b.tv_sec - a.tv_sec < 2, "bounded time");
	cfi_table__free(t);
}

/* A valid CIE (at 0) and one FDE at 0x18 over [0x401000, +0x10), for patching. */
static struct fb base_fb(void)
{
	struct fb f = { 0 };
	static const uint8_t insns[] = { SP(16) };

	fde(&f, cie(&f, "zR", std_init, sizeof(std_init)), TEXT_VA, 0x10, insns, sizeof(insns));
	return f;
}

static void patch32(struct fb *f, size_t at, uint32_t v)
{
	memcpy(f->b + at, &v, 4);
}

/* One FDE under the usual CIE with @insns. */
static void expect_insns(const char *what, const uint8_t *insns, size_t n, const char *needle)
{
	struct fb f = { 0 };

	fde(&f, cie(&f, "zR", std_init, sizeof(std_init)), TEXT_VA, 0x100, insns, n);
	expect_err(what, &f, NULL, 0, -EINVAL, needle);
	free(f.b);
}

/* A CIE with augmentation @aug (its data: @data) and an FDE of it. */
static void expect_aug(const char *what, const char *aug, const uint8_t *data, size_t n,
		       const char *needle)
{
	struct fb f = { 0 };
	size_t off = 0;

	put_u32(&f, 0);
	put_u32(&f, 0);
	put_u8(&f, 1);
	put(&f, aug, strlen(aug) + 1);
	put_uleb(&f, 1);
	put_sleb(&f, -8);
	put_u8(&f, 16);
	put(&f, data, n);
	put(&f, std_init, sizeof(std_init));
	patch_len(&f, off);
	f.z = aug[0] == 'z';
	fde(&f, 0, TEXT_VA, 0x10, NULL, 0);
	expect_err(what, &f, NULL, 0, -EINVAL, needle);
	free(f.b);
}

static void test_hostile_entries(void)
{
	struct fb f = base_fb();
	size_t fde_at = 0x16;	/* the CIE is 0x16 bytes */

	/* The FDE's CIE pointer (at fde_at + 4) is relative to itself. */
	patch32(&f, fde_at + 4, 4);
	expect_err("CIE pointer at its own FDE", &f, NULL, 0, -EINVAL, "FDE at 0x16: CIE pointer 0x16 is not at a CIE");
	patch32(&f, fde_at + 4, 0x1000);
	expect_err("CIE pointer before the section", &f, NULL, 0, -EINVAL, "FDE at 0x16: CIE pointer out of range");
	patch32(&f, fde_at + 4, 12);
	expect_err("CIE pointer into the CIE", &f, NULL, 0, -EINVAL, "FDE at 0x16: CIE at 0xe");
	free(f.b);

	f = base_fb();
	patch32(&f, fde_at, 0x1000);
	expect_err("FDE length past the end", &f, NULL, 0, -EINVAL, "entry at 0x16: length 0x1000 past the end");
	patch32(&f, fde_at, 0xfffffff0);
	expect_err("reserved length", &f, NULL, 0, -EINVAL, "reserved length");
	patch32(&f, fde_at, 0xffffffff);
	expect_err("64-bit length, huge", &f, NULL, 0, -EINVAL, "past the end");
	patch32(&f, fde_at, 2);
	expect_err("too short for its id", &f, NULL, 0, -EINVAL, "too short");
	f.n = fde_at + 2;
	expect_err("truncated length", &f, NULL, 0, -EINVAL, "truncated length");
	free(f.b);

	f = base_fb();
	patch32(&f, 0, 0x100);
	expect_err("CIE length past the end", &f, NULL, 0, -EINVAL, "past the end");
	/* The walk goes on at 0xa, in the middle of the CIE. */
	patch32(&f, 0, 6);
	expect_err("CIE cut short", &f, NULL, 0, -EINVAL, "entry at 0xa");
	free(f.b);

	f = base_fb();
	f.b[8] = 2;
	expect_err("CIE version 2", &f, NULL, 0, -EINVAL, "unsupported CIE version");
	f.b[8] = 4;
	expect_err("CIE version 4 in .eh_frame", &f, NULL, 0, -EINVAL, "unsupported CIE version");
	f.b[8] = 1;
	f.n = fde_at + 12;
	patch32(&f, fde_at, 8);
	expect_err("FDE truncated in its range", &f, NULL, 0, -EINVAL, "truncated FDE");
	free(f.b);
}

static void test_hostile_cies(void)
{
	static const uint8_t r_sdata4[] = { 1, 0x1b }, r_indirect[] = { 1, 0x9b }, r_omit[] = { 1, 0xff },
			     r_funcrel[] = { 1, 0x4b }, r_bad[] = { 1, 0x07 }, p_indirect[] = { 10, 0x9c, 0, 0, 0, 0, 0, 0, 0, 0, 0x1b },
			     long_data[] = { 100, 0x1b }, none[] = { 0 }, r_datarel[] = { 1, 0x3b };

	expect_aug("unknown augmentation", "zX", r_sdata4, sizeof(r_sdata4), "unknown augmentation");
	expect_aug("old eh augmentation", "eh", none, 0, "unknown augmentation");
	expect_aug("augmentation data past the end", "zR", long_data, sizeof(long_data), "augmentation data past the end");
	expect_aug("indirect FDE pointers", "zR", r_indirect, sizeof(r_indirect), "indirect pointer");
	expect_aug("omitted FDE pointers", "zR", r_omit, sizeof(r_omit), "omitted pointer");
	expect_aug("funcrel FDE pointers", "zR", r_funcrel, sizeof(r_funcrel), "unusable pointer encoding");
	expect_aug("unknown pointer format", "zR", r_bad, sizeof(r_bad), "unknown pointer encoding");
	/* A personality through an indirect pointer is fine (skipped); its FDE pointer is not. */
	expect_aug("indirect personality, then R", "zPR", p_indirect, sizeof(p_indirect) - 1, "truncated");
	expect_aug("datarel without .got", "zR", r_datarel, sizeof(r_datarel), "datarel pointer without .got");
}

/* A CIE cut inside its fields (its length says so, the walk stays in step). */
static void test_truncated_cie(void)
{
	static const uint8_t fields[] = { 1, 'z', 'R', 0, 1 };
	struct fb f = { 0 };
	size_t i;

	for (i = 0; i <= sizeof(fields); i++) {
		f.n = 0;
		put_u32(&f, (uint32_t)(4 + i));
		put_u32(&f, 0);
		put(&f, fields, i);
		f.z = true;
		f.abs = false;
		fde(&f, 0, TEXT_VA, 0x10, NULL, 0);
		expect_err("truncated CIE", &f, NULL, 0, -EINVAL, "CIE at 0x0: ");
	}
	free(f.b);
}

/* 64-bit DWARF entries (initial length 0xffffffff), in .eh_frame and .debug_frame. */
static void test_dwarf64(void)
{
	static const struct want w[] = { W(0, R(CFA_SP, 8, 0, 0)), W(1, R(CFA_SP, 16, 0, 0)), W(0x10, FP_END) };
	static const uint8_t cie_body[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01 };
	static const uint8_t cie_dbg[] = { 1, 0, 1, 0x78, 16, 0x0c, 0x07, 0x08, 0x90, 0x01 };
	static const uint8_t insns[] = { 0x41, 0x0e, 0x10 };
	struct img_opts dopt = { .debug_frame = true };
	uint64_t v64;
	int32_t rel;
	int debug, ret;
	struct cfi_table *t;
	char msg[256];

	for (debug = 0; debug < 2; debug++) {
		struct fb f = { 0 };

		/* CIE: 0xffffffff, length (8), id (8), body. */
		put_u32(&f, 0xffffffffu);
		v64 = 8 + (debug ? sizeof(cie_dbg) : sizeof(cie_body));
		put(&f, &v64, 8);
		v64 = debug ? ~0ULL : 0;
		put(&f, &v64, 8);
		put(&f, debug ? cie_dbg : cie_body, debug ? sizeof(cie_dbg) : sizeof(cie_body));
		/* FDE at 0x2a or 0x26: its CIE pointer is 8 bytes. */
		put_u32(&f, 0xffffffffu);
		v64 = 8 + (debug ? 16 : 8 + 1) + sizeof(insns);
		put(&f, &v64, 8);
		v64 = debug ? 0 : f.n;		/* .eh_frame: back from here to 0 */
		put(&f, &v64, 8);
		if (debug) {
			v64 = TEXT_VA;
			put(&f, &v64, 8);
			v64 = 0x10;
			put(&f, &v64, 8);
		} else {
			rel = (int32_t)(TEXT_VA - (FRAME_VA + f.n));
			put(&f, &rel, 4);
			put_u32(&f, 0x10);
			put_u8(&f, 0);
		}
		put(&f, insns, sizeof(insns));
		t = build(&f, debug ? &dopt : NULL, 0, &ret, msg, sizeof(msg));
		if (ASSERT_OK(ret, msg))
			rows_are(t, w, 3, debug ? "64-bit .debug_frame" : "64-bit .eh_frame");
		cfi_table__free(t);
		free(f.b);
	}
}

static void test_hostile_insns(void)
{
	static const uint8_t underflow[] = { 0x41, 0x0b };
	static const uint8_t unknown[] = { 0x41, 0x1c };
	static const uint8_t truncated[] = { 0x0c, 0x07 };
	/* set_loc to the FDE's start, pcrel from the operand (at 0x16 + 17 + 2 in the section). */
	int32_t rel = (int32_t)(TEXT_VA - (FRAME_VA + 0x16 + 17 + 2));
	uint8_t back[] = { 0x41, 0x01, 0, 0, 0, 0 };
	static const uint8_t expr_long[] = { 0x0f, 0x7f, 0x00 };
	static const uint8_t huge_sf[] = { 0x13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t leb_long[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	uint8_t deep[33 + 1];
	struct fb f = { 0 };
	static const uint8_t adv_in_cie[] = { 0x0c, 0x07, 0x08, 0x41 };

	memcpy(back + 2, &rel, 4);

	expect_insns("restore_state underflow", underflow, sizeof(underflow), "FDE at 0x16: restore_state without remember_state");
	memset(deep, 0x0a, sizeof(deep));
	expect_insns("remember_state overflow", deep, 33, "remember_state nested too deep");
	expect_insns("unknown instruction", unknown, sizeof(unknown), "unknown instruction");
	expect_insns("truncated instruction", truncated, sizeof(truncated), "truncated instruction");
	expect_insns("set_loc backwards", back, sizeof(back), "backwards");
	expect_insns("expression past the end", expr_long, sizeof(expr_long), "expression past the end");
	expect_insns("offset overflows", huge_sf, sizeof(huge_sf), "offset overflows");
	expect_insns("LEB128 past 64 bits", leb_long, sizeof(leb_long), "truncated instruction");
	fde(&f, cie(&f, "zR", adv_in_cie, sizeof(adv_in_cie)), TEXT_VA, 0x10, NULL, 0);
	expect_err("advance in a CIE", &f, NULL, 0, -EINVAL, "CIE at 0x0: advance in a CIE");
	free(f.b);
	/* 32 levels are fine. */
	f = (struct fb){ 0 };
	memset(deep, 0x0a, 32);
	fde(&f, cie(&f, "zR", std_init, sizeof(std_init)), TEXT_VA, 0x10, deep, 32);
	{
		struct cfi_table *t;
		char msg[256];
		int ret;

		t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
		ASSERT_OK(ret, msg);
		cfi_table__free(t);
	}
	free(f.b);
}

/* Row bombs against max_rows, instruction floods, advances that never end. */
static void test_bombs(void)
{
	struct fb f = { 0 };
	struct cfi_table *t;
	struct timespec a, b;
	char msg[256];
	size_t c, i;
	int ret;
	uint8_t *insns = malloc(4 << 20);

	if (!ASSERT_OK_PTR(insns, "malloc"))
		return;
	/* 100k rows: a new CFA offset at every byte. */
	for (i = 0; i < 100000; i++) {
		insns[3 * i] = 0x41;
		insns[3 * i + 1] = 0x0e;
		insns[3 * i + 2] = (uint8_t)(i & 1 ? 16 : 24);
	}
	c = cie(&f, "zR", std_init, sizeof(std_init));
	fde(&f, c, TEXT_VA, 200000, insns, 300000);
	expect_err("100k rows, max 1000", &f, NULL, 1000, -E2BIG, "more than 1000 rows");
	clock_gettime(CLOCK_MONOTONIC, &a);
	t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (ASSERT_OK(ret, msg)) {
		ASSERT_EQ(t->nr, (size_t)100002, "100k rows, the default max");
		printf("# 100k-row FDE: %.1f ms\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	}
	cfi_table__free(t);
	/* The same rows from 100k FDEs of one row each. */
	f.n = 0;
	c = cie(&f, "zR", std_init, sizeof(std_init));
	for (i = 0; i < 100000; i++)
		fde(&f, c, TEXT_VA + i, 1, insns + 1, 2);
	expect_err("100k FDEs, max 1000", &f, NULL, 1000, -E2BIG, "more than 1000 rows");
	/* 2M instructions that do nothing: over the per-FDE bound. */
	f.n = 0;
	memset(insns, 0x40, 2 << 20);	/* advance_loc 0 */
	fde(&f, cie(&f, "zR", std_init, sizeof(std_init)), TEXT_VA, 0x10, insns, 2 << 20);
	expect_err("2M instructions", &f, NULL, 0, -EINVAL, "too many instructions");
	/* Advances by 4 GiB: past the end at once, and no wrap-around. */
	f.n = 0;
	for (i = 0; i < 100000; i++)
		memcpy(insns + 5 * i, "\x04\xff\xff\xff\xff", 5);
	fde(&f, cie(&f, "zR", std_init, sizeof(std_init)), TEXT_VA, 0x10, insns, 500000);
	t = build(&f, NULL, 0, &ret, msg, sizeof(msg));
	if (ASSERT_OK(ret, msg))
		ASSERT_EQ(t->nr, (size_t)2, "one row and the end");
	cfi_table__free(t);
	free(insns);
	free(f.b);
}

/*
 * @o's image of a valid section, its size (section header, or the
 * segment holding it) declared 1 GiB in a sparse file: -EFBIG before a
 * byte of it is read, counted once (issue 25: 1 GiB of RSS on main).
 */
static void over_cap(const char *what, const struct img_opts *o)
{
	struct fb f = base_fb();
	struct img im = make_img(&f, o);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im.b;
	uint64_t before = inputcap__count(INPUTCAP_CFI_SECTION), big = 1ull << 30;
	struct cfi_table *t = NULL;
	char msg[256] = "";
	int fd, ret;

	if (o->no_shdrs)
		((Elf64_Phdr *)(im.b + eh->e_phoff))[1].p_filesz = big;
	else
		((Elf64_Shdr *)(im.b + eh->e_shoff))[2].sh_size = big;
	fd = memfd_create("cfi_over_cap", MFD_CLOEXEC);
	if (ASSERT_TRUE(fd >= 0, "memfd_create") &&
	    ASSERT_EQ(write(fd, im.b, im.len), (ssize_t)im.len, "write") &&
	    ASSERT_OK(ftruncate(fd, (off_t)(FRAME_OFF + big)), "ftruncate")) {
		ret = cfi_table__build_fd(fd, NULL, &t, msg, sizeof(msg));
		ASSERT_EQ(ret, -EFBIG, what);
		ASSERT_TRUE(strstr(msg, "over the cap") != NULL, msg);
		ASSERT_EQ(inputcap__count(INPUTCAP_CFI_SECTION), before + 1, "counted once");
	}
	cfi_table__free(t);
	if (fd >= 0)
		close(fd);
	free(im.b);
	free(f.b);
}

static void test_section_cap(void)
{
	over_cap(".eh_frame by its section header", &(struct img_opts){ 0 });
	over_cap(".eh_frame through PT_GNU_EH_FRAME", &(struct img_opts){ .no_shdrs = true });
	over_cap(".debug_frame", &(struct img_opts){ .debug_frame = true });
}

/* Not x86-64 ELF: -ENOEXEC; a cut image: an error, never a crash. */
static void test_not_x86(void)
{
	struct img_opts o = { .machine = EM_AARCH64 };
	struct fb f = base_fb();
	struct cfi_table *t = NULL;
	struct img im;
	char msg[256];
	int ret;
	size_t cut;

	expect_err("aarch64", &f, &o, 0, -ENOEXEC, "not an x86-64 ELF file");
	ret = cfi_table__build_mem("#!/bin/sh\n", 10, NULL, &t, msg, sizeof(msg));
	ASSERT_EQ(ret, -ENOEXEC, "a script");
	ret = cfi_table__build_mem("", 0, NULL, &t, msg, sizeof(msg));
	ASSERT_EQ(ret, -ENOEXEC, "nothing");
	ASSERT_NULL(t, "no table");
	im = make_img(&f, NULL);
	for (cut = 0; cut < im.len; cut += 7) {
		ret = cfi_table__build_mem(im.b, cut, NULL, &t, msg, sizeof(msg));
		if (ret && !(ret == -ENOEXEC || ret == -EINVAL) && ASSERT_EQ(ret, -EINVAL, "cut image"))
			break;
		if (!ret)
			cfi_table__free(t);
	}
	free(im.b);
	free(f.b);
}

/* Random bytes in a valid image: a clean error or a well-formed table. */
static void test_mutations(void)
{
	static const uint8_t a[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x0a, 0x6c, 0x0c, 0x07, 0x08,
				     0xc6, 0x41, 0x0b, 0x2e, 0x10, 0x11, 0x03, 0x7c };
	static const uint8_t plt[] = { 0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	struct fb f = { 0 };
	struct cfi_table *t;
	size_t c, i, k, nok = 0, nerr = 0, bad = 0;
	struct img im;
	char msg[256];
	unsigned int seed = 1;
	int ret;

	c = cie(&f, "zR", std_init, sizeof(std_init));
	fde(&f, c, TEXT_VA, 0x100, a, sizeof(a));
	fde(&f, c, TEXT_VA + 0x200, 0x100, plt, sizeof(plt));
	c = cie(&f, "zRS", std_init, sizeof(std_init));
	fde(&f, c, TEXT_VA + 0x100, 0x80, a, 8);
	im = make_img(&f, NULL);
	for (i = 0; i < 20000; i++) {
		struct img m = { malloc(im.len), im.len };

		if (!m.b)
			break;
		memcpy(m.b, im.b, im.len);
		for (k = 0; k < 1 + (size_t)rand_r(&seed) % 4; k++)
			m.b[FRAME_OFF + rand_r(&seed) % f.n] = (uint8_t)rand_r(&seed);
		msg[0] = 0;
		ret = cfi_table__build_mem(m.b, m.len, NULL, &t, msg, sizeof(msg));
		free(m.b);
		if (ret) {
			nerr++;
			if ((ret != -EINVAL && ret != -E2BIG) || !msg[0])
				bad++;
			continue;
		}
		nok++;
		for (k = 1; k < t->nr; k++)
			bad += t->rows[k].pc <= t->rows[k - 1].pc || t->rows[k].rule == t->rows[k - 1].rule;
		bad += t->nr && t->rows[t->nr - 1].rule != FP_END;
		cfi_table__free(t);
	}
	printf("# mutations: %zu tables, %zu errors\n", nok, nerr);
	ASSERT_EQ(bad, (size_t)0, "errors without a reason, or tables out of order");
	ASSERT_TRUE(nok > 100 && nerr > 100, "both outcomes exercised");
	free(im.b);
	free(f.b);
}

int main(void)
{
	RUN_TEST(test_hostile_entries);
	RUN_TEST(test_hostile_cies);
	RUN_TEST(test_hostile_insns);
	RUN_TEST(test_truncated_cie);
	RUN_TEST(test_dwarf64);
	RUN_TEST(test_bombs);
	RUN_TEST(test_section_cap);
	RUN_TEST(test_not_x86);
	RUN_TEST(test_mutations);
	return TEST_EXIT();
}
