/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_fmt: internal to the report writer, reader and views.  The byte
 * layout of bpfsym.data (docs/FORMAT.md is the reference; keep the two in
 * step), varint/zigzag and little-endian helpers, and the growable byte
 * buffer both sides need (their tables are base/htab's).  Everything here
 * is static inline so each user gets its own copy and no symbol leaks out
 * of the report module.
 */
#ifndef BPFSYM_REPORT_FMT_H
#define BPFSYM_REPORT_FMT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/htab.h"
#include "report/report.h"

/* File header: magic, u32 version, u32 incompatible-feature flags. */
#define RPT_FILE_MAGIC		"\x89" "BPFSYM\n"
#define RPT_MAGIC_LEN		8
/*
 * Version 2 (issue 27): FRAME kind 2 (interpreter frames, their identity
 * includes their name), MODULE kind 4 (a source file) with its runtime.
 * Version 1 files are still read: they hold none of those.
 */
#define RPT_VERSION		2
#define RPT_VERSION_MIN		1
#define RPT_FILE_HDR_LEN	16

/* Block header: u32 magic, u32 compressed len, u32 uncompressed len, u32 check. */
#define RPT_BLOCK_MAGIC		0x4b434c42u	/* "BLCK" in file byte order */
#define RPT_BLOCK_HDR_LEN	16
/* Neither length of a block may exceed this (the reader's memory bound). */
#define RPT_BLOCK_MAX		(64u << 20)
/* The writer starts a new block once this much is pending. */
#define RPT_BLOCK_TARGET	(1u << 20)
/* Whole files larger than this are refused by the reader. */
#define RPT_FILE_MAX		((uint64_t)4 << 30)
/*
 * Decompressed bytes the reader accepts from a file: RPT_RATIO_MAX per
 * file byte, and RPT_RATIO_FLOOR more.  Recordings compress their records
 * 2-3x (docs/FORMAT.md, "Reader limits"); zstd squeezes repeated records
 * 10000x, so without this a file of kilobytes is gigabytes of records to
 * decompress and parse.
 */
#define RPT_RATIO_MAX		64u
#define RPT_RATIO_FLOOR		(1u << 20)
/*
 * Bytes the reader may allocate for a file (report__charge): RPT_MEM_RATIO
 * per file byte, and RPT_MEM_FLOOR more, whatever counts its records
 * declare or repeat.  Recordings take 8-20x their size, 40x at the peak
 * for the most regular ones (docs/FORMAT.md).
 */
#define RPT_MEM_RATIO		128u
#define RPT_MEM_FLOOR		(4u << 20)

/*
 * zstd level 3, measured (docs/FORMAT.md, bench/size.sh): the recorder
 * compresses on the profiled machine, where its CPU is overhead; past
 * level 3 the bytes saved per CPU spent drop 5x (level 6: -7% size for
 * 2.3x the compression CPU), below it level 1 saves little CPU for +6%.
 */
#define RPT_ZSTD_LEVEL		3

/* Record types.  Types >= RPT_REC_OPTIONAL may be skipped by readers that do not know them. */
enum rpt_rec_type {
	RPT_REC_HEADER = 1,
	RPT_REC_STRING = 2,
	RPT_REC_MODULE = 3,
	RPT_REC_FRAME = 4,
	RPT_REC_STACK = 5,
	RPT_REC_SAMPLE = 6,
	RPT_REC_END = 7,
	RPT_REC_OPTIONAL = 64,
	RPT_REC_CGROUP = 64,	/* optional: older readers skip it (their samples keep the bare id) */
	RPT_REC_FORGET = 65,	/* optional: the writer forgot its index; identities may repeat after */
	RPT_REC_OFFCPU = 66,	/* optional: off-CPU time (issue 28); older readers skip it, it defines no id */
};

/* Ids are u32 and RPT_NONE is reserved, so a table holds fewer than this. */
#define RPT_ID_LIMIT		(UINT32_MAX - 1)

/* ---- little endian ---- */

static inline void rpt_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t rpt_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* FNV-1a 32 of the first 12 bytes of a block header: catches a flipped length. */
static inline uint32_t rpt_block_check(const uint8_t *hdr)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 12; i++) {
		h ^= hdr[i];
		h *= 16777619u;
	}
	return h;
}

static inline void rpt_block_hdr_fill(uint8_t *hdr, uint32_t clen, uint32_t ulen)
{
	rpt_put_le32(hdr, RPT_BLOCK_MAGIC);
	rpt_put_le32(hdr + 4, clen);
	rpt_put_le32(hdr + 8, ulen);
	rpt_put_le32(hdr + 12, rpt_block_check(hdr));
}

/* ---- varints (unsigned LEB128, at most 10 bytes) and zigzag ---- */

#define RPT_UV_MAX 10

static inline size_t rpt_uv_encode(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t rpt_zz_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t rpt_zz_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A bounded read cursor over decoded block data. */
struct rpt_cur {
	const uint8_t *p, *end;
};

/*
 * Decode one varint.  Refuses, with -EINVAL, one that runs past the end,
 * is longer than 10 bytes, overflows 64 bits or is not in its shortest
 * form (the writer only produces shortest forms).
 */
static inline int rpt_cur__uv(struct rpt_cur *c, uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	size_t i;

	for (i = 0; i < RPT_UV_MAX; i++, shift += 7) {
		uint8_t b;

		if (c->p + i >= c->end)
			return -EINVAL;
		b = c->p[i];
		if (i == RPT_UV_MAX - 1 && b > 1)
			return -EINVAL;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (i > 0 && b == 0)
				return -EINVAL;
			c->p += i + 1;
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

static inline int rpt_cur__u32(struct rpt_cur *c, uint32_t *v)
{
	uint64_t x;

	if (rpt_cur__uv(c, &x) || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* ---- growable byte buffer ---- */

struct rpt_buf {
	uint8_t *data;
	size_t len, cap;
};

/*
 * The capacity rpt_grow() gives an array of @cap elements that must hold
 * @need: @cap when it does, else doubled from @cap (16 at first) until it
 * does; 0 when that overflows.
 */
static inline size_t rpt_grow_cap(size_t cap, size_t need)
{
	size_t ncap = cap ? cap : 16;

	if (need <= cap)
		return cap;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return 0;
		ncap *= 2;
	}
	return ncap;
}

/*
 * Grow the array *@arr of *@cap elements of @elem bytes to hold @need;
 * capacity doubles so appends are amortized O(1).  0 or -ENOMEM.
 */
static inline int rpt_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = rpt_grow_cap(*cap, need);
	void *p;

	if (need <= *cap)
		return 0;
	if (!ncap || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static inline int rpt_buf__reserve(struct rpt_buf *b, size_t more)
{
	if (more > SIZE_MAX - b->len)
		return -ENOMEM;
	return rpt_grow((void **)&b->data, &b->cap, b->len + more, 1);
}

static inline int rpt_buf__put(struct rpt_buf *b, const void *p, size_t n)
{
	int err = rpt_buf__reserve(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static inline int rpt_buf__uv(struct rpt_buf *b, uint64_t v)
{
	int err = rpt_buf__reserve(b, RPT_UV_MAX);

	if (err)
		return err;
	b->len += rpt_uv_encode(b->data + b->len, v);
	return 0;
}

static inline void rpt_buf__free(struct rpt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Internal to the report module: the path report__open() read, or NULL from memory. */
const char *report__source(const struct report *r);

/*
 * The END record's fields (report_end.c): all of @h's END counters, with
 * @nr_samples as the sample count, appended to @b; 0 or -ENOMEM.  And
 * read back from @c into @h (0 for fields an older writer did not write);
 * 0 or -errno (-EINVAL: damage).
 */
int rpt_end__write(struct rpt_buf *b, const struct rpt_header *h, uint64_t nr_samples);
int rpt_end__read(struct rpt_cur *c, struct rpt_header *h);

/*
 * The HEADER's off-CPU fields (report_offcpu.c; appended after kfeatures,
 * written only when one of them is set, so files without off-CPU time
 * keep their bytes), onto @b, and read back from @c (0 for fields
 * absent).  0 or -errno (-EINVAL: damage).
 */
int rpt_offcpu__write_header(struct rpt_buf *b, const struct rpt_header *h);
int rpt_offcpu__read_header(struct rpt_cur *c, struct rpt_header *h);

/* The CGROUP records a reader read (report_cgroup.c): by id, and in file order. */
struct rpt_cgtab {
	struct rpt_cgroup *v;
	size_t nr, cap;
	struct htab tab;	/* hash_fin(id) -> index + 1 */
	size_t bytes;		/* what v, tab and the paths hold: a reader counts it */
};

/* At most this many CGROUP records in a file (more is damage, or a bomb). */
#define RPT_CGROUP_MAX (1u << 20)

/* A CGROUP record's payload for @id and @path, appended to @b; 0 or -errno (-EINVAL: see report_writer__cgroup). */
int rpt_cgroup__write(struct rpt_buf *b, uint64_t id, const char *path);

/*
 * Read a CGROUP record's payload from @c into @t.  0, -ENOMEM, or -EINVAL
 * with *@why saying what is wrong (a malformed field, id 0, a path empty,
 * not absolute, holding a NUL or over RPT_CGROUP_PATH_MAX, an id named
 * twice, more than RPT_CGROUP_MAX records).
 */
int rpt_cgtab__read(struct rpt_cgtab *t, struct rpt_cur *c, const char **why);

/*
 * Add (@id, @path) to @t unless @id is there already (the first path
 * wins: a merge of files from one boot names each id once).  0, -EINVAL
 * (id 0, a path the reader would refuse), -E2BIG (RPT_CGROUP_MAX), -ENOMEM.
 */
int rpt_cgtab__add(struct rpt_cgtab *t, uint64_t id, const char *path);

void rpt_cgtab__free(struct rpt_cgtab *t);


#endif /* BPFSYM_REPORT_FMT_H */
