// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_enc: what the CFI parser and the instruction interpreter both use:
 * the DW_EH_PE pointer encodings (FDE addresses, DW_CFA_set_loc) and the
 * one-line reason a build fails with.  Below both, so neither depends on
 * the other.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "unwind/cfi_int.h"

int cfi_fail(struct cfi_builder *b, int err, const char *fmt, ...)
{
	va_list ap;

	if (b->err && b->errlen && !b->err[0]) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* The value of format @fmt (low nibble of an encoding), sign-extended: false if truncated or unknown. */
bool cfi_read_format(struct cfi_cur *c, uint8_t fmt, uint64_t *v)
{
	int64_t s;

	switch (fmt) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return cur_un(c, 8, v);
	case PE_UDATA2:
		return cur_un(c, 2, v);
	case PE_UDATA4:
		return cur_un(c, 4, v);
	case PE_ULEB128:
		return cur_uleb(c, v);
	case PE_SDATA2:
		if (!cur_un(c, 2, v))
			return false;
		*v = (uint64_t)(int64_t)(int16_t)*v;
		return true;
	case PE_SDATA4:
		if (!cur_un(c, 4, v))
			return false;
		*v = (uint64_t)(int64_t)(int32_t)*v;
		return true;
	case PE_SLEB128:
		if (!cur_sleb(c, &s))
			return false;
		*v = (uint64_t)s;
		return true;
	}
	return false;
}

int cfi_read_ptr(const struct cfi_builder *b, const struct cfi_sec *s, struct cfi_cur *c,
		 uint8_t enc, bool may_indirect, uint64_t *out, const char **what)
{
	uint64_t base = 0, v;
	size_t at;

	if (enc == PE_OMIT) {
		*what = "omitted pointer where one is required";
		return -EINVAL;
	}
	if ((enc & PE_INDIRECT) && !may_indirect) {
		*what = "indirect pointer";
		return -EINVAL;
	}
	if ((enc & 0x70) == PE_ALIGNED) {
		at = (size_t)(c->p - s->data);
		if (!cur_skip(c, ((s->vaddr + at + 7) & ~7ULL) - (s->vaddr + at)))
			goto truncated;
	}
	at = (size_t)(c->p - s->data);
	if (!cfi_read_format(c, enc & 0x0f, &v)) {
		if ((enc & 0x0f) > PE_UDATA8 && (enc & 0x0f) != PE_SLEB128 &&
		    (enc & 0x0f) != PE_SDATA2 && (enc & 0x0f) != PE_SDATA4 && (enc & 0x0f) != PE_SDATA8) {
			*what = "unknown pointer encoding";
			return -EINVAL;
		}
		goto truncated;
	}
	switch (enc & 0x70) {
	case PE_ABSPTR:
	case PE_ALIGNED:
		break;
	case PE_PCREL:
		base = s->vaddr + at;
		break;
	case PE_TEXTREL:
		if (!b->text) {
			*what = "textrel pointer without .text";
			return -EINVAL;
		}
		base = b->text;
		break;
	case PE_DATAREL:
		if (!b->got) {
			*what = "datarel pointer without .got";
			return -EINVAL;
		}
		base = b->got;
		break;
	default:
		*what = "unusable pointer encoding (funcrel or unknown)";
		return -EINVAL;
	}
	*out = base + v;
	return 0;
truncated:
	*what = "truncated pointer";
	return -EINVAL;
}

