// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the unwind table builder (user/unwind/cfi.h): the
 * input is an ELF image, built from memory (the vdso's path) and, the same
 * bytes, from a memfd (every other file's path): both must give the same
 * answer.  A failure is one of the documented errors with a reason; a
 * table holds to cfi.h: PCs strictly increasing, no equal neighbours, a
 * frame-pointer row last, every rule one the BPF side can read, and
 * cfi_table__find() landing on each row.  max_rows is small here, so a
 * row bomb costs a millisecond, and is checked to hold.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfsym.h"
#include "unwind/cfi.h"

#define FUZZ_NAME "fuzz_cfi"
#include "fuzz_common.h"

#define MAX_ROWS (1u << 16)

static void check_rule(uint32_t r)
{
	uint32_t kind = BPFSYM_UNW_RULE_KIND(r);

	CHECK(kind <= BPFSYM_UNW_UNSUPPORTED);
	/* Only the frame-holding kinds carry offsets; the others are bare. */
	if (kind == BPFSYM_UNW_FP_RULE || kind == BPFSYM_UNW_SIGNAL || kind == BPFSYM_UNW_END ||
	    kind == BPFSYM_UNW_UNSUPPORTED)
		CHECK(r == kind);
	if (kind == BPFSYM_UNW_PLT)
		CHECK(BPFSYM_UNW_RULE_CFA_OFF(r) == 10 || BPFSYM_UNW_RULE_CFA_OFF(r) == 11);
	if (!(r & BPFSYM_UNW_FP_SAVED))
		CHECK(BPFSYM_UNW_RULE_FP_NEG(r) == 0);
}

static void check_table(const struct cfi_table *t)
{
	uint32_t unsupported = 0;
	size_t i;

	CHECK(t->nr <= MAX_ROWS);
	CHECK(!t->nr || t->rows);
	CHECK(t->nr || !cfi_table__find(t, 0));
	for (i = 0; i < t->nr; i++) {
		check_rule(t->rows[i].rule);
		unsupported += BPFSYM_UNW_RULE_KIND(t->rows[i].rule) == BPFSYM_UNW_UNSUPPORTED;
		if (i) {
			CHECK(t->rows[i].pc > t->rows[i - 1].pc);
			CHECK(t->rows[i].rule != t->rows[i - 1].rule);
		}
		CHECK(cfi_table__find(t, t->rows[i].pc) == &t->rows[i]);
		if (t->rows[i].pc)
			CHECK(cfi_table__find(t, t->rows[i].pc - 1) == (i ? &t->rows[i - 1] : NULL));
	}
	if (t->nr)
		CHECK(t->rows[t->nr - 1].rule == BPFSYM_UNW_RULE(BPFSYM_UNW_FP_RULE, 0, 0, 0));
	CHECK(unsupported == t->stats.rows_unsupported);
	CHECK(t->stats.fdes_skipped <= t->stats.fdes);
	CHECK(t->stats.fde_starts <= t->stats.fdes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct cfi_opts o = { .max_rows = MAX_ROWS, .debug_fd = -1 };
	struct cfi_table *t = (void *)1, *u = (void *)1;
	char err[256], err2[256];
	int ret, ret2, memfd;

	ret = cfi_table__build_mem(data, len, &o, &t, err, sizeof(err));
	if (ret) {
		CHECK(ret == -EINVAL || ret == -E2BIG || ret == -ENOEXEC || ret == -ENOMEM ||
		      ret == -EFBIG);
		CHECK(!t && err[0] && strlen(err) < sizeof(err));
	} else {
		CHECK(t);
		check_table(t);
	}
	/* The same bytes as a file; and as its own debug file (.debug_frame only). */
	memfd = fuzz_memfd_load(data, len);
	o.debug_fd = memfd;
	ret2 = cfi_table__build_fd(memfd, &o, &u, err2, sizeof(err2));
	if (!ret2) {
		check_table(u);
		CHECK(!ret);
		/* .eh_frame wins over .debug_frame: the debug file only adds rows. */
		CHECK(u->stats.fdes >= t->stats.fdes);
	} else {
		CHECK(!u && err2[0]);
		CHECK(ret2 == -EINVAL || ret2 == -E2BIG || ret2 == -ENOEXEC || ret2 == -ENOMEM ||
		      ret2 == -EFBIG);
	}
	if (!ret) {
		struct cfi_table *v = NULL;

		o.debug_fd = -1;
		ret2 = cfi_table__build_fd(memfd, &o, &v, err2, sizeof(err2));
		CHECK(!ret2);
		CHECK(v->nr == t->nr && (!t->nr || !memcmp(v->rows, t->rows, t->nr * sizeof(*t->rows))));
		cfi_table__free(v);
	}
	cfi_table__free(t);
	cfi_table__free(u);
	return 0;
}
