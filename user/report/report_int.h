/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_int: a loaded report as the reader (report_read.c) builds it and
 * the merge (report_merge.c) builds one from several.  Internal to
 * report/: everyone else goes through report.h's getters.
 */
#ifndef BPFSYM_REPORT_INT_H
#define BPFSYM_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "report/report_fmt.h"

#define CHUNK_SIZE (64u << 10)

/*
 * String storage that never moves, so the pointers handed out stay
 * valid.  Not base/strtab: the writer wrote each string once, so there
 * is nothing to deduplicate, and hashing every string costs the load.
 */
struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct rstack {
	size_t off;		/* in stack_data */
	uint32_t nr;
};

struct report {
	struct rpt_header hdr;
	char *source;
	struct chunk *chunks;
	const char **strs;
	size_t nr_strs, cap_strs;
	struct rpt_module *mods;
	size_t nr_mods, cap_mods;
	struct rpt_frame *frames;
	size_t nr_frames, cap_frames;
	uint32_t *stack_data;
	size_t nr_stack_data, cap_stack_data;
	struct rstack *stacks;
	size_t nr_stacks, cap_stacks;
	struct rpt_sample *samples;
	size_t nr_samples, cap_samples;
	struct rpt_cgtab cgroups;	/* CGROUP records: cgroup id -> path */
};

/*
 * Give @r one id per identity again, as report__merge() does across files:
 * for a file whose writer forgot its index (FORGET records), where the
 * same module, frame or stack may have several ids.  0 or -errno, @r
 * unchanged on failure.
 */
int report__dedupe(struct report *r);

#endif /* BPFSYM_REPORT_INT_H */
