/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi: a file's call-frame information (.eh_frame, found through
 * .eh_frame_hdr when present, and .debug_frame, also from a separate debug
 * file) evaluated into unwind rows for x86-64: sorted by PC, each saying
 * how to find the caller from any PC up to the next row (include/bpfsym.h,
 * "Unwind tables": 8 bytes a row, the PC as a FILE OFFSET, the rule packed
 * in 32 bits).
 *
 * The files are untrusted: every length and pointer is checked against the
 * section it is in, CIE pointers may loop, instruction streams may lie;
 * the work per file is bounded (rows, instructions, time), and a file that
 * breaks a rule gives a per-file error, never a crash and never a wrong
 * row.  A rule the row format cannot express becomes an explicit
 * BPFSYM_UNW_UNSUPPORTED row.  No libbpf here.
 */
#ifndef BPFSYM_CFI_H
#define BPFSYM_CFI_H

#include <stddef.h>
#include <stdint.h>

/* One row, as it goes into the BPF shards (u64: pc low, rule high). */
struct cfi_row {
	uint32_t pc;		/* file offset of the first byte the rule covers */
	uint32_t rule;		/* BPFSYM_UNW_RULE(...) */
};

struct cfi_stats {
	uint32_t cies, fdes;		/* parsed */
	uint32_t fdes_skipped;		/* outside every executable PT_LOAD, or empty */
	uint32_t fde_starts;		/* distinct first PCs of the FDEs not skipped */
	uint32_t rows_raw;		/* the FDEs' rows, before overlaps are clipped and
					 * equal neighbours across FDEs merged */
	uint32_t rows_unsupported;	/* rows of kind BPFSYM_UNW_UNSUPPORTED */
	uint32_t from_debug_frame;	/* FDEs that gave rows from .debug_frame */
};

/*
 * The rows of one file.  Sorted by pc, strictly increasing; two
 * neighbours never have the same rule; after the last FDE of a run of
 * FDEs less than 16 bytes apart (what is between is alignment padding,
 * covered by the rule before it) comes a BPFSYM_UNW_FP_RULE row at the PC
 * where it ends (so a PC past every FDE, or in a real gap between FDEs,
 * takes the frame-pointer rule).  nr == 0: the file has no usable
 * call-frame information.
 */
struct cfi_table {
	struct cfi_row *rows;
	size_t nr;
	struct cfi_stats stats;
};

struct cfi_opts {
	/*
	 * 0: CFI_DEFAULT_MAX_ROWS.  More rows is -E2BIG: counted both as the
	 * FDEs give them (before neighbours across FDEs merge) and in the
	 * table, so a row bomb stops early.
	 */
	size_t max_rows;
	/*
	 * A separate debug file for the same build (its .debug_frame is used
	 * for PCs .eh_frame does not cover); -1: none (note: 0 is a file
	 * descriptor).  Its addresses are the main file's virtual addresses,
	 * mapped with the main file's PT_LOADs.  Borrowed, not closed.  A
	 * debug file that is not x86-64 ELF, or whose .debug_frame is
	 * malformed, fails the build (-ENOEXEC, -EINVAL; the reason says
	 * "debug file"): retry without it to get .eh_frame's rows alone.
	 */
	int debug_fd;
};

#define CFI_DEFAULT_MAX_ROWS	(4u << 20)

/*
 * The most bytes of one call-frame section read (.eh_frame, .debug_frame
 * decompressed, the PT_GNU_EH_FRAME chunk and the segment after it): 13x
 * the largest on Debian 12 (libLLVM-14.so.1's .eh_frame, 4.8 MiB).  More is
 * -EFBIG, counted as INPUTCAP_CFI_SECTION, before anything is read.
 */
#define CFI_MAX_SECTION		(64ull << 20)

/*
 * Build the table of the ELF file open at @fd (read with pread/libelf,
 * the offset of @fd is not used; @fd is borrowed).  @o may be NULL (the
 * defaults, no debug file).  *@out receives a new table (free with
 * cfi_table__free), also when it has no rows; on error it is NULL.  0, or
 * -errno with a one-line reason in @err (of @errlen bytes; may be NULL),
 * such as ".eh_frame: FDE at 0x1a0: CIE pointer out of range": -ENOEXEC
 * (not an x86-64 ELF file), -EINVAL (malformed CFI: truncated, CIE
 * pointers that do not land on a CIE, bogus augmentation, state stack
 * underflow...; or libelf could not read a section), -E2BIG (over
 * max_rows, too many CIEs, a compressed .debug_frame inflating past
 * reason), -EFBIG (a section over CFI_MAX_SECTION), -ENOMEM.  FDEs
 * outside every executable PT_LOAD, empty ones, and ones whose end is
 * not a u32 file offset are skipped and counted.
 */
int cfi_table__build_fd(int fd, const struct cfi_opts *o, struct cfi_table **out,
			char *err, size_t errlen);

/*
 * The same for the @len bytes of ELF image at @img (the vdso, a fuzz
 * input): copied, so @img may be read-only; nothing points into it once
 * this returns.
 */
int cfi_table__build_mem(const void *img, size_t len, const struct cfi_opts *o,
			 struct cfi_table **out, char *err, size_t errlen);

/* NULL is a no-op. */
void cfi_table__free(struct cfi_table *t);

/*
 * The row covering file offset @pc, or NULL (before the first row).  A
 * binary search: what the BPF walker does, for tests and tools.
 */
const struct cfi_row *cfi_table__find(const struct cfi_table *t, uint32_t pc);

#endif /* BPFSYM_CFI_H */
