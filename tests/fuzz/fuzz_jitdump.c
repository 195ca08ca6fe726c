// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for jitdump (and the jitsyms table under it).  The input
 * is a jitdump file.
 *
 * A reference parser written here from jitdump.h's contract walks the
 * input in memory and lists the symbols it should give, and the counts.
 * The reader, on a memfd holding the input, must agree: its return value,
 * stats and stop code, and lookups at both ends of every symbol (and one
 * byte outside) must give what a brute-force model gives, the last symbol
 * covering the address.
 *
 * Then the file grows in pieces (sizes drawn from the input's hash), read
 * after each: the end result must be the same.  Then it is cut short, and
 * the reader must start again on what is left.  A reader with small caps
 * (bytes, name length, code indexes, symbols) reads it too, held to the
 * caps.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/jit/jitdump.h"
#include "symbolize/jit/jitsyms.h"

#define FUZZ_NAME "fuzz_jitdump"
#include "fuzz_common.h"

#define MAX_ENTS	4096
#define MAX_IDX		4096
#define MAX_PROBE_ENTS	512
#define NAME_MAX_DEF	4096

struct ent {
	uint64_t start, size;
	const char *name;	/* NUL-terminated, in the input */
};

struct model {
	struct ent ents[MAX_ENTS];
	size_t nr;
	struct { uint64_t index; const char *name; } idx[MAX_IDX];
	size_t nr_idx;
	uint64_t loads, moves, other, bad, unknown, bytes;
	bool closed, overflow;
	int stopped;
};

static struct model model;	/* big: not on the stack */
static int memfd = -1;

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static const char *ref_idx(const struct model *m, uint64_t index)
{
	size_t i;

	for (i = 0; i < m->nr_idx; i++)
		if (m->idx[i].index == index)
			return m->idx[i].name;
	return NULL;
}

static void ref_push(struct model *m, uint64_t start, uint64_t size, const char *name)
{
	if (!size)
		return;
	if (m->nr == MAX_ENTS) {
		m->overflow = true;
		return;
	}
	m->ents[m->nr++] = (struct ent){ start, size, name };
}

static void ref_load(struct model *m, const uint8_t *rec, uint32_t total)
{
	uint64_t addr, size, index, area, scan, i;
	const uint8_t *name;

	if (total < 16 + 40 + 2) {
		m->bad++;
		return;
	}
	addr = u64(rec + 16 + 16);
	size = u64(rec + 16 + 24);
	index = u64(rec + 16 + 32);
	/* name, padding, code: the code is the record's last size bytes. */
	if (size > total - 56 || size > UINT64_MAX - addr) {
		m->bad++;
		return;
	}
	area = total - 56 - size;
	name = rec + 56;
	scan = area < NAME_MAX_DEF + 1 ? area : NAME_MAX_DEF + 1;
	for (i = 0; i < scan && name[i]; i++)
		;
	if (i == scan || i == 0) {
		m->bad++;
		return;
	}
	m->loads++;
	for (i = 0; i < m->nr_idx; i++)
		if (m->idx[i].index == index)
			break;
	if (i == m->nr_idx) {
		if (m->nr_idx == MAX_IDX) {
			m->overflow = true;
			return;
		}
		m->nr_idx++;
	}
	m->idx[i].index = index;
	m->idx[i].name = (const char *)name;
	ref_push(m, addr, size, (const char *)name);
}

static void ref_move(struct model *m, const uint8_t *rec, uint32_t total)
{
	uint64_t addr, size;
	const char *name;

	if (total < 16 + 48) {
		m->bad++;
		return;
	}
	addr = u64(rec + 16 + 24);
	size = u64(rec + 16 + 32);
	if (size > UINT64_MAX - addr) {
		m->bad++;
		return;
	}
	name = ref_idx(m, u64(rec + 16 + 40));
	if (!name) {
		m->unknown++;
		return;
	}
	m->moves++;
	ref_push(m, addr, size, name);
}

/*
 * The reference: what the @len bytes at @p, all there is of the file, give.
 * Names are read in place: @p must hold a NUL past any name the scan
 * accepts, which the name scan itself guarantees.
 */
static void ref_parse(struct model *m, const uint8_t *p, size_t len)
{
	uint64_t off, hsize;
	uint32_t magic, total;

	m->nr = m->nr_idx = 0;
	m->loads = m->moves = m->other = m->bad = m->unknown = m->bytes = 0;
	m->closed = m->overflow = false;
	m->stopped = 0;
	if (len < 40)
		return;
	magic = u32(p);
	if (magic == bswap_32(JITDUMP_MAGIC) || (magic == JITDUMP_MAGIC && u32(p + 4) != 1)) {
		m->stopped = -EPROTONOSUPPORT;
		return;
	}
	hsize = u32(p + 8);
	if (magic != JITDUMP_MAGIC || hsize < 40) {
		m->stopped = -EINVAL;
		return;
	}
	if (hsize > len)
		return;
	for (off = hsize; off + 16 <= len; off += total) {
		total = u32(p + off + 4);
		if (total < 16) {
			m->stopped = -EBADMSG;
			break;
		}
		/* The reader's default cap: such a record can never be read. */
		if (off + total > ((uint64_t)256 << 20)) {
			m->stopped = -E2BIG;
			break;
		}
		if (off + total > len)
			break;
		switch (u32(p + off)) {
		case 0:
			ref_load(m, p + off, total);
			break;
		case 1:
			ref_move(m, p + off, total);
			break;
		case 3:
			m->closed = true;
			/* fallthrough */
		default:
			m->other++;
		}
	}
	m->bytes = off;
}

/* The model's answer at @addr: the last symbol covering it. */
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
	if (got)
		CHECK(got->start == want->start && got->size == want->size &&
		      !strcmp(got->name, want->name));
}

/* The reader @r agrees with the model. */
static void check_reader(const struct model *m, struct jitdump_reader *r)
{
	const struct jitdump_stats *st = jitdump_reader__stats(r);
	struct jitsyms *js = jitdump_reader__syms(r);
	const struct jitdump_header *h = jitdump_reader__header(r);
	size_t i;

	CHECK(st->stopped == m->stopped && st->closed == m->closed);
	CHECK(st->loads == m->loads && st->moves == m->moves && st->other == m->other);
	CHECK(st->bad_records == m->bad && st->unknown_moves == m->unknown && st->dropped == 0);
	CHECK(st->bytes == m->bytes);
	CHECK(!h == !m->bytes);
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

static void set_file(const uint8_t *p, size_t len)
{
	CHECK(ftruncate(memfd, 0) == 0);
	CHECK(len == 0 || pwrite(memfd, p, len, 0) == (ssize_t)len);
}

static bool documented(int ret)
{
	return ret >= 0 || ret == -EINVAL || ret == -EPROTONOSUPPORT || ret == -EBADMSG ||
	       ret == -E2BIG;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The symbols a read returns: those added, so as many as the model's (no cap here). */
static void whole_then_pieces(const uint8_t *data, size_t len)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	uint64_t s = 0x9e3779b97f4a7c15ull, total = 0;
	size_t at = 0, step, i;
	int got;

	CHECK(r);
	set_file(data, len);
	got = jitdump_reader__read(r, memfd);
	CHECK(documented(got));
	CHECK(got < 0 ? got == model.stopped : (size_t)got == model.nr);
	check_reader(&model, r);
	CHECK(jitdump_reader__read(r, memfd) == (model.stopped ? model.stopped : 0));
	jitdump_reader__free(r);

	/* Growing: pieces of 1 byte to a third of the input. */
	for (i = 0; i < len && i < 64; i++)
		s = (s ^ data[i]) * 0x100000001b3ull | 1;
	r = jitdump_reader__new(NULL);
	CHECK(r);
	set_file(NULL, 0);
	while (at < len) {
		step = 1 + next(&s) % (len / 3 + 1);
		if (step > len - at)
			step = len - at;
		CHECK(pwrite(memfd, data + at, step, (off_t)at) == (ssize_t)step);
		at += step;
		got = jitdump_reader__read(r, memfd);
		CHECK(documented(got));
		if (got > 0)
			total += (uint64_t)got;
		CHECK(jitdump_reader__stats(r)->restarts == 0);
	}
	/* A read that stops returns why, not what it added before. */
	CHECK(model.stopped ? total <= model.nr : total == model.nr);
	check_reader(&model, r);

	/* Cut short of what was consumed: read again from 0. */
	if (model.bytes > 40 && !model.stopped) {
		size_t cut = (size_t)(model.bytes - 1 - next(&s) % (model.bytes - 40));

		set_file(data, cut);
		got = jitdump_reader__read(r, memfd);
		ref_parse(&model, data, cut);
		CHECK(documented(got));
		CHECK(jitdump_reader__stats(r)->restarts == 1);
		CHECK(got < 0 ? got == model.stopped : (size_t)got == model.nr);
	}
	jitdump_reader__free(r);
}

/* Small caps: held to them, and nothing else breaks. */
static void small_caps(const uint8_t *data, size_t len)
{
	struct jitdump_opts opts = {
		.max_bytes = len / 2 + 40,
		.name_max = 8,
		.max_indexes = 4,
		.syms = { .max_syms = 8, .max_name_bytes = 64 },
	};
	struct jitdump_reader *r = jitdump_reader__new(&opts);
	const struct jitdump_stats *st;
	struct jitsyms *js;
	size_t i;
	int got;

	CHECK(r);
	set_file(data, len);
	got = jitdump_reader__read(r, memfd);
	CHECK(documented(got));
	st = jitdump_reader__stats(r);
	js = jitdump_reader__syms(r);
	CHECK(st->bytes <= opts.max_bytes);
	CHECK(jitsyms__nr_syms(js) <= 8);
	CHECK(got < 0 || (size_t)got == jitsyms__nr_syms(js));
	/* Past the cap, reading must say so. */
	CHECK(len <= opts.max_bytes || got < 0);
	for (i = 0; i < model.nr && i < 64; i++) {
		const struct jitsym *sym = jitsyms__lookup(js, model.ents[i].start);

		if (sym)
			CHECK(strlen(sym->name) <= 8 && sym->name[0]);
	}
	jitdump_reader__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t *copy;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_jitdump", MFD_CLOEXEC);
		if (memfd < 0) {
			perror("fuzz_jitdump: memfd_create");
			exit(1);
		}
	}
	/* The model reads names in place: a NUL after the input bounds the last one. */
	copy = malloc(len + 1);
	CHECK(copy);
	memcpy(copy, data, len);
	copy[len] = '\0';
	ref_parse(&model, copy, len);
	if (!model.overflow)
		whole_then_pieces(copy, len);
	small_caps(copy, len);
	free(copy);
	return 0;
}
