// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyproc: process_vm_readv behind a pidfd, the (pid, pstart) check, and
 * the interpreter a process maps (pyproc.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "model/mapsline.h"
#include "runtime/python/pyproc.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* /proc/PID/stat is at most a few hundred bytes; its comm at most 64. */
#define STAT_MAX 1024
/* /proc/PID/maps read at most: a process with more mappings is searched in its first 4 MiB. */
#define MAPS_MAX ((size_t)4 << 20)

/* Field 22 of a /proc/PID/stat line: after the comm's last ')', the 20th field. */
static int stat_starttime(const char *s, uint64_t *ticks)
{
	const char *p = strrchr(s, ')');
	char *end;
	int field;

	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < 22; field++) {	/* field 3, the state, follows the comm */
		p += strspn(p, " ");
		if (!*p)
			return -EINVAL;
		p += strcspn(p, " ");
	}
	p += strspn(p, " ");
	errno = 0;
	*ticks = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	return 0;
}

int pyproc__start_ns(uint32_t pid, uint64_t *ns)
{
	char path[64], buf[STAT_MAX];
	uint64_t ticks;
	long tck = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err == -ESRCH ? err : -ESRCH;	/* gone between the open and the read */
	buf[n] = 0;
	err = stat_starttime(buf, &ticks);
	if (err || tck <= 0 || 1000000000 % tck)
		return err ? err : -EINVAL;
	*ns = ticks * (uint64_t)(1000000000 / tck);
	return 0;
}

/* Whether the process of @pidfd has exited: its pidfd polls readable then. */
static int exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) != 0;
}

int pyproc__open(struct pyproc *p, uint32_t pid, uint64_t pstart)
{
	long tck = sysconf(_SC_CLK_TCK);
	uint64_t ns, tick;
	int err;

	p->pid = pid;
	p->pstart = pstart;
	p->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (p->pidfd < 0)
		return -errno;
	tick = tck > 0 ? 1000000000 / (uint64_t)tck : 1;
	/* The pidfd first: if its process still lives after the check, the check was its. */
	err = pyproc__start_ns(pid, &ns);
	if (!err && (ns / tick != pstart / tick || exited(p->pidfd)))
		err = -ESRCH;
	if (err) {
		close(p->pidfd);
		p->pidfd = -1;
	}
	return err;
}

void pyproc__close(struct pyproc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

int pyproc__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct pyproc *p = ctx;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv((pid_t)p->pid, &local, 1, &remote, 1, 0);
	/* After the read: the bytes count only if the pid was still the process checked. */
	if (exited(p->pidfd))
		return -ESRCH;
	if (n < 0)
		return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Read /proc/PID/maps whole (up to MAPS_MAX): a new NUL-terminated buffer, or NULL + errno. */
static char *read_maps(uint32_t pid, size_t *len)
{
	char path[64], *buf;
	size_t cap = 64 * 1024, n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap && cap < MAPS_MAX) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		if (n == cap)
			break;
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

/* Probe the file a maps line names; 1 when it holds the interpreter, 0 when not, or -errno. */
bool pyproc__interp_name(const char *path, size_t len)
{
	const char *base = path;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			base = path + i + 1;
	len -= (size_t)(base - path);
	return (len > 8 && !memcmp(base, "python3.", 8)) || (len > 11 && !memcmp(base, "libpython3.", 11));
}

/*
 * Probe the file of mapping @m, named @path: only a file named like an
 * interpreter (the probe decides, the name only spares the others their
 * opens), opened through /proc/PID/map_files, so that the file read is
 * the one mapped there, whatever the process's paths now name or link to
 * (CAP_CHECKPOINT_RESTORE, which the file workers keep).
 */
static int probe_line(uint32_t pid, const struct mapping *m, const char *path, size_t path_len,
		      struct py_layout *l, uint64_t *bias, enum py_miss *why)
{
	char full[96];
	enum py_miss w;
	int fd, err;

	if (!pyproc__interp_name(path, path_len))
		return 0;
	snprintf(full, sizeof(full), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	err = pyelf__probe(fd, full, l, &w);
	if (!err)
		err = pyelf__bias(fd, m->pgoff, m->start, bias) ? -ENOENT : 1;
	else if (err == -ENOENT && w != PY_MISS_NOT_PYTHON && w != PY_MISS_NOT_ELF)
		*why = w;
	close(fd);
	return err == -ENOENT ? 0 : err;
}

int pyproc__find_interp(uint32_t pid, struct py_layout *l, uint64_t *bias, char *path,
			size_t cap, enum py_miss *why)
{
	const char *p, *nl, *end, *fpath, *last = NULL;
	size_t len, fpath_len, last_len = 0;
	char *maps;
	int err = -ENOENT;

	*why = PY_MISS_NOT_PYTHON;
	maps = read_maps(pid, &len);
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	end = maps + len;
	for (p = maps; p < end && err == -ENOENT; p = nl + 1) {
		struct mapping m;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		/* A file's first mapping only: the one whose offset gives the bias. */
		if (!maps_line__parse(p, nl, &m, &fpath, &fpath_len) || !fpath ||
		    (last && fpath_len == last_len && !memcmp(fpath, last, fpath_len)))
			continue;
		last = fpath;
		last_len = fpath_len;
		err = probe_line(pid, &m, fpath, fpath_len, l, bias, why);
		if (err == 1) {
			snprintf(path, cap, "%.*s", (int)fpath_len, fpath);
			err = 0;
		} else if (!err) {
			err = -ENOENT;
		}
	}
	free(maps);
	return err;
}
