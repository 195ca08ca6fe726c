// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the CPython interpreter probe
 * (runtime/python/pyelf.h): the input is an ELF file, probed from a memfd.
 *
 * The contract held: only 0 or -ENOENT (a memfd neither fails to read nor
 * runs out of memory at these sizes); 0 gives a 3.11-3.13 version and
 * the offsets of that version's table (pyelf__table), the addresses
 * non-zero and the eval function a non-empty range; -ENOENT gives a
 * reason in range, and everything but the version zeroed.  The load
 * bias of the file at a few offsets answers 0, -ENOENT or -ENOEXEC.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtime/python/pyelf.h"

#define FUZZ_NAME "fuzz_pyelf"
#include "fuzz_common.h"

#define PYELF_FUZZ_MAX (4u << 20)

static void check_found(const struct py_layout *l)
{
	struct py_layout t;

	CHECK(pyelf__table(l->version, &t) == 0);
	CHECK(l->minor >= 11 && l->minor <= 13);
	CHECK(l->runtime && l->code_type && l->str_type && l->bytes_type);
	CHECK(l->eval_size && l->eval_start + l->eval_size > l->eval_start);
	t.runtime = l->runtime;
	t.eval_start = l->eval_start;
	t.eval_size = l->eval_size;
	t.code_type = l->code_type;
	t.str_type = l->str_type;
	t.bytes_type = l->bytes_type;
	CHECK(!memcmp(&t, l, sizeof(t)));
}

static void check_missed(const struct py_layout *l, enum py_miss why)
{
	struct py_layout z;

	CHECK(why > PY_MISS_NONE && why < PY_MISS__NR && pyelf__miss_str(why));
	memset(&z, 0, sizeof(z));
	z.version = l->version;
	z.minor = l->minor;
	CHECK(!memcmp(&z, l, sizeof(z)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t offs[] = { 0, 0x1000, 0x2000, 0x3000 };
	struct py_layout l;
	enum py_miss why;
	uint64_t bias;
	size_t i;
	int fd, err;

	if (size > PYELF_FUZZ_MAX)
		return 0;
	fd = fuzz_memfd_load(data, size);
	err = pyelf__probe(fd, FUZZ_NAME, &l, &why);
	CHECK(err == 0 || err == -ENOENT);
	if (!err) {
		CHECK(why == PY_MISS_NONE);
		check_found(&l);
	} else {
		check_missed(&l, why);
	}
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		err = pyelf__bias(fd, offs[i], 0x7f0000000000, &bias);
		CHECK(err == 0 || err == -ENOENT || err == -ENOEXEC || err == -E2BIG);
	}
	return 0;
}
