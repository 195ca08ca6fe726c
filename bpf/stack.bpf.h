/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack capture.  The kernel side is always bpf_get_stack's.  The user side
 * is taken one of three ways (rodata `ustack_mode`, enum
 * bpfsym_ustack_mode): by the kernel's frame-pointer walk here
 * (capture_user_stack, BPFSYM_USTACK_KERNEL_FP), or by the walk in
 * unwind.bpf.h (unw_walk_user: the files' call-frame tables with the
 * frame-pointer rule where a file has none, --call-graph dwarf, the
 * default; or frame pointers alone, --call-graph fp), which also says why
 * the stack ended (enum bpfsym_uend).  The sampler (on_sample) chooses.
 *
 * What lands in the sample's user side are slots (include/bpfsym.h,
 * BPFSYM_FK_SHIFT): every walk here writes native frames, one slot each
 * (kind 0, the address as sampled).  An interpreter's walker (a runtime:
 * bpf/NAME.bpf.h, its frame kind in include/bpfsym.h) is entered from
 * the native walk where it meets the interpreter's eval function and
 * writes that kind's slots in between.  Each function fills at most
 * BPFSYM_MAX_FRAMES entries, leaf first, and returns how many, or a
 * negative error.
 */
#ifndef BPFSYM_STACK_BPF_H
#define BPFSYM_STACK_BPF_H

/*
 * A stack record's head for the current task (@task, of @tgid, thread
 * @tid): @type, CPU, time, process start, cgroup, comm; flags 0.  A CPU
 * sample's and an off-CPU stack's alike.
 */
static __always_inline void sample_head(struct bpfsym_sample *s, __u16 type, struct task_struct *task,
					__u32 tgid, __u32 tid)
{
	s->hdr.type = type;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = tid;
	s->pstart = BPF_CORE_READ(task, group_leader, start_boottime);
	s->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->flags = 0;
}

/* Whether the sampled registers were in user mode (x86: CPL 3). */
static __always_inline bool regs_user_mode(bpf_user_pt_regs_t *regs)
{
#if defined(__TARGET_ARCH_x86)
	return (BPF_CORE_READ(regs, cs) & 3) == 3;
#else
	return false;
#endif
}

/* The kernel stack of the sampled context; 0 frames when it hit user mode. */
static __always_inline long capture_kernel_stack(void *ctx, __u64 *ips)
{
	long n = bpf_get_stack(ctx, ips, BPFSYM_MAX_FRAMES * sizeof(__u64), 0);

	return n < 0 ? n : (long)((__u64)n / sizeof(__u64));
}

/*
 * The user stack by frame pointers, as the kernel's perf callchain code
 * walks it.  Kernel threads have none: 0 frames.
 */
static __always_inline long capture_user_stack(void *ctx, __u64 *ips)
{
	long n = bpf_get_stack(ctx, ips, BPFSYM_MAX_FRAMES * sizeof(__u64), BPF_F_USER_STACK);

	return n < 0 ? n : (long)((__u64)n / sizeof(__u64));
}

#endif /* BPFSYM_STACK_BPF_H */
