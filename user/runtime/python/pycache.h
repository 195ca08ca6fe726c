/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pycache: the code objects already read, by (pid, pstart, code address,
 * co_firstlineno): a reused address whose code object has another first
 * line is another entry, a reused pid another process.  A failed read is
 * kept too (its error), so a bad frame is not read again.  Bounded: at
 * most max entries, the least recently used evicted; a process's entries
 * go when its exit is said (pycache__drop_proc).  Names are interned in
 * the cache's string table and live as long as the cache.  Not
 * thread-safe: one owner (the runtime's, under its lock).
 */
#ifndef BPFSYM_PYCACHE_H
#define BPFSYM_PYCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/python/pycode.h"

struct pycache;

/* What a frame is named: func/file interned, NULL when err (pycode__read's error, negative). */
struct py_name {
	const char *func, *file;
	int32_t line;		/* -1: unknown */
	int32_t firstlineno;	/* co_firstlineno (0 with err) */
	int err;
};

/* A cache of at most @max entries (0: 65536).  NULL + errno. */
struct pycache *pycache__new(size_t max);
void pycache__free(struct pycache *c);	/* NULL is a no-op */

/*
 * The entry of (@pid, @pstart, @code, @firstlineno), the line of
 * instruction @index in it: 0 and *@out filled (out->err says whether a
 * name or a miss was kept), or -ENOENT when there is none (read it).
 */
int pycache__lookup(struct pycache *c, uint32_t pid, uint64_t pstart, uint64_t code,
		    uint32_t firstlineno, uint32_t index, struct py_name *out);

/*
 * Keep what pycode__read() said of (@pid, @pstart, @code, @firstlineno):
 * @err 0 and @pc read (its line table is taken: pc->linetable NULL
 * after), or @err < 0 and @pc NULL.  An entry already there is replaced.
 * 0 or -ENOMEM (nothing kept; @pc untouched).
 */
int pycache__add(struct pycache *c, uint32_t pid, uint64_t pstart, uint64_t code,
		 uint32_t firstlineno, struct py_code *pc, int err);

/* Forget every entry of (@pid, @pstart): it exited. */
void pycache__drop_proc(struct pycache *c, uint32_t pid, uint64_t pstart);

/* Entries kept. */
size_t pycache__nr(const struct pycache *c);

#endif /* BPFSYM_PYCACHE_H */
