/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * preflight: what a recording needs from the system (capabilities, the
 * kernel's sampling limit, live processes), checked before anything is
 * loaded.  A failure is one line on stderr, as docs/cli.md promises.  No
 * libbpf here.
 */
#ifndef BPFSYM_PREFLIGHT_H
#define BPFSYM_PREFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "record/record.h"

/*
 * The capabilities no recording works without (CAP_BPF, CAP_PERFMON,
 * CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH): 0 when all are effective, else -1
 * after one line naming those missing.
 */
int preflight__privileges(void);

/* Whether capability @cap is in the effective set (false when it cannot be read). */
bool preflight__has_cap(int cap);

/*
 * The optional capabilities: a recording works without them, but loses
 * something.  Say what, once, on stderr.
 */
void preflight__warn_optional_caps(const struct record_opts *o);

/*
 * perf events open with this process's privileges: Debian's kernels at
 * kernel.perf_event_paranoid=3 (their default) let none open without
 * CAP_SYS_ADMIN, CAP_PERFMON or not.  0, or -1 after one line saying so.
 */
int preflight__perf_events(void);

/* -F @freq within kernel.perf_event_max_sample_rate (when readable): 0, or -1 (printed). */
int preflight__freq(uint32_t freq);

/* Every -p and --map-anon pid of @o exists: 0, or -1 naming the first that does not. */
int preflight__pids(const struct record_opts *o);

#endif /* BPFSYM_PREFLIGHT_H */
