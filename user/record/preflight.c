// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* preflight: a recording's requirements, checked before anything is loaded. */
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/privdrop.h"
#include "record/preflight.h"
#include "base/util.h"


/*
 * The capability sets of this process: capget() with version 3 fills
 * _LINUX_CAPABILITY_U32S_3 words, capability c in bit CAP_TO_MASK(c) of
 * word CAP_TO_INDEX(c).  0 or -errno.
 */
static int read_caps(struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(d, 0, _LINUX_CAPABILITY_U32S_3 * sizeof(*d));
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

int preflight__privileges(void)
{
	static const struct { int cap; const char *name; } need[] = {
		{ CAP_BPF, "CAP_BPF" },
		{ CAP_PERFMON, "CAP_PERFMON" },
		{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
		{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	char missing[128] = "";
	size_t i;
	int err;

	err = read_caps(d);
	if (err) {
		pr_err("bpfsym: cannot read capabilities: %s\n", strerror(-err));
		return -1;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!cap_effective(d, need[i].cap)) {
			strcat(missing, " ");
			strcat(missing, need[i].name);
		}
	}
	if (!missing[0])
		return 0;
	pr_err("bpfsym: missing capabilities:%s (run as root, or grant them)\n", missing);
	return -1;
}

bool preflight__has_cap(int cap)
{
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	return !read_caps(d) && cap_effective(d, cap);
}

void preflight__warn_optional_caps(const struct record_opts *o)
{
	/*
	 * Without CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) /proc/PID/map_files
	 * refuses to open: a mapped file is then reopened by its path inside
	 * the process's root, which a deleted or replaced file or a memfd no
	 * longer has.
	 */
	if (!o->kernel_only && !preflight__has_cap(CAP_CHECKPOINT_RESTORE) &&
	    !preflight__has_cap(CAP_SYS_ADMIN))
		pr_warn("bpfsym: warning: no CAP_CHECKPOINT_RESTORE: files deleted or replaced "
			"since they were mapped, and memfds, cannot be opened: their frames stay unnamed\n");
}

int preflight__freq(uint32_t freq)
{
	uint64_t max = 0;
	size_t len;
	char *buf;

	if (read_file_capped("/proc/sys/kernel/perf_event_max_sample_rate", 64, &buf, &len) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse_u64(buf, &max))
			max = 0;
		free(buf);
	}
	if (max && freq > max) {
		pr_err("bpfsym: -F %u is above kernel.perf_event_max_sample_rate (%llu)\n",
			freq, (unsigned long long)max);
		return -1;
	}
	return 0;
}

int preflight__perf_events(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	uint64_t paranoid = 0;
	size_t len;
	char *buf;
	int fd;

	if (preflight__has_cap(CAP_SYS_ADMIN))
		return 0;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EACCES && errno != EPERM)
		return 0;	/* not about permission: loading will say what it is */
	if (read_file_capped("/proc/sys/kernel/perf_event_paranoid", 64, &buf, &len) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse_u64(buf, &paranoid))
			paranoid = 0;
		free(buf);
	}
	pr_err("bpfsym: this kernel lets no perf event open without CAP_SYS_ADMIN at kernel.perf_event_paranoid=%llu%s: "
	       "grant CAP_SYS_ADMIN, or set kernel.perf_event_paranoid=2\n", (unsigned long long)paranoid,
	       paranoid > 2 ? " (Debian's restriction above 2)" : "");
	return -1;
}

int preflight__pids(const struct record_opts *o)
{
	size_t i;

	for (i = 0; i < o->nr_pids; i++) {
		if (kill((pid_t)o->pids[i], 0) && errno == ESRCH) {
			pr_err("bpfsym: no such process: %u\n", o->pids[i]);
			return -1;
		}
	}
	for (i = 0; i < o->nr_hints; i++) {
		if (kill((pid_t)o->hints[i].pid, 0) && errno == ESRCH) {
			pr_err("bpfsym: --map-anon: no such process: %u\n", o->hints[i].pid);
			return -1;
		}
	}
	return 0;
}
