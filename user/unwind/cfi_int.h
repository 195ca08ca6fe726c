/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi_int.h: what the table builder's modules share (not for callers).
 *
 *   cfi_parse.c  entries, CIEs (parsed once each, cached by offset), FDE
 *                headers, pointer encodings: every read bounds-checked
 *   cfi_eval.c   the CFA instruction interpreter: one FDE into raw rows
 *   cfi_merge.c  the FDEs' rows into the table: sorted, overlaps clipped,
 *                .eh_frame before .debug_frame, equal neighbours merged
 *   cfi.c        the ELF side: segments, sections, .eh_frame_hdr, the
 *                separate debug file, the public API
 */
#ifndef BPFSYM_CFI_INT_H
#define BPFSYM_CFI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "unwind/cfi.h"

/* x86-64 DWARF register numbers. */
#define CFI_REG_RBP	6
#define CFI_REG_RSP	7
#define CFI_REG_RA	16

/* remember_state nesting: compilers use 1 or 2. */
#define CFI_STATE_DEPTH		32
/* Instructions one FDE may run: real ones run a few hundred. */
#define CFI_MAX_OPS_PER_FDE	(1u << 20)
/* Distinct CIEs one section may have (each costs a cache entry). */
#define CFI_MAX_CIES		(1u << 20)

enum cfi_sec_kind { CFI_EH_FRAME, CFI_DEBUG_FRAME };

/* One section of call-frame information, in memory. */
struct cfi_sec {
	const char *name;	/* for messages: ".eh_frame", "debug file .debug_frame" */
	const uint8_t *data;
	size_t len;
	uint64_t vaddr;		/* its address: the base of pcrel pointers */
	enum cfi_sec_kind kind;
};

/* A bounded reader over [p, end). */
struct cfi_cur {
	const uint8_t *p, *end;
};

/* How one register is recovered; only rbp and the return address matter. */
enum cfi_how { CFI_UNSET, CFI_UNDEF, CFI_SAME, CFI_OFFSET, CFI_OTHER };
/* How the CFA is found. */
enum cfi_cfa { CFI_CFA_REG, CFI_CFA_PLT10, CFI_CFA_PLT11, CFI_CFA_EXPR };

/* The rules in effect at one PC (what remember_state saves). */
struct cfi_regs {
	int64_t cfa_off, fp_off, ra_off;
	uint64_t cfa_reg;
	uint8_t cfa_how, fp_how, ra_how;
};

struct cfi_cie {
	uint64_t off;			/* of its entry in the section */
	const uint8_t *insns, *insns_end;	/* initial instructions */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;		/* DW_EH_PE_* of FDE addresses (.eh_frame) */
	uint8_t addr_size, seg_size;	/* .debug_frame v4 */
	bool aug_z, signal;
	struct cfi_regs init;		/* after the initial instructions */
};

/* One FDE being evaluated. */
struct cfi_fde {
	uint64_t off;			/* of its entry, for messages */
	uint64_t pc, end;		/* vaddrs, end clipped to its segment */
	int64_t delta;			/* file offset - vaddr in its segment */
	struct cfi_cur insns;
};

/* An executable PT_LOAD: [vaddr, end) is at file offset vaddr + delta. */
struct cfi_seg {
	uint64_t vaddr, end;
	int64_t delta;
};

/* Where one FDE's rows are in the builder's raw rows. */
struct cfi_fde_rec {
	uint32_t start, end;		/* file offsets */
	uint32_t first, nr;		/* rows [first, first + nr) */
	uint32_t seq;			/* parse order: a stable sort */
};

struct cfi_builder {
	size_t max_rows;
	const struct cfi_seg *segs;
	size_t nsegs;
	uint64_t text, got;		/* textrel and datarel bases (0: none) */
	struct cfi_row *raw;		/* every FDE's rows, FDE after FDE */
	size_t nraw, craw;
	struct cfi_fde_rec *fdes;
	size_t nfdes, cfdes;
	size_t neh;			/* fdes[0, neh) come from .eh_frame */
	struct cfi_cie *cies;		/* the current section's, by cie_idx */
	size_t ncies, ccies;
	struct htab cie_idx;		/* hash of offset -> index + 1 */
	struct cfi_stats *st;
	char *err;
	size_t errlen;
};

/* DW_EH_PE_*: the value's format (low nibble) and how it applies (next 3 bits). */
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_PCREL	0x10
#define PE_TEXTREL	0x20
#define PE_DATAREL	0x30
#define PE_FUNCREL	0x40
#define PE_ALIGNED	0x50
#define PE_INDIRECT	0x80
#define PE_OMIT		0xff

/* Set the builder's one-line reason (the first one wins) and return @err. */
int cfi_fail(struct cfi_builder *b, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool cur_u8(struct cfi_cur *c, uint8_t *v)
{
	if (c->p >= c->end)
		return false;
	*v = *c->p++;
	return true;
}

/* @n bytes little-endian (x86-64 only), n <= 8. */
static inline bool cur_un(struct cfi_cur *c, unsigned int n, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int i;

	if ((size_t)(c->end - c->p) < n)
		return false;
	for (i = 0; i < n; i++)
		x |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	*v = x;
	return true;
}

static inline bool cur_skip(struct cfi_cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return false;
	c->p += n;
	return true;
}

/* LEB128 past 64 bits is malformed, not silently cut. */
static inline bool cur_uleb(struct cfi_cur *c, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int shift = 0;
	uint8_t byte;

	do {
		if (c->p >= c->end)
			return false;
		byte = *c->p++;
		if (shift >= 64 || (shift == 63 && (byte & 0x7e)))
			return false;
		x |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	*v = x;
	return true;
}

static inline bool cur_sleb(struct cfi_cur *c, int64_t *v)
{
	uint64_t x = 0;
	unsigned int shift = 0;
	uint8_t byte;

	do {
		if (c->p >= c->end || shift >= 64)
			return false;
		byte = *c->p++;
		x |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (shift < 64 && (byte & 0x40))
		x |= ~0ULL << shift;
	*v = (int64_t)x;
	return true;
}

/* The value of format @fmt (low nibble of an encoding), sign-extended: false if truncated or unknown. */
bool cfi_read_format(struct cfi_cur *c, uint8_t fmt, uint64_t *v);

/*
 * Read a pointer of encoding @enc (DW_EH_PE_*) of section @s at @c: the
 * value, made absolute (pcrel from where it is, textrel/datarel from the
 * builder's bases).  DW_EH_PE_indirect only when @may_indirect (a
 * personality, skipped: the value is the slot's address).  0 or -EINVAL
 * (truncated, unknown or unusable encoding; the reason in @what).
 */
int cfi_read_ptr(const struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cur *c,
		 uint8_t enc, bool may_indirect, uint64_t *out, const char **what);

/*
 * Walk every entry of @s, evaluating each FDE into the builder's rows.
 * 0 or -errno with the reason set (cfi_fail).
 */
int cfi_walk(struct cfi_builder *b, const struct cfi_sec *s);

/*
 * Run the CIE's initial instructions into cie->init.  0 or -EINVAL
 * (reason set; @s for messages).
 */
int cfi_eval__cie(struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cie *cie);

/*
 * Run the FDE's instructions on top of the CIE's initial rules, appending
 * its rows (file offsets, strictly increasing, equal neighbours merged,
 * inside [f->pc, f->end)) to the builder and one record to b->fdes.
 * 0, or -EINVAL/-E2BIG/-ENOMEM with the reason set.
 */
int cfi_eval__fde(struct cfi_builder *b, const struct cfi_sec *s, const struct cfi_cie *cie,
		  const struct cfi_fde *f);

/*
 * The builder's FDE records (.eh_frame's first, then .debug_frame's) into
 * @t's rows: see cfi_table in cfi.h.  Sets the row statistics.  0 or
 * -ENOMEM, -E2BIG (reason set).
 */
int cfi_merge(struct cfi_builder *b, struct cfi_table *t);

#endif /* BPFSYM_CFI_INT_H */
