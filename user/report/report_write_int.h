/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_write_int: the writer's state and the steps every record takes,
 * internal to the writer's files: report_write.c (the records that define
 * ids, SAMPLE, the blocks, END) and report_offcpu.c (OFFCPU, issue 28),
 * which write through the same index, pending block and rules.
 */
#ifndef BPFSYM_REPORT_WRITE_INT_H
#define BPFSYM_REPORT_WRITE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "base/htab.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "report/report_windex.h"

struct report_writer {
	int fd;
	int err;		/* sticky: a block failed to reach the file */
	uint64_t bytes;
	uint64_t nr_samples;
	uint64_t flushed_samples;	/* of nr_samples, those in blocks that reached the file */
	uint64_t time_base;	/* the header's start_mono_ns */
	uint8_t *pid_bits;	/* distinct pids sampled: a bit per pid below RPT_PID_BITS */
	uint64_t nr_pids;
	uint64_t prev_time;	/* SAMPLE time base; 0 at each block start */
	/* OFFCPU records (report_offcpu.c): their own time base, their count and ns for END. */
	uint64_t prev_off_time;	/* 0 at each block start, as prev_time */
	uint64_t nr_offcpu, offcpu_ns;
	ZSTD_CCtx *cctx;
	struct rpt_buf pending;	/* records of the next block */
	struct rpt_buf rec;	/* payload of the record being built */
	struct rpt_buf zbuf;	/* block header + compressed frame */

	struct windex x;	/* what was written, by identity; capped (report_windex.h) */
	size_t index_max;	/* windex__bytes() past which it forgets */
	uint64_t index_age;	/* sample time between forgets once past index_max / 16 */
	uint64_t index_due;	/* sample time of the next such forget (0: not yet set) */
	bool forget_due;
	/* Ids handed out per kind: the next one's id (ids keep counting past a forget). */
	uint32_t nr_strs, nr_mods, nr_frames, nr_stacks;

	struct htab cgroups;	/* ids with a CGROUP record in this file: hash_fin(id) -> id */
};

/*
 * Start every public operation: refuse after a write error, cut a block
 * when enough is pending, keep the index under its cap.  0 or -errno.
 */
int writer__begin(struct report_writer *w);

/* The id of string @s, written as a STRING record if new.  0 or -errno. */
int writer__string(struct report_writer *w, const char *s, uint32_t *id);

/* Append w->rec as one record of @type to the pending block.  0 or -errno, nothing appended. */
int writer__emit(struct report_writer *w, uint32_t type);

#endif /* BPFSYM_REPORT_WRITE_INT_H */
