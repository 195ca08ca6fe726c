// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * minidebug: bounded xz decompression of .gnu_debugdata.
 *
 * The section comes from a file we do not trust, so it may be an xz bomb:
 * a few KiB that expand to gigabytes, or an index claiming any size.  A
 * stream whose index admits more than the cap is refused at once; for the
 * others the output buffer starts small and doubles only as the decoder
 * fills it, and decoding stops as soon as it would pass the cap: the time
 * spent is bounded by the cap too, since xz decodes at a roughly constant
 * rate per output byte.
 */
#include <errno.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbolize/elf/minidebug.h"

/*
 * xz -9 (and -9e) uses a 64 MiB dictionary, the largest of the presets,
 * and the decoder needs a little more than the dictionary.  Only the pages
 * really written are touched, so a small file costs little under it.
 */
#define DECODER_MEMLIMIT	(80ULL << 20)
/* A first guess at the output for a compression ratio of 4, at least this. */
#define FIRST_CHUNK		(64UL << 10)
/* An index lists a few blocks; this is room for thousands. */
#define INDEX_MEMLIMIT		(1ULL << 20)

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

/*
 * Whether the index of the last stream in @in says it holds more than
 * @max_out bytes: an honest bomb is then refused before any decoding.  An
 * index that lies is caught by the decoder, which checks it against the
 * blocks, and the output cap holds meanwhile; so any doubt here is false.
 */
static bool claims_too_much(const uint8_t *in, size_t len, size_t max_out)
{
	uint64_t memlimit = INDEX_MEMLIMIT;
	lzma_stream_flags footer;
	lzma_index *idx = NULL;
	size_t pos, end;
	bool over;

	/* Stream padding: zero words after the last stream. */
	while (len >= 4 && !in[len - 1] && !in[len - 2] && !in[len - 3] && !in[len - 4])
		len -= 4;
	if (len < 2 * LZMA_STREAM_HEADER_SIZE ||
	    lzma_stream_footer_decode(&footer, in + len - LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
	    footer.backward_size > len - 2 * LZMA_STREAM_HEADER_SIZE)
		return false;
	end = len - LZMA_STREAM_HEADER_SIZE;
	pos = end - (size_t)footer.backward_size;
	if (lzma_index_buffer_decode(&idx, &memlimit, NULL, in, &pos, end) != LZMA_OK)
		return false;
	over = lzma_index_uncompressed_size(idx) > max_out;
	lzma_index_end(idx, NULL);
	return over;
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
	if (claims_too_much(in, in_len, max_out))
		return -E2BIG;
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
