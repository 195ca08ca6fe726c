// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfmap: parse perf-PID.map lines as the file grows.
 *
 * The reader remembers the offset of the first byte not consumed (the start
 * of a partial line, or the end of the file) and reads from there with
 * pread(), so a file read again costs only its new bytes.  A line longer
 * than line_max is counted once and skipped as it arrives, without ever
 * being held whole.  A JIT that restarts under the same pid, or a process
 * that reuses one, truncates the file and writes it again: a file shorter
 * than the offset, or whose first bytes changed, is read again from 0 into
 * a fresh table.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/jit/perfmap.h"
#include "base/util.h"

#define DEF_LINE_MAX	((size_t)4096)
#define MAX_LINE_MAX	((size_t)1 << 20)
#define DEF_MAX_BYTES	((uint64_t)256 << 20)
#define READ_BUF	((size_t)64 * 1024)
/* Bytes at the start of the file remembered to notice a rewrite. */
#define FP_LEN		64

struct perfmap_reader {
	struct jitsyms_opts syms_opts;
	uint64_t max_bytes;
	size_t line_max;
	struct jitsyms *js;
	uint64_t off;		/* consumed: the next byte to parse */
	bool skipping;		/* off is inside an over-long line, counted already */
	char *buf;
	size_t buf_size;
	char fp[FP_LEN];	/* the file's first fp_len bytes, as consumed */
	size_t fp_len;
	struct perfmap_stats st;
};

static bool is_sep(char c)
{
	return c == ' ' || c == '\t';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * A hex number at *@pp (before @end), 0x optional, then at least one
 * separator, skipped.  0 or -EINVAL (not hex, overflow, no separator).
 */
static int parse_field(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d, n = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x' && hex_digit(p[2]) >= 0)
		p += 2;
	for (; p < end && (d = hex_digit(*p)) >= 0; p++, n++) {
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!n || p == end || !is_sep(*p))
		return -EINVAL;
	while (p < end && is_sep(*p))
		p++;
	*pp = p;
	*out = v;
	return 0;
}

/* One line [p, end), \n excluded.  0 (kept, dropped or bad: counted) or -ENOMEM. */
static int parse_line(struct jitsyms *js, const char *p, const char *end, size_t line_max,
		      struct perfmap_stats *st)
{
	uint64_t start, size;
	int err;

	if ((size_t)(end - p) > line_max || memchr(p, '\0', (size_t)(end - p)))
		goto bad;
	if (end > p && end[-1] == '\r')
		end--;
	if (end == p)
		return 0;	/* an empty line */
	if (parse_field(&p, end, &start) || parse_field(&p, end, &size))
		goto bad;
	/* The name is the rest; jitsyms refuses it empty, and a START + SIZE that wraps. */
	err = jitsyms__add(js, start, size, p, (size_t)(end - p));
	if (err == -ENOMEM)
		return err;
	if (err == -EINVAL)
		goto bad;
	st->lines++;
	if (err)
		st->dropped++;
	return 0;
bad:
	st->bad_lines++;
	return 0;
}

int perfmap__parse(struct jitsyms *js, const char *buf, size_t len, size_t line_max,
		   size_t *consumed, struct perfmap_stats *st)
{
	const char *p = buf, *end = buf + len, *nl;
	struct perfmap_stats dummy;
	int err;

	if (!st)
		st = &dummy;
	if (!line_max)
		line_max = DEF_LINE_MAX;
	*consumed = 0;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		err = parse_line(js, p, nl, line_max, st);
		if (err)
			return err;
		p = nl + 1;
		*consumed = (size_t)(p - buf);
	}
	return 0;
}

struct perfmap_reader *perfmap_reader__new(const struct perfmap_opts *opts)
{
	struct perfmap_reader *r;

	if (opts && opts->line_max > MAX_LINE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		r->syms_opts = opts->syms;
	r->max_bytes = opts && opts->max_bytes ? opts->max_bytes : DEF_MAX_BYTES;
	r->line_max = opts && opts->line_max ? opts->line_max : DEF_LINE_MAX;
	/* Room for a whole line of line_max and its \n, and many more. */
	r->buf_size = READ_BUF > 2 * (r->line_max + 2) ? READ_BUF : 2 * (r->line_max + 2);
	r->buf = malloc(r->buf_size);
	r->js = jitsyms__new(&r->syms_opts);
	if (!r->buf || !r->js) {
		perfmap_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void perfmap_reader__free(struct perfmap_reader *r)
{
	if (!r)
		return;
	jitsyms__free(r->js);
	free(r->buf);
	free(r);
}

struct jitsyms *perfmap_reader__syms(const struct perfmap_reader *r)
{
	return r->js;
}

const struct perfmap_stats *perfmap_reader__stats(const struct perfmap_reader *r)
{
	return &r->st;
}

/* Forget what was read: a fresh table, from offset 0.  0 or -ENOMEM (nothing changed). */
static int restart(struct perfmap_reader *r)
{
	struct jitsyms *js = jitsyms__new(&r->syms_opts);

	if (!js)
		return -ENOMEM;
	jitsyms__free(r->js);
	r->js = js;
	r->off = 0;
	r->skipping = false;
	r->fp_len = 0;
	r->st.bytes = 0;
	r->st.capped = false;
	r->st.restarts++;
	return 0;
}

/* Restart when the file of @size bytes is no longer the one consumed.  0 or -errno. */
static int check_same_file(struct perfmap_reader *r, int fd, uint64_t size)
{
	char head[FP_LEN];
	ssize_t n;

	if (size >= r->off && r->fp_len) {
		n = pread_full(fd, head, r->fp_len, 0);
		if (n < 0)
			return (int)n;
		if ((size_t)n == r->fp_len && !memcmp(head, r->fp, r->fp_len))
			return 0;
	} else if (size >= r->off) {
		return 0;
	}
	pr_debug("perfmap: file truncated or rewritten (%llu bytes, %llu consumed): reading it again\n",
		 (unsigned long long)size, (unsigned long long)r->off);
	return restart(r);
}

/* Parse what the buffer holds from offset r->off: @have bytes.  The bytes left unparsed, or -ENOMEM. */
static ssize_t consume(struct perfmap_reader *r, size_t have)
{
	const char *p = r->buf, *nl;
	size_t left = have, used;
	int err;

	if (r->skipping) {
		nl = memchr(p, '\n', left);
		if (!nl) {
			r->off += left;
			return 0;
		}
		used = (size_t)(nl + 1 - p);
		r->off += used;
		p += used;
		left -= used;
		r->skipping = false;
	}
	err = perfmap__parse(r->js, p, left, r->line_max, &used, &r->st);
	r->off += used;
	p += used;
	left -= used;
	if (err)
		return err;
	if (left > r->line_max) {
		/* Too long already, complete or not: count it once, skip it as it comes. */
		r->st.bad_lines++;
		r->skipping = true;
		r->off += left;
		left = 0;
	}
	memmove(r->buf, p, left);
	return (ssize_t)left;
}

int perfmap_reader__read(struct perfmap_reader *r, int fd)
{
	uint64_t size, limit, kept_before;
	size_t have = 0, want;
	struct stat sb;
	ssize_t n;
	int err;

	if (fstat(fd, &sb))
		return -errno;
	size = sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
	err = check_same_file(r, fd, size);
	if (err)
		return err;
	if (r->st.capped)
		return -E2BIG;
	kept_before = r->st.lines - r->st.dropped;
	limit = size < r->max_bytes ? size : r->max_bytes;
	/* Up to the size seen now: a file written as fast as we read still ends. */
	while (r->off + have < limit) {
		want = r->buf_size - have;
		if (want > limit - r->off - have)
			want = (size_t)(limit - r->off - have);
		n = pread(fd, r->buf + have, want, (off_t)(r->off + have));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;	/* truncated as we read: the next read sees it */
		n = consume(r, have + (size_t)n);
		if (n < 0) {
			err = (int)n;
			break;
		}
		have = (size_t)n;
	}
	r->st.bytes = r->off;
	if (!err && r->fp_len < FP_LEN && r->off > r->fp_len) {
		n = pread_full(fd, r->fp, r->off < FP_LEN ? (size_t)r->off : FP_LEN, 0);
		if (n < 0)
			err = (int)n;
		r->fp_len = n < 0 ? 0 : (size_t)n;
	}
	if (err)
		return err;
	if (size > r->max_bytes) {
		pr_debug("perfmap: stopped at the cap of %llu bytes\n", (unsigned long long)r->max_bytes);
		r->st.capped = true;
		return -E2BIG;
	}
	n = (ssize_t)(r->st.lines - r->st.dropped - kept_before);
	return n > INT_MAX ? INT_MAX : (int)n;
}
