// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for perfmap and jitsyms.  Every input is used three ways.
 *
 * As perf-map text, parsed whole by perfmap__parse() and, line by line, by
 * a reference parser written here from perfmap.h's contract: the counts
 * must agree, and lookups at both ends of every entry (and one byte
 * outside) must give what a brute-force model gives: the last entry
 * covering the address.
 *
 * As a growing file: the text is written to a memfd in pieces (sizes drawn
 * from the input's hash) and read after each by a perfmap_reader, with the
 * default line_max and a small one (so that over-long lines, partial or
 * not, are common): the table must match the whole parse.  Then the file
 * is cut to its first half, and the reader must start again on it.
 *
 * As a program of (up to 48) jitsyms adds and lookups over a grid of 64
 * units, at one of four places in the address space (from 0 byte by byte,
 * pages, and up to 2^64 - 1, by bytes and by pages; the input's length
 * picks), checked after most ops against the brute-force model.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/jit/jitsyms.h"
#include "symbolize/jit/perfmap.h"

#define FUZZ_NAME "fuzz_perfmap"
#include "fuzz_common.h"

#define MAX_ENTS	4096
#define MAX_PROBE_ENTS	512	/* entries whose ends are probed: the model is linear */
#define SMALL_LINE_MAX	40

struct ent {
	uint64_t start, size;
	const char *name;	/* in the input, not terminated */
	size_t len;
};

struct model {
	struct ent ents[MAX_ENTS];
	size_t nr;
	uint64_t lines, bad;
	size_t consumed;
};

static struct model model;	/* big: not on the stack */
static int memfd = -1;

/* ---- the reference parser ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex field at p[*i..n), then blanks; false if malformed.  Overflow: more than 16 significant digits. */
static bool ref_field(const char *p, size_t n, size_t *i, uint64_t *out)
{
	size_t j = *i, sig = 0, digits = 0;
	uint64_t v = 0;

	if (n - j >= 3 && p[j] == '0' && (p[j + 1] == 'x' || p[j + 1] == 'X') && hexval(p[j + 2]) >= 0)
		j += 2;
	for (; j < n && hexval(p[j]) >= 0; j++, digits++) {
		if (sig || hexval(p[j]))
			sig++;
		v = v * 16 + (uint64_t)hexval(p[j]);
	}
	if (!digits || sig > 16 || j == n || (p[j] != ' ' && p[j] != '\t'))
		return false;
	while (j < n && (p[j] == ' ' || p[j] == '\t'))
		j++;
	*i = j;
	*out = v;
	return true;
}

/* One line (no \n): kept, blank or bad, into @m. */
static void ref_line(struct model *m, const char *p, size_t n, size_t line_max)
{
	uint64_t start, size;
	size_t i = 0;

	if (n > line_max || memchr(p, '\0', n)) {
		m->bad++;
		return;
	}
	if (n && p[n - 1] == '\r')
		n--;
	if (!n)
		return;
	if (!ref_field(p, n, &i, &start) || !ref_field(p, n, &i, &size) || i == n ||
	    size > UINT64_MAX - start) {
		m->bad++;
		return;
	}
	m->lines++;
	if (size && m->nr < MAX_ENTS)
		m->ents[m->nr++] = (struct ent){ start, size, p + i, n - i };
}

static void ref_parse(struct model *m, const char *text, size_t len, size_t line_max)
{
	size_t i = 0, j;

	m->nr = 0;
	m->lines = m->bad = 0;
	for (; i < len; i = j + 1) {
		for (j = i; j < len && text[j] != '\n'; j++)
			;
		if (j == len)
			break;
		ref_line(m, text + i, j - i, line_max);
	}
	m->consumed = i;
}

/* The model's answer at @addr: the last entry covering it. */
static const struct ent *ref_lookup(const struct model *m, uint64_t addr)
{
	size_t n = m->nr;

	while (n--) {
		if (addr - m->ents[n].start < m->ents[n].size)
			return &m->ents[n];
	}
	return NULL;
}

static void check_addr(const struct model *m, struct jitsyms *js, uint64_t addr)
{
	const struct ent *want = ref_lookup(m, addr);
	const struct jitsym *got = jitsyms__lookup(js, addr);

	CHECK(!want == !got);
	if (!got)
		return;
	CHECK(got->start == want->start && got->size == want->size);
	CHECK(strlen(got->name) == want->len && !memcmp(got->name, want->name, want->len));
}

/* Both ends of the first entries, and one byte outside each. */
static void check_table(const struct model *m, struct jitsyms *js)
{
	size_t i;

	CHECK(jitsyms__nr_syms(js) == m->nr);
	for (i = 0; i < m->nr && i < MAX_PROBE_ENTS; i++) {
		const struct ent *e = &m->ents[i];

		check_addr(m, js, e->start);
		check_addr(m, js, e->start - 1);
		check_addr(m, js, e->start + e->size - 1);
		check_addr(m, js, e->start + e->size);
	}
	check_addr(m, js, 0);
	check_addr(m, js, UINT64_MAX);
}

static void fuzz_parse(const char *text, size_t len)
{
	struct perfmap_stats st = {};
	struct jitsyms *js = jitsyms__new(NULL);
	size_t used = 0;

	CHECK(js);
	CHECK(perfmap__parse(js, text, len, 0, &used, &st) == 0);
	ref_parse(&model, text, len, 4096);
	CHECK(used == model.consumed);
	CHECK(st.lines == model.lines && st.bad_lines == model.bad && st.dropped == 0);
	if (model.nr < MAX_ENTS)
		check_table(&model, js);
	jitsyms__free(js);
}

/* ---- the reader on a growing file ---- */

static uint64_t hash_input(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void set_file(const char *text, size_t len)
{
	CHECK(ftruncate(memfd, 0) == 0);
	CHECK(len == 0 || pwrite(memfd, text, len, 0) == (ssize_t)len);
}

static void fuzz_reader(const char *text, size_t len, size_t line_max)
{
	struct perfmap_opts opts = { .line_max = line_max };
	struct perfmap_reader *r = perfmap_reader__new(&opts);
	const struct perfmap_stats *st;
	uint64_t s = hash_input((const uint8_t *)text, len) | 1, total = 0;
	size_t at = 0, step, tail;
	int got;

	CHECK(r);
	st = perfmap_reader__stats(r);
	set_file(NULL, 0);
	ref_parse(&model, text, len, line_max);
	while (at < len) {
		step = 1 + next(&s) % (len / 3 + 1);
		if (step > len - at)
			step = len - at;
		CHECK(pwrite(memfd, text + at, step, (off_t)at) == (ssize_t)step);
		at += step;
		got = perfmap_reader__read(r, memfd);
		CHECK(got >= 0);
		total += (uint64_t)got;
		CHECK(st->bytes <= at && st->restarts == 0);
	}
	/* A partial last line already past line_max is counted by the reader alone. */
	tail = len - model.consumed;
	CHECK(total == model.lines && st->lines == model.lines);
	CHECK(st->bad_lines == model.bad + (tail > line_max));
	CHECK(st->bytes == (tail > line_max ? len : model.consumed));
	if (model.nr < MAX_ENTS)
		check_table(&model, perfmap_reader__syms(r));

	/* Cut to the first half: shorter than what was consumed, so read again. */
	if (st->bytes > len / 2) {
		set_file(text, len / 2);
		ref_parse(&model, text, len / 2, line_max);
		got = perfmap_reader__read(r, memfd);
		CHECK(got >= 0 && (uint64_t)got == model.lines);
		CHECK(st->restarts == 1);
		if (model.nr < MAX_ENTS)
			check_table(&model, perfmap_reader__syms(r));
	}
	perfmap_reader__free(r);
}

/* ---- jitsyms ops on a grid ---- */

#define UNITS	64
#define NPTS	(3 * UNITS + 2)
/* Each op looks every point up: more ops only slow the fuzzer down. */
#define MAX_OPS	48

static const char *const names[] = { "a", "bb", "ccc", "dddd", "e", "ff", "g", "h" };

/*
 * Adds as the input says, looked up after about one in four adds (and
 * after the last) at fixed points: each unit's ends and a byte inside it.  The model is
 * painted per point: the last entry that covered it.
 */
static void fuzz_ops(const uint8_t *p, size_t len, uint64_t base, uint64_t scale)
{
	struct jitsyms *js = jitsyms__new(NULL);
	uint64_t pts[NPTS];
	int owner[NPTS];
	size_t i, k, npts = 0, nr = 0;

	CHECK(js);
	for (i = 0; i < UNITS; i++) {
		pts[npts++] = base + i * scale;
		pts[npts++] = base + (i + 1) * scale - 1;
		pts[npts++] = base + i * scale + (i * 7 & 0xf) % scale;
	}
	pts[npts++] = base - 1;
	pts[npts++] = base + UNITS * scale;
	for (k = 0; k < npts; k++)
		owner[k] = -1;
	for (i = 0; i + 3 <= len && i < 3 * MAX_OPS; i += 3) {
		uint64_t start = base + (p[i] % UNITS) * scale;
		uint64_t size = (p[i + 1] % (UNITS + 1)) * scale;
		const char *name = names[p[i + 2] % 8];

		/* Whole units, or cut to a byte so that pieces end inside units. */
		if (p[i + 2] & 0x80 && size)
			size -= (p[i + 2] >> 3 & 0xf) % scale;
		if (size > base + UNITS * scale - start)
			size = base + UNITS * scale - start;
		CHECK(jitsyms__add(js, start, size, name, strlen(name)) == 0);
		if (size) {
			model.ents[nr] = (struct ent){ start, size, name, strlen(name) };
			for (k = 0; k < npts; k++)
				if (pts[k] - start < size)
					owner[k] = (int)nr;
			nr++;
		}
		/* Batches of adds, about four: each batch is indexed at once. */
		if (p[i + 2] & 0x60 && i + 6 <= len && i < 3 * (MAX_OPS - 1))
			continue;
		for (k = 0; k < npts; k++) {
			const struct jitsym *got = jitsyms__lookup(js, pts[k]);
			const struct ent *want = owner[k] < 0 ? NULL : &model.ents[owner[k]];

			CHECK(!got == !want);
			if (got)
				CHECK(got->start == want->start && got->size == want->size &&
				      !strcmp(got->name, want->name));
		}
	}
	CHECK(jitsyms__nr_syms(js) == nr);
	jitsyms__free(js);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *text = (const char *)data;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_perfmap", MFD_CLOEXEC);
		if (memfd < 0) {
			perror("fuzz_perfmap: memfd_create");
			exit(1);
		}
	}
	fuzz_parse(text, len);
	fuzz_reader(text, len, 4096);
	fuzz_reader(text, len, SMALL_LINE_MAX);
	switch (len % 4) {
	case 0:
		fuzz_ops(data, len, 0, 1);
		break;
	case 1:
		fuzz_ops(data, len, 0x7f0000000000ull, 0x1000);
		break;
	case 2:
		fuzz_ops(data, len, UINT64_MAX - UNITS * 0x1000ull, 0x1000);
		break;
	default:
		fuzz_ops(data, len, UINT64_MAX - UNITS, 1);
		break;
	}
	return 0;
}
