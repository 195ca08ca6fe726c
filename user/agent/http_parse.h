/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http_parse: an HTTP/1.x request head, as bytes from an untrusted client,
 * into method, path and query parameters.  A pure function: no allocation,
 * no I/O, bounded work per byte, so the fuzz target (tests/fuzz/fuzz_http.c)
 * covers all of it.  Only what the pull endpoint needs (GET and HEAD of a
 * path with a query); anything else is refused with the status to answer.
 */
#ifndef BPFSYM_HTTP_PARSE_H
#define BPFSYM_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX		8192	/* request line and headers; past it: 431 (or 414) */
#define HTTP_TARGET_MAX		2048	/* the request target; past it: 414 */
#define HTTP_HEADERS_MAX	64	/* header lines; past them: 431 */
#define HTTP_PARAMS_MAX		16	/* query parameters kept; later ones are ignored */

/* http_parse()'s "not a whole head yet": read more, unless HTTP_HEAD_MAX bytes are there. */
#define HTTP_PARTIAL		(-1)

enum http_method { HTTP_GET = 1, HTTP_HEAD = 2 };

struct http_param {
	const char *key, *val;	/* NUL-terminated, percent-decoded, in http_req.buf */
};

struct http_req {
	enum http_method method;
	int minor;			/* HTTP/1.minor: 0 or 1 */
	size_t head_len;		/* bytes of the head, its blank line included */
	const char *host;		/* Host's value without OWS, in the caller's data; NULL: none */
	size_t host_len;
	const char *path;		/* percent-decoded, starts with '/', in buf */
	struct http_param params[HTTP_PARAMS_MAX];
	size_t nr_params;
	char buf[2 * HTTP_TARGET_MAX + 2];	/* the decoded path and parameters */
};

/*
 * Parse the request head at the start of @data (@len bytes; lines end with
 * CRLF or a bare LF).  Returns 0 with @req filled when the head is whole
 * and acceptable; HTTP_PARTIAL when the head has not ended within @len
 * bytes and could still be valid (the caller reads more, up to
 * HTTP_HEAD_MAX); or the status code to answer: 400 (malformed: bad
 * request line, bad header line, bad percent-escape or NUL in the target,
 * an HTTP/1.1 request without Host), 405 (a method other than GET or
 * HEAD; req->method is 0), 414 (target past HTTP_TARGET_MAX), 431 (head
 * past HTTP_HEAD_MAX or more than HTTP_HEADERS_MAX headers), 505 (not
 * HTTP/1.0 or 1.1).  Bytes after the head (a body) are not looked at.
 * req->host points into @data: valid as long as @data is.
 */
int http_parse(const char *data, size_t len, struct http_req *req);

/* The value of the first query parameter named @key, or NULL. */
const char *http_req__param(const struct http_req *req, const char *key);

#endif /* BPFSYM_HTTP_PARSE_H */
