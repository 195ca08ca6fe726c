/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pace: how long the ring buffer's reader sleeps when no forced wakeup
 * comes first.  Quiet: PACE_QUIET_MS, since each timer wakeup costs ~45 us
 * of CPU on a VM (an idle recorder at 20 ms spent 0.23% of a CPU on them,
 * bench/README.md section 5).  With the unwinder, while processes are
 * starting (a MAP, FORK or EXEC record in the last PACE_BUSY_NS): a
 * sampling period, within [PACE_BUSY_MIN_MS, PACE_QUIET_MS].  A new
 * process has no view (its stacks walk by frame pointers, "no-process")
 * until its records are read, and the tracker wakes the reader at most
 * once a period: at exec, not for the libraries ld.so maps right after.
 * Measured on python3 programs living ~80 ms under `-- COMMAND` at 49 Hz:
 * no-process 82 of 366 samples at 20 ms, 321 of 340 at 100 ms.  A period
 * bounds what waiting costs (about a sample of each new process) and the
 * wakeups (at 19 Hz, 19 a second, not 50).  No libbpf here.
 */
#ifndef BPFSYM_RECORD_PACE_H
#define BPFSYM_RECORD_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define PACE_QUIET_MS		100
#define PACE_BUSY_MIN_MS	20
#define PACE_BUSY_NS		200000000ull

struct pace {
	int busy_ms;			/* the sleep while processes start */
	bool unwinding;			/* without the unwinder, always quiet */
	uint64_t busy_until, events;
};

/* A pace for sampling at @freq Hz (0: unknown), with or without the unwinder. */
void pace__init(struct pace *p, uint32_t freq, bool unwinding);

/*
 * The sleep in ms at monotonic time @now_ns, given @events, the count of
 * MAP, FORK and EXEC records read so far (any change since the last call
 * means processes are starting).
 */
int pace__timeout_ms(struct pace *p, uint64_t now_ns, uint64_t events);

#endif /* BPFSYM_RECORD_PACE_H */
