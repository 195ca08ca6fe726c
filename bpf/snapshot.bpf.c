// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The start-up snapshot: every executable VMA of every process that exists
 * when recording starts, as MAP records (cause SNAPSHOT) written to the
 * iterator's seq_file.  Processes started later are covered by the mapping
 * tracker's events.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "vma.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfsym_map_ev);
} snap_scratch SEC(".maps");

SEC("iter/task_vma")
int snapshot(struct bpf_iter__task_vma *ctx)
{
	struct task_struct *task = ctx->task;
	struct vm_area_struct *vma = ctx->vma;
	struct bpfsym_map_ev *e;
	struct vma_info vi = {};
	__u32 zero = 0, size;

	if (!task || !vma)
		return 0;
	/* Threads share their group leader's mm: visit it once. */
	if (task->pid != task->tgid || !(vma->vm_flags & VM_EXEC))
		return 0;
	e = bpf_map_lookup_elem(&snap_scratch, &zero);
	if (!e)
		return 0;
	vma_info_read(vma, &vi);
	size = map_ev_fill(e, task, &vi, BPFSYM_MAP_SNAPSHOT);
	bpf_seq_write(ctx->meta->seq, e, size);
	return 0;
}
