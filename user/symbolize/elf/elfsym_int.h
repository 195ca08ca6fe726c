/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elfsym_int: the state of one file being read, shared by elfsym.c (the
 * headers, segments, notes, MiniDebugInfo) and elfsym_symtab.c (the symbol
 * tables).  Not a public interface.
 */
#ifndef BPFSYM_ELFSYM_INT_H
#define BPFSYM_ELFSYM_INT_H

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "symbolize/elf/elfplt.h"
#include "symbolize/elf/symidx.h"

/* What the symbol filter needs to know of a section, in address space. */
struct sec {
	uint64_t start, end;
	uint32_t type, link;
	bool exec;
};

/* State of one elfsym__open_fd(); freed before it returns. */
struct reader {
	const char *name;
	Elf *elf;
	uint64_t fsize;
	GElf_Ehdr eh;
	size_t shnum, phnum;
	struct sec *secs;
	struct symidx_cand *cands;	/* names still point into libelf data */
	size_t nr_cands;
	size_t max_syms, max_strtab, max_debugdata;
	size_t syms_seen, strtab_seen;
	size_t shstrndx;
	size_t debugdata_idx, debuglink_idx;	/* 0: no such section */
	Elf *mini;		/* the MiniDebugInfo merged, its names in r->cands */
	struct elfplt plt;	/* PLT stub names, in r->cands */
	void *mini_buf;
};

static inline int malformed(const struct reader *r, const char *what)
{
	pr_debug("elfsym: '%s': %s\n", r->name, what);
	return -ENOEXEC;
}

static inline int libelf_failed(const struct reader *r, const char *call)
{
	pr_debug("elfsym: '%s': %s: %s\n", r->name, call, elf_errmsg(-1));
	return -ENOEXEC;
}

/*
 * Append the functions of every symbol table of @r (.symtab and .dynsym)
 * to r->cands, under r's caps.  0, -ENOEXEC (malformed), -E2BIG (over a
 * cap) or -ENOMEM.
 */
int elfsym__read_symbols(struct reader *r);

#endif /* BPFSYM_ELFSYM_INT_H */
