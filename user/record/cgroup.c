// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup: -G PATH, found in the cgroup v2 hierarchy; membership of a process. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "model/cgpaths.h"
#include "record/cgroup.h"
#include "base/util.h"

/*
 * The path of the cgroup2 directory @abs inside its hierarchy ("/a/b", as
 * /proc/PID/cgroup prints it), from the cgroup2 mounts in mountinfo.
 */
static int cgroup_relpath(const char *abs, char *out, size_t len)
{
	char *buf, *save = NULL, mp[CGPATHS_MOUNT_MAX];
	size_t n, blen;
	int err = -ENOENT;

	if (read_file_capped("/proc/self/mountinfo", 16u << 20, &buf, &blen))
		return -EIO;
	while (cgpaths__next_cgroup2(buf, &save, mp)) {
		n = strlen(mp);
		if (!strncmp(abs, mp, n) && (abs[n] == '/' || abs[n] == '\0')) {
			snprintf(out, len, "%s", abs[n] ? abs + n : "/");
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

/*
 * -G PATH: a cgroup v2 directory, absolute or relative to the unified
 * hierarchy (/sys/fs/cgroup/unified on hybrid machines, else /sys/fs/cgroup).
 * Returns an open fd and its path in the hierarchy in @rel, or -1 after
 * printing why.
 */
int cgroup__open(const char *path, char *rel, size_t rel_len)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	char buf[4096], abs[PATH_MAX];
	struct statfs sf;
	size_t i;
	int fd = -1;

	if (path[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", path);
		fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && fd < 0; i++) {
			if (statfs(roots[i], &sf) || sf.f_type != CGROUP2_SUPER_MAGIC)
				continue;
			snprintf(buf, sizeof(buf), "%s/%s", roots[i], path);
			fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (fd < 0) {
		pr_err("bpfsym: no such cgroup: '%s'\n", path);
		return -1;
	}
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		pr_err("bpfsym: '%s' is not a cgroup v2 directory (try /sys/fs/cgroup/unified/...)\n", path);
		close(fd);
		return -1;
	}
	if (!realpath(buf, abs) || cgroup_relpath(abs, rel, rel_len)) {
		pr_err("bpfsym: cannot place '%s' in the cgroup v2 hierarchy\n", path);
		close(fd);
		return -1;
	}
	return fd;
}

int cgroup__has_pid(const char *rel, uint32_t pid)
{
	size_t n = strlen(rel), len, cglen;
	char path[64], *buf;
	const char *cg;
	int in = 0;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (read_file_capped(path, 1u << 20, &buf, &len))
		return 0;
	if (!cgpaths__proc_v2(buf, &cg, &cglen))
		in = !strcmp(rel, "/") ||
		     (cglen >= n && !strncmp(cg, rel, n) && (cglen == n || cg[n] == '/'));
	free(buf);
	return in;
}
