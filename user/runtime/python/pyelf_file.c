// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyelf_file: pread()-only access to the parts of an ELF file pyelf reads
 * (pyelf_int.h).  Every offset and size the file declares is checked
 * against the file's size, with overflow-safe sums, before it is read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inputcap.h"
#include "base/util.h"
#include "runtime/python/pyelf_int.h"

/* Symbols and relocations read per pread(). */
#define CHUNK 4096

/* Whether [off, off + len) lies inside [0, size). */
static int in_file(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

int pyelf_file__pread(const struct pyelf_file *f, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (!in_file(f->size, off, len))
		return -ENOEXEC;
	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;	/* shorter than fstat said: truncated under us */
		done += (size_t)n;
	}
	return 0;
}

static int bad(const struct pyelf_file *f, const char *what)
{
	pr_debug("pyelf: '%s': %s\n", f->name, what);
	return -ENOEXEC;
}

static int read_ehdr(struct pyelf_file *f)
{
	const Elf64_Ehdr *eh = &f->eh;
	int err = pyelf_file__pread(f, 0, &f->eh, sizeof(f->eh));

	if (err)
		return err;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64)
		return bad(f, "not an x86-64 ELF64 LSB file");
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return bad(f, "neither an executable nor a shared object");
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum)
		return bad(f, "program headers");
	if (eh->e_shnum && eh->e_shentsize != sizeof(Elf64_Shdr))
		return bad(f, "section headers");
	return 0;
}

int pyelf_file__open(struct pyelf_file *f)
{
	struct stat st;
	int err;

	f->ph = NULL;
	f->sh = NULL;
	f->nph = f->nsh = 0;
	if (fstat(f->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	f->size = (uint64_t)st.st_size;
	err = read_ehdr(f);
	if (err)
		return err;
	if (f->eh.e_phnum > PYELF_MAX_PHDRS) {
		inputcap__hit(INPUTCAP_SYMBOLS);
		return -E2BIG;
	}
	f->nph = f->eh.e_phnum;
	f->nsh = f->eh.e_shnum;	/* 0 (or SHN_XINDEX-style counts): no sections read */
	f->ph = calloc(f->nph, sizeof(*f->ph));
	f->sh = calloc(f->nsh ? f->nsh : 1, sizeof(*f->sh));
	if (!f->ph || !f->sh) {
		pyelf_file__close(f);
		return -ENOMEM;
	}
	err = pyelf_file__pread(f, f->eh.e_phoff, f->ph, f->nph * sizeof(*f->ph));
	if (!err && f->nsh)
		err = pyelf_file__pread(f, f->eh.e_shoff, f->sh, f->nsh * sizeof(*f->sh));
	if (err)
		pyelf_file__close(f);
	return err;
}

void pyelf_file__close(struct pyelf_file *f)
{
	free(f->ph);
	free(f->sh);
	f->ph = NULL;
	f->sh = NULL;
	f->nph = f->nsh = 0;
}

int pyelf_file__vread(const struct pyelf_file *f, uint64_t vaddr, void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < f->nph; i++) {
		const Elf64_Phdr *p = &f->ph[i];
		uint64_t rel, infile;

		if (p->p_type != PT_LOAD || vaddr < p->p_vaddr || vaddr - p->p_vaddr > p->p_memsz ||
		    len > p->p_memsz - (vaddr - p->p_vaddr))
			continue;
		rel = vaddr - p->p_vaddr;
		infile = p->p_filesz > rel ? p->p_filesz - rel : 0;
		if (infile > len)
			infile = len;
		memset((char *)buf + infile, 0, len - infile);
		if (!infile)
			return 0;
		if (p->p_offset > UINT64_MAX - rel)
			return -ENOEXEC;
		return pyelf_file__pread(f, p->p_offset + rel, buf, infile);
	}
	return -ENOEXEC;
}

int pyelf_file__vstr(const struct pyelf_file *f, uint64_t vaddr, char *buf, size_t cap)
{
	size_t i;

	/* Byte by byte through vread would be a pread each: read what fits, then look for the NUL. */
	for (i = cap - 1; i > 0; i /= 2)
		if (!pyelf_file__vread(f, vaddr, buf, i))
			break;
	if (!i)
		return -ENOEXEC;
	buf[i] = 0;
	return strlen(buf) < i ? 0 : -ENOEXEC;
}

/* Read section @idx's contents (a string table) whole: a new buffer, or NULL with *err set. */
static char *read_strtab(const struct pyelf_file *f, size_t idx, uint64_t *len, int *err)
{
	const Elf64_Shdr *s;
	char *buf;

	if (idx >= f->nsh || f->sh[idx].sh_type != SHT_STRTAB) {
		*err = -ENOEXEC;
		return NULL;
	}
	s = &f->sh[idx];
	if (s->sh_size > PYELF_MAX_STRTAB) {
		inputcap__hit(INPUTCAP_SYMBOLS);
		*err = -E2BIG;
		return NULL;
	}
	buf = malloc(s->sh_size + 1);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = pyelf_file__pread(f, s->sh_offset, buf, s->sh_size);
	if (*err) {
		free(buf);
		return NULL;
	}
	buf[s->sh_size] = 0;	/* a last string without its NUL ends here */
	*len = s->sh_size;
	return buf;
}

/* Match the symbols of section @s (whose strings are @str, @slen bytes) against @want. */
static void match_chunk(const Elf64_Sym *syms, size_t n, const char *str, uint64_t slen,
			struct pyelf_want *want, size_t nr)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = &syms[i];

		if (s->st_shndx == SHN_UNDEF || s->st_name >= slen)
			continue;
		for (j = 0; j < nr; j++)
			if (!want[j].found && !strcmp(str + s->st_name, want[j].name)) {
				want[j].value = s->st_value;
				want[j].size = s->st_size;
				want[j].found = 1;
			}
	}
}

static int scan_symtab(const struct pyelf_file *f, const Elf64_Shdr *s, struct pyelf_want *want,
		       size_t nr)
{
	Elf64_Sym *buf;
	uint64_t slen, off, left;
	char *str;
	int err = 0;

	if (s->sh_entsize != sizeof(Elf64_Sym) || !in_file(f->size, s->sh_offset, s->sh_size))
		return -ENOEXEC;
	if (s->sh_size > PYELF_MAX_SYMTAB) {
		inputcap__hit(INPUTCAP_SYMBOLS);
		return -E2BIG;
	}
	str = read_strtab(f, s->sh_link, &slen, &err);
	if (!str)
		return err;
	buf = malloc(CHUNK * sizeof(*buf));
	if (!buf) {
		free(str);
		return -ENOMEM;
	}
	for (off = 0, left = s->sh_size / sizeof(*buf); left && !err;) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;

		err = pyelf_file__pread(f, s->sh_offset + off, buf, n * sizeof(*buf));
		if (!err)
			match_chunk(buf, n, str, slen, want, nr);
		off += n * sizeof(*buf);
		left -= n;
	}
	free(buf);
	free(str);
	return err;
}

int pyelf_file__symbols(const struct pyelf_file *f, struct pyelf_want *want, size_t nr)
{
	static const uint32_t order[] = { SHT_DYNSYM, SHT_SYMTAB };
	size_t k, i, j;
	int err;

	for (k = 0; k < ARRAY_SIZE(order); k++) {
		for (i = 0; i < f->nsh; i++) {
			if (f->sh[i].sh_type != order[k])
				continue;
			err = scan_symtab(f, &f->sh[i], want, nr);
			if (err)
				return err;
		}
		for (j = 0; j < nr && want[j].found; j++)
			;
		if (j == nr)
			return 0;
	}
	return 0;
}

static int scan_rela(const struct pyelf_file *f, const Elf64_Shdr *s, struct pyelf_relocs *r)
{
	Elf64_Rela *buf;
	uint64_t off, left;
	int err = 0;

	if (s->sh_entsize != sizeof(Elf64_Rela) || !in_file(f->size, s->sh_offset, s->sh_size))
		return -ENOEXEC;
	buf = malloc(CHUNK * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (off = 0, left = s->sh_size / sizeof(*buf); left && !err;) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK, i;

		err = pyelf_file__pread(f, s->sh_offset + off, buf, n * sizeof(*buf));
		for (i = 0; !err && i < n; i++) {
			if (ELF64_R_TYPE(buf[i].r_info) != R_X86_64_RELATIVE ||
			    buf[i].r_offset < r->lo || buf[i].r_offset >= r->hi ||
			    r->nr >= PYELF_MAX_RELOCS)
				continue;
			r->off[r->nr] = buf[i].r_offset;
			r->addend[r->nr++] = (uint64_t)buf[i].r_addend;
		}
		off += n * sizeof(*buf);
		left -= n;
	}
	free(buf);
	return err;
}

int pyelf_file__relocs(const struct pyelf_file *f, struct pyelf_relocs *r)
{
	uint64_t total = 0;
	size_t i;
	int err;

	r->nr = 0;
	for (i = 0; i < f->nsh; i++) {
		if (f->sh[i].sh_type != SHT_RELA)
			continue;
		if (f->sh[i].sh_size > PYELF_MAX_RELA - total) {
			inputcap__hit(INPUTCAP_SYMBOLS);
			return -E2BIG;
		}
		total += f->sh[i].sh_size;
		err = scan_rela(f, &f->sh[i], r);
		if (err)
			return err;
	}
	return 0;
}

int pyelf_file__ptr(const struct pyelf_file *f, const struct pyelf_relocs *r, uint64_t vaddr,
		    uint64_t *val)
{
	size_t i;

	for (i = 0; r && i < r->nr; i++)
		if (r->off[i] == vaddr) {
			*val = r->addend[i];
			return 0;
		}
	return pyelf_file__vread(f, vaddr, val, sizeof(*val));
}
