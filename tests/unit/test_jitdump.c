// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jitdump: files made by a small writer here, with records of every kind,
 * MOVE, growth a byte at a time, truncation and rewrite, bogus headers and
 * sizes, and the caps.
 */
#include <byteswap.h>
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/jit/jitdump.h"

TEST_SUITE("jitdump");

/* ---- a jitdump writer ---- */

struct jdw {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct jdw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;

		while (cap < w->len + n)
			cap *= 2;
		w->b = realloc(w->b, cap);
		if (!w->b) {
			perror("test_jitdump: realloc");
			exit(1);
		}
		w->cap = cap;
	}
	if (p)
		memcpy(w->b + w->len, p, n);
	else
		memset(w->b + w->len, 0xcc, n);	/* "code": int3 */
	w->len += n;
}

static void put32(struct jdw *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put64(struct jdw *w, uint64_t v)
{
	put(w, &v, 8);
}

static void jd_header(struct jdw *w, uint32_t magic, uint32_t version, uint32_t total, uint64_t ts)
{
	put32(w, magic);
	put32(w, version);
	put32(w, total);
	put32(w, 62);		/* EM_X86_64 */
	put32(w, 0);
	put32(w, 4242);
	put64(w, ts);
	put64(w, 0);
	for (; total > JITDUMP_HEADER_SIZE; total--)
		put(w, "", 1);
}

static void jd_rec(struct jdw *w, uint32_t id, uint32_t total)
{
	put32(w, id);
	put32(w, total);
	put64(w, 1000 + w->len);
}

/* A LOAD's record header and fields; the name and code are the caller's. */
static void jd_load_head(struct jdw *w, uint32_t total, uint64_t addr, uint64_t size, uint64_t index)
{
	jd_rec(w, JIT_CODE_LOAD, total);
	put32(w, 4242);
	put32(w, 4243);
	put64(w, addr);
	put64(w, addr);
	put64(w, size);
	put64(w, index);
}

/* A LOAD of @name, @pad bytes after its NUL, then @size bytes of code. */
static void jd_load_pad(struct jdw *w, uint64_t addr, uint64_t size, uint64_t index, const char *name,
			size_t pad)
{
	size_t nlen = strlen(name) + 1;

	jd_load_head(w, (uint32_t)(16 + 40 + nlen + pad + size), addr, size, index);
	put(w, name, nlen);
	while (pad--)
		put(w, "", 1);
	put(w, NULL, size);
}

static void jd_load(struct jdw *w, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	jd_load_pad(w, addr, size, index, name, 0);
}

static void jd_move(struct jdw *w, uint64_t old, uint64_t new, uint64_t size, uint64_t index)
{
	jd_rec(w, JIT_CODE_MOVE, 16 + 48);
	put32(w, 4242);
	put32(w, 4243);
	put64(w, new);
	put64(w, old);
	put64(w, new);
	put64(w, size);
	put64(w, index);
}

/* DEBUG_INFO: code_addr, nr_entry, entries {addr, lineno, discrim, filename}. */
static void jd_debug(struct jdw *w, uint64_t addr)
{
	static const char file[] = "Foo.java";

	jd_rec(w, JIT_CODE_DEBUG_INFO, (uint32_t)(16 + 16 + 2 * (16 + sizeof(file))));
	put64(w, addr);
	put64(w, 2);
	for (int i = 0; i < 2; i++) {
		put64(w, addr + (uint64_t)i * 4);
		put32(w, 10 + (uint32_t)i);
		put32(w, 0);
		put(w, file, sizeof(file));
	}
}

/* UNWINDING_INFO: unwinding_size, eh_frame_hdr_size, mapped_size, data. */
static void jd_unwind(struct jdw *w)
{
	jd_rec(w, JIT_CODE_UNWINDING_INFO, 16 + 24 + 32);
	put64(w, 32);
	put64(w, 8);
	put64(w, 32);
	put(w, NULL, 32);
}

/* A record of any id and total_size, with @body_len bytes of body. */
static void jd_raw(struct jdw *w, uint32_t id, uint32_t total, size_t body_len)
{
	jd_rec(w, id, total);
	put(w, NULL, body_len);
}

static int memfd(void)
{
	return memfd_create("jitdump-test", MFD_CLOEXEC);
}

/* The file on @fd becomes exactly @len bytes of @b. */
static bool set_file(int fd, const void *b, size_t len)
{
	return !ftruncate(fd, 0) && pwrite(fd, b, len, 0) == (ssize_t)len;
}

static bool append(int fd, const void *b, size_t len)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end >= 0 && pwrite(fd, b, len, end) == (ssize_t)len;
}

/* @addr names @want (NULL: nothing). */
static bool expect(struct jitsyms *js, uint64_t addr, const char *want)
{
	const struct jitsym *s = jitsyms__lookup(js, addr);
	char what[64];

	snprintf(what, sizeof(what), "lookup 0x%llx", (unsigned long long)addr);
	if (!want)
		return ASSERT_NULL(s, what);
	return ASSERT_OK_PTR(s, what) && ASSERT_STREQ(s->name, want, what);
}

/* A file of every record kind. */
static void all_kinds(struct jdw *w)
{
	jd_header(w, JITDUMP_MAGIC, 1, 40, 777);
	jd_load(w, 0x7f0000001000, 0x40, 1, "Interpreter");
	jd_debug(w, 0x7f0000002000);
	jd_load(w, 0x7f0000002000, 0x100, 2, "LFoo;bar(I)V");
	jd_unwind(w);
	jd_raw(w, 42, 16 + 24, 24);		/* an id from the future */
	jd_load(w, 0x7f0000003000, 0, 3, "not_yet_placed");
	jd_move(w, 0, 0x7f0000004000, 0x80, 3);	/* now it is */
	jd_move(w, 0x7f0000002000, 0x7f0000005000, 0x100, 2);
	jd_load_pad(w, 0x7f0000006000, 0x20, 4, "padded name", 7);
	jd_raw(w, JIT_CODE_CLOSE, 16, 0);
}

static void test_all_kinds(void)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	const struct jitdump_header *h;
	const struct jitdump_stats *st;
	struct jdw w = {};
	struct jitsyms *js;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	ASSERT_NULL(jitdump_reader__header(r), "no header yet");
	all_kinds(&w);
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 5, "symbols added: 3 loads, 2 moves");
	st = jitdump_reader__stats(r);
	ASSERT_EQ(st->loads, (uint64_t)4, "loads");
	ASSERT_EQ(st->moves, (uint64_t)2, "moves");
	ASSERT_EQ(st->other, (uint64_t)4, "debug, unwinding, unknown, close");
	ASSERT_EQ(st->bad_records, (uint64_t)0, "no bad record");
	ASSERT_TRUE(st->closed, "closed");
	ASSERT_EQ(st->stopped, 0, "not stopped");
	ASSERT_EQ(st->bytes, (uint64_t)w.len, "every byte");
	h = jitdump_reader__header(r);
	if (ASSERT_OK_PTR(h, "header")) {
		ASSERT_EQ(h->pid, (uint32_t)4242, "pid");
		ASSERT_EQ(h->elf_mach, (uint32_t)62, "elf_mach");
		ASSERT_EQ(h->timestamp, (uint64_t)777, "timestamp");
		ASSERT_EQ(h->version, (uint32_t)1, "version");
	}
	js = jitdump_reader__syms(r);
	expect(js, 0x7f0000001000, "Interpreter");
	expect(js, 0x7f000000103f, "Interpreter");
	expect(js, 0x7f0000001040, NULL);
	/* The old place of a moved code keeps its name: nothing else was written there. */
	expect(js, 0x7f0000002080, "LFoo;bar(I)V");
	expect(js, 0x7f0000003000, NULL);
	expect(js, 0x7f0000004000, "not_yet_placed");
	expect(js, 0x7f000000407f, "not_yet_placed");
	expect(js, 0x7f0000005000, "LFoo;bar(I)V");
	expect(js, 0x7f00000050ff, "LFoo;bar(I)V");
	expect(js, 0x7f0000006010, "padded name");
	ASSERT_EQ(jitdump_reader__read(r, fd), 0, "nothing new");
out:
	free(w.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
	jitdump_reader__free(NULL);
}

/*
 * The file grows a byte at a time: each read takes the complete records,
 * stops at a record boundary, and the sum is what one read gives.
 */
static void test_byte_at_a_time(void)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	const struct jitdump_stats *st;
	struct jdw w = {};
	size_t i, b;
	int fd = memfd(), got, total = 0;

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = jitdump_reader__stats(r);
	all_kinds(&w);
	for (i = 0; i < w.len; i++) {
		append(fd, w.b + i, 1);
		got = jitdump_reader__read(r, fd);
		if (!ASSERT_TRUE(got >= 0, "read") || !ASSERT_TRUE(st->bytes <= i + 1, "not past the end"))
			goto out;
		total += got;
		/* Consumed up to a record boundary: the header, or a record's end. */
		if (st->bytes) {
			for (b = 40; b < st->bytes;) {
				uint32_t tot;

				memcpy(&tot, w.b + b + 4, 4);
				b += tot;
			}
			if (!ASSERT_EQ(b, (size_t)st->bytes, "at a record boundary"))
				goto out;
		}
		if (i + 1 < 40 && !ASSERT_NULL(jitdump_reader__header(r), "partial header"))
			goto out;
	}
	ASSERT_EQ(total, 5, "every symbol once");
	ASSERT_EQ(st->bytes, (uint64_t)w.len, "every byte");
	ASSERT_EQ(st->loads + st->moves + st->other, (uint64_t)10, "every record once");
	expect(jitdump_reader__syms(r), 0x7f0000005000, "LFoo;bar(I)V");
out:
	free(w.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
}

/* Bytes already read are not read again; truncation and a new header restart from 0. */
static void test_growth_and_rewrite(void)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	const struct jitdump_stats *st;
	struct jdw w = {}, w2 = {};
	size_t name_off;
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = jitdump_reader__stats(r);
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0x1000, 0x10, 1, "first");
	name_off = w.len - 0x10 - 6;
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "first");
	/* Overwrite the name read already, in place; then grow. */
	pwrite(fd, "FIRST", 5, (off_t)name_off);
	w.len = 0;
	jd_load(&w, 0x2000, 0x10, 2, "second");
	append(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "second only");
	expect(jitdump_reader__syms(r), 0x1000, "first");
	expect(jitdump_reader__syms(r), 0x2000, "second");
	ASSERT_EQ(st->restarts, (uint64_t)0, "no restart");

	/* Cut inside the second record: shorter than consumed. */
	ASSERT_OK(ftruncate(fd, (off_t)(40 + 16 + 40 + 6 + 0x10 + 20)), "truncate");
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "read again from 0");
	ASSERT_EQ(st->restarts, (uint64_t)1, "restart");
	expect(jitdump_reader__syms(r), 0x1000, "FIRST");
	expect(jitdump_reader__syms(r), 0x2000, NULL);

	/* The same size and more, another header: a new process's file. */
	jd_header(&w2, JITDUMP_MAGIC, 1, 40, 2);
	jd_load(&w2, 0x3000, 0x10, 1, "other");
	jd_load(&w2, 0x4000, 0x10, 2, "process");
	jd_load(&w2, 0x5000, 0x10, 3, "file");
	set_file(fd, w2.b, w2.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 3, "the new file");
	ASSERT_EQ(st->restarts, (uint64_t)2, "restart");
	expect(jitdump_reader__syms(r), 0x1000, NULL);
	expect(jitdump_reader__syms(r), 0x5000, "file");
	ASSERT_EQ(jitdump_reader__header(r)->timestamp, (uint64_t)2, "the new header");
out:
	free(w.b);
	free(w2.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
}

/* Headers refused, and one longer than 40 bytes. */
static void test_headers(void)
{
	static const struct {
		uint32_t magic, version, total;
		int err;
		const char *what;
	} cases[] = {
		{ 0x4454694A, 1, 40, -EPROTONOSUPPORT, "byte-swapped magic" },
		{ 0x4A695445, 1, 40, -EINVAL, "another magic" },
		{ JITDUMP_MAGIC, 2, 40, -EPROTONOSUPPORT, "version 2" },
		{ JITDUMP_MAGIC, 0, 40, -EPROTONOSUPPORT, "version 0" },
		{ JITDUMP_MAGIC, 1, 39, -EINVAL, "total_size 39" },
		{ JITDUMP_MAGIC, 1, 0, -EINVAL, "total_size 0" },
	};
	struct jitdump_reader *r = NULL;
	struct jdw w = {};
	size_t i;
	int fd = memfd();

	if (!ASSERT_TRUE(fd >= 0, "memfd"))
		return;
	ASSERT_EQ(bswap_32(JITDUMP_MAGIC), 0x4454694Au, "the swapped magic");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = jitdump_reader__new(NULL);
		if (!ASSERT_OK_PTR(r, "new"))
			goto out;
		w.len = 0;
		jd_header(&w, cases[i].magic, cases[i].version, cases[i].total, 1);
		jd_load(&w, 0x1000, 0x10, 1, "never");
		set_file(fd, w.b, w.len);
		ASSERT_EQ(jitdump_reader__read(r, fd), cases[i].err, cases[i].what);
		ASSERT_EQ(jitdump_reader__read(r, fd), cases[i].err, "the same again");
		ASSERT_EQ(jitdump_reader__stats(r)->stopped, cases[i].err, "stopped");
		ASSERT_NULL(jitdump_reader__header(r), "no header");
		ASSERT_EQ(jitsyms__nr_syms(jitdump_reader__syms(r)), (size_t)0, "nothing read");
		jitdump_reader__free(r);
		r = NULL;
	}

	/* A refused file rewritten as a good one is read. */
	r = jitdump_reader__new(NULL);
	if (!ASSERT_OK_PTR(r, "new"))
		goto out;
	w.len = 0;
	jd_header(&w, 0x12345678, 1, 40, 1);
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), -EINVAL, "bad magic");
	w.len = 0;
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0x1000, 0x10, 1, "now");
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "rewritten");
	jitdump_reader__free(r);

	/* A header of 64 bytes, arriving in pieces: records start after it. */
	r = jitdump_reader__new(NULL);
	if (!ASSERT_OK_PTR(r, "new"))
		goto out;
	w.len = 0;
	jd_header(&w, JITDUMP_MAGIC, 1, 64, 1);
	jd_load(&w, 0x1000, 0x10, 1, "after_a_long_header");
	set_file(fd, w.b, 20);
	ASSERT_EQ(jitdump_reader__read(r, fd), 0, "20 bytes");
	ASSERT_NULL(jitdump_reader__header(r), "not yet");
	set_file(fd, w.b, 50);
	ASSERT_EQ(jitdump_reader__read(r, fd), 0, "50 bytes");
	ASSERT_NULL(jitdump_reader__header(r), "not whole yet");
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "whole");
	expect(jitdump_reader__syms(r), 0x1000, "after_a_long_header");
out:
	free(w.b);
	close(fd);
	jitdump_reader__free(r);
}

/* Records with bogus sizes: skipped and counted when framed, else reading stops. */
static void test_bad_records(void)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	const struct jitdump_stats *st;
	struct jdw w = {};
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = jitdump_reader__stats(r);
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0x1000, 0x10, 1, "good_1");
	jd_raw(&w, JIT_CODE_LOAD, 16, 0);		/* no body */
	jd_raw(&w, JIT_CODE_LOAD, 16 + 41, 41);		/* fields and one byte: no room for a name */
	jd_raw(&w, JIT_CODE_MOVE, 16 + 47, 47);		/* one byte short */
	/* The name not terminated within the record. */
	jd_load_head(&w, 16 + 40 + 8, 0x2000, 0, 2);
	put(&w, "nnnnnnnn", 8);
	/* code_size past the record's body, by one byte and by far. */
	jd_load_head(&w, 16 + 40 + 4 + 0x10, 0x3000, 4 + 0x10 + 1, 3);
	put(&w, "abc", 4);
	put(&w, NULL, 0x10);
	jd_load_head(&w, 16 + 40 + 4 + 0x10, 0x3000, 0x100, 3);
	put(&w, "abc", 4);
	put(&w, NULL, 0x10);
	/* Empty name. */
	jd_load(&w, 0x4000, 0x10, 4, "");
	/* The range wraps. */
	jd_load(&w, UINT64_MAX - 8, 0x10, 5, "wraps");
	jd_move(&w, 0, UINT64_MAX - 8, 0x10, 1);
	/* MOVE of an index never loaded. */
	jd_move(&w, 0, 0x6000, 0x10, 99);
	jd_load(&w, 0x7000, 0x10, 7, "good_2");
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 2, "the good ones");
	ASSERT_EQ(st->bad_records, (uint64_t)9, "bad records");
	ASSERT_EQ(st->unknown_moves, (uint64_t)1, "unknown move");
	ASSERT_EQ(st->loads, (uint64_t)2, "loads");
	ASSERT_EQ(st->stopped, 0, "framing intact");
	expect(jitdump_reader__syms(r), 0x7000, "good_2");
	expect(jitdump_reader__syms(r), 0x3000, NULL);
	expect(jitdump_reader__syms(r), 0x6000, NULL);

	/* total_size below a record header: the next record cannot be found. */
	jd_raw(&w, JIT_CODE_LOAD, 15, 0);
	jd_load(&w, 0x8000, 0x10, 8, "never");
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), -EBADMSG, "unframeable");
	ASSERT_EQ(jitdump_reader__read(r, fd), -EBADMSG, "sticky");
	expect(jitdump_reader__syms(r), 0x7000, "good_2");
	expect(jitdump_reader__syms(r), 0x8000, NULL);
out:
	free(w.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
}

/* The caps: bytes, name length, code indexes, symbols. */
static void test_caps(void)
{
	struct jitdump_opts opts = { .max_bytes = 200, .name_max = 8, .max_indexes = 2,
				     .syms = { .max_syms = 3 } };
	struct jitdump_reader *r = jitdump_reader__new(&opts);
	const struct jitdump_stats *st;
	struct jdw w = {};
	int fd = memfd();

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	st = jitdump_reader__stats(r);
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0x1000, 1, 1, "8_chars_");		/* 40 + 66 */
	jd_load(&w, 0x2000, 1, 2, "9_chars__");		/* 106 + 67: too long a name */
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 1, "a name of name_max");
	ASSERT_EQ(st->bad_records, (uint64_t)1, "one over name_max");
	jd_load(&w, 0x3000, 1, 3, "c");			/* 173 + 59: past 200 */
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), -E2BIG, "past the byte cap");
	ASSERT_EQ(st->bytes, (uint64_t)173, "stopped before it");
	ASSERT_EQ(jitdump_reader__read(r, fd), -E2BIG, "sticky");
	jitdump_reader__free(r);

	/* Indexes and symbols. */
	opts.max_bytes = 0;
	r = jitdump_reader__new(&opts);
	if (!ASSERT_OK_PTR(r, "new"))
		goto out;
	st = jitdump_reader__stats(r);
	w.len = 0;
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0, 0, 1, "a");
	jd_load(&w, 0, 0, 2, "b");
	jd_load(&w, 0, 0, 3, "c");			/* its index is not kept */
	jd_load(&w, 0, 0, 1, "a2");			/* an index again: replaced */
	jd_move(&w, 0, 0x1000, 0x10, 1);
	jd_move(&w, 0, 0x2000, 0x10, 2);
	jd_move(&w, 0, 0x3000, 0x10, 3);
	jd_move(&w, 0, 0x4000, 0x10, 2);
	jd_move(&w, 0, 0x5000, 0x10, 2);		/* a 4th symbol */
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), 3, "three symbols");
	ASSERT_EQ(st->unknown_moves, (uint64_t)1, "index 3 forgotten");
	ASSERT_EQ(st->dropped, (uint64_t)2, "index 3, 4th symbol");
	expect(jitdump_reader__syms(r), 0x1000, "a2");
	expect(jitdump_reader__syms(r), 0x4000, "b");
	expect(jitdump_reader__syms(r), 0x5000, NULL);

	errno = 0;
	opts.name_max = ((size_t)1 << 20) + 1;
	ASSERT_NULL(jitdump_reader__new(&opts), "name_max too big");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	/* A record longer than any cap: stops at once rather than waiting forever. */
	w.len = 0;
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_rec(&w, JIT_CODE_LOAD, UINT32_MAX);
	put(&w, NULL, 100);
	jitdump_reader__free(r);
	r = jitdump_reader__new(NULL);
	if (!ASSERT_OK_PTR(r, "new"))
		goto out;
	set_file(fd, w.b, w.len);
	ASSERT_EQ(jitdump_reader__read(r, fd), -E2BIG, "total_size 4 GiB");
	ASSERT_EQ(jitdump_reader__read(r, -1), -EBADF, "a bad fd");
out:
	free(w.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
}

/* Bytes this process read with read() and pread() so far (/proc/self/io rchar), or -1. */
static long long rchar(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/self/io", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Records bigger than the read window, and many small ones: code skipped, names read. */
static void test_big_records(void)
{
	struct jitdump_reader *r = jitdump_reader__new(NULL);
	size_t n = 20000, i;
	struct jdw w = {};
	char name[32];
	long long before, after;
	double t0, t;
	int fd = memfd(), got;

	if (!ASSERT_OK_PTR(r, "new") || !ASSERT_TRUE(fd >= 0, "memfd"))
		goto out;
	jd_header(&w, JITDUMP_MAGIC, 1, 40, 1);
	jd_load(&w, 0x100000000, 4 << 20, 0, "huge_code");
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		jd_load(&w, 0x200000000 + i * 0x1000, i % 100 ? 0x80 : 0x1000 + i, i, name);
	}
	set_file(fd, w.b, w.len);
	before = rchar();
	t0 = now_ms();
	got = jitdump_reader__read(r, fd);
	t = now_ms() - t0;
	after = rchar();
	/* The huge record's code is skipped: at most a window of it is read. */
	if (before >= 0 && after >= 0)
		ASSERT_TRUE(after - before < (long long)(w.len - (4 << 20) + (128 << 10)),
			    "code of big records not read");
	ASSERT_EQ(got, (int)n + 1, "every load");
	expect(jitdump_reader__syms(r), 0x100000000 + (4 << 20) - 1, "huge_code");
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		if (!expect(jitdump_reader__syms(r), 0x200000000 + i * 0x1000 + 0x7f, name))
			break;
	}
	printf("     jitdump: %zu records, %.1f MB, read in %.1f ms, %.1f MB of it read\n", n + 1,
	       w.len / 1e6, t, (after - before) / 1e6);
out:
	free(w.b);
	if (fd >= 0)
		close(fd);
	jitdump_reader__free(r);
}

int main(void)
{
	RUN_TEST(test_all_kinds);
	RUN_TEST(test_byte_at_a_time);
	RUN_TEST(test_growth_and_rewrite);
	RUN_TEST(test_headers);
	RUN_TEST(test_bad_records);
	RUN_TEST(test_caps);
	RUN_TEST(test_big_records);
	return TEST_EXIT();
}
