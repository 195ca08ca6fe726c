/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A file's identity as the mapping events carry it: the inode's mtime,
 * read the way each kernel version stores it (CO-RE).  Shared by the
 * mapping tracker (vma.bpf.h) and the unwinder's look-up of a mapping its
 * process view does not hold yet (unwind.bpf.h).
 */
#ifndef BPFSYM_INODE_BPF_H
#define BPFSYM_INODE_BPF_H

/* Before 6.11, the mtime was one struct timespec64 (6.6-6.10: __i_mtime). */
struct inode___timespec {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

struct inode___private_timespec {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));

/*
 * The inode of a mapped file as userspace sees it at the file's path:
 * its dentry's.  Not f_inode: up to 6.5 a file mapped through overlayfs
 * is the layer's file under the overlay's "fake" path, and f_inode is
 * the layer's inode (another device), where stat() of the path, and of
 * /proc/PID/map_files, says the overlay's: every file of a container, or
 * of a root on overlayfs, would fail the pin's identity check.  For any
 * other file the two are the same inode.  @file is the kernel's (a
 * VMA's, in its callback): plain loads.
 */
static __always_inline struct inode *file_inode_seen(struct file *file)
{
	return file->f_path.dentry->d_inode;
}

static __always_inline void inode_mtime(struct inode *inode, __s64 *sec, __u32 *nsec)
{
	if (bpf_core_field_exists(inode->i_mtime_sec)) {
		*sec = BPF_CORE_READ(inode, i_mtime_sec);
		*nsec = BPF_CORE_READ(inode, i_mtime_nsec);
	} else if (bpf_core_field_exists(((struct inode___private_timespec *)inode)->__i_mtime)) {
		struct inode___private_timespec *i = (void *)inode;

		*sec = BPF_CORE_READ(i, __i_mtime.tv_sec);
		*nsec = BPF_CORE_READ(i, __i_mtime.tv_nsec);
	} else {
		struct inode___timespec *i = (void *)inode;

		*sec = BPF_CORE_READ(i, i_mtime.tv_sec);
		*nsec = BPF_CORE_READ(i, i_mtime.tv_nsec);
	}
}

#endif /* BPFSYM_INODE_BPF_H */
