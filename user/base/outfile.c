// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* outfile: output files created safely in a held directory (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/outfile.h"

#define TMP_TRIES	100	/* temporary names taken: the next number, this many times */

int outdir__open(const char *path, int *dfd, char *name, size_t len)
{
	char dir[PATH_MAX];
	const char *slash, *base;
	size_t dlen;

	*dfd = -1;
	if (!path || !*path)
		return -EINVAL;
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		dlen = slash == path ? 1 : (size_t)(slash - path);	/* "/x": the root */
		if (dlen >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, dlen);
		dir[dlen] = '\0';
	}
	*dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0)
		return -errno;
	snprintf(name, len, "%s", base);
	return 0;
}

static int note_fd(struct outfile *of, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	of->fd = fd;
	of->dev = st.st_dev;
	of->ino = st.st_ino;
	return 0;
}

int outfile__open_special(int dfd, const char *name, struct outfile *of)
{
	struct stat lst, st;
	int fd;

	*of = (struct outfile){ .fd = -1 };
	if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 1 : -errno;
	st = lst;
	/*
	 * A link we may not follow (fs.protected_symlinks=1, Debian's default:
	 * another user's link in a sticky world-writable directory is EACCES)
	 * leads to no device of ours: refused or replaced as any link.
	 */
	if (S_ISLNK(lst.st_mode) && fstatat(dfd, name, &st, 0))
		return errno == ENOENT || errno == ELOOP || errno == EACCES ? 1 : -errno;
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return 1;
	if (S_ISLNK(lst.st_mode) && lst.st_uid != 0 && lst.st_uid != geteuid())
		return -EPERM;
	/* No O_CREAT, no O_TRUNC: a device or FIFO is written as it is. */
	fd = openat(dfd, name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Swapped for a regular file between the look and the open: not ours to write. */
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return -EEXIST;
	}
	*of = (struct outfile){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino, .special = true };
	return 0;
}

/* A new file at a temporary name beside @name, into @of.  0 or -errno. */
static int create_tmp(int dfd, const char *name, struct outfile *of)
{
	unsigned int i;
	int fd = -1, n;

	for (i = 0; i < TMP_TRIES; i++) {
		n = snprintf(of->tmp, sizeof(of->tmp), "%s.%d.%u.tmp", name, (int)getpid(), i);
		if (n < 0 || (size_t)n >= sizeof(of->tmp)) {
			of->tmp[0] = '\0';
			return -ENAMETOOLONG;
		}
		fd = openat(dfd, of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = -errno;

		of->tmp[0] = '\0';
		return err;
	}
	return note_fd(of, fd);
}

int outfile__create(int dfd, const char *name, unsigned int flags, struct outfile *of)
{
	int fd, err;

	*of = (struct outfile){ .fd = -1 };
	if (!name || !*name || strchr(name, '/'))
		return -EINVAL;
	if (flags & OUTFILE_SPECIAL) {
		err = outfile__open_special(dfd, name, of);
		if (err <= 0)
			return err;
	}
	if (flags & OUTFILE_FORCE) {
		struct stat st;

		/* A directory cannot be renamed over: said now, not after the file is made. */
		if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
			return -EISDIR;
		return create_tmp(dfd, name, of);
	}
	/* O_EXCL: an existing name, a link (even a dangling one) included, is refused. */
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	return note_fd(of, fd);
}

int outfile__commit(int dfd, const char *name, struct outfile *of)
{
	if (!of->tmp[0])
		return 0;
	if (renameat(dfd, of->tmp, dfd, name))
		return -errno;
	of->tmp[0] = '\0';
	return 0;
}

int outfile__take(struct outfile *of)
{
	int fd = of->fd;

	of->fd = -1;
	return fd;
}

int outfile__is(int dfd, const char *name, const struct outfile *of)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	return st.st_dev == of->dev && st.st_ino == of->ino ? 0 : -ESTALE;
}

void outfile__discard(int dfd, const char *name, struct outfile *of)
{
	const char *at = of->tmp[0] ? of->tmp : name;

	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	if (!of->special && !outfile__is(dfd, at, of))
		unlinkat(dfd, at, 0);
	of->tmp[0] = '\0';
}

int outfile__rename_new(int dfd, const char *from, const char *to)
{
	if (!renameat2(dfd, from, dfd, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* No RENAME_NOREPLACE here: link() refuses a taken name just as atomically. */
	if (linkat(dfd, from, dfd, to, 0))
		return -errno;
	if (unlinkat(dfd, from, 0)) {
		int err = -errno;

		unlinkat(dfd, to, 0);
		return err;
	}
	return 0;
}
