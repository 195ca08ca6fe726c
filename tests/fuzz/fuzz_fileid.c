// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the build-id note reader (symbolize/fileid.c), which
 * runs on every file a process maps executable, most of them never read
 * further.  The input is the file, on a memfd (a regular file, read with
 * pread as the recorder reads).  Besides not crashing: 0 or -ENOEXEC
 * (-ENOMEM never, the note budget being 4 MiB), a build-id of at most
 * FILEID_BUILD_ID_MAX bytes, and, as fileid.h promises, the one elfsym
 * reads from the same file whenever elfsym accepts it: the symbolizer and
 * the debug-file finder compare the two, so a disagreement would name
 * frames RPT_BUILD_ID_MISMATCH or take a wrong debug file.
 */
#include <errno.h>
#include <string.h>

#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"

#define FUZZ_NAME "fuzz_fileid"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct elfsym_opts opts = { .max_debugdata = 1 << 20 };
	uint8_t id[FILEID_BUILD_ID_MAX + 1], again[FILEID_BUILD_ID_MAX];
	size_t id_len = SIZE_MAX, again_len, es_len;
	const uint8_t *es_id;
	struct elfsym *es;
	int fd, err;

	fd = fuzz_memfd_load(data, len);
	id[FILEID_BUILD_ID_MAX] = 0xa5;
	err = fileid__build_id(fd, id, &id_len);
	CHECK(err == 0 || err == -ENOEXEC);
	CHECK(id_len <= FILEID_BUILD_ID_MAX && id[FILEID_BUILD_ID_MAX] == 0xa5);
	es = elfsym__open_fd(fd, "fuzz", &opts);
	if (err) {
		/* Not an ELF file for fileid: none for elfsym either, or one without a build-id. */
		CHECK(id_len == 0);
		CHECK(!es || !elfsym__build_id(es, &es_len));
		elfsym__free(es);
		return 0;
	}
	/* The offset of @fd is not used: a second call agrees. */
	CHECK(lseek(fd, 7, SEEK_SET) == 7);
	CHECK(fileid__build_id(fd, again, &again_len) == 0);
	CHECK(again_len == id_len && !memcmp(again, id, id_len));
	if (!es)
		return 0;
	es_id = elfsym__build_id(es, &es_len);
	CHECK(es_len == id_len && (!es_len || !memcmp(es_id, id, es_len)));
	elfsym__free(es);
	return 0;
}
