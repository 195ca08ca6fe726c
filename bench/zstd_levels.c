// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * zstd_levels: what each zstd level would make of a real recording.  The
 * blocks of a bpfsym.data file are decompressed, then compressed again,
 * block by block, with the writer's parameters (one frame per block,
 * content size and checksum in it, one context reused), at each LEVEL:
 * the file size the writer would have written at that level, and the CPU
 * it would have spent compressing (the rest of the recorder's work does
 * not depend on the level).  Decompression, the reader's side, is timed
 * too.
 *
 *   cc -O2 -o zstd_levels bench/zstd_levels.c -lzstd
 *   ./zstd_levels FILE SAMPLES LEVEL...
 *
 * prints the records' bytes by type (uncompressed), then one line per level:
 *   level 3 bytes 65806 bps 6.54 blocks 9 comp_us 812.3 comp_ns_per_sample 80.7 ...
 * Times are CPU (CLOCK_PROCESS_CPUTIME_ID) per pass over the whole file,
 * the median of passes repeated for at least MIN_SECONDS per level.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define FILE_HDR	16
#define BLOCK_HDR	16
#define BLOCK_MAX	(64u << 20)
#define MIN_SECONDS	0.3
#define MAX_PASSES	1001

struct block {
	void *data;	/* decompressed records */
	size_t len;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Read every block of @path, decompressed; the count in *@nr.  NULL on error (said). */
static struct block *load(const char *path, size_t *nr, size_t *file_bytes)
{
	unsigned char hdr[BLOCK_HDR];
	struct block *v = NULL, *tmp;
	size_t n = 0, cap = 0;
	void *frame = NULL;
	FILE *f;

	f = fopen(path, "rb");
	if (!f || fread(hdr, 1, FILE_HDR, f) != FILE_HDR || memcmp(hdr, "\x89" "BPFSYM\n", 8)) {
		fprintf(stderr, "zstd_levels: '%s': not a bpfsym recording\n", path);
		goto fail;
	}
	*file_bytes = FILE_HDR;
	while (fread(hdr, 1, BLOCK_HDR, f) == BLOCK_HDR) {
		uint32_t clen = le32(hdr + 4), ulen = le32(hdr + 8);
		size_t got;

		if (memcmp(hdr, "BLCK", 4) || !clen || !ulen || clen > BLOCK_MAX || ulen > BLOCK_MAX) {
			fprintf(stderr, "zstd_levels: '%s': bad block header at block %zu\n", path, n);
			goto fail;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(v, cap * sizeof(*v));
			if (!tmp)
				goto nomem;
			v = tmp;
		}
		frame = malloc(clen);
		v[n].data = malloc(ulen);
		if (!frame || !v[n].data) {
			free(v[n].data);
			goto nomem;
		}
		if (fread(frame, 1, clen, f) != clen) {
			/* A recording cut short (SIGKILL) ends here. */
			free(v[n].data);
			break;
		}
		got = ZSTD_decompress(v[n].data, ulen, frame, clen);
		if (ZSTD_isError(got) || got != ulen) {
			fprintf(stderr, "zstd_levels: '%s': block %zu does not decompress\n", path, n);
			free(v[n].data);
			goto fail;
		}
		v[n++].len = ulen;
		*file_bytes += BLOCK_HDR + clen;
		free(frame);
		frame = NULL;
	}
	free(frame);
	fclose(f);
	*nr = n;
	return v;
nomem:
	fprintf(stderr, "zstd_levels: out of memory\n");
fail:
	free(frame);
	if (f)
		fclose(f);
	while (n--)
		free(v[n].data);
	free(v);
	return NULL;
}

/* Compress every block at @level into @out (room for the largest bound); total frame bytes, 0 on error. */
static size_t compress_all(ZSTD_CCtx *c, int level, const struct block *b, size_t nr, void **frames,
			   size_t *sizes, size_t bound)
{
	size_t i, total = 0, n;

	if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)))
		return 0;
	for (i = 0; i < nr; i++) {
		n = ZSTD_compress2(c, frames[i], bound, b[i].data, b[i].len);
		if (ZSTD_isError(n))
			return 0;
		sizes[i] = n;
		total += n;
	}
	return total;
}

/* A LEB128 varint at *@p (before @end); false when it runs past @end or 10 bytes. */
static bool get_uv(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 70) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/*
 * Where the bytes of the records go, by record type (docs/FORMAT.md),
 * uncompressed: "rec TYPE count N bytes B" lines.
 */
static void breakdown(const struct block *b, size_t nr)
{
	static const char *const names[] = { "?", "HEADER", "STRING", "MODULE", "FRAME", "STACK", "SAMPLE", "END" };
	uint64_t count[8] = { 0 }, bytes[8] = { 0 }, type, len;
	const unsigned char *p, *end, *start;
	size_t i, t;

	for (i = 0; i < nr; i++) {
		p = b[i].data;
		end = p + b[i].len;
		while (p < end) {
			start = p;
			if (!get_uv(&p, end, &type) || !get_uv(&p, end, &len) || len > (uint64_t)(end - p))
				break;
			p += len;
			t = type < 8 ? (size_t)type : 0;
			count[t]++;
			bytes[t] += (uint64_t)(p - start);
		}
	}
	for (t = 0; t < 8; t++)
		if (count[t])
			printf("rec %s count %llu bytes %llu\n", names[t], (unsigned long long)count[t],
			       (unsigned long long)bytes[t]);
}

/*
 * For comparison, what the file would take as one frame at the default
 * level: the records of every block in one compression context, as a
 * streaming compressor (perf -z) keeps it.  bpfsym's blocks are
 * independent on purpose (each is a unit of durability).
 */
static int one_frame(const struct block *b, size_t nr, size_t raw, double samples)
{
	size_t i, off = 0, n, bound = ZSTD_compressBound(raw);
	char *all = malloc(raw), *out = malloc(bound);
	int err = 1;

	if (!all || !out)
		goto out;
	for (i = 0; i < nr; i++) {
		memcpy(all + off, b[i].data, b[i].len);
		off += b[i].len;
	}
	n = ZSTD_compress(out, bound, all, raw, ZSTD_CLEVEL_DEFAULT);
	if (ZSTD_isError(n))
		goto out;
	printf("oneframe level %d bytes %zu bps %.2f\n", ZSTD_CLEVEL_DEFAULT, FILE_HDR + BLOCK_HDR + n,
	       (double)(FILE_HDR + BLOCK_HDR + n) / samples);
	err = 0;
out:
	free(all);
	free(out);
	return err;
}

int main(int argc, char **argv)
{
	size_t nr, file_bytes, raw = 0, bound = 0, i, pc, pd, total = 0;
	double samples, t0, comp[MAX_PASSES], decomp[MAX_PASSES], spent;
	struct block *b;
	void **frames;
	size_t *sizes;
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
	int a;

	if (argc < 4) {
		fprintf(stderr, "usage: zstd_levels FILE SAMPLES LEVEL...\n");
		return 2;
	}
	samples = strtod(argv[2], NULL);
	b = load(argv[1], &nr, &file_bytes);
	if (!b || !nr || samples <= 0)
		return 1;
	for (i = 0; i < nr; i++) {
		raw += b[i].len;
		if (ZSTD_compressBound(b[i].len) > bound)
			bound = ZSTD_compressBound(b[i].len);
	}
	frames = calloc(nr, sizeof(*frames));
	sizes = calloc(nr, sizeof(*sizes));
	c = ZSTD_createCCtx();
	d = ZSTD_createDCtx();
	if (!frames || !sizes || !c || !d)
		return 1;
	for (i = 0; i < nr; i++)
		if (!(frames[i] = malloc(bound)))
			return 1;
	printf("file %s bytes %zu blocks %zu records %zu samples %.0f bps %.2f\n", argv[1], file_bytes, nr,
	       raw, samples, (double)file_bytes / samples);
	breakdown(b, nr);
	if (one_frame(b, nr, raw, samples))
		return 1;
	for (a = 3; a < argc; a++) {
		char *end;
		long level = strtol(argv[a], &end, 10);

		if (*end || end == argv[a] || level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()) {
			fprintf(stderr, "zstd_levels: '%s': not a zstd level\n", argv[a]);
			return 2;
		}
		spent = 0;
		for (pc = 0; pc < MAX_PASSES && (pc < 3 || spent < MIN_SECONDS); pc++) {
			t0 = cpu_now();
			total = compress_all(c, (int)level, b, nr, frames, sizes, bound);
			comp[pc] = cpu_now() - t0;
			spent += comp[pc];
			if (!total) {
				fprintf(stderr, "zstd_levels: level %ld: compression failed\n", level);
				return 1;
			}
		}
		for (pd = 0, spent = 0; pd < MAX_PASSES && (pd < 3 || spent < MIN_SECONDS); pd++) {
			t0 = cpu_now();
			for (i = 0; i < nr; i++)
				if (ZSTD_isError(ZSTD_decompressDCtx(d, b[i].data, b[i].len, frames[i], sizes[i])))
					return 1;
			decomp[pd] = cpu_now() - t0;
			spent += decomp[pd];
		}
		{
			size_t bytes = FILE_HDR + nr * BLOCK_HDR + total;
			double cu = median(comp, pc) * 1e6, du = median(decomp, pd) * 1e6;

			printf("level %ld bytes %zu bps %.2f ratio %.2f comp_us %.1f comp_ns_per_sample %.1f "
			       "comp_mb_s %.1f decomp_us %.1f\n",
			       level, bytes, (double)bytes / samples, (double)raw / (double)total, cu,
			       cu * 1e3 / samples, (double)raw / cu, du);
		}
	}
	for (i = 0; i < nr; i++) {
		free(frames[i]);
		free(b[i].data);
	}
	free(frames);
	free(sizes);
	free(b);
	ZSTD_freeCCtx(c);
	ZSTD_freeDCtx(d);
	return 0;
}
