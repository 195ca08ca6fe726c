// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * png_colours FILE.png: the colour histogram of a screenshot, one
 * "RRGGBB COUNT" line per distinct colour (alpha ignored), most frequent
 * first, after a "size WIDTH HEIGHT" line.  For test_flamegraph.sh: a
 * rendered flame graph shows its frames' fill colours over many pixels; a
 * blank page or an error page does not.  Reads 8-bit RGB and RGBA,
 * non-interlaced (what Chromium writes); anything else is exit 2.
 * Build: cc -O2 -o png_colours png_colours.c -lz
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_FILE (64u << 20)
#define MAX_PIXELS (16u << 20)

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static int die(const char *why)
{
	fprintf(stderr, "png_colours: %s\n", why);
	return 2;
}

struct bin {
	uint32_t rgb;
	uint64_t count;
};

static int bin_cmp(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->rgb < y->rgb ? -1 : x->rgb > y->rgb;
}

int main(int argc, char **argv)
{
	unsigned char *file, *idat = NULL, *raw, *zero, *prev, *row;
	uint32_t w = 0, h = 0, *counts, x, y, i;
	size_t len, nidat = 0, off = 8, bpp = 0, stride;
	struct bin *bins;
	size_t nbins = 0;
	uLongf rawlen;
	FILE *f;

	if (argc != 2)
		return die("usage: png_colours FILE.png");
	f = fopen(argv[1], "rb");
	if (!f)
		return die("cannot open the file");
	file = malloc(MAX_FILE);
	len = file ? fread(file, 1, MAX_FILE, f) : 0;
	fclose(f);
	if (len < 8 || memcmp(file, "\x89PNG\r\n\x1a\n", 8))
		return die("not a PNG file");
	while (off + 12 <= len) {
		uint32_t clen = be32(file + off);
		const unsigned char *type = file + off + 4, *data = file + off + 8;

		if (clen > len - off - 12)
			return die("chunk past the end");
		if (!memcmp(type, "IHDR", 4) && clen >= 13) {
			w = be32(data);
			h = be32(data + 4);
			if (data[8] != 8 || data[12] != 0 || (data[9] != 2 && data[9] != 6))
				return die("not 8-bit RGB/RGBA non-interlaced");
			bpp = data[9] == 6 ? 4 : 3;
		} else if (!memcmp(type, "IDAT", 4)) {
			idat = realloc(idat, nidat + clen);
			if (!idat)
				return die("out of memory");
			memcpy(idat + nidat, data, clen);
			nidat += clen;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		off += 12 + clen;
	}
	if (!bpp || !w || !h || (uint64_t)w * h > MAX_PIXELS || !idat)
		return die("no image");
	stride = w * bpp;
	rawlen = (uLongf)(stride + 1) * h;
	raw = malloc(rawlen);
	if (!raw || uncompress(raw, &rawlen, idat, nidat) != Z_OK || rawlen != (stride + 1) * h)
		return die("bad image data");
	/* Undo the row filters in place; the row above is already undone. */
	prev = zero = calloc(1, stride);
	if (!zero)
		return die("out of memory");
	for (y = 0; y < h; y++) {
		unsigned char ft = raw[y * (stride + 1)];

		row = raw + y * (stride + 1) + 1;
		for (i = 0; i < stride; i++) {
			int a = i >= bpp ? row[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;

			switch (ft) {
			case 0: break;
			case 1: row[i] += a; break;
			case 2: row[i] += b; break;
			case 3: row[i] += (a + b) / 2; break;
			case 4: row[i] += paeth(a, b, c); break;
			default: return die("bad filter");
			}
		}
		prev = row;
	}
	counts = calloc(1u << 24, sizeof(*counts));
	if (!counts)
		return die("out of memory");
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			row = raw + y * (stride + 1) + 1 + x * bpp;
			counts[(uint32_t)row[0] << 16 | row[1] << 8 | row[2]]++;
		}
	bins = malloc(sizeof(*bins) * (w * h < (1u << 24) ? w * h : (1u << 24)));
	if (!bins)
		return die("out of memory");
	for (i = 0; i < (1u << 24); i++)
		if (counts[i])
			bins[nbins++] = (struct bin){ i, counts[i] };
	qsort(bins, nbins, sizeof(*bins), bin_cmp);
	printf("size %u %u\n", w, h);
	for (i = 0; i < nbins; i++)
		printf("%06x %llu\n", bins[i].rgb, (unsigned long long)bins[i].count);
	free(bins);
	free(counts);
	free(zero);
	free(raw);
	free(idat);
	free(file);
	return 0;
}
