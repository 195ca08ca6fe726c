/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * outfile: creating the files bpfsym writes, for a root process working
 * in directories other users may write to.  A file is created 0600 (a
 * recording holds kernel addresses, command lines and cgroup paths; perf
 * creates perf.data 0600 too), never through a symbolic link, and never
 * over an existing name unless the caller was asked to (OUTFILE_FORCE,
 * `record -f`): then it is made under a name of its own beside and
 * renamed over the old one, which replaces a symbolic link rather than
 * writing to its target.  Every operation is relative to a directory fd
 * opened once (outdir__open), so renaming the directory or swapping a
 * symbolic link among its parents later does not move where files go.
 *
 * An existing device or FIFO (/dev/null, /dev/stdout, a pipe) is written
 * in place when the caller allows it (OUTFILE_SPECIAL): reached through a
 * symbolic link only when the link belongs to root or to us, as the
 * kernel's fs.protected_symlinks would have it in a sticky directory, so
 * another user's link cannot point root's output at a disk.
 */
#ifndef BPFSYM_OUTFILE_H
#define BPFSYM_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define OUTFILE_FORCE	(1u << 0)	/* an existing file or link at the name may be replaced */
#define OUTFILE_SPECIAL	(1u << 1)	/* an existing device or FIFO is written in place */

/* Room for a name plus the suffix a temporary name or a rotation adds. */
#define OUTFILE_NAME_MAX	(NAME_MAX + 1)

/* A file being created, or a device written in place. */
struct outfile {
	int fd;				/* -1 once handed on (outfile__take) or closed */
	dev_t dev;
	ino_t ino;
	bool special;			/* a device or FIFO: never renamed, replaced or deleted */
	char tmp[OUTFILE_NAME_MAX];	/* OUTFILE_FORCE: the name it has until outfile__commit ("" then) */
};

/*
 * The directory of @path, opened O_PATH|O_DIRECTORY into *@dfd (path's
 * parents are resolved now, once), and its last component into @name of
 * @len bytes.  0 or -errno: -EISDIR when @path names a directory ("x/",
 * ".", ".."), -ENAMETOOLONG when the name does not fit.
 */
int outdir__open(const char *path, int *dfd, char *name, size_t len);

/*
 * Create @name in @dfd per @flags into @of (0600, O_CLOEXEC).  Without
 * OUTFILE_FORCE an existing name (a file, a link, dangling or not) is
 * -EEXIST and left alone; with it the file is made under a temporary name
 * (of->tmp) for outfile__commit (-EISDIR when the name is a directory).  With OUTFILE_SPECIAL an existing device
 * or FIFO is opened for writing in place (of->special), -EPERM when
 * reached through another user's link.  0 or -errno; @of->fd -1 then.
 */
int outfile__create(int dfd, const char *name, unsigned int flags, struct outfile *of);

/*
 * An existing device or FIFO at @name in @dfd, opened for writing in
 * place into @of: 0.  1: nothing of the kind there (no such name, a
 * regular file, a directory, a dangling link), @of->fd -1.  -EPERM:
 * reached through another user's link; -EEXIST: it became a regular file
 * while it was opened; or -errno of the open.
 */
int outfile__open_special(int dfd, const char *name, struct outfile *of);

/*
 * Give @of its name @name: with a temporary name, rename it over @name
 * (replacing whatever is there, a link itself and never its target);
 * otherwise nothing.  0 or -errno (the temporary stays, for
 * outfile__discard).
 */
int outfile__commit(int dfd, const char *name, struct outfile *of);

/* The fd, now the caller's to close; of->fd becomes -1. */
int outfile__take(struct outfile *of);

/*
 * Nothing worth keeping was written: close the fd if still held, and
 * remove the file, by its temporary name or by @name, only when the name
 * is still this file (same device and inode); a device is never removed.
 */
void outfile__discard(int dfd, const char *name, struct outfile *of);

/*
 * Whether @name in @dfd is the file @of made (not a file put there since).
 * 0 yes, -ESTALE another, or -errno of the look-up (-ENOENT: gone).
 */
int outfile__is(int dfd, const char *name, const struct outfile *of);

/*
 * Rename @from to @to in @dfd without replacing anything at @to:
 * renameat2(RENAME_NOREPLACE), or, where the file system lacks it, a hard
 * link and an unlink (also atomic about @to).  0, -EEXIST (@to taken,
 * nothing changed) or -errno.
 */
int outfile__rename_new(int dfd, const char *from, const char *to);

#endif /* BPFSYM_OUTFILE_H */
