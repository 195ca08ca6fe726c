// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: symfs__read_segments() (symbolize/symfs.c), which
 * `report --symfs DIR` runs on a debug file found under DIR (another
 * machine's files, or anyone's copy of them).  The input is that file, on
 * a memfd.  Besides not crashing, symfs.h's contract: 0, -EDOM or
 * -ENOMEM; on 0 at least one segment, each with file bytes, one of them
 * executable, and every one a PT_LOAD entry of the file's own program
 * header table, as this file reads it from the bytes (for the 64-bit
 * little-endian files of this machine; others are only held to the rest).
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "symbolize/symfs.h"

#define FUZZ_NAME "fuzz_symfs"
#include "fuzz_common.h"

/*
 * Whether @s is a PT_LOAD of @data's table, as 64-bit little-endian
 * headers say (-1: cannot tell); *@exec set when one such entry is PF_X.
 */
static int in_table(const uint8_t *data, size_t len, const struct symfs_seg *s, bool *exec)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t off;
	size_t i;
	int found = 0;

	if (len < sizeof(eh))
		return -1;
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(ph) || eh.e_phnum == PN_XNUM)
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		off = eh.e_phoff + i * sizeof(ph);
		if (off < eh.e_phoff || off > len || len - off < sizeof(ph))
			break;
		memcpy(&ph, data + off, sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset == s->off && ph.p_filesz == s->filesz &&
		    ph.p_vaddr == s->vaddr) {
			*exec |= (ph.p_flags & PF_X) != 0;
			found = 1;
		}
	}
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct symfs_seg *segs = (struct symfs_seg *)1;
	size_t nr = SIZE_MAX, i;
	bool exec = false, tell = true;
	int fd, err, r;

	fd = fuzz_memfd_load(data, len);
	err = symfs__read_segments(fd, &segs, &nr);
	CHECK(err == 0 || err == -EDOM || err == -ENOMEM);
	if (err) {
		/* Nothing handed out on failure. */
		CHECK(segs == (struct symfs_seg *)1 && nr == SIZE_MAX);
		return 0;
	}
	CHECK(segs && nr >= 1);
	for (i = 0; i < nr; i++) {
		CHECK(segs[i].filesz > 0);
		r = in_table(data, len, &segs[i], &exec);
		if (r < 0)
			tell = false;
		else
			CHECK(r == 1);
	}
	CHECK(!tell || exec);
	free(segs);
	return 0;
}
