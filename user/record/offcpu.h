/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * offcpu: the recorder's side of off-CPU time (--off-cpu, issue 28).  The
 * time BPF sums by key (bpf/offcpu.bpf.h) is read about once a second,
 * before a rotation's switch and at the end, and handed to ingest, which
 * writes it with the stacks it kept; the keys ingest let go are removed
 * from BPF's seen set.  On the thread that drains the ring buffer: map
 * reads only, never a wait.
 */
#ifndef BPFSYM_RECORD_OFFCPU_H
#define BPFSYM_RECORD_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"
#include "record/probes.h"

/* How often the sums are read: an OFFCPU record per key and period. */
#define OFFCPU_READ_NS	(1000 * 1000000ull)

/*
 * Read the sums BPF left (all of them with @final: the program is
 * detached) into @in, at @now (CLOCK_MONOTONIC ns), then tell BPF the
 * keys ingest let go.  0 (also without --off-cpu), or -errno as
 * ingest__record.
 */
int offcpu__read(struct probes *p, struct ingest *in, uint64_t now, bool final);

/*
 * The END's off-CPU counters (rpt_header.offcpu): ingest's (records, ns,
 * stacks not kept) and BPF's @stats (intervals under the minimum, stacks
 * that did not reach the recorder).
 */
void offcpu__fill_end(const uint64_t *stats, struct rpt_header *h);

#endif /* BPFSYM_RECORD_OFFCPU_H */
