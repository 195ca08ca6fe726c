// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/workload.h"

#define EXIT_NOT_RUN	127	/* the child's status when the command never ran, as a shell's */
/* workload__stop(): SIGTERM, then this long for it to exit before SIGKILL. */
#define STOP_GRACE_MS	2000
#define STOP_POLL_MS	10

int workload__check(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? -errno : 0;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && n + strlen(cmd) + 2 < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, cmd);
			if (access(buf, X_OK) == 0)
				return 0;
		}
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

int workload__prepare(struct workload *w, char *const argv[])
{
	int go[2], errp[2], err;
	pid_t pid;

	w->pid = 0;
	w->go_fd = w->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(errp[0]);
		/* EOF instead of a byte: the recorder gave up; never run. */
		if (read(go[0], &c, 1) != 1)
			_exit(EXIT_NOT_RUN);
		/*
		 * bpfsym run by a user with ambient capabilities (setpriv
		 * --ambient-caps, docs in README.md) would pass them on to the
		 * command: it runs as that user would run it, without them.
		 */
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(EXIT_NOT_RUN);
		_exit(EXIT_NOT_RUN);
	}
	close(go[0]);
	close(errp[1]);
	w->pid = pid;
	w->go_fd = go[1];
	w->err_fd = errp[0];
	return 0;
}

int workload__start(struct workload *w)
{
	ssize_t n;
	int e;

	if (write(w->go_fd, "g", 1) != 1)
		return -errno;
	close(w->go_fd);
	w->go_fd = -1;
	/* The error pipe closes without a byte on a successful exec (O_CLOEXEC). */
	do {
		n = read(w->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(w->err_fd);
	w->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

int workload__exited(struct workload *w)
{
	if (w->pid <= 0)
		return 1;
	if (waitpid(w->pid, &w->status, WNOHANG) != w->pid)
		return 0;
	w->pid = 0;
	return 1;
}

void workload__stop(struct workload *w)
{
	int i;

	if (w->go_fd >= 0)
		close(w->go_fd);
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->go_fd = w->err_fd = -1;
	if (w->pid <= 0)
		return;
	kill(w->pid, SIGTERM);
	for (i = 0; i < STOP_GRACE_MS / STOP_POLL_MS; i++) {
		if (waitpid(w->pid, &w->status, WNOHANG) == w->pid) {
			w->pid = 0;
			return;
		}
		usleep(STOP_POLL_MS * 1000);
	}
	kill(w->pid, SIGKILL);
	waitpid(w->pid, &w->status, 0);
	w->pid = 0;
}
