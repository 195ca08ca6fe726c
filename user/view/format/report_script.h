/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_script: `bpfsym report --perf-script`, a recording as the text
 * `perf script` prints for a `perf record -g` one, so the tools that read
 * perf's text (Firefox Profiler, speedscope, FlameGraph's
 * stackcollapse-perf.pl) read bpfsym's.  No libbpf here.
 */
#ifndef BPFSYM_REPORT_SCRIPT_H
#define BPFSYM_REPORT_SCRIPT_H

#include <stdio.h>

#include "report/report.h"
#include "view/report_view.h"

/*
 * Print every sample of @r that passes @o's filters, in time order, as
 * perf 6.1's `perf script` lays out a sample with a call chain:
 *
 *   COMM PID/TID [CPU] SECS.USECS: PERIOD EVENT:
 *   \t<%16x ADDR> SYM+0xOFF (DSO)        one line per frame, leaf first
 *   (empty line)
 *
 * Times are CLOCK_MONOTONIC (recording start + sample time), which is
 * perf's clock on this kernel.  PERIOD is the sampling interval in ns
 * (1e9 / frequency: perf's period of cpu-clock).  ADDR is what perf
 * prints: the raw address for kernel frames, anonymous memory and unknown
 * mappings, the offset in the file for a mapped file (perf's map-relative
 * address), each return address as it was on the stack.  Names are @o's
 * namer's (--kallsyms), without the folded format's "_[k]"; an unnamed
 * frame is "[unknown]" with its DSO.  Control bytes in names are '?'.
 * With @o's off-CPU metric, the OFFCPU records instead (with the wall
 * metric, both, in time order), as perf prints its off-CPU samples: EVENT
 * "offcpu-time", PERIOD the ns off the CPU, CPU 0, the stack at the
 * switch-out.
 * 0 or -errno (-EIO: writing @out failed).
 */
int report_script__write(FILE *out, const struct report *r, const struct view_opts *o);

#endif /* BPFSYM_REPORT_SCRIPT_H */
