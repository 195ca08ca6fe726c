/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * drain: the ring buffer read in slices.  libbpf's loop re-reads the
 * producer's position until the ring is empty, so producers that outrun
 * the reader (-F 999 -a on a loaded or emulated CPU) would keep one
 * ring_buffer__poll() going for minutes, and rotation, flushes and the
 * stop check with it.  A slice ends after DRAIN_SLICE_NS of records; what
 * is left stays in the ring for the next one.
 */
#ifndef BPFSYM_RECORD_DRAIN_H
#define BPFSYM_RECORD_DRAIN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

struct ring_buffer;

struct drain {
	bool on;		/* in drain__run(): records count against the slice */
	bool cut;		/* the slice ended before the ring was empty */
	uint64_t until;		/* CLOCK_MONOTONIC end of the slice, from its first record */
	unsigned int n;		/* records of this slice */
};

/*
 * Called by the ring buffer's callback after it took a record: false when
 * the slice is spent, and the callback then returns drain__stop() to end
 * libbpf's loop.  libbpf (1.1, Debian 12's) moves the consumer past a
 * record before its callback runs, so a record refused rather than taken
 * would be lost: the slice ends after one.  Outside drain__run() always
 * true.
 */
bool drain__more(struct drain *d);

/* What the callback returns when drain__more() said no. */
static inline int drain__stop(void)
{
	return -EAGAIN;
}

/*
 * One slice of @rb: ring_buffer__poll() waiting up to @timeout ms for
 * records, or ring_buffer__consume() when @timeout is negative.  0 (the
 * ring emptied, or d->cut: the slice ended first) or -errno (-EINTR: a
 * signal woke the wait; else the callback's error).
 */
int drain__run(struct drain *d, struct ring_buffer *rb, int timeout);

#endif /* BPFSYM_RECORD_DRAIN_H */
