// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pace: the reader's sleep between drains (pace.h says why these numbers). */
#include "record/pace.h"

void pace__init(struct pace *p, uint32_t freq, bool unwinding)
{
	int ms = freq ? (int)(1000 / freq) : PACE_QUIET_MS;

	*p = (struct pace){
		.busy_ms = ms < PACE_BUSY_MIN_MS ? PACE_BUSY_MIN_MS : ms > PACE_QUIET_MS ? PACE_QUIET_MS : ms,
		.unwinding = unwinding,
	};
}

int pace__timeout_ms(struct pace *p, uint64_t now_ns, uint64_t events)
{
	if (events != p->events)
		p->busy_until = now_ns + PACE_BUSY_NS;
	p->events = events;
	return p->unwinding && now_ns < p->busy_until ? p->busy_ms : PACE_QUIET_MS;
}
