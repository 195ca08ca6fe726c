/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_pprof: a recording as a pprof profile (gzip-compressed
 * profile.proto, proto/profile.proto), for `go tool pprof` and the tools
 * that read its format.  Encoded with protobuf-c.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_PPROF_H
#define BPFSYM_REPORT_PPROF_H

#include "report/report.h"
#include "view/report_view.h"

/*
 * Write the samples of @r that pass @o's filters to @path as a pprof
 * profile:
 *  - sample types samples/count and cpu/nanoseconds (count x 1e9 / freq);
 *    period type cpu/nanoseconds; time_nanos and duration_nanos of the
 *    recording; comments with the header's facts;
 *  - one mapping per module that a kept sample's frames name (file path,
 *    build-id in hex, addresses spanned by those frames), all marked as
 *    symbolized, so readers never look the files up again;
 *  - one location per report frame (its runtime address), with a line of
 *    the function named as @o's namer names it (kernel frames without the
 *    folded format's "_[k]"; unnamed frames "[MODULE+0xOFF]" or
 *    "[unknown]"); functions deduplicated on (name, module path);
 *  - one sample per distinct (stack, pid, tid, comm, cgroup), locations
 *    leaf first, with num labels pid and tid and string labels comm and
 *    cgroup (the cgroup v2 id in decimal; no label for 0 or an empty comm);
 *  - of a recording with off-CPU time (issue 28), a third sample type,
 *    off_cpu/nanoseconds, and a sample per distinct (stack, pid, tid,
 *    comm, cgroup, state) of its OFFCPU records (values 0, 0, ns; a
 *    "state" label: sleeping, disk, preempted, other), CPU samples 0 in
 *    it; with @o's off-CPU metric, the OFFCPU records only and
 *    default_sample_type off_cpu, else cpu.
 * Strings are made valid UTF-8 without control characters ('?' for a bad
 * byte).  The file is written beside @path under a temporary name and
 * renamed over @path when complete, so a failure leaves @path as it was;
 * @path "-" is stdout (report_pprof__write_fd).
 * @o may be NULL (no filter, recorded names).  0 or -errno (-EINVAL: no
 * @path or @r; -ENOMEM; the errno of a failed open, write or rename).
 */
int report_pprof__write(const char *path, const struct report *r, const struct view_opts *o);

/*
 * The same profile written at @fd's offset (a pipe, a socket, a memfd:
 * no rename, no fsync).  0 or -errno (-EINVAL: bad @fd or no @r).
 */
int report_pprof__write_fd(int fd, const struct report *r, const struct view_opts *o);

#endif /* BPFSYM_REPORT_PPROF_H */
