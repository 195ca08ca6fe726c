// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One line of /proc/PID/maps, parsed strictly: every field bounded (hex
 * widths, a decimal inode that cannot overflow), nothing glued to the
 * inode, the path the rest of the line.  The file belongs to a process
 * bpfsym does not trust (its path names are its own).
 */
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "model/mapsline.h"

/* Up to 16 hex digits (max_digits fewer for narrower fields); p advanced. */
static bool parse_hex(const char **pp, const char *end, unsigned int max_digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int n;

	for (n = 0; p < end; p++, n++) {
		char c = *p;
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned int)((c | 0x20) - 'a' + 10);
		else
			break;
		v = v << 4 | d;
	}
	if (n == 0 || n > max_digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (p == *pp)
		return false;
	*pp = p;
	*out = v;
	return true;
}

/* One or more spaces (the kernel pads before the path). */
static bool skip_spaces(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

static bool expect(const char **pp, const char *end, char c)
{
	if (*pp >= end || **pp != c)
		return false;
	(*pp)++;
	return true;
}

/* "[heap]", "[stack]", "[stack:TID]", "[anon:NAME]", "[anon_shmem:NAME]" */
static bool bracket_is_anon(const char *path, size_t len)
{
	return (len == 6 && !memcmp(path, "[heap]", 6)) ||
	       (len >= 6 && !memcmp(path, "[stack", 6)) ||
	       (len >= 5 && !memcmp(path, "[anon", 5));
}

bool maps_line__parse(const char *p, const char *end, struct mapping *m, const char **path,
		      size_t *path_len)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	uint64_t major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&p, end, 16, &m->start) || !expect(&p, end, '-') ||
	    !parse_hex(&p, end, 16, &m->end) || !skip_spaces(&p, end))
		return false;
	if (m->start >= m->end || end - p < 4)
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return false;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 4;
	if (!skip_spaces(&p, end) || !parse_hex(&p, end, 16, &m->pgoff) ||
	    !skip_spaces(&p, end) || !parse_hex(&p, end, 8, &major) ||
	    !expect(&p, end, ':') || !parse_hex(&p, end, 8, &minor) ||
	    !skip_spaces(&p, end) || !parse_dec(&p, end, &m->ino))
		return false;
	m->dev = makedev((unsigned int)major, (unsigned int)minor);
	if (p < end && !skip_spaces(&p, end))
		return false;	/* junk glued to the inode */

	/* The rest of the line is the path: it may hold spaces. */
	len = (size_t)(end - p);
	if (len >= dlen && !memcmp(end - dlen, deleted, dlen)) {
		len -= dlen;
		m->deleted = 1;
	}
	*path = p;
	*path_len = len;
	if (!len)
		m->kind = MAPPING_ANON;
	else if (p[0] == '[' && p[len - 1] == ']')
		m->kind = bracket_is_anon(p, len) ? MAPPING_ANON : MAPPING_SPECIAL;
	else
		m->kind = MAPPING_FILE;
	return true;
}
