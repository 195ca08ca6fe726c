// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pycode: code objects, str objects and location tables of CPython
 * 3.11-3.13 read from another process (pycode.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/python/pycode.h"

/* --- the location table (InternalDocs/locations.md) --- */

/* Location entry codes (bits 3-6 of an entry's first byte). */
#define LOC_ONE_LINE0	10	/* 10, 11, 12: the line moves by code - 10, two column bytes */
#define LOC_NO_COLUMNS	13	/* a signed varint line delta */
#define LOC_LONG	14	/* line delta, end line delta, start and end columns: varints */
#define LOC_NONE	15	/* no location; the line does not move */

/* An unsigned varint: 6 bits a byte, bit 6 set when another follows. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *val)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return -EBADMSG;
		b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	if (v > UINT32_MAX)
		return -EBADMSG;
	*val = (uint32_t)v;
	return 0;
}

/* A signed varint: the sign in the low bit of an unsigned one. */
static int svarint(const uint8_t *t, size_t len, size_t *i, int64_t *val)
{
	uint32_t u;
	int err = varint(t, len, i, &u);

	if (!err)
		*val = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return err;
}

/* The line delta of the entry whose first byte (code @code) was just read; *@i past the entry. */
static int entry_delta(const uint8_t *t, size_t len, size_t *i, unsigned code, int64_t *delta)
{
	uint32_t skip;
	int k, err = 0;

	*delta = 0;
	switch (code) {
	case LOC_NONE:
		return 0;
	case LOC_LONG:
		err = svarint(t, len, i, delta);
		for (k = 0; !err && k < 3; k++)
			err = varint(t, len, i, &skip);
		return err;
	case LOC_NO_COLUMNS:
		return svarint(t, len, i, delta);
	case LOC_ONE_LINE0:
	case LOC_ONE_LINE0 + 1:
	case LOC_ONE_LINE0 + 2:
		*delta = code - LOC_ONE_LINE0;
		k = 2;
		break;
	default:	/* the short forms 0-9: the same line, one column byte */
		k = 1;
	}
	if (len - *i < (size_t)k)
		return -EBADMSG;
	*i += k;
	return 0;
}

int pylinetable__line(const uint8_t *tab, size_t len, int32_t firstlineno, uint32_t index,
		      int32_t *line)
{
	int64_t cur = firstlineno, delta;
	uint64_t addr = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t b = tab[i++];
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1;
		int err;

		if (!(b & 0x80))
			return -EBADMSG;
		err = entry_delta(tab, len, &i, code, &delta);
		if (err)
			return err;
		cur += delta;
		if (cur < INT32_MIN || cur > INT32_MAX)
			return -EBADMSG;
		if (index < addr + n) {
			*line = code == LOC_NONE ? -1 : (int32_t)cur;
			return 0;
		}
		addr += n;
	}
	return -ENOENT;
}

/* --- str objects (PEP 393) --- */

/* PyASCIIObject.state bits, the same in 3.11-3.13 (cpython/unicodeobject.h). */
#define STATE_KIND(s)		(((s) >> 2) & 7)
#define STATE_COMPACT(s)	(((s) >> 5) & 1)
#define STATE_ASCII(s)		(((s) >> 6) & 1)
/* Code points read per process read. */
#define STR_CHUNK		256

/* Append code point @c to @buf as UTF-8 if it fits in @cap - 1: false when it does not. */
static int put_utf8(char *buf, size_t cap, size_t *len, uint32_t c)
{
	uint8_t u[4];
	size_t n;

	if (!c || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = 0xfffd;
	if (c < 0x80) {
		u[0] = (uint8_t)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (uint8_t)(0xc0 | c >> 6);
		u[1] = (uint8_t)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (uint8_t)(0xe0 | c >> 12);
		u[1] = (uint8_t)(0x80 | (c >> 6 & 63));
		u[2] = (uint8_t)(0x80 | (c & 63));
		n = 3;
	} else {
		u[0] = (uint8_t)(0xf0 | c >> 18);
		u[1] = (uint8_t)(0x80 | (c >> 12 & 63));
		u[2] = (uint8_t)(0x80 | (c >> 6 & 63));
		u[3] = (uint8_t)(0x80 | (c & 63));
		n = 4;
	}
	if (cap - 1 - *len < n)
		return 0;
	memcpy(buf + *len, u, n);
	*len += n;
	return 1;
}

/* Decode @nchars code points of @kind bytes each at @data, until @buf is full. */
static int decode(py_read_fn read, void *ctx, uint64_t data, unsigned kind, uint64_t nchars,
		  char *buf, size_t cap, size_t *len)
{
	uint8_t chunk[STR_CHUNK * 4];
	uint64_t done = 0;

	while (done < nchars) {
		uint64_t n = nchars - done < STR_CHUNK ? nchars - done : STR_CHUNK, k;
		int err = read(ctx, data + done * kind, chunk, (size_t)(n * kind));

		if (err)
			return err;
		for (k = 0; k < n; k++) {
			uint32_t c;

			if (kind == 1)
				c = chunk[k];
			else if (kind == 2)
				c = (uint32_t)chunk[2 * k] | (uint32_t)chunk[2 * k + 1] << 8;
			else
				memcpy(&c, chunk + 4 * k, 4);
			if (!put_utf8(buf, cap, len, c))
				return 0;	/* full: cut here */
		}
		done += n;
	}
	return 0;
}

int pycode__str(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		uint64_t obj, char *buf, size_t cap, size_t *len)
{
	uint8_t h[128];
	uint64_t type, data, nchars;
	uint32_t state;
	int64_t length;
	unsigned kind;
	int err;

	*len = 0;
	buf[0] = 0;
	if (cap < 1 || l->str_ascii_size > sizeof(h))
		return -EINVAL;
	/* The smallest header: a short string may end the memory right after it. */
	err = read(ctx, obj, h, l->str_ascii_size);
	if (err)
		return err;
	memcpy(&type, h + l->ob_type, 8);
	memcpy(&length, h + l->str_length, 8);
	memcpy(&state, h + l->str_state, 4);
	kind = STATE_KIND(state);
	if (type != l->str_type + bias || length < 0 || (kind != 1 && kind != 2 && kind != 4) ||
	    (STATE_ASCII(state) && kind != 1))
		return -EINVAL;
	if (!STATE_COMPACT(state)) {
		err = read(ctx, obj + l->str_data, &data, sizeof(data));
		if (err)
			return err;
	} else {
		data = obj + (STATE_ASCII(state) ? l->str_ascii_size : l->str_compact_size);
	}
	/* More code points than bytes of room can only be cut: read no more than that. */
	nchars = (uint64_t)length < cap ? (uint64_t)length : cap;
	err = decode(read, ctx, data, kind, nchars, buf, cap, len);
	buf[*len] = 0;
	return err;
}

/* --- code objects --- */

/* Read the co_linetable bytes object at @tab into @c, when it is one and under the cap. */
static void read_linetable(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
			   uint64_t tab, struct py_code *c)
{
	uint8_t h[64];
	uint64_t type;
	int64_t size;

	if (l->bytes_sval > sizeof(h) || read(ctx, tab, h, l->bytes_sval))
		return;
	memcpy(&type, h + l->ob_type, 8);
	memcpy(&size, h + l->bytes_size, 8);
	if (type != l->bytes_type + bias || size <= 0 || (uint64_t)size > PY_LINETABLE_MAX)
		return;
	c->linetable = malloc((size_t)size);
	if (!c->linetable)
		return;
	if (read(ctx, tab + l->bytes_sval, c->linetable, (size_t)size)) {
		free(c->linetable);
		c->linetable = NULL;
		return;
	}
	c->linetable_len = (size_t)size;
}

int32_t pycode__line(const struct py_code *c, uint32_t index)
{
	int32_t line;

	if (index == PY_INDEX_BEFORE)
		return c->firstlineno;
	if (!c->linetable ||
	    pylinetable__line(c->linetable, c->linetable_len, c->firstlineno, index, &line))
		return -1;
	return line;
}

void pycode__release(struct py_code *c)
{
	free(c->linetable);
	c->linetable = NULL;
	c->linetable_len = 0;
}

int pycode__read(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		 uint64_t code, uint32_t firstlineno, struct py_code *out)
{
	uint8_t h[256];
	uint64_t type, qualname, filename, linetable;
	int32_t first;
	int err;

	out->func[0] = out->file[0] = 0;
	out->func_len = out->file_len = 0;
	out->linetable = NULL;
	out->linetable_len = 0;
	/* Every field we read is before the bytecode. */
	if (l->co_code_adaptive > sizeof(h))
		return -EINVAL;
	err = read(ctx, code, h, l->co_code_adaptive);
	if (err)
		return err;
	memcpy(&type, h + l->ob_type, 8);
	memcpy(&first, h + l->co_firstlineno, 4);
	memcpy(&qualname, h + l->co_qualname, 8);
	memcpy(&filename, h + l->co_filename, 8);
	memcpy(&linetable, h + l->co_linetable, 8);
	if (type != l->code_type + bias || (uint32_t)first != firstlineno)
		return -EINVAL;
	out->firstlineno = first;
	err = pycode__str(read, ctx, l, bias, qualname, out->func, sizeof(out->func),
			  &out->func_len);
	if (!err)
		err = pycode__str(read, ctx, l, bias, filename, out->file, sizeof(out->file),
				  &out->file_len);
	if (err == -EFAULT)
		err = -EINVAL;	/* a code object whose names lead nowhere is not one */
	if (err)
		return err;
	read_linetable(read, ctx, l, bias, linetable, out);
	return 0;
}
