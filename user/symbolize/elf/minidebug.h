/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * minidebug: MiniDebugInfo, the xz-compressed ELF that Fedora-style
 * distributions put in a stripped binary's .gnu_debugdata section: the
 * .symtab of the functions .dynsym lacks, so a stripped binary still names
 * its static functions.  This is the bounded decompression; elfsym opens
 * the result (elfsym__open_mem) and merges its symbols.  No libelf, no
 * libbpf here.
 */
#ifndef BPFSYM_MINIDEBUG_H
#define BPFSYM_MINIDEBUG_H

#include <stddef.h>

/*
 * Decompress the xz data @in (@in_len bytes; concatenated streams and
 * stream padding allowed) into a new buffer, *@out (freed by the caller),
 * of *@out_len bytes.  Nothing is sized by what the data claims: the
 * buffer grows as output really comes, up to @max_out bytes, and the
 * decoder may use no more memory than xz's largest preset needs.  Returns
 * 0, or -E2BIG (more than @max_out bytes of output, or a decoder needing
 * more memory), -EBADMSG (not xz, corrupt, truncated), -ENOMEM; on error
 * *@out is NULL.
 */
int minidebug__decompress(const void *in, size_t in_len, size_t max_out,
			  void **out, size_t *out_len);

#endif /* BPFSYM_MINIDEBUG_H */
