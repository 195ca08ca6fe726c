// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sampler: a perf_event program that takes one CPU sample (both stacks,
 * pid, tid, comm, cgroup, time) per tick of the sampling event; with
 * --off-cpu, a sched_switch program that takes the stacks a task leaves
 * the CPU with and sums the time it stays off (offcpu.bpf.h).
 *
 * Targeting happens here, never in userspace (maps.bpf.h: is_target).
 * Process lifetime and mappings come from the mapping tracker
 * (maptrack.bpf.c) through the same ring buffer; with lazy_maps, a
 * process's mappings come from its first sample, taken here (with the VMA
 * iterator, or from the list the tracker kept: pend.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "maps.bpf.h"
#include "stack.bpf.h"
#include "vma.bpf.h"
#include "fresh.bpf.h"
#include "pend.bpf.h"

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

/*
 * Two objects are built from this file (Makefile): this one, which takes
 * a process's mappings at its first sample (lazy_maps) with task work
 * (6.18) and the open-coded VMA iterator (6.7; since 6.18 not where
 * interrupts are off), and sampler_exec.bpf.o, built with
 * BPFSYM_FIRST_SAMPLE=0, for kernels without them: there a first sample
 * sends the list of mappings the tracker kept since the process's exec
 * (pend.bpf.h), or the tracker follows every process from its exec (-p,
 * a command), and a sample never waits.  The
 * loader picks one (record/kfeatures.c); both have the same maps,
 * programs and settings, so one skeleton type serves both.  Objects, not
 * one object with weak kfuncs: libbpf resolves every extern of an object
 * it opens, and without CAP_SYS_ADMIN it cannot look through the module
 * BTFs for a kfunc missing from vmlinux's, weak or not.
 */
#ifndef BPFSYM_FIRST_SAMPLE
#define BPFSYM_FIRST_SAMPLE 1
#endif

#if BPFSYM_FIRST_SAMPLE
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym;
#endif

/*
 * Bounds on one process's first sample: the VMAs looked at (a JVM has a
 * few thousand; the kernel allows 65530) and the MAP records sent.  Past
 * either, the rest of its code is not known (BPFSYM_STAT_FIRST_TRUNC).
 */
#define FIRST_VMAS_MAX	8192
#define FIRST_MAPS_MAX	1024

/*
 * The counts of a first sample's loop, in map memory: counted on the
 * stack, each value would be a state of its own to the verifier, which
 * then never finds the loop's states the same.
 */
struct first_count {
	__u32 seen, sent;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct first_count);
} first_counts SEC(".maps");

/*
 * lazy_maps: a process's first sample waits here, in the first free of
 * FIRST_PROBES slots from its tgid modulo the slots, while the task work
 * that takes its mappings runs: the VMA iterator refuses an interrupt,
 * and the sample must go out after the MAP records it needs.  The work
 * runs before the task returns to user space, so a slot is held for
 * microseconds, or while a task sampled in the kernel sleeps there (or
 * is stopped: the recorder itself, or a job); one held past
 * FIRST_STALE_NS is taken over if its work is no longer queued.  With
 * one slot a tgid, a held slot cost every process hashing to it all its
 * names: none of its samples could wait, and a short-lived one's all
 * went out before any mapping (a whole program [unknown] in the stalled
 * test_shortlived, in 3 of 5 runs here).
 */
#define FIRST_SLOTS	64
#define FIRST_PROBES	4
#define FIRST_STALE_NS	1000000000ull

struct first_slot {
	struct bpf_task_work tw;
	__u32 owner;		/* the tgid whose first sample waits; 0: free */
	__u32 user_done;	/* s holds the user side already (frame pointers) */
	__u64 since;		/* when the owner took it */
	struct bpfsym_sample s;	/* the sample, kernel side taken */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FIRST_SLOTS);
	__type(key, __u32);
	__type(value, struct first_slot);
} first_slots SEC(".maps");

/*
 * 1 while this CPU runs a first sample's task work: it uses the per-CPU
 * scratch and walk state that a sample taken in between would overwrite,
 * so that sample is dropped (BPFSYM_STAT_FIRST_LOST).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} first_busy SEC(".maps");

/* Whether this CPU's scratch and walk state are a first sample's task work's now. */
static __always_inline bool first_held(void)
{
#if BPFSYM_FIRST_SAMPLE
	__u32 zero = 0, *fb = bpf_map_lookup_elem(&first_busy, &zero);

	return fb && *fb;
#else
	return false;
#endif
}

/*
 * Close stack record @s at @nk kernel and @nu user frames (each capped):
 * its counts and size, which it returns, the bytes to send.  A CPU
 * sample's and an off-CPU stack's alike.
 */
static __always_inline __u64 sample_seal(struct bpfsym_sample *s, __u32 nk, __u32 nu)
{
	__u64 size;

	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	if (nu > BPFSYM_MAX_FRAMES)
		nu = BPFSYM_MAX_FRAMES;
	s->nr_kernel = nk;
	s->nr_user = nu;
	size = BPFSYM_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(__u64);
	/* Through a register the verifier sees compared (clang copies it otherwise). */
	asm volatile("" : "+r"(size));
	if (size > sizeof(*s))
		size = sizeof(*s);
	s->hdr.size = size;
	return size;
}

/*
 * The current task's user side into the scratch sample after its @nk
 * kernel frames: the kernel's frame-pointer walk on @ctx, or ours, from
 * the registers @sampled holds when it caught user mode (a perf event's;
 * NULL: none, as at a switch-out), else from those @task entered the
 * kernel with.  Why it ended goes into the sample's flags.  The frames
 * taken; 0 when the walk failed (flagged).
 */
static __always_inline __u32 user_side(void *ctx, struct bpf_perf_event_data *sampled,
				       struct task_struct *task, __u32 tgid, __u32 nk)
{
	struct bpfsym_sample *s;
	__u32 zero = 0, uend = 0;
	long n;

	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	if (ustack_mode == BPFSYM_USTACK_KERNEL_FP) {
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			return 0;
		n = capture_user_stack(ctx, &s->ips[nk]);
	} else {
		n = sampled ? unw_walk_user(sampled, task, tgid, nk, &uend) :
			      unw_walk_task(task, tgid, nk, true, &uend);
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->flags |= (uend << BPFSYM_SF_UEND_SHIFT) & BPFSYM_SF_UEND_MASK;
	if (n < 0) {
		s->flags |= BPFSYM_SF_USTACK_ERR;
		return 0;
	}
	return n > BPFSYM_MAX_FRAMES ? BPFSYM_MAX_FRAMES : n;
}

/* The scratch sample, @nk kernel and @nu user frames, to the ring buffer. */
static __always_inline void sample_send(struct bpfsym_sample *s, __u32 nk, __u32 nu)
{
	__u64 size = sample_seal(s, nk, nu);

	if (bpf_ringbuf_output(&events, s, size, rb_flags()))
		stat_inc(BPFSYM_STAT_LOST_SAMPLES);
	else
		stat_inc(BPFSYM_STAT_SAMPLES);
}

#if BPFSYM_FIRST_SAMPLE
/* Copy a sample of @nk + @nu frames from @src to @dst (map memory both). */
static __always_inline void sample_copy(struct bpfsym_sample *dst, const struct bpfsym_sample *src,
					__u32 nk, __u32 nu)
{
	__u64 size = BPFSYM_SAMPLE_HDR_SIZE + ((__u64)nk + nu) * sizeof(__u64);

	asm volatile("" : "+r"(size));
	if (size > sizeof(*dst))
		size = sizeof(*dst);
	bpf_probe_read_kernel(dst, size, src);
}

/*
 * Take the executable mappings of the current task's process @tgid whole
 * (its fresh view claimed by the sampler): a RESYNC record, then a MAP
 * record each, filling the view.  The mmap lock is only tried: contended,
 * the claim goes and the next sample tries again.  Global, so the
 * verifier checks it once.
 */
__noinline int first_sample(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf(), *leader, *parent;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct bpfsym_unw_fresh *f;
	struct vma_info vi = {};
	struct first_count *c;
	__u32 zero = 0;
	bool trunc = false;

	c = bpf_map_lookup_elem(&first_counts, &zero);
	if (!c)
		return 0;
	c->seen = c->sent = 0;
	if (bpf_iter_task_vma_new(&it, task, 0)) {
		bpf_iter_task_vma_destroy(&it);
		bpf_map_delete_elem(&unw_fresh, &tgid);
		stat_inc(BPFSYM_STAT_VMA_BUSY);
		return 0;
	}
	/* A view of userspace's was made before the process stopped being followed: stale. */
	if (bpf_map_lookup_elem(&unw_procs, &tgid))
		bpf_map_delete_elem(&unw_procs, &tgid);
	/* Its parent, if it still runs the image it was forked with (no exec since). */
	leader = task->group_leader;
	parent = leader->real_parent;
	if (leader->self_exec_id == leader->parent_exec_id && parent)
		emit_task_ev(BPFSYM_EV_RESYNC, task, tgid, parent->tgid, parent);
	else
		emit_task_ev(BPFSYM_EV_RESYNC, task, tgid, 0, NULL);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		if (++c->seen > FIRST_VMAS_MAX || c->sent >= FIRST_MAPS_MAX) {
			trunc = true;
			break;
		}
		if (!(vma->vm_flags & VM_EXEC))
			continue;
		vma_info_read(vma, &vi);
		emit_map(&vi, BPFSYM_MAP_FIRST_SAMPLE);
		c->sent++;
	}
	bpf_iter_task_vma_destroy(&it);
	stat_inc(BPFSYM_STAT_FIRST_SAMPLE);
	if (trunc) {
		stat_inc(BPFSYM_STAT_FIRST_TRUNC);
		f = bpf_map_lookup_elem(&unw_fresh, &tgid);
		if (f)
			f->flags |= BPFSYM_UNW_FRESH_PARTIAL;
	}
	return 0;
}

/*
 * The task work of a first sample, in the task, interrupts on, before it
 * returns to user space: its registers and user stack are still those of
 * the sample.  Take the process's mappings, walk the user stack with the
 * view they made (frame pointers: walked already), send the sample.  A
 * task sampled in the kernel on its way to sleep runs this only when its
 * syscall returns: its slot may have been taken over by then (after
 * FIRST_STALE_NS), and its sample is lost, counted; its mappings are
 * taken all the same, as its claim says they will be.
 */
static int first_work(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct first_slot *slot = value;
	__u64 t0 = bpf_ktime_get_ns();
	struct bpfsym_sample *s;
	__u32 zero = 0, tgid = task->tgid, nk, nu, uend = 0, *busy;
	long n;

	busy = bpf_map_lookup_elem(&first_busy, &zero);
	if (!busy)
		return 0;
	*busy = 1;
	first_sample(tgid);
	if (slot->owner != tgid) {
		stat_inc(BPFSYM_STAT_FIRST_LOST);
		goto done;	/* the slot is another's now */
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		goto out;
	nk = slot->s.nr_kernel;
	nu = slot->s.nr_user;
	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	if (nu > BPFSYM_MAX_FRAMES)
		nu = BPFSYM_MAX_FRAMES;
	sample_copy(s, &slot->s, nk, nu);
	if (!slot->user_done) {
		n = unw_walk_task(task, tgid, nk, false, &uend);
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			goto out;
		s->flags |= (uend << BPFSYM_SF_UEND_SHIFT) & BPFSYM_SF_UEND_MASK;
		if (n < 0)
			s->flags |= BPFSYM_SF_USTACK_ERR;
		nu = n < 0 ? 0 : n;
	}
	sample_send(s, nk, nu);
out:
	slot->owner = 0;
done:
	*busy = 0;
	stat_add(BPFSYM_STAT_FIRST_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/*
 * Take slot @key for process @tgid and queue its task work: the slot,
 * or NULL (held, or its work still queued).
 */
static __always_inline struct first_slot *first_take(__u32 key, __u32 tgid, __u64 now)
{
	struct first_slot *slot = bpf_map_lookup_elem(&first_slots, &key);
	__u32 owner;

	if (!slot)
		return NULL;
	owner = slot->owner;
	if (owner && now - slot->since < FIRST_STALE_NS)
		return NULL;
	if (__sync_val_compare_and_swap(&slot->owner, owner, tgid) != owner)
		return NULL;	/* another CPU took it */
	/*
	 * Queued first, filled after: the work runs in this task once this
	 * interrupt has returned, not before.  A work still queued (an owner
	 * past FIRST_STALE_NS, asleep in the kernel) makes the queueing fail
	 * (-EBUSY): the slot and its sample stay that owner's.
	 */
	if (bpf_task_work_schedule_resume_impl(bpf_get_current_task_btf(), &slot->tw, &first_slots,
					       first_work, NULL)) {
		slot->owner = owner;
		return NULL;
	}
	return slot;
}

/*
 * Hand the scratch sample of the current task's process @tgid (@nk
 * kernel frames, @nu user ones if @user_done) to a first sample's task
 * work.  1 if it will send it; 0: send it now (no free slot, or the work
 * could not be queued: the task is exiting).
 */
static __always_inline int first_defer(__u32 tgid, __u32 nk, __u32 nu, bool user_done)
{
	__u32 zero = 0, i;
	struct first_slot *slot = NULL;
	struct bpfsym_sample *s = bpf_map_lookup_elem(&scratch, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!s)
		return 0;
	for (i = 0; i < FIRST_PROBES && !slot; i++)
		slot = first_take((tgid + i) % FIRST_SLOTS, tgid, now);
	if (!slot)
		return 0;
	slot->since = now;
	slot->user_done = user_done;
	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	if (nu > BPFSYM_MAX_FRAMES)
		nu = BPFSYM_MAX_FRAMES;
	sample_copy(&slot->s, s, nk, nu);
	slot->s.nr_kernel = nk;
	slot->s.nr_user = nu;
	return 1;
}

#endif /* BPFSYM_FIRST_SAMPLE */

#include "korc.bpf.h"
#include "offcpu.bpf.h"

/*
 * One sample of the current task.  With lazy_maps, a process not followed
 * yet is claimed here: with BPFSYM_FIRST_SAMPLE its mappings are taken by
 * a first sample's task work; without, from the list the tracker kept
 * (pend_maps), sent now, before the walk that needs them.
 */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct bpfsym_sample *s;
	__u32 nk = 0, nu = 0;
	bool kthread;
	long n;
#if BPFSYM_FIRST_SAMPLE
	bool first = false;
#endif
	__u32 *busy;

	/* The idle task is not work; count it so the summary can say so. */
	if (tid == 0) {
		stat_inc(BPFSYM_STAT_IDLE);
		return 0;
	}
	if (!is_target(tgid))
		return 0;
	kthread = BPF_CORE_READ(task, flags) & PF_KTHREAD;
	/* --user-only: a kernel thread has no user side to keep. */
	if (!want_kernel && kthread)
		return 0;
	if (first_held()) {
		stat_inc(BPFSYM_STAT_FIRST_LOST);
		return 0;
	}
	/* An NMI in an off-CPU walk (offcpu.bpf.h): the scratch is that walk's. */
	busy = bpf_map_lookup_elem(&offcpu_busy, &zero);
	if (busy && *busy) {
		stat_inc(BPFSYM_STAT_OFF_BUSY);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	sample_head(s, BPFSYM_EV_SAMPLE, task, tgid, tid);
	s->aux = 0;
	s->flags = regs_user_mode(&ctx->regs) ? BPFSYM_SF_USER_MODE : 0;

	if (want_kernel) {
		n = capture_kernel_stack(ctx, s->ips);
		if (n < 0)
			s->flags |= BPFSYM_SF_KSTACK_ERR;
		else
			nk = n;
	}
	/* Bound nk for the verifier: user frames go right after kernel ones. */
	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
#if BPFSYM_FIRST_SAMPLE
	/*
	 * lazy_maps: a process the tracker does not follow yet is claimed
	 * (a fresh view) and its sample handed to the task work that takes
	 * its mappings first.  The table-driven walk waits for the view.
	 */
	if (lazy_maps && want_user && !kthread && !bpf_map_lookup_elem(&unw_fresh, &tgid) &&
	    !bpf_map_update_elem(&unw_fresh, &tgid, &fresh_empty, BPF_NOEXIST)) {
		first = true;
		if (ustack_mode == BPFSYM_USTACK_TABLES) {
			if (first_defer(tgid, nk, 0, false))
				return 0;
			/* Sent now: the claim goes, so that the next sample tries again. */
			stat_inc(BPFSYM_STAT_FIRST_DIRECT);
			bpf_map_delete_elem(&unw_fresh, &tgid);
			first = false;
		}
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			return 0;
	}
#else
	if (lazy_maps && pend_maps && want_user && !kthread && !bpf_map_lookup_elem(&unw_fresh, &tgid) &&
	    !pend_held())
		pend_flush(tgid);
#endif
	/* A kernel thread has no user side but what the kernel's own walk says. */
	if (want_user && (ustack_mode == BPFSYM_USTACK_KERNEL_FP || !kthread)) {
		nu = user_side(ctx, ctx, task, tgid, nk);
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			return 0;
	}
#if BPFSYM_FIRST_SAMPLE
	/* Frame pointers: the user side is taken; the sample waits for the mappings all the same. */
	if (first) {
		if (first_defer(tgid, nk, nu, true))
			return 0;
		stat_inc(BPFSYM_STAT_FIRST_DIRECT);
		bpf_map_delete_elem(&unw_fresh, &tgid);
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			return 0;
	}
#endif
	sample_send(s, nk, nu);
	return 0;
}
