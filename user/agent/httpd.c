// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * httpd: the pull endpoint's server.  One thread, one poll() over the
 * listening socket, an eventfd (wakeups from the recorder's side and the
 * stop) and at most HTTPD_MAX_CONNS clients, every socket non-blocking:
 * no client can hold the thread, and nothing here ever touches the
 * recorder (the agent hands over finished windows through a mutex).
 * Every connection has a deadline; each answer ends the connection
 * (shutdown, then a short drain so the client reads it rather than a
 * reset).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/httpd.h"
#include "base/util.h"

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull
#define LINGER_NS	(2 * NSEC_PER_SEC)	/* after an answer, reading what the client still sends */
#define ACCEPT_BURST	64			/* connections accepted per wakeup */
#define RESP_HEAD_MAX	1024

enum conn_state { C_FREE = 0, C_HEAD, C_PARKED, C_SEND, C_LINGER };

struct httpd_conn {
	struct httpd *h;
	int fd;
	enum conn_state st;
	bool head_only;
	uint64_t deadline;		/* CLOCK_MONOTONIC ns: the state's last moment */
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
static const int counted_codes[] = { 200, 400, 404, 405, 414, 431, 500, 503, 505, 0 };
#define NR_CODES (sizeof(counted_codes) / sizeof(counted_codes[0]))

struct httpd {
	int lfd, efd;
	struct httpd_ops ops;
	pthread_t thread;
	bool started;
	int stopping;			/* set by httpd__free's thread: __atomic */
	struct httpd_conn conns[HTTPD_MAX_CONNS];
	struct http_req req;		/* the parser's output, reused */
	uint64_t counts[NR_CODES];
	uint64_t timeouts, refused;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Decimal digits only (no sign, no 0x: a port is not C notation), 1..65535. */
static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (!i || !v || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *err, size_t errlen)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon, *port_s;
	char host[INET6_ADDRSTRLEN + 1];
	size_t hlen;
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		colon = strstr(spec, "]:");
		hlen = colon ? (size_t)(colon - spec - 1) : 0;
		port_s = colon ? colon + 2 : "";
	} else {
		colon = strrchr(spec, ':');
		hlen = colon ? (size_t)(colon - spec) : 0;
		port_s = colon ? colon + 1 : spec;
	}
	if (parse_port(port_s, &port)) {
		snprintf(err, errlen, "expected [ADDR:]PORT with a port of 1 to 65535");
		return -EINVAL;
	}
	if (hlen >= sizeof(host) || (colon && !hlen)) {
		snprintf(err, errlen, "expected an IPv4 address or [IPv6] before the port");
		return -EINVAL;
	}
	memcpy(host, spec[0] == '[' ? spec + 1 : spec, hlen);
	host[hlen] = '\0';
	if (spec[0] == '[') {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1)
			return 0;
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		if (inet_pton(AF_INET, colon ? host : "127.0.0.1", &in4->sin_addr) == 1)
			return 0;
	}
	snprintf(err, errlen, "'%s' is not an IP address", host);
	return -EINVAL;
}

int httpd__listen(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, e;

	e = httpd__parse_addr(spec, &ss, &len, err, errlen);
	if (e)
		return e;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	/* A restart must not wait for the old connections' TIME_WAIT; a live listener still refuses. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		e = -errno;
		snprintf(err, errlen, "%s", strerror(-e));
		close(fd);
		return e;
	}
	return fd;
}

const char *httpd__reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

static void count_code(struct httpd *h, int code)
{
	size_t i;

	for (i = 0; i + 1 < NR_CODES && counted_codes[i] != code; i++)
		;
	h->counts[i]++;
}

/* Close @c; a parked one is gone() first so its owner lets go of it. */
static void conn__close(struct httpd_conn *c)
{
	if (c->st == C_PARKED && c->h->ops.gone)
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
	c->stall = mono_ns() + HTTPD_STALL_TIMEOUT_S * NSEC_PER_SEC;
	count_code(c->h, code);
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
}

int httpd_conn__is_head(const struct httpd_conn *c)
{
	return c->head_only;
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
	c->deadline = mono_ns() + HTTPD_WRITE_TIMEOUT_S * NSEC_PER_SEC;
	if (st == 405)
		httpd_conn__error(c, 405, "Allow: GET, HEAD\r\n", "405 method not allowed");
	else if (st)
		httpd_conn__error(c, st, NULL, httpd__reason(st));
	else
		h->ops.request(h->ops.ctx, c, &h->req);
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
		c->stall = mono_ns() + HTTPD_STALL_TIMEOUT_S * NSEC_PER_SEC;
	if (c->nresp && c->resp_off == c->nresp && c->body_off == c->nbody) {
		shutdown(c->fd, SHUT_WR);
		c->st = C_LINGER;
		c->deadline = mono_ns() + LINGER_NS;
	} else if (!c->nresp) {
		conn__close(c);		/* nothing could be made to send */
	}
}

/* One more client than there is room for: a 503 if the socket takes it at once, and gone. */
static void refuse(struct httpd *h, int fd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
				   "Content-Length: 25\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
				   "503 too many connections\n";

	if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		pr_debug("httpd: refusing a client: %s\n", strerror(errno));
	close(fd);
	h->refused++;
	count_code(h, 503);
}

static void accept_all(struct httpd *h)
{
	int i, n, fd;

	for (n = 0; n < ACCEPT_BURST; n++) {
		fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (i = 0; i < HTTPD_MAX_CONNS && h->conns[i].st != C_FREE; i++)
			;
		if (i == HTTPD_MAX_CONNS) {
			refuse(h, fd);
			continue;
		}
		h->conns[i] = (struct httpd_conn){ .h = h, .fd = fd, .st = C_HEAD, .body_fd = -1,
			.deadline = mono_ns() + HTTPD_HEAD_TIMEOUT_S * NSEC_PER_SEC };
	}
}

/* Deadlines: the head's, the whole answer's, a stalled reader's, the linger's. */
static void expire(struct httpd *h, uint64_t now)
{
	int i;

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct httpd_conn *c = &h->conns[i];

		if (c->st == C_FREE)
			continue;
		if (now >= c->deadline || (c->st == C_SEND && now >= c->stall)) {
			if (c->st != C_LINGER)
				h->timeouts++;
			conn__close(c);
		}
	}
}

/* The poll set: listener, eventfd, then each live connection. */
static int fill_poll(struct httpd *h, struct pollfd *p, int *idx)
{
	int i, n = 0;

	p[n++] = (struct pollfd){ .fd = __atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE) ? -1 : h->lfd,
				   .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = h->efd, .events = POLLIN };
	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct httpd_conn *c = &h->conns[i];

		if (c->st == C_FREE)
			continue;
		idx[n] = i;
		p[n++] = (struct pollfd){ .fd = c->fd,
			.events = c->st == C_SEND ? POLLOUT : POLLIN | POLLRDHUP };
	}
	return n;
}

static void on_events(struct httpd *h, struct pollfd *p, const int *idx, int n)
{
	uint64_t v;
	int k;

	if (p[1].revents && read(h->efd, &v, sizeof(v)) == sizeof(v) && h->ops.wake)
		h->ops.wake(h->ops.ctx);
	for (k = 2; k < n; k++) {
		struct httpd_conn *c = &h->conns[idx[k]];

		if (!p[k].revents || c->st == C_FREE || c->fd != p[k].fd)
			continue;
		if (c->st == C_SEND)
			conn__write(c);
		else
			conn__read(c);
	}
	if (p[0].revents)
		accept_all(h);
}

/* Whether a stopping server is done: nothing in flight, or the grace is over. */
static bool stop_done(struct httpd *h, uint64_t now, uint64_t *stop_at)
{
	int i;

	if (!*stop_at)
		*stop_at = now + HTTPD_STOP_GRACE_MS * NSEC_PER_MSEC;
	if (now >= *stop_at)
		return true;
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		if (h->conns[i].st == C_PARKED || h->conns[i].st == C_SEND)
			return false;
	return true;
}

static void *httpd__loop(void *arg)
{
	struct httpd *h = arg;
	struct pollfd p[HTTPD_MAX_CONNS + 2];
	int idx[HTTPD_MAX_CONNS + 2], n, i;
	uint64_t stop_at = 0, now;

	for (;;) {
		now = mono_ns();
		expire(h, now);
		if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE) && stop_done(h, now, &stop_at))
			break;
		n = fill_poll(h, p, idx);
		/* 100 ms: deadlines are checked at least that often. */
		if (poll(p, (nfds_t)n, 100) > 0)
			on_events(h, p, idx, n);
	}
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		if (h->conns[i].st != C_FREE)
			conn__close(&h->conns[i]);
	return NULL;
}

struct httpd *httpd__new(int listen_fd, const struct httpd_ops *ops)
{
	struct httpd *h = calloc(1, sizeof(*h));
	int i;

	if (!h)
		return NULL;
	h->lfd = listen_fd;
	h->ops = *ops;
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->efd < 0) {
		free(h);
		return NULL;
	}
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		h->conns[i] = (struct httpd_conn){ .fd = -1, .body_fd = -1 };
	return h;
}

int httpd__start(struct httpd *h)
{
	sigset_t all, old;
	int err;

	/* Signals (Ctrl-C, SIGCHLD) are the recorder's: its poll() must be the one they wake. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&h->thread, NULL, httpd__loop, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	h->started = true;
	return 0;
}

void httpd__wake(struct httpd *h)
{
	uint64_t one = 1;

	if (write(h->efd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: a wakeup is pending anyway */
}

void httpd__stop(struct httpd *h)
{
	if (!h || !h->started)
		return;
	__atomic_store_n(&h->stopping, 1, __ATOMIC_RELEASE);
	httpd__wake(h);
	pthread_join(h->thread, NULL);
	h->started = false;
}

void httpd__free(struct httpd *h)
{
	if (!h)
		return;
	httpd__stop(h);
	close(h->efd);
	close(h->lfd);
	free(h);
}

void httpd__counts(const struct httpd *h, const int **codes, const uint64_t **counts, size_t *nr)
{
	*codes = counted_codes;
	*counts = h->counts;
	*nr = NR_CODES;
}

uint64_t httpd__timeouts(const struct httpd *h)
{
	return h->timeouts;
}

uint64_t httpd__refused(const struct httpd *h)
{
	return h->refused;
}
