// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jitdump: read jit-PID.dump records as the file grows.
 *
 * Records carry their code, so a file can be hundreds of MB of which we
 * need a few bytes a record.  Reads go through a window: one pread() of up
 * to a window's bytes fills it, and the next records are taken from it
 * while they fit; a record whose code overflows the window is skipped by
 * its total_size and the window refilled at the next one.
 *
 * The reader remembers the offset of the next record and the header's
 * bytes: a file shorter than that offset, or with another header, was
 * truncated or rewritten and is read again from 0 into a fresh table.
 *
 * MOVE names code by the code_index of its LOAD, so the name of every
 * index is kept (a pointer into the table's names), in a bounded hash.
 */
#include <byteswap.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/util.h"
#include "symbolize/jit/jitdump.h"

#define DEF_NAME_MAX	((size_t)4096)
#define MAX_NAME_MAX	((size_t)1 << 20)
#define DEF_MAX_BYTES	((uint64_t)256 << 20)
#define DEF_MAX_INDEXES	((size_t)1 << 20)
#define WINDOW		((size_t)64 * 1024)

/* Body sizes, after the record header. */
#define LOAD_FIXED	40	/* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED	48	/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */

/* code_index -> name. */
struct idx_ent {
	uint64_t key;
	const char *name;
};

struct idxmap {
	struct htab tab;	/* hash of the key -> index in v + 1 */
	struct idx_ent *v;
	size_t nr, cap;
};

struct jitdump_reader {
	struct jitsyms_opts syms_opts;
	uint64_t max_bytes;
	size_t name_max, max_indexes;
	struct jitsyms *js;
	struct idxmap idx;

	uint64_t off;		/* the next record; 0 before the header */
	bool have_header;
	struct jitdump_header hdr;
	uint8_t fp[JITDUMP_HEADER_SIZE];	/* the header's bytes, once seen */
	bool have_fp;

	uint8_t *win;		/* bytes [win_off, win_off + win_len) of the file */
	size_t win_size, win_len;
	uint64_t win_off;

	struct jitdump_stats st;
};

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- code_index -> name ---- */

static bool idx_eq(const void *ctx, const void *key, uint64_t val)
{
	return ((const struct idxmap *)ctx)->v[val - 1].key == *(const uint64_t *)key;
}

static struct idx_ent *idx_find(const struct idxmap *m, uint64_t key)
{
	uint64_t v = htab__find(&m->tab, hash_u64(0, key), idx_eq, m, &key);

	return v ? &m->v[v - 1] : NULL;
}

static const char *idx_get(const struct idxmap *m, uint64_t key)
{
	const struct idx_ent *e = idx_find(m, key);

	return e ? e->name : NULL;
}

/* Name index @key @name.  0, -E2BIG (@max indexes kept already) or -ENOMEM. */
static int idx_put(struct idxmap *m, uint64_t key, const char *name, size_t max)
{
	struct idx_ent *e = idx_find(m, key), *v;
	size_t ncap;

	if (e) {	/* a JIT that reuses an index: the later LOAD wins */
		e->name = name;
		return 0;
	}
	if (m->nr >= max)
		return -E2BIG;
	if (m->nr == m->cap) {
		ncap = m->cap ? m->cap * 2 : 256;
		v = realloc(m->v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = ncap;
	}
	if (htab__add(&m->tab, hash_u64(0, key), m->nr + 1))
		return -ENOMEM;
	m->v[m->nr++] = (struct idx_ent){ key, name };
	return 0;
}

static void idx_free(struct idxmap *m)
{
	htab__free(&m->tab);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ---- the reader ---- */

struct jitdump_reader *jitdump_reader__new(const struct jitdump_opts *opts)
{
	struct jitdump_reader *r;

	if (opts && opts->name_max > MAX_NAME_MAX) {
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
	r->name_max = opts && opts->name_max ? opts->name_max : DEF_NAME_MAX;
	r->max_indexes = opts && opts->max_indexes ? opts->max_indexes : DEF_MAX_INDEXES;
	/* A LOAD's fields and longest name fit, with room for many small records. */
	r->win_size = 2 * (JITDUMP_RECORD_HEADER_SIZE + LOAD_FIXED + r->name_max + 1);
	if (r->win_size < WINDOW)
		r->win_size = WINDOW;
	r->win = malloc(r->win_size);
	r->js = jitsyms__new(&r->syms_opts);
	if (!r->win || !r->js) {
		jitdump_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void jitdump_reader__free(struct jitdump_reader *r)
{
	if (!r)
		return;
	jitsyms__free(r->js);
	idx_free(&r->idx);
	free(r->win);
	free(r);
}

struct jitsyms *jitdump_reader__syms(const struct jitdump_reader *r)
{
	return r->js;
}

const struct jitdump_header *jitdump_reader__header(const struct jitdump_reader *r)
{
	return r->have_header ? &r->hdr : NULL;
}

const struct jitdump_stats *jitdump_reader__stats(const struct jitdump_reader *r)
{
	return &r->st;
}

/*
 * Point *@out at the file's bytes [@off, @off + @len), @len <= win_size,
 * all below @limit: from the window, else refilled from @off.
 * 0, -EAGAIN (the file shrank since fstat: try on the next read) or -errno.
 */
static int window_get(struct jitdump_reader *r, int fd, uint64_t off, size_t len, uint64_t limit,
		      const uint8_t **out)
{
	size_t want = r->win_size;
	ssize_t n;

	if (off >= r->win_off && off + len <= r->win_off + r->win_len) {
		*out = r->win + (off - r->win_off);
		return 0;
	}
	if (want > limit - off)
		want = (size_t)(limit - off);
	r->win_len = 0;
	n = pread_full(fd, r->win, want, off);
	if (n < 0)
		return (int)n;
	r->win_off = off;
	r->win_len = (size_t)n;
	if ((size_t)n < len)
		return -EAGAIN;
	*out = r->win;
	return 0;
}

/* Forget what was read: a fresh table, from offset 0.  0 or -ENOMEM (nothing changed). */
static int restart(struct jitdump_reader *r)
{
	struct jitsyms *js = jitsyms__new(&r->syms_opts);

	if (!js)
		return -ENOMEM;
	jitsyms__free(r->js);
	r->js = js;
	idx_free(&r->idx);
	r->off = 0;
	r->have_header = false;
	r->have_fp = false;
	r->st.bytes = 0;
	r->st.closed = false;
	r->st.stopped = 0;
	r->st.restarts++;
	return 0;
}

/* Restart when the file of @size bytes is no longer the one consumed.  0 or -errno. */
static int check_same_file(struct jitdump_reader *r, int fd, uint64_t size)
{
	uint8_t head[JITDUMP_HEADER_SIZE];
	ssize_t n;

	if (!r->have_fp)
		return 0;
	if (size >= r->off) {
		n = pread_full(fd, head, sizeof(head), 0);
		if (n < 0)
			return (int)n;
		if ((size_t)n == sizeof(head) && !memcmp(head, r->fp, sizeof(head)))
			return 0;
	}
	pr_debug("jitdump: file truncated or rewritten (%llu bytes, %llu consumed): reading it again\n",
		 (unsigned long long)size, (unsigned long long)r->off);
	return restart(r);
}

static int stop(struct jitdump_reader *r, int err)
{
	r->st.stopped = err;
	pr_debug("jitdump: stopped at offset %llu: %s\n", (unsigned long long)r->off, strerror(-err));
	return err;
}

/* The file header, when the file holds it whole.  0 (read, or not yet there) or -errno. */
static int read_header(struct jitdump_reader *r, int fd, uint64_t limit)
{
	const uint8_t *p;
	uint32_t magic;
	int err;

	if (limit < JITDUMP_HEADER_SIZE)
		return 0;
	err = window_get(r, fd, 0, JITDUMP_HEADER_SIZE, limit, &p);
	if (err)
		return err == -EAGAIN ? 0 : err;
	memcpy(r->fp, p, sizeof(r->fp));
	r->have_fp = true;
	magic = get_u32(p);
	if (magic == bswap_32(JITDUMP_MAGIC))
		return stop(r, -EPROTONOSUPPORT);
	if (magic != JITDUMP_MAGIC)
		return stop(r, -EINVAL);
	r->hdr.version = get_u32(p + 4);
	r->hdr.total_size = get_u32(p + 8);
	r->hdr.elf_mach = get_u32(p + 12);
	r->hdr.pid = get_u32(p + 20);
	r->hdr.timestamp = get_u64(p + 24);
	r->hdr.flags = get_u64(p + 32);
	if (r->hdr.version != JITDUMP_VERSION)
		return stop(r, -EPROTONOSUPPORT);
	if (r->hdr.total_size < JITDUMP_HEADER_SIZE)
		return stop(r, -EINVAL);
	/* A longer header (a later revision's fields) is skipped whole, once there. */
	if (r->hdr.total_size > limit)
		return 0;
	r->have_header = true;
	r->off = r->hdr.total_size;
	return 0;
}

/* Of jitsyms calls: the error to return (-ENOMEM), after counting the others. */
static int count_err(struct jitdump_reader *r, int err)
{
	if (err == -E2BIG)
		r->st.dropped++;
	else if (err == -EINVAL)
		r->st.bad_records++;
	return err == -ENOMEM ? err : 0;
}

/* The JIT_CODE_LOAD of @total bytes at r->off.  1: a symbol added, 0, or -errno. */
static int read_load(struct jitdump_reader *r, int fd, uint32_t total, uint64_t limit)
{
	uint64_t body = total - JITDUMP_RECORD_HEADER_SIZE, code_addr, code_size, code_index;
	size_t scan, nlen;
	const uint8_t *p;
	const char *name;
	const void *nul;
	int err;

	if (body < LOAD_FIXED + 2)
		goto bad;
	body -= LOAD_FIXED;
	err = window_get(r, fd, r->off + JITDUMP_RECORD_HEADER_SIZE, LOAD_FIXED, limit, &p);
	if (err)
		return err;
	code_addr = get_u64(p + 16);
	code_size = get_u64(p + 24);
	code_index = get_u64(p + 32);
	/* The code is at the end of the record; the name, and any padding, before it. */
	if (code_size > body - 2 || code_size > UINT64_MAX - code_addr)
		goto bad;
	scan = body - code_size;
	if (scan > r->name_max + 1)
		scan = r->name_max + 1;
	err = window_get(r, fd, r->off + JITDUMP_RECORD_HEADER_SIZE, LOAD_FIXED + scan, limit, &p);
	if (err)
		return err;
	p += LOAD_FIXED;
	nul = memchr(p, '\0', scan);
	if (!nul || nul == p)
		goto bad;
	nlen = (size_t)((const uint8_t *)nul - p);
	r->st.loads++;
	name = jitsyms__store_name(r->js, (const char *)p, nlen);
	if (!name)
		return count_err(r, -errno);
	err = idx_put(&r->idx, code_index, name, r->max_indexes);
	if (err == -ENOMEM)
		return err;
	if (err)
		r->st.dropped++;
	err = jitsyms__add_stored(r->js, code_addr, code_size, name);
	if (err)
		return count_err(r, err);
	return code_size ? 1 : 0;
bad:
	r->st.bad_records++;
	return 0;
}

/* The JIT_CODE_MOVE of @total bytes at r->off.  1: a symbol added, 0, or -errno. */
static int read_move(struct jitdump_reader *r, int fd, uint32_t total, uint64_t limit)
{
	uint64_t new_addr, code_size, code_index;
	const uint8_t *p;
	const char *name;
	int err;

	if (total < JITDUMP_RECORD_HEADER_SIZE + MOVE_FIXED) {
		r->st.bad_records++;
		return 0;
	}
	err = window_get(r, fd, r->off + JITDUMP_RECORD_HEADER_SIZE, MOVE_FIXED, limit, &p);
	if (err)
		return err;
	new_addr = get_u64(p + 24);
	code_size = get_u64(p + 32);
	code_index = get_u64(p + 40);
	if (code_size > UINT64_MAX - new_addr) {
		r->st.bad_records++;
		return 0;
	}
	name = idx_get(&r->idx, code_index);
	if (!name) {
		r->st.unknown_moves++;
		return 0;
	}
	r->st.moves++;
	err = jitsyms__add_stored(r->js, new_addr, code_size, name);
	if (err)
		return count_err(r, err);
	return code_size ? 1 : 0;
}

/* Every complete record below @limit.  The symbols added, or -errno. */
static int read_records(struct jitdump_reader *r, int fd, uint64_t limit, int *added)
{
	const uint8_t *p;
	uint32_t id, total;
	int err;

	while (r->off + JITDUMP_RECORD_HEADER_SIZE <= limit) {
		err = window_get(r, fd, r->off, JITDUMP_RECORD_HEADER_SIZE, limit, &p);
		if (err)
			return err;
		id = get_u32(p);
		total = get_u32(p + 4);
		if (total < JITDUMP_RECORD_HEADER_SIZE)
			return stop(r, -EBADMSG);
		if (r->off + total > r->max_bytes)
			return stop(r, -E2BIG);
		if (r->off + total > limit)
			return 0;	/* the last record, partly written */
		switch (id) {
		case JIT_CODE_LOAD:
			err = read_load(r, fd, total, limit);
			break;
		case JIT_CODE_MOVE:
			err = read_move(r, fd, total, limit);
			break;
		case JIT_CODE_CLOSE:
			r->st.closed = true;
			/* fallthrough */
		default:
			r->st.other++;
			err = 0;
			break;
		}
		if (err < 0)
			return err;
		if (*added < INT_MAX)
			*added += err;
		r->off += total;
	}
	return 0;
}

int jitdump_reader__read(struct jitdump_reader *r, int fd)
{
	uint64_t size, limit;
	struct stat sb;
	int err, added = 0;

	if (fstat(fd, &sb))
		return -errno;
	size = sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
	/* The file may have changed since the last read: nothing cached is trusted. */
	r->win_len = 0;
	err = check_same_file(r, fd, size);
	if (err)
		return err;
	if (r->st.stopped)
		return r->st.stopped;
	limit = size < r->max_bytes ? size : r->max_bytes;
	if (!r->have_header) {
		err = read_header(r, fd, limit);
		/* Not whole below the cap: it never will be. */
		if (!err && !r->have_header && !r->st.stopped && size > r->max_bytes)
			err = stop(r, -E2BIG);
	}
	if (!err && r->have_header) {
		err = read_records(r, fd, limit, &added);
		if (!err && size > r->max_bytes && !r->st.stopped)
			err = stop(r, -E2BIG);
	}
	r->st.bytes = r->off;
	if (err == -EAGAIN)
		err = 0;	/* shrank as we read: the next read looks again */
	return err ? err : added;
}
