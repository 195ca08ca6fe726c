/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_pprof_int: internal to the pprof writer.  The profile as pass one
 * (report_pprof.c) builds it from a report, which pass two
 * (report_pprof_pack.c) packs with protobuf-c into the gzip-compressed file.
 */
#ifndef BPFSYM_REPORT_PPROF_INT_H
#define BPFSYM_REPORT_PPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/strtab.h"
#include "report/report_fmt.h"
#include "view/report_view.h"
#include "view/report_view_int.h"

/* The string table: id 0 is "", as the format requires. */
struct strs {
	struct strtab set;	/* the profile's strings, by id */
	struct rpt_buf clean;	/* strs__clean()'s scratch */
};

/*
 * One pprof sample: the kept samples of one (stack, pid, tid, comm,
 * cgroup), or the kept OFFCPU records of one (stack, pid, tid, comm,
 * cgroup, state).
 */
struct psample {
	uint32_t stack, pid, tid;
	uint32_t comm, cgroup;	/* string ids; 0: no label */
	uint32_t ctr;		/* container_id's string id, 0: none (follows from cgroup) */
	uint32_t state;		/* 0: CPU samples; 1 + enum rpt_offstate: OFFCPU records */
	uint64_t count;		/* CPU samples */
	uint64_t off_ns;	/* off-CPU ns */
};

struct loc {
	uint64_t addr;
	uint32_t map;		/* mapping index + 1; 0: none */
	uint32_t func;		/* function index */
	uint32_t line;		/* its Line's line number; 0: none (native frames) */
};

struct map {
	const struct rpt_module *mod;
	uint64_t start, limit;
	uint64_t bias;		/* lowest address - file offset of its frames */
	bool has_bias;		/* a file module: the file offset is known */
	uint32_t file, build_id;	/* string ids */
};

struct func {
	uint32_t name, file;	/* string ids */
	uint32_t start_line;	/* interpreter functions: the first line; 0: unknown */
};

struct pprof {
	const struct report *r;
	const struct view_opts *o;
	struct strs strs;
	struct psample *samples;
	size_t nr_samples, cap_samples;
	struct htab sample_tab;		/* the tables map a hash of the key to index + 1 */
	struct loc *locs;
	size_t nr_locs, cap_locs;
	uint32_t *frame_loc;	/* per report frame id: location index, RPT_NONE until used */
	size_t nr_frames;
	uint32_t unknown_loc;	/* the location of empty stacks, RPT_NONE until used */
	struct map *maps;
	size_t nr_maps, cap_maps;
	struct htab map_tab;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct htab func_tab;
	struct rpt_buf name;	/* an unnamed frame's name */
	uint32_t max_depth;	/* of the stacks kept */
	uint64_t kept;		/* CPU samples kept */
	/*
	 * The recording has off-CPU time (issue 28): a third sample type,
	 * off_cpu/nanoseconds, and the OFFCPU records kept.
	 */
	bool off;
	uint64_t kept_off;
	/* String ids the header uses. */
	uint32_t s_samples, s_count, s_cpu, s_ns, s_pid, s_tid, s_comm, s_cgroup, s_ctr;
	uint32_t s_off_cpu, s_state, s_states[RPT_OS__NR];
	uint32_t comments[6];
	size_t nr_comments;
};

/*
 * Write @p to @path as a gzip-compressed profile.proto, through a file
 * beside @path renamed over it once complete (removed on failure).
 * 0 or -errno.
 */
int pprof__write_file(const struct pprof *p, const char *path);

/* Write @p into @fd as it is (report_pprof__write_fd).  0 or -errno. */
int pprof__write_fd(const struct pprof *p, int fd);

#endif /* BPFSYM_REPORT_PPROF_INT_H */
