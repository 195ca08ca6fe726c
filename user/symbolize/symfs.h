/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symfs: the user frames of a recording named again from another
 * machine's files, copied under a directory DIR (`bpfsym report --symfs
 * DIR`).  A recording keeps, per frame, its module (path as the process
 * saw it, build-id) and the file offset it looked up, so the names can be
 * found again wherever the files are.  For each file module, in order:
 *   1. the binary by build-id: DIR/.build-id/xx/rest (perf's build-id
 *      cache, debuginfod's layout);
 *   2. the binary by path: DIR/PATH, refused when it has another build-id
 *      than the recorded one (another build must never name frames);
 *   3. no binary: a debug file by build-id, DIR/.build-id/xx/rest.debug or
 *      DIR/usr/lib/debug/.build-id/xx/rest.debug, used alone when its
 *      program headers still give file offsets (eu-strip -f keeps them,
 *      objcopy --only-keep-debug zeroes them: then the binary is needed).
 * A binary found gets its debug file as the recorder would look for it
 * (debugfile.h), inside DIR: by build-id in DIR and DIR/usr/lib/debug, then
 * by .gnu_debuglink next to PATH.  Every path is resolved inside DIR
 * (RESOLVE_IN_ROOT): an absolute symlink in DIR points into DIR.
 * DIR is looked in first: a frame it cannot name keeps its recorded name.
 * No libbpf here.
 */
#ifndef BPFSYM_SYMFS_H
#define BPFSYM_SYMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/elf/elfsym.h"
#include "report/report.h"

struct symfs;

struct symfs_opts {
	size_t max_loaded;		/* files' symbols kept loaded; 0: 64 */
	size_t max_loaded_bytes;	/* their memory; 0: 512 MiB (the one in use is kept) */
	const struct elfsym_opts *elf;	/* caps for reading each file; NULL: elfsym's */
};

/* What DIR holds for the file modules of the recording, counted per module. */
struct symfs_stats {
	size_t modules;		/* file modules of the recording */
	size_t by_build_id;	/* binary at DIR/.build-id/xx/rest */
	size_t by_path;		/* binary at DIR/PATH with the recorded build-id (or none recorded) */
	size_t debug_only;	/* no binary; a debug file by build-id with file offsets */
	size_t mismatch;	/* only a DIR/PATH of another build-id: refused */
	size_t no_offsets;	/* only a debug file without file offsets: its binary is needed */
	size_t not_found;	/* nothing under DIR */
	size_t loads;		/* files' symbols read so far (again after an eviction) */
	size_t loaded;		/* held now */
};

/* One frame named from DIR. */
struct symfs_name {
	const char *sym;	/* NULL: unnamed (see reason); lives as long as the symfs */
	uint64_t sym_off;	/* of the looked-up offset into sym */
	uint32_t reason;	/* enum rpt_reason; RPT_OK when sym is set */
};

/*
 * Look for the file modules of @r under @dir (see above); only their
 * headers and notes are read now, symbols when a frame needs them.  @r is
 * borrowed and must outlive the symfs; @opts may be NULL.  Returns the
 * symfs, or NULL with errno set and one line in @err (@errlen bytes):
 * ENOENT, ENOTDIR, EACCES... when @dir is not a directory we can open,
 * ENOMEM.
 */
struct symfs *symfs__open(const char *dir, const struct report *r, const struct symfs_opts *opts,
			  char *err, size_t errlen);

/* symfs__free(NULL) is a no-op. */
void symfs__free(struct symfs *fs);

/*
 * Name frame @f of the recording from DIR, into @out: true when DIR
 * decides, false when @f keeps its recorded name and reason (a kernel
 * frame, a module that is not a file or was not found under DIR).  DIR
 * decides when its file names @f; when it does not and @f was unnamed,
 * DIR's reason replaces the recorded one (a DIR/PATH of another build:
 * RPT_BUILD_ID_MISMATCH); a recorded name is never replaced by a miss.
 * The answer for each (module, offset) is kept, so asking again is cheap
 * and the same.  ENOMEM while naming leaves the recorded name.
 */
bool symfs__name(struct symfs *fs, const struct rpt_frame *f, struct symfs_name *out);

/* The counters above, into @st. */
void symfs__stats(const struct symfs *fs, struct symfs_stats *st);

/* The @dir given to symfs__open(). */
const char *symfs__dir(const struct symfs *fs);

/*
 * The report table's header line saying what DIR held, e.g.
 * "# user symbols: from --symfs DIR: 3 of 5 file modules (2 by build-id,
 * 1 by path); not there, recorded names kept: 1; refused, another
 * build-id: 1", written to @out.
 */
void symfs__print_header(const struct symfs *fs, FILE *out);

/* A PT_LOAD's file range and where it is loaded. */
struct symfs_seg {
	uint64_t off, filesz, vaddr;
};

/*
 * The PT_LOAD segments with file bytes of the ELF file on @fd, in their
 * program header order, into a new array *@segs (free() it) of *@nr,
 * for placing file offsets when a debug file is used without its binary:
 * elfsym ignores segments past the end of the file, which a debug file's
 * are (its bytes are in the binary).  eu-strip -f keeps p_offset and
 * p_filesz; objcopy --only-keep-debug zeroes them.  0; -EDOM when it is
 * no ELF file or no segment with code (PF_X) has file bytes; -ENOMEM.
 * Only the headers are read (libelf's pread, never mmap): what symfs
 * runs on each debug file it finds, fuzzed by fuzz_symfs.
 */
int symfs__read_segments(int fd, struct symfs_seg **segs, size_t *nr);

#endif /* BPFSYM_SYMFS_H */
