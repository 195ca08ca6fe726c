/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the fuzz targets share.  Define FUZZ_NAME ("fuzz_cfi", ...) before
 * including: it names the target in what they print.
 */
#ifndef BPFSYM_FUZZ_COMMON_H
#define BPFSYM_FUZZ_COMMON_H

#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef FUZZ_NAME
#error "define FUZZ_NAME before including fuzz_common.h"
#endif

/* A broken contract is a bug: abort so libFuzzer keeps the input. */
#define CHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, FUZZ_NAME ": %s:%d: check failed: %s\n",	\
			__FILE__, __LINE__, #cond);				\
		abort();							\
	}									\
} while (0)

/*
 * The input as the contents of one memfd, made on the first call and
 * reused for the whole run (a new one per input would cost a syscall
 * storm); truncated first, so it is exactly this input.  Its fd.
 */
static __attribute__((unused)) int fuzz_memfd_load(const uint8_t *data, size_t len)
{
	static int memfd = -1;
	size_t off = 0;
	ssize_t n;

	if (memfd < 0) {
		memfd = memfd_create(FUZZ_NAME, MFD_CLOEXEC);
		if (memfd < 0) {
			perror(FUZZ_NAME ": memfd_create");
			exit(1);
		}
	}
	if (ftruncate(memfd, 0)) {
		perror(FUZZ_NAME ": ftruncate");
		exit(1);
	}
	while (off < len) {
		n = pwrite(memfd, data + off, len - off, (off_t)off);
		if (n <= 0) {
			perror(FUZZ_NAME ": pwrite");
			exit(1);
		}
		off += (size_t)n;
	}
	return memfd;
}

static int fuzz_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static char fuzz_tmp[PATH_MAX];

static void fuzz_tmpdir_remove(void)
{
	if (fuzz_tmp[0])
		nftw(fuzz_tmp, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * A new directory for the files a target writes (on tmpfs when there is
 * one: the writers fsync), removed when the run exits; a crash leaves it.
 * Its path: the same for the whole run.
 */
static __attribute__((unused)) const char *fuzz_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (fuzz_tmp[0])
		return fuzz_tmp;
	if (!access("/dev/shm", W_OK))
		base = "/dev/shm";
	snprintf(fuzz_tmp, sizeof(fuzz_tmp), "%s/" FUZZ_NAME ".XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(fuzz_tmp)) {
		perror(FUZZ_NAME ": mkdtemp");
		exit(1);
	}
	atexit(fuzz_tmpdir_remove);
	return fuzz_tmp;
}

#endif /* BPFSYM_FUZZ_COMMON_H */
