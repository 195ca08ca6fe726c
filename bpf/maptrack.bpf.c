// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mapping tracker: where code lives, over time, for every target
 * process, in the same ring buffer as the samples.
 *
 * - fork, exec, exit of processes (tp_btf);
 * - at exec, the mappings the kernel's ELF loader made without any mmap
 *   call: the program's text (from mm->start_code), the interpreter's (at
 *   the entry point the loader set), the vdso (from its image);
 * - mmap with PROT_EXEC, mprotect adding or removing PROT_EXEC, mremap and
 *   munmap of executable ranges (syscall exit tracepoints: the arguments
 *   are still in the registers saved at entry, the VMAs are read with
 *   bpf_find_vma once they exist, and the process's fresh view tells
 *   whether a range that lost its code had any).
 *
 * Only executable mappings are reported: a JIT's RW mapping matters once
 * mprotect makes it executable, and that event carries it whole.
 *
 * With lazy_maps (whole-system and cgroup targets), only the processes
 * followed since their first sample (maps.bpf.h): fork sends nothing,
 * exec only drops a followed process's views, mmap and the rest cost a
 * look-up for the others.  Exit is sent for every process.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfsym.h"
#include "maps.bpf.h"
#include "vma.bpf.h"
#include "fresh.bpf.h"
#include "pend.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ENOENT		2
#define EEXIST		17
#define PROT_EXEC	0x4
#define MAP_FIXED	0x10
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_DONTUNMAP 4
#define MAX_ERRNO	4095
#define VMA_WALK	8	/* VMAs looked at in one range */

/*
 * mremap's arguments, from entry to exit, in the thread's own task
 * storage: its entry must look at the old range before the kernel moves
 * it.  (The exit's look-up is a pointer walk from the task, not a hash
 * of the thread id; nothing is evicted under a fork storm; the slot goes
 * with the thread.)  nr 0: nothing pending.
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

enum { NR_MREMAP = 1 };

static __always_inline void emit_unmap(struct task_struct *t, __u64 start, __u64 end, __u32 cause,
				       bool viewed)
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
	e->pid = t->tgid;
	e->tid = t->pid;
	e->pstart = t->group_leader->start_boottime;
	e->start = start;
	e->end = end;
	e->cause = cause;
	e->flags = viewed ? BPFSYM_MF_VIEWED : 0;
	bpf_ringbuf_submit(e, rb_flags());
}

/*
 * [start, end) of the current task's process @tgid has just lost its
 * code, if it had any (a munmap, an mprotect without PROT_EXEC, a
 * MAP_FIXED data mmap: the kernel has changed it already).  Send the
 * UNMAP record unless the process's fresh view, whole, held nothing
 * there: the loader's data segments and RELRO, malloc's munmaps, ~10 a
 * started program, cost one look-up.  @had_code: it had (mremap's entry
 * looked): the record goes whatever the view says.
 */
static __noinline void exec_gone(__u32 tgid, __u64 start, __u64 end, __u32 cause, bool had_code)
{
	struct bpfsym_unw_fresh *f = bpf_map_lookup_elem(&unw_fresh, &tgid);
	bool viewed = false;
	int cut;

	if (!f && lazy_maps) {
		/* Not followed: its first sample takes it whole, from its list if it keeps one. */
		if (pend_maps)
			pend_cut(tgid, start, end);
		return;
	}
	if (f) {
		cut = fresh_cut(f, start, end);
		if (!cut && !had_code && !(f->flags & BPFSYM_UNW_FRESH_PARTIAL))
			return;
		viewed = unwinder_on && !(cut & CUT_PARTIAL) && fresh_whole(f, tgid);
	}
	emit_unmap(bpf_get_current_task_btf(), start, end, cause, viewed);
}

static long visit_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	vma_info_read(vma, data);
	return 0;
}

/*
 * What becomes of an executable VMA found: sent as a MAP record, or
 * noted in its process's list (pend.bpf.h), which, full, is sent; or, in
 * a list made at this exec, which three entries cannot fill, only noted:
 * on_exec then never calls pend_flush, whose calls down to the path walk
 * under on_exec's frame were more stack than 6.1 allows (544 of 512).
 * KEEP_NONE: the process is neither followed nor keeps a list.
 */
enum keep { KEEP_SEND, KEEP_LIST, KEEP_NEW_LIST, KEEP_NONE };

static __always_inline void keep_vma(struct task_struct *t, const struct vma_info *vi, __u32 cause,
				     enum keep keep)
{
	if (keep == KEEP_NEW_LIST)
		pend_add(t->tgid, vi);
	else if (keep == KEEP_LIST)
		pend_keep(t->tgid, vi, cause);
	else
		emit_map(vi, cause);
}

/* A VMA look-up for the current task's process failed (keep: where it was going). */
static __always_inline void keep_lost(struct task_struct *t, enum keep keep)
{
	stat_inc(BPFSYM_STAT_VMA_BUSY);
	if (keep == KEEP_SEND)
		fresh_lost(t->tgid);
	else
		pend_lost(t->tgid);
}

/*
 * Visit the VMAs of the current task covering [start, end), at most
 * VMA_WALK of them (read into @vi), keeping the executable ones as @keep
 * says with @cause (0: none).  Stops at a hole.  Returns whether any of
 * them is executable, or -1 if a lookup failed (the mmap lock was
 * contended: the event is lost, and counted).
 */
static __always_inline int walk_range(__u64 start, __u64 end, __u32 cause, enum keep keep,
				      struct vma_info *vi)
{
	struct task_struct *t = bpf_get_current_task_btf();
	int any = 0, i;

	for (i = 0; i < VMA_WALK && start < end; i++) {
		long err = bpf_find_vma(t, start, visit_vma, vi, 0);

		if (err == -ENOENT)
			break;
		if (err) {
			keep_lost(t, keep);
			return -1;
		}
		if (vi->vm_flags & VM_EXEC) {
			any = 1;
			if (cause)
				keep_vma(t, vi, cause, keep);
		}
		start = vi->end;
	}
	return any;
}

/*
 * Emit the executable VMAs of one file mapped from @start on, following
 * contiguous VMAs of the same file (a loaded ELF image), at most VMA_WALK,
 * and stopping at the first VMA that is not executable after one that
 * is, or once past @end_code (0: the first executable VMA is all): each
 * step is a bpf_find_vma, and an ELF file's code is one segment (the
 * loader's read-only and data segments around it hold none), mapped by
 * the kernel's loader as one VMA.  Kept as @keep says; @vi: the scratch.
 */
static __always_inline void walk_image(__u64 start, __u64 end_code, enum keep keep,
				       struct vma_info *vi)
{
	struct task_struct *t = bpf_get_current_task_btf();
	bool seen_exec = false;
	__u64 file = 0;
	int i;

	for (i = 0; i < VMA_WALK; i++) {
		long err = bpf_find_vma(t, start, visit_vma, vi, 0);

		if (err == -ENOENT)
			break;
		if (err) {
			keep_lost(t, keep);
			break;
		}
		/* The first VMA names the file; the walk stays in it. */
		if (!vi->file || (file && vi->file != file))
			break;
		file = vi->file;
		if (!(vi->vm_flags & VM_EXEC)) {
			if (seen_exec)
				break;
		} else {
			keep_vma(t, vi, BPFSYM_MAP_EXEC, keep);
			seen_exec = true;
			if (!end_code || vi->end >= end_code)
				break;
		}
		start = vi->end;
	}
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
		if (err && err != -EEXIST) {
			stat_inc(BPFSYM_STAT_TARGETS_FULL);
			return 0;
		}
	}
	/*
	 * lazy_maps: the child's first sample takes its mappings whole; where
	 * that is from lists, it gets its parent's (pend.bpf.h).
	 */
	if (lazy_maps) {
		if (pend_maps) {
			pend_hold(1);
			pend_fork(ptgid, ctgid, child);
			pend_hold(0);
		}
		return 0;
	}
	emit_task_ev(BPFSYM_EV_FORK, child, ctgid, ptgid, parent);
	/* The child has the parent's mappings. */
	unw_lend(ctgid, ptgid);
	return 0;
}

/*
 * The mappings no mmap call made, of the current task (the tracepoint
 * runs in the task that exec'd): the program, its interpreter, the
 * vdso, kept as @keep says.
 */
static __always_inline void exec_images(struct mm_struct *mm, enum keep keep)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct vma_info vi = {};
	__u64 ip = regs->ip;

	/* start_code and end_code bound the program's PF_X segments (binfmt_elf). */
	walk_image(mm->start_code, mm->end_code, keep, &vi);
	/*
	 * The task starts at its interpreter's entry point, if it has one
	 * (the ELF loader has set its registers by now): the VMA there is
	 * the interpreter's code, one look-up (from its AT_BASE, the walk
	 * took two, ld.so's first VMA holding no code).
	 */
	if (ip < mm->start_code || ip >= mm->end_code)
		walk_range(ip, ip + 1, BPFSYM_MAP_EXEC, keep, &vi);
	/*
	 * The vdso's VMA is its image's text, no file, read and exec
	 * (map_vdso): made here, not looked up (a bpf_find_vma, ~0.7 us of
	 * every exec).  0 where vdso=0 mapped none.
	 */
	__builtin_memset(&vi, 0, sizeof(vi));
	vi.start = (__u64)mm->context.vdso;
	if (!vi.start)
		return;
	vi.end = vi.start + BPF_CORE_READ(mm, context.vdso_image, size);
	vi.vm_flags = VM_READ | VM_EXEC;
	if (vi.end > vi.start)
		keep_vma(t, &vi, BPFSYM_MAP_EXEC, keep);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct mm_struct *mm = p->mm;
	__u32 tgid = p->tgid;

	if (!is_target(tgid) || !mm)
		return 0;
	/*
	 * lazy_maps: only a process followed since a sample has an old image
	 * to forget; its next sample takes the new one whole.  One look-up
	 * for the others, most of them.  Where the sample takes it from the
	 * process's list, the list starts here, with the loader's mappings.
	 */
	/* The old image's interpreter is gone with it (one look-up for most). */
	if (bpf_map_lookup_elem(&py_procs, &tgid))
		bpf_map_delete_elem(&py_procs, &tgid);
	if (lazy_maps) {
		/*
		 * Held from the look-up on: a sample in between that found the
		 * process not followed would claim it, and the list made below
		 * would never be sent (pend_busy).
		 */
		pend_hold(1);
		if (bpf_map_lookup_elem(&unw_fresh, &tgid)) {
			bpf_map_delete_elem(&unw_fresh, &tgid);
			bpf_map_delete_elem(&unw_procs, &tgid);
			emit_task_ev(BPFSYM_EV_EXEC, p, tgid, 0, NULL);
		} else if (bpf_map_lookup_elem(&unw_procs, &tgid)) {
			bpf_map_delete_elem(&unw_procs, &tgid);
			emit_task_ev(BPFSYM_EV_EXEC, p, tgid, 0, NULL);
		}
		if (pend_maps) {
			pend_exec(tgid);
			exec_images(mm, KEEP_NEW_LIST);
		}
		pend_hold(0);
		return 0;
	}
	emit_task_ev(BPFSYM_EV_EXEC, p, tgid, 0, NULL);
	/*
	 * The old image's view would place the new one's addresses in wrong
	 * files.  Most processes have no view of userspace's: a look-up is
	 * cheaper than a delete that finds nothing (~0.5 us here, under the
	 * bucket lock).  The loan is deleted, not left to age out: an LRU
	 * hash kept full makes every fork's loan evict one (fork 1.8 -> 2.9
	 * us, measured).
	 */
	if (unwinder_on) {
		if (bpf_map_lookup_elem(&unw_procs, &tgid))
			bpf_map_delete_elem(&unw_procs, &tgid);
		bpf_map_delete_elem(&unw_alias, &tgid);
	}

	/* The new image's view starts here, filled by the MAP records below. */
	bpf_map_update_elem(&unw_fresh, &tgid, &fresh_empty, BPF_ANY);

	exec_images(mm, KEEP_SEND);
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
	if (p->signal->live.counter != 0 || !is_target(tgid))
		return 0;
	/*
	 * Its unw_alias entry may stay: nothing samples a dead tgid, and a
	 * process reusing it is made by a fork, which sets or deletes it.
	 */
	emit_task_ev(BPFSYM_EV_EXIT, p, tgid, 0, NULL);
	if (!lazy_maps || bpf_map_lookup_elem(&unw_fresh, &tgid))
		bpf_map_delete_elem(&unw_fresh, &tgid);
	/*
	 * Its list, if it keeps one, stays: a fork or an exec of a process
	 * reusing the tgid writes it first, and the LRU takes the room
	 * (deleting it cost every exit 0.5 us).
	 */
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

/*
 * Whether the tracker follows process @tgid's mappings: all of them, or
 * with lazy_maps only those sampled since their exec (a fresh view).
 */
static __always_inline bool followed(__u32 tgid)
{
	return !lazy_maps || bpf_map_lookup_elem(&unw_fresh, &tgid);
}

/* Where a new executable VMA of process @tgid goes: sent, in its list, or nowhere. */
static __always_inline enum keep keep_of(__u32 tgid)
{
	if (followed(tgid))
		return KEEP_SEND;
	return pend_maps ? KEEP_LIST : KEEP_NONE;
}

static __always_inline bool syscall_failed(long ret)
{
	return (unsigned long)ret >= (unsigned long)-MAX_ERRNO;
}

/*
 * The current syscall's arguments at its exit: the registers saved at
 * entry (x86-64: rdi, rsi, rdx, r10, r8, r9), which nothing writes before
 * the exit tracepoint (a restart rewrites rax; a signal's frame comes
 * after).  So one program a syscall, not an entry/exit pair: most mmaps
 * are data, and an entry's run was most of what they cost (0.26 us a
 * run, 4,400 runs/s at 300 programs/s).  The ftrace syscall events skip
 * 32-bit compat syscalls, whose registers differ.
 */
struct sys_args {
	__u64 a0, a1, a2, a3;
};

/* The arguments; a1, a length, rounded up to pages as the kernel does. */
static __always_inline void sys_args(struct sys_args *a)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	/* Plain loads of a trusted pointer: no helper call each. */
	a->a0 = regs->di;
	a->a1 = (regs->si + (1ull << PAGE_SHIFT) - 1) & ~((1ull << PAGE_SHIFT) - 1);
	a->a2 = regs->dx;
	a->a3 = regs->r10;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 start = ctx->ret;
	struct vma_info vi = {};
	enum keep keep;
	struct sys_args a;

	if (syscall_failed(ctx->ret) || !is_target(tgid))
		return 0;
	sys_args(&a);		/* addr, len, prot, flags */
	/* From keep_of's answer to the list's last edit (pend_busy). */
	pend_hold(1);
	if (a.a2 & PROT_EXEC) {
		if ((keep = keep_of(tgid)) != KEEP_NONE)
			walk_range(start, start + a.a1, BPFSYM_MAP_MMAP, keep, &vi);
	}
	/*
	 * MAP_FIXED without PROT_EXEC replaced whatever was there (not
	 * MAP_FIXED_NOREPLACE, which has a bit of its own: it fails where
	 * anything is mapped).
	 */
	else if (a.a3 & MAP_FIXED)
		exec_gone(tgid, start, start + a.a1, BPFSYM_MAP_MMAP, false);
	pend_hold(0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mprotect")
int on_mprotect_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	enum keep keep;
	struct sys_args a;
	struct vma_info vi = {};

	if (ctx->ret != 0 || !is_target(tgid))
		return 0;
	sys_args(&a);		/* start, len, prot */
	pend_hold(1);
	if (a.a2 & PROT_EXEC) {
		if ((keep = keep_of(tgid)) != KEEP_NONE)
			walk_range(a.a0, a.a0 + a.a1, BPFSYM_MAP_MPROTECT, keep, &vi);
	}
	else
		exec_gone(tgid, a.a0, a.a0 + a.a1, BPFSYM_MAP_MPROTECT, false);
	pend_hold(0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int on_munmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct sys_args a;

	if (ctx->ret != 0 || !is_target(tgid))
		return 0;
	sys_args(&a);		/* start, len */
	pend_hold(1);
	exec_gone(tgid, a.a0, a.a0 + a.a1, BPFSYM_MAP_MUNMAP, false);
	pend_hold(0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int on_mremap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 old = ctx->args[0], old_len = ctx->args[1], new_len = ctx->args[2], flags = ctx->args[3];
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct vma_info vi = {};

	/* Not followed: its list, if it keeps one, follows the move too. */
	if (!is_target(tgid) || (!pend_maps && !followed(tgid)))
		return 0;
	if (walk_range(old, old + (old_len ? old_len : 1), 0, KEEP_SEND, &vi))
		keep_args(NR_MREMAP, old, old_len, new_len, flags, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int on_mremap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	enum keep keep;
	struct vma_info vi = {};
	__u64 start = ctx->ret;
	struct pending a;

	if (!take_args(NR_MREMAP, &a) || syscall_failed(ctx->ret))
		return 0;
	pend_hold(1);
	/*
	 * Moved: the old range is gone (unless MREMAP_DONTUNMAP keeps it, now
	 * empty, which the model may keep: nothing runs there).  Shrunk in
	 * place: its tail is gone.
	 */
	if (start != a.a[0] && !(a.a[3] & MREMAP_DONTUNMAP))
		exec_gone(t->tgid, a.a[0], a.a[0] + a.a[1], BPFSYM_MAP_MREMAP, true);
	else if (start == a.a[0] && a.a[2] < a.a[1])
		exec_gone(t->tgid, a.a[0] + a.a[2], a.a[0] + a.a[1], BPFSYM_MAP_MREMAP, true);
	/*
	 * The entry kept its arguments for a process followed or keeping a
	 * list; one that stopped being followed since (its view evicted) has
	 * its new range sent all the same.
	 */
	keep = keep_of(t->tgid);
	walk_range(start, start + a.a[2], BPFSYM_MAP_MREMAP, keep == KEEP_NONE ? KEEP_SEND : keep, &vi);
	pend_hold(0);
	return 0;
}
