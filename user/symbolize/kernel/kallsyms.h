/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kallsyms: kernel symbols from /proc/kallsyms text (or a saved copy of
 * another boot's), sorted for binary search.  No libbpf here.
 */
#ifndef BPFSYM_KALLSYMS_H
#define BPFSYM_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

struct ksym {
	uint64_t addr;
	uint64_t size;		/* up to the next symbol's address; at most 4 KiB for
				 * the last one and a module's last one; 0 for the
				 * section end markers _etext and _einittext */
	const char *name;	/* owned by the struct ksyms */
	const char *module;	/* "[name]" suffix without brackets, NULL for vmlinux */
};

/*
 * Parse kallsyms text from @path ("/proc/kallsyms" when NULL).  Keeps text
 * symbols (t, T, w, W) including modules' and BPF programs'.  Lines that do
 * not parse are skipped and counted (ksyms__nr_bad_lines()).
 * Returns NULL with errno set on failure (ENOENT, EACCES, ENOMEM, E2BIG when
 * the file exceeds the 256 MiB cap, ENODATA when no symbol was found).
 */
struct ksyms *ksyms__load(const char *path);

/* Same, from a buffer of @len bytes (need not be NUL terminated). */
struct ksyms *ksyms__parse(const char *buf, size_t len);

/* ksyms__free(NULL) is a no-op. */
void ksyms__free(struct ksyms *ks);

/*
 * The symbol covering @addr, or NULL: below the first symbol, or past the
 * end of the last one.  O(log n).
 */
const struct ksym *ksyms__lookup(const struct ksyms *ks, uint64_t addr);

/*
 * The address of symbol @name (first match in address order): 0, or
 * -ENOENT if absent (always when restricted: the address is unknown).
 */
int ksyms__find(const struct ksyms *ks, const char *name, uint64_t *addr);

/*
 * True when every address read was 0: kptr_restrict hides them from us,
 * and any name we printed would be wrong.
 */
bool ksyms__restricted(const struct ksyms *ks);

/*
 * Symbol @i (0 <= i < ksyms__nr_syms()) in address order, each run of
 * equal addresses with its preferred name first; NULL past the end.  For
 * walking every symbol, e.g. to list the module names.
 */
const struct ksym *ksyms__sym(const struct ksyms *ks, size_t i);

size_t ksyms__nr_syms(const struct ksyms *ks);
size_t ksyms__nr_bad_lines(const struct ksyms *ks);

#endif /* BPFSYM_KALLSYMS_H */
