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
 * adjacent FDEs comes a BPFSYM_UNW_FP_RULE row at the PC where it ends (so
 * a PC past every FDE, or in a gap between FDEs, takes the frame-pointer
 * rule).  nr == 0: the file has no usable call-frame information.
 */
struct cfi_table {
	struct cfi_row *rows;
	size_t nr;
	struct cfi_stats stats;
};

struct cfi_opts {
	size_t max_rows;	/* 0: CFI_DEFAULT_MAX_ROWS; more is -E2BIG */
	/*
	 * A separate debug file for the same build (its .debug_frame is used
	 * for PCs .eh_frame does not cover); -1: none.  Its addresses are the
	 * main file's virtual addresses.
	 */
	int debug_fd;
};

#define CFI_DEFAULT_MAX_ROWS	(4u << 20)

/*
 * Build the table of the ELF file open at @fd (read with pread/libelf,
 * the offset of @fd is not used).  *@out receives a new table (free with
 * cfi_table__free), also when it has no rows.  0, or -errno with a
 * one-line reason in @err (of @errlen bytes; may be NULL): -ENOEXEC (not
 * an x86-64 ELF file), -EINVAL (malformed CFI: truncated, looping CIE
 * pointers, bogus augmentation...), -E2BIG (over max_rows), -ENOMEM.
 */
int cfi_table__build_fd(int fd, const struct cfi_opts *o, struct cfi_table **out,
			char *err, size_t errlen);

/* The same for an ELF image in memory (the vdso, a fuzz input). */
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
