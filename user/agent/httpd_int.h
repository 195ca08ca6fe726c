/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * httpd's insides, shared by the server (httpd.c: sockets, slots, limits,
 * the thread) and one connection's state machine (httpd_conn.c: read the
 * head, parse it, answer, drain).  Nothing outside those two includes it.
 */
#ifndef BPFSYM_HTTPD_INT_H
#define BPFSYM_HTTPD_INT_H

#include <pthread.h>

#include "agent/httpd.h"

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull
#define RESP_HEAD_MAX	1024

/*
 * C_HEAD (reading the head) -> C_PARKED (the handler answers later) ->
 * C_SEND (the answer going out) -> C_LINGER (our side shut, what the
 * client still sends dropped) -> C_FREE (closed).  An answer at once
 * skips C_PARKED; any error, hang-up or deadline goes to C_FREE.
 */
enum conn_state { C_FREE = 0, C_HEAD, C_PARKED, C_SEND, C_LINGER };

struct httpd_conn {
	struct httpd *h;
	int fd;
	enum conn_state st;
	bool head_only;
	bool parked;			/* once: gone() is owed at the close */
	struct httpd_peer peer;
	uint64_t since;			/* CLOCK_MONOTONIC ns: accepted */
	uint64_t deadline;		/* the state's last moment */
	uint64_t stall;			/* C_SEND: the last moment without progress */
	char in[HTTP_HEAD_MAX];
	size_t nin;
	char resp[RESP_HEAD_MAX];	/* the status line and headers */
	size_t nresp, resp_off;
	char *body;			/* or body_fd */
	int body_fd;
	size_t nbody, body_off;
};

/* The status codes counted for /metrics (others count as 0). */
#define HTTPD_COUNTED_CODES { 200, 400, 403, 404, 405, 414, 421, 431, 500, 503, 505, 0 }
#define HTTPD_NR_CODES 12

struct httpd {
	struct httpd_listener l;
	int efd;
	struct httpd_ops ops;
	pthread_t thread;
	bool started;
	int stopping;			/* set by httpd__free's thread: __atomic */
	uint64_t now;			/* the turn's time (httpd__turn) */
	struct httpd_conn conns[HTTPD_MAX_CONNS];
	struct http_req req;		/* the parser's output, reused */
	uint64_t counts[HTTPD_NR_CODES];
	uint64_t timeouts, refused, evicted;
};

/* The status codes /metrics counts, the last one for all others. */
extern const int httpd_counted_codes[HTTPD_NR_CODES];

/*
 * Count an answer of @code for /metrics.  In httpd_conn.c, where answers
 * are made, so the server (httpd.c) calls into the connection and not back.
 */
void httpd__count(struct httpd *h, int code);

/* Slot @c takes connected @fd from @peer at h->now: reading its head (or answered 403). */
void conn__open(struct httpd_conn *c, struct httpd *h, int fd, const struct httpd_peer *peer);

/* Close @c; one parked at some point is gone() first so its owner lets go of it. */
void conn__close(struct httpd_conn *c);

/* poll() said @revents on @c's socket: read, parse, answer, write, drain. */
void conn__event(struct httpd_conn *c, short revents);

/* The events to poll @c's socket for. */
short conn__events(const struct httpd_conn *c);

/* Whether @c is past a deadline at @now (closed by the caller). */
bool conn__expired(const struct httpd_conn *c, uint64_t now);

#endif /* BPFSYM_HTTPD_INT_H */
