// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * httpd_conn: one client's connection, as a state machine driven by
 * poll() events and the turn's clock (httpd_int.h): read the head within
 * its deadline, parse it strictly, check its Host, hand it to the
 * handler, send the answer, shut our side down and drain what the client
 * still sends for a moment (so it reads the answer, not a reset).  Only
 * non-blocking reads and writes on its own socket: no client can hold
 * the server's thread.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/http_host.h"
#include "agent/httpd_int.h"

const int httpd_counted_codes[HTTPD_NR_CODES] = HTTPD_COUNTED_CODES;

void httpd__count(struct httpd *h, int code)
{
	size_t i;

	for (i = 0; i + 1 < HTTPD_NR_CODES && httpd_counted_codes[i] != code; i++)
		;
	h->counts[i]++;
}

#define LINGER_NS	(2 * NSEC_PER_SEC)	/* after an answer, reading what the client still sends */

const char *httpd__reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 414: return "URI Too Long";
	case 421: return "Misdirected Request";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

void conn__open(struct httpd_conn *c, struct httpd *h, int fd, const struct httpd_peer *peer)
{
	*c = (struct httpd_conn){ .h = h, .fd = fd, .st = C_HEAD, .body_fd = -1, .peer = *peer,
		.since = h->now, .deadline = h->now + HTTPD_HEAD_TIMEOUT_S * NSEC_PER_SEC };
	/* Answered before its request is read: nothing it asks can matter; the linger drains it. */
	if (!peer->allowed)
		httpd_conn__error(c, 403, NULL, "403 forbidden: only root, the recorder's user and the "
				  "--listen-group may use this socket");
}

void conn__close(struct httpd_conn *c)
{
	if (c->parked && c->h->ops.gone)
		c->h->ops.gone(c->h->ops.ctx, c);
	close(c->fd);
	free(c->body);
	if (c->body_fd >= 0)
		close(c->body_fd);
	c->st = C_FREE;
	c->fd = -1;
	c->body = NULL;
	c->body_fd = -1;
}

/* The status line and the headers every answer has, then @headers. */
static void conn__head(struct httpd_conn *c, int code, const char *headers, size_t len)
{
	char date[64];
	time_t t = time(NULL);
	struct tm tm;
	int n;

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	n = snprintf(c->resp, sizeof(c->resp),
		     "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		     code, httpd__reason(code), date, len, headers);
	c->nresp = n > 0 && (size_t)n < sizeof(c->resp) ? (size_t)n : 0;
	c->resp_off = 0;
	c->st = C_SEND;
	c->stall = c->h->now + HTTPD_STALL_TIMEOUT_S * NSEC_PER_SEC;
	httpd__count(c->h, code);
}

void httpd_conn__respond(struct httpd_conn *c, int code, const char *headers,
			 const void *body, size_t len)
{
	conn__head(c, code, headers, len);
	if (c->head_only || !len)
		return;
	c->body = malloc(len);
	if (!c->body) {
		c->nresp = 0;	/* no answer rather than a wrong length */
		return;
	}
	memcpy(c->body, body, len);
	c->nbody = len;
	c->body_off = 0;
}

void httpd_conn__respond_fd(struct httpd_conn *c, int code, const char *headers, int fd, size_t len)
{
	conn__head(c, code, headers, len);
	if (c->head_only) {
		close(fd);
		return;
	}
	c->body_fd = fd;
	c->nbody = len;
	c->body_off = 0;
}

void httpd_conn__error(struct httpd_conn *c, int code, const char *extra_headers, const char *text)
{
	char hdrs[512], body[512];
	int n;

	snprintf(hdrs, sizeof(hdrs), "Content-Type: text/plain; charset=utf-8\r\n"
		 "X-Content-Type-Options: nosniff\r\n%s", extra_headers ? extra_headers : "");
	n = snprintf(body, sizeof(body), "%s\n", text);
	httpd_conn__respond(c, code, hdrs, body, n > 0 && (size_t)n < sizeof(body) ? (size_t)n : 0);
}

void httpd_conn__park(struct httpd_conn *c)
{
	c->st = C_PARKED;
	c->parked = true;
}

int httpd_conn__is_head(const struct httpd_conn *c)
{
	return c->head_only;
}

/*
 * A whole, valid head: answered 421 when its Host names another server
 * (an HTTP/1.0 request may have none: no browser sends one without),
 * else the handler's.
 */
static void conn__dispatch(struct httpd_conn *c, const struct http_req *req)
{
	struct httpd *h = c->h;

	if (req->host && !http_host__ok(req->host, req->host_len, (const struct sockaddr *)&c->peer.local)) {
		httpd_conn__error(c, 421, NULL, "421 misdirected request: the Host header must name this "
				  "server (its address, localhost, 127.0.0.1 or [::1], and its port)");
		return;
	}
	h->ops.request(h->ops.ctx, c, req);
}

/* What the client sent so far, parsed: answered, parked, or still reading. */
static void conn__parse(struct httpd_conn *c)
{
	struct httpd *h = c->h;
	int st = http_parse(c->in, c->nin, &h->req);

	if (st == HTTP_PARTIAL)
		return;
	c->head_only = st == 0 && h->req.method == HTTP_HEAD;
	/* Go's WriteTimeout: from the end of the head to the end of the answer. */
	c->deadline = h->now + HTTPD_WRITE_TIMEOUT_S * NSEC_PER_SEC;
	if (st == 405)
		httpd_conn__error(c, 405, "Allow: GET, HEAD\r\n", "405 method not allowed");
	else if (st)
		httpd_conn__error(c, st, NULL, httpd__reason(st));
	else
		conn__dispatch(c, &h->req);
	if (c->st == C_HEAD)	/* the handler did neither */
		httpd_conn__error(c, 500, NULL, "no answer");
}

/* Readable: more of the head, or (parked, lingering) whatever comes, dropped. */
static void conn__read(struct httpd_conn *c)
{
	char sink[4096];
	ssize_t n;

	if (c->st == C_HEAD) {
		n = read(c->fd, c->in + c->nin, sizeof(c->in) - c->nin);
		if (n > 0) {
			c->nin += (size_t)n;
			conn__parse(c);
			return;
		}
	} else {
		n = read(c->fd, sink, sizeof(sink));
		if (n > 0)
			return;
	}
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		conn__close(c);
}

/* Send what the socket takes; done: shut down our side and linger. */
static void conn__write(struct httpd_conn *c)
{
	ssize_t n = 0;

	if (c->resp_off < c->nresp) {
		n = send(c->fd, c->resp + c->resp_off, c->nresp - c->resp_off, MSG_NOSIGNAL);
		if (n > 0)
			c->resp_off += (size_t)n;
	} else if (c->body_off < c->nbody && c->body) {
		n = send(c->fd, c->body + c->body_off, c->nbody - c->body_off, MSG_NOSIGNAL);
		if (n > 0)
			c->body_off += (size_t)n;
	} else if (c->body_off < c->nbody) {
		off_t off = (off_t)c->body_off;

		n = sendfile(c->fd, c->body_fd, &off, c->nbody - c->body_off);
		if (n > 0)
			c->body_off = (size_t)off;
		else if (n == 0)
			n = -1, errno = EIO;	/* the body is shorter than it said */
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		conn__close(c);
		return;
	}
	if (n > 0)
		c->stall = c->h->now + HTTPD_STALL_TIMEOUT_S * NSEC_PER_SEC;
	if (c->nresp && c->resp_off == c->nresp && c->body_off == c->nbody) {
		shutdown(c->fd, SHUT_WR);
		c->st = C_LINGER;
		c->deadline = c->h->now + LINGER_NS;
	} else if (!c->nresp) {
		conn__close(c);		/* nothing could be made to send */
	}
}

void conn__event(struct httpd_conn *c, short revents)
{
	if (!revents || c->st == C_FREE)
		return;
	if (c->st == C_SEND)
		conn__write(c);
	else
		conn__read(c);
}

short conn__events(const struct httpd_conn *c)
{
	return c->st == C_SEND ? POLLOUT : POLLIN | POLLRDHUP;
}

bool conn__expired(const struct httpd_conn *c, uint64_t now)
{
	return now >= c->deadline || (c->st == C_SEND && now >= c->stall);
}
