// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the --map-anon parser.  Besides not crashing, an
 * accepted hint must satisfy what the contract promises: a FILE that is a
 * non-empty prefix ending at the last '@', PID > 0, LEN > 0, no wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/hints.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct anon_hint h;
	char err[128], *arg;

	if (size > 4096)
		return 0;
	arg = malloc(size + 1);
	if (!arg)
		return 0;
	memcpy(arg, data, size);
	arg[size] = '\0';
	if (!anon_hint__parse(arg, &h, err, sizeof(err))) {
		if (h.file != arg || !h.file_len || arg[h.file_len] != '@' ||
		    strchr(arg + h.file_len + 1, '@') || !h.pid || !h.len ||
		    h.start + h.len < h.start || h.offset + h.len < h.offset)
			abort();
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();
	}
	free(arg);
	return 0;
}
