// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfplt: PLT stubs named from .rela.plt (and .plt.got's from .rela.dyn),
 * and PLT0 named ".plt", as perf does.  On x86-64 every stub is 16
 * bytes, in .plt.sec with IBT, else in .plt; each jumps through a GOT
 * slot (jmp *disp32(%rip), maybe after endbr64 and a bnd prefix), and
 * .rela.plt says which function fills that slot.  The order of the
 * relocations is not the order of the stubs (libc's IRELATIVE ones come
 * first in .plt and last in .rela.plt), so, as objdump does, each stub's
 * jump is decoded to find its slot.  An IRELATIVE slot (an IFUNC called
 * through the PLT) is named after the IFUNC symbol at its addend.  Every
 * index and offset comes from the file: each is checked before use.
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf/elfplt.h"

#define PLT_ENTRY	16
#define SUFFIX		"@plt"

/* A section found by name: its descriptor and header. */
struct sect {
	Elf_Scn *scn;
	GElf_Shdr sh;
};

/*
 * The sections the stubs come from: .plt (its header, PLT0, and without
 * IBT the stubs), .plt.sec (IBT's stubs), .plt.got (stubs of functions
 * also used as data, e.g. __cxa_finalize: their GOT slot is a GLOB_DAT
 * one of .rela.dyn), and the two relocation tables.
 */
struct plt_tables {
	struct sect plt, plt_sec, plt_got, rela_plt, rela_dyn;
};

/* A relocation, by the GOT slot it fills. */
struct slot {
	uint64_t got;
	size_t rela;		/* its index */
};

/*
 * A relocation table with the symbols it names, read and checked: its
 * relocations of one type (JUMP_SLOT, GLOB_DAT), and IRELATIVE ones.
 */
struct rela_tab {
	Elf_Data *rela, *syms, *strs;
	size_t nrela, nsyms;
	uint32_t type;
	struct slot *slots;	/* by GOT slot; none (0): no stub is named from it */
	size_t nslots;
};

static void find_tables(Elf *elf, size_t shstrndx, struct plt_tables *t)
{
	static const struct { const char *name; size_t off; Elf64_Word type; } want[] = {
		{ ".plt", offsetof(struct plt_tables, plt), SHT_PROGBITS },
		{ ".plt.sec", offsetof(struct plt_tables, plt_sec), SHT_PROGBITS },
		{ ".plt.got", offsetof(struct plt_tables, plt_got), SHT_PROGBITS },
		{ ".rela.plt", offsetof(struct plt_tables, rela_plt), SHT_RELA },
		{ ".rela.dyn", offsetof(struct plt_tables, rela_dyn), SHT_RELA },
	};
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	size_t i;

	memset(t, 0, sizeof(*t));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			struct sect *d = (struct sect *)((char *)t + want[i].off);

			if (!strcmp(name, want[i].name) && sh.sh_type == want[i].type && !d->scn) {
				d->scn = scn;
				d->sh = sh;
			}
		}
	}
}

/* Whether @s holds code of at least @min bytes whose addresses do not wrap. */
static bool code_ok(const struct sect *s, uint64_t min)
{
	return s->scn && s->sh.sh_size >= min && s->sh.sh_addr + s->sh.sh_size > s->sh.sh_addr;
}

/*
 * The GOT slot the stub of @size bytes at @code (at address @addr) jumps
 * through: the first jmp *disp32(%rip) (ff 25) in it.  0: none.
 */
static uint64_t stub_slot(const uint8_t *code, uint64_t addr, size_t size)
{
	int32_t disp;
	size_t j;

	for (j = 0; j + 6 <= size; j++) {
		if (code[j] != 0xff || code[j + 1] != 0x25)
			continue;
		memcpy(&disp, code + j + 2, sizeof(disp));
		return addr + j + 6 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* "NAME@plt" into a new string, NAME being the @len bytes at @name. */
static char *plt_name(const char *name, size_t len)
{
	char *s = malloc(len + sizeof(SUFFIX));

	if (s) {
		memcpy(s, name, len);
		memcpy(s + len, SUFFIX, sizeof(SUFFIX));
	}
	return s;
}

/*
 * The name of IRELATIVE stub @i: its resolver is at the addend, which is
 * an IFUNC symbol of the file (e.g. libc's strlen): "strlen@plt" when one
 * of the @nr candidates is there, else objdump's "*ABS*+0xADDEND@plt".
 */
static char *irelative_name(uint64_t addend, const struct symidx_cand *c, size_t nr)
{
	char buf[48];
	size_t i;

	const struct symidx_cand *best = NULL;

	/* Of the aliases there, the one a lookup names (symidx's rule). */
	for (i = 0; i < nr; i++) {
		if (c[i].addr != addend)
			continue;
		if (!best || c[i].rank < best->rank ||
		    (c[i].rank == best->rank && (c[i].len < best->len ||
		     (c[i].len == best->len && memcmp(c[i].name, best->name, c[i].len) < 0))))
			best = &c[i];
	}
	if (best)
		return plt_name(best->name, best->len);
	snprintf(buf, sizeof(buf), "*ABS*+0x%llx", (unsigned long long)addend);
	return plt_name(buf, strlen(buf));
}

/*
 * Read relocation table @r (its symbols by its link) into @t, its slots
 * of type @type or IRELATIVE sorted (.rela.dyn's are mostly RELATIVE, a
 * library's by the hundred thousand): 0 (no slots where it has none we
 * can use) or -ENOMEM.
 */
static int rela_open(Elf *elf, const struct sect *r, uint32_t type, struct rela_tab *t)
{
	GElf_Shdr sym_sh, str_sh;
	Elf_Scn *symscn, *strscn;
	GElf_Rela rela;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->type = type;
	if (!r->scn || !r->sh.sh_entsize)
		return 0;
	symscn = elf_getscn(elf, r->sh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &sym_sh) || sym_sh.sh_type != SHT_DYNSYM ||
	    !sym_sh.sh_entsize)
		return 0;
	strscn = elf_getscn(elf, sym_sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &str_sh))
		return 0;
	t->rela = elf_getdata(r->scn, NULL);
	t->syms = elf_getdata(symscn, NULL);
	t->strs = elf_getdata(strscn, NULL);
	if (!t->rela || !t->syms || !t->strs || !t->strs->d_buf)
		return 0;
	t->nrela = t->rela->d_size / r->sh.sh_entsize;
	t->nsyms = t->syms->d_size / sym_sh.sh_entsize;
	if (!t->nrela)
		return 0;
	t->slots = calloc(t->nrela, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	for (i = 0; i < t->nrela; i++) {
		if (gelf_getrela(t->rela, (int)i, &rela) &&
		    (GELF_R_TYPE(rela.r_info) == type || GELF_R_TYPE(rela.r_info) == R_X86_64_IRELATIVE)) {
			t->slots[t->nslots].got = rela.r_offset;
			t->slots[t->nslots++].rela = i;
		}
	}
	qsort(t->slots, t->nslots, sizeof(*t->slots), slot_cmp);
	return 0;
}

/*
 * "func@plt" for the stub jumping through GOT slot @got, which a
 * relocation of @t fills: a new string, or NULL with *@err 0 (no such
 * relocation, a bad name) or -ENOMEM.
 */
static char *slot_name(const struct rela_tab *t, uint64_t got, const struct symidx_cand *cands,
		       size_t nr_cands, int *err)
{
	const struct slot key = { .got = got }, *hit;
	const char *name;
	GElf_Rela r;
	GElf_Sym sym;
	size_t si, len;
	char *s;

	*err = 0;
	hit = got && t->nslots ? bsearch(&key, t->slots, t->nslots, sizeof(*t->slots), slot_cmp) : NULL;
	if (!hit || !gelf_getrela(t->rela, (int)hit->rela, &r))
		return NULL;
	if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
		s = irelative_name((uint64_t)r.r_addend, cands, nr_cands);
	} else if (GELF_R_TYPE(r.r_info) == t->type) {
		si = GELF_R_SYM(r.r_info);
		if (!si || si >= t->nsyms || !gelf_getsym(t->syms, (int)si, &sym) ||
		    sym.st_name >= t->strs->d_size)
			return NULL;
		name = (const char *)t->strs->d_buf + sym.st_name;
		len = strnlen(name, t->strs->d_size - sym.st_name);
		if (!len || len == t->strs->d_size - sym.st_name)
			return NULL;
		s = plt_name(name, len);
	} else {
		return NULL;
	}
	if (!s)
		*err = -ENOMEM;
	return s;
}

/*
 * Name the stubs of @entry bytes each in section @stubs from relocation
 * table @t, appending to @out up to @cap symbols in all.  0 or -ENOMEM.
 */
static int read_stubs(const struct sect *stubs, size_t entry, const struct rela_tab *t,
		      const struct symidx_cand *cands, size_t nr_cands, size_t cap, struct elfplt *out)
{
	uint64_t limit = stubs->sh.sh_addr + stubs->sh.sh_size;
	size_t k, nstubs;
	Elf_Data *code;
	int err;
	char *s;

	if (!t->nslots || !code_ok(stubs, entry))
		return 0;
	code = elf_getdata(stubs->scn, NULL);
	nstubs = stubs->sh.sh_size / entry;
	if (!code || !code->d_buf || code->d_size < nstubs * entry)
		return 0;
	for (k = 0; k < nstubs && out->nr < cap; k++) {
		uint64_t addr = stubs->sh.sh_addr + k * entry;

		s = slot_name(t, stub_slot((const uint8_t *)code->d_buf + k * entry, addr, entry),
			      cands, nr_cands, &err);
		if (err)
			return err;
		if (!s)
			continue;
		out->syms[out->nr++] = (struct elfplt_sym){
			.addr = addr, .size = entry, .limit = limit, .name = s, .len = strlen(s),
		};
	}
	return 0;
}

/*
 * PLT0, the lazy resolver's entry every stub's first call goes through,
 * named ".plt" as perf names it; with IBT, all of .plt is trampolines
 * to it (the stubs are in .plt.sec), and ".plt" covers the section.
 * 0 (named, or there is none) or -ENOMEM.
 */
static int plt_header(Elf *elf, const struct plt_tables *t, struct elfplt *out)
{
	uint64_t limit = t->plt.sh.sh_addr + t->plt.sh.sh_size;
	const uint8_t *code;
	Elf_Data *d;
	char *s;

	if (!code_ok(&t->plt, PLT_ENTRY) || !(d = elf_getdata(t->plt.scn, NULL)) || !d->d_buf ||
	    d->d_size < PLT_ENTRY)
		return 0;
	/*
	 * PLT0 pushes the GOT's second slot (ff 35: push disp32(%rip)); a
	 * static program's .plt has none, only IRELATIVE stubs (ff 25).
	 */
	code = d->d_buf;
	if (code[0] != 0xff || code[1] != 0x35)
		return 0;
	s = strdup(".plt");
	if (!s)
		return -ENOMEM;
	out->syms[out->nr++] = (struct elfplt_sym){
		.addr = t->plt.sh.sh_addr,
		.size = code_ok(&t->plt_sec, PLT_ENTRY) ? t->plt.sh.sh_size : PLT_ENTRY,
		.limit = limit, .name = s, .len = strlen(s),
	};
	return 0;
}

int elfplt__read(Elf *elf, size_t shstrndx, size_t max, const struct symidx_cand *cands,
		 size_t nr_cands, struct elfplt *out)
{
	struct rela_tab jump = { 0 }, glob = { 0 };
	const struct sect *stubs;
	struct plt_tables t;
	size_t cap, got_entry;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_type == ET_REL ||
	    gelf_getclass(elf) != ELFCLASS64 || !max)
		return 0;
	find_tables(elf, shstrndx, &t);
	/* With IBT, .plt holds the lazy-binding trampolines; calls go to .plt.sec. */
	stubs = code_ok(&t.plt_sec, PLT_ENTRY) ? &t.plt_sec : &t.plt;
	/* .plt.got: 8 bytes a stub (jmp, 2-byte nop), 16 with IBT's endbr64. */
	got_entry = t.plt_got.sh.sh_entsize == 8 || t.plt_got.sh.sh_entsize == 16 ? t.plt_got.sh.sh_entsize : 0;
	cap = 1 + (code_ok(stubs, PLT_ENTRY) ? stubs->sh.sh_size / PLT_ENTRY : 0) +
	      (got_entry && code_ok(&t.plt_got, got_entry) ? t.plt_got.sh.sh_size / got_entry : 0);
	if (cap > max)
		cap = max;
	out->syms = calloc(cap, sizeof(*out->syms));
	if (!out->syms)
		return -ENOMEM;
	err = plt_header(elf, &t, out);
	err = err ?: rela_open(elf, &t.rela_plt, R_X86_64_JUMP_SLOT, &jump);
	err = err ?: read_stubs(stubs, PLT_ENTRY, &jump, cands, nr_cands, cap, out);
	if (got_entry) {
		err = err ?: rela_open(elf, &t.rela_dyn, R_X86_64_GLOB_DAT, &glob);
		err = err ?: read_stubs(&t.plt_got, got_entry, &glob, cands, nr_cands, cap, out);
	}
	free(jump.slots);
	free(glob.slots);
	return err;
}

int elfplt__append(Elf *elf, size_t shstrndx, size_t max, struct elfplt *keep,
		   struct symidx_cand **cands, size_t *nr)
{
	struct symidx_cand *tmp;
	size_t i;
	int err;

	err = elfplt__read(elf, shstrndx, max, *cands, *nr, keep);
	if (err || !keep->nr)
		return err;
	tmp = realloc(*cands, (*nr + keep->nr) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	*cands = tmp;
	for (i = 0; i < keep->nr; i++) {
		const struct elfplt_sym *p = &keep->syms[i];

		tmp[(*nr)++] = (struct symidx_cand){
			.addr = p->addr, .size = p->size, .limit = p->limit,
			.name = p->name, .len = p->len, .rank = 4,
		};
	}
	return 0;
}

void elfplt__free(struct elfplt *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free((char *)p->syms[i].name);
	free(p->syms);
	memset(p, 0, sizeof(*p));
}
