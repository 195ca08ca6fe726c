// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for procmap: the input is /proc/PID/maps text.
 *
 * It is parsed into a process of a fresh table, the mappings are looked up
 * at both ends of every line's range (and one byte outside them), then the
 * second half of the input replaces the first's mappings, as an exec does,
 * and the process is replaced by a reused pid.  Every answer is held to
 * procmap.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "procmap.h"

#define MAX_PROBES 4096

/* A broken contract is a bug: abort so libFuzzer keeps the input. */
#define CHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "fuzz_procmaps: %s:%d: check failed: %s\n",	\
			__FILE__, __LINE__, #cond);				\
		abort();							\
	}									\
} while (0)

static void probe(const struct proc *p, uint64_t addr)
{
	const struct mapping *m = proc__find_mapping(p, addr);

	if (!m)
		return;
	CHECK(m->start <= addr && addr < m->end);
	CHECK(m->prot & PROT_EXEC);
	CHECK(m->kind <= MAPPING_SPECIAL);
	CHECK(m->kind != MAPPING_FILE || (m->path && m->path[0]));
	/* strlen() makes ASan read the path to its end. */
	CHECK(!m->path || strlen(m->path) < SIZE_MAX);
	/* Sorted and not overlapping: both ends of a mapping find it. */
	CHECK(proc__find_mapping(p, m->start) == m && proc__find_mapping(p, m->end - 1) == m);
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

/* "START-END ..." of each line, whatever the rest. */
static void probe_lines(const struct proc *proc, const char *p, const char *end)
{
	const char *nl;
	size_t n = 0;

	for (; p < end && n < MAX_PROBES; p = nl + 1, n++) {
		const char *q = p;
		uint64_t start = hex(&q, end), stop = 0;

		if (q < end && *q == '-') {
			q++;
			stop = hex(&q, end);
		}
		probe(proc, start);
		probe(proc, start - 1);
		probe(proc, stop);
		probe(proc, stop - 1);
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
	}
	probe(proc, 0);
	probe(proc, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *text = (const char *)data;
	struct proc_table *pt;
	struct proc *p;
	int n;

	pt = proc_table__new(4);
	CHECK(pt);
	p = proc_table__add(pt, 1234, 1);
	CHECK(p);
	n = proc__parse_maps(p, text, len);
	CHECK(n >= 0 || n == -ENOMEM || n == -E2BIG);
	probe_lines(p, text, text + len);

	n = proc__parse_maps(p, text + len / 2, len - len / 2);
	CHECK(n >= 0 || n == -ENOMEM || n == -E2BIG);
	probe_lines(p, text + len / 2, text + len);

	/* A reused pid drops the old process and its mappings. */
	p = proc_table__add(pt, 1234, 2);
	CHECK(p && !proc_table__find(pt, 1234, 1) && proc_table__nr_procs(pt) == 1);
	CHECK(!proc__find_mapping(p, 0) && !proc__has_maps(p));
	proc_table__free(pt);
	return 0;
}
