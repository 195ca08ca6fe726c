// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rtmaps: the runtimes' per-process entries in their BPF maps (rtmaps.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/offload.h"
#include "base/privdrop.h"
#include "base/util.h"
#include "record/rtmaps.h"
#include "runtime/python/python.h"
#include "runtime/runtime.h"

/* The runtimes' workers: reads of a few hundred bytes each, or an interpreter's symbols. */
#define RT_THREADS	2

struct rtmaps {
	struct runtimes *rs;
	struct offload *pool;
	struct probes *bpf;
	int py_fd;
};

/* py_procs[pid] = *e, or deleted; counted once made (probes__py_changed). */
static int put_py(void *ctx, uint32_t pid, const struct bpfsym_py_proc *e)
{
	struct rtmaps *m = ctx;
	int err = 0;

	if (e)
		err = bpf_map_update_elem(m->py_fd, &pid, e, BPF_ANY) ? -errno : 0;
	else if (bpf_map_delete_elem(m->py_fd, &pid) && errno != ENOENT)
		err = -errno;
	probes__py_changed(m->bpf);
	return err;
}

struct rtmaps *rtmaps__start(struct probes *bpf, const struct record_opts *o)
{
	struct rtmaps *m;
	int err = -ENOMEM;

	if (o->no_interp || o->kernel_only || o->call_graph == BPFSYM_USTACK_KERNEL_FP)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto fail;
	/* Their workers keep what reading other users' processes needs (CAP_SYS_PTRACE ...). */
	m->pool = offload__new(&(struct offload_opts){ .max_threads = RT_THREADS,
						       .thread_start = privdrop__file_worker });
	m->rs = m->pool ? runtimes__new() : NULL;
	if (!m->rs)
		goto fail;
	m->bpf = bpf;
	m->py_fd = probes__py_procs_fd(bpf);
	err = python__register(m->rs, &(struct python_opts){ .pool = m->pool, .put = put_py, .ctx = m });
	if (!err)
		return m;
fail:
	pr_warn("bpfsym: warning: Python frames are off: %s\n", strerror(-err));
	rtmaps__free(m);
	errno = -err;
	return NULL;
}

struct runtimes *rtmaps__runtimes(const struct rtmaps *m)
{
	return m ? m->rs : NULL;
}

void rtmaps__free(struct rtmaps *m)
{
	if (!m)
		return;
	runtimes__free(m->rs);
	offload__free(m->pool);		/* after its users: jobs still running free themselves */
	free(m);
}

void rtmaps__first(struct rtmaps *m, struct proc_table *procs, const uint32_t *pids, size_t n,
		   int wait_ms)
{
	const struct proc *p;

	if (!m)
		return;
	for (size_t i = 0; i < n; i++) {
		p = proc_table__find_pid(procs, pids[i]);
		for (size_t k = 0; p && k < proc__nr_maps(p); k++)
			runtimes__mapped(m->rs, p, proc__map_at(p, k));
	}
	runtimes__poll(m->rs, (uint64_t)wait_ms * 1000000);
}

void rtmaps__log_counts(const struct rtmaps *m, const uint64_t *stats)
{
	if (!m)
		return;
	pr_debug("bpfsym: python: %llu samples walked with their thread's frames, %llu of threads "
		 "without a thread state, %llu with the interpreter's memory unreadable, %llu with "
		 "frames left when the native walk ended\n",
		 (unsigned long long)stats[BPFSYM_STAT_PY_SAMPLES],
		 (unsigned long long)stats[BPFSYM_STAT_PY_NO_THREAD],
		 (unsigned long long)stats[BPFSYM_STAT_PY_READ_FAULT],
		 (unsigned long long)stats[BPFSYM_STAT_PY_LEFT]);
}
