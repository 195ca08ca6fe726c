// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_write_offcpu: the writer's OFFCPU record (issue 28), through the
 * writer's index and pending block (report_write_int.h).  Its time is a
 * chain of its own, not SAMPLE's (report_offcpu.c says why); its count and
 * ns are the file's own in the END record.  Apart from report_offcpu.c so
 * that the reader (and its fuzz target) links without the writer.
 */
#include <errno.h>
#include <stdint.h>

#include "report/report.h"
#include "report/report_fmt.h"
#include "report/report_write_int.h"

int report_writer__offcpu(struct report_writer *w, const struct rpt_offcpu *o)
{
	uint32_t comm;
	int err;

	err = writer__begin(w);
	if (err)
		return err;
	if (!o || o->stack >= w->nr_stacks || o->state > RPT_OS_OTHER || !o->ns || !o->count)
		return -EINVAL;
	err = writer__string(w, o->comm ? o->comm : "", &comm);
	if (err)
		return err;
	w->rec.len = 0;
	err = rpt_buf__uv(&w->rec, rpt_zz_encode((int64_t)(o->time - w->prev_off_time)));
	err = err ?: rpt_buf__uv(&w->rec, o->pid);
	err = err ?: rpt_buf__uv(&w->rec, rpt_zz_encode((int64_t)o->tid - (int64_t)o->pid));
	err = err ?: rpt_buf__uv(&w->rec, o->cgroup);
	err = err ?: rpt_buf__uv(&w->rec, comm);
	err = err ?: rpt_buf__uv(&w->rec, o->stack);
	err = err ?: rpt_buf__uv(&w->rec, o->state);
	err = err ?: rpt_buf__uv(&w->rec, o->ns);
	err = err ?: rpt_buf__uv(&w->rec, o->count);
	err = err ?: writer__emit(w, RPT_REC_OFFCPU);
	if (err)
		return err;
	w->prev_off_time = o->time;
	w->nr_offcpu++;
	w->offcpu_ns += o->ns;
	return 0;
}
