/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The input style of the report fuzz targets (fuzz_report, fuzz_pprof):
 * an input is read as a whole bpfsym.data file, and one whose first byte
 * is not the file magic's is also read in "records mode" (see
 * fuzz_report.c's top comment): each block a zstd frame made here, so the
 * mutations land on the records, not on a checksum.  Include after
 * fuzz_common.h.
 */
#ifndef BPFSYM_FUZZ_REPORT_INPUT_H
#define BPFSYM_FUZZ_REPORT_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "report/report_fmt.h"

/* A compression context as the reader wants its blocks; NULL when zstd fails. */
static __attribute__((unused)) ZSTD_CCtx *fuzz_report_cctx(void)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();

	/* Level 1: the reader accepts any level, and the fuzzer wants speed. */
	if (!c || ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1))) {
		ZSTD_freeCCtx(c);
		return NULL;
	}
	return c;
}

/*
 * Records mode: @data as a list of chunks (a little-endian u16 length,
 * then that many bytes; the last chunk takes whatever is left), each made
 * one block of a report file, compressed with @cctx (set up with the
 * checksum and declared size the reader insists on).  The file, which the
 * caller frees, or NULL.
 */
static __attribute__((unused)) uint8_t *fuzz_report_wrap(ZSTD_CCtx *cctx, const uint8_t *data, size_t len,
							 size_t *out_len)
{
	size_t pos = 1, cap = RPT_FILE_HDR_LEN, off = RPT_FILE_HDR_LEN, n, z;
	uint8_t *out;

	/*
	 * Each chunk but the last uses 2 length bytes, so there are at most
	 * len / 2 + 1, each a block header and a frame of at most its bytes,
	 * 1/256 more and 64 (ZSTD_compressBound() of a small input).
	 */
	cap += (len / 2 + 1) * RPT_BLOCK_HDR_LEN + ZSTD_compressBound(len) + (len / 2 + 1) * 64;
	out = malloc(cap);
	if (!out)
		return NULL;
	memcpy(out, RPT_FILE_MAGIC, RPT_MAGIC_LEN);
	rpt_put_le32(out + 8, RPT_VERSION);
	rpt_put_le32(out + 12, 0);
	while (pos < len) {
		n = len - pos >= 2 ? (size_t)data[pos] | (size_t)data[pos + 1] << 8 : 0;
		pos += len - pos >= 2 ? 2 : 1;
		if (n > len - pos)
			n = len - pos;
		z = ZSTD_compress2(cctx, out + off + RPT_BLOCK_HDR_LEN, cap - off - RPT_BLOCK_HDR_LEN,
				   data + pos, n);
		CHECK(!ZSTD_isError(z));
		rpt_block_hdr_fill(out + off, (uint32_t)z, (uint32_t)n);
		off += RPT_BLOCK_HDR_LEN + z;
		pos += n;
	}
	*out_len = off;
	return out;
}

#endif /* BPFSYM_FUZZ_REPORT_INPUT_H */
