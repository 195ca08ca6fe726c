/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * httpd: a minimal HTTP/1.1 server for the pull endpoint, on one thread of
 * its own with poll(): non-blocking sockets, on TCP or a unix socket, at
 * most HTTPD_MAX_CONNS clients and HTTPD_MAX_PER_PEER from one source
 * address (TCP) or user (unix socket; one more is answered 503 and
 * closed), a request head of at most HTTP_HEAD_MAX bytes read within
 * HTTPD_HEAD_TIMEOUT_S, every answer sent within HTTPD_WRITE_TIMEOUT_S of
 * its request and with progress at least every HTTPD_STALL_TIMEOUT_S, and
 * `Connection: close` after each answer.  A request whose Host does not
 * name the server is answered 421 (http_host.h: DNS rebinding); a unix
 * socket's peer must be root, the server's user or in its group (403).
 * When every slot is taken, a client that has been sending its head for
 * HTTPD_HEAD_GRACE_MS makes room for a new one: slow heads cannot hold
 * others out.  What a request means is its user's business (struct
 * httpd_ops): it answers at once, or parks the connection and answers
 * when woken.
 */
#ifndef BPFSYM_HTTPD_H
#define BPFSYM_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "agent/http_parse.h"

#define HTTPD_MAX_CONNS		16
#define HTTPD_MAX_PER_PEER	(HTTPD_MAX_CONNS / 2)	/* one peer never holds every slot */
#define HTTPD_HEAD_TIMEOUT_S	10	/* slowloris, half-open connections */
#define HTTPD_HEAD_GRACE_MS	1000	/* a head still unread after this may be evicted for a new client */
#define HTTPD_WRITE_TIMEOUT_S	300	/* Go's http.Server.WriteTimeout: a profile must be shorter */
#define HTTPD_STALL_TIMEOUT_S	10	/* a reader that stops reading */
#define HTTPD_STOP_GRACE_MS	2000	/* answers in flight when the server stops */
#define HTTPD_NO_GROUP		((gid_t)-1)
#define HTTPD_UNIX_PATH_MAX	108	/* sizeof(sockaddr_un.sun_path) */

struct httpd;
struct httpd_conn;

struct httpd_ops {
	/*
	 * A whole, acceptable request on @c: answer it (httpd_conn__respond*)
	 * or park it (httpd_conn__park) to answer from wake().
	 */
	void (*request)(void *ctx, struct httpd_conn *c, const struct http_req *req);
	/* httpd__wake() was called: answer the parked connections that can be. */
	void (*wake)(void *ctx);
	/*
	 * @c, parked at some point, is closed: answered and done, or
	 * unanswered (client gone, deadline, stop).  Its last call about @c.
	 */
	void (*gone)(void *ctx, struct httpd_conn *c);
	void *ctx;
};

/* A listening socket and what the server must know of it. */
struct httpd_listener {
	int fd;				/* listening, non-blocking; -1: none */
	int family;			/* AF_INET, AF_INET6 or AF_UNIX */
	gid_t group;			/* AF_UNIX: whose members may connect; HTTPD_NO_GROUP: root only */
	char path[HTTPD_UNIX_PATH_MAX];	/* AF_UNIX: the socket file, removed at the end */
	dev_t dev;			/* AF_UNIX: the file bind() made (removed only if still there) */
	ino_t ino;
};

/*
 * Parse @spec, "[ADDR:]PORT" (ADDR an IPv4 address, default 127.0.0.1) or
 * "[IPV6]:PORT", into @ss and *@len.  0, or -EINVAL with why in @err.
 */
int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *err, size_t errlen);

/*
 * A listening socket on @spec into @l: parsed, bound, listening,
 * non-blocking.  @spec is "[ADDR:]PORT", "[IPV6]:PORT" or "unix:PATH".  A
 * unix socket is made mode 0600, or 0660 with group @group (not
 * HTTPD_NO_GROUP; TCP takes only HTTPD_NO_GROUP: -EINVAL), never through
 * a symlink: a PATH that exists is replaced only when it is a socket of
 * our user that nobody listens on (a previous run's), else refused.  0, or
 * -errno with a line in @err ("ADDR: Address already in use").
 */
int httpd__listen(const char *spec, gid_t group, struct httpd_listener *l, char *err, size_t errlen);

/* Close @l's socket and remove its unix socket file if it is still the one made.  Idempotent. */
void httpd_listener__close(struct httpd_listener *l);

/* A server on @l (taken: closed by httpd__free; @l->fd -1 for none).  NULL + errno. */
struct httpd *httpd__new(const struct httpd_listener *l, const struct httpd_ops *ops);

/* Start its thread.  0 or -errno. */
int httpd__start(struct httpd *h);

/* From any thread: have the server call ops->wake soon.  Async-signal-safe. */
void httpd__wake(struct httpd *h);

/*
 * Stop: no new connections; answers being sent and parked connections get
 * HTTPD_STOP_GRACE_MS (wakeups still answered); then every connection is
 * closed (gone() for those once parked) and the thread joined.  httpd__wake stays
 * safe until httpd__free.  Idempotent; NULL is a no-op.
 */
void httpd__stop(struct httpd *h);

/*
 * httpd__stop, close what connections are left (gone() for those once parked:
 * a server never started has them), close and remove the listener, free
 * @h.  NULL is a no-op.
 */
void httpd__free(struct httpd *h);

/* Answers by status code so far, for /metrics: *@codes and *@counts, *@nr of them. */
void httpd__counts(const struct httpd *h, const int **codes, const uint64_t **counts, size_t *nr);

/* Connections closed for a deadline (head, write, stall) so far. */
uint64_t httpd__timeouts(const struct httpd *h);

/* Connections refused for HTTPD_MAX_CONNS or HTTPD_MAX_PER_PEER so far. */
uint64_t httpd__refused(const struct httpd *h);

/* Connections closed while reading their head to make room for another so far. */
uint64_t httpd__evicted(const struct httpd *h);

/*
 * A client as the server's limits see it: what its Host must name, whose
 * connection count it adds to, whether it may be answered at all.
 */
struct httpd_peer {
	struct sockaddr_storage local;	/* the connection's local address (AF_UNIX: any Host) */
	uint8_t key[17];		/* the family, then the source IP or the uid */
	bool allowed;			/* false: a unix peer that is not root, us or in the group */
};

/*
 * The seam the unit tests and tests/fuzz/fuzz_httpconn.c drive the server
 * through, without its thread or a listening socket (httpd__new with fd
 * -1; never with httpd__start).  httpd__adopt: take connected,
 * non-blocking @fd as a client described by @peer, as an accept does:
 * 0, or -EBUSY when it was refused (a 503 sent, @fd closed).
 */
int httpd__adopt(struct httpd *h, int fd, const struct httpd_peer *peer);

/*
 * One turn of the server's loop at @now (CLOCK_MONOTONIC ns; the thread
 * passes the clock, the fuzz target its own): the deadlines, one poll()
 * of at most @timeout_ms, the events.  Every deadline set in the turn
 * counts from @now.
 */
void httpd__turn(struct httpd *h, uint64_t now, int timeout_ms);

/*
 * The calls below are for the server's thread (inside ops callbacks).
 * Answer @c with status @code: @headers (header lines, each ending in
 * CRLF, or "") and @len bytes of @body (copied; not sent for HEAD).
 */
void httpd_conn__respond(struct httpd_conn *c, int code, const char *headers,
			 const void *body, size_t len);

/* The same with the body in @fd (taken; read from offset 0, @len bytes). */
void httpd_conn__respond_fd(struct httpd_conn *c, int code, const char *headers, int fd, size_t len);

/* A text/plain answer: @text and a newline, as Go's http.Error writes. */
void httpd_conn__error(struct httpd_conn *c, int code, const char *extra_headers, const char *text);

/* Answer later: @c waits (its client watched for hanging up) until answered. */
void httpd_conn__park(struct httpd_conn *c);

/* Whether @c's request was HEAD. */
int httpd_conn__is_head(const struct httpd_conn *c);

/* The reason phrase of @code ("Not Found"). */
const char *httpd__reason(int code);

#endif /* BPFSYM_HTTPD_H */
