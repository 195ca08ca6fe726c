// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for elfsym: the input is an ELF file.
 *
 * elfsym reads through a file descriptor (libelf preads, never mmaps), so
 * the bytes go to a memfd: a regular file, as the mapped files bpfsym meets
 * are.  A successful open is then queried at addresses read from the input
 * itself, which is where a mutated ELF keeps its symbol values and segment
 * addresses, and every answer is held to the contract in elfsym.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsym.h"

/* Enough to hit most symbol values of a small file, few enough to stay fast. */
#define MAX_PROBES 2048

/* A broken contract is a bug: abort so libFuzzer keeps the input. */
#define CHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "fuzz_elfsym: %s:%d: check failed: %s\n",	\
			__FILE__, __LINE__, #cond);				\
		abort();							\
	}									\
} while (0)

/* One memfd for the whole run: a new one per input would cost a syscall storm. */
static int memfd = -1;

static void load(const uint8_t *data, size_t len)
{
	size_t off = 0;
	ssize_t n;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_elfsym", MFD_CLOEXEC);
		if (memfd < 0) {
			perror("fuzz_elfsym: memfd_create");
			exit(1);
		}
	}
	/* Truncate first: the file must be exactly this input, no tail of the last one. */
	if (ftruncate(memfd, 0)) {
		perror("fuzz_elfsym: ftruncate");
		exit(1);
	}
	while (off < len) {
		n = pwrite(memfd, data + off, len - off, (off_t)off);
		if (n <= 0) {
			perror("fuzz_elfsym: pwrite");
			exit(1);
		}
		off += (size_t)n;
	}
}

static void probe(const struct elfsym *es, uint64_t v)
{
	const struct elfsym_sym *s = elfsym__lookup(es, v);
	uint64_t x, y;

	if (s) {
		CHECK(s->name && s->name[0]);
		CHECK(v >= s->addr && v - s->addr < s->size);
		/* Aliases are folded, so a symbol's first byte is nobody else's. */
		CHECK(elfsym__lookup(es, s->addr) == s);
		/* Its last byte is covered too, by it or by a symbol nested in it. */
		CHECK(elfsym__lookup(es, s->addr + s->size - 1));
	}
	/* An offset that translates lies in a segment, whose vaddr translates back. */
	if (!elfsym__offset_to_vaddr(es, v, &x))
		CHECK(!elfsym__vaddr_to_offset(es, x, &y));
	if (!elfsym__vaddr_to_offset(es, v, &x))
		CHECK(!elfsym__offset_to_vaddr(es, x, &y));
}

/* Every 4-byte aligned word as a 32-bit address, every 8-byte one as a 64-bit one. */
static void probe_input(const struct elfsym *es, const uint8_t *data, size_t len)
{
	size_t i, n = 0;
	uint32_t w32;
	uint64_t w64;

	for (i = 0; i + 4 <= len && n < MAX_PROBES; i += 4, n++) {
		memcpy(&w32, data + i, sizeof(w32));
		probe(es, w32);
		if (i % 8 == 0 && i + 8 <= len) {
			memcpy(&w64, data + i, sizeof(w64));
			probe(es, w64);
		}
	}
	probe(es, 0);
	probe(es, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct elfsym_opts opts = {};
	uint8_t copy[64];
	struct elfsym *es;
	const uint8_t *id;
	size_t id_len, nr;

	load(data, len);
	es = elfsym__open_fd(memfd, "fuzz", NULL);
	if (!es) {
		CHECK(errno == ENOEXEC || errno == E2BIG || errno == ENOMEM);
		return 0;
	}
	id = elfsym__build_id(es, &id_len);
	CHECK(id_len <= sizeof(copy) && (id == NULL) == (id_len == 0));
	if (id)
		memcpy(copy, id, id_len);	/* ASan checks the bytes are really there */
	elfsym__type(es);
	nr = elfsym__nr_syms(es);
	probe_input(es, data, len);
	elfsym__free(es);

	/*
	 * The symbol cap: every kept symbol came from a table entry, and each
	 * table also has its null entry 0, so a cap below the count kept must
	 * be hit, and reported as E2BIG whatever else the file holds.
	 */
	if (nr >= 2) {
		opts.max_syms = nr - 1;
		es = elfsym__open_fd(memfd, "fuzz", &opts);
		CHECK(!es && errno == E2BIG);
	}
	return 0;
}
