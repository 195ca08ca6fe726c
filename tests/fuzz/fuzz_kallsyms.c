// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for kallsyms: the input is /proc/kallsyms text.
 *
 * ksyms__parse() takes it from memory.  A successful parse is looked up at
 * the address of every line (and one byte either side, where symbol ends
 * and gaps are), and by the names those lookups return; every answer is
 * held to kallsyms.h.
 *
 * ksyms__load(), what a recording uses, parses as it reads, LOAD_BUF bytes
 * at a time, with its own handling of a line cut by the end of the buffer
 * and of a line longer than the whole buffer: code an input of a few KiB
 * never reaches.  So the input is also loaded from a memfd behind a
 * malformed padding line whose length (set by the input's first two bytes)
 * ends it within PAD_SPREAD / 2 bytes either side of the first buffer
 * boundary: before it, the boundary cuts one of the input's lines; past
 * it, the padding is a line longer than the buffer.  Either way the load
 * must find what the parse found, and one more malformed line.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/kernel/kallsyms.h"

#define FUZZ_NAME "fuzz_kallsyms"
#include "fuzz_common.h"

#define MAX_PROBES 4096
/* ksyms__find() is a linear scan: a few calls, or big inputs crawl. */
#define MAX_FINDS 16
/* kallsyms.c's read buffer. */
#define LOAD_BUF ((size_t)256 * 1024)
#define PAD_SPREAD 4096

/* Made once: a memfd and a padding line per input would be a syscall and 256 KiB of writes more. */
static int memfd = -1;
static char path[64];
static char pad[LOAD_BUF + PAD_SPREAD];

static void setup(void)
{
	if (memfd >= 0)
		return;
	memfd = memfd_create("fuzz_kallsyms", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("fuzz_kallsyms: memfd_create");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	memset(pad, 'x', sizeof(pad));
}

static void write_all(const void *p, size_t len, off_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(memfd, p, len, off);
		if (n <= 0) {
			perror("fuzz_kallsyms: pwrite");
			exit(1);
		}
		p = (const char *)p + n;
		len -= (size_t)n;
		off += n;
	}
}

/* ksyms__load() of the padding line and then the input (see the top of the file). */
static struct ksyms *load_padded(const uint8_t *data, size_t len)
{
	size_t shift = len >= 2 ? (size_t)(data[0] | data[1] << 8) % PAD_SPREAD : 0;
	size_t pad_len = LOAD_BUF - PAD_SPREAD / 2 + shift;

	if (ftruncate(memfd, 0)) {
		perror("fuzz_kallsyms: ftruncate");
		exit(1);
	}
	write_all(pad, pad_len - 1, 0);
	write_all("\n", 1, (off_t)pad_len - 1);
	write_all(data, len, (off_t)pad_len);
	return ksyms__load(path);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void probe(const struct ksyms *ks, const struct ksyms *loaded, uint64_t addr, size_t *finds)
{
	const struct ksym *s = ksyms__lookup(ks, addr), *t = ksyms__lookup(loaded, addr);
	uint64_t found;

	CHECK((s == NULL) == (t == NULL));
	if (!s)
		return;
	CHECK(s->addr == t->addr && s->size == t->size && same_str(s->name, t->name) &&
	      same_str(s->module, t->module));
	/* Restricted: every address is 0, so no answer may be given. */
	CHECK(!ksyms__restricted(ks));
	CHECK(addr >= s->addr && addr - s->addr < s->size);
	CHECK(s->name && s->name[0] && (!s->module || s->module[0]));
	if (*finds < MAX_FINDS) {
		(*finds)++;
		/* The first match in address order: this one or one below it. */
		CHECK(!ksyms__find(ks, s->name, &found) && found <= s->addr);
	}
}

/* The leading hex number of each line (what the parser took as its address), and the extremes. */
static void probe_lines(const struct ksyms *ks, const struct ksyms *loaded, const char *p, const char *end)
{
	size_t n = 0, finds = 0;
	const char *nl;

	for (; p < end && n < MAX_PROBES; p = nl + 1, n++) {
		uint64_t addr = 0;
		const char *q;

		for (q = p; q < end && q - p < 16; q++) {
			char c = *q;

			if (c >= '0' && c <= '9')
				addr = addr << 4 | (uint64_t)(c - '0');
			else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
				addr = addr << 4 | (uint64_t)((c | 0x20) - 'a' + 10);
			else
				break;
		}
		probe(ks, loaded, addr, &finds);
		probe(ks, loaded, addr - 1, &finds);
		probe(ks, loaded, addr + 1, &finds);
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
	}
	probe(ks, loaded, 0, &finds);
	probe(ks, loaded, UINT64_MAX, &finds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *text = (const char *)data;
	struct ksyms *ks, *loaded;
	int err, load_err;
	uint64_t addr;

	setup();
	ks = ksyms__parse(text, len);
	err = errno;
	loaded = load_padded(data, len);
	load_err = errno;
	if (!ks) {
		CHECK(err == ENODATA || err == ENOMEM);
		CHECK(!loaded && load_err == err);
		return 0;
	}
	CHECK(loaded);
	CHECK(ksyms__nr_syms(ks) > 0 && ksyms__nr_syms(loaded) == ksyms__nr_syms(ks));
	CHECK(ksyms__nr_bad_lines(ks) <= len && ksyms__nr_bad_lines(loaded) == ksyms__nr_bad_lines(ks) + 1);
	CHECK(ksyms__restricted(loaded) == ksyms__restricted(ks));
	/* Names are never empty, and a restricted table names nothing. */
	/* A line with a NUL is malformed: no name is ever empty. */
	CHECK(ksyms__find(ks, "", &addr) == -ENOENT);
	if (ksyms__restricted(ks))
		CHECK(!ksyms__lookup(ks, 0) && ksyms__find(ks, "_text", &addr) == -ENOENT);
	probe_lines(ks, loaded, text, text + len);
	ksyms__free(loaded);
	ksyms__free(ks);
	return 0;
}
