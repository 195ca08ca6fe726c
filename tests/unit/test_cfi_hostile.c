// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi on synthetic files: small x86-64 ELF images made here, with a
 * .eh_frame (or .debug_frame) assembled byte by byte, so each rule of
 * the row format and each way of lying has a case of its own.
 *
 *   rules      one FDE per case, its rows exactly (CFA on rsp/rbp, the
 *              PLT expression, signal frames, END, rbp slots, state
 *              stack, every advance, and what must be UNSUPPORTED)
 *   merge      overlapping FDEs, gaps, FDEs outside the code, the zero
 *              terminator, .debug_frame filling what .eh_frame leaves,
 *              .eh_frame found through .eh_frame_hdr
 *   hostile    truncated entries, CIE pointers at FDEs, at themselves or
 *              out of range, reserved and huge lengths, bad augmentations
 *              and encodings, state stack underflow and overflow, row
 *              bombs against max_rows, advance floods, not-x86-64 files:
 *              each a clear -errno with its reason, in bounded time
 *   mutations  random bytes of a valid image: a clean error or a
 *              well-formed table, never a crash (ASan/UBSan watch)
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bpfsym.h"
#include "unwind/cfi.h"
#include "test.h"

TEST_SUITE("cfi_hostile")

/* The image: code at 0x401000 (offset 0x1000), the frame section at 0x402000 (0x2000). */
#define TEXT_VA		0x401000ULL
#define TEXT_OFF	0x1000u
#define FRAME_VA	0x800000ULL
#define CODE_END	0x600000ULL	/* the R+X PT_LOAD's memsz runs to here */
#define FRAME_OFF	0x2000u

#define R(kind, off, fp, neg)	BPFSYM_UNW_RULE(BPFSYM_UNW_##kind, off, fp, neg)
#define FP_END			R(FP_RULE, 0, 0, 0)
#define UNSUP			R(UNSUPPORTED, 0, 0, 0)

/* A growing byte buffer: the frame section being assembled. */
struct fb {
	uint8_t *b;
	size_t n, cap;
	bool debug;		/* .debug_frame: absolute 8-byte addresses, CIE id ~0 */
	bool abs, z;		/* the last CIE's: no 'R' (absolute addresses), 'z' */
};

static void put(struct fb *f, const void *p, size_t n)
{
	if (!n)
		return;
	if (f->n + n > f->cap) {
		f->cap = (f->n + n) * 2 + 256;
		f->b = realloc(f->b, f->cap);
		if (!f->b)
			abort();
	}
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void put_u8(struct fb *f, uint8_t v)
{
	put(f, &v, 1);
}

static void put_u32(struct fb *f, uint32_t v)
{
	put(f, &v, 4);
}

static void put_uleb(struct fb *f, uint64_t v)
{
	do {
		put_u8(f, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void put_sleb(struct fb *f, int64_t v)
{
	bool more = true;
	uint8_t byte;

	while (more) {
		byte = v & 0x7f;
		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		put_u8(f, (uint8_t)(byte | (more ? 0x80 : 0)));
	}
}

static void patch_len(struct fb *f, size_t off)
{
	uint32_t len = (uint32_t)(f->n - off - 4);

	memcpy(f->b + off, &len, 4);
}

/* The usual CIE's initial instructions: CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t std_init[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/* A CIE with augmentation @aug ("zR": pcrel sdata4 FDE addresses); its offset. */
static size_t cie(struct fb *f, const char *aug, const uint8_t *insns, size_t n)
{
	size_t off = f->n;

	put_u32(f, 0);
	put_u32(f, f->debug ? 0xffffffffu : 0);
	put_u8(f, 1);
	put(f, aug, strlen(aug) + 1);
	put_uleb(f, 1);
	put_sleb(f, -8);
	put_u8(f, 16);
	if (aug[0] == 'z') {
		put_uleb(f, strchr(aug, 'R') ? 1 : 0);
		if (strchr(aug, 'R'))
			put_u8(f, 0x1b);
	}
	put(f, insns, n);
	patch_len(f, off);
	f->abs = f->debug || !strchr(aug, 'R');
	f->z = aug[0] == 'z';
	return off;
}

/* An FDE of the CIE at @cie_off over [pc, pc + len); its offset. */
static size_t fde(struct fb *f, size_t cie_off, uint64_t pc, uint32_t len, const uint8_t *insns, size_t n)
{
	size_t off = f->n;
	int32_t rel;
	uint64_t abs;

	put_u32(f, 0);
	put_u32(f, f->debug ? (uint32_t)cie_off : (uint32_t)(f->n - cie_off));
	if (f->abs) {
		abs = pc;
		put(f, &abs, 8);
		abs = len;
		put(f, &abs, 8);
	} else {
		rel = (int32_t)(pc - (FRAME_VA + f->n));
		put(f, &rel, 4);
		put_u32(f, len);
	}
	if (f->z)
		put_uleb(f, 0);
	put(f, insns, n);
	patch_len(f, off);
	return off;
}

struct img {
	uint8_t *b;
	size_t len;
};

struct img_opts {
	bool debug_frame;	/* the section is .debug_frame (not allocated) */
	bool no_shdrs;		/* only program headers: a PT_GNU_EH_FRAME and .eh_frame_hdr */
	uint16_t machine;	/* 0: EM_X86_64 */
};

/*
 * An ELF image around the frame section @f: PT_LOAD R+X [0, 0x2000) at
 * 0x400000, memsz to CODE_END (so the code at 0x401000 is file offset
 * 0x1000, and FDEs may cover up to 2 MiB), PT_LOAD R at FRAME_VA
 * over the section, section headers .text, the section, .shstrtab; or,
 * with no_shdrs, an .eh_frame_hdr (version 1, pcrel eh_frame_ptr, no
 * table) before the section and a PT_GNU_EH_FRAME instead.
 */
static struct img make_img(const struct fb *f, const struct img_opts *o)
{
	static const char shstr[] = "\0.text\0.eh_frame\0.debug_frame\0.shstrtab";
	struct img im;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	size_t shstr_off = FRAME_OFF + f->n, sh_off = (shstr_off + sizeof(shstr) + 7) & ~7ul;
	uint8_t hdr[8] = { 1, 0x1b, 0xff, 0xff };
	int32_t rel;

	im.len = sh_off + 4 * sizeof(*sh);
	im.b = calloc(1, im.len);
	if (!im.b)
		abort();
	memcpy(im.b + FRAME_OFF, f->b, f->n);
	memcpy(im.b + shstr_off, shstr, sizeof(shstr));
	eh = (Elf64_Ehdr *)im.b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = o && o->machine ? o->machine : EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(*sh);
	ph = (Elf64_Phdr *)(im.b + sizeof(*eh));
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0, 0x400000, 0x400000, 0x2000, CODE_END - 0x400000, 0x1000 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R, FRAME_OFF, FRAME_VA, FRAME_VA, f->n, f->n, 0x1000 };
	ph[2] = (Elf64_Phdr){ PT_NOTE, PF_R, 0, 0, 0, 0, 0, 4 };
	if (o && o->no_shdrs) {
		/* .eh_frame_hdr at the end of the code segment, pointing at the section. */
		ph[2] = (Elf64_Phdr){ PT_GNU_EH_FRAME, PF_R, 0x1ff0, 0x401ff0, 0x401ff0, 8, 8, 4 };
		rel = (int32_t)(FRAME_VA - (0x401ff0 + 4));
		memcpy(hdr + 4, &rel, 4);
		memcpy(im.b + 0x1ff0, hdr, 8);
		return im;
	}
	eh->e_shoff = sh_off;
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	sh = (Elf64_Shdr *)(im.b + sh_off);
	sh[1] = (Elf64_Shdr){ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT_VA, TEXT_OFF, 0x1000, 0, 0, 16, 0 };
	if (o && o->debug_frame)
		sh[2] = (Elf64_Shdr){ 17, SHT_PROGBITS, 0, 0, FRAME_OFF, f->n, 0, 0, 8, 0 };
	else
		sh[2] = (Elf64_Shdr){ 7, SHT_PROGBITS, SHF_ALLOC, FRAME_VA, FRAME_OFF, f->n, 0, 0, 8, 0 };
	sh[3] = (Elf64_Shdr){ 30, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstr), 0, 0, 1, 0 };
	return im;
}

/* Rows as (offset, rule) pairs. */
struct want {
	uint32_t pc, rule;
};

static bool rows_are(const struct cfi_table *t, const struct want *w, size_t n, const char *what)
{
	size_t i;

	if (!ASSERT_EQ(t->nr, n, what)) {
		for (i = 0; i < t->nr && i < 12; i++)
			printf("     row %zu: pc 0x%x rule 0x%x\n", i, t->rows[i].pc, t->rows[i].rule);
		return false;
	}
	for (i = 0; i < n; i++)
		if (t->rows[i].pc != w[i].pc || t->rows[i].rule != w[i].rule) {
			test__fail_msg(__FILE__, __LINE__, "%s: row %zu is pc 0x%x rule 0x%x, want pc 0x%x rule 0x%x",
				       what, i, t->rows[i].pc, t->rows[i].rule, w[i].pc, w[i].rule);
			return false;
		}
	return true;
}

/* Build the image of @f; the table (NULL on error, *@err the code). */
static struct cfi_table *build(const struct fb *f, const struct img_opts *o, size_t max_rows, int *ret,
			       char *msg, size_t msglen)
{
	struct cfi_opts co = { .max_rows = max_rows, .debug_fd = -1 };
	struct img im = make_img(f, o);
	struct cfi_table *t = NULL;

	*ret = cfi_table__build_mem(im.b, im.len, &co, &t, msg, msglen);
	free(im.b);
	return t;
}

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
#define L(...)		__VA_ARGS__
#define W(off, rule)	{ TEXT_OFF + (off), (rule) }
#define NOP		0x00

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

/* Instructions setting CFA = rsp + @off (def_cfa_offset). */
#define SP(off)	0x0e, (off)

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
	RUN_TEST(test_rules);
	RUN_TEST(test_merge);
	RUN_TEST(test_terminator_stats);
	RUN_TEST(test_eh_frame_hdr);
	RUN_TEST(test_debug_file);
	RUN_TEST(test_hostile_entries);
	RUN_TEST(test_hostile_cies);
	RUN_TEST(test_hostile_insns);
	RUN_TEST(test_truncated_cie);
	RUN_TEST(test_dwarf64);
	RUN_TEST(test_bombs);
	RUN_TEST(test_not_x86);
	RUN_TEST(test_mutations);
	return TEST_EXIT();
}
