// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http_host: a Host header's value (RFC 9110 7.2: uri-host [":" port])
 * against the connection's local address.  Strict: an address must parse
 * whole with inet_pton (no "127.1", no octal), a port is decimal digits.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "agent/http_host.h"

/* @len bytes at @p, decimal digits only, are the port @want. */
static bool port_is(const char *p, size_t len, uint16_t want)
{
	unsigned long v = 0;
	size_t i;

	if (!len || len > 5)
		return false;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	return v == want;
}

/* inet_pton of @len bytes at @s (not NUL-terminated) into @dst; 1 on success. */
static int pton(int af, const char *s, size_t len, void *dst)
{
	char buf[INET6_ADDRSTRLEN];

	if (!len || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return inet_pton(af, buf, dst);
}

/* "[IPV6]" or "[IPV6]:PORT": loopback, or @local's own IPv6 address. */
static bool v6_ok(const char *host, size_t len, const struct sockaddr *local, uint16_t port)
{
	const char *rb = memchr(host, ']', len), *rest;
	size_t rlen;
	struct in6_addr a;

	if (!rb)
		return false;
	rest = rb + 1;
	rlen = (size_t)(host + len - rest);
	if (rlen && (rest[0] != ':' || !port_is(rest + 1, rlen - 1, port)))
		return false;
	if (pton(AF_INET6, host + 1, (size_t)(rb - host - 1), &a) != 1)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&a))
		return true;
	return local->sa_family == AF_INET6 &&
	       !memcmp(&a, &((const struct sockaddr_in6 *)local)->sin6_addr, sizeof(a));
}

bool http_host__ok(const char *host, size_t len, const struct sockaddr *local)
{
	const char *colon;
	struct in_addr a;
	uint16_t port;
	size_t nlen;

	if (local->sa_family == AF_UNIX)
		return true;
	if (local->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)local)->sin_port);
	else if (local->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)local)->sin6_port);
	else
		return false;
	if (len && host[0] == '[')
		return v6_ok(host, len, local, port);
	colon = memchr(host, ':', len);
	nlen = colon ? (size_t)(colon - host) : len;
	if (colon && !port_is(colon + 1, len - nlen - 1, port))
		return false;
	if (nlen == 9 && !strncasecmp(host, "localhost", 9))
		return true;
	if (pton(AF_INET, host, nlen, &a) != 1)
		return false;
	if (a.s_addr == htonl(INADDR_LOOPBACK))
		return true;
	return local->sa_family == AF_INET &&
	       a.s_addr == ((const struct sockaddr_in *)local)->sin_addr.s_addr;
}
