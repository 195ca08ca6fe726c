/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pycode: name a CPython 3.11-3.13 code object from another process's
 * memory, as BPF saw it in a frame (include/bpfsym.h, BPFSYM_FK_PYTHON):
 * its qualified name, its file and the line of one instruction.
 *
 * The memory is read through a callback (process_vm_readv in production:
 * pyproc.h; a buffer in tests), so nothing here knows where the bytes
 * come from, and nothing trusts them: every object's type is checked
 * against the interpreter's own type objects (the layout's, plus the load
 * bias), every length is capped before it is read.
 */
#ifndef BPFSYM_PYCODE_H
#define BPFSYM_PYCODE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/python/pyelf.h"

/*
 * Read @len bytes at @addr of the process into @buf: 0, or -errno:
 * -ESRCH when the process is gone (or is not the one asked about any
 * more), -EFAULT when the memory is not there, anything else a failed read.
 */
typedef int (*py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Caps on what one name takes, in bytes of UTF-8 (longer ones are cut at a character). */
#define PY_FUNC_MAX	1024
#define PY_FILE_MAX	4096
/* co_linetable read at most (bytes): past it the line is unknown. */
#define PY_LINETABLE_MAX (256u * 1024)
/* The index of a 3.11 frame that ran no instruction yet (prev_instr one before the first). */
#define PY_INDEX_BEFORE	UINT32_MAX

/* A code object as read: what names its frames, whatever their instruction. */
struct py_code {
	char func[PY_FUNC_MAX + 1];	/* co_qualname, UTF-8, NUL-terminated */
	char file[PY_FILE_MAX + 1];	/* co_filename */
	size_t func_len, file_len;
	int32_t firstlineno;
	uint8_t *linetable;		/* co_linetable's bytes (malloc'd), NULL when unreadable */
	size_t linetable_len;
};

/*
 * The line of the instruction at @index (in 2-byte code units from the
 * start of the bytecode) by the location table @tab of @len bytes (a
 * co_linetable of 3.11+, the format of CPython's
 * InternalDocs/locations.md) of a code object whose co_firstlineno is
 * @firstlineno.  A pure function over bytes, bounded by @len.
 * 0 with *@line set (-1: the table says the instruction has no location);
 * -ENOENT when @index is past the table; -EBADMSG when the table is
 * malformed before the entry of @index (an entry not starting with its
 * high bit, one cut by the end, a varint over 32 bits, a line out of the
 * int32 range).
 */
int pylinetable__line(const uint8_t *tab, size_t len, int32_t firstlineno, uint32_t index,
		      int32_t *line);

/*
 * Read the code object at @code (a process address) of the interpreter
 * described by @l, loaded at @bias (its runtime addresses are the
 * layout's + @bias), through @read(@ctx).  The object must be a code
 * object (ob_type is PyCode_Type) whose co_firstlineno is @firstlineno,
 * with str objects as co_qualname and co_filename, else -EINVAL.  A line
 * table that is unreadable, not a bytes object or over PY_LINETABLE_MAX
 * leaves out->linetable NULL (lines unknown), not a failure.
 * 0 and *@out filled (pycode__release() it); -EINVAL (not the code object
 * BPF saw); -ESRCH (process gone, from @read); -EFAULT or another read
 * error.  On error *@out holds nothing to release.
 */
int pycode__read(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		 uint64_t code, uint32_t firstlineno, struct py_code *out);

/* Free what pycode__read() allocated in @c. */
void pycode__release(struct py_code *c);

/*
 * The line of instruction @index of @c (PY_INDEX_BEFORE: co_firstlineno,
 * as CPython's PyCode_Addr2Line says of a negative index); -1 when
 * unknown (no table, malformed, past its end) or none.
 */
int32_t pycode__line(const struct py_code *c, uint32_t index);

/*
 * Decode the str object at @obj into @buf (@cap bytes, NUL-terminated;
 * at most @cap - 1 bytes of UTF-8, cut at a character), its length in
 * *@len.  Compact ASCII, compact latin-1/UCS-2/UCS-4 and non-compact
 * ready strings; a surrogate, a code point past U+10FFFF or a NUL becomes
 * U+FFFD.  0, -EINVAL (not a str of a known form), or @read's error.
 */
int pycode__str(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		uint64_t obj, char *buf, size_t cap, size_t *len);

#endif /* BPFSYM_PYCODE_H */
