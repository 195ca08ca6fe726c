// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_eval: the DWARF call-frame instructions of a CIE and an FDE, run
 * into rows (DWARF 5, 6.4.2; and the GNU extensions gcc emits).
 *
 * Only what the BPF unwinder can use is tracked: the CFA rule, rbp (6)
 * and the return address (16).  Other registers' rules are parsed and
 * dropped.  A row is computed each time the location advances, and kept
 * only when its rule differs from the row before: most advances change a
 * register the table does not hold (rbx pushed...).  Instructions past
 * the FDE's end are not run: their rows could never be used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfsym.h"
#include "unwind/cfi_int.h"

/* DW_CFA_*: the three with an operand in the low 6 bits, then the rest. */
#define CFA_advance_loc		0x1
#define CFA_offset		0x2
#define CFA_restore		0x3
#define CFA_nop			0x00
#define CFA_set_loc		0x01
#define CFA_advance_loc1	0x02
#define CFA_advance_loc2	0x03
#define CFA_advance_loc4	0x04
#define CFA_offset_extended	0x05
#define CFA_restore_extended	0x06
#define CFA_undefined		0x07
#define CFA_same_value		0x08
#define CFA_register		0x09
#define CFA_remember_state	0x0a
#define CFA_restore_state	0x0b
#define CFA_def_cfa		0x0c
#define CFA_def_cfa_register	0x0d
#define CFA_def_cfa_offset	0x0e
#define CFA_def_cfa_expression	0x0f
#define CFA_expression		0x10
#define CFA_offset_extended_sf	0x11
#define CFA_def_cfa_sf		0x12
#define CFA_def_cfa_offset_sf	0x13
#define CFA_val_offset		0x14
#define CFA_val_offset_sf	0x15
#define CFA_val_expression	0x16
#define CFA_MIPS_advance_loc8	0x1d
#define CFA_GNU_args_size	0x2e
#define CFA_GNU_negative_offset_extended 0x2f

#define UNSUPPORTED_RULE	BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0)

/*
 * The PLT's CFA (binutils' x86-64 .plt and .plt.sec stubs): rsp + 8, + 8
 * once the stub has pushed its index, which is at (pc & 15) >= 11 (10
 * for .plt.sec's IBT stubs):
 * breg7 8; breg16 0; lit15; and; lit11 (or lit10); ge; lit3; shl; plus.
 */
static const uint8_t plt_expr[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
#define PLT_EXPR_LIT_AT	6

struct eval {
	struct cfi_builder *b;
	const struct cfi_sec *s;
	const struct cfi_cie *cie;
	const struct cfi_fde *f;	/* NULL: the CIE's initial instructions */
	struct cfi_regs r;
	struct cfi_regs stack[CFI_STATE_DEPTH];
	unsigned int depth;
	uint64_t loc;
	uint32_t first;			/* the FDE's first raw row */
	const char *what;		/* why it failed */
};

/* The packed rule of @r under @cie (include/bpfsym.h). */
static uint32_t rule_of(const struct cfi_cie *cie, const struct cfi_regs *r)
{
	uint32_t kind, off, neg = 0;
	bool fp = false;

	if (cie->signal)
		return BPFSYM_UNW_RULE(BPFSYM_UNW_SIGNAL, 0, 0, 0);
	if (cie->ra_reg != CFI_REG_RA)
		return UNSUPPORTED_RULE;
	if (r->ra_how == CFI_UNDEF)
		return BPFSYM_UNW_RULE(BPFSYM_UNW_END, 0, 0, 0);
	switch (r->cfa_how) {
	case CFI_CFA_REG:
		if (r->cfa_reg == CFI_REG_RSP)
			kind = BPFSYM_UNW_CFA_SP;
		else if (r->cfa_reg == CFI_REG_RBP)
			kind = BPFSYM_UNW_CFA_FP;
		else
			return UNSUPPORTED_RULE;
		if (r->cfa_off < 0 || r->cfa_off > BPFSYM_UNW_OFF_MAX)
			return UNSUPPORTED_RULE;
		off = (uint32_t)r->cfa_off;
		break;
	case CFI_CFA_PLT10:
	case CFI_CFA_PLT11:
		kind = BPFSYM_UNW_PLT;
		off = r->cfa_how == CFI_CFA_PLT10 ? 10 : 11;
		break;
	default:
		return UNSUPPORTED_RULE;
	}
	if (r->ra_how != CFI_OFFSET || r->ra_off != -8)
		return UNSUPPORTED_RULE;
	if (r->fp_how == CFI_OFFSET) {
		if (r->fp_off > 0 || r->fp_off < -(int64_t)BPFSYM_UNW_OFF_MAX)
			return UNSUPPORTED_RULE;
		fp = true;
		neg = (uint32_t)-r->fp_off;
	} else if (r->fp_how == CFI_OTHER) {
		return UNSUPPORTED_RULE;
	}
	return BPFSYM_UNW_RULE(kind, off, fp, neg);
}

/* Append the row for [e->loc, upto) unless it repeats the one before. */
static int emit(struct eval *e, uint64_t upto)
{
	struct cfi_builder *b = e->b;
	struct cfi_row *n;
	uint32_t rule;

	if (!e->f || e->loc >= e->f->end || upto <= e->loc)
		return 0;
	rule = rule_of(e->cie, &e->r);
	if (b->nraw > e->first && b->raw[b->nraw - 1].rule == rule)
		return 0;
	if (b->nraw >= b->max_rows)
		return cfi_fail(b, -E2BIG, "%s: FDE at 0x%llx: more than %zu rows", e->s->name,
				(unsigned long long)e->f->off, b->max_rows);
	if (b->nraw == b->craw) {
		size_t cap = b->craw ? 2 * b->craw : 1024;

		n = realloc(b->raw, cap * sizeof(*n));
		if (!n)
			return cfi_fail(b, -ENOMEM, "%s: out of memory", e->s->name);
		b->raw = n;
		b->craw = cap;
	}
	b->raw[b->nraw].pc = (uint32_t)((int64_t)e->loc + e->f->delta);
	b->raw[b->nraw].rule = rule;
	b->nraw++;
	return 0;
}

/* Move to @to (rows between are emitted); -EINVAL when it goes back. */
static int move_to(struct eval *e, uint64_t to)
{
	int err;

	if (!e->f) {
		e->what = "advance in a CIE's initial instructions";
		return -EINVAL;
	}
	if (to < e->loc) {
		e->what = "location moves backwards";
		return -EINVAL;
	}
	err = emit(e, to);
	e->loc = to;
	return err;
}

static int advance(struct eval *e, uint64_t delta)
{
	uint64_t d;

	if (__builtin_mul_overflow(delta, e->cie->code_align, &d) || d > UINT64_MAX - e->loc) {
		e->what = "advance past the address space";
		return -EINVAL;
	}
	return move_to(e, e->loc + d);
}

/* @u * the data alignment factor, the offsets DW_CFA_*offset* carry. */
static bool factored(const struct eval *e, int64_t u, int64_t *out)
{
	return !__builtin_mul_overflow(u, e->cie->data_align, out);
}

/* Set the rule of register @reg (only rbp and the RA are kept). */
static void set_reg(struct eval *e, uint64_t reg, uint8_t how, int64_t off)
{
	if (reg == CFI_REG_RBP) {
		e->r.fp_how = how;
		e->r.fp_off = off;
	} else if (reg == CFI_REG_RA) {
		e->r.ra_how = how;
		e->r.ra_off = off;
	}
}

/* DW_CFA_restore: the CIE's rule again (in the CIE itself: none). */
static void restore_reg(struct eval *e, uint64_t reg)
{
	const struct cfi_regs *init = &e->cie->init;

	if (!e->f)
		set_reg(e, reg, CFI_UNSET, 0);
	else if (reg == CFI_REG_RBP)
		set_reg(e, reg, init->fp_how, init->fp_off);
	else if (reg == CFI_REG_RA)
		set_reg(e, reg, init->ra_how, init->ra_off);
}

/* An operand register and a factored offset (signed or not): the register's rule. */
static int reg_offset(struct eval *e, struct cfi_cur *c, uint64_t reg, bool sf, uint8_t how, bool neg)
{
	uint64_t u;
	int64_t v;

	if (sf ? !cur_sleb(c, &v) : !cur_uleb(c, &u))
		goto truncated;
	if (!sf) {
		if (u > INT64_MAX)
			goto overflow;
		v = (int64_t)u;
	}
	if (!factored(e, v, &v) || (neg && v == INT64_MIN))
		goto overflow;
	set_reg(e, reg, how, neg ? -v : v);
	return 0;
truncated:
	e->what = "truncated instruction";
	return -EINVAL;
overflow:
	e->what = "offset overflows";
	return -EINVAL;
}

/* A DW_CFA_def_cfa_expression block: the PLT's, or any other. */
static int cfa_expr(struct eval *e, struct cfi_cur *c)
{
	uint64_t len;
	const uint8_t *p;

	if (!cur_uleb(c, &len) || !cur_skip(c, len)) {
		e->what = "expression past the end";
		return -EINVAL;
	}
	p = c->p - len;
	e->r.cfa_how = CFI_CFA_EXPR;
	if (len == sizeof(plt_expr) && !memcmp(p, plt_expr, PLT_EXPR_LIT_AT) &&
	    !memcmp(p + PLT_EXPR_LIT_AT + 1, plt_expr + PLT_EXPR_LIT_AT + 1,
		    sizeof(plt_expr) - PLT_EXPR_LIT_AT - 1)) {
		if (p[PLT_EXPR_LIT_AT] == 0x3b)
			e->r.cfa_how = CFI_CFA_PLT11;
		else if (p[PLT_EXPR_LIT_AT] == 0x3a)
			e->r.cfa_how = CFI_CFA_PLT10;
	}
	return 0;
}

/* The CFA rule instructions: def_cfa, def_cfa_sf, _register, _offset, _offset_sf. */
static int cfa_op(struct eval *e, struct cfi_cur *c, uint8_t op)
{
	uint64_t reg = e->r.cfa_reg, u;
	int64_t v;

	if ((op == CFA_def_cfa || op == CFA_def_cfa_sf || op == CFA_def_cfa_register) &&
	    !cur_uleb(c, &reg))
		goto truncated;
	if (op == CFA_def_cfa_register) {
		e->r.cfa_reg = reg;
		e->r.cfa_how = CFI_CFA_REG;
		return 0;
	}
	if (op == CFA_def_cfa || op == CFA_def_cfa_offset) {
		if (!cur_uleb(c, &u))
			goto truncated;
		v = u > INT64_MAX ? INT64_MAX : (int64_t)u;	/* unsupported either way */
	} else {
		if (!cur_sleb(c, &v))
			goto truncated;
		if (!factored(e, v, &v)) {
			e->what = "offset overflows";
			return -EINVAL;
		}
	}
	e->r.cfa_off = v;
	if (op != CFA_def_cfa_offset && op != CFA_def_cfa_offset_sf) {
		e->r.cfa_reg = reg;
		e->r.cfa_how = CFI_CFA_REG;
	}
	return 0;
truncated:
	e->what = "truncated instruction";
	return -EINVAL;
}

static int state_op(struct eval *e, uint8_t op)
{
	if (op == CFA_remember_state) {
		if (e->depth == CFI_STATE_DEPTH) {
			e->what = "remember_state nested too deep";
			return -EINVAL;
		}
		e->stack[e->depth++] = e->r;
		return 0;
	}
	if (!e->depth) {
		e->what = "restore_state without remember_state";
		return -EINVAL;
	}
	e->r = e->stack[--e->depth];
	return 0;
}

/* Register rules that take a register operand (and maybe more). */
static int reg_op(struct eval *e, struct cfi_cur *c, uint8_t op)
{
	uint64_t reg, u;

	if (!cur_uleb(c, &reg))
		goto truncated;
	switch (op) {
	case CFA_offset_extended:
		return reg_offset(e, c, reg, false, CFI_OFFSET, false);
	case CFA_offset_extended_sf:
		return reg_offset(e, c, reg, true, CFI_OFFSET, false);
	case CFA_GNU_negative_offset_extended:
		return reg_offset(e, c, reg, false, CFI_OFFSET, true);
	case CFA_val_offset:
		return reg_offset(e, c, reg, false, CFI_OTHER, false);
	case CFA_val_offset_sf:
		return reg_offset(e, c, reg, true, CFI_OTHER, false);
	case CFA_restore_extended:
		restore_reg(e, reg);
		return 0;
	case CFA_undefined:
		set_reg(e, reg, CFI_UNDEF, 0);
		return 0;
	case CFA_same_value:
		set_reg(e, reg, CFI_SAME, 0);
		return 0;
	case CFA_register:
		if (!cur_uleb(c, &u))
			goto truncated;
		set_reg(e, reg, CFI_OTHER, 0);
		return 0;
	default:	/* expression, val_expression */
		if (!cur_uleb(c, &u) || !cur_skip(c, u)) {
			e->what = "expression past the end";
			return -EINVAL;
		}
		set_reg(e, reg, CFI_OTHER, 0);
		return 0;
	}
truncated:
	e->what = "truncated instruction";
	return -EINVAL;
}

/* The advance instructions with an operand of their own. */
static int advance_op(struct eval *e, struct cfi_cur *c, uint8_t op)
{
	static const unsigned int size[] = { [CFA_advance_loc1] = 1, [CFA_advance_loc2] = 2,
					     [CFA_advance_loc4] = 4 };
	uint64_t v;

	if (op == CFA_set_loc) {
		if (!e->f) {
			e->what = "set_loc in a CIE's initial instructions";
			return -EINVAL;
		}
		if (e->s->kind == CFI_EH_FRAME) {
			if (cfi_read_ptr(e->b, e->s, c, e->cie->fde_enc, false, &v, &e->what))
				return -EINVAL;
		} else if (!cur_un(c, e->cie->addr_size, &v)) {
			goto truncated;
		}
		return move_to(e, v);
	}
	if (!cur_un(c, op == CFA_MIPS_advance_loc8 ? 8 : size[op], &v))
		goto truncated;
	return advance(e, v);
truncated:
	e->what = "truncated instruction";
	return -EINVAL;
}

/* One instruction at @c. */
static int step(struct eval *e, struct cfi_cur *c)
{
	uint64_t u;
	uint8_t op;

	cur_u8(c, &op);
	switch (op >> 6) {
	case CFA_advance_loc:
		return advance(e, op & 0x3f);
	case CFA_offset:
		return reg_offset(e, c, op & 0x3f, false, CFI_OFFSET, false);
	case CFA_restore:
		restore_reg(e, op & 0x3f);
		return 0;
	}
	switch (op) {
	case CFA_nop:
		return 0;
	case CFA_set_loc:
	case CFA_advance_loc1:
	case CFA_advance_loc2:
	case CFA_advance_loc4:
	case CFA_MIPS_advance_loc8:
		return advance_op(e, c, op);
	case CFA_def_cfa:
	case CFA_def_cfa_sf:
	case CFA_def_cfa_register:
	case CFA_def_cfa_offset:
	case CFA_def_cfa_offset_sf:
		return cfa_op(e, c, op);
	case CFA_def_cfa_expression:
		return cfa_expr(e, c);
	case CFA_remember_state:
	case CFA_restore_state:
		return state_op(e, op);
	case CFA_GNU_args_size:
		if (cur_uleb(c, &u))
			return 0;
		e->what = "truncated instruction";
		return -EINVAL;
	case CFA_offset_extended:
	case CFA_offset_extended_sf:
	case CFA_GNU_negative_offset_extended:
	case CFA_val_offset:
	case CFA_val_offset_sf:
	case CFA_restore_extended:
	case CFA_undefined:
	case CFA_same_value:
	case CFA_register:
	case CFA_expression:
	case CFA_val_expression:
		return reg_op(e, c, op);
	}
	e->what = "unknown instruction";
	return -EINVAL;
}

/* Run the instructions at @c; stops early once past the FDE's end. */
static int run(struct eval *e, struct cfi_cur c)
{
	unsigned int ops = 0;
	int err;

	while (c.p < c.end) {
		if (e->f && e->loc >= e->f->end)
			return 0;
		if (++ops > CFI_MAX_OPS_PER_FDE) {
			e->what = "too many instructions";
			return -EINVAL;
		}
		err = step(e, &c);
		if (err)
			return err;
	}
	return 0;
}

int cfi_eval__cie(struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cie *cie)
{
	struct eval e = { .b = b, .s = s, .cie = cie };
	struct cfi_cur c = { cie->insns, cie->insns_end };
	int err;

	if (!cie->code_align) {
		e.what = "code alignment factor 0";
		err = -EINVAL;
	} else {
		err = run(&e, c);
	}
	if (err)
		return cfi_fail(b, err, "%s: CIE at 0x%llx: %s", s->name, (unsigned long long)cie->off,
				e.what ? e.what : "failed");
	cie->init = e.r;
	return 0;
}

int cfi_eval__fde(struct cfi_builder *b, const struct cfi_sec *s, const struct cfi_cie *cie,
		  const struct cfi_fde *f)
{
	struct eval e = { .b = b, .s = s, .cie = cie, .f = f, .r = cie->init, .loc = f->pc,
			  .first = (uint32_t)b->nraw };
	struct cfi_fde_rec *rec;
	int err;

	err = run(&e, f->insns);
	if (!err)
		err = emit(&e, f->end);
	if (err)
		return e.what ? cfi_fail(b, err, "%s: FDE at 0x%llx: %s", s->name,
					 (unsigned long long)f->off, e.what) : err;
	if (b->nfdes == b->cfdes) {
		size_t cap = b->cfdes ? 2 * b->cfdes : 256;

		rec = realloc(b->fdes, cap * sizeof(*rec));
		if (!rec)
			return cfi_fail(b, -ENOMEM, "%s: out of memory", s->name);
		b->fdes = rec;
		b->cfdes = cap;
	}
	rec = &b->fdes[b->nfdes];
	rec->start = (uint32_t)((int64_t)f->pc + f->delta);
	rec->end = (uint32_t)((int64_t)f->end + f->delta);
	rec->first = e.first;
	rec->nr = (uint32_t)(b->nraw - e.first);
	rec->seq = (uint32_t)b->nfdes;
	b->nfdes++;
	return 0;
}
