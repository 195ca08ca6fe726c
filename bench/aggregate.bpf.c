// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * aggregate: two ways to get stack samples out of the kernel, measured
 * against each other on the same stacks (issue 15, item 5):
 *  - stream: every sample (pid, tid, time, kernel and user frames) into a
 *    ring buffer, as bpfsym record does, read without wakeups;
 *  - count: the stacks into STACK_TRACE maps (bpf_get_stackid) and a
 *    count per (pid, kernel stack id, user stack id) in a hash map, which
 *    userspace drains every interval (what bcc's profile, early Parca and
 *    Pyroscope's eBPF agent do).
 * Both walk frame pointers (bpf_get_stack / bpf_get_stackid), so the
 * difference is the transport and its consequences, not the unwinder.
 * Not bpfsym's code: a yardstick (bench/README.md, section 5).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FRAMES 127
#define EFAULT 14

struct agg_key {
	__u32 pid;
	__s32 kstack, ustack;
	__u32 pad;
};

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

/* Sized by the loader (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FRAMES * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct agg_key);
	__type(value, __u64);
} counts SEC(".maps");

/* [0] samples, [1] lost (a stack or the count map full), [2] bytes out. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 i, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		*v += n;
}

static __always_inline bool idle(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == 0;
}

SEC("perf_event")
int stream(void *ctx)
{
	__u32 z = 0;
	__u64 *s = bpf_map_lookup_elem(&scratch, &z);
	long k, u;
	__u64 size;

	/* Unsigned lengths: clang 14's BPF back end has no signed division. */
	if (!s || idle())
		return 0;
	k = bpf_get_stack(ctx, &s[8], FRAMES * sizeof(__u64), 0);
	k = k < 0 ? 0 : (long)((unsigned long)k / 8);
	if (k > FRAMES)
		k = FRAMES;
	u = bpf_get_stack(ctx, &s[8 + k], FRAMES * sizeof(__u64), BPF_F_USER_STACK);
	u = u < 0 ? 0 : (long)((unsigned long)u / 8);
	if (u > FRAMES)
		u = FRAMES;
	s[0] = bpf_get_current_pid_tgid();
	s[1] = bpf_ktime_get_ns();
	s[2] = (__u64)k << 32 | (__u64)u;
	size = (8 + k + u) * sizeof(__u64);
	if (size > (2 * FRAMES + 8) * sizeof(__u64))
		size = (2 * FRAMES + 8) * sizeof(__u64);
	stat_add(0, 1);
	if (bpf_ringbuf_output(&rb, s, size, BPF_RB_NO_WAKEUP))
		stat_add(1, 1);
	else
		stat_add(2, size);
	return 0;
}

SEC("perf_event")
int count(void *ctx)
{
	struct agg_key k = { .pid = bpf_get_current_pid_tgid() >> 32 };
	__u64 one = 1, *c;

	if (idle())
		return 0;
	stat_add(0, 1);
	k.kstack = bpf_get_stackid(ctx, &stacks, 0);
	k.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if ((k.kstack < 0 && k.kstack != -EFAULT) || (k.ustack < 0 && k.ustack != -EFAULT))
		stat_add(1, 1);		/* -EEXIST: a bucket taken by another stack; -ENOMEM */
	c = bpf_map_lookup_elem(&counts, &k);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return 0;
	}
	if (bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST)) {
		c = bpf_map_lookup_elem(&counts, &k);	/* another CPU made it */
		if (c)
			__sync_fetch_and_add(c, 1);
		else
			stat_add(1, 1);
	}
	return 0;
}
