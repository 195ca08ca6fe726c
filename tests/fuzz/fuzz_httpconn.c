// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the endpoint's server (agent/httpd.c, httpd_conn.c)
 * as its clients drive it, one connection's state machine per client:
 * read the head, parse it, check its Host and its peer, answer at once or
 * park, send, drain, and the deadlines of each.  No thread and no
 * listening socket: the input is a program for the seam (httpd__adopt,
 * httpd__turn) over socketpairs, on a clock of its own, one op a byte:
 *
 *   'A' CFG      a client connects: CFG's bits 0-1 the server's address
 *                (127.0.0.1:6060, [::1]:6060, 10.1.2.3:80 reached on
 *                0.0.0.0, a unix socket), bits 2-3 which peer it is (the
 *                per-peer cap), bit 4 a peer without credentials
 *   'S' K N ...  client K sends the next N bytes
 *   'H' K        client K shuts its side down (half-close)
 *   'R' K        client K reads what has come
 *   'C' K        client K closes
 *   'T'          a turn; 'W' a wakeup and a turn; 'D' N: N * 100 ms pass, a turn
 *
 * The handler parks "/park" (answered at the next wakeup), answers
 * "/big" with 256 KiB from memory, "/fd" with 256 KiB by sendfile,
 * "/short" with a file shorter than it says, anything else with a line.
 * Besides not crashing or leaking, the contract: at most HTTPD_MAX_CONNS
 * live connections and HTTPD_MAX_PER_PEER of one peer; every answer a
 * client reads is "HTTP/1.1 CODE " with a code the server documents, 421
 * never on a unix socket, 403 exactly to peers without credentials,
 * never more body than its Content-Length; gone() only for a connection
 * once parked, once, and for each of them by the end.
 */
#define FUZZ_NAME "fuzz_httpconn"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_common.h"
#include "agent/httpd_int.h"

#define NR_CLIENTS	32
#define RESP_KEEP	4096		/* of each answer: its head and the start of its body */
#define BIG		(256u << 10)

struct client {
	int fd;				/* -1: closed, or refused at once */
	int family;			/* the server's end: AF_INET, AF_INET6, AF_UNIX */
	bool forbidden;
	char resp[RESP_KEEP];
	size_t kept, total;		/* bytes kept, bytes read */
};

static struct {
	struct client c[NR_CLIENTS];
	int nr;
	struct httpd_conn *parked[HTTPD_MAX_CONNS * 4];	/* parked, not yet gone() */
	bool answered[HTTPD_MAX_CONNS * 4];
	int nr_parked;
	int big_fd;
	struct httpd *h;
} fz;

static int parked_at(struct httpd_conn *c)
{
	int i;

	for (i = 0; i < fz.nr_parked; i++)
		if (fz.parked[i] == c)
			return i;
	return -1;
}

static void on_request(void *ctx, struct httpd_conn *c, const struct http_req *req)
{
	static char big[BIG];

	if (!strcmp(req->path, "/park")) {
		CHECK(parked_at(c) < 0);	/* gone() came before the slot was used again */
		CHECK(fz.nr_parked < (int)(sizeof(fz.parked) / sizeof(fz.parked[0])));
		fz.answered[fz.nr_parked] = false;
		fz.parked[fz.nr_parked++] = c;
		httpd_conn__park(c);
	} else if (!strcmp(req->path, "/big")) {
		httpd_conn__respond(c, 200, "", big, sizeof(big));
	} else if (!strcmp(req->path, "/fd") || !strcmp(req->path, "/short")) {
		int fd = dup(fz.big_fd);

		CHECK(fd >= 0);
		httpd_conn__respond_fd(c, 200, "", fd, req->path[1] == 'f' ? BIG : BIG + 1);
	} else {
		httpd_conn__respond(c, 200, "Content-Type: text/plain\r\n", "hello\n", 6);
	}
}

static void on_wake(void *ctx)
{
	int i;

	for (i = 0; i < fz.nr_parked; i++) {
		if (fz.answered[i])
			continue;
		fz.answered[i] = true;
		httpd_conn__respond(fz.parked[i], 200, "", "late\n", 5);
	}
}

static void on_gone(void *ctx, struct httpd_conn *c)
{
	int i = parked_at(c);

	CHECK(i >= 0);			/* never parked, or gone() twice */
	fz.parked[i] = fz.parked[--fz.nr_parked];
	fz.answered[i] = fz.answered[fz.nr_parked];
}

/* The server's live connections: within the caps, each state's fields sane. */
static void check_server(void)
{
	int i, j, live = 0;

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		const struct httpd_conn *c = &fz.h->conns[i];
		int same = 0;

		if (c->st == C_FREE)
			continue;
		live++;
		CHECK(c->fd >= 0 && c->nin <= sizeof(c->in));
		CHECK(c->resp_off <= c->nresp && c->body_off <= c->nbody);
		for (j = 0; j < HTTPD_MAX_CONNS; j++)
			same += fz.h->conns[j].st != C_FREE &&
				!memcmp(fz.h->conns[j].peer.key, c->peer.key, sizeof(c->peer.key));
		CHECK(same <= HTTPD_MAX_PER_PEER);
		CHECK(c->st != C_PARKED || parked_at((struct httpd_conn *)c) >= 0);
	}
	CHECK(live <= HTTPD_MAX_CONNS);
}

/* What client @k has read: a status line the server may send, a body no longer than it said. */
static void check_answer(const struct client *k)
{
	const char *end, *cl;
	unsigned long len;
	int code;

	if (k->kept < 13)
		return;
	CHECK(!memcmp(k->resp, "HTTP/1.1 ", 9) && k->resp[12] == ' ');
	code = atoi(k->resp + 9);
	CHECK(code == 200 || code == 400 || code == 403 || code == 404 || code == 405 || code == 414 ||
	      code == 421 || code == 431 || code == 500 || code == 503 || code == 505);
	CHECK(code != 421 || k->family != AF_UNIX);
	CHECK((code == 403) == k->forbidden || code == 503);
	end = memmem(k->resp, k->kept, "\r\n\r\n", 4);
	if (!end)
		return;
	cl = memmem(k->resp, (size_t)(end - k->resp), "\r\nContent-Length: ", 18);
	CHECK(cl != NULL);
	len = strtoul(cl + 18, NULL, 10);
	CHECK(k->total - (size_t)(end + 4 - k->resp) <= len);
}

static void client_read(struct client *k)
{
	char buf[65536];
	ssize_t n;

	if (k->fd < 0)
		return;
	while ((n = read(k->fd, buf, sizeof(buf))) > 0) {
		size_t keep = RESP_KEEP - k->kept < (size_t)n ? RESP_KEEP - k->kept : (size_t)n;

		memcpy(k->resp + k->kept, buf, keep);
		k->kept += keep;
		k->total += (size_t)n;
	}
	check_answer(k);
}

/* 'A': a new client on a socketpair, described to the server by @cfg. */
static void op_adopt(uint8_t cfg)
{
	static const int families[] = { AF_INET, AF_INET6, AF_INET, AF_UNIX };
	struct client *k = &fz.c[fz.nr];
	struct httpd_peer peer = { .allowed = !(cfg & 0x10) };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&peer.local;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&peer.local;
	int sv[2];

	if (fz.nr == NR_CLIENTS || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		return;
	peer.local.ss_family = (sa_family_t)families[cfg & 3];
	if ((cfg & 3) == 0 || (cfg & 3) == 2) {
		in4->sin_port = htons((cfg & 3) ? 80 : 6060);
		in4->sin_addr.s_addr = htonl((cfg & 3) ? 0x0a010203 : INADDR_LOOPBACK);
	} else if ((cfg & 3) == 1) {
		in6->sin6_port = htons(6060);
		in6->sin6_addr = in6addr_loopback;
	}
	peer.key[0] = (uint8_t)peer.local.ss_family;
	peer.key[1] = (uint8_t)((cfg >> 2) & 3);
	*k = (struct client){ .fd = sv[1], .family = peer.local.ss_family, .forbidden = !peer.allowed };
	fz.nr++;
	if (httpd__adopt(fz.h, sv[0], &peer) == -EBUSY) {
		client_read(k);		/* the 503, sent at once */
		CHECK(k->kept >= 13 && !memcmp(k->resp + 9, "503", 3));
	}
}

/* Run the program in @data; false at its end. */
static bool step(const uint8_t **p, const uint8_t *end, uint64_t *now)
{
	struct client *k;
	uint8_t op;

	if (*p >= end)
		return false;
	op = *(*p)++;
	if (op == 'A') {
		if (*p < end)
			op_adopt(*(*p)++);
		return true;
	}
	if (op == 'T' || op == 'W' || op == 'D') {
		if (op == 'W')
			httpd__wake(fz.h);
		if (op == 'D' && *p < end)
			*now += (uint64_t)*(*p)++ * 100 * NSEC_PER_MSEC;
		httpd__turn(fz.h, *now, 0);
		check_server();
		return true;
	}
	if ((op != 'S' && op != 'H' && op != 'R' && op != 'C') || *p >= end || !fz.nr)
		return true;
	k = &fz.c[*(*p)++ % fz.nr];
	if (op == 'S' && *p < end) {
		size_t n = *(*p)++;

		n = n < (size_t)(end - *p) ? n : (size_t)(end - *p);
		if (k->fd >= 0 && send(k->fd, *p, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
			(void)0;	/* the server closed it: its business */
		*p += n;
	} else if (op == 'H' && k->fd >= 0) {
		shutdown(k->fd, SHUT_WR);
	} else if (op == 'R') {
		client_read(k);
	} else if (op == 'C' && k->fd >= 0) {
		client_read(k);
		close(k->fd);
		k->fd = -1;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct httpd_ops ops = { .request = on_request, .wake = on_wake, .gone = on_gone };
	struct httpd_listener none = { .fd = -1, .group = HTTPD_NO_GROUP };
	const uint8_t *p = data, *end = data + size;
	uint64_t now = 1000 * NSEC_PER_SEC;
	int i;

	if (!fz.big_fd) {
		/* The server's thread blocks every signal; a sendfile to a closed peer must not kill us either. */
		signal(SIGPIPE, SIG_IGN);
		fz.big_fd = memfd_create(FUZZ_NAME, MFD_CLOEXEC);
		CHECK(fz.big_fd >= 0 && ftruncate(fz.big_fd, BIG) == 0);
	}
	if (size > 16384)
		return 0;
	fz.nr = 0;
	fz.nr_parked = 0;
	fz.h = httpd__new(&none, &ops);
	CHECK(fz.h != NULL);
	httpd__turn(fz.h, now, 0);
	while (step(&p, end, &now))
		;
	for (i = 0; i < fz.nr; i++) {
		client_read(&fz.c[i]);
		if (fz.c[i].fd >= 0)
			close(fz.c[i].fd);
	}
	httpd__free(fz.h);
	CHECK(fz.nr_parked == 0);	/* every connection once parked was gone() */
	return 0;
}
