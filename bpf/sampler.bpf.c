// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sampler: a perf_event program that takes one CPU sample (both stacks,
 * pid, tid, comm, cgroup, time) per timer tick, and tp_btf programs that
 * report process lifetime (fork, exec, exit) into the same ring buffer so
 * userspace sees one time-ordered stream.
 *
 * Targeting happens here, never in userspace: in PIDS mode only thread
 * groups found in `targets` are sampled, and with follow_children a fork
 * of a target adds the child.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "stack.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h: not in BTF */

/* Settings, fixed by the loader before load. */
const volatile __u32 target_mode = BPFSYM_TARGET_ALL;
const volatile bool follow_children = false;
const volatile bool want_kernel = true;
const volatile bool want_user = true;

/* Sizes are set by the loader at load time (no recompile to change them). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

/* A sample is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfsym_sample);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFSYM_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

static __always_inline bool is_target(__u32 tgid)
{
	if (target_mode == BPFSYM_TARGET_ALL)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct bpfsym_sample *s;
	__u32 nk = 0, nu = 0, size;
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
		n = capture_user_stack(ctx, &s->ips[nk]);
		if (n < 0)
			s->flags |= BPFSYM_SF_USTACK_ERR;
		else
			nu = n;
	}
	s->nr_kernel = nk;
	s->nr_user = nu;
	size = BPFSYM_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(__u64);
	if (size > sizeof(*s))
		size = sizeof(*s);
	s->hdr.size = size;

	if (bpf_ringbuf_output(&events, s, size, 0))
		stat_inc(BPFSYM_STAT_LOST_SAMPLES);
	else
		stat_inc(BPFSYM_STAT_SAMPLES);
	return 0;
}

static __always_inline void emit_task_ev(__u16 type, struct task_struct *p, __u32 pid, __u32 ppid)
{
	struct bpfsym_task_ev *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(BPFSYM_STAT_LOST_TASK_EVENTS);
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->pid = pid;
	e->ppid = ppid;
	e->pstart = BPF_CORE_READ(p, group_leader, start_boottime);
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;
	long err;

	/* A new thread joins its group: already covered by the group's tgid. */
	if (ptgid == ctgid || !is_target(ptgid))
		return 0;
	if (target_mode == BPFSYM_TARGET_PIDS) {
		if (!follow_children)
			return 0;
		err = bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST */) {
			stat_inc(BPFSYM_STAT_TARGETS_FULL);
			return 0;
		}
	}
	emit_task_ev(BPFSYM_EV_FORK, child, ctgid, ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	if (is_target(tgid))
		emit_task_ev(BPFSYM_EV_EXEC, p, tgid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	/*
	 * Fires for every thread; the process is gone only with its last one.
	 * signal->live reaches 0 before this tracepoint on every kernel with
	 * tp_btf, so it works whether or not the tracepoint passes group_dead.
	 */
	if (BPF_CORE_READ(p, signal, live.counter) != 0 || !is_target(tgid))
		return 0;
	emit_task_ev(BPFSYM_EV_EXIT, p, tgid, 0);
	if (target_mode == BPFSYM_TARGET_PIDS && follow_children)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}
