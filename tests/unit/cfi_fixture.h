/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Synthetic x86-64 ELF images with a .eh_frame (or .debug_frame)
 * assembled byte by byte, for the call-frame tests of the table builder
 * (test_cfi_rules.c: each rule and merge; test_cfi_hostile.c: each way of
 * lying).  Everything static and marked unused: each test takes what it
 * needs.
 */
#ifndef BPFSYM_CFI_FIXTURE_H
#define BPFSYM_CFI_FIXTURE_H

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpfsym.h"
#include "unwind/cfi.h"
#include "test.h"

#define CFI_FX static __attribute__((unused))

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

CFI_FX void put(struct fb *f, const void *p, size_t n)
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

CFI_FX void put_u8(struct fb *f, uint8_t v)
{
	put(f, &v, 1);
}

CFI_FX void put_u32(struct fb *f, uint32_t v)
{
	put(f, &v, 4);
}

CFI_FX void put_uleb(struct fb *f, uint64_t v)
{
	do {
		put_u8(f, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

CFI_FX void put_sleb(struct fb *f, int64_t v)
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

CFI_FX void patch_len(struct fb *f, size_t off)
{
	uint32_t len = (uint32_t)(f->n - off - 4);

	memcpy(f->b + off, &len, 4);
}

/* The usual CIE's initial instructions: CFA = rsp + 8, return address at CFA - 8. */
CFI_FX const uint8_t std_init[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/* A CIE with augmentation @aug ("zR": pcrel sdata4 FDE addresses); its offset. */
CFI_FX size_t cie(struct fb *f, const char *aug, const uint8_t *insns, size_t n)
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
CFI_FX size_t fde(struct fb *f, size_t cie_off, uint64_t pc, uint32_t len, const uint8_t *insns, size_t n)
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
CFI_FX struct img make_img(const struct fb *f, const struct img_opts *o)
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

CFI_FX bool rows_are(const struct cfi_table *t, const struct want *w, size_t n, const char *what)
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
CFI_FX struct cfi_table *build(const struct fb *f, const struct img_opts *o, size_t max_rows, int *ret,
			       char *msg, size_t msglen)
{
	struct cfi_opts co = { .max_rows = max_rows, .debug_fd = -1 };
	struct img im = make_img(f, o);
	struct cfi_table *t = NULL;

	*ret = cfi_table__build_mem(im.b, im.len, &co, &t, msg, msglen);
	free(im.b);
	return t;
}

#define L(...)		__VA_ARGS__
#define W(off, rule)	{ TEXT_OFF + (off), (rule) }
#define NOP		0x00

/* Instructions setting CFA = rsp + @off (def_cfa_offset). */
#define SP(off)	0x0e, (off)

#endif /* BPFSYM_CFI_FIXTURE_H */
