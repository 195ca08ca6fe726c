/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fileid: what a mapped file is, read through the mapping process's own
 * view of it (or, that process gone, through its mount namespace), and
 * the bounded set of such files kept open.
 *
 * Paths come from processes we do not trust: one may lead out of a
 * container's root, to a FIFO that blocks a reader, or to another file
 * than the one mapped.  So a file is looked at through O_PATH first and
 * accepted only when it is a non-empty regular file with the mapping's
 * (dev, ino) and, when known, mtime; only then is it opened for reading.
 * No libbpf here.
 */
#ifndef BPFSYM_FILEID_H
#define BPFSYM_FILEID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/lru.h"
#include "model/procmap.h"

/* Longest build-id kept (elfsym ignores longer ones too). */
#define FILEID_BUILD_ID_MAX 64

/*
 * Open for reading the file @mp maps in process @pid: through
 * PROC_ROOT/PID/map_files/START-END (the very file, even deleted or a
 * memfd, while the mapping exists; CAP_SYS_ADMIN on some kernels), else
 * PROC_ROOT/PID/root + mp->path resolved inside that root (openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: no absolute symlink, "..", or
 * /proc magic link leads out of it).
 *
 * Else @pid is gone (its MAP record was read after it exited): mp->path
 * is resolved, the same way, in the mount namespace it was mapped in,
 * mp->mnt_ns: inside PROC_ROOT/self/root when PROC_ROOT/self/ns/mnt is
 * that namespace, else inside the root of a live process of it that
 * @procs knows (most recently used first, @pid skipped; @procs NULL:
 * none), else of any live process of it found by reading PROC_ROOT (the
 * model may not know one: under -a it follows a process from its first
 * sample only; at most FILEID_SCAN_MAX entries), whose PROC_ROOT/PID/ns/mnt
 * is still on our namespace's device (nsfs) with inode mp->mnt_ns.  That
 * check and the open of its root go through one open PROC_ROOT/PID
 * directory, so a pid reused in between is never taken for it; the first
 * live process of the namespace the model knows decides, while the scan
 * goes on past one whose root lacks the file (a chroot).
 *
 * Whatever the route, the file must be a non-empty regular file with the
 * mapping's (dev, ino) and, when known, mtime: a file replaced since it
 * was mapped is refused.  Returns the fd, which the caller closes, or
 * -errno: -ESTALE when a file was found but is not the one mapped (other
 * dev, ino or mtime), -ENOEXEC when it is the one mapped but no file we
 * read (not regular, or empty), else the open's error (-ENOENT, among
 * others, when the process is gone and nothing is at its path).
 */
int fileid__open_mapped(const char *proc_root, const struct proc_table *procs, uint32_t pid,
			const struct mapping *mp);

/* PROC_ROOT entries read at most when looking for a process of a namespace. */
#define FILEID_SCAN_MAX 65536

/* Processes of a namespace taken from the model, at most, for one open. */
#define FILEID_PEERS_MAX 8

/*
 * fileid__open_mapped() in two steps, for a caller that opens on another
 * thread than the one owning the model: fileid__ns_peers() copies up to
 * @max pids of live processes of namespace @mnt_ns that @procs knows (most
 * recently used first, @pid skipped; @procs NULL: none) into @out and
 * returns how many; fileid__open_peers() opens as fileid__open_mapped()
 * does, going through those @nr_peers pids where it would go through
 * @procs, and touches no model.
 */
size_t fileid__ns_peers(const struct proc_table *procs, uint32_t pid, uint32_t mnt_ns,
			uint32_t *out, size_t max);
int fileid__open_peers(const char *proc_root, const uint32_t *peers, size_t nr_peers,
		       uint32_t pid, const struct mapping *mp);

/*
 * Open for reading @path, resolved inside the directory @root_fd as its
 * root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, as above), or as
 * we see it when @root_fd is AT_FDCWD; only if it is a non-empty regular
 * file, looked at through O_PATH first.  Its fstat in *@st.  Returns the
 * fd, which the caller closes, or -errno: -ENOEXEC when it is not a
 * non-empty regular file, else the open's error.
 */
int fileid__open_in_root(int root_fd, const char *path, struct stat *st);

/*
 * The same for a file a process's user wrote for us to read (a perf map,
 * a jitdump, a debug file next to a binary): resolved through no symlink
 * at all (RESOLVE_NO_SYMLINKS: /tmp is everyone's, and a link there may
 * point at any file of root's), and kept only when owned by @owner (or
 * root, with @or_root: a file the user could not have put there) and not
 * writable by others.  The fd, or -errno: -ELOOP (a symlink on the way),
 * -EPERM (another owner, or o+w), else as fileid__open_in_root.
 */
int fileid__open_owned(int root_fd, const char *path, uid_t owner, bool or_root,
		       struct stat *st);

/* fileid__open_owned's rule on a file already open, by its fstat @st. */
bool fileid__owned_by(const struct stat *st, uid_t owner, bool or_root);

/*
 * The user of process @pid: whom PROC_ROOT/PID belongs to (its effective
 * uid), into *@uid.  0 or -ESRCH (gone).
 */
int fileid__proc_owner(const char *proc_root, uint32_t pid, uid_t *uid);

/*
 * The GNU build-id of the ELF file open on @fd, into @id (room for
 * FILEID_BUILD_ID_MAX bytes), its length in *@len (0: the file has none).
 * Looked for where elfsym looks, in the same order (PT_NOTE areas, then
 * SHT_NOTE sections), so both readers agree; only the headers and the note
 * areas are read, so this is cheap even for a huge library.  @fd's offset
 * is not used.  0, -ENOEXEC (not an ELF file), or -errno.
 */
int fileid__build_id(int fd, uint8_t *id, size_t *len);

/*
 * A bounded set of open fds, least recently used closed first.  Embed a
 * struct fd_slot in the object that owns the fd.
 */
struct fd_slot {
	int fd;			/* -1: none */
	struct lru_node lru;
};

struct fd_cache {
	struct lru lru;
	size_t nr, cap;
};

/* @slot holds no fd now. */
static inline void fd_slot__init(struct fd_slot *slot)
{
	slot->fd = -1;
}

/*
 * Give @fd to @slot (which holds none) and close the least recently used
 * fds past the cap: @slot's own is kept, being the most recent.
 */
void fd_cache__put(struct fd_cache *c, struct fd_slot *slot, int fd);

/* @slot's fd was just used. */
void fd_cache__touch(struct fd_cache *c, struct fd_slot *slot);

/* Close @slot's fd, if any. */
void fd_cache__drop(struct fd_cache *c, struct fd_slot *slot);

#endif /* BPFSYM_FILEID_H */
