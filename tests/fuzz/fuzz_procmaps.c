// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for procmap.  Every input is used twice.
 *
 * As /proc/PID/maps text: it is parsed into a process of a fresh table, the
 * mappings are looked up at both ends of every line's range (and one byte
 * outside them), the process is forked and the child must answer alike,
 * even once the parent is gone; then the second half of the input replaces
 * the child's mappings, as an exec does, and the child is replaced by a
 * reused pid.
 *
 * As a program of events (map, unmap, fork, exec, exit, pid reuse) on four
 * processes, over a grid of UNITS units, run at four places in the address
 * space (from 0 byte by byte, pages in the middle, pages up to 2^64 - 1,
 * pages whose last end wraps to 0): each event is applied to the
 * model and to a brute-force reference that knows, per unit, which map
 * event put it there and at what file offset.  After each event the
 * processes it touched are compared whole: every maximal run of units of
 * one map event is one mapping (sorted, not overlapping, not empty: found
 * at both ends, with the exact fields and pgoff), there are no others
 * (proc__nr_maps), and the holes find nothing.
 *
 * Every answer is held to procmap.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/procmap.h"

#define FUZZ_NAME "fuzz_procmaps"
#include "fuzz_common.h"

#define MAX_PROBES	4096
#define UNITS		16
#define SLOTS		4
#define PID0		100
#define MAX_OPS		1024

/* ---- maps text ---- */

static void probe(const struct proc *p, uint64_t addr)
{
	const struct mapping *m = proc__find_mapping(p, addr);

	if (!m)
		return;
	CHECK(m->start <= addr && addr < m->end);
	CHECK(m->prot & PROT_EXEC);
	CHECK(m->kind <= MAPPING_SPECIAL);
	/* A path too long to keep is dropped: NULL, never "" nor cut. */
	CHECK(!m->path || (m->path[0] && strlen(m->path) < 4096));
	/* Sorted and not overlapping: both ends of a mapping find it. */
	CHECK(proc__find_mapping(p, m->start) == m && proc__find_mapping(p, m->end - 1) == m);
}

/* A forked child answers as its parent does, from its own copy. */
static void probe_twin(const struct proc *p, const struct proc *c, uint64_t addr)
{
	const struct mapping *a = proc__find_mapping(p, addr), *b = proc__find_mapping(c, addr);

	CHECK(!a == !b);
	if (!a)
		return;
	CHECK(a != b && a->start == b->start && a->end == b->end && a->pgoff == b->pgoff);
	CHECK(a->path == b->path);	/* interned */
}

static uint64_t hex(const char **pp, const char *end)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (; p < end && p - *pp < 16; p++) {
		char c = *p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v << 4 | (uint64_t)((c | 0x20) - 'a' + 10);
		else
			break;
	}
	*pp = p;
	return v;
}

/* "START-END ..." of each line, whatever the rest; @twin (if any) alongside. */
static void probe_lines(const struct proc *proc, const struct proc *twin, const char *p,
			const char *end)
{
	uint64_t addrs[6];
	const char *nl;
	size_t n = 0, i;

	for (; p < end && n < MAX_PROBES; p = nl + 1, n++) {
		const char *q = p;
		uint64_t start = hex(&q, end), stop = 0;

		if (q < end && *q == '-') {
			q++;
			stop = hex(&q, end);
		}
		addrs[0] = start;
		addrs[1] = start - 1;
		addrs[2] = stop;
		addrs[3] = stop - 1;
		addrs[4] = 0;
		addrs[5] = UINT64_MAX;
		for (i = 0; i < 6; i++) {
			probe(proc, addrs[i]);
			if (twin)
				probe_twin(proc, twin, addrs[i]);
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
	}
}

static void fuzz_text(const char *text, size_t len)
{
	struct proc_table *pt;
	struct proc *p, *c;
	int n;

	pt = proc_table__new(4);
	CHECK(pt);
	p = proc_table__add(pt, 1234, 1);
	CHECK(p);
	n = proc__parse_maps(p, text, len);
	CHECK(n >= 0 || n == -ENOMEM || n == -E2BIG);
	CHECK(n < 0 || proc__nr_maps(p) == (size_t)n);
	probe_lines(p, NULL, text, text + len);

	c = proc_table__fork(pt, p, 1235, 1);
	CHECK(c && proc__nr_maps(c) == proc__nr_maps(p));
	probe_lines(p, c, text, text + len);
	/* The parent exits: the child's paths must outlive it. */
	proc_table__remove(pt, 1234);
	CHECK(!proc_table__find(pt, 1234, 1) && proc_table__find(pt, 1235, 1) == c);
	probe_lines(c, NULL, text, text + len);

	n = proc__parse_maps(c, text + len / 2, len - len / 2);
	CHECK(n >= 0 || n == -ENOMEM || n == -E2BIG);
	probe_lines(c, NULL, text + len / 2, text + len);

	/* A reused pid drops the old process and its mappings. */
	p = proc_table__add(pt, 1235, 2);
	CHECK(p && !proc_table__find(pt, 1235, 1) && proc_table__nr_procs(pt) == 1);
	CHECK(!proc__find_mapping(p, 0) && !proc__nr_maps(p));
	proc_table__free(pt);
}

/* ---- events ---- */

/* What the reference knows of one unit of one process. */
struct cell {
	uint32_t ev;		/* the map event that put it there; 0: unmapped */
	uint64_t off;		/* its file offset */
};

struct ref {
	bool live;
	uint64_t pstart;
	struct cell cell[UNITS];
};

struct prog {
	const uint8_t *p, *end;
	uint64_t base, scale;	/* unit u is [base + u * scale, base + (u + 1) * scale) */
	struct proc_table *pt;
	struct ref ref[SLOTS];
	uint64_t next_pstart;
	uint32_t nr_evs;
	struct mapping ev[MAX_OPS + 1];	/* the map events, path: the model's interned copy */
};

static struct prog prog;	/* big: not on the stack */

/* Paths a map event may carry; the last two are the longest kept and one too long. */
static char long_ok[4096], long_bad[4097];
static const char *const paths[] = {
	NULL, "", "/lib/a.so", "/lib/b.so", "[vdso]", "/memfd:jit", long_ok, long_bad,
};
#define NR_PATHS (sizeof(paths) / sizeof(paths[0]))

static uint8_t next_byte(struct prog *g)
{
	return g->p < g->end ? *g->p++ : 0;
}

static uint64_t addr(const struct prog *g, unsigned int u)
{
	return g->base + u * g->scale;
}

static struct proc *proc_of(struct prog *g, unsigned int slot)
{
	return proc_table__find(g->pt, PID0 + slot, g->ref[slot].pstart);
}

/* Process @slot is exactly what the reference says. */
static void check_slot(struct prog *g, unsigned int slot)
{
	const struct ref *r = &g->ref[slot];
	struct proc *p = proc_of(g, slot);
	const struct mapping *m, *want;
	unsigned int u = 0, v;
	size_t runs = 0;

	CHECK(!p == !r->live);
	if (!p)
		return;
	for (; u < UNITS; u = v) {
		for (v = u + 1; v < UNITS && r->cell[v].ev == r->cell[u].ev; v++)
			;
		/* A hole: a mapping inside it would be one too many for nr_maps below. */
		if (!r->cell[u].ev) {
			CHECK(!proc__find_mapping(p, addr(g, u)));
			CHECK(!proc__find_mapping(p, addr(g, v) - 1));
			continue;
		}
		want = &g->ev[r->cell[u].ev];
		m = proc__find_mapping(p, addr(g, u));
		CHECK(m && m->start == addr(g, u) && m->end == addr(g, v));
		CHECK(proc__find_mapping(p, addr(g, v) - 1) == m);
		CHECK(m->pgoff == r->cell[u].off);
		CHECK(m->dev == want->dev && m->ino == want->ino && m->prot == want->prot &&
		      m->kind == want->kind && m->deleted == want->deleted &&
		      m->mtime_sec == want->mtime_sec && m->mtime_nsec == want->mtime_nsec);
		/* Checked against the event's path once, when mapped: every piece shares it. */
		CHECK(m->path == want->path);
		runs++;
	}
	CHECK(proc__nr_maps(p) == runs);
	CHECK(!proc__find_mapping(p, addr(g, UNITS)));
	CHECK(!g->base || !proc__find_mapping(p, g->base - 1));
}

static void op_map(struct prog *g, unsigned int slot)
{
	unsigned int s = next_byte(g) % UNITS, e = next_byte(g) % (UNITS + 1), u;
	uint8_t pg = next_byte(g), path = next_byte(g) % NR_PATHS, attr = next_byte(g);
	struct mapping m = {
		.start = addr(g, s),
		.end = addr(g, e),
		/* Near 2^64, so that cut pieces' pgoff wraps. */
		.pgoff = pg < 0xf0 ? pg * g->scale : UINT64_MAX - (pg & 0xf) * g->scale,
		.dev = attr * 7u,
		.ino = attr * 13u + g->nr_evs,
		.mtime_sec = (int64_t)attr - 100,
		.mtime_nsec = attr * 1000u,
		.prot = PROT_EXEC | (attr & 1 ? PROT_READ : 0) | (attr & 2 ? PROT_WRITE : 0),
		.kind = attr % 3,
		.path = paths[path],
		.deleted = attr >> 7,
	};
	struct ref *r = &g->ref[slot];
	struct proc *p = proc_of(g, slot);
	const struct mapping *got;
	int err;

	if (!p)
		return;
	err = proc__map(p, &m);
	if (m.end <= m.start) {
		CHECK(err == -EINVAL);
		return;
	}
	CHECK(err == 0);
	CHECK(g->nr_evs < MAX_OPS);
	/* Kept: up to 4095 bytes, copied; an empty path is no path. */
	got = proc__find_mapping(p, m.start);
	CHECK(got);
	if (m.path && m.path[0] && strlen(m.path) <= 4095)
		CHECK(got->path && got->path != m.path && !strcmp(got->path, m.path));
	else
		CHECK(!got->path);
	m.path = got->path;
	g->ev[++g->nr_evs] = m;
	for (u = s; u < e; u++) {
		r->cell[u].ev = g->nr_evs;
		r->cell[u].off = m.pgoff + (u - s) * g->scale;
	}
}

static void op_unmap(struct prog *g, unsigned int slot)
{
	unsigned int s = next_byte(g) % UNITS, e = next_byte(g) % (UNITS + 1), u;
	uint64_t start = addr(g, s), end = addr(g, e);
	struct proc *p = proc_of(g, slot);
	int err;

	if (!p)
		return;
	err = proc__unmap(p, start, end);
	CHECK(err == (end < start ? -EINVAL : 0));
	for (u = s; start < end && u < e; u++)
		g->ref[slot].cell[u].ev = 0;
}

static void op_fork(struct prog *g, unsigned int parent, unsigned int child)
{
	struct ref *r = &g->ref[child];
	struct proc *p = proc_of(g, parent), *c;
	uint64_t old = r->pstart;

	if (!p)
		return;
	errno = 0;
	c = proc_table__fork(g->pt, p, PID0 + child, ++g->next_pstart);
	if (child == parent) {
		CHECK(!c && errno == EINVAL);
		return;
	}
	CHECK(c && proc__pid(c) == PID0 + child);
	CHECK(!proc_table__find(g->pt, PID0 + child, old));
	*r = g->ref[parent];
	r->pstart = g->next_pstart;
	check_slot(g, parent);
}

/*
 * The input as events on the grid at @base; every process is checked after
 * each event touching it.
 */
static void fuzz_events(const uint8_t *data, size_t len, uint64_t base, uint64_t scale)
{
	struct prog *g = &prog;
	unsigned int slot, i, live;
	uint8_t b;

	memset(g->ref, 0, sizeof(g->ref));
	g->p = data;
	g->end = data + len;
	g->nr_evs = 0;
	g->next_pstart = 0;
	g->base = base;
	g->scale = scale;
	g->pt = proc_table__new(SLOTS);
	CHECK(g->pt);

	for (i = 0; i < MAX_OPS && g->p < g->end; i++) {
		b = next_byte(g);
		slot = (b >> 3) % SLOTS;
		switch (b & 7) {
		case 0:
		case 1:
		case 2:
			op_map(g, slot);
			break;
		case 3:
		case 4:
			op_unmap(g, slot);
			break;
		case 5:
			op_fork(g, slot, (b >> 5) % SLOTS);
			slot = (b >> 5) % SLOTS;
			break;
		case 6:
			if (proc_of(g, slot))
				proc__clear_maps(proc_of(g, slot));	/* exec */
			memset(g->ref[slot].cell, 0, sizeof(g->ref[slot].cell));
			break;
		default:
			if (b & 0x80) {
				proc_table__remove(g->pt, PID0 + slot);	/* exit */
				g->ref[slot].live = false;
			} else {
				CHECK(proc_table__add(g->pt, PID0 + slot, ++g->next_pstart));
				memset(&g->ref[slot], 0, sizeof(g->ref[slot]));
				g->ref[slot].live = true;
				g->ref[slot].pstart = g->next_pstart;
			}
			break;
		}
		check_slot(g, slot);
		for (slot = 0, live = 0; slot < SLOTS; slot++)
			live += g->ref[slot].live;
		CHECK(proc_table__nr_procs(g->pt) == live);
	}
	for (slot = 0; slot < SLOTS; slot++)
		check_slot(g, slot);
	proc_table__free(g->pt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (!long_ok[0]) {
		memset(long_ok, 'k', sizeof(long_ok) - 1);
		memset(long_bad, 'b', sizeof(long_bad) - 1);
		long_ok[0] = long_bad[0] = '/';
	}
	fuzz_text((const char *)data, len);
	fuzz_events(data, len, 0, 1);
	fuzz_events(data, len, 0x7f0000000000ull, 0x1000);
	fuzz_events(data, len, UINT64_MAX - UNITS * 0x1000ull, 0x1000);
	fuzz_events(data, len, -(UNITS * 0x1000ull), 0x1000);
	return 0;
}
