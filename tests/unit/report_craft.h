/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Recordings built record by record from docs/FORMAT.md, not by the
 * writer: what the writer never produces (test_report_corrupt.c), and
 * what older writers produced (test_report_v1.c).  Include after test.h;
 * needs <stdarg.h>, <zstd.h> and report/report_fmt.h.
 */
#ifndef BPFSYM_REPORT_CRAFT_H
#define BPFSYM_REPORT_CRAFT_H

/* Files built record by record, to reach what the writer never produces. */
struct craft {
	struct rpt_buf file, blk;
};

static __attribute__((unused)) void craft_begin_v(struct craft *c, uint32_t version)
{
	uint8_t h[RPT_FILE_HDR_LEN];

	memset(c, 0, sizeof(*c));
	memcpy(h, RPT_FILE_MAGIC, RPT_MAGIC_LEN);
	rpt_put_le32(h + 8, version);
	rpt_put_le32(h + 12, 0);
	rpt_buf__put(&c->file, h, sizeof(h));
}

/* A file of this version's header, no block yet. */
static __attribute__((unused)) void craft_begin(struct craft *c)
{
	craft_begin_v(c, RPT_VERSION);
}

static __attribute__((unused)) void craft_rec(struct craft *c, uint64_t type, const void *payload, size_t n)
{
	rpt_buf__uv(&c->blk, type);
	rpt_buf__uv(&c->blk, n);
	rpt_buf__put(&c->blk, payload, n);
}

/* A record of @nr varint fields. */
static __attribute__((unused)) void craft_recv(struct craft *c, uint64_t type, int nr, ...)
{
	struct rpt_buf p = {};
	va_list ap;

	va_start(ap, nr);
	while (nr--)
		rpt_buf__uv(&p, va_arg(ap, uint64_t));
	va_end(ap);
	craft_rec(c, type, p.data, p.len);
	rpt_buf__free(&p);
}

static __attribute__((unused)) void craft_header(struct craft *c)
{
	/* Five empty strings, six zero numbers. */
	static const uint8_t zeros[11];

	craft_rec(c, RPT_REC_HEADER, zeros, sizeof(zeros));
}

/* Compress the pending records into one block, with @ulen_adj added to the header's ulen. */
static __attribute__((unused)) void craft_block_adj(struct craft *c, int ulen_adj)
{
	size_t bound = ZSTD_compressBound(c->blk.len), n;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t *hdr;

	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	rpt_buf__reserve(&c->file, RPT_BLOCK_HDR_LEN + bound);
	hdr = c->file.data + c->file.len;
	n = ZSTD_compress2(cctx, hdr + RPT_BLOCK_HDR_LEN, bound, c->blk.data, c->blk.len);
	ZSTD_freeCCtx(cctx);
	if (!ASSERT_FALSE(ZSTD_isError(n), "ZSTD_compress2"))
		return;
	rpt_block_hdr_fill(hdr, (uint32_t)n, (uint32_t)(c->blk.len + ulen_adj));
	c->file.len += RPT_BLOCK_HDR_LEN + n;
	c->blk.len = 0;
}

static __attribute__((unused)) void craft_block(struct craft *c)
{
	craft_block_adj(c, 0);
}

static __attribute__((unused)) void craft_free(struct craft *c)
{
	rpt_buf__free(&c->file);
	rpt_buf__free(&c->blk);
}

#endif /* BPFSYM_REPORT_CRAFT_H */
