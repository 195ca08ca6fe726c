// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: finding a binary's separate debug file
 * (symbolize/debugfile.c): the binary's build-id and .gnu_debuglink as
 * elfsym reads them, the candidate paths made from them, the checks on
 * each candidate (build-id, CRC32, more symbols than the binary), all of
 * it on files a process we do not trust may have written.
 *
 * Input: a byte placing the debug file, a little-endian u32 with the
 * binary's length, the binary, then the debug file.  Both are written
 * into a directory made once, the process's root for debugfile__open():
 * ROOT/usr/bin/prog is the binary, and the debug file goes where the
 * first byte says (mod 5): 0 DEBUG_ROOT/.build-id/xx/rest.debug (from
 * the binary's build-id), 1 DIR/NAME, 2 DIR/.debug/NAME, 3
 * DEBUG_ROOT/DIR/NAME (NAME: the binary's debuglink; DEBUG_ROOT /dbg,
 * inside the root), 4 nowhere.  Nothing else is there, so what
 * debugfile.h promises can be said here before the call: the debug file
 * is found exactly when it is at a candidate's place, names the binary's
 * build-id there (debuglink: the same one when both have one, and the
 * CRC32 of its bytes, computed here bit by bit), and elfsym reads more
 * symbols from it than from the binary; otherwise NULL with ENOENT.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debugfile.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"

#define FUZZ_NAME "fuzz_debugfile"
#include "fuzz_common.h"

enum { AT_BUILD_ID, AT_DIR, AT_DOT_DEBUG, AT_DEBUG_ROOT, NOWHERE, NR_PLACES };

static char root[PATH_MAX];
static int root_fd = -1;
static const struct elfsym_opts opts = { .max_debugdata = 1 << 20 };

static void fatal(const char *what)
{
	perror(what);
	exit(1);
}

/* ROOT/@rel, as this process sees it. */
static void host_path(char *buf, size_t size, const char *rel)
{
	if ((size_t)snprintf(buf, size, "%s%s", root, rel) >= size)
		buf[0] = '\0';
}

static void setup(void)
{
	static const char *const dirs[] = { "/usr", "/usr/bin", "/usr/bin/.debug", "/dbg",
					    "/dbg/usr", "/dbg/usr/bin", "/dbg/.build-id" };
	char p[PATH_MAX];
	size_t i;

	if (root_fd >= 0)
		return;
	snprintf(root, sizeof(root), "%s", fuzz_tmpdir());
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		host_path(p, sizeof(p), dirs[i]);
		if (mkdir(p, 0755))
			fatal("fuzz_debugfile: mkdir");
	}
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		fatal("fuzz_debugfile: open");
}

/* Write @len bytes at @data to ROOT/@rel; false when the path cannot hold a file. */
static bool put(const char *rel, const uint8_t *data, size_t len)
{
	char p[PATH_MAX];
	FILE *f;

	host_path(p, sizeof(p), rel);
	f = p[0] ? fopen(p, "w") : NULL;
	if (!f)
		return false;
	if (fwrite(data, 1, len, f) != len || fclose(f))
		fatal("fuzz_debugfile: write");
	return true;
}

static void drop(const char *rel)
{
	char p[PATH_MAX];

	host_path(p, sizeof(p), rel);
	if (p[0] && unlink(p) && errno != ENOENT)
		fatal("fuzz_debugfile: unlink");
}

/* zlib's CRC32 (gdb's debuglink CRC), bit by bit: not the code under test. */
static uint32_t crc32_bits(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffff;
	int k;

	while (len--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320 : c >> 1;
	}
	return ~c;
}

/* A new elfsym of @len bytes at @data (from a copy: libelf wants them writable), or NULL. */
static struct elfsym *open_mem(const uint8_t *data, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	struct elfsym *es;

	CHECK(buf);
	memcpy(buf, data, len);
	es = elfsym__open_mem(buf, len, "fuzz", &opts);
	free(buf);
	return es;
}

/* debugfile__build_id_path() for a build-id taken from the input, into a small buffer. */
static void check_build_id_path(const uint8_t *id, size_t len, size_t size)
{
	char buf[96], want[96 + 2 * 64 + 16];
	size_t i, n;

	if (!len || len > 64 || size > sizeof(buf))
		return;
	n = (size_t)snprintf(want, sizeof(want), "/r/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%02x", id[i]);
	snprintf(want + n, sizeof(want) - n, ".debug");
	memset(buf, 'x', sizeof(buf));
	if (debugfile__build_id_path(buf, size, "/r", id, len))
		CHECK(!strcmp(buf, want));
	else
		CHECK(strlen(want) >= size);
}

/*
 * Whether debugfile__open must find the debug file placed at @where (its
 * bytes @dbg, @dbg_len; @id, @id_len: its build-id as fileid reads it):
 * the candidate's conditions of debugfile.h.
 */
static bool must_find(int where, const struct elfsym *bin, const uint8_t *dbg, size_t dbg_len,
		      const uint8_t *id, size_t id_len)
{
	const uint8_t *bin_id;
	struct elfsym *d;
	size_t bin_len;
	uint32_t crc;
	bool ok;

	bin_id = elfsym__build_id(bin, &bin_len);
	if (where == AT_BUILD_ID) {
		ok = id_len == bin_len && !memcmp(id, bin_id, bin_len);
	} else {
		elfsym__debuglink(bin, &crc);
		ok = (!bin_len || !id_len || (id_len == bin_len && !memcmp(id, bin_id, bin_len))) &&
		     crc32_bits(dbg, dbg_len) == crc;
	}
	if (!ok)
		return false;
	d = open_mem(dbg, dbg_len);
	ok = d && elfsym__nr_syms(d) > elfsym__nr_syms(bin);
	elfsym__free(d);
	return ok;
}

/* Where the debug file goes for @where, into @rel; false: nowhere it can go. */
static bool place(int where, const struct elfsym *bin, char *rel, size_t size)
{
	char dir[PATH_MAX];
	const uint8_t *id;
	const char *name;
	uint32_t crc;
	size_t len;
	int n = -1;

	id = elfsym__build_id(bin, &len);
	name = elfsym__debuglink(bin, &crc);
	if (where == AT_BUILD_ID) {
		/* The directory .build-id/xx is made here: the rest of the path is the file. */
		if (!id || len < 2 || !debugfile__build_id_path(rel, size, "/dbg", id, len))
			return false;
		snprintf(dir, sizeof(dir), "%s/dbg/.build-id/%02x", root, id[0]);
		if (mkdir(dir, 0755) && errno != EEXIST)
			fatal("fuzz_debugfile: mkdir");
		return true;
	}
	/* A name debugfile refuses, or one that is the binary or a directory here. */
	if (where == NOWHERE || !name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..") || !strcmp(name, "prog") || !strcmp(name, ".debug"))
		return false;
	if (where == AT_DIR)
		n = snprintf(rel, size, "/usr/bin/%s", name);
	else if (where == AT_DOT_DEBUG)
		n = snprintf(rel, size, "/usr/bin/.debug/%s", name);
	else
		n = snprintf(rel, size, "/dbg/usr/bin/%s", name);
	return n > 0 && (size_t)n < size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char rel[PATH_MAX] = "";
	uint8_t id[FILEID_BUILD_ID_MAX];
	const uint8_t *bin_bytes, *dbg;
	struct elfsym *bin, *got;
	size_t bin_len, dbg_len, id_len = 0;
	struct stat st;
	bool placed, want;
	uint32_t n;
	int where, fd;

	setup();
	if (len < 5)
		return 0;
	where = data[0] % NR_PLACES;
	memcpy(&n, data + 1, sizeof(n));
	bin_bytes = data + 5;
	bin_len = n < len - 5 ? n : len - 5;
	dbg = bin_bytes + bin_len;
	dbg_len = len - 5 - bin_len;
	check_build_id_path(dbg, dbg_len < 64 ? dbg_len : 64, data[0] % 96);

	/* The binary as the symbolizer would read it from its mapping. */
	if (!put("/usr/bin/prog", bin_bytes, bin_len))
		fatal("fuzz_debugfile: the binary");
	bin = open_mem(bin_bytes, bin_len);
	if (!bin)
		return 0;
	{
		char p[PATH_MAX];

		host_path(p, sizeof(p), "/usr/bin/prog");
		if (stat(p, &st))
			fatal("fuzz_debugfile: stat");
	}
	placed = place(where, bin, rel, sizeof(rel)) && put(rel, dbg, dbg_len);
	want = false;
	if (placed) {
		char p[PATH_MAX];

		host_path(p, sizeof(p), rel);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fileid__build_id(fd, id, &id_len))
			id_len = 0;
		if (fd >= 0)
			close(fd);
		want = dbg_len && must_find(where, bin, dbg, dbg_len, id, id_len);
	}

	struct debugfile_query q = {
		.es = bin, .path = "/usr/bin/prog", .dev = (uint64_t)st.st_dev,
		.ino = (uint64_t)st.st_ino, .root_fd = root_fd, .debug_root = "/dbg",
		.debug_root_in_root = true, .opts = &opts,
	};
	errno = 0;
	got = debugfile__open(&q);
	if (!got) {
		CHECK(errno == ENOENT || errno == ENOMEM);
		CHECK(!want || errno == ENOMEM);
	} else {
		struct elfsym *d = open_mem(dbg, dbg_len);

		CHECK(want);
		CHECK(d && elfsym__nr_syms(got) == elfsym__nr_syms(d));
		elfsym__free(d);
		elfsym__free(got);
	}
	if (placed)
		drop(rel);
	elfsym__free(bin);
	return 0;
}
