// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symidx: sorted, alias-folded function symbols and the flat list of spans
 * that makes a lookup one binary search whatever the nesting.
 *
 * Nested symbols: an address resolves to the covering symbol that starts
 * last, i.e. the innermost one (an inner entry point, not the function
 * around it), and to the outer one again past the inner one's end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf/symidx.h"

#define NO_SYM	SIZE_MAX

/* [start, next span's start) resolves to syms[sym], or to nothing (NO_SYM). */
struct symidx_span {
	uint64_t start;
	size_t sym;
};

/* Address, then the alias preference; total, so qsort is deterministic. */
static int cand_cmp(const void *a, const void *b)
{
	const struct symidx_cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sort, fold aliases, copy names into the arena and fix up sizes. */
static int build_syms(struct symidx *idx, struct symidx_cand *c, size_t n, size_t max_names)
{
	size_t i, j, nr_groups = 0, name_bytes = 0, pos = 0;

	if (!n)
		return 0;
	qsort(c, n, sizeof(*c), cand_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && c[j].addr == c[i].addr; j++)
			;
		nr_groups++;
		name_bytes += c[i].len + 1;
		/* Shared tail strings can make copies outgrow their tables. */
		if (name_bytes > max_names)
			return -E2BIG;
	}

	idx->syms = calloc(nr_groups, sizeof(*idx->syms));
	idx->names = malloc(name_bytes);
	idx->names_len = name_bytes;
	if (!idx->syms || !idx->names)
		return -ENOMEM;

	for (i = 0; i < n; i = j) {
		struct elfsym_sym *s = &idx->syms[idx->nr_syms++];
		uint64_t size = c[i].size, end;

		for (j = i + 1; j < n && c[j].addr == c[i].addr; j++) {
			if (c[j].size > size)
				size = c[j].size;
		}
		if (!size) {
			end = j < n && c[j].addr < c[i].limit ? c[j].addr : c[i].limit;
			size = end - c[i].addr;
		}
		memcpy(idx->names + pos, c[i].name, c[i].len + 1);
		s->name = idx->names + pos;
		pos += c[i].len + 1;
		s->addr = c[i].addr;
		s->size = size;
	}
	return 0;
}

static void push_span(struct symidx *idx, uint64_t start, size_t sym)
{
	idx->spans[idx->nr_spans].start = start;
	idx->spans[idx->nr_spans].sym = sym;
	idx->nr_spans++;
}

/*
 * Flatten the (possibly nested) symbols into disjoint spans, each owned by
 * the covering symbol that starts last.  Sweep by start address with a stack
 * of open symbols: the innermost open one is the most recently pushed one
 * that has not ended.  Each span either closes a symbol or reaches the next
 * start, and each gap adds one hole: at most 2n + 1 spans.
 */
static int build_spans(struct symidx *idx)
{
	size_t n = idx->nr_syms, top = 0, i, *stack;
	uint64_t pos;

	if (!n)
		return 0;
	idx->spans = calloc(2 * n + 1, sizeof(*idx->spans));
	stack = calloc(n, sizeof(*stack));
	if (!idx->spans || !stack) {
		free(stack);
		return -ENOMEM;
	}
	pos = idx->syms[0].addr;
	for (i = 0; i <= n; i++) {
		uint64_t next = i < n ? idx->syms[i].addr : UINT64_MAX;

		while (top && pos < next) {
			const struct elfsym_sym *s = &idx->syms[stack[top - 1]];
			uint64_t end = s->addr + s->size;

			if (end > pos) {
				push_span(idx, pos, stack[top - 1]);
				if (end > next) {
					pos = next;
					break;
				}
				pos = end;
			}
			top--;
		}
		if (pos < next)
			push_span(idx, pos, NO_SYM);
		if (i < n) {
			stack[top++] = i;
			pos = next;
		}
	}
	free(stack);
	return 0;
}

size_t symidx__mem_bytes(const struct symidx *idx)
{
	return idx->nr_syms * sizeof(*idx->syms) + idx->nr_spans * sizeof(*idx->spans) + idx->names_len;
}

int symidx__build(struct symidx *idx, struct symidx_cand *c, size_t n, size_t max_names)
{
	int err = build_syms(idx, c, n, max_names);

	return err ? err : build_spans(idx);
}

const struct elfsym_sym *symidx__lookup(const struct symidx *idx, uint64_t addr)
{
	size_t lo = 0, hi = idx->nr_spans, mid;
	const struct symidx_span *sp;
	const struct elfsym_sym *s;

	/* The last span starting at or before addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (idx->spans[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sp = &idx->spans[lo - 1];
	if (sp->sym == NO_SYM)
		return NULL;
	s = &idx->syms[sp->sym];
	/* Spans run to the next one; the symbol's own end still bounds it. */
	return addr - s->addr < s->size ? s : NULL;
}

void symidx__free(struct symidx *idx)
{
	free(idx->syms);
	free(idx->spans);
	free(idx->names);
	memset(idx, 0, sizeof(*idx));
}
