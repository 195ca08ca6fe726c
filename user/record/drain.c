// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* drain: the ring buffer read in slices (drain.h). */
#include <errno.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "base/util.h"
#include "record/drain.h"

#define DRAIN_SLICE_NS		100000000ull	/* 100 ms: the loop's other work waits no longer */
#define DRAIN_CHECK_EVERY	64		/* records between clock reads */

bool drain__more(struct drain *d)
{
	uint64_t now;

	if (!d->on || d->n++ % DRAIN_CHECK_EVERY)
		return true;
	now = clock_ns(CLOCK_MONOTONIC);
	if (!d->until) {
		d->until = now + DRAIN_SLICE_NS;	/* poll's wait is not the slice's */
		return true;
	}
	if (now < d->until)
		return true;
	d->cut = true;
	return false;
}

int drain__run(struct drain *d, struct ring_buffer *rb, int timeout)
{
	int err;

	*d = (struct drain){ .on = true };
	err = timeout >= 0 ? ring_buffer__poll(rb, timeout) : ring_buffer__consume(rb);
	d->on = false;
	if (d->cut)
		return 0;
	return err < 0 ? err : 0;
}
