/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symidx: an address -> function index, built once from candidate symbols,
 * then read-only.  The lookup rules elfsym.h promises live here: aliases
 * (one address, several names) are folded into one entry named by a fixed
 * preference and covering the largest of their sizes; a size of 0 extends
 * to the next symbol or to the candidate's limit (its section's end); a
 * nested symbol wins over the one around it.  The candidates may come from
 * any symbol table (several merged).  No libelf, no libbpf here.
 */
#ifndef BPFSYM_SYMIDX_H
#define BPFSYM_SYMIDX_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf/elfsym.h"

struct symidx_cand {
	uint64_t addr, size;	/* size <= limit - addr; 0: unknown */
	uint64_t limit;		/* no symbol starting here extends past it */
	const char *name;	/* borrowed until symidx__build() returns */
	size_t len;		/* strlen(name), not 0 */
	int rank;		/* alias preference: lower wins, then shorter, then byte order */
};

struct symidx_span;

struct symidx {
	struct elfsym_sym *syms;	/* by address, one per address */
	size_t nr_syms;
	struct symidx_span *spans;
	size_t nr_spans;
	char *names;		/* one arena holding every name */
	size_t names_len;	/* its bytes */
};

/*
 * Build @idx (zeroed by the caller) from the @n candidates @c, which are
 * sorted in place.  Names are copied; more than @max_names bytes of them is
 * -E2BIG.  0, -E2BIG or -ENOMEM; on error @idx may hold part of the build:
 * symidx__free() it either way.
 */
/* Bytes @idx holds in memory. */
size_t symidx__mem_bytes(const struct symidx *idx);

int symidx__build(struct symidx *idx, struct symidx_cand *c, size_t n, size_t max_names);

/* The symbol covering @addr, innermost first, or NULL.  O(log n). */
const struct elfsym_sym *symidx__lookup(const struct symidx *idx, uint64_t addr);

/* Free what @idx holds (not @idx itself); it is then empty. */
void symidx__free(struct symidx *idx);

#endif /* BPFSYM_SYMIDX_H */
