// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the HTTP request parser (agent/http_parse.c), whose
 * input is whatever a client sends.  Besides not crashing, the contract:
 * a status is one of those documented; "partial" only below the head cap;
 * an accepted head ends in a line feed within the input and the cap, its
 * path starts with '/', its strings lie in the request's own buffer, and
 * the head alone parses the same as the head with anything after it.
 */
#define FUZZ_NAME "fuzz_http"
#include <string.h>

#include "fuzz_common.h"
#include "agent/http_parse.h"

static int in_buf(const struct http_req *r, const char *s)
{
	return s >= r->buf && s < r->buf + sizeof(r->buf) &&
	       memchr(s, '\0', (size_t)(r->buf + sizeof(r->buf) - s)) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_req req, again;
	const char *d = (const char *)data;
	size_t i;
	int st;

	if (size > 3 * HTTP_HEAD_MAX)
		return 0;
	st = http_parse(d, size, &req);
	if (st == HTTP_PARTIAL) {
		CHECK(size < HTTP_HEAD_MAX);
		return 0;
	}
	if (st) {
		CHECK(st == 400 || st == 405 || st == 414 || st == 431 || st == 505);
		return 0;
	}
	CHECK(req.method == HTTP_GET || req.method == HTTP_HEAD);
	CHECK(req.minor == 0 || req.minor == 1);
	CHECK(req.head_len > 0 && req.head_len <= size && req.head_len <= HTTP_HEAD_MAX);
	CHECK(d[req.head_len - 1] == '\n');
	CHECK(in_buf(&req, req.path) && req.path[0] == '/');
	CHECK(req.nr_params <= HTTP_PARAMS_MAX);
	for (i = 0; i < req.nr_params; i++) {
		CHECK(in_buf(&req, req.params[i].key));
		CHECK(in_buf(&req, req.params[i].val) || !req.params[i].val[0]);
	}
	CHECK(http_parse(d, req.head_len, &again) == 0);
	CHECK(again.head_len == req.head_len && !strcmp(again.path, req.path));
	CHECK(again.nr_params == req.nr_params);
	return 0;
}
