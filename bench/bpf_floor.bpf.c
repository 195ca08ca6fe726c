// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf_floor: perf_event programs that each do one piece of what a
 * stack-sampling BPF program does, so their run_time_ns/run_cnt
 * (kernel.bpf_stats_enabled) show what each piece costs on this machine.
 * Not bpfsym's code: a yardstick for bpfsym's on_sample (bench/README.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FRAMES 127

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2 * FRAMES + 8]);
} scratch SEC(".maps");

/* Nothing: the cost of running a program and of measuring it. */
SEC("perf_event")
int empty(void *ctx)
{
	return 0;
}

/* 64 bytes into a ring buffer, default (adaptive) wakeup. */
SEC("perf_event")
int rb_wakeup(void *ctx)
{
	__u64 v[8] = { 1 };

	bpf_ringbuf_output(&rb, v, sizeof(v), 0);
	return 0;
}

/* The same, no wakeup: the reader polls. */
SEC("perf_event")
int rb_nowakeup(void *ctx)
{
	__u64 v[8] = { 1 };

	bpf_ringbuf_output(&rb, v, sizeof(v), BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("perf_event")
int kstack(void *ctx)
{
	__u32 z = 0;
	__u64 *s = bpf_map_lookup_elem(&scratch, &z);

	if (s)
		bpf_get_stack(ctx, s, FRAMES * sizeof(__u64), 0);
	return 0;
}

SEC("perf_event")
int ustack(void *ctx)
{
	__u32 z = 0;
	__u64 *s = bpf_map_lookup_elem(&scratch, &z);

	if (s)
		bpf_get_stack(ctx, s, FRAMES * sizeof(__u64), BPF_F_USER_STACK);
	return 0;
}

/* Both stacks, then the record out, with or without a wakeup. */
static __always_inline int both(void *ctx, __u64 flags)
{
	__u32 z = 0;
	__u64 *s = bpf_map_lookup_elem(&scratch, &z);
	long k, u;
	__u64 size;

	if (!s)
		return 0;
	k = bpf_get_stack(ctx, &s[8], FRAMES * sizeof(__u64), 0);
	if (k < 0)
		k = 0;
	k /= 8;
	if (k > FRAMES)
		k = FRAMES;
	u = bpf_get_stack(ctx, &s[8 + k], FRAMES * sizeof(__u64), BPF_F_USER_STACK);
	if (u < 0)
		u = 0;
	u /= 8;
	if (u > FRAMES)
		u = FRAMES;
	s[0] = bpf_get_current_pid_tgid();
	s[1] = bpf_ktime_get_ns();
	size = (8 + k + u) * sizeof(__u64);
	if (size > (2 * FRAMES + 8) * sizeof(__u64))
		size = (2 * FRAMES + 8) * sizeof(__u64);
	bpf_ringbuf_output(&rb, s, size, flags);
	return 0;
}

SEC("perf_event")
int stacks_wakeup(void *ctx)
{
	return both(ctx, 0);
}

SEC("perf_event")
int stacks_nowakeup(void *ctx)
{
	return both(ctx, BPF_RB_NO_WAKEUP);
}
