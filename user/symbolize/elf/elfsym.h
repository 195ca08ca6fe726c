/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elfsym: the function symbols of one ELF file, and the arithmetic that
 * turns a file offset (what a mapping gives us) into the ELF virtual
 * address its symbols use.  No libbpf here: unit-testable without root.
 *
 * The file is read with pread()-style access through libelf (ELF_C_READ),
 * never mmap'd, because the files belong to processes we do not trust and
 * may be truncated under us.
 */
#ifndef BPFSYM_ELFSYM_H
#define BPFSYM_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct elfsym;

struct elfsym_sym {
	uint64_t addr;		/* ELF virtual address (st_value); ET_REL: file offset */
	uint64_t size;		/* bytes; fixed up when st_size is 0 */
	const char *name;	/* owned by the struct elfsym */
};

/* Caps that bound what a hostile file can make us allocate. */
struct elfsym_opts {
	size_t max_syms;	/* 0: default (4 Mi symbols) */
	size_t max_strtab;	/* 0: default (256 MiB of string tables) */
	size_t max_debugdata;	/* 0: default (64 MiB): .gnu_debugdata, compressed or not */
};

/*
 * Read the function symbols (.symtab, else .dynsym; both merged when both
 * exist), the PT_LOAD program headers, the GNU build-id and the
 * .gnu_debuglink of the ELF file open on @fd.  @fd is borrowed: not
 * closed, and may be closed once this returns.  @name is used only in log
 * lines.  @opts may be NULL.
 * MiniDebugInfo: the functions of the xz-compressed ELF in .gnu_debugdata
 * (Fedora's stripped binaries) are merged in, under the same caps; when it
 * is over max_debugdata, corrupt or over a cap, the file is read without
 * it (logged at debug level), never failed because of it.
 * ET_REL (.o) files have no addresses: a function's "address" is its file
 * offset, the sh_offset of its section (SHT_PROGBITS, SHF_EXECINSTR) plus
 * st_value, so code copied from the file is looked up by its offset.
 * Returns a new struct elfsym, or NULL with errno set (ENOEXEC: not an ELF
 * file or malformed; E2BIG: a cap was exceeded; ENOMEM).
 */
struct elfsym *elfsym__open_fd(int fd, const char *name, const struct elfsym_opts *opts);

/*
 * elfsym__open_fd() on the @len bytes of ELF file at @buf, handed to
 * libelf's elf_memory(), which wants writable memory.  @buf is borrowed:
 * nothing points into it once this returns.
 */
struct elfsym *elfsym__open_mem(void *buf, size_t len, const char *name,
				const struct elfsym_opts *opts);

/* elfsym__open_fd() on @path opened O_RDONLY|O_CLOEXEC. */
struct elfsym *elfsym__open(const char *path, const struct elfsym_opts *opts);

/* Free @es.  elfsym__free(NULL) is a no-op. */
void elfsym__free(struct elfsym *es);

/*
 * Translate @file_off, an offset into the file (for a mapped address:
 * ip - vma_start + vma_pgoff_bytes), to the virtual address the ELF symbols
 * use, through the PT_LOAD segment whose file range holds it:
 * vaddr = file_off - p_offset + p_vaddr.
 * ET_REL: the identity inside the file range of a section whose functions
 * are kept (SHT_PROGBITS, SHF_EXECINSTR), -ENOENT elsewhere.
 * Returns 0 and sets *@vaddr, or -ENOENT when no PT_LOAD covers @file_off.
 */
int elfsym__offset_to_vaddr(const struct elfsym *es, uint64_t file_off, uint64_t *vaddr);

/* The inverse, for `symbolize --elf`: -ENOENT when no PT_LOAD (ET_REL: code section) covers @vaddr. */
int elfsym__vaddr_to_offset(const struct elfsym *es, uint64_t vaddr, uint64_t *file_off);

/*
 * The function symbol covering @vaddr (addr <= vaddr < addr + size), or
 * NULL when no symbol covers it.  When several symbols share an address
 * (aliases) the same one is always returned: global before weak before
 * local, then the shortest name, then the name's byte order.
 * O(log n).  The pointer lives as long as @es.
 */
const struct elfsym_sym *elfsym__lookup(const struct elfsym *es, uint64_t vaddr);

/*
 * The index of @sym, a symbol elfsym__lookup() returned for @es, in
 * [0, elfsym__nr_syms(es)): for tables a caller keeps beside @es.
 */
size_t elfsym__sym_index(const struct elfsym *es, const struct elfsym_sym *sym);

/* Bytes of memory @es holds (symbols, names, index): what a memory cap counts. */
size_t elfsym__mem_bytes(const struct elfsym *es);

/* Number of function symbols kept. */
size_t elfsym__nr_syms(const struct elfsym *es);

/* e_type of the file (ET_EXEC, ET_DYN, ET_REL...). */
int elfsym__type(const struct elfsym *es);

/*
 * The GNU build-id (NT_GNU_BUILD_ID note) of the file: a pointer to its
 * bytes, valid as long as @es, with *@len set; NULL and *@len = 0 if none.
 */
const uint8_t *elfsym__build_id(const struct elfsym *es, size_t *len);

/*
 * The .gnu_debuglink of the file: the separate debug file's name (a
 * non-empty string, as the file holds it: it may contain anything but NUL,
 * '/' included) with that file's CRC32 in *@crc, or NULL (and *@crc 0)
 * when there is none or it is malformed (no NUL inside the section, empty
 * name, no room for the CRC at the 4-byte aligned offset past the name).
 * The string lives as long as @es.
 */
const char *elfsym__debuglink(const struct elfsym *es, uint32_t *crc);

#endif /* BPFSYM_ELFSYM_H */
