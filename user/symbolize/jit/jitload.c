// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jitload: a JIT symbol file's open and reads as an offload job (see
 * jitload.h).  Only what the job holds is touched here: the copies it
 * was given and the reader it borrowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "symbolize/fileid.h"
#include "symbolize/jit/jitdump.h"
#include "symbolize/jit/jitload.h"
#include "symbolize/jit/perfmap.h"

int jitload__open_owned(const char *proc_root, uint32_t pid, const char *path, struct stat *st)
{
	char where[PATH_MAX];
	uid_t owner;
	int root, fd;

	if (fileid__proc_owner(proc_root, pid, &owner))
		return -ESRCH;
	snprintf(where, sizeof(where), "%s/%u/root", proc_root, pid);
	root = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -ESRCH;
	fd = fileid__open_owned(root, path, owner, false, st);
	close(root);
	if (fd == -EPERM || fd == -ELOOP)
		pr_debug("jitmap: pid %u: '%s' is %s: not read\n", pid, path,
			 fd == -ELOOP ? "reached through a symlink" :
			 "not the process user's alone (another owner, or writable by others)");
	return fd;
}

static void job_run(struct offload_job *oj)
{
	struct jit_job *j = (struct jit_job *)oj;
	int fd = j->fd;

	if (fd < 0) {
		fd = jitload__open_owned(j->proc_root, j->pid, j->path, &j->st);
		if (fd < 0) {
			j->open_err = fd;
			return;
		}
		/* Reopened: only the very file read before (a new one at the path is another's). */
		if ((j->dev || j->ino) &&
		    ((uint64_t)j->st.st_dev != j->dev || (uint64_t)j->st.st_ino != j->ino)) {
			close(fd);
			j->open_err = -ESTALE;
			return;
		}
		j->new_fd = fd;
	}
	if (j->pm)
		j->err = perfmap_reader__read(j->pm, fd);
	else if (j->jd)
		j->err = jitdump_reader__read(j->jd, fd);
}

static void job_drop(struct offload_job *oj)
{
	jit_job__free((struct jit_job *)oj);
}

void jit_job__free(struct jit_job *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->new_fd >= 0)
		close(j->new_fd);
	if (j->owns) {
		perfmap_reader__free(j->pm);
		jitdump_reader__free(j->jd);
	}
	free(j->proc_root);
	free(j->path);
	free(j);
}

struct jit_job *jit_job__new(const char *proc_root, uint32_t pid, const char *path, uint64_t dev,
			     uint64_t ino, int fd, struct perfmap_reader *pm, struct jitdump_reader *jd)
{
	struct jit_job *j = calloc(1, sizeof(*j));

	if (!j) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	j->job.run = job_run;
	j->job.drop = job_drop;
	j->fd = fd;
	j->new_fd = -1;
	j->pid = pid;
	j->dev = dev;
	j->ino = ino;
	j->pm = pm;
	j->jd = jd;
	j->proc_root = strdup(proc_root);
	j->path = strdup(path);
	if (!j->proc_root || !j->path) {
		jit_job__free(j);
		return NULL;
	}
	return j;
}
