/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http_host: whether a request's Host names this server, the defence
 * against DNS rebinding.  A web page can make a browser on the host send
 * requests to 127.0.0.1:PORT under a name the page's owner controls (a
 * name that first resolved to their server, then to 127.0.0.1); the
 * browser then lets the page read the answers, every process's stacks.
 * What it cannot change is the Host header: the browser sends the page's
 * name.  So an endpoint that answers only Hosts that name it (its own
 * address, or the loopback names no page can own) is out of the page's
 * reach.  A pure function, fuzzed through tests/fuzz/fuzz_httpconn.c.
 */
#ifndef BPFSYM_HTTP_HOST_H
#define BPFSYM_HTTP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * Whether @host (@len bytes: a Host header's value, without its OWS)
 * names the server whose end of the connection is @local: the address of
 * @local itself (an IPv4 address, or an IPv6 one in brackets, any
 * spelling inet_pton takes), "localhost" (any case), 127.0.0.1 or [::1];
 * followed by nothing or by ":" and @local's port.  A unix socket's
 * @local (AF_UNIX) takes any Host: no browser can reach one.  Anything
 * else (another name, another port, an empty Host, a zone index, trailing
 * dots, other families) is false.
 */
bool http_host__ok(const char *host, size_t len, const struct sockaddr *local);

#endif /* BPFSYM_HTTP_HOST_H */
