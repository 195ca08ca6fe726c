// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * header: what a recording's file says about where and how it was made
 * (host, kernel, boot, event, target, start times), the same for every
 * file of a rotated recording but for the start times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "record/header.h"

static void describe_target(const struct record_opts *o, char *buf, size_t len)
{
	size_t i, off;

	switch (o->target) {
	case RECORD_ALL:
		snprintf(buf, len, "all");
		break;
	case RECORD_PIDS:
		off = (size_t)snprintf(buf, len, "pid ");
		for (i = 0; i < o->nr_pids && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "", o->pids[i]);
		break;
	case RECORD_CGROUP:
		snprintf(buf, len, "cgroup %s", o->cgroup);
		break;
	case RECORD_COMMAND:
		off = (size_t)snprintf(buf, len, "command:");
		for (i = 0; o->argv[i] && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, " %s", o->argv[i]);
		break;
	}
}

void record_header__fill(struct rpt_header *h, const struct record_opts *o, uint64_t text_addr,
			 const char *event)
{
	struct utsname u;
	size_t len;
	char *buf;

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
		snprintf(h->release, sizeof(h->release), "%s", u.release);
	}
	if (read_file_capped("/proc/sys/kernel/random/boot_id", 64, &buf, &len) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(h->boot_id, sizeof(h->boot_id), "%s", buf);
		free(buf);
	}
	snprintf(h->event, sizeof(h->event), "%s", event);
	describe_target(o, h->target, sizeof(h->target));
	h->text_addr = text_addr;
	h->freq = o->freq;
	h->flags = (o->user_only ? RPT_HF_USER_ONLY : 0) | (o->kernel_only ? RPT_HF_KERNEL_ONLY : 0);
	h->nr_cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	h->start_wall_ns = clock_ns(CLOCK_REALTIME);
	h->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
	if (o->off_cpu) {
		h->off_cpu = 1;
		h->off_cpu_states = o->off_cpu_states ? o->off_cpu_states : RPT_OS_ALL;
		h->off_cpu_min_ns = o->off_cpu_min_ns;
	}
}
