/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * summary: what the recorder says at its end about what went missing, by
 * part (the file jobs, off-CPU time), beside record.c's summary line.
 */
#ifndef BPFSYM_RECORD_SUMMARY_H
#define BPFSYM_RECORD_SUMMARY_H

#include <stdint.h>

#include "base/offload.h"
#include "ingest/ingest.h"

/* Files that did not answer in time (@pool's jobs): a warning when frames paid for it, details with -v. */
void record__log_no_answer(struct offload *pool);

/* Off-CPU time (--off-cpu): what was kept and what was not, from BPF's @stats and ingest's @ist (-v). */
void record__log_offcpu(const uint64_t *stats, const struct ingest_stats *ist);

#endif /* BPFSYM_RECORD_SUMMARY_H */
