/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demangle: the readable name of a C++ or Rust symbol, through binutils'
 * libiberty (the demangler c++filt, perf and gdb use), and a cache so each
 * distinct name is demangled once however many samples hit it.
 * No libbpf here.
 */
#ifndef BPFSYM_DEMANGLE_H
#define BPFSYM_DEMANGLE_H

#include <stddef.h>

#include "base/htab.h"
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
 * Maps stable names (interned, or living as long as the cache) to
 * interned display names, by the names' addresses.  Zeroed: empty.
 */
struct demangle_cache {
	struct htab tab;	/* hash of a name's address -> its index in pairs + 1 */
	struct demangle_pair {
		const char *raw, *shown;
	} *pairs;
	size_t nr, cap;
};

/*
 * The display name of @name, which must stay where it is as long as @c
 * (interned in @st, say): @name itself when it is not mangled, else its
 * demangled form, interned in @st.  Each distinct @name is demangled once.
 * NULL on ENOMEM.
 */
const char *demangle_cache__get(struct demangle_cache *c, struct strtab *st, const char *name);

/* Forget everything (the strings stay in their strtab). */
void demangle_cache__free(struct demangle_cache *c);

#endif /* BPFSYM_DEMANGLE_H */
