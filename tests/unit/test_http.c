// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The request parser (agent/http_parse.c) and the --listen address
 * parser: each case's status from RFC 9112's rules, the decoded path and
 * parameters, where the head ends, and that every proper prefix of a
 * good head is "partial", never a verdict.  The Host check
 * (agent/http_host.c): which Hosts name a server at which address.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "test.h"
#include <sys/un.h>

#include "agent/http_host.h"
#include "agent/http_parse.h"
#include "agent/httpd.h"

TEST_SUITE("http");

struct pcase {
	const char *in;
	int status;
};

static void test_status(void)
{
	static const struct pcase cases[] = {
		{ "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0 },
		{ "GET / HTTP/1.0\r\n\r\n", 0 },
		{ "HEAD /metrics HTTP/1.1\nHost: x\n\n", 0 },		/* bare LF */
		{ "\r\n\r\nGET / HTTP/1.0\r\n\r\n", 0 },		/* empty lines first */
		{ "GET / HTTP/1.1\r\n\r\n", 400 },			/* 1.1 without Host */
		{ "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400 },	/* two Hosts */
		{ "POST / HTTP/1.1\r\nHost: x\r\n\r\n", 405 },
		{ "DELETE /metrics HTTP/1.0\r\n\r\n", 405 },
		{ "get / HTTP/1.0\r\n\r\n", 405 },			/* methods are case-sensitive */
		{ "GET / HTTP/2.0\r\n\r\n", 505 },
		{ "GET / HTTP/1.2\r\n\r\n", 505 },
		{ "GET / HTTX/1.0\r\n\r\n", 400 },
		{ "GET / HTTP/1.10\r\n\r\n", 400 },
		{ "GET /  HTTP/1.0\r\n\r\n", 400 },			/* two spaces */
		{ " GET / HTTP/1.0\r\n\r\n", 400 },
		{ "GET\r\n\r\n", 400 },
		{ "GET x HTTP/1.0\r\n\r\n", 400 },			/* not origin-form */
		{ "GET http://a/ HTTP/1.0\r\n\r\n", 400 },
		{ "GET /a#b HTTP/1.0\r\n\r\n", 400 },
		{ "GET /a\x01 HTTP/1.0\r\n\r\n", 400 },
		{ "GET /a\xff HTTP/1.0\r\n\r\n", 400 },
		{ "GET /%zz HTTP/1.0\r\n\r\n", 400 },
		{ "GET /%4 HTTP/1.0\r\n\r\n", 400 },
		{ "GET /%00 HTTP/1.0\r\n\r\n", 400 },
		{ "GET /?a=%00 HTTP/1.0\r\n\r\n", 400 },
		{ "GET /?a=%g0 HTTP/1.0\r\n\r\n", 400 },
		{ "GET / HTTP/1.0\r\nNo colon\r\n\r\n", 400 },
		{ "GET / HTTP/1.0\r\n: empty name\r\n\r\n", 400 },
		{ "GET / HTTP/1.0\r\nBad name: v\r\n\r\n", 400 },
		{ "GET / HTTP/1.0\r\nA: b\r\n folded\r\n\r\n", 400 },	/* obs-fold */
		{ "GET / HTTP/1.0\r\nA: b\rc\r\n\r\n", 400 },		/* stray CR */
		{ "GET / HTTP/1.0\r\nA: b\x01\r\n\r\n", 400 },
		{ "GET / HTTP/1.0\r\nA: b\r\n", HTTP_PARTIAL },
		{ "GET / HTTP/1.0\r\n", HTTP_PARTIAL },
		{ "GET / HTTP/1.0", HTTP_PARTIAL },
		{ "", HTTP_PARTIAL },
		{ "\r\n", HTTP_PARTIAL },
	};
	struct http_req req;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = http_parse(cases[i].in, strlen(cases[i].in), &req);

		if (!ASSERT_EQ(st, cases[i].status, cases[i].in))
			return;
	}
}

static void test_path_and_params(void)
{
	static const char in[] = "GET /debug/pprof/pro%66ile?seconds=3&x=a+b%26c&&flag&seconds=9 HTTP/1.1\r\n"
				 "Host: 127.0.0.1:6060\r\nUser-Agent: t\r\n\r\nBODY";
	struct http_req req;

	if (!ASSERT_EQ(http_parse(in, strlen(in), &req), 0, "parse"))
		return;
	ASSERT_EQ((int)req.method, (int)HTTP_GET, "method");
	ASSERT_EQ(req.minor, 1, "minor");
	ASSERT_STREQ(req.path, "/debug/pprof/profile", "decoded path");
	ASSERT_EQ(req.head_len, strlen(in) - 4, "head ends before the body");
	ASSERT_EQ(req.nr_params, (size_t)4, "empty pairs skipped");
	ASSERT_STREQ(http_req__param(&req, "seconds"), "3", "the first seconds wins (Go's FormValue)");
	ASSERT_STREQ(http_req__param(&req, "x"), "a b&c", "+ and %26 decoded");
	ASSERT_STREQ(http_req__param(&req, "flag"), "", "a key without a value");
	ASSERT_NULL(http_req__param(&req, "nope"), "absent");
}

/* A good head cut anywhere is partial: the server must wait, not answer 400. */
static void test_prefixes_partial(void)
{
	static const char in[] = "\r\nGET /metrics?a=1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
	struct http_req req;
	size_t n;

	for (n = 0; n < strlen(in); n++)
		if (!ASSERT_EQ(http_parse(in, n, &req), HTTP_PARTIAL, "prefix"))
			return;
	ASSERT_EQ(http_parse(in, strlen(in), &req), 0, "whole");
}

static void test_limits(void)
{
	static char buf[3 * HTTP_HEAD_MAX];
	struct http_req req;
	size_t n, i;

	/* A target past HTTP_TARGET_MAX: 414 as soon as that is known, whole line or not. */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /");
	memset(buf + n, 'a', HTTP_TARGET_MAX + 10);
	n += HTTP_TARGET_MAX + 10;
	ASSERT_EQ(http_parse(buf, n, &req), 414, "long target, line not ended");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " HTTP/1.0\r\n\r\n");
	ASSERT_EQ(http_parse(buf, n, &req), 414, "long target");
	/* Exactly HTTP_TARGET_MAX is fine. */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /");
	memset(buf + n, 'a', HTTP_TARGET_MAX - 1);
	n += HTTP_TARGET_MAX - 1;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " HTTP/1.0\r\n\r\n");
	ASSERT_EQ(http_parse(buf, n, &req), 0, "target at the limit");
	/* Headers that never end: partial below HTTP_HEAD_MAX, 431 at it. */
	n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.0\r\nX: ");
	memset(buf + n, 'v', sizeof(buf) - n);
	ASSERT_EQ(http_parse(buf, HTTP_HEAD_MAX - 1, &req), HTTP_PARTIAL, "long header, below the cap");
	ASSERT_EQ(http_parse(buf, HTTP_HEAD_MAX, &req), 431, "long header at the cap");
	ASSERT_EQ(http_parse(buf, sizeof(buf), &req), 431, "past the cap");
	/* Too many header lines. */
	n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.0\r\n");
	for (i = 0; i <= HTTP_HEADERS_MAX; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "H%zu: v\r\n", i);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
	ASSERT_EQ(http_parse(buf, n, &req), 431, "too many headers");
	/* More parameters than kept: the rest ignored, not an error. */
	n = (size_t)snprintf(buf, sizeof(buf), "GET /?");
	for (i = 0; i < HTTP_PARAMS_MAX + 5; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "k%zu=v&", i);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " HTTP/1.0\r\n\r\n");
	if (ASSERT_EQ(http_parse(buf, n, &req), 0, "many params"))
		ASSERT_EQ(req.nr_params, (size_t)HTTP_PARAMS_MAX, "params kept");
}

static void test_listen_addr(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	static const char *bad[] = { "", "0", "65536", "-1", "0x50", "+80", "8o", "1.2.3.4:", ":80",
				     "localhost:80", "1.2.3:80", "[::1]80", "[::1]:", "::1:80", "[1.2.3.4]:80",
				     "123456" };
	char err[128];
	socklen_t len;
	size_t i;

	if (ASSERT_OK(httpd__parse_addr("6060", &ss, &len, err, sizeof(err)), "port only")) {
		ASSERT_EQ(in4->sin_family, AF_INET, "family");
		ASSERT_EQ(ntohs(in4->sin_port), 6060, "port");
		ASSERT_EQ(ntohl(in4->sin_addr.s_addr), 0x7f000001u, "default 127.0.0.1");
	}
	if (ASSERT_OK(httpd__parse_addr("0.0.0.0:80", &ss, &len, err, sizeof(err)), "any"))
		ASSERT_EQ(in4->sin_addr.s_addr, 0u, "0.0.0.0");
	if (ASSERT_OK(httpd__parse_addr("[::1]:65535", &ss, &len, err, sizeof(err)), "v6")) {
		ASSERT_EQ(in6->sin6_family, AF_INET6, "family");
		ASSERT_EQ(ntohs(in6->sin6_port), 65535, "port");
		ASSERT_TRUE(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr), "::1");
		ASSERT_EQ(len, (socklen_t)sizeof(*in6), "len");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ASSERT_EQ(httpd__parse_addr(bad[i], &ss, &len, err, sizeof(err)), -EINVAL, bad[i]);
		ASSERT_TRUE(err[0], "a reason");
	}
}

struct hcase {
	const char *host;
	const char *local;	/* httpd__parse_addr's form, or "unix" */
	bool ok;
};

/*
 * RFC 9110 7.2's uri-host [":" port] against the connection's local
 * address: the names no web page can own and the address itself pass, a
 * rebinding page's own name never does, whatever it is spelled like.
 */
static void test_host(void)
{
	static const struct hcase cases[] = {
		{ "127.0.0.1:6060", "127.0.0.1:6060", true },
		{ "127.0.0.1", "127.0.0.1:6060", true },		/* no port: the name is what counts */
		{ "localhost:6060", "127.0.0.1:6060", true },
		{ "LocalHost:6060", "127.0.0.1:6060", true },
		{ "localhost", "127.0.0.1:6060", true },
		{ "[::1]:6060", "127.0.0.1:6060", true },
		{ "[0:0::1]:6060", "[::1]:6060", true },		/* another spelling of ::1 */
		{ "10.1.2.3:6060", "10.1.2.3:6060", true },		/* bound to 0.0.0.0, reached at 10.1.2.3 */
		{ "10.1.2.3", "10.1.2.3:6060", true },
		{ "localhost:6060", "10.1.2.3:6060", true },
		{ "[fe80::1]:6060", "[fe80::1]:6060", true },
		{ "[FE80::1]", "[fe80::1]:6060", true },
		{ "evil.example:6060", "127.0.0.1:6060", false },	/* DNS rebinding */
		{ "evil.example", "127.0.0.1:6060", false },
		{ "127.0.0.1.nip.io:6060", "127.0.0.1:6060", false },
		{ "localhost.:6060", "127.0.0.1:6060", false },
		{ "localhost.evil.example:6060", "127.0.0.1:6060", false },
		{ "127.0.0.1:6061", "127.0.0.1:6060", false },		/* another port */
		{ "localhost:06060x", "127.0.0.1:6060", false },
		{ "localhost:", "127.0.0.1:6060", false },
		{ "localhost:606060", "127.0.0.1:6060", false },
		{ "127.1:6060", "127.0.0.1:6060", false },		/* inet_aton's forms: not an address here */
		{ "0x7f.0.0.1:6060", "127.0.0.1:6060", false },
		{ "2130706433:6060", "127.0.0.1:6060", false },
		{ "10.1.2.3:6060", "127.0.0.1:6060", false },		/* not this connection's address */
		{ "10.1.2.4:6060", "10.1.2.3:6060", false },
		{ "[::2]:6060", "[::1]:6060", false },
		{ "[::1%25lo]:6060", "[::1]:6060", false },		/* zone index */
		{ "[::1]6060", "[::1]:6060", false },
		{ "[::1", "[::1]:6060", false },
		{ "[10.1.2.3]:6060", "10.1.2.3:6060", false },
		{ "", "127.0.0.1:6060", false },
		{ ":6060", "127.0.0.1:6060", false },
		{ "evil.example", "unix", true },			/* no browser reaches a unix socket */
		{ "", "unix", true },
	};
	struct sockaddr_storage ss;
	struct sockaddr_un *sun = (struct sockaddr_un *)&ss;
	char err[128], what[96];
	socklen_t len;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hcase *c = &cases[i];

		if (!strcmp(c->local, "unix")) {
			memset(&ss, 0, sizeof(ss));
			sun->sun_family = AF_UNIX;
		} else if (!ASSERT_OK(httpd__parse_addr(c->local, &ss, &len, err, sizeof(err)), c->local)) {
			continue;
		}
		snprintf(what, sizeof(what), "Host '%s' at %s", c->host, c->local);
		ASSERT_EQ(http_host__ok(c->host, strlen(c->host), (struct sockaddr *)&ss), c->ok, what);
	}
}

/* The parser gives Host's value without its whitespace, pointing into the input. */
static void test_host_value(void)
{
	static const char in[] = "GET / HTTP/1.1\r\nA: b\r\nhOST: \t 127.0.0.1:80 \t\r\n\r\n";
	struct http_req req;

	if (!ASSERT_OK(http_parse(in, sizeof(in) - 1, &req), "parse"))
		return;
	ASSERT_TRUE(req.host >= in && req.host < in + sizeof(in), "in the input");
	ASSERT_EQ(req.host_len, strlen("127.0.0.1:80"), "length");
	ASSERT_TRUE(!strncmp(req.host, "127.0.0.1:80", req.host_len), "value");
	ASSERT_OK(http_parse("GET / HTTP/1.0\r\n\r\n", 18, &req), "1.0");
	ASSERT_NULL(req.host, "no Host: NULL");
}

int main(void)
{
	RUN_TEST(test_status);
	RUN_TEST(test_path_and_params);
	RUN_TEST(test_prefixes_partial);
	RUN_TEST(test_limits);
	RUN_TEST(test_listen_addr);
	RUN_TEST(test_host);
	RUN_TEST(test_host_value);
	return TEST_EXIT();
}
