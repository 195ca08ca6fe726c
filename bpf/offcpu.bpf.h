/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Off-CPU time (--off-cpu, issue 28): a BTF tracepoint on sched_switch.
 *
 * At a target's switch-out the task is still current: its kernel stack is
 * bpf_get_stack's and its user registers are those it entered the kernel
 * with, so the sampler's walker (unwind.bpf.h, Python frames included)
 * takes its whole user stack, as for a CPU sample.  The stacks, the
 * process, thread and state hash to a key; a key not seen before is sent
 * once as a BPFSYM_EV_OFFCPU_STACK record, in order with the mapping
 * records that name its frames.  The task's tid then keeps (time, key).
 * At its switch-in (a `next` of a later sched_switch) the time it was off
 * is summed under the key: a thread blocking 100k times a second at one
 * place costs one map update each, not a record.
 *
 * The sums live in two maps; the recorder flips `offcpu_gen` and reads
 * (then empties) the one BPF stopped writing at its previous flip, a
 * second or more before: no interval is summed into an element being read
 * and deleted.
 *
 * Included by sampler.bpf.c after unwind.bpf.h: it shares the scratch
 * sample and the walk state with on_sample, per CPU.  sched_switch runs
 * with interrupts off, so a cpu-clock sample (a timer interrupt) cannot
 * come in between; an NMI sample (cycles) can, and is dropped while
 * `offcpu_busy` is set (BPFSYM_STAT_OFF_BUSY).  A first sample's task
 * work (sampler, lazy_maps) may be preempted mid-walk: its switch-out is
 * not walked then (counted lost).
 */
#ifndef BPFSYM_OFFCPU_BPF_H
#define BPFSYM_OFFCPU_BPF_H

/* Settings (the loader's, before load). */
const volatile bool want_offcpu = false;
const volatile __u64 offcpu_min_ns = 0;			/* shorter intervals are dropped, counted */
const volatile __u32 offcpu_states = (1u << BPFSYM_OS_NR) - 1;	/* 1 << enum bpfsym_offstate */

/* Which sums map BPF writes: the recorder flips it (.bss, mmapped). */
__u32 offcpu_gen = 0;

/* include/linux/sched.h's state bits: not in BTF. */
#define OS_TASK_INTERRUPTIBLE	0x0001
#define OS_TASK_UNINTERRUPTIBLE	0x0002
#define OS_EXIT_DEAD		0x0010
#define OS_EXIT_ZOMBIE		0x0020
#define OS_TASK_DEAD		0x0080
#define OS_TASK_NOLOAD		0x0400

/* Frames of bpf_get_stack's to skip: the program's and bpf_trace_run4's. */
#define OFFCPU_SKIP		2

/* A thread off the CPU now: since when, under which key (0: its stack did not reach the recorder). */
struct offcpu_start {
	__u64 ts;
	__u64 key;
};

/* Sizes are the loader's (1 each without --off-cpu). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tid */
	__type(value, struct offcpu_start);
} offcpu_starts SEC(".maps");

/* Keys whose stack record was sent; the recorder deletes those it let go. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} offcpu_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bpfsym_offcpu_sum);
} offcpu_sum0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bpfsym_offcpu_sum);
} offcpu_sum1 SEC(".maps");

/* 1 while this CPU's scratch sample and walk state hold an off-CPU walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_busy SEC(".maps");

/* The state @preempt and @prev_state say (enum bpfsym_offstate). */
static __always_inline __u32 offcpu_state(bool preempt, __u32 prev_state)
{
	if (preempt || !prev_state)
		return BPFSYM_OS_PREEMPT;
	if (prev_state & OS_TASK_NOLOAD)
		return BPFSYM_OS_OTHER;
	if (prev_state & OS_TASK_INTERRUPTIBLE)
		return BPFSYM_OS_SLEEP;
	if (prev_state & OS_TASK_UNINTERRUPTIBLE)
		return BPFSYM_OS_DISK;
	return BPFSYM_OS_OTHER;
}

static __always_inline __u64 offcpu_mix(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * The key of the scratch sample @s, @nk + @nu frames filled; never 0.  A
 * plain bounded loop, not bpf_loop: a callback a frame, looking the
 * scratch up each time, cost more than the rest of the key.
 */
static __always_inline __u64 offcpu_key(const struct bpfsym_sample *s, __u32 nk, __u32 nu)
{
	const __u64 *comm = (const __u64 *)s->comm;
	__u32 i, nr = nk + nu;
	__u64 h;

	h = offcpu_mix(0x6f666663707500ull, (__u64)s->pid << 32 | s->tid);
	h = offcpu_mix(h, s->pstart);
	h = offcpu_mix(h, s->cgroup_id);
	h = offcpu_mix(h, comm[0]);
	h = offcpu_mix(h, comm[1]);
	h = offcpu_mix(h, (__u64)s->flags << 32 | nk << 16 | nu);
	for (i = 0; i < 2 * BPFSYM_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h = offcpu_mix(h, s->ips[i]);
	}
	return h ? h : 1;
}

/*
 * Take the current task's stacks into the scratch sample and send them
 * if their key is new; the key, or 0 when they did not reach the
 * recorder.
 */
static __always_inline __u64 offcpu_take(void *ctx, struct task_struct *task, __u32 tgid, __u32 tid,
					 __u32 state, bool kthread)
{
	struct bpfsym_sample *s;
	__u32 zero = 0, nk = 0, nu = 0;
	__u8 one = 1;
	__u64 key, size;
	long n;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	sample_head(s, BPFSYM_EV_OFFCPU_STACK, task, tgid, tid);
	s->flags = state << BPFSYM_SF_STATE_SHIFT;
	if (want_kernel) {
		/* Not this program's own two frames (bpf_trace_run4 and the program; 6.1 and 6.18 alike). */
		n = bpf_get_stack(ctx, s->ips, BPFSYM_MAX_FRAMES * sizeof(__u64), OFFCPU_SKIP & BPF_F_SKIP_FIELD_MASK);
		n = n < 0 ? n : (long)((__u64)n / sizeof(__u64));
		if (n < 0)
			s->flags |= BPFSYM_SF_KSTACK_ERR;
		else
			nk = n;
	}
	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	if (want_user && !kthread)
		nu = user_side(ctx, NULL, task, tgid, nk);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	size = sample_seal(s, nk, nu);
	nk = s->nr_kernel;
	nu = s->nr_user;
	key = offcpu_key(s, nk, nu);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->aux = key;
	if (bpf_map_lookup_elem(&offcpu_seen, &key))
		return key;
	/* Seen only once it is sent: a key whose record was lost is sent again next time. */
	if (bpf_ringbuf_output(&events, s, size, rb_flags()))
		return 0;
	stat_inc(BPFSYM_STAT_OFF_STACKS);
	/* Full: sent again next time, which costs a record, not the time. */
	bpf_map_update_elem(&offcpu_seen, &key, &one, BPF_ANY);
	return key;
}

/* Sum @ns off the CPU under @key in the map BPF writes now. */
static __always_inline void offcpu_sum(__u64 key, __u64 ns)
{
	struct bpfsym_offcpu_sum zsum = {}, *v;
	void *map = (offcpu_gen & 1) ? (void *)&offcpu_sum1 : (void *)&offcpu_sum0;

	v = bpf_map_lookup_elem(map, &key);
	if (!v) {
		bpf_map_update_elem(map, &key, &zsum, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, &key);
	}
	if (!v) {
		stat_inc(BPFSYM_STAT_OFF_LOST);
		stat_add(BPFSYM_STAT_OFF_LOST_NS, ns);
		return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, 1);
	stat_inc(BPFSYM_STAT_OFF_SUMMED);
	stat_add(BPFSYM_STAT_OFF_SUMMED_NS, ns);
}

/* @next's switch-in: the interval it was off the CPU, if it was followed, is summed. */
static __always_inline void offcpu_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct offcpu_start *st;
	__u64 ns, key;

	if (!tid)
		return;
	st = bpf_map_lookup_elem(&offcpu_starts, &tid);
	if (!st)
		return;
	ns = now - st->ts;
	key = st->key;
	bpf_map_delete_elem(&offcpu_starts, &tid);
	if ((__s64)ns <= 0)
		return;
	if (ns < offcpu_min_ns) {
		stat_inc(BPFSYM_STAT_OFF_SHORT);
		stat_add(BPFSYM_STAT_OFF_SHORT_NS, ns);
		return;
	}
	if (!key) {
		stat_inc(BPFSYM_STAT_OFF_LOST);
		stat_add(BPFSYM_STAT_OFF_LOST_NS, ns);
		return;
	}
	offcpu_sum(key, ns);
}

/* @prev's switch-out (it is current): its stacks and the time, if it is a target. */
static __always_inline void offcpu_out(void *ctx, struct task_struct *prev, bool preempt, __u32 prev_state,
				       __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, state, *busy;
	struct offcpu_start st = { .ts = now };
	bool kthread;

	if (!tid || !is_target(tgid))
		return;
	/* An exiting task never comes back: nothing to wait for. */
	if (!preempt && (prev_state & (OS_TASK_DEAD | OS_EXIT_DEAD | OS_EXIT_ZOMBIE)))
		return;
	state = offcpu_state(preempt, prev_state);
	if (!(offcpu_states & (1u << state)))
		return;
	kthread = BPF_CORE_READ(prev, flags) & PF_KTHREAD;
	if (!want_kernel && kthread)
		return;
	busy = bpf_map_lookup_elem(&offcpu_busy, &zero);
	if (!busy)
		return;
#if BPFSYM_FIRST_SAMPLE
	{
		__u32 *fb = bpf_map_lookup_elem(&first_busy, &zero);

		/* A first sample's work was preempted mid-walk: its scratch is not ours. */
		if (fb && *fb)
			goto keep;
	}
#endif
	*busy = 1;
	st.key = offcpu_take(ctx, prev, tgid, tid, state, kthread);
	*busy = 0;
	stat_inc(BPFSYM_STAT_OFF_SWITCHES);
#if BPFSYM_FIRST_SAMPLE
keep:
#endif
	if (bpf_map_update_elem(&offcpu_starts, &tid, &st, BPF_ANY))
		stat_inc(BPFSYM_STAT_OFF_UNTRACKED);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	if (!want_offcpu)
		return 0;
	offcpu_in(next, now);
	offcpu_out(ctx, prev, preempt, prev_state, now);
	return 0;
}

#endif /* BPFSYM_OFFCPU_BPF_H */
