/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * debugfile: the separate debug file of a loaded binary, where
 * distributions install it, looked for in gdb's order:
 *   1. by build-id: DEBUG_ROOT/.build-id/xx/rest.debug (Debian's -dbgsym,
 *      Fedora's -debuginfo packages);
 *   2. by .gnu_debuglink NAME, next to the binary: DIR/NAME, DIR/.debug/NAME,
 *      then DEBUG_ROOT/DIR/NAME, DIR being the binary's directory.
 * The binary belongs to a process we do not trust, and so does what is
 * next to it: those candidates are resolved inside the process's root
 * (its mount namespace, RESOLVE_IN_ROOT), and must be regular files whose
 * CRC32 is the one the debuglink names.  DEBUG_ROOT is the host's own, or,
 * for a copy of another machine's files (`report --symfs`), a directory
 * inside the same root as the rest.
 * No libbpf here.
 */
#ifndef BPFSYM_DEBUGFILE_H
#define BPFSYM_DEBUGFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/elf/elfsym.h"

struct debugfile_query {
	const struct elfsym *es;	/* the binary's symbols: build-id, debuglink, count */
	const char *path;		/* the binary's absolute path as its process sees it */
	uint64_t dev, ino;		/* the binary's file, which a debuglink must not name */
	int root_fd;			/* the process's root directory, AT_FDCWD: the host's view; other < 0: skip DIR/NAME, DIR/.debug/NAME */
	const char *debug_root;		/* the host's debug directory; NULL: skip 1 and DEBUG_ROOT/DIR/NAME */
	bool debug_root_in_root;	/* debug_root is resolved inside root_fd too, not as the host sees it */
	const struct elfsym_opts *opts;	/* caps for reading a debug file; may be NULL */
	uint64_t max_crc_size;		/* larger debuglink targets are not read; 0: 64 MiB */
	uid_t owner;			/* the process's user: whose files a candidate may be (or root's) */
};

/*
 * The symbols of the first candidate (order above) that is a regular file,
 * not the binary itself (dev, ino), an ELF file with more function symbols
 * than the binary, and that the binary names: the same build-id for 1;
 * for 2 a NAME without '/', the CRC32 (zlib's, as gdb computes it) of the
 * whole file matching, and the same build-id when both have one.  Each
 * candidate rejected is logged at debug level with the reason.  Returns a
 * new struct elfsym (elfsym__free() it), or NULL with errno set: ENOENT
 * when no candidate is usable, ENOMEM.
 */
struct elfsym *debugfile__open(const struct debugfile_query *q);

/*
 * ROOT/.build-id/xx/rest.debug for the build-id @id of @len bytes (at
 * least 1) into @buf of @size bytes: false when it does not fit.
 */
bool debugfile__build_id_path(char *buf, size_t size, const char *root, const uint8_t *id,
			      size_t len);

#endif /* BPFSYM_DEBUGFILE_H */
