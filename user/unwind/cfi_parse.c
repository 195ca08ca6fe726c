// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_parse: the entries of .eh_frame and .debug_frame (the LSB's and
 * DWARF's layouts), CIEs and FDE headers, and the pointer encodings.
 *
 * A CIE is parsed, and its initial instructions run, once: the FDEs that
 * point at it find it in a cache by offset (a file has a handful; a
 * .debug_frame may have one per compilation unit).  A CIE pointer is
 * checked to land on a CIE (its id field says so), so pointers cannot
 * loop: an FDE never leads to another FDE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "unwind/cfi_int.h"

/* The augmentation data of a 'z' CIE: the FDE encoding, the signal flag; the rest skipped. */
static const char *parse_aug_data(struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cur *c,
				  const char *aug, struct cfi_cie *cie)
{
	struct cfi_cur d;
	const char *what = NULL;
	uint64_t len, v;
	uint8_t enc;

	if (!cur_uleb(c, &len) || (uint64_t)(c->end - c->p) < len)
		return "augmentation data past the end";
	d.p = c->p;
	d.end = c->p + len;
	c->p = d.end;
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			if (!cur_u8(&d, &cie->fde_enc))
				return "truncated augmentation data";
			break;
		case 'L':
			if (!cur_u8(&d, &enc))
				return "truncated augmentation data";
			break;
		case 'P':
			/* The personality routine: only skipped, so it may be indirect. */
			if (!cur_u8(&d, &enc))
				return "truncated augmentation data";
			if (enc != PE_OMIT && cfi_read_ptr(b, s, &d, enc, true, &v, &what))
				return what;
			break;
		case 'S':
			cie->signal = true;
			break;
		default:
			return "unknown augmentation";
		}
	}
	return NULL;
}

/* The fields after the augmentation string; NULL or what is wrong. */
static const char *parse_cie_body(struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cur *c,
				  uint8_t version, const char *aug, struct cfi_cie *cie)
{
	uint8_t ra8;

	if (aug[0] && aug[0] != 'z')
		return "unknown augmentation";	/* "eh" and friends: a layout we cannot skip */
	if (version == 4) {
		if (!cur_u8(c, &cie->addr_size) || !cur_u8(c, &cie->seg_size))
			return "truncated CIE";
		if (cie->addr_size != 8 && cie->addr_size != 4)
			return "unsupported address size";
		if (cie->seg_size > 8)
			return "unsupported segment selector size";
	}
	if (!cur_uleb(c, &cie->code_align) || !cur_sleb(c, &cie->data_align))
		return "truncated CIE";
	if (version == 1) {
		if (!cur_u8(c, &ra8))
			return "truncated CIE";
		cie->ra_reg = ra8;
	} else if (!cur_uleb(c, &cie->ra_reg)) {
		return "truncated CIE";
	}
	if (aug[0] == 'z') {
		cie->aug_z = true;
		return parse_aug_data(b, s, c, aug, cie);
	}
	return NULL;
}

/*
 * Parse the CIE whose entry starts at @off of @s into @cie (initial
 * instructions run).  0 or -EINVAL with the reason set, naming the FDE
 * at @fde_off that pointed there.
 */
static int parse_cie(struct cfi_builder *b, const struct cfi_sec *s, uint64_t off,
		     uint64_t fde_off, struct cfi_cie *cie)
{
	struct cfi_cur c = { s->data + off, s->data + s->len };
	uint64_t len, id, cie_id;
	const char *aug, *what;
	unsigned int osz = 4;
	uint8_t version;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->addr_size = 8;
	cie->fde_enc = PE_ABSPTR;
	if (!cur_un(&c, 4, &len))
		goto out_of_range;
	if (len == 0xffffffff) {
		osz = 8;
		if (!cur_un(&c, 8, &len))
			goto out_of_range;
	}
	if ((uint64_t)(c.end - c.p) < len)
		goto out_of_range;
	c.end = c.p + len;
	cie_id = s->kind == CFI_EH_FRAME ? 0 : osz == 8 ? ~0ULL : 0xffffffffULL;
	if (!cur_un(&c, osz, &id) || id != cie_id)
		return cfi_fail(b, -EINVAL, "%s: FDE at 0x%llx: CIE pointer 0x%llx is not at a CIE",
				s->name, (unsigned long long)fde_off, (unsigned long long)off);
	what = "truncated CIE";
	if (!cur_u8(&c, &version))
		goto bad;
	what = "unsupported CIE version";
	if (version != 1 && version != 3 && (version != 4 || s->kind != CFI_DEBUG_FRAME))
		goto bad;
	aug = (const char *)c.p;
	c.p = memchr(c.p, 0, (size_t)(c.end - c.p));
	what = "unterminated augmentation string";
	if (!c.p)
		goto bad;
	c.p++;
	what = parse_cie_body(b, s, &c, version, aug, cie);
	if (what)
		goto bad;
	cie->insns = c.p;
	cie->insns_end = c.end;
	return cfi_eval__cie(b, s, cie);
out_of_range:
	return cfi_fail(b, -EINVAL, "%s: FDE at 0x%llx: CIE at 0x%llx runs past the end of the section",
			s->name, (unsigned long long)fde_off, (unsigned long long)off);
bad:
	return cfi_fail(b, -EINVAL, "%s: CIE at 0x%llx: %s", s->name, (unsigned long long)off, what);
}

static bool cie_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct cfi_builder *b = ctx;

	return b->cies[val - 1].off == *(const uint64_t *)key;
}

/* The CIE at @off, parsed now or earlier; NULL with the reason set in *@err. */
static const struct cfi_cie *get_cie(struct cfi_builder *b, const struct cfi_sec *s, uint64_t off,
				     uint64_t fde_off, int *err)
{
	uint64_t h = hash_u64(0, off), v;
	struct cfi_cie *n;

	v = htab__find(&b->cie_idx, h, cie_eq, b, &off);
	if (v)
		return &b->cies[v - 1];
	if (b->ncies >= CFI_MAX_CIES) {
		*err = cfi_fail(b, -E2BIG, "%s: more than %u CIEs", s->name, CFI_MAX_CIES);
		return NULL;
	}
	if (b->ncies == b->ccies) {
		size_t cap = b->ccies ? 2 * b->ccies : 8;

		n = realloc(b->cies, cap * sizeof(*n));
		if (!n) {
			*err = cfi_fail(b, -ENOMEM, "%s: out of memory", s->name);
			return NULL;
		}
		b->cies = n;
		b->ccies = cap;
	}
	*err = parse_cie(b, s, off, fde_off, &b->cies[b->ncies]);
	if (*err)
		return NULL;
	*err = htab__add(&b->cie_idx, h, b->ncies + 1);
	if (*err) {
		cfi_fail(b, *err, "%s: out of memory", s->name);
		return NULL;
	}
	b->st->cies++;
	return &b->cies[b->ncies++];
}

/*
 * The executable segment holding @pc, or NULL: the last one starting at
 * or before it (segments are sorted by vaddr), so a file with thousands
 * of program headers costs a log per FDE, not a scan.
 */
static const struct cfi_seg *find_seg(const struct cfi_builder *b, uint64_t pc)
{
	size_t lo = 0, hi = b->nsegs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->segs[mid].vaddr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < b->segs[lo - 1].end ? &b->segs[lo - 1] : NULL;
}

/*
 * Read the address range of the FDE at @c (after its CIE pointer) into
 * @f; false with *@what when malformed.
 */
static bool fde_range(struct cfi_builder *b, const struct cfi_sec *s, const struct cfi_cie *cie,
		      struct cfi_cur *c, struct cfi_fde *f, const char **what)
{
	uint64_t range, auglen;

	if (s->kind == CFI_EH_FRAME) {
		if (cfi_read_ptr(b, s, c, cie->fde_enc, false, &f->pc, what))
			return false;
		if (!cfi_read_format(c, cie->fde_enc & 0x0f, &range)) {
			*what = "truncated FDE";
			return false;
		}
	} else if (!cur_skip(c, cie->seg_size) || !cur_un(c, cie->addr_size, &f->pc) ||
		   !cur_un(c, cie->addr_size, &range)) {
		*what = "truncated FDE";
		return false;
	}
	if (cie->aug_z && (!cur_uleb(c, &auglen) || !cur_skip(c, auglen))) {
		*what = "augmentation data past the end";
		return false;
	}
	f->end = range > UINT64_MAX - f->pc ? UINT64_MAX : f->pc + range;
	f->insns = *c;
	return true;
}

/* One FDE whose body (after the CIE pointer) is @c: evaluated, or skipped and counted. */
static int do_fde(struct cfi_builder *b, const struct cfi_sec *s, uint64_t off, uint64_t cie_off,
		  struct cfi_cur *c)
{
	const struct cfi_cie *cie;
	const struct cfi_seg *seg;
	struct cfi_fde f = { .off = off };
	const char *what;
	int err;

	b->st->fdes++;
	if (cie_off >= s->len)
		return cfi_fail(b, -EINVAL, "%s: FDE at 0x%llx: CIE pointer out of range",
				s->name, (unsigned long long)off);
	cie = get_cie(b, s, cie_off, off, &err);
	if (!cie)
		return err;
	if (!fde_range(b, s, cie, c, &f, &what))
		return cfi_fail(b, -EINVAL, "%s: FDE at 0x%llx: %s", s->name, (unsigned long long)off, what);
	seg = find_seg(b, f.pc);
	if (f.end <= f.pc || !seg) {
		b->st->fdes_skipped++;
		return 0;
	}
	if (f.end > seg->end)
		f.end = seg->end;
	f.delta = seg->delta;
	/* Rows are u32 file offsets, the end row included. */
	if ((uint64_t)((int64_t)f.end + f.delta) > UINT32_MAX) {
		b->st->fdes_skipped++;
		return 0;
	}
	return cfi_eval__fde(b, s, cie, &f);
}

int cfi_walk(struct cfi_builder *b, const struct cfi_sec *s)
{
	struct cfi_cur c = { s->data, s->data + s->len }, body;
	uint64_t off, len, id, cie_off;
	unsigned int osz;
	int err;

	b->ncies = 0;
	htab__free(&b->cie_idx);
	while (c.p < c.end) {
		off = (uint64_t)(c.p - s->data);
		osz = 4;
		if (!cur_un(&c, 4, &len))
			return cfi_fail(b, -EINVAL, "%s: entry at 0x%llx: truncated length",
					s->name, (unsigned long long)off);
		if (len == 0)
			break;	/* the terminator (crtend.o's), or padding after the last entry */
		if (len == 0xffffffff) {
			osz = 8;
			if (!cur_un(&c, 8, &len))
				return cfi_fail(b, -EINVAL, "%s: entry at 0x%llx: truncated length",
						s->name, (unsigned long long)off);
		} else if (len >= 0xfffffff0) {
			return cfi_fail(b, -EINVAL, "%s: entry at 0x%llx: reserved length 0x%llx",
					s->name, (unsigned long long)off, (unsigned long long)len);
		}
		if ((uint64_t)(c.end - c.p) < len)
			return cfi_fail(b, -EINVAL, "%s: entry at 0x%llx: length 0x%llx past the end",
					s->name, (unsigned long long)off, (unsigned long long)len);
		body.p = c.p;
		body.end = c.p + len;
		c.p = body.end;
		if (!cur_un(&body, osz, &id))
			return cfi_fail(b, -EINVAL, "%s: entry at 0x%llx: too short for its id",
					s->name, (unsigned long long)off);
		if (s->kind == CFI_EH_FRAME) {
			if (id == 0)
				continue;	/* a CIE: parsed when an FDE points at it */
			/* Relative to the pointer itself, backwards. */
			cie_off = (uint64_t)(body.p - s->data) - osz;
			cie_off = id > cie_off ? UINT64_MAX : cie_off - id;
		} else {
			if (id == (osz == 8 ? ~0ULL : 0xffffffffULL))
				continue;
			cie_off = id;
		}
		err = do_fde(b, s, off, cie_off, &body);
		if (err)
			return err;
	}
	return 0;
}
