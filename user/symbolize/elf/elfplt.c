// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfplt: PLT stubs named from .rela.plt.  On x86-64 every stub is 16
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf/elfplt.h"

#define PLT_ENTRY	16
#define SUFFIX		"@plt"

struct plt_tables {
	Elf_Scn *rela, *dynsym, *stubs;
	GElf_Shdr rela_sh, sym_sh, stubs_sh;
};

/* A .rela.plt entry, by the GOT slot it fills. */
struct slot {
	uint64_t got;
	size_t rela;		/* its index */
};

/* Find .rela.plt, its symbol table, and the stubs; false when this file has none we read. */
static bool find_tables(Elf *elf, size_t shstrndx, struct plt_tables *t)
{
	GElf_Shdr sh, plt = { 0 }, plt_sec = { 0 };
	Elf_Scn *scn = NULL, *plt_scn = NULL, *plt_sec_scn = NULL;
	const char *name;

	memset(t, 0, sizeof(*t));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA) {
			t->rela = scn;
			t->rela_sh = sh;
		} else if (!strcmp(name, ".plt") && sh.sh_type == SHT_PROGBITS) {
			plt = sh;
			plt_scn = scn;
		} else if (!strcmp(name, ".plt.sec") && sh.sh_type == SHT_PROGBITS) {
			plt_sec = sh;
			plt_sec_scn = scn;
		}
	}
	if (!t->rela)
		return false;
	t->dynsym = elf_getscn(elf, t->rela_sh.sh_link);
	if (!t->dynsym || !gelf_getshdr(t->dynsym, &t->sym_sh) || t->sym_sh.sh_type != SHT_DYNSYM)
		return false;
	/* With IBT, .plt holds the lazy-binding trampolines; calls go to .plt.sec. */
	if (plt_sec.sh_size) {
		t->stubs = plt_sec_scn;
		t->stubs_sh = plt_sec;
	} else {
		t->stubs = plt_scn;
		t->stubs_sh = plt;
	}
	return t->stubs && t->stubs_sh.sh_size >= PLT_ENTRY &&
	       t->stubs_sh.sh_addr + t->stubs_sh.sh_size > t->stubs_sh.sh_addr;
}

/*
 * The GOT slot the stub of 16 bytes at @code (at address @addr) jumps
 * through: the first jmp *disp32(%rip) (ff 25) in it.  0: none.
 */
static uint64_t stub_slot(const uint8_t *code, uint64_t addr)
{
	int32_t disp;
	size_t j;

	for (j = 0; j + 6 <= PLT_ENTRY; j++) {
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

int elfplt__read(Elf *elf, size_t shstrndx, size_t max, const struct symidx_cand *cands,
		 size_t nr_cands, struct elfplt *out)
{
	size_t i, k, n, nsyms, nstubs, nslots = 0, len, si;
	Elf_Data *rela, *syms, *strs, *code;
	struct slot *slots;
	struct plt_tables t;
	const char *name;
	Elf_Scn *strscn;
	GElf_Ehdr eh;
	GElf_Rela r;
	GElf_Sym sym;
	char *s;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_type == ET_REL ||
	    gelf_getclass(elf) != ELFCLASS64 || !find_tables(elf, shstrndx, &t))
		return 0;
	rela = elf_getdata(t.rela, NULL);
	syms = elf_getdata(t.dynsym, NULL);
	strscn = elf_getscn(elf, t.sym_sh.sh_link);
	strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!rela || !syms || !strs || !strs->d_buf || !t.rela_sh.sh_entsize || !t.sym_sh.sh_entsize)
		return 0;
	code = elf_getdata(t.stubs, NULL);
	n = rela->d_size / t.rela_sh.sh_entsize;
	nsyms = syms->d_size / t.sym_sh.sh_entsize;
	nstubs = t.stubs_sh.sh_size / PLT_ENTRY;
	if (!code || !code->d_buf || code->d_size < nstubs * PLT_ENTRY || !n)
		return 0;
	if (nstubs > max)
		nstubs = max;
	slots = calloc(n, sizeof(*slots));
	out->syms = calloc(nstubs, sizeof(*out->syms));
	if (!slots || !out->syms) {
		free(slots);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (gelf_getrela(rela, (int)i, &r)) {
			slots[nslots].got = r.r_offset;
			slots[nslots++].rela = i;
		}
	}
	qsort(slots, nslots, sizeof(*slots), slot_cmp);
	for (k = 0; k < nstubs; k++) {
		uint64_t addr = t.stubs_sh.sh_addr + k * PLT_ENTRY;
		struct slot key = { .got = stub_slot((const uint8_t *)code->d_buf + k * PLT_ENTRY, addr) };
		const struct slot *hit;

		hit = key.got ? bsearch(&key, slots, nslots, sizeof(*slots), slot_cmp) : NULL;
		if (!hit || !gelf_getrela(rela, (int)hit->rela, &r))
			continue;
		if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
			s = irelative_name((uint64_t)r.r_addend, cands, nr_cands);
		} else if (GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT) {
			si = GELF_R_SYM(r.r_info);
			if (!si || si >= nsyms || !gelf_getsym(syms, (int)si, &sym) ||
			    sym.st_name >= strs->d_size)
				continue;
			name = (const char *)strs->d_buf + sym.st_name;
			len = strnlen(name, strs->d_size - sym.st_name);
			if (!len || len == strs->d_size - sym.st_name)
				continue;
			s = plt_name(name, len);
		} else {
			continue;
		}
		if (!s) {
			free(slots);
			return -ENOMEM;
		}
		out->syms[out->nr++] = (struct elfplt_sym){
			.addr = addr,
			.size = PLT_ENTRY,
			.limit = t.stubs_sh.sh_addr + t.stubs_sh.sh_size,
			.name = s,
			.len = strlen(s),
		};
	}
	free(slots);
	return 0;
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
