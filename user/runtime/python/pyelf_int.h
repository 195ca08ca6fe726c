/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyelf_int: the few things pyelf needs of an ELF file, read with pread()
 * and checked against the file's size: its headers, bytes at a virtual
 * address, the values of named symbols, the targets of the RELATIVE
 * relocations in an address range.  Not a public interface.
 */
#ifndef BPFSYM_PYELF_INT_H
#define BPFSYM_PYELF_INT_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* Caps: a file declaring more is refused (counted as INPUTCAP_SYMBOLS). */
#define PYELF_MAX_PHDRS		256
#define PYELF_MAX_STRTAB	((uint64_t)64 << 20)	/* one string table */
#define PYELF_MAX_SYMTAB	((uint64_t)256 << 20)	/* one symbol table */
#define PYELF_MAX_RELA		((uint64_t)256 << 20)	/* all RELA sections */
#define PYELF_MAX_RELOCS	512	/* kept per range asked */

struct pyelf_file {
	int fd;
	const char *name;
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t nph;
	Elf64_Shdr *sh;
	size_t nsh;
};

/* A symbol wanted by name: value and size filled when found. */
struct pyelf_want {
	const char *name;
	uint64_t value, size;
	int found;
};

/* The RELATIVE relocations whose r_offset is in one range. */
struct pyelf_relocs {
	uint64_t lo, hi;
	size_t nr;
	uint64_t off[PYELF_MAX_RELOCS], addend[PYELF_MAX_RELOCS];
};

/*
 * Read the headers of the file on @f->fd (f->fd, f->name set by the caller).
 * 0; -ENOEXEC (not x86-64 ELF64 LSB ET_EXEC/ET_DYN, or headers outside
 * the file); -E2BIG (over a cap); -EIO, -ENOMEM.
 */
int pyelf_file__open(struct pyelf_file *f);
void pyelf_file__close(struct pyelf_file *f);

/* @len bytes at file offset @off: 0, -ENOEXEC (outside the file), -EIO. */
int pyelf_file__pread(const struct pyelf_file *f, uint64_t off, void *buf, size_t len);

/*
 * @len bytes at virtual address @vaddr, all inside one PT_LOAD (bytes past
 * its file size read as 0, like .bss).  0 or -ENOEXEC (not all mapped), -EIO.
 */
int pyelf_file__vread(const struct pyelf_file *f, uint64_t vaddr, void *buf, size_t len);

/*
 * Look up the @nr symbols @want by name in .dynsym, then in .symtab for
 * those not found.  0 (each want's found says), -ENOEXEC, -E2BIG, -EIO,
 * -ENOMEM.
 */
int pyelf_file__symbols(const struct pyelf_file *f, struct pyelf_want *want, size_t nr);

/*
 * Collect into @r the R_X86_64_RELATIVE relocations of every SHT_RELA
 * section whose r_offset is in [r->lo, r->hi) (at most PYELF_MAX_RELOCS).
 * 0, -ENOEXEC, -E2BIG, -EIO, -ENOMEM.
 */
int pyelf_file__relocs(const struct pyelf_file *f, struct pyelf_relocs *r);

/*
 * The pointer stored at @vaddr as the loaded file would hold it minus its
 * load bias: a RELATIVE relocation's addend when @r has one there, else
 * the 8 bytes of the file.  0 or -ENOEXEC, -EIO.
 */
int pyelf_file__ptr(const struct pyelf_file *f, const struct pyelf_relocs *r, uint64_t vaddr,
		    uint64_t *val);

/* A NUL-terminated string of at most @cap - 1 bytes at @vaddr into @buf: 0 or -ENOEXEC, -EIO. */
int pyelf_file__vstr(const struct pyelf_file *f, uint64_t vaddr, char *buf, size_t cap);

#endif /* BPFSYM_PYELF_INT_H */
