/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pace: how long the ring buffer's reader sleeps when no forced wakeup
 * comes first.  Quiet: PACE_QUIET_MS, since each timer wakeup costs ~45 us
 * of CPU on a VM (an idle recorder at 20 ms spent 0.23% of a CPU on them,
 * bench/README.md section 5).  With the unwinder, while mappings come
 * that the tracker's fresh views cannot take whole (a file without a
 * table yet: ingest_stats.views_wanted moved in the last PACE_BUSY_NS), a
 * sampling period, within [PACE_BUSY_MIN_MS, PACE_QUIET_MS]: until we
 * write the view, such a process's stacks end at that file.  Under the
 * usual churn (the same programs again and again) the fresh views take
 * everything and the reader stays at 100 ms.  No libbpf here.
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
 * views wanted so far (ingest_stats.views_wanted: any change since the
 * last call means mappings the fresh views miss are coming).
 */
int pace__timeout_ms(struct pace *p, uint64_t now_ns, uint64_t events);

#endif /* BPFSYM_RECORD_PACE_H */
