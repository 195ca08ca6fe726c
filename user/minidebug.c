// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * minidebug: bounded xz decompression of .gnu_debugdata.
 *
 * The section comes from a file we do not trust, so it may be an xz bomb:
 * a few KiB that expand to gigabytes, or a header claiming any size.  The
 * output buffer therefore starts small and doubles only as the decoder
 * fills it, and decoding stops as soon as it would pass the cap; the time
 * spent is bounded by the cap too, since xz decodes at a roughly constant
 * rate per output byte.
 */
#include <errno.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>

#include "minidebug.h"

/*
 * xz -9 (and -9e) uses a 64 MiB dictionary, the largest of the presets,
 * and the decoder needs a little more than the dictionary.  Only the pages
 * really written are touched, so a small file costs little under it.
 */
#define DECODER_MEMLIMIT	(80ULL << 20)
/* A first guess at the output for a compression ratio of 4, at least this. */
#define FIRST_CHUNK		(64UL << 10)

static int lzma_err(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return -ENOMEM;
	case LZMA_MEMLIMIT_ERROR:
		return -E2BIG;
	default:
		/* FORMAT, DATA, OPTIONS, BUF (truncated input), ... */
		return -EBADMSG;
	}
}

int minidebug__decompress(const void *in, size_t in_len, size_t max_out,
			  void **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap, limit, grown;
	uint8_t *buf, *tmp;
	lzma_ret ret;
	int err;

	*out = NULL;
	*out_len = 0;
	/*
	 * One byte of room past the cap: a stream of exactly @max_out bytes
	 * can then reach its end (and have its index and check verified)
	 * instead of being taken for a longer one.
	 */
	limit = max_out < SIZE_MAX ? max_out + 1 : max_out;
	cap = in_len < SIZE_MAX / 4 ? in_len * 4 : SIZE_MAX;
	if (cap < FIRST_CHUNK)
		cap = FIRST_CHUNK;
	if (cap > limit)
		cap = limit;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	ret = lzma_stream_decoder(&strm, DECODER_MEMLIMIT, LZMA_CONCATENATED);
	if (ret != LZMA_OK) {
		free(buf);
		return lzma_err(ret);
	}
	strm.next_in = in;
	strm.avail_in = in_len;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			err = lzma_err(ret);
			goto fail;
		}
		if (strm.avail_out)
			continue;
		if (cap == limit) {
			err = -E2BIG;
			goto fail;
		}
		grown = cap > limit / 2 ? limit : cap * 2;
		tmp = realloc(buf, grown);
		if (!tmp) {
			err = -ENOMEM;
			goto fail;
		}
		buf = tmp;
		strm.next_out = buf + cap;
		strm.avail_out = grown - cap;
		cap = grown;
	}
	lzma_end(&strm);
	if (strm.total_out > max_out) {
		free(buf);
		return -E2BIG;
	}
	*out = buf;
	*out_len = (size_t)strm.total_out;
	return 0;
fail:
	lzma_end(&strm);
	free(buf);
	return err;
}
