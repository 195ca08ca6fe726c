/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demangle: the readable name of a C++ or Rust symbol, through binutils'
 * libiberty (the demangler c++filt, perf and gdb use), and a cache so each
 * distinct name is demangled once however many samples hit it.
 * No libbpf here.
 */
#ifndef BPFSYM_DEMANGLE_H
#define BPFSYM_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"

/*
 * Longest name handed to the demangler.  Names come from files we do not
 * trust and some demanglers' cost grows faster than the input; real C++
 * names past this are rare and stay mangled, which is still a name.
 */
#define DEMANGLE_MAX_LEN 4096

/*
 * The demangled form of @name as a new malloc'd string the caller frees,
 * or NULL when @name is not a C++ (Itanium ABI, "_Z...") or Rust (legacy
 * "_ZN...17h<hash>E" or v0 "_R...") mangled name, is longer than
 * DEMANGLE_MAX_LEN, or does not demangle.  Rust's hash suffix is dropped,
 * as rustfilt does; C++ keeps its parameter list, as c++filt does.
 */
char *demangle(const char *name);

/*
 * Whether @name has a mangled name's prefix ("_Z", "_R"): false means
 * demangle() returns NULL for it, without looking further.
 */
bool demangle__is_mangled(const char *name);

/*
 * The display names of the strings of one strtab, by their ids: an array,
 * not a table, since ids are dense.  Zeroed: empty.
 */
struct demangle_cache {
	uint32_t *shown;	/* by a mangled name's id: its display name's id + 1; 0: not made yet */
	size_t cap;
};

/*
 * The display name of string @id of @st: the string itself when it is not
 * mangled, else its demangled form, interned in @st.  Each @id is
 * demangled once.  NULL with errno set: EINVAL (no string @id), ENOMEM.
 */
const char *demangle_cache__get(struct demangle_cache *c, struct strtab *st, uint32_t id);

/* Forget everything (the strings stay in their strtab). */
void demangle_cache__free(struct demangle_cache *c);

#endif /* BPFSYM_DEMANGLE_H */
