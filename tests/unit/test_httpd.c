// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The server (agent/httpd.c) on a loopback port, with stub handlers, and
 * the metrics text (agent/metrics.c): the connection cap answers 503, a
 * malformed head gets its status and the connection ends, a parked
 * connection is answered from wake() and reported gone() when its client
 * hangs up, HEAD gets no body, a port in use is refused; the metrics text
 * is well-formed exposition format.  The limits: one source address holds
 * at most HTTPD_MAX_PER_PEER slots, heads dribbled into every slot make
 * room for a new client after the grace, a Host naming another server is
 * 421.  A unix socket: made 0600 (0660 in a group), never over a file or
 * through a symlink, a stale one of ours replaced, removed at the end; a
 * peer without the credentials is 403 (through the seam, httpd__adopt).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* A client from source address 127.0.0.@src (lo answers all of 127/8). */
static int dial_from(int src)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	me.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)src);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&me, sizeof(me)) ||
			connect(fd, (struct sockaddr *)&a, sizeof(a)))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int dial(void)
{
	return dial_from(1);
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

static size_t ask_from(int src, const char *req, char *buf, size_t cap)
{
	int fd = dial_from(src);
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

static size_t ask(const char *req, char *buf, size_t cap)
{
	return ask_from(1, req, buf, cap);
}

static void close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
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
	char buf[4096], req[128];

	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
	ask(req, buf, sizeof(buf));
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
	ASSERT_EQ(stub_count(&stub.gone), gone0, "answered, still open: not gone yet");
	close(fd);
	ASSERT_TRUE(wait_count(&stub.gone, gone0 + 1), "answered, then closed: gone");
	gone0++;
	/* A client that hangs up while parked is gone(). */
	fd = dial();
	if (!ASSERT_TRUE(fd >= 0, "dial") || !ASSERT_EQ(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1, "send"))
		return;
	usleep(200000);
	close(fd);
	ASSERT_TRUE(wait_count(&stub.gone, gone0 + 1), "gone after hang-up");
}

/*
 * HTTPD_MAX_CONNS silent clients from two addresses hold every slot: one
 * more, within the head grace, gets a 503 and is closed.
 */
static void test_conn_cap(void)
{
	int fds[HTTPD_MAX_CONNS], i, extra;
	char buf[1024];

	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		fds[i] = dial_from(2 + i % 2);
	usleep(300000);
	extra = dial_from(4);
	if (ASSERT_TRUE(extra >= 0, "dial")) {
		slurp(extra, buf, sizeof(buf), 3000);
		ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 503 ", 13), buf);
		ASSERT_TRUE(strstr(buf, "\r\n\r\n503 too many connections\n") != NULL, buf);
		close(extra);
	}
	close_all(fds, HTTPD_MAX_CONNS);
	usleep(300000);
	/* Slots come back. */
	ask("GET /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), buf);
}

/* One address holds HTTPD_MAX_PER_PEER slots at most; another is still answered. */
static void test_per_peer(void)
{
	int fds[HTTPD_MAX_PER_PEER], i, extra;
	uint64_t refused0 = httpd__refused(srv);
	char buf[1024];

	for (i = 0; i < HTTPD_MAX_PER_PEER; i++)
		fds[i] = dial_from(1);
	usleep(300000);
	extra = dial_from(1);
	if (ASSERT_TRUE(extra >= 0, "dial")) {
		slurp(extra, buf, sizeof(buf), 3000);
		ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 503 ", 13), buf);
		ASSERT_TRUE(strstr(buf, "too many connections from this client") != NULL, buf);
		close(extra);
	}
	ASSERT_EQ(httpd__refused(srv), refused0 + 1, "counted as refused");
	ask_from(2, "GET /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), "another address is answered");
	close_all(fds, HTTPD_MAX_PER_PEER);
	usleep(300000);
}

/*
 * Every slot holds a client dribbling its head (slowloris from two
 * addresses): past HTTPD_HEAD_GRACE_MS a new client takes the oldest one's
 * slot and is answered at once; the evicted one is closed.
 */
static void test_slow_heads(void)
{
	static const char part[] = "GET /hel";
	int fds[HTTPD_MAX_CONNS], i;
	uint64_t evicted0 = httpd__evicted(srv);
	struct timespec t0;
	char buf[1024];

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		fds[i] = dial_from(2 + i % 2);
		if (fds[i] >= 0 && write(fds[i], part, sizeof(part) - 1) < 0)
			ASSERT_TRUE(false, "send part of a head");
		usleep(5000);
	}
	usleep(HTTPD_HEAD_GRACE_MS * 1000 + 200000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ask_from(4, "GET /hello HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), buf);
	ASSERT_TRUE(ms_since(&t0) < 500, "answered at once");
	ASSERT_EQ(httpd__evicted(srv), evicted0 + 1, "one head evicted");
	ASSERT_EQ(slurp(fds[0], buf, sizeof(buf), 1000), (size_t)0, "the oldest is the one closed");
	close_all(fds, HTTPD_MAX_CONNS);
	usleep(300000);
}

/* Host names this server, or the answer is 421; none at all in HTTP/1.0 is fine. */
static void test_host(void)
{
	char buf[1024], req[160];

	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: evil.example:%u\r\n\r\n", port);
	ask(req, buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 421 Misdirected Request\r\n", 34), buf);
	ASSERT_TRUE(strstr(buf, "Content-Type: text/plain") && strstr(buf, "\r\n\r\n421 "), "a text body");
	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port + 1);
	ask(req, buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 421 ", 13), "another port");
	snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nHost: localhost:%u\r\n\r\n", port);
	ask(req, buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), buf);
	ask("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), "the address without a port");
	ask("GET /hello HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 400 ", 13), "HTTP/1.1 without Host");
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
	struct httpd_listener l;
	char spec[32], err[128];

	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	ASSERT_EQ(httpd__listen(spec, HTTPD_NO_GROUP, &l, err, sizeof(err)), -EADDRINUSE, "second listener");
	ASSERT_TRUE(strstr(err, "in use") != NULL, err);
}

/* One request over unix socket @path; the answer into @buf. */
static size_t ask_unix(const char *path, const char *req, char *buf, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = 0;
	int fd;

	buf[0] = '\0';
	if (strlen(path) >= sizeof(a.sun_path))
		return 0;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)) && write(fd, req, strlen(req)) > 0)
		n = slurp(fd, buf, cap, 3000);
	if (fd >= 0)
		close(fd);
	return n;
}

/* What is at @path: its mode's type and permission bits, or 0 when nothing is. */
static unsigned mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : (unsigned)st.st_mode;
}

/* unix:PATH over what may already be there: a file, a symlink, a stale socket of ours. */
static void test_unix_make(const char *dir)
{
	char path[128], spec[160], target[128], err[256], buf[8] = "";
	struct httpd_listener l;
	int fd;

	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(spec, sizeof(spec), "unix:%s", path);
	snprintf(target, sizeof(target), "%s/target", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL | O_CLOEXEC, 0644);
	if (ASSERT_TRUE(fd >= 0 && write(fd, "keep", 4) == 4, "a file at PATH"))
		close(fd);
	ASSERT_EQ(httpd__listen(spec, HTTPD_NO_GROUP, &l, err, sizeof(err)), -EEXIST, "over a file");
	ASSERT_TRUE(strstr(err, "not a socket") != NULL, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0 && read(fd, buf, sizeof(buf)) == 4 && !memcmp(buf, "keep", 4), "the file untouched");
	if (fd >= 0)
		close(fd);
	unlink(path);
	ASSERT_OK(symlink(target, path), "a dangling symlink at PATH");
	ASSERT_EQ(httpd__listen(spec, HTTPD_NO_GROUP, &l, err, sizeof(err)), -EEXIST, "through a symlink");
	ASSERT_TRUE(S_ISLNK(mode_of(path)) && !mode_of(target), "neither the link nor its target made");
	unlink(path);
	/* A previous run's socket (bound, closed: nobody listens): replaced. */
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memcpy(a.sun_path, path, strlen(path) + 1);	/* < 108: the directory is /tmp/test_httpd.XXXXXX */
		ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof(a)), "a stale socket");
		close(fd);
	}
	if (ASSERT_OK(httpd__listen(spec, HTTPD_NO_GROUP, &l, err, sizeof(err)), err)) {
		struct httpd_listener l2;

		ASSERT_EQ(mode_of(path), (unsigned)(S_IFSOCK | 0600), "a socket, 0600");
		ASSERT_EQ(httpd__listen(spec, HTTPD_NO_GROUP, &l2, err, sizeof(err)), -EADDRINUSE, "a live one");
		ASSERT_TRUE(S_ISSOCK(mode_of(path)), "the live one kept");
		httpd_listener__close(&l);
		ASSERT_EQ(mode_of(path), 0u, "removed at the end");
	}
	if (ASSERT_OK(httpd__listen(spec, getgid(), &l, err, sizeof(err)), err)) {
		struct stat st;

		ASSERT_TRUE(!lstat(path, &st) && st.st_mode == (S_IFSOCK | 0660) && st.st_gid == getgid(),
			    "with a group: 0660 in it");
		httpd_listener__close(&l);
	}
	ASSERT_EQ(httpd__listen("127.0.0.1:1", getgid(), &l, err, sizeof(err)), -EINVAL, "a group on TCP");
}

/* A server on a unix socket: any Host, but HTTP/1.1 needs one; the file goes with the server. */
static void test_unix_serve(const char *dir)
{
	struct httpd_ops ops = { .request = stub_request, .wake = stub_wake, .gone = stub_gone };
	char path[128], spec[160], err[256], buf[1024];
	struct httpd_listener l;
	struct httpd *u;

	snprintf(path, sizeof(path), "%s/serve.sock", dir);
	snprintf(spec, sizeof(spec), "unix:%s", path);
	if (!ASSERT_OK(httpd__listen(spec, HTTPD_NO_GROUP, &l, err, sizeof(err)), err))
		return;
	u = httpd__new(&l, &ops);
	if (!ASSERT_OK_PTR(u, "httpd__new") || !ASSERT_OK(httpd__start(u), "start")) {
		httpd__free(u);
		return;
	}
	ask_unix(path, "GET /hello HTTP/1.1\r\nHost: evil.example:1\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 200 ", 13), buf);
	ask_unix(path, "GET /hello HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	ASSERT_TRUE(!strncmp(buf, "HTTP/1.1 400 ", 13), "HTTP/1.1 without Host");
	httpd__free(u);
	ASSERT_EQ(mode_of(path), 0u, "removed by httpd__free");
}

static void test_unix(void)
{
	char dir[] = "/tmp/test_httpd.XXXXXX";

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	test_unix_make(dir);
	test_unix_serve(dir);
	rmdir(dir);
}

/* The seam: a server without a thread, one client on a socketpair, turned by hand. */
static void test_seam(void)
{
	struct httpd_ops ops = { .request = stub_request, .wake = stub_wake, .gone = stub_gone };
	struct httpd_listener none = { .fd = -1, .group = HTTPD_NO_GROUP };
	struct sockaddr_in *in4;
	struct httpd_peer peer = { .allowed = true };
	char buf[1024];
	struct httpd *h;
	int sv[2], i;

	h = httpd__new(&none, &ops);
	if (!ASSERT_OK_PTR(h, "httpd__new"))
		return;
	/* As a server on 0.0.0.0:80 reached at 10.1.2.3. */
	in4 = (struct sockaddr_in *)&peer.local;
	in4->sin_family = AF_INET;
	in4->sin_port = htons(80);
	in4->sin_addr.s_addr = htonl(0x0a010203);
	peer.key[0] = AF_INET;
	if (ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), "socketpair")) {
		ASSERT_OK(httpd__adopt(h, sv[0], &peer), "adopt");
		static const char req[] = "GET /hello HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n";

		ASSERT_TRUE(write(sv[1], req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1, "send");
		for (i = 0; i < 4; i++)
			httpd__turn(h, 1000, 0);
		ASSERT_TRUE(read(sv[1], buf, sizeof(buf)) > 13 && !strncmp(buf, "HTTP/1.1 200 ", 13), "answered");
		close(sv[1]);
	}
	peer.allowed = false;
	if (ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), "socketpair")) {
		ASSERT_OK(httpd__adopt(h, sv[0], &peer), "adopt");
		for (i = 0; i < 2; i++)
			httpd__turn(h, 2000, 0);
		memset(buf, 0, sizeof(buf));
		ASSERT_TRUE(read(sv[1], buf, sizeof(buf) - 1) > 13 && !strncmp(buf, "HTTP/1.1 403 ", 13), buf);
		close(sv[1]);
	}
	httpd__free(h);
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
		struct httpd_listener l = { .fd = fd, .family = AF_INET, .group = HTTPD_NO_GROUP };

		srv = httpd__new(&l, &ops);
		if (!srv || httpd__start(srv))
			TEST_SETUP_FAIL("starting the server: %s", strerror(errno));
	}
	RUN_TEST(test_answers);
	RUN_TEST(test_park_wake_gone);
	RUN_TEST(test_conn_cap);
	RUN_TEST(test_per_peer);
	RUN_TEST(test_slow_heads);
	RUN_TEST(test_host);
	RUN_TEST(test_slow_reader);
	RUN_TEST(test_port_in_use);
	TEST_SETUP_CLEAR();
	RUN_TEST(test_unix);
	RUN_TEST(test_seam);
	RUN_TEST(test_metrics_text);
	httpd__free(srv);
	return TEST_EXIT();
}
