// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym_symtab: the function symbols of a file's symbol tables, as
 * candidates for its index (symidx.h).
 *
 * A function is an STT_FUNC or STT_GNU_IFUNC symbol with a non-empty name,
 * defined in a SHF_ALLOC|SHF_EXECINSTR section and starting inside it.
 * STT_NOTYPE is not kept: in code sections those are assembler labels
 * (jump targets, markers such as _etext) that point into or past a
 * function more often than at its start; perf makes the same choice.
 * Every table and string table counts against the caps before it is read.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/inputcap.h"
#include "base/util.h"
#include "symbolize/elf/elfsym_int.h"
#include "symbolize/elf/symidx.h"

static int bind_rank(int bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/* The section index of @sym, through SHT_SYMTAB_SHNDX when it overflowed. */
static size_t sym_shndx(const GElf_Sym *sym, Elf32_Word xndx, bool have_x)
{
	if (sym->st_shndx == SHN_XINDEX)
		return have_x ? xndx : SHN_UNDEF;
	/* SHN_ABS, SHN_COMMON and the other reserved indices: not code. */
	if (sym->st_shndx >= SHN_LORESERVE)
		return SHN_UNDEF;
	return sym->st_shndx;
}

/*
 * Check symbol table section @idx and its string table against the caps:
 * its section in *@scn, its string table's in *@strscn, its entry count in
 * *@n.  0, -ENOEXEC (malformed) or -E2BIG (over a cap).
 */
static int elfsym__check_symtab(struct reader *r, size_t idx, Elf_Scn **scn, Elf_Scn **strscn,
				size_t *n)
{
	GElf_Shdr sh, strsh;
	size_t entsz;

	*scn = elf_getscn(r->elf, idx);
	if (!*scn || !gelf_getshdr(*scn, &sh))
		return libelf_failed(r, "gelf_getshdr");
	entsz = gelf_fsize(r->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsz || sh.sh_entsize != entsz || sh.sh_size % entsz)
		return malformed(r, "bad symbol table entry size");
	*n = sh.sh_size / entsz;
	if (*n > r->max_syms - r->syms_seen) {
		pr_debug("elfsym: '%s': more than %zu symbols\n", r->name, r->max_syms);
		inputcap__hit(INPUTCAP_SYMBOLS);
		return -E2BIG;
	}
	r->syms_seen += *n;
	if (sh.sh_link == 0 || sh.sh_link >= r->shnum ||
	    r->secs[sh.sh_link].type != SHT_STRTAB)
		return malformed(r, "symbol table not linked to a string table");
	*strscn = elf_getscn(r->elf, sh.sh_link);
	if (!*strscn || !gelf_getshdr(*strscn, &strsh))
		return libelf_failed(r, "gelf_getshdr");
	if (strsh.sh_size > r->max_strtab - r->strtab_seen) {
		pr_debug("elfsym: '%s': more than %zu bytes of string tables\n",
			 r->name, r->max_strtab);
		inputcap__hit(INPUTCAP_SYMBOLS);
		return -E2BIG;
	}
	r->strtab_seen += strsh.sh_size;
	return 0;
}

/* The SHT_SYMTAB_SHNDX data of symbol table @idx into *@xdata (NULL: none).  0 or -ENOEXEC. */
static int elfsym__xindex(struct reader *r, size_t idx, Elf_Data **xdata)
{
	size_t i;

	*xdata = NULL;
	for (i = 1; i < r->shnum; i++) {
		if (r->secs[i].type == SHT_SYMTAB_SHNDX && r->secs[i].link == idx) {
			*xdata = elf_getdata(elf_getscn(r->elf, i), NULL);
			return *xdata ? 0 : libelf_failed(r, "elf_getdata");
		}
	}
	return 0;
}

/*
 * Append @sym, whose section index is @shndx, to r->cands (which has room)
 * when it is a function with a name in string table @strbuf (@strsz bytes).
 */
static void elfsym__add_cand(struct reader *r, const GElf_Sym *sym, size_t shndx,
			     const char *strbuf, size_t strsz)
{
	struct symidx_cand *c = &r->cands[r->nr_cands];
	const struct sec *s;
	size_t max_len;
	int type;

	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return;
	if (shndx == SHN_UNDEF || shndx >= r->shnum || !r->secs[shndx].exec)
		return;
	s = &r->secs[shndx];
	/* A name must start and end (NUL) inside the string table. */
	if (sym->st_name == 0 || sym->st_name >= strsz)
		return;
	max_len = strsz - sym->st_name;
	c->name = strbuf + sym->st_name;
	c->len = strnlen(c->name, max_len);
	if (c->len == 0 || c->len == max_len)
		return;

	if (r->eh.e_type == ET_REL) {
		if (sym->st_value >= s->end - s->start)
			return;
		c->addr = s->start + sym->st_value;
	} else {
		c->addr = sym->st_value;
	}
	if (c->addr < s->start || c->addr >= s->end)
		return;
	c->size = sym->st_size < s->end - c->addr ? sym->st_size : s->end - c->addr;
	c->limit = s->end;
	c->rank = bind_rank(GELF_ST_BIND(sym->st_info));
	r->nr_cands++;
}

/* Append the functions of symbol table section @idx to r->cands. */
static int elfsym__read_symtab(struct reader *r, size_t idx)
{
	Elf_Data *syms, *strs, *xdata;
	Elf_Scn *scn, *strscn;
	struct symidx_cand *tmp;
	size_t i, n, strsz;
	const char *strbuf;
	int err;

	err = elfsym__check_symtab(r, idx, &scn, &strscn, &n);
	if (err || !n)
		return err;
	syms = elf_getdata(scn, NULL);
	strs = elf_getdata(strscn, NULL);
	if (!syms || !strs)
		return libelf_failed(r, "elf_getdata");
	strbuf = strs->d_buf;
	strsz = strbuf ? strs->d_size : 0;
	err = elfsym__xindex(r, idx, &xdata);
	if (err)
		return err;

	tmp = realloc(r->cands, (r->nr_cands + n) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	r->cands = tmp;

	for (i = 0; i < n; i++) {
		Elf32_Word xndx = 0;
		GElf_Sym sym;

		if (!gelf_getsymshndx(syms, xdata, (int)i, &sym, &xndx))
			return libelf_failed(r, "gelf_getsymshndx");
		elfsym__add_cand(r, &sym, sym_shndx(&sym, xndx, xdata != NULL), strbuf, strsz);
	}
	return 0;
}

int elfsym__read_symbols(struct reader *r)
{
	size_t i;
	int err;

	for (i = 1; i < r->shnum; i++) {
		if (r->secs[i].type != SHT_SYMTAB && r->secs[i].type != SHT_DYNSYM)
			continue;
		err = elfsym__read_symtab(r, i);
		if (err)
			return err;
	}
	return 0;
}
