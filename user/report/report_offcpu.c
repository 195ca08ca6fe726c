// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_offcpu: off-CPU time in the recording (issue 28): the OFFCPU
 * record (type 66, optional: an older reader skips it, and it defines no
 * id, so the ids it reads stay right) as the reader takes it, the HEADER's
 * off-CPU fields both ways, and the states' names.  The writer's side of
 * the record is report_write_offcpu.c.  docs/FORMAT.md has the layout.
 *
 * An OFFCPU record's time is a chain of its own (the previous OFFCPU
 * record's in the block), not SAMPLE's: a reader that skips OFFCPU
 * records must still decode SAMPLE times.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "report/report.h"
#include "report/report_fmt.h"
#include "report/report_int.h"

/* ---- the states ---- */

static const struct {
	const char *letter, *name;
} states[RPT_OS__NR] = {
	[RPT_OS_SLEEP] = { "S", "sleeping" },
	[RPT_OS_DISK] = { "D", "disk" },
	[RPT_OS_PREEMPT] = { "R", "preempted" },
	[RPT_OS_OTHER] = { "other", "other" },
};

const char *rpt_offstate__str(uint32_t state)
{
	return state < RPT_OS__NR ? states[state].name : NULL;
}

const char *rpt_offstate__letter(uint32_t state)
{
	return state < RPT_OS__NR ? states[state].letter : NULL;
}

int rpt_offstate__parse(const char *list, uint32_t *mask)
{
	const char *p = list, *end;
	uint32_t m = 0, s;
	size_t len;

	if (!list || !list[0])
		return -EINVAL;
	do {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 3 && !strncasecmp(p, "all", 3)) {
			m |= RPT_OS_ALL;
		} else {
			for (s = 0; s < RPT_OS__NR; s++)
				if (strlen(states[s].letter) == len && !strncasecmp(p, states[s].letter, len))
					break;
			if (s == RPT_OS__NR)
				return -EINVAL;
			m |= 1u << s;
		}
		p = end ? end + 1 : NULL;
	} while (p);
	*mask = m;
	return 0;
}

/* ---- the HEADER's fields ---- */

int rpt_offcpu__write_header(struct rpt_buf *b, const struct rpt_header *h)
{
	int err;

	if (!h->off_cpu && !h->off_cpu_states && !h->off_cpu_min_ns)
		return 0;
	err = rpt_buf__uv(b, h->off_cpu);
	err = err ?: rpt_buf__uv(b, h->off_cpu_states);
	return err ?: rpt_buf__uv(b, h->off_cpu_min_ns);
}

int rpt_offcpu__read_header(struct rpt_cur *c, struct rpt_header *h)
{
	int err;

	err = rpt_cur__u32(c, &h->off_cpu);
	err = err ?: rpt_cur__u32(c, &h->off_cpu_states);
	return err ?: rpt_cur__uv(c, &h->off_cpu_min_ns);
}

/* ---- the record ---- */

int rpt_offcpu__read(struct report *r, struct rpt_cur *c, uint64_t *prev_time, const char **why)
{
	struct rpt_offcpu o = {};
	uint64_t dt, dtid;
	uint32_t comm;
	int64_t d;
	int err;

	err = rpt_cur__uv(c, &dt);
	err = err ?: rpt_cur__u32(c, &o.pid);
	err = err ?: rpt_cur__uv(c, &dtid);
	err = err ?: rpt_cur__uv(c, &o.cgroup);
	err = err ?: rpt_cur__u32(c, &comm);
	err = err ?: rpt_cur__u32(c, &o.stack);
	err = err ?: rpt_cur__u32(c, &o.state);
	err = err ?: rpt_cur__uv(c, &o.ns);
	err = err ?: rpt_cur__uv(c, &o.count);
	*why = err ? "malformed field" : NULL;
	d = rpt_zz_decode(dtid);
	if (!*why && (d < -(int64_t)o.pid || d > (int64_t)UINT32_MAX - (int64_t)o.pid))
		*why = "tid out of range";
	else if (!*why && comm >= r->nr_strs)
		*why = "comm string out of range";
	else if (!*why && o.stack >= r->nr_stacks)
		*why = "stack out of range";
	else if (!*why && o.state > RPT_OS_OTHER)
		*why = "unknown state";
	else if (!*why && (!o.ns || !o.count))
		*why = "no time or no interval";
	if (*why)
		return -EINVAL;
	o.tid = (uint32_t)((int64_t)o.pid + d);
	o.time = *prev_time + (uint64_t)rpt_zz_decode(dt);
	o.comm = r->strs[comm];
	err = report__grow(r, (void **)&r->offcpu, &r->cap_offcpu, r->nr_offcpu + 1, sizeof(*r->offcpu));
	if (err)
		return err;
	r->offcpu[r->nr_offcpu++] = o;
	*prev_time = o.time;
	return 0;
}
