/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* header: a recording's rpt_header from its options and the machine. */
#ifndef BPFSYM_RECORD_HEADER_H
#define BPFSYM_RECORD_HEADER_H

#include <stdint.h>

#include "record/record.h"
#include "report/report.h"

/*
 * Fill @h (zeroed first) for a recording per @o of @event: host, kernel
 * release, boot id, target, @text_addr (the runtime _text, 0: unknown),
 * frequency, flags, CPUs, and now as its start (wall and monotonic).
 */
void record_header__fill(struct rpt_header *h, const struct record_opts *o, uint64_t text_addr,
			 const char *event);

#endif /* BPFSYM_RECORD_HEADER_H */
