// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The server (agent/httpd.c) on a loopback port, with stub handlers, and
 * the metrics text (agent/metrics.c): the connection cap answers 503, a
 * malformed head gets its status and the connection ends, a parked
 * connection is answered from wake() and reported gone() when its client
 * hangs up, HEAD gets no body, a port in use is refused; the metrics text
 * is well-formed exposition format.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "agent/httpd.h"
#include "agent/metrics.h"

TEST_SUITE("httpd");

struct stub {
	pthread_mutex_t mu;
	struct httpd_conn *parked;
	int gone;
	int woken;
};

static struct stub stub = { .mu = PTHREAD_MUTEX_INITIALIZER };
static struct httpd *srv;
static uint16_t port;

static void stub_request(void *ctx, struct httpd_conn *c, const struct http_req *req)
{
	if (!strcmp(req->path, "/park")) {
		pthread_mutex_lock(&stub.mu);
		stub.parked = c;
		pthread_mutex_unlock(&stub.mu);
		httpd_conn__park(c);
		return;
	}
	if (!strcmp(req->path, "/big")) {
		size_t len = 8u << 20;
		char *b = calloc(1, len);

		if (b)
			httpd_conn__respond(c, 200, "", b, len);
		else
			httpd_conn__error(c, 500, NULL, "out of memory");
		free(b);
		return;
	}
	if (!strcmp(req->path, "/hello")) {
		httpd_conn__respond(c, 200, "Content-Type: text/plain\r\n", "hello\n", 6);
		return;
	}
	httpd_conn__error(c, 404, NULL, "404 page not found");
}

static void stub_wake(void *ctx)
{
	pthread_mutex_lock(&stub.mu);
	stub.woken++;
	if (stub.parked)
		httpd_conn__respond(stub.parked, 200, "", "late\n", 5);
	stub.parked = NULL;
	pthread_mutex_unlock(&stub.mu);
}

static void stub_gone(void *ctx, struct httpd_conn *c)
{
	pthread_mutex_lock(&stub.mu);
	if (stub.parked == c)
		stub.parked = NULL;
	stub.gone++;
	pthread_mutex_unlock(&stub.mu);
}

static int dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Everything the server sends until it closes, within @ms; the bytes read. */
static size_t slurp(int fd, char *buf, size_t cap, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && poll(&p, 1, ms) > 0) {
		r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return n;
}

static size_t ask(const char *req, char *buf, size_t cap)
{
	int fd = dial();
	size_t n;

	if (fd < 0)
		return 0;
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return 0;
	}
	n = slurp(fd, buf, cap, 3000);
	close(fd);
	return n;
}

static int stub_count(int *field)
{
	int v;

	pthread_mutex_lock(&stub.mu);
	v = *field;
	pthread_mutex_unlock(&stub.mu);
	return v;
}

/* Wait up to 3 s for *@field to reach @want. */
static bool wait_count(int *field, int want)
{
	int i;

	for (i = 0; i < 300 && stub_count(field) < want; i++)
		usleep(10000);
	return stub_count(field) >= want;
}

static void test_answers(void)
{
	char buf[4096];

	ask("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 OK\r\n", 17), buf);
	ASSERT_TRUE(strstr(buf, "\r\nContent-Length: 6\r\n") != NULL, "length");
	ASSERT_TRUE(strstr(buf, "\r\nConnection: close\r\n") != NULL, "close");
	ASSERT_TRUE(strstr(buf, "\r\n\r\nhello\n") != NULL, "body");
	ask("HEAD /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "\r\nContent-Length: 6\r\n") != NULL, "HEAD: the GET's length");
	ASSERT_TRUE(strstr(buf, "hello") == NULL, "HEAD: no body");
	ask("GET /nope HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 404 ", 13), buf);
	ask("BREW / HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 405 ", 13), buf);
	ASSERT_TRUE(strstr(buf, "\r\nAllow: GET, HEAD\r\n") != NULL, "Allow");
	ask("GET /a b HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 400 ", 13), buf);
	ASSERT_TRUE(strstr(buf, "Content-Type: text/plain; charset=utf-8\r\n") != NULL, "a text body");
}

static void test_park_wake_gone(void)
{
	char buf[1024];
	int fd, gone0 = stub_count(&stub.gone);
	static const char req[] = "GET /park HTTP/1.0\r\n\r\n";

	fd = dial();
	if (!ASSERT_TRUE(fd >= 0, "dial") || !ASSERT_EQ(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1, "send"))
		return;
	/* Parked: nothing comes until the wakeup. */
	ASSERT_EQ(slurp(fd, buf, sizeof(buf), 300), (size_t)0, "nothing before wake");
	httpd__wake(srv);
	slurp(fd, buf, sizeof(buf), 3000);
	ASSERT_TRUE(strstr(buf, "\r\n\r\nlate\n") != NULL, buf);
	close(fd);
	ASSERT_EQ(stub_count(&stub.gone), gone0, "answered: not gone");
	/* A client that hangs up while parked is gone(). */
	fd = dial();
	if (!ASSERT_TRUE(fd >= 0, "dial") || !ASSERT_EQ(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1, "send"))
		return;
	usleep(200000);
	close(fd);
	ASSERT_TRUE(wait_count(&stub.gone, gone0 + 1), "gone after hang-up");
}

/* HTTPD_MAX_CONNS silent clients hold every slot: one more gets a 503 and is closed. */
static void test_conn_cap(void)
{
	int fds[HTTPD_MAX_CONNS], i, extra;
	char buf[1024];

	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		fds[i] = dial();
	usleep(300000);
	extra = dial();
	if (ASSERT_TRUE(extra >= 0, "dial")) {
		slurp(extra, buf, sizeof(buf), 3000);
		ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 503 ", 13), buf);
		close(extra);
	}
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	usleep(300000);
	/* Slots come back. */
	ask("GET /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), buf);
}

/*
 * A client that asks for 8 MiB and never reads: the server goes on
 * answering others at once, and drops it once it has made no progress
 * for HTTPD_STALL_TIMEOUT_S.
 */
static void test_slow_reader(void)
{
	static const char req[] = "GET /big HTTP/1.0\r\n\r\n";
	struct timespec t0, t1;
	int fd, small = 4096;
	char buf[1024];
	size_t got = 0;
	ssize_t n;
	double ms;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_TRUE(fd >= 0, "socket"))
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (!ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)), "connect"))
			goto out;
	}
	if (!ASSERT_EQ(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1, "send"))
		goto out;
	usleep(300000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ask("GET /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), "another client answered meanwhile");
	ASSERT_TRUE(ms < 1000, "at once");
	/* After the stall deadline (and the 100 ms poll), the rest never comes: read what there is. */
	sleep(HTTPD_STALL_TIMEOUT_S + 2);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		got += (size_t)n;
	ASSERT_TRUE(got < (8u << 20), "dropped before the whole body");
	ASSERT_TRUE(httpd__timeouts(srv) >= 1, "counted as a timeout");
out:
	close(fd);
}

static void test_port_in_use(void)
{
	char spec[32], err[128];
	int fd;

	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	fd = httpd__listen(spec, err, sizeof(err));
	ASSERT_EQ(fd, -EADDRINUSE, "second listener");
	ASSERT_TRUE(strstr(err, "in use") != NULL, err);
}

/* Every sample line belongs to a family announced by HELP and TYPE; counters end in _total. */
static void test_metrics_text(void)
{
	struct agent_metrics m = { .recording = true, .samples = 42 };
	static const int codes[] = { 200, 0 };
	static const uint64_t counts[] = { 7, 1 };
	struct metrics_http h = { .codes = codes, .counts = counts, .nr = 2, .timeouts = 3 };
	char *text, *line, *save, fam[128] = "", type[16] = "";
	size_t len, n = 0;

	m.bpf[BPFSYM_STAT_LOST_SAMPLES] = 5;
	if (!ASSERT_OK(metrics__format(&m, &h, &text, &len), "format"))
		return;
	ASSERT_TRUE(strstr(text, "\nbpfsym_samples_total 42\n") != NULL, "samples");
	ASSERT_TRUE(strstr(text, "\nbpfsym_lost_samples_total{cause=\"ring_buffer_full\"} 5\n") != NULL, "losses");
	ASSERT_TRUE(strstr(text, "\nbpfsym_http_requests_total{code=\"200\"} 7\n") != NULL, "codes");
	ASSERT_TRUE(strstr(text, "\nprocess_cpu_seconds_total ") != NULL, "cpu");
	ASSERT_TRUE(strstr(text, "\nprocess_resident_memory_bytes ") != NULL, "rss");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%127s", fam);
		} else if (!strncmp(line, "# TYPE ", 7)) {
			char f2[128];

			if (sscanf(line + 7, "%127s %15s", f2, type) != 2 || strcmp(f2, fam))
				ASSERT_TRUE(false, line);
			if (!strcmp(type, "counter") && !strstr(fam, "_total"))
				ASSERT_TRUE(false, fam);
		} else {
			size_t fl = strlen(fam);

			n++;
			if (strncmp(line, fam, fl) || (line[fl] != ' ' && line[fl] != '{'))
				ASSERT_TRUE(false, line);
		}
	}
	ASSERT_TRUE(n > 20, "samples lines");
	free(text);
}

int main(void)
{
	struct httpd_ops ops = { .request = stub_request, .wake = stub_wake, .gone = stub_gone };
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd;

	/* An ephemeral port (--listen wants 1..65535): bind 127.0.0.1:0 here, hand the socket over. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		TEST_SETUP_SKIP("no loopback TCP socket: %s", strerror(errno));
	} else {
		port = ntohs(a.sin_port);
		srv = httpd__new(fd, &ops);
		if (!srv || httpd__start(srv))
			TEST_SETUP_FAIL("starting the server: %s", strerror(errno));
	}
	RUN_TEST(test_answers);
	RUN_TEST(test_park_wake_gone);
	RUN_TEST(test_conn_cap);
	RUN_TEST(test_slow_reader);
	RUN_TEST(test_port_in_use);
	TEST_SETUP_CLEAR();
	RUN_TEST(test_metrics_text);
	httpd__free(srv);
	return TEST_EXIT();
}
