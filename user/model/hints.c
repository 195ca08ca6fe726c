// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hints: parsing --map-anon FILE@PID,START,LEN[,OFFSET]. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/hints.h"
#include "base/util.h"

/* The longest number we take: 0x + 16 digits, or 22 octal digits, with room. */
#define NUM_MAX 32

/* Parse the @len bytes at @s as one number into *@v; 0 or -EINVAL. */
static int parse_field(const char *s, size_t len, uint64_t *v)
{
	char buf[NUM_MAX + 1];

	if (!len || len > NUM_MAX)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return parse_u64(buf, v) ? -EINVAL : 0;
}

static int fail(char *err, size_t errlen, const char *why)
{
	if (errlen)
		snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int anon_hint__parse(const char *arg, struct anon_hint *out, char *err, size_t errlen)
{
	static const char *const names[] = { "PID", "START", "LEN", "OFFSET" };
	uint64_t v[4] = { 0, 0, 0, 0 };
	const char *at, *p, *comma;
	size_t n = 0, len;
	char why[96];

	memset(out, 0, sizeof(*out));
	at = arg ? strrchr(arg, '@') : NULL;
	if (!at)
		return fail(err, errlen, "expected FILE@PID,START,LEN[,OFFSET]");
	if (at == arg)
		return fail(err, errlen, "the FILE before '@' is empty");
	for (p = at + 1; ; p = comma + 1) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 4)
			return fail(err, errlen, "too many fields: expected FILE@PID,START,LEN[,OFFSET]");
		if (parse_field(p, len, &v[n])) {
			snprintf(why, sizeof(why), "%s is not a number (C notation: 0x.. or decimal)", names[n]);
			return fail(err, errlen, why);
		}
		n++;
		if (!comma)
			break;
	}
	if (n < 3)
		return fail(err, errlen, "expected FILE@PID,START,LEN[,OFFSET]: START and LEN are needed");
	if (v[0] == 0 || v[0] > INT32_MAX)
		return fail(err, errlen, "PID must be a positive process id");
	if (v[2] == 0)
		return fail(err, errlen, "LEN must not be 0");
	if (v[1] + v[2] < v[1])
		return fail(err, errlen, "START + LEN is past the end of the address space");
	if (v[3] + v[2] < v[3])
		return fail(err, errlen, "OFFSET + LEN is past 2^64");
	out->file = arg;
	out->file_len = (size_t)(at - arg);
	out->pid = (uint32_t)v[0];
	out->start = v[1];
	out->len = v[2];
	out->offset = v[3];
	return 0;
}
