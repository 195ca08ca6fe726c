// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sampler: a perf_event program that takes one CPU sample (both stacks,
 * pid, tid, comm, cgroup, time) per tick of the sampling event.
 *
 * Targeting happens here, never in userspace (maps.bpf.h: is_target).
 * Process lifetime and mappings come from the mapping tracker
 * (maptrack.bpf.c) through the same ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "maps.bpf.h"
#include "stack.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h: not in BTF */

const volatile bool want_kernel = true;
const volatile bool want_user = true;

/* A sample is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfsym_sample);
} scratch SEC(".maps");

#include "unwind.bpf.h"

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct bpfsym_sample *s;
	__u32 nk = 0, nu = 0, uend = 0;
	__u64 size;
	long n;

	/* The idle task is not work; count it so the summary can say so. */
	if (tid == 0) {
		stat_inc(BPFSYM_STAT_IDLE);
		return 0;
	}
	if (!is_target(tgid))
		return 0;
	/* --user-only: a kernel thread has no user side to keep. */
	if (!want_kernel && (BPF_CORE_READ(task, flags) & PF_KTHREAD))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	s->hdr.type = BPFSYM_EV_SAMPLE;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = tid;
	s->pstart = BPF_CORE_READ(task, group_leader, start_boottime);
	s->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->flags = regs_user_mode(&ctx->regs) ? BPFSYM_SF_USER_MODE : 0;

	if (want_kernel) {
		n = capture_kernel_stack(ctx, s->ips);
		if (n < 0)
			s->flags |= BPFSYM_SF_KSTACK_ERR;
		else
			nk = n;
	}
	if (want_user) {
		/* Bound nk for the verifier: user frames go right after kernel ones. */
		if (nk > BPFSYM_MAX_FRAMES)
			nk = BPFSYM_MAX_FRAMES;
		if (ustack_mode == BPFSYM_USTACK_KERNEL_FP) {
			n = capture_user_stack(ctx, &s->ips[nk]);
		} else if (BPF_CORE_READ(task, flags) & PF_KTHREAD) {
			n = 0;	/* no user side */
		} else {
			n = unw_walk_user(ctx, task, tgid, nk, &uend);
			s = bpf_map_lookup_elem(&scratch, &zero);
			if (!s)
				return 0;
			s->flags |= (uend << BPFSYM_SF_UEND_SHIFT) & BPFSYM_SF_UEND_MASK;
		}
		if (n < 0)
			s->flags |= BPFSYM_SF_USTACK_ERR;
		else
			nu = n;
		if (nu > BPFSYM_MAX_FRAMES)
			nu = BPFSYM_MAX_FRAMES;
	}
	s->nr_kernel = nk;
	s->nr_user = nu;
	size = BPFSYM_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(__u64);
	/* Through a register the verifier sees compared (clang copies it otherwise). */
	asm volatile("" : "+r"(size));
	if (size > sizeof(*s))
		size = sizeof(*s);
	s->hdr.size = size;

	if (bpf_ringbuf_output(&events, s, size, rb_flags()))
		stat_inc(BPFSYM_STAT_LOST_SAMPLES);
	else
		stat_inc(BPFSYM_STAT_SAMPLES);
	return 0;
}
