// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for elfsym: the input is an ELF file.
 *
 * elfsym reads through a file descriptor (libelf preads, never mmaps), so
 * the bytes go to a memfd: a regular file, as the mapped files bpfsym meets
 * are.  A successful open is then queried at addresses read from the input
 * itself, which is where a mutated ELF keeps its symbol values and segment
 * addresses, and every answer is held to the contract in elfsym.h.
 * The same bytes are also opened from memory (the path a decompressed
 * MiniDebugInfo takes), which must agree, and handed to the xz decoder as
 * if they were a .gnu_debugdata section.  The .gnu_debugdata cap is 1 MiB
 * here, so a bomb costs a millisecond, not a second.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/elf/elfsym.h"
#include "symbolize/elf/minidebug.h"

#define FUZZ_NAME "fuzz_elfsym"
#include "fuzz_common.h"

/* Enough to hit most symbol values of a small file, few enough to stay fast. */
#define MAX_PROBES 2048
#define MAX_DEBUGDATA (1 << 20)

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

/* The debuglink, if any, as elfsym.h describes it. */
static void check_debuglink(const struct elfsym *es)
{
	const char *name;
	uint32_t crc;

	name = elfsym__debuglink(es, &crc);
	if (!name) {
		CHECK(crc == 0);
		return;
	}
	CHECK(name[0]);
	CHECK(strlen(name) < 1 << 16);	/* and ASan checks the NUL is really there */
}

/* The xz decoder on the raw input: its caps hold whatever the bytes. */
static void check_decompress(const uint8_t *data, size_t len)
{
	size_t out_len = 1;
	void *out = (void *)1;
	volatile uint8_t last;
	int err;

	err = minidebug__decompress(data, len, MAX_DEBUGDATA, &out, &out_len);
	if (err) {
		CHECK(err == -E2BIG || err == -EBADMSG || err == -ENOMEM);
		CHECK(!out && !out_len);
		return;
	}
	CHECK(out && out_len <= MAX_DEBUGDATA);
	if (out_len)
		last = ((const uint8_t *)out)[out_len - 1];	/* ASan: the bytes are there */
	(void)last;
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct elfsym_opts opts = { .max_debugdata = MAX_DEBUGDATA };
	struct elfsym *es, *mem;
	uint8_t copy[64], *buf;
	const uint8_t *id, *mem_id;
	size_t id_len, mem_id_len, nr;
	int memfd;

	check_decompress(data, len);
	memfd = fuzz_memfd_load(data, len);
	es = elfsym__open_fd(memfd, "fuzz", &opts);
	/* From memory: the same answers (elf_memory wants writable bytes). */
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, len);
	mem = elfsym__open_mem(buf, len, "fuzz-mem", &opts);
	free(buf);
	if (!es) {
		CHECK(errno == ENOEXEC || errno == E2BIG || errno == ENOMEM);
		CHECK(!mem);
		return 0;
	}
	CHECK(mem);
	nr = elfsym__nr_syms(es);
	CHECK(elfsym__nr_syms(mem) == nr);
	id = elfsym__build_id(es, &id_len);
	mem_id = elfsym__build_id(mem, &mem_id_len);
	CHECK(id_len == mem_id_len && (!id_len || !memcmp(id, mem_id, id_len)));
	check_debuglink(mem);
	probe_input(mem, data, len);
	elfsym__free(mem);

	CHECK(id_len <= sizeof(copy) && (id == NULL) == (id_len == 0));
	if (id)
		memcpy(copy, id, id_len);	/* ASan checks the bytes are really there */
	elfsym__type(es);
	check_debuglink(es);
	probe_input(es, data, len);
	elfsym__free(es);

	/*
	 * The symbol cap: every kept symbol came from a table entry, and each
	 * table also has its null entry 0, so a cap below the count kept must
	 * be hit: reported as E2BIG, or, when it is hit in the MiniDebugInfo,
	 * that is left out and only the file's own tables (which fit the cap,
	 * null entries included) give symbols: fewer than before.
	 */
	if (nr >= 2) {
		opts.max_syms = nr - 1;
		es = elfsym__open_fd(memfd, "fuzz", &opts);
		CHECK(es ? elfsym__nr_syms(es) < nr : errno == E2BIG);
		elfsym__free(es);
	}
	return 0;
}
