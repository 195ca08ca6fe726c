// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http_parse: the request head (RFC 9112), strictly.  Lenient only where
 * the RFC asks servers to be (a bare LF ends a line; empty lines before
 * the request line are skipped), because every other leniency is a way
 * for two parsers to disagree about one request.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "agent/http_parse.h"

/* RFC 9110 tchar: what a method and a header name are made of. */
static bool is_tchar(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return true;
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * The end of the line starting at @p (before @end): the offset of its
 * '\n', or -1 when there is none yet.  *@text_len is the line without its
 * CRLF or LF.
 */
static long line_end(const char *p, const char *end, size_t *text_len)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	if (!nl)
		return -1;
	*text_len = (size_t)(nl - p);
	if (*text_len && nl[-1] == '\r')
		(*text_len)--;
	return nl - p;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Percent-decode @len bytes at @s into @out (NUL-terminated; room for
 * @len + 1 bytes), '+' as a space when @plus.  The number of bytes
 * written, or -1: a bad escape, or one that makes a NUL.
 */
static long pct_decode(const char *s, size_t len, char *out, bool plus)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (len - i < 3)
				return -1;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -1;
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[n++] = plus && s[i] == '+' ? ' ' : s[i];
		}
	}
	out[n] = '\0';
	return (long)n;
}

/* The query (@len bytes at @q, after '?') into req->params, decoded into @out. */
static int parse_query(struct http_req *req, const char *q, size_t len, char *out)
{
	static const char empty[] = "";
	const char *end = q + len;

	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q)), *eq;
		size_t plen = (size_t)((amp ? amp : end) - q);
		long n;

		eq = memchr(q, '=', plen);
		if (plen && req->nr_params < HTTP_PARAMS_MAX) {
			struct http_param *pr = &req->params[req->nr_params++];

			n = pct_decode(q, eq ? (size_t)(eq - q) : plen, out, true);
			if (n < 0)
				return 400;
			pr->key = out;
			out += n + 1;
			pr->val = empty;
			if (eq) {
				n = pct_decode(eq + 1, (size_t)(q + plen - eq - 1), out, true);
				if (n < 0)
					return 400;
				pr->val = out;
				out += n + 1;
			}
		}
		q += plen + (amp ? 1 : 0);
	}
	return 0;
}

/* The request target (origin-form): path and query.  0 or a status. */
static int parse_target(struct http_req *req, const char *t, size_t len)
{
	const char *qm;
	size_t i, plen;
	long n;

	if (len > HTTP_TARGET_MAX)
		return 414;
	if (!len || t[0] != '/')
		return 400;
	for (i = 0; i < len; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f || t[i] == '#')
			return 400;
	qm = memchr(t, '?', len);
	plen = qm ? (size_t)(qm - t) : len;
	n = pct_decode(t, plen, req->buf, false);
	if (n < 0)
		return 400;
	req->path = req->buf;
	if (!qm)
		return 0;
	return parse_query(req, qm + 1, len - plen - 1, req->buf + n + 1);
}

/* "HTTP/1.0" or "HTTP/1.1": 0; another HTTP/D.D: 505; anything else: 400. */
static int parse_version(struct http_req *req, const char *v, size_t len)
{
	if (len != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' ||
	    v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1' || v[7] > '1')
		return 505;
	req->minor = v[7] - '0';
	return 0;
}

/*
 * The request line (@len bytes at @l, no line end): METHOD SP TARGET SP
 * VERSION, single spaces.  0 or a status.
 */
static int parse_request_line(struct http_req *req, const char *l, size_t len)
{
	const char *sp1 = memchr(l, ' ', len), *sp2, *end = l + len;
	size_t i, mlen;
	int st;

	if (!sp1 || sp1 == l)
		return 400;
	mlen = (size_t)(sp1 - l);
	for (i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)l[i]))
			return 400;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2)
		return (size_t)(end - sp1 - 1) > HTTP_TARGET_MAX ? 414 : 400;
	st = parse_version(req, sp2 + 1, (size_t)(end - sp2 - 1));
	st = st ? st : parse_target(req, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (st)
		return st;
	if (mlen == 3 && !memcmp(l, "GET", 3))
		req->method = HTTP_GET;
	else if (mlen == 4 && !memcmp(l, "HEAD", 4))
		req->method = HTTP_HEAD;
	else
		return 405;
	return 0;
}

/*
 * One header line (no line end): NAME ":" OWS VALUE OWS, a token name,
 * a value of visible characters, spaces and tabs.  For Host, *@is_host
 * is set and req->host is its value without the OWS.
 */
static int parse_header(struct http_req *req, const char *l, size_t len, bool *is_host)
{
	const char *colon = memchr(l, ':', len);
	size_t i, nlen;

	if (!colon || colon == l)
		return 400;
	nlen = (size_t)(colon - l);
	for (i = 0; i < nlen; i++)
		if (!is_tchar((unsigned char)l[i]))
			return 400;
	for (i = nlen + 1; i < len; i++) {
		unsigned char c = (unsigned char)l[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 400;
	}
	*is_host = nlen == 4 && !strncasecmp(l, "Host", 4);
	if (*is_host) {
		const char *v = colon + 1, *end = l + len;

		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		req->host = v;
		req->host_len = (size_t)(end - v);
	}
	return 0;
}

/*
 * Not a whole head within @len bytes: a status when it can never become
 * one (too long, or a request line whose target is already too long),
 * else HTTP_PARTIAL.
 */
static int incomplete(const char *line, const char *end, size_t len)
{
	const char *sp1 = memchr(line, ' ', (size_t)(end - line)), *sp2;

	if (sp1 && !memchr(line, '\n', (size_t)(end - line))) {
		sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
		if ((size_t)((sp2 ? sp2 : end) - sp1 - 1) > HTTP_TARGET_MAX)
			return 414;
	}
	return len >= HTTP_HEAD_MAX ? 431 : HTTP_PARTIAL;
}

int http_parse(const char *data, size_t len, struct http_req *req)
{
	const char *p = data, *end, *line;
	bool host = false, is_host;
	size_t tl, nr = 0;
	long nl;
	int st;

	memset(req, 0, sizeof(*req) - sizeof(req->buf));
	req->buf[0] = '\0';
	end = data + (len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX);
	/* RFC 9112 2.2: empty lines before the request line are ignored. */
	while (p < end && (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')))
		p += *p == '\n' ? 1 : 2;
	line = p;
	nl = line_end(p, end, &tl);
	if (nl < 0)
		return incomplete(line, end, len);
	st = parse_request_line(req, p, tl);
	if (st)
		return st;
	for (p += nl + 1;; p += nl + 1) {
		nl = line_end(p, end, &tl);
		if (nl < 0)
			return incomplete(line, end, len);
		if (!tl)
			break;
		if (memchr(p, '\r', tl) || *p == ' ' || *p == '\t')
			return 400;	/* a stray CR; obs-fold (RFC 9112 5.2: reject) */
		if (++nr > HTTP_HEADERS_MAX)
			return 431;
		st = parse_header(req, p, tl, &is_host);
		if (st)
			return st;
		if (is_host && host)
			return 400;	/* RFC 9112 3.2: more than one Host */
		host |= is_host;
	}
	if (req->minor == 1 && !host)
		return 400;		/* RFC 9112 3.2: HTTP/1.1 requires Host */
	req->head_len = (size_t)(p + nl + 1 - data);
	return 0;
}

const char *http_req__param(const struct http_req *req, const char *key)
{
	size_t i;

	for (i = 0; i < req->nr_params; i++)
		if (!strcmp(req->params[i].key, key))
			return req->params[i].val;
	return NULL;
}
