// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the CPython 3.11+ location table decoder
 * (runtime/python/pycode.h, pylinetable__line): the input is 4 bytes of
 * co_firstlineno (little-endian), then a co_linetable.
 *
 * The contract held, against a second decoder written here from
 * InternalDocs/locations.md in another shape (the whole table unrolled to
 * a line per code unit, as co_positions() does): every index the table's
 * well-formed entries cover answers 0 with the same line (-1 for "no
 * location"); past them, -EBADMSG when an entry was malformed (no high
 * bit, cut short, a varint over 32 bits, a line past int32), else
 * -ENOENT; *line untouched on error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/python/pycode.h"

#define FUZZ_NAME "fuzz_pylinetable"
#include "fuzz_common.h"

#define MAX_TABLE 8192
#define MAX_UNITS (8 * MAX_TABLE)

static int32_t lines[MAX_UNITS];

/* The reference's varint: false when cut or over 32 bits. */
static int ref_varint(const uint8_t *t, size_t len, size_t *i, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	for (;;) {
		if (*i >= len || shift > 30)
			return 0;
		*v |= (uint64_t)(t[*i] & 63) << shift;
		shift += 6;
		if (!(t[(*i)++] & 64))
			return *v <= UINT32_MAX;
	}
}

/* Unroll the table: units covered in *@units; whether it ended well-formed. */
static int ref_unroll(const uint8_t *t, size_t len, int32_t first, size_t *units)
{
	int64_t line = first;
	size_t i = 0, k;
	uint64_t v;

	*units = 0;
	while (i < len) {
		uint8_t b = t[i++];
		int code = b >> 3 & 15, n = (b & 7) + 1, extra = code <= 9 ? 1 : code <= 12 ? 2 : 0;
		int64_t d = code >= 10 && code <= 12 ? code - 10 : 0;

		if (!(b & 0x80) || len - i < (size_t)extra)
			return 0;
		i += extra;
		if (code == 13 || code == 14) {
			if (!ref_varint(t, len, &i, &v))
				return 0;
			d = v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		}
		for (k = 0; code == 14 && k < 3; k++)
			if (!ref_varint(t, len, &i, &v))
				return 0;
		line += d;
		if (line < INT32_MIN || line > INT32_MAX)
			return 0;
		for (k = 0; k < (size_t)n; k++)
			lines[(*units)++] = code == 15 ? -1 : (int32_t)line;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t units, idx;
	int32_t first, line;
	int whole, err;

	if (size < 4 || size > MAX_TABLE + 4)
		return 0;
	memcpy(&first, data, 4);
	data += 4;
	size -= 4;
	whole = ref_unroll(data, size, first, &units);
	for (idx = 0; idx < units; idx++) {
		err = pylinetable__line(data, size, first, (uint32_t)idx, &line);
		CHECK(err == 0);
		CHECK(line == lines[idx]);
	}
	line = 12345;
	err = pylinetable__line(data, size, first, (uint32_t)units, &line);
	CHECK(err == (whole ? -ENOENT : -EBADMSG));
	CHECK(line == 12345);
	CHECK(pylinetable__line(data, size, first, UINT32_MAX, &line) == err);
	return 0;
}
