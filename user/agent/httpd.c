// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * httpd: the pull endpoint's server.  One thread, one poll() over the
 * listening socket, an eventfd (wakeups from the recorder's side and the
 * stop) and at most HTTPD_MAX_CONNS clients, every socket non-blocking:
 * no client can hold the thread, and nothing here ever touches the
 * recorder (the agent hands over finished windows through a mutex).
 * Here: who gets a slot (a peer's share, a unix peer's credentials, a
 * slow head making room); each connection's life is httpd_conn.c's.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/httpd_int.h"
#include "base/privdrop.h"
#include "base/util.h"

#define ACCEPT_BURST	64			/* connections accepted per wakeup */
#define PEER_GROUPS_MAX	256			/* a unix peer's groups looked at (NGROUPS_MAX is 65536) */


/* A client refused a slot: a 503 if the socket takes it at once, and gone. */
static void refuse(struct httpd *h, int fd, const char *why)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\nRetry-After: 1\r\n\r\n503 %s\n",
		     strlen(why) + 5, why);
	h->refused++;
	httpd__count(h, 503);
	if (n > 0 && send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		pr_debug("httpd: refusing a client: %s\n", strerror(errno));
	close(fd);
}

/* Whether unix peer @fd is root, our own user, or in @group (SO_PEERGROUPS: every group it had at connect). */
static bool unix_allowed(int fd, gid_t group, uid_t *uid)
{
	struct ucred cred;
	gid_t groups[PEER_GROUPS_MAX];
	socklen_t len = sizeof(cred);
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return false;
	*uid = cred.uid;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	if (group == HTTPD_NO_GROUP)
		return false;
	if (cred.gid == group)
		return true;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;	/* ERANGE: more groups than we look at; not proof of membership */
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/* Accepted @fd as the limits see it: its local address, its key, its credentials.  0 or -errno. */
static int peer_of(const struct httpd *h, int fd, struct httpd_peer *p)
{
	struct sockaddr_storage from;
	socklen_t len = sizeof(p->local), flen = sizeof(from);
	uid_t uid = (uid_t)-1;

	memset(p, 0, sizeof(*p));
	if (getsockname(fd, (struct sockaddr *)&p->local, &len))
		return -errno;
	p->key[0] = (uint8_t)p->local.ss_family;
	p->allowed = true;
	if (p->local.ss_family == AF_UNIX) {
		p->allowed = unix_allowed(fd, h->l.group, &uid);
		memcpy(p->key + 1, &uid, sizeof(uid));
		return 0;
	}
	if (getpeername(fd, (struct sockaddr *)&from, &flen))
		return -errno;
	if (from.ss_family == AF_INET)
		memcpy(p->key + 1, &((struct sockaddr_in *)&from)->sin_addr, 4);
	else if (from.ss_family == AF_INET6)
		memcpy(p->key + 1, &((struct sockaddr_in6 *)&from)->sin6_addr, 16);
	return 0;
}

/* A slot for a new client: a free one, or one a slow head has held past the grace; -1: none. */
static int free_slot(struct httpd *h)
{
	uint64_t grace = HTTPD_HEAD_GRACE_MS * NSEC_PER_MSEC;
	int i, oldest = -1;

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct httpd_conn *c = &h->conns[i];

		if (c->st == C_FREE)
			return i;
		if (c->st == C_HEAD && h->now - c->since >= grace &&
		    (oldest < 0 || c->since < h->conns[oldest].since))
			oldest = i;
	}
	if (oldest >= 0) {
		conn__close(&h->conns[oldest]);
		h->evicted++;
	}
	return oldest;
}

int httpd__adopt(struct httpd *h, int fd, const struct httpd_peer *peer)
{
	int i, same = 0;

	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		same += h->conns[i].st != C_FREE && !memcmp(h->conns[i].peer.key, peer->key, sizeof(peer->key));
	if (same >= HTTPD_MAX_PER_PEER) {
		refuse(h, fd, "too many connections from this client");
		return -EBUSY;
	}
	i = free_slot(h);
	if (i < 0) {
		refuse(h, fd, "too many connections");
		return -EBUSY;
	}
	conn__open(&h->conns[i], h, fd, peer);
	return 0;
}

static void accept_all(struct httpd *h)
{
	struct httpd_peer peer;
	int n, fd, e;

	for (n = 0; n < ACCEPT_BURST; n++) {
		fd = accept4(h->l.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		e = peer_of(h, fd, &peer);
		if (e) {
			pr_debug("httpd: a client gone at once: %s\n", strerror(-e));
			close(fd);
			continue;
		}
		httpd__adopt(h, fd, &peer);
	}
}

/* Deadlines: the head's, the whole answer's, a stalled reader's, the linger's. */
static void expire(struct httpd *h)
{
	int i;

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct httpd_conn *c = &h->conns[i];

		if (c->st == C_FREE || !conn__expired(c, h->now))
			continue;
		if (c->st != C_LINGER)
			h->timeouts++;
		conn__close(c);
	}
}

/* The poll set: listener, eventfd, then each live connection. */
static int fill_poll(struct httpd *h, struct pollfd *p, int *idx)
{
	int i, n = 0;

	p[n++] = (struct pollfd){ .fd = __atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE) ? -1 : h->l.fd,
				   .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = h->efd, .events = POLLIN };
	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct httpd_conn *c = &h->conns[i];

		if (c->st == C_FREE)
			continue;
		idx[n] = i;
		p[n++] = (struct pollfd){ .fd = c->fd, .events = conn__events(c) };
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

		if (c->fd == p[k].fd)
			conn__event(c, p[k].revents);
	}
	if (p[0].revents)
		accept_all(h);
}

void httpd__turn(struct httpd *h, uint64_t now, int timeout_ms)
{
	struct pollfd p[HTTPD_MAX_CONNS + 2];
	int idx[HTTPD_MAX_CONNS + 2], n;

	h->now = now;
	expire(h);
	n = fill_poll(h, p, idx);
	if (poll(p, (nfds_t)n, timeout_ms) > 0)
		on_events(h, p, idx, n);
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

static void close_all(struct httpd *h)
{
	int i;

	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		if (h->conns[i].st != C_FREE)
			conn__close(&h->conns[i]);
}

static void *httpd__loop(void *arg)
{
	struct httpd *h = arg;
	uint64_t stop_at = 0, now;

	/* Bytes from the network meet no capability (base/privdrop.h). */
	privdrop__thread(0, NULL);
	for (;;) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE) && stop_done(h, now, &stop_at))
			break;
		/* 100 ms: deadlines are checked at least that often. */
		httpd__turn(h, now, 100);
	}
	close_all(h);
	return NULL;
}

struct httpd *httpd__new(const struct httpd_listener *l, const struct httpd_ops *ops)
{
	struct httpd *h = calloc(1, sizeof(*h));
	int i;

	if (!h)
		return NULL;
	h->l = *l;
	h->ops = *ops;
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->efd < 0) {
		free(h);
		return NULL;
	}
	h->now = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		h->conns[i] = (struct httpd_conn){ .fd = -1, .body_fd = -1 };
	return h;
}

int httpd__start(struct httpd *h)
{
	int err;

	/* Signals (Ctrl-C, SIGCHLD) are the recorder's: its poll() must be the one they wake. */
	err = thread_start(&h->thread, httpd__loop, h);
	if (err)
		return err;
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
	close_all(h);
	close(h->efd);
	httpd_listener__close(&h->l);
	free(h);
}

void httpd__counts(const struct httpd *h, const int **codes, const uint64_t **counts, size_t *nr)
{
	*codes = httpd_counted_codes;
	*counts = h->counts;
	*nr = HTTPD_NR_CODES;
}

uint64_t httpd__timeouts(const struct httpd *h)
{
	return h->timeouts;
}

uint64_t httpd__refused(const struct httpd *h)
{
	return h->refused;
}

uint64_t httpd__evicted(const struct httpd *h)
{
	return h->evicted;
}
