/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * workload: the COMMAND of `bpfsym record -- COMMAND`.  It is forked
 * stopped on a pipe and execs only when told to, so the sampler is attached
 * and its pid is a target before its first instruction runs.
 */
#ifndef BPFSYM_WORKLOAD_H
#define BPFSYM_WORKLOAD_H

#include <sys/types.h>

struct workload {
	pid_t pid;		/* > 0 while the command runs and is not reaped */
	int go_fd;		/* write end: one byte lets it exec */
	int err_fd;		/* read end: errno of a failed exec */
	int status;		/* wait status once reaped */
};

/* Whether execvp() would find @cmd and may execute it: 0 or -errno. */
int workload__check(const char *cmd);

/* Fork @argv[0] stopped before exec; fills @w.  0 or -errno. */
int workload__prepare(struct workload *w, char *const argv[]);

/* Let it exec.  0 once the exec succeeded, or the -errno of a failed exec. */
int workload__start(struct workload *w);

/* 1 if the command has exited (it is then reaped), else 0.  Never blocks. */
int workload__exited(struct workload *w);

/*
 * End a command that is still running the way perf ends its workload:
 * SIGTERM, then SIGKILL if it has not exited within two seconds; reap it and
 * close the pipes.  A no-op for a workload never prepared or already reaped.
 */
void workload__stop(struct workload *w);

#endif /* BPFSYM_WORKLOAD_H */
