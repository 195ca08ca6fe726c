/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elfnote: the GNU build-id in an ELF note area, from bytes already read.
 * One walker for elfsym (libelf data) and fileid (pread data), so the rules
 * for hostile notes are written once.  No libelf, no libbpf here.
 */
#ifndef BPFSYM_ELFNOTE_H
#define BPFSYM_ELFNOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Find NT_GNU_BUILD_ID in the note area @p of @size bytes, whose section
 * or segment is aligned to @align (8: notes padded to 8 bytes, gABI;
 * anything else: 4).  @swap: the file's byte order is not ours.  Every field
 * is checked against the area.  A build-id of 0 bytes or more than @max is
 * skipped.  Returns the offset of the build-id's bytes in @p with *@len set,
 * -ENOENT when there is none, or -EBADMSG when a note overruns the area
 * (the walk stops there).
 */
long elfnote__build_id(const uint8_t *p, uint64_t size, uint64_t align, bool swap,
		       size_t max, size_t *len);

#endif /* BPFSYM_ELFNOTE_H */
