// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fileload: a file module's blocking work (open and build-id, or its
 * symbols and its debug file's) as an offload job, so that the thread
 * draining the ring buffer never waits on a file that does not answer.
 *
 * A job is standalone: it holds copies of what it needs (paths, the
 * mapping, the pids of the namespace's processes taken from the model on
 * the caller's thread) and its own fd, and makes standalone results (an
 * fd, a build-id, elfsyms).  It never touches the symbolizer's state
 * (modules, images, the fd cache), which only the caller's thread does
 * when it adopts the results (symbolizer.c), so a job given up can end
 * whenever it likes and be dropped on its worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/offload.h"
#include "base/util.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuginfod.h"
#include "symbolize/fileid.h"
#include "symbolize/symbolizer_int.h"

/*
 * The debug file's symbols (debugfile.h's order), looked for on the
 * job's thread: inside process @j->pid's root, where only that process's
 * user's (or root's) files are taken (/proc/PID belongs to that user);
 * pid 0, a file the user named: as we see it, our own.
 */
static struct elfsym *job_debug_file(struct file_job *j)
{
	struct debugfile_query q = {
		.es = j->es, .path = j->path, .dev = j->mp.dev, .ino = j->mp.ino,
		.debug_root = j->debug_root,
	};
	struct elfsym *dbg;
	char root[PATH_MAX];

	if (j->pid) {
		if (fileid__proc_owner(j->proc_root, j->pid, &q.owner))
			q.owner = 0;	/* gone: root's files only */
		snprintf(root, sizeof(root), "%s/%u/root", j->proc_root, j->pid);
		q.root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		q.owner = geteuid();
		q.root_fd = AT_FDCWD;
	}
	dbg = debugfile__open(&q);
	if (q.root_fd >= 0)
		close(q.root_fd);
	return dbg;
}

static void job_run(struct offload_job *oj)
{
	struct file_job *j = (struct file_job *)oj;
	char c;

	/* A test's gate: whatever the read says (a byte, end of file), the work runs then. */
	if (j->gate_fd >= 0 && read(j->gate_fd, &c, 1) < 0)
		pr_debug("fileload: the test gate: %s\n", strerror(errno));
	if (j->kind == FILE_JOB_DEBUGINFOD) {
		char *found;

		j->dbg = dinfod__fetch(j->id, j->id_len, j->path, NULL, &found, &j->err);
		free(j->path);
		j->path = found;
		return;
	}
	if (j->kind != FILE_JOB_SYMS) {
		j->fd = fileid__open_peers(j->proc_root, j->peers, j->nr_peers, j->pid, &j->mp);
		if (j->fd < 0) {
			j->err = j->fd;
			j->fd = -1;
			return;
		}
		if (j->kind == FILE_JOB_OPEN_ID)
			j->err = fileid__build_id(j->fd, j->id, &j->id_len);
		return;
	}
	j->es = elfsym__open_fd(j->fd, j->path, NULL);
	if (!j->es) {
		j->err = -errno;
		return;
	}
	j->dbg = job_debug_file(j);
}

static void job_drop(struct offload_job *oj)
{
	file_job__free((struct file_job *)oj);
}

void file_job__free(struct file_job *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->gate_fd >= 0)
		close(j->gate_fd);
	elfsym__free(j->es);
	elfsym__free(j->dbg);
	free(j->path);
	free(j->proc_root);
	free(j->debug_root);
	free(j);
}

/* A job of @kind with its own copies of @s's roots and @path.  NULL on ENOMEM. */
static struct file_job *job_new(const struct symbolizer *s, enum file_job_kind kind,
				uint32_t pid, const char *path)
{
	struct file_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->job.run = job_run;
	j->job.drop = job_drop;
	j->kind = kind;
	j->pid = pid;
	j->fd = -1;
	j->gate_fd = s->test_gate_fd >= 0 ? fcntl(s->test_gate_fd, F_DUPFD_CLOEXEC, 0) : -1;
	j->proc_root = strdup(s->proc_root);
	j->debug_root = strdup(s->debug_root);
	j->path = path ? strdup(path) : NULL;
	if (!j->proc_root || !j->debug_root || (path && !j->path) ||
	    (s->test_gate_fd >= 0 && j->gate_fd < 0)) {
		file_job__free(j);
		return NULL;
	}
	return j;
}

struct file_job *file_job__open(const struct symbolizer *s, uint32_t pid,
				const struct mapping *mp, enum file_job_kind kind)
{
	struct file_job *j = job_new(s, kind, pid, mp->path);
	char dir[PATH_MAX];
	struct stat st;

	if (!j)
		return NULL;
	j->mp = *mp;
	j->mp.path = j->path;
	/*
	 * The model is this thread's: copy the namespace's other processes
	 * now, for when @pid is gone (procfs, which answers).
	 */
	snprintf(dir, sizeof(dir), "%s/%u", s->proc_root, pid);
	if (stat(dir, &st))
		j->nr_peers = fileid__ns_peers(s->procs, pid, mp->mnt_ns, j->peers,
					       FILEID_PEERS_MAX);
	return j;
}

struct file_job *file_job__syms(const struct symbolizer *s, const struct smod *m, uint32_t pid)
{
	struct file_job *j = job_new(s, FILE_JOB_SYMS, pid, m->path);

	if (!j)
		return NULL;
	j->mp.dev = m->pub.rpt.dev;
	j->mp.ino = m->pub.rpt.ino;
	j->fd = fcntl(m->fd.fd, F_DUPFD_CLOEXEC, 0);
	if (j->fd < 0) {
		file_job__free(j);
		return NULL;
	}
	return j;
}

struct file_job *file_job__dinfod(const struct symbolizer *s, const uint8_t *id, size_t len,
				  const char *cached)
{
	struct file_job *j;

	if (!len || len > sizeof(j->id))
		return NULL;
	j = job_new(s, FILE_JOB_DEBUGINFOD, 0, cached);
	if (!j)
		return NULL;
	memcpy(j->id, id, len);
	j->id_len = len;
	return j;
}
