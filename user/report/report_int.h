/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_int: a loaded report as the reader (report_read.c) builds it and
 * the merge (report_merge.c) builds one from several.  Internal to
 * report/: everyone else goes through report.h's getters.
 */
#ifndef BPFSYM_REPORT_INT_H
#define BPFSYM_REPORT_INT_H

#include <errno.h>
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
	struct rpt_offcpu *offcpu;	/* OFFCPU records (issue 28), in file order */
	size_t nr_offcpu, cap_offcpu;
	struct rpt_cgtab cgroups;	/* CGROUP records: cgroup id -> path */
	/*
	 * The memory bound (docs/FORMAT.md, "Reader limits"): mem counts the
	 * bytes allocated for this report, its tables at their capacity and
	 * its string chunks whole, and may not pass mem_max, which the file's
	 * size set (report_read.c) or, for a merge, its inputs' sizes.
	 * file_bytes: the bytes of the file(s) read.
	 */
	size_t mem, mem_max;
	uint64_t file_bytes;
};

/*
 * Count @add more bytes for @r in place of @sub it no longer holds: 0, or
 * -E2BIG (nothing counted) when that passes r->mem_max.
 */
static inline int report__charge(struct report *r, size_t sub, size_t add)
{
	size_t now = r->mem - (sub < r->mem ? sub : r->mem);

	if (add > r->mem_max || now > r->mem_max - add)
		return -E2BIG;
	r->mem = now + add;
	return 0;
}

/*
 * rpt_grow() for a table of @r, counted against its bound before the
 * allocation is made.  0, -E2BIG (past the bound: nothing allocated) or
 * -ENOMEM.
 */
static inline int report__grow(struct report *r, void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = rpt_grow_cap(*cap, need), old;
	int err;

	if (need <= *cap)
		return 0;
	if (!ncap || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	/* Counted with the old array: realloc may hold both while it copies. */
	err = report__charge(r, 0, ncap * elem);
	if (err)
		return err;
	old = *cap * elem;
	err = rpt_grow(arr, cap, need, elem);
	r->mem -= err ? ncap * elem : old;
	return err;
}

/*
 * Read an OFFCPU record's payload from @c into @r (report_offcpu.c), its
 * time from *@prev_time (the previous OFFCPU record's in the block, 0 at
 * its start), which it updates.  0, -E2BIG (past @r's bound), -ENOMEM,
 * or -EINVAL with *@why saying what is wrong.
 */
int rpt_offcpu__read(struct report *r, struct rpt_cur *c, uint64_t *prev_time, const char **why);

/*
 * Give @r one id per identity again, as report__merge() does across files:
 * for a file whose writer forgot its index (FORGET records), where the
 * same module, frame or stack may have several ids.  0 or -errno, @r
 * unchanged on failure.
 */
int report__dedupe(struct report *r);

#endif /* BPFSYM_REPORT_INT_H */
