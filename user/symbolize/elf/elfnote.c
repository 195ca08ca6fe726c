// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "symbolize/elf/elfnote.h"

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

long elfnote__build_id(const uint8_t *p, uint64_t size, uint64_t align, bool swap,
		       size_t max, size_t *len)
{
	uint64_t pos = 0;

	align = align == 8 ? 8 : 4;
	while (size - pos >= 12) {
		uint32_t namesz = rd32(p + pos, swap), descsz = rd32(p + pos + 4, swap);
		uint32_t type = rd32(p + pos + 8, swap);
		uint64_t name_off = pos + 12, desc_off = align_up(name_off + namesz, align);

		/* namesz and descsz are 32-bit: these sums cannot wrap a 64-bit offset. */
		if (desc_off > size || descsz > size - desc_off)
			return -EBADMSG;
		pos = align_up(desc_off + descsz, align);
		if (pos > size)
			pos = size;
		if (type != NT_GNU_BUILD_ID || namesz != 4 || memcmp(p + name_off, "GNU", 4))
			continue;
		if (!descsz || descsz > max)
			continue;
		*len = descsz;
		return (long)desc_off;
	}
	return -ENOENT;
}
