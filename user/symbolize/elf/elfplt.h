/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elfplt: names for the PLT stubs of an ELF file, "func@plt", as perf and
 * objdump show them.  A call from an executable to a library goes through
 * one; without a name, its samples read [exe+0x1030].  The stubs have no
 * symbols: each jumps through a GOT slot, which a .rela.plt relocation
 * (.rela.dyn's for the stubs in .plt.got) says is the function's.  The
 * lazy resolver's entry, PLT0, is ".plt" (perf's name).  x86-64 only
 * (.plt, or .plt.sec with IBT, and .plt.got); other files get none.
 * No libbpf here.
 */
#ifndef BPFSYM_ELFPLT_H
#define BPFSYM_ELFPLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf/symidx.h"

struct elfplt_sym {
	uint64_t addr, size;	/* the stub, in the file's virtual addresses */
	uint64_t limit;		/* the end of its section */
	const char *name;	/* "func@plt", owned */
	size_t len;
};

struct elfplt {
	struct elfplt_sym *syms;
	size_t nr;
};

/*
 * Synthesize the PLT stub symbols of @elf (its section header string table
 * at index @shstrndx) into @out (zeroed by the caller), at most @max of
 * them; an IRELATIVE stub is named after the one of the @nr_cands symbols
 * @cands at its resolver's address, if any.  Malformed or missing tables
 * just give none.  0, or -ENOMEM.  elfplt__free(@out) either way.
 */
int elfplt__read(Elf *elf, size_t shstrndx, size_t max, const struct symidx_cand *cands,
		 size_t nr_cands, struct elfplt *out);

/*
 * elfplt__read() into @keep, then append its symbols to the candidates
 * *@cands (*@nr of them; reallocated) with alias rank 4, below every
 * real symbol's.  Names point into @keep, which must outlive their use.
 * 0 or -ENOMEM.
 */
int elfplt__append(Elf *elf, size_t shstrndx, size_t max, struct elfplt *keep,
		   struct symidx_cand **cands, size_t *nr);

void elfplt__free(struct elfplt *p);

#endif /* BPFSYM_ELFPLT_H */
