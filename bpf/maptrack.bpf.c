// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mapping tracker: where code lives, over time, for every target
 * process, in the same ring buffer as the samples.
 *
 * - fork, exec, exit of processes (tp_btf);
 * - at exec, the mappings the kernel's ELF loader made without any mmap
 *   call: the program's text (from mm->start_code), the interpreter's (from
 *   AT_BASE in the saved auxv), the vdso;
 * - mmap with PROT_EXEC, mprotect adding or removing PROT_EXEC, mremap and
 *   munmap of executable ranges (syscall tracepoints: the arguments are kept
 *   at entry, the VMAs read with bpf_find_vma at exit, once they exist).
 *
 * Only executable mappings are reported: a JIT's RW mapping matters once
 * mprotect makes it executable, and that event carries it whole.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "maps.bpf.h"
#include "vma.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ENOENT		2
#define EEXIST		17
#define PROT_EXEC	0x4
#define MAP_FIXED	0x10
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_DONTUNMAP 4
#define AT_BASE		7
#define AT_NULL		0
#define MAX_ERRNO	4095
#define VMA_WALK	8	/* VMAs looked at in one range */

/*
 * A syscall's arguments, from entry to exit, in the thread's own task
 * storage: the exit's look-up is a pointer walk from the task, not a
 * hash of the thread id (0.2-0.3 us a miss in an LRU hash here, at every
 * mmap exit), nothing is evicted under a fork storm, and the slot goes
 * with the thread.  nr 0: nothing pending.
 */
struct pending {
	__u64 a[5];
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending);
} pending SEC(".maps");

/* Map events are too big for the BPF stack: built here, copied out at their size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfsym_map_ev);
} map_scratch SEC(".maps");

enum { NR_MMAP = 1, NR_MPROTECT, NR_MUNMAP, NR_MREMAP };

/*
 * The unwinder is on: keep the process views (unw_alias at fork, the
 * fresh views from exec on) and wake the reader for a mapping they could
 * not take whole (a file whose table userspace has not built yet): until
 * it has read the mapping, userspace's view of the process lacks it.
 */
const volatile bool wake_on_map = false;
/*
 * ...at most once per wake_gap_ns (set by the loader from the sampling
 * period): each forced wakeup queues an irq_work, a self-IPI, which on
 * this VM made an exec's three MAP records cost 52 us instead of 5, and
 * the reader ran once per mapping.
 */
const volatile __u64 wake_gap_ns = 0;
static __u64 last_wake_ns;

static __always_inline __u64 map_rb_flags(bool viewed)
{
	__u64 now;

	if (!wake_on_map || viewed)
		return rb_flags();
	now = bpf_ktime_get_ns();
	if (now - last_wake_ns < wake_gap_ns)
		return rb_flags();
	/* Racy between CPUs on purpose: two wakeups at once are harmless. */
	last_wake_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* A new process's fresh view: no ranges yet (the value is copied whole). */
static const struct bpfsym_unw_fresh fresh_empty;

/*
 * Drop the ranges of fresh view @f that meet [start, end): their length
 * goes to 0, which no PC matches (compacting would cost the verifier a
 * state per index; a process mapping 32 ranges in all gets a userspace
 * view instead).  Whether one of them reached outside the range (its
 * remainder is dropped too: the walk will not find it there).  The view
 * is shared with the walk and, for a process with several threads, with
 * other CPUs: every index is bounded, so a race costs a range, never
 * memory safety.
 */
static __always_inline bool fresh_cut(struct bpfsym_unw_fresh *f, __u64 start, __u64 end)
{
	bool partial = false;
	__u64 rs, re;
	__u32 k;

#pragma clang loop unroll(disable)
	for (k = 0; k < BPFSYM_UNW_FRESH_RANGES; k++) {
		if (k >= f->nr)
			break;
		rs = f->r[k].start;
		re = rs + f->r[k].len;
		if (rs >= end || re <= start || rs == re)
			continue;
		if (rs < start || re > end)
			partial = true;
		f->r[k].len = 0;
	}
	return partial;
}

/*
 * Whether the fresh view of the current task's process @tgid now says all
 * userspace's would: the tracker alone saw the change (one thread: no
 * other CPU changing the view at once) and userspace has written no view
 * of its own, which would now lag.
 */
static __always_inline bool fresh_whole(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, signal, nr_threads) == 1 &&
	       !bpf_map_lookup_elem(&unw_procs, &tgid);
}

/*
 * Put MAP record @e's mapping (the current task's) in its process's
 * fresh view, with its file's table if userspace has given it one.  1 if
 * the view is whole for it: userspace need not write one
 * (BPFSYM_MF_VIEWED).  Global, so the verifier checks it once, apart
 * from the path walk of its callers.
 */
__noinline int fresh_add(const struct bpfsym_map_ev *e)
{
	struct bpfsym_unw_file key = {};
	__u32 tgid, table = BPFSYM_UNW_NO_TABLE, gen = 0, *val, n;
	struct bpfsym_unw_fresh *f;
	struct bpfsym_unw_range *r;
	bool whole = true;
	__u64 len;

	if (!e)
		return 0;
	tgid = e->pid;
	len = e->end - e->start;
	f = bpf_map_lookup_elem(&unw_fresh, &tgid);
	if (!f)
		return 0;
	if (!(e->flags & BPFSYM_MF_ANON)) {
		/* The vdso's identity is all zeroes: no file. */
		if (!(e->flags & BPFSYM_MF_SPECIAL)) {
			key.dev = e->dev;
			key.ino = e->ino;
			key.mtime_sec = e->mtime_sec;
			key.mtime_nsec = e->mtime_nsec;
		}
		val = bpf_map_lookup_elem(&unw_files, &key);
		if (val) {
			table = BPFSYM_UNW_FILE_ID(*val);
			gen = BPFSYM_UNW_FILE_GEN(*val);
		} else {
			whole = false;	/* userspace builds its table once it reads this */
		}
	}
	if (fresh_cut(f, e->start, e->end))
		whole = false;
	n = f->nr;
	if (n >= BPFSYM_UNW_FRESH_RANGES)
		return 0;
	barrier_var(n);		/* else clang drops the mask the verifier needs */
	r = &f->r[n & (BPFSYM_UNW_FRESH_RANGES - 1)];
	r->start = e->start;
	r->len = len > 0xffffffffull ? 0xffffffffu : (__u32)len;
	r->pgoff = (__u32)(e->pgoff >> 12);
	r->table = table;
	r->gen = gen;
	f->nr = n + 1;
	return whole && fresh_whole(tgid);
}

/* [start, end) of the current task's process @tgid holds nothing executable now.  As fresh_add. */
__noinline int fresh_remove(__u32 tgid, __u64 start, __u64 end)
{
	struct bpfsym_unw_fresh *f = bpf_map_lookup_elem(&unw_fresh, &tgid);

	if (!f)
		return 0;
	return !fresh_cut(f, start, end) && fresh_whole(tgid);
}

static __always_inline void emit_task_ev(__u16 type, struct task_struct *p, __u32 pid, __u32 ppid,
					 struct task_struct *parent)
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
	e->ppstart = parent ? BPF_CORE_READ(parent, group_leader, start_boottime) : 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_ringbuf_submit(e, rb_flags());
}

static __always_inline void emit_unmap(struct task_struct *t, __u64 start, __u64 end, __u32 cause)
{
	struct bpfsym_unmap_ev *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(BPFSYM_STAT_LOST_TASK_EVENTS);
		return;
	}
	e->hdr.type = BPFSYM_EV_UNMAP;
	e->hdr.size = sizeof(*e);
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->pid = BPF_CORE_READ(t, tgid);
	e->tid = BPF_CORE_READ(t, pid);
	e->pstart = BPF_CORE_READ(t, group_leader, start_boottime);
	e->start = start;
	e->end = end;
	e->cause = cause;
	e->flags = wake_on_map && fresh_remove(e->pid, start, end) ? BPFSYM_MF_VIEWED : 0;
	bpf_ringbuf_submit(e, rb_flags());
}

/*
 * Send the MAP record of VMA @vi of the current task.  Global, so that the
 * verifier checks it (and its path walk) once, not at every call site.
 */
__noinline int emit_map(const struct vma_info *vi, __u32 cause)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpfsym_map_ev *e;
	__u32 zero = 0, size;

	if (!vi)
		return 0;
	e = bpf_map_lookup_elem(&map_scratch, &zero);
	if (!e)
		return 0;
	size = map_ev_fill(e, task, vi, cause);
	if (wake_on_map && fresh_add(e))
		e->flags |= BPFSYM_MF_VIEWED;
	if (bpf_ringbuf_output(&events, e, size, map_rb_flags(e->flags & BPFSYM_MF_VIEWED)))
		stat_inc(BPFSYM_STAT_LOST_TASK_EVENTS);
	return 0;
}

static long visit_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	vma_info_read(vma, data);
	return 0;
}

/*
 * Visit the VMAs of the current task covering [start, end), at most
 * VMA_WALK of them, emitting the executable ones with @cause (0: emit
 * nothing).  Stops at a hole.  Returns whether any of them is executable,
 * or -1 if a lookup failed (the mmap lock was contended: the event is
 * lost, and counted).
 */
static __always_inline int walk_range(__u64 start, __u64 end, __u32 cause)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vma_info vi = {};
	int any = 0, i;

	for (i = 0; i < VMA_WALK && start < end; i++) {
		long err = bpf_find_vma(t, start, visit_vma, &vi, 0);

		if (err == -ENOENT)
			break;
		if (err) {
			stat_inc(BPFSYM_STAT_VMA_BUSY);
			return -1;
		}
		if (vi.vm_flags & VM_EXEC) {
			any = 1;
			if (cause)
				emit_map(&vi, cause);
		}
		start = vi.end;
	}
	return any;
}

/*
 * Emit the executable VMAs of one file mapped from @start on, following
 * contiguous VMAs of the same file (a loaded ELF image), at most VMA_WALK,
 * and stopping at the first VMA that is not executable after one that
 * is, or once past @end_code (0: unknown): each step is a bpf_find_vma,
 * and an ELF file's code is one segment (the loader's read-only and data
 * segments around it hold none).
 */
static __always_inline void walk_image(__u64 start, __u64 end_code)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vma_info vi = {};
	bool seen_exec = false;
	__u64 file = 0;
	int i;

	for (i = 0; i < VMA_WALK; i++) {
		long err = bpf_find_vma(t, start, visit_vma, &vi, 0);

		if (err == -ENOENT)
			break;
		if (err) {
			stat_inc(BPFSYM_STAT_VMA_BUSY);
			break;
		}
		/* The first VMA names the file; the walk stays in it. */
		if (!vi.file || (file && vi.file != file))
			break;
		file = vi.file;
		if (!(vi.vm_flags & VM_EXEC)) {
			if (seen_exec)
				break;
		} else {
			emit_map(&vi, BPFSYM_MAP_EXEC);
			seen_exec = true;
			if (end_code && vi.end >= end_code)
				break;
		}
		start = vi.end;
	}
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, *lender;
	__u8 one = 1;
	long err;

	/* A new thread joins its group: already covered by the group's tgid. */
	if (ptgid == ctgid || !is_target(ptgid))
		return 0;
	if (target_mode == BPFSYM_TARGET_PIDS) {
		if (!follow_children)
			return 0;
		err = bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			stat_inc(BPFSYM_STAT_TARGETS_FULL);
			return 0;
		}
	}
	emit_task_ev(BPFSYM_EV_FORK, child, ctgid, ptgid, parent);
	/*
	 * The child has the parent's mappings: it walks with the parent's
	 * view (or the one the parent borrows) until userspace writes its own.
	 */
	if (!wake_on_map)
		return 0;	/* no unwinder: no views */
	if (bpf_map_lookup_elem(&unw_fresh, &ptgid) || bpf_map_lookup_elem(&unw_procs, &ptgid))
		bpf_map_update_elem(&unw_alias, &ctgid, &ptgid, BPF_ANY);
	else if ((lender = bpf_map_lookup_elem(&unw_alias, &ptgid)))
		bpf_map_update_elem(&unw_alias, &ctgid, lender, BPF_ANY);
	else
		bpf_map_delete_elem(&unw_alias, &ctgid);	/* a reused pid's */
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct mm_struct *mm = p->mm;
	__u64 base = 0, key;
	__u32 tgid = p->tgid;
	int i;

	if (!is_target(tgid) || !mm)
		return 0;
	emit_task_ev(BPFSYM_EV_EXEC, p, tgid, 0, NULL);
	/* The old image's view would place the new one's addresses in wrong files. */
	if (wake_on_map) {
		bpf_map_delete_elem(&unw_procs, &tgid);
		bpf_map_delete_elem(&unw_alias, &tgid);
		/* The new image's view starts here, filled by the MAP records below. */
		bpf_map_update_elem(&unw_fresh, &tgid, &fresh_empty, BPF_ANY);
	}

	/*
	 * No mmap call made these: the program, its interpreter, the vdso.
	 * The tracepoint runs in the task that exec'd: p is current.
	 */
	/* start_code and end_code bound the program's PF_X segments (binfmt_elf). */
	walk_image(BPF_CORE_READ(mm, start_code), BPF_CORE_READ(mm, end_code));
	for (i = 0; i < 56; i += 2) {	/* saved_auxv[AT_VECTOR_SIZE], (type, value) pairs */
		key = BPF_CORE_READ(mm, saved_auxv[i]);
		if (key == AT_NULL)
			break;
		if (key == AT_BASE) {
			base = BPF_CORE_READ(mm, saved_auxv[i + 1]);
			break;
		}
	}
	if (base)
		walk_image(base, 0);
	walk_range((__u64)BPF_CORE_READ(mm, context.vdso),
		   (__u64)BPF_CORE_READ(mm, context.vdso) + 1, BPFSYM_MAP_EXEC);
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
	/*
	 * Its unw_alias entry may stay: nothing samples a dead tgid, and a
	 * process reusing it is made by a fork, which sets or deletes it.
	 */
	emit_task_ev(BPFSYM_EV_EXIT, p, tgid, 0, NULL);
	if (wake_on_map)
		bpf_map_delete_elem(&unw_fresh, &tgid);
	if (target_mode == BPFSYM_TARGET_PIDS && follow_children)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

static __always_inline void keep_args(__u32 nr, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	struct pending *p;

	p = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		stat_inc(BPFSYM_STAT_PENDING_FULL);
		return;
	}
	p->a[0] = a0;
	p->a[1] = a1;
	p->a[2] = a2;
	p->a[3] = a3;
	p->a[4] = a4;
	p->nr = nr;
}

/*
 * The arguments kept at entry for syscall @nr of this thread, taken (the
 * slot stays, emptied: freeing it at every exit would cost more than it
 * holds; it goes when the thread does).
 */
static __always_inline bool take_args(__u32 nr, struct pending *out)
{
	struct pending *p = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), NULL, 0);

	if (!p || p->nr != nr)
		return false;
	*out = *p;
	p->nr = 0;
	return true;
}

static __always_inline bool syscall_failed(long ret)
{
	return (unsigned long)ret >= (unsigned long)-MAX_ERRNO;
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 addr = ctx->args[0], len = ctx->args[1], prot = ctx->args[2], flags = ctx->args[3];

	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (prot & PROT_EXEC) {
		keep_args(NR_MMAP, len, prot, flags, 0, 0);
		return 0;
	}
	/*
	 * Plain data mappings never touch executable ranges; nor does
	 * MAP_FIXED_NOREPLACE (it fails where anything is mapped), nor the
	 * loader's MAP_FIXED data segments over its own read-only
	 * reservation of a library: one VMA lookup here instead of a pair
	 * and an UNMAP record for userspace, ~5 a started program.  A
	 * failed lookup keeps the arguments, as before.
	 */
	if ((flags & MAP_FIXED) && walk_range(addr, addr + len, 0) != 0)
		keep_args(NR_MMAP, len, prot, flags, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 start = ctx->ret;
	struct pending a;

	if (!take_args(NR_MMAP, &a) || syscall_failed(ctx->ret))
		return 0;
	if (a.a[1] & PROT_EXEC)
		walk_range(start, start + a.a[0], BPFSYM_MAP_MMAP);
	else
		/* MAP_FIXED without PROT_EXEC replaced whatever was there. */
		emit_unmap(t, start, start + a.a[0], BPFSYM_MAP_MMAP);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mprotect")
int on_mprotect_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 start = ctx->args[0], len = ctx->args[1], prot = ctx->args[2];

	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	/*
	 * Removing PROT_EXEC matters only where something is executable now;
	 * the loader's RELRO mprotect(PROT_READ) of each library does not.
	 */
	if ((prot & PROT_EXEC) || walk_range(start, start + len, 0))
		keep_args(NR_MPROTECT, start, len, prot, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mprotect")
int on_mprotect_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pending a;

	if (!take_args(NR_MPROTECT, &a) || ctx->ret != 0)
		return 0;
	if (a.a[2] & PROT_EXEC)
		walk_range(a.a[0], a.a[0] + a.a[1], BPFSYM_MAP_MPROTECT);
	else
		emit_unmap(t, a.a[0], a.a[0] + a.a[1], BPFSYM_MAP_MPROTECT);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int on_munmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 start = ctx->args[0], len = ctx->args[1];

	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	/* malloc's munmaps of data are most munmaps: only executable ranges matter. */
	if (walk_range(start, start + len, 0))
		keep_args(NR_MUNMAP, start, len, 0, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int on_munmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending a;

	if (take_args(NR_MUNMAP, &a) && ctx->ret == 0)
		emit_unmap(bpf_get_current_task_btf(), a.a[0], a.a[0] + a.a[1], BPFSYM_MAP_MUNMAP);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int on_mremap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 old = ctx->args[0], old_len = ctx->args[1], new_len = ctx->args[2], flags = ctx->args[3];

	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (walk_range(old, old + (old_len ? old_len : 1), 0))
		keep_args(NR_MREMAP, old, old_len, new_len, flags, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int on_mremap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 start = ctx->ret;
	struct pending a;

	if (!take_args(NR_MREMAP, &a) || syscall_failed(ctx->ret))
		return 0;
	/*
	 * Moved: the old range is gone (unless MREMAP_DONTUNMAP keeps it, now
	 * empty, which the model may keep: nothing runs there).  Shrunk in
	 * place: its tail is gone.
	 */
	if (start != a.a[0] && !(a.a[3] & MREMAP_DONTUNMAP))
		emit_unmap(t, a.a[0], a.a[0] + a.a[1], BPFSYM_MAP_MREMAP);
	else if (start == a.a[0] && a.a[2] < a.a[1])
		emit_unmap(t, a.a[0] + a.a[2], a.a[0] + a.a[1], BPFSYM_MAP_MREMAP);
	walk_range(start, start + a.a[2], BPFSYM_MAP_MREMAP);
	return 0;
}
