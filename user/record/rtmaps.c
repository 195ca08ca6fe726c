// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rtmaps: the runtimes' per-process entries in their BPF maps (rtmaps.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>

#include "base/util.h"
#include "record/rtmaps.h"
#include "runtime/python/python.h"
#include "runtime/runtime.h"

/* py_procs[pid] = *e, or deleted. */
static int put_py(void *ctx, uint32_t pid, const struct bpfsym_py_proc *e)
{
	int fd = (int)(intptr_t)ctx;

	if (e)
		return bpf_map_update_elem(fd, &pid, e, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
}

struct runtimes *rtmaps__start(struct probes *bpf, struct offload *pool, const struct record_opts *o)
{
	struct runtimes *rs;
	int err;

	if (o->no_interp || o->kernel_only || o->call_graph == BPFSYM_USTACK_KERNEL_FP)
		return NULL;
	rs = runtimes__new();
	if (!rs)
		return NULL;
	err = python__register(rs, &(struct python_opts){
		.pool = pool, .put = put_py, .ctx = (void *)(intptr_t)probes__py_procs_fd(bpf) });
	if (err) {
		pr_warn("bpfsym: warning: Python frames are off: %s\n", strerror(-err));
		runtimes__free(rs);
		errno = -err;
		return NULL;
	}
	return rs;
}

void rtmaps__free(struct runtimes *rs)
{
	runtimes__free(rs);
}

void rtmaps__first(struct runtimes *rs, struct proc_table *procs, const uint32_t *pids, size_t n,
		   int wait_ms)
{
	const struct proc *p;

	if (!rs)
		return;
	for (size_t i = 0; i < n; i++) {
		p = proc_table__find_pid(procs, pids[i]);
		for (size_t k = 0; p && k < proc__nr_maps(p); k++)
			runtimes__mapped(rs, p, proc__map_at(p, k));
	}
	runtimes__poll(rs, (uint64_t)wait_ms * 1000000);
}

void rtmaps__log_counts(struct runtimes *rs, const uint64_t *stats)
{
	if (!rs)
		return;
	pr_debug("bpfsym: python: %llu samples walked with their thread's frames, %llu of threads "
		 "without a thread state, %llu with the interpreter's memory unreadable, %llu with "
		 "frames left when the native walk ended\n",
		 (unsigned long long)stats[BPFSYM_STAT_PY_SAMPLES],
		 (unsigned long long)stats[BPFSYM_STAT_PY_NO_THREAD],
		 (unsigned long long)stats[BPFSYM_STAT_PY_READ_FAULT],
		 (unsigned long long)stats[BPFSYM_STAT_PY_LEFT]);
}
