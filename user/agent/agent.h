/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent: the pull endpoint (`record --listen`).  An HTTP server on a
 * thread of its own (httpd.c) serves `GET /debug/pprof/profile?seconds=N`
 * as Go's net/http/pprof does and `GET /metrics` in the Prometheus text
 * format; the recorder thread, through the hook it calls every loop
 * (record_opts.hook), turns each profile request into an ingest tap for
 * N seconds and publishes the metrics; a worker thread makes each
 * window's pprof.  The threads share only a mutex-guarded table of
 * windows and a metrics snapshot: no client can hold up sampling or the
 * file's writer.
 */
#ifndef BPFSYM_AGENT_H
#define BPFSYM_AGENT_H

#include "record/record.h"

/* Concurrent profile windows: one ingest tap each. */
#define AGENT_MAX_WINDOWS	8
/* A window's recording past this is cut short there (its END says how long it ran). */
#define AGENT_WINDOW_MAX_BYTES	(64ull << 20)
/*
 * Profiles in flight, all windows together: the recordings being made and
 * the pprofs made from them, until each is handed to its client's
 * connection.  Past it, open windows are cut short at the next tick and a
 * new request is 503 (memfds are the service's memory: its MemoryMax).
 */
#define AGENT_INFLIGHT_MAX_BYTES (128ull << 20)

struct agent;

struct agent_opts {
	const char *listen;	/* "[ADDR:]PORT", "[IPV6]:PORT" (ADDR defaults to 127.0.0.1) or "unix:PATH" */
	const char *group;	/* unix:PATH only: the group (name or number) whose members may connect; NULL: root only */
	uint64_t inflight_max;	/* 0: AGENT_INFLIGHT_MAX_BYTES */
};

/*
 * Resolve @o->group and bind and listen on @o->listen, before anything
 * else is started, so a port in use or an unknown group is an error at
 * once.  NULL + errno, with one line printed naming the address or group.
 */
struct agent *agent__listen(const struct agent_opts *o);

/* Start the server and worker threads (requests wait for the recorder's first tick).  0 or -errno. */
int agent__start(struct agent *a);

/* The hook to give record__run (record_opts.hook); lives as long as @a. */
const struct record_hook *agent__hook(struct agent *a);

/*
 * Stop serving (answers in flight, and pprofs being made, get
 * HTTPD_STOP_GRACE_MS), stop the worker, drop what is left, free.  Call
 * after record__run returned.  NULL is a no-op.
 */
void agent__free(struct agent *a);

#endif /* BPFSYM_AGENT_H */
