/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * httpd: a minimal HTTP/1.1 server for the pull endpoint, on one thread of
 * its own with poll(): non-blocking sockets, at most HTTPD_MAX_CONNS
 * clients (one more is answered 503 and closed), a request head of at most
 * HTTP_HEAD_MAX bytes read within HTTPD_HEAD_TIMEOUT_S, every answer sent
 * within HTTPD_WRITE_TIMEOUT_S of its request and with progress at least
 * every HTTPD_STALL_TIMEOUT_S, and `Connection: close` after each answer.
 * What a request means is its user's business (struct httpd_ops): it
 * answers at once, or parks the connection and answers when woken.
 */
#ifndef BPFSYM_HTTPD_H
#define BPFSYM_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent/http_parse.h"

#define HTTPD_MAX_CONNS		16
#define HTTPD_HEAD_TIMEOUT_S	10	/* slowloris, half-open connections */
#define HTTPD_WRITE_TIMEOUT_S	300	/* Go's http.Server.WriteTimeout: a profile must be shorter */
#define HTTPD_STALL_TIMEOUT_S	10	/* a reader that stops reading */
#define HTTPD_STOP_GRACE_MS	2000	/* answers in flight when the server stops */

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
	/* Parked @c is closed unanswered (client gone, deadline, stop). */
	void (*gone)(void *ctx, struct httpd_conn *c);
	void *ctx;
};

/*
 * Parse @spec, "[ADDR:]PORT" (ADDR an IPv4 address, default 127.0.0.1) or
 * "[IPV6]:PORT", into @ss and *@len.  0, or -EINVAL with why in @err.
 */
int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *err, size_t errlen);

/*
 * A listening socket on @spec: parsed, bound, listening, non-blocking.
 * The fd, or -errno with a line in @err ("ADDR: Address already in use").
 */
int httpd__listen(const char *spec, char *err, size_t errlen);

/* A server on @listen_fd (taken: closed by httpd__free).  NULL + errno. */
struct httpd *httpd__new(int listen_fd, const struct httpd_ops *ops);

/* Start its thread.  0 or -errno. */
int httpd__start(struct httpd *h);

/* From any thread: have the server call ops->wake soon.  Async-signal-safe. */
void httpd__wake(struct httpd *h);

/*
 * Stop: no new connections; answers being sent and parked connections get
 * HTTPD_STOP_GRACE_MS (wakeups still answered); then every connection is
 * closed (gone() for the parked) and the thread joined.  httpd__wake stays
 * safe until httpd__free.  Idempotent; NULL is a no-op.
 */
void httpd__stop(struct httpd *h);

/* httpd__stop, then free @h.  NULL is a no-op. */
void httpd__free(struct httpd *h);

/* Answers by status code so far, for /metrics: *@codes and *@counts, *@nr of them. */
void httpd__counts(const struct httpd *h, const int **codes, const uint64_t **counts, size_t *nr);

/* Connections closed for a deadline (head, write, stall) so far. */
uint64_t httpd__timeouts(const struct httpd *h);

/* Connections refused for HTTPD_MAX_CONNS so far. */
uint64_t httpd__refused(const struct httpd *h);

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
