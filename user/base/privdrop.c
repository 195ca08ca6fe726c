// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* privdrop: least privilege, thread by thread (privdrop.h). */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/privdrop.h"
#include "base/util.h"

#define CAP_BIT(c)	(1ull << (c))

uint64_t privdrop__kept(bool rotating)
{
	uint64_t keep = CAP_BIT(CAP_BPF) | CAP_BIT(CAP_SYS_PTRACE) | CAP_BIT(CAP_DAC_READ_SEARCH) |
			CAP_BIT(CAP_CHECKPOINT_RESTORE) | CAP_BIT(CAP_SYSLOG);

	return rotating ? keep | CAP_BIT(CAP_DAC_OVERRIDE) : keep;
}

uint64_t privdrop__kept_files(void)
{
	return CAP_BIT(CAP_SYS_PTRACE) | CAP_BIT(CAP_DAC_READ_SEARCH) | CAP_BIT(CAP_CHECKPOINT_RESTORE);
}

/* The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap's, probed). */
static int last_cap(void)
{
	int c = 63;

	/* PR_CAPBSET_READ fails with EINVAL past the last one. */
	while (c > 0 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0)
		c--;
	return c;
}

int privdrop__thread(uint64_t want, uint64_t *kept)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
	uint64_t have, keep;
	int c, last = last_cap();

	if (kept)
		*kept = 0;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	have = d[0].permitted | (uint64_t)d[1].permitted << 32;
	keep = have & want;
	/* The bounding set first: dropping from it needs CAP_SETPCAP, about to go. */
	if (have & CAP_BIT(CAP_SETPCAP))
		for (c = 0; c <= last; c++)
			if (!(keep & CAP_BIT(c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
				return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (kept)
		*kept = keep;
	return 0;
}

int privdrop__apply(bool rotating, uint64_t *kept)
{
	return privdrop__thread(privdrop__kept(rotating), kept);
}

const char *privdrop__names(uint64_t mask, char *buf, size_t len)
{
	static const struct {
		int cap;
		const char *name;
	} names[] = {
		{ CAP_BPF, "CAP_BPF" }, { CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
		{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
		{ CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE" }, { CAP_SYSLOG, "CAP_SYSLOG" },
		{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
	};
	size_t i, at = 0;
	int n;

	if (!len)
		return buf;
	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(mask & CAP_BIT(names[i].cap)))
			continue;
		n = snprintf(buf + at, len - at, "%s%s", at ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= len - at)
			break;
		at += (size_t)n;
	}
	if (!at)
		snprintf(buf, len, "none");
	return buf;
}

/* Drop to @keep on this thread, or say that @who could not. */
static void drop_or_warn(uint64_t keep, const char *who)
{
	int err = privdrop__thread(keep, NULL);

	if (err)
		pr_warn("bpfsym: warning: %s keeps its capabilities: %s\n", who, strerror(-err));
}

void privdrop__recorder(bool rotating)
{
	char names[160];
	uint64_t kept;
	int err;

	err = privdrop__apply(rotating, &kept);
	if (err)
		pr_warn("bpfsym: warning: capabilities not dropped: %s\n", strerror(-err));
	else
		pr_debug("bpfsym: capabilities kept: %s; no_new_privs set\n",
			 privdrop__names(kept, names, sizeof(names)));
}

void privdrop__file_worker(void)
{
	drop_or_warn(privdrop__kept_files(), "a file worker");
}

void privdrop__table_worker(void)
{
	drop_or_warn(PRIVDROP_CAP_BPF, "the unwinder's worker");
}

void privdrop__builder(void)
{
	drop_or_warn(0, "a table builder");
}
