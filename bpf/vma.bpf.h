/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Describing a VMA as a struct bpfsym_map_ev: its range, pgoff, protection,
 * and the identity of its file (dev, ino, mtime, path as the task sees it,
 * the task's mount namespace).  Used by the mapping tracker (from
 * bpf_find_vma callbacks) and by the start-up snapshot (iter/task_vma).
 */
#ifndef BPFSYM_VMA_BPF_H
#define BPFSYM_VMA_BPF_H

#define VM_READ		0x00000001
#define VM_WRITE	0x00000002
#define VM_EXEC		0x00000004
#define VM_SHARED	0x00000008
#define PAGE_SHIFT	12		/* x86 */

#include "inode.bpf.h"

/*
 * A kernel address kept as a number (in a map, across a callback) made a
 * pointer again, read-only and untrusted: its fields are then plain loads
 * that read 0 on a fault, where BPF_CORE_READ is a helper call each (the
 * verifier turns this kfunc into a register move).  Kernel 6.2 on.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define KPTR(type, addr) \
	((type *)bpf_rdonly_cast((const void *)(addr), bpf_core_type_id_kernel(type)))

/*
 * The path is built right to left in a per-CPU buffer.  Offsets are masked
 * with PATHBUF_MASK, and the buffer is twice that size, so every write the
 * verifier sees stays inside it.
 */
#define PATHBUF_SIZE	4096
#define PATHBUF_MASK	(PATHBUF_SIZE - 1)
#define NAME_MAX_BYTES	255
#define PATH_DEPTH	64		/* components and mount crossings walked */

/* The state of a path walk, stepped by path_step(). */
struct path_walk {
	__u64 d, vm, mnt;	/* current dentry, vfsmount, mount */
	__u64 root_d, root_m;	/* the task's root: where the walk stops */
	__u32 off;		/* the path so far is b[off .. PATHBUF_SIZE) */
	__u32 trunc;
};

/*
 * The walk's state lives here, not on the stack: the verifier then knows
 * nothing precise about it and checks the bpf_loop() callback in one pass,
 * instead of once per constant value `off` takes.
 */
struct pathbuf {
	struct path_walk w;
	char b[2 * PATHBUF_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pathbuf);
} pathbufs SEC(".maps");

/*
 * One step up: prepend a component, or cross from the top of a mount to its
 * mount point.  A bpf_loop() callback, so the verifier checks it once for
 * any state instead of once per iteration and branch.  1 stops the walk.
 */
static long path_step(__u32 i, void *ctx)
{
	struct dentry *d, *parent, *mnt_root;
	struct mount *mnt, *mnt_parent;
	struct path_walk *w;
	struct vfsmount *vm;
	struct pathbuf *pb;
	__u32 zero = 0, off, len;
	struct qstr name;

	pb = bpf_map_lookup_elem(&pathbufs, &zero);
	if (!pb)
		return 1;
	w = &pb->w;
	d = KPTR(struct dentry, w->d);
	vm = KPTR(struct vfsmount, w->vm);
	mnt = KPTR(struct mount, w->mnt);
	off = w->off;
	if (w->d == w->root_d && w->vm == w->root_m)
		return 1;
	parent = d->d_parent;
	mnt_root = vm->mnt_root;
	if ((__u64)d == (__u64)mnt_root || (__u64)d == (__u64)parent) {
		mnt_parent = mnt->mnt_parent;
		if ((__u64)mnt_parent == (__u64)mnt)
			return 1;	/* the top of the whole tree */
		w->d = (__u64)mnt->mnt_mountpoint;
		w->mnt = (__u64)mnt_parent;
		w->vm = (__u64)mnt_parent + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	if (off > PATHBUF_SIZE)
		return 1;
	name.len = d->d_name.len;
	name.name = d->d_name.name;
	len = name.len;
	if (len > NAME_MAX_BYTES)
		len = NAME_MAX_BYTES;
	if (len + 1 > off) {
		w->trunc = 1;
		return 1;
	}
	off -= len + 1;
	pb->b[off & PATHBUF_MASK] = '/';
	bpf_probe_read_kernel(&pb->b[(off + 1) & PATHBUF_MASK], len & NAME_MAX_BYTES, name.name);
	w->off = off;
	w->d = (__u64)parent;
	return 0;
}

/*
 * Write @file's path, as @task sees it (up to its root, crossing mounts),
 * into @out (BPFSYM_PATH_MAX bytes, NUL terminated).  A path too deep or too
 * long keeps its last BPFSYM_PATH_MAX - 1 bytes (the file name survives)
 * and sets BPFSYM_MF_PATH_TRUNC in *@flags.  Returns the length.
 */
static __always_inline __u32 file_path(struct task_struct *task, struct file *file,
				       char *out, __u32 *flags)
{
	struct pathbuf *pb;
	__u32 zero = 0, off, plen;
	struct path_walk *w;
	long steps;

	pb = bpf_map_lookup_elem(&pathbufs, &zero);
	if (!pb) {
		out[0] = '\0';
		*flags |= BPFSYM_MF_PATH_TRUNC;
		return 0;
	}
	w = &pb->w;
	w->off = PATHBUF_SIZE;
	w->trunc = 0;
	w->root_d = (__u64)task->fs->root.dentry;
	w->root_m = (__u64)task->fs->root.mnt;
	w->d = (__u64)file->f_path.dentry;
	w->vm = (__u64)file->f_path.mnt;
	w->mnt = w->vm - bpf_core_field_offset(struct mount, mnt);
	steps = bpf_loop(PATH_DEPTH, path_step, NULL, 0);
	if (w->trunc || steps >= PATH_DEPTH)
		*flags |= BPFSYM_MF_PATH_TRUNC;
	off = w->off;
	if (off >= PATHBUF_SIZE) {
		out[0] = '/';
		out[1] = '\0';
		return 1;
	}
	plen = PATHBUF_SIZE - off;
	if (plen > BPFSYM_PATH_MAX - 1) {
		off += plen - (BPFSYM_PATH_MAX - 1);
		plen = BPFSYM_PATH_MAX - 1;
		*flags |= BPFSYM_MF_PATH_TRUNC;
	}
	/* Keep clang from dropping the masks the verifier needs to see. */
	barrier_var(plen);
	plen &= BPFSYM_PATH_MAX - 1;
	bpf_probe_read_kernel(out, plen, &pb->b[off & PATHBUF_MASK]);
	out[plen] = '\0';
	return plen;
}

/*
 * What a VMA is, copied out as plain numbers: the VMA itself may be used only
 * inside bpf_find_vma's callback or the iterator, and the work of describing
 * it (the path walk) is done outside, where the verifier sees it once.
 */
struct vma_info {
	__u64 start, end;
	__u64 pgoff;		/* in pages, as vm_pgoff */
	__u64 vm_flags;
	__u64 file;		/* struct file *, or 0 */
};

/* @vma is the kernel's, trusted (a callback's or the iterator's): plain loads, no helper calls. */
static __always_inline void vma_info_read(struct vm_area_struct *vma, struct vma_info *vi)
{
	vi->start = vma->vm_start;
	vi->end = vma->vm_end;
	vi->pgoff = vma->vm_pgoff;
	vi->vm_flags = vma->vm_flags;
	vi->file = (__u64)vma->vm_file;
}

/*
 * Make @e the MAP record, sent for @cause, of the VMA @vi of @task (a
 * trusted pointer: its fields are plain loads, which fault to 0 where a
 * pointer on the way is NULL).  Returns the record's size (header
 * included, at most sizeof(*e)).
 */
static __always_inline __u32 map_ev_fill(struct bpfsym_map_ev *e, struct task_struct *task,
					 const struct vma_info *vi, __u32 cause)
{
	struct file *file = vi->file ? KPTR(struct file, vi->file) : NULL;
	struct nsproxy *nsp;
	struct inode *inode;
	__u32 plen = 0, size;

	e->hdr.type = BPFSYM_EV_MAP;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->pid = task->tgid;
	e->tid = task->pid;
	e->pstart = task->group_leader->start_boottime;
	e->cause = cause;
	/*
	 * Where the path below is to be looked up once the task is gone (a
	 * 25 ms program has usually exited before userspace reads this).
	 * nsproxy is NULL once an exiting task has dropped its namespaces.
	 */
	nsp = task->nsproxy;
	e->mnt_ns = nsp ? nsp->mnt_ns->ns.inum : 0;

	e->start = vi->start;
	e->end = vi->end;
	e->pgoff = vi->pgoff << PAGE_SHIFT;
	e->prot = vi->vm_flags & (VM_READ | VM_WRITE | VM_EXEC);
	e->flags = vi->vm_flags & VM_SHARED ? BPFSYM_MF_SHARED : 0;
	e->dev = e->ino = 0;
	e->mtime_sec = 0;
	e->mtime_nsec = 0;
	if (file) {
		inode = file->f_inode;
		e->dev = inode->i_sb->s_dev;
		e->ino = inode->i_ino;
		inode_mtime(inode, &e->mtime_sec, &e->mtime_nsec);
		plen = file_path(task, file, e->path, &e->flags);
	} else if (e->start == (__u64)task->mm->context.vdso) {
		e->flags |= BPFSYM_MF_SPECIAL;
		__builtin_memcpy(e->path, "[vdso]", 7);
		plen = 6;
	} else {
		e->flags |= BPFSYM_MF_ANON;
		e->path[0] = '\0';
	}
	e->path_len = plen;
	/* Padded to 8 bytes, so records packed back to back stay aligned. */
	size = (BPFSYM_MAP_EV_HDR_SIZE + plen + 1 + 7) & ~7u;
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	return size;
}

#endif /* BPFSYM_VMA_BPF_H */
