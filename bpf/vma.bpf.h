/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Describing a VMA as a struct bpfsym_map_ev: its range, pgoff, protection,
 * and the identity of its file (dev, ino, mtime, path as the task sees it,
 * the task's mount namespace).  Used by the mapping tracker (from
 * bpf_find_vma callbacks) and by the start-up snapshot (iter/task_vma).
 *
 * Kernel pointers kept as numbers (the path walk's dentries and mounts,
 * in map memory across bpf_loop steps) are read with probe reads, which
 * every kernel has: bpf_rdonly_cast (6.2) made them plain loads, and
 * cost Debian 12's 6.1 the whole tracker (bench/README.md section 7: the
 * probe reads cost ~100 ns a MAP record).  Everything reachable from a
 * trusted pointer (the task, a VMA in its callback) stays plain loads.
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
	__u64 mnt_root;		/* vm's root dentry */
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
 * A dentry's parent and name, read together: they sit side by side in
 * struct dentry on every kernel we know (d_parent, then the qstr d_name),
 * so one probe read takes both; a kernel where they do not is read field
 * by field.
 */
struct dentry_up {
	__u64 parent;
	__u64 hash_len;		/* struct qstr: hash and length */
	__u64 name;
};

static __always_inline int dentry_up_read(__u64 d, struct dentry_up *u)
{
	struct dentry *dp = (struct dentry *)d;
	__u32 po = bpf_core_field_offset(struct dentry, d_parent);

	if (bpf_core_field_offset(struct dentry, d_name) == po + 8 &&
	    bpf_core_field_size(struct dentry, d_name) == 16)
		return bpf_probe_read_kernel(u, sizeof(*u), (void *)(d + po));
	u->parent = (__u64)BPF_CORE_READ(dp, d_parent);
	u->hash_len = (__u64)BPF_CORE_READ(dp, d_name.len) << 32;
	u->name = (__u64)BPF_CORE_READ(dp, d_name.name);
	return 0;
}

/* The root dentry of vfsmount @vm (a number). */
static __always_inline __u64 mnt_root_of(__u64 vm)
{
	struct vfsmount *v = (struct vfsmount *)vm;

	return (__u64)BPF_CORE_READ(v, mnt_root);
}

/* Cross from the top of mount @w->mnt to its mount point; 1 at the top of the whole tree. */
static __always_inline int path_cross(struct path_walk *w)
{
	struct mount *mnt = (struct mount *)w->mnt, *mnt_parent;

	mnt_parent = BPF_CORE_READ(mnt, mnt_parent);
	if (!mnt_parent || (__u64)mnt_parent == w->mnt)
		return 1;
	w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
	w->mnt = (__u64)mnt_parent;
	w->vm = (__u64)mnt_parent + bpf_core_field_offset(struct mount, mnt);
	w->mnt_root = mnt_root_of(w->vm);
	return 0;
}

/*
 * One step up: prepend a component, or cross from the top of a mount to its
 * mount point.  A bpf_loop() callback, so the verifier checks it once for
 * any state instead of once per iteration and branch.  1 stops the walk.
 */
static long path_step(__u32 i, void *ctx)
{
	struct dentry_up u;
	struct path_walk *w;
	struct pathbuf *pb;
	__u32 zero = 0, off, len;

	pb = bpf_map_lookup_elem(&pathbufs, &zero);
	if (!pb)
		return 1;
	w = &pb->w;
	off = w->off;
	if (w->d == w->root_d && w->vm == w->root_m)
		return 1;
	if (!w->d || dentry_up_read(w->d, &u))
		return 1;
	if (w->d == w->mnt_root || w->d == u.parent)
		return path_cross(w);
	if (off > PATHBUF_SIZE)
		return 1;
	len = (__u32)(u.hash_len >> 32);	/* the length is the qstr's high half */
	if (len > NAME_MAX_BYTES)
		len = NAME_MAX_BYTES;
	if (len + 1 > off) {
		w->trunc = 1;
		return 1;
	}
	off -= len + 1;
	pb->b[off & PATHBUF_MASK] = '/';
	bpf_probe_read_kernel(&pb->b[(off + 1) & PATHBUF_MASK], len & NAME_MAX_BYTES, (void *)u.name);
	w->off = off;
	w->d = u.parent;
	return 0;
}

/*
 * What a VMA is, copied out as plain numbers: the VMA itself may be used only
 * inside bpf_find_vma's callback or the iterator, and the work of describing
 * it (the path walk) is done outside, where the verifier sees it once.  The
 * file's identity and where its path starts are read there too, from the
 * trusted VMA (plain loads), for executable VMAs: the only ones described.
 */
struct vma_info {
	__u64 start, end;
	__u64 pgoff;		/* in pages, as vm_pgoff */
	__u64 vm_flags;
	__u64 file;		/* struct file *, or 0: compared, never followed */
	__u64 dentry, mnt;	/* the file's f_path, as numbers */
	__u64 ino;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 dev;
};

/* @vma is the kernel's, trusted (a callback's or the iterator's): plain loads, no helper calls. */
static __always_inline void vma_info_read(struct vm_area_struct *vma, struct vma_info *vi)
{
	struct file *file = vma->vm_file;
	struct inode *inode;

	vi->start = vma->vm_start;
	vi->end = vma->vm_end;
	vi->pgoff = vma->vm_pgoff;
	vi->vm_flags = vma->vm_flags;
	vi->file = (__u64)file;
	if (!file || !(vi->vm_flags & VM_EXEC))
		return;
	inode = file_inode_seen(file);
	vi->dev = inode->i_sb->s_dev;
	vi->ino = inode->i_ino;
	inode_mtime(inode, &vi->mtime_sec, &vi->mtime_nsec);
	vi->dentry = (__u64)file->f_path.dentry;
	vi->mnt = (__u64)file->f_path.mnt;
}

/*
 * Write the path of @vi's file, as @task sees it (up to its root, crossing
 * mounts), into @out (BPFSYM_PATH_MAX bytes, NUL terminated).  A path too
 * deep or too long keeps its last BPFSYM_PATH_MAX - 1 bytes (the file name
 * survives) and sets BPFSYM_MF_PATH_TRUNC in *@flags.  Returns the length.
 */
static __always_inline __u32 file_path(struct task_struct *task, const struct vma_info *vi,
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
	w->d = vi->dentry;
	w->vm = vi->mnt;
	w->mnt = w->vm - bpf_core_field_offset(struct mount, mnt);
	w->mnt_root = mnt_root_of(w->vm);
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
 * Make @e the MAP record, sent for @cause, of the VMA @vi of @task (a
 * trusted pointer: its fields are plain loads, which fault to 0 where a
 * pointer on the way is NULL).  Returns the record's size (header
 * included, at most sizeof(*e)).
 */
static __always_inline __u32 map_ev_fill(struct bpfsym_map_ev *e, struct task_struct *task,
					 const struct vma_info *vi, __u32 cause)
{
	struct nsproxy *nsp;
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
	if (vi->file) {
		e->dev = vi->dev;
		e->ino = vi->ino;
		e->mtime_sec = vi->mtime_sec;
		e->mtime_nsec = vi->mtime_nsec;
		plen = file_path(task, vi, e->path, &e->flags);
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
