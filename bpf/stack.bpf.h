/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack capture, behind one interface so the way user stacks are walked can
 * change (frame pointers today; unwinding without them later) without
 * touching the sampler.  Each function fills at most BPFSYM_MAX_FRAMES
 * addresses, leaf first, and returns how many, or a negative error.
 */
#ifndef BPFSYM_STACK_BPF_H
#define BPFSYM_STACK_BPF_H

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
