// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer_wait: frames whose file did not answer yet.  A file opened
 * or read on the offload pool that takes longer than the caller's wait
 * (100 ms) is not hung for that: a big library with its debug file, on a
 * loaded machine, takes seconds.  Its frames say RPT_FILE_NO_ANSWER
 * meanwhile; a caller that kept them (ingest's deferred samples) names
 * them here once the job ended, from their module and offset alone, and
 * asks whether a job still running looks hung (its worker still) or only
 * slow.
 */
#include <stddef.h>

#include "base/offload.h"
#include "symbolize/symbolizer_int.h"

/* The file module @f points to, or NULL (no module, or not a file's). */
static struct smod *frame_file(const struct sym_frame *f)
{
	if (!f->module || f->module->rpt.kind != RPT_MOD_FILE)
		return NULL;
	/* Every RPT_MOD_FILE module is a file_module()'s: its pub is an smod's. */
	return (struct smod *)((char *)f->module - offsetof(struct smod, pub));
}

bool symbolizer__retry(struct symbolizer *s, uint32_t pid, struct sym_frame *f)
{
	struct smod *m = frame_file(f);

	if (!m || f->reason != RPT_FILE_NO_ANSWER)
		return false;
	if (!m->kept)
		lru__touch(&s->file_lru, &m->lru);
	/* Kept modules are --map-anon hints' and --elf's: host files, seen as ours (pid 0). */
	file_name(s, m, m->kept ? 0 : pid, NULL, f);
	return f->reason == RPT_FILE_NO_ANSWER && m->job;
}

bool symbolizer__stuck(struct symbolizer *s, const struct sym_frame *f, uint64_t now_ns,
		       uint64_t stall_ns, uint64_t max_ns)
{
	struct smod *m = frame_file(f);

	if (!m || !m->job)
		return false;
	if (m->watch_job != m->job) {
		m->watch_job = m->job;
		m->watch = (struct offload_watch){ 0 };
		m->watch_since = now_ns;
	}
	if (now_ns - m->watch_since >= max_ns)
		return true;
	return offload__stalled(s->pool, &m->job->job, &m->watch, now_ns, stall_ns);
}

void symbolizer__hold(struct symbolizer *s, const struct sym_frame *f)
{
	struct smod *m = frame_file(f);

	(void)s;
	if (m)
		m->holds++;
}

void symbolizer__release(struct symbolizer *s, const struct sym_frame *f)
{
	struct smod *m = frame_file(f);

	(void)s;
	if (m && m->holds)
		m->holds--;
}
