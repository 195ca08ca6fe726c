// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debugfile: finding and checking a binary's separate debug file.
 *
 * A candidate is checked from the cheapest test to the dearest: opened
 * through O_PATH and required to be a regular file (fileid), not the
 * binary itself, then its build-id (headers and notes only), then for a
 * debuglink its CRC (the whole file, read in bounded chunks, the size
 * capped first), and only then its symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/debugfile.h"
#include "symbolize/fileid.h"
#include "base/inputcap.h"
#include "base/util.h"

/*
 * The CRC reads the whole candidate, and anyone can make a sparse file
 * that claims a GiB: 1 GiB (the cap before) cost a second of CPU and a
 * GiB of reads per candidate, up to three per binary.  64 MiB is read and
 * summed in about 70 ms here (zlib's crc32, ~0.9 GB/s), within the 100 ms
 * the recorder waits for a file's symbols (it runs in that job, off the
 * recorder's thread: symbolize/fileload.c); a larger debuglink target is
 * not used (logged).  Debug files found by build-id (Debian's -dbgsym,
 * Fedora's -debuginfo, where large ones live) have no CRC to check.
 */
#define DEFAULT_MAX_CRC_SIZE	(64ULL << 20)
#define CRC_CHUNK		(256UL << 10)

/* The CRC32 of the first @size bytes of @fd: 0 or -errno (-ESTALE: shorter now). */
static int file_crc32(int fd, uint64_t size, uint32_t *crc)
{
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	uint8_t *buf;
	int err = 0;
	ssize_t n;

	buf = malloc(CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (off < size) {
		n = pread(fd, buf, size - off < CRC_CHUNK ? size - off : CRC_CHUNK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -ESTALE;
			break;
		}
		c = crc32(c, buf, (uInt)n);
		off += (uint64_t)n;
	}
	free(buf);
	*crc = (uint32_t)c;
	return err;
}

static void rejected(const char *path, const char *why, int err)
{
	pr_debug("debugfile: '%s' not used: %s%s%s\n", path, why, err ? ": " : "",
		 err ? strerror(-err) : "");
}

/*
 * Check the candidate @path (resolved in @root_fd, AT_FDCWD: the host's)
 * and read its symbols.  @crc is NULL for a build-id candidate, whose
 * build-id must then match.  NULL when not usable; *@err is set to -ENOMEM
 * only when that is why.
 */
static struct elfsym *try_candidate(const struct debugfile_query *q, int root_fd,
				    const char *path, const uint32_t *crc, bool users, int *err)
{
	uint64_t max_crc = q->max_crc_size ? q->max_crc_size : DEFAULT_MAX_CRC_SIZE;
	uint8_t id[FILEID_BUILD_ID_MAX];
	const uint8_t *bin_id;
	struct elfsym *dbg;
	size_t id_len, bin_len;
	struct stat st;
	uint32_t got;
	int fd, e;

	/*
	 * Next to the binary is where its user writes (users): no symlink.
	 * The debug root's .build-id entries are symlinks by design.  Either
	 * way the file is that user's or root's, and not writable by others.
	 */
	fd = users ? fileid__open_owned(root_fd, path, q->owner, true, &st) :
		     fileid__open_in_root(root_fd, path, &st);
	if (fd >= 0 && !users &&
	    ((st.st_uid != 0 && st.st_uid != q->owner) || (st.st_mode & S_IWOTH))) {
		close(fd);
		fd = -EPERM;
	}
	if (fd < 0) {
		rejected(path, fd == -ENOEXEC ? "not a non-empty regular file" :
			 fd == -ELOOP ? "reached through a symlink" :
			 fd == -EPERM ? "another user's, or writable by others" : "cannot open",
			 fd == -ENOEXEC || fd == -ELOOP || fd == -EPERM ? 0 : fd);
		return NULL;
	}
	if ((uint64_t)st.st_dev == q->dev && (uint64_t)st.st_ino == q->ino) {
		rejected(path, "points to the binary itself", 0);
		goto fail;
	}
	bin_id = elfsym__build_id(q->es, &bin_len);
	e = fileid__build_id(fd, id, &id_len);
	if (e) {
		rejected(path, "no build-id to read", e);
		goto fail;
	}
	/* By debuglink, build-ids are compared only when both files have one. */
	if ((crc ? bin_len && id_len : true) &&
	    (id_len != bin_len || memcmp(id, bin_id, bin_len))) {
		rejected(path, "another build-id", 0);
		goto fail;
	}
	if (crc) {
		if ((uint64_t)st.st_size > max_crc) {
			rejected(path, "too large to check its CRC", 0);
			inputcap__hit(INPUTCAP_DEBUG_CRC);
			goto fail;
		}
		e = file_crc32(fd, (uint64_t)st.st_size, &got);
		if (e) {
			rejected(path, "cannot read its CRC", e);
			*err = e == -ENOMEM ? e : 0;
			goto fail;
		}
		if (got != *crc) {
			rejected(path, "CRC mismatch", 0);
			goto fail;
		}
	}
	dbg = elfsym__open_fd(fd, path, q->opts);
	if (!dbg) {
		e = -errno;
		rejected(path, "unreadable ELF file", e);
		*err = e == -ENOMEM ? e : 0;
		goto fail;
	}
	if (elfsym__nr_syms(dbg) <= elfsym__nr_syms(q->es)) {
		rejected(path, "no more function symbols than the binary", 0);
		elfsym__free(dbg);
		goto fail;
	}
	close(fd);
	pr_debug("debugfile: '%s': using '%s'\n", q->path ? q->path : "(binary)", path);
	return dbg;
fail:
	close(fd);
	return NULL;
}

/* Where DEBUG_ROOT is resolved: the host's view, or inside the root. */
static int debug_root_fd(const struct debugfile_query *q)
{
	return q->debug_root_in_root ? q->root_fd : AT_FDCWD;
}

bool debugfile__build_id_path(char *buf, size_t size, const char *root, const uint8_t *id,
			      size_t len)
{
	size_t i;
	int off;

	off = snprintf(buf, size, "%s/.build-id/%02x/", root, id[0]);
	for (i = 1; i < len && off > 0 && (size_t)off < size; i++)
		off += snprintf(buf + off, size - (size_t)off, "%02x", id[i]);
	if (off <= 0 || (size_t)off >= size)
		return false;
	return (size_t)snprintf(buf + off, size - (size_t)off, ".debug") < size - (size_t)off;
}

/* The debuglink candidates, in order; NULL when none fits (logged). */
static struct elfsym *by_debuglink(const struct debugfile_query *q, const char *name,
				   uint32_t crc, int *err)
{
	const char *slash = q->path ? strrchr(q->path, '/') : NULL;
	struct elfsym *dbg = NULL;
	char path[PATH_MAX];
	int dirlen, n;

	if (strchr(name, '/')) {
		rejected(name, "a debuglink name with '/'", 0);
		return NULL;
	}
	if (!slash || q->path[0] != '/') {
		pr_debug("debugfile: '%s': no directory to look in for '%s'\n",
			 q->path ? q->path : "(binary)", name);
		return NULL;
	}
	dirlen = (int)(slash - q->path);
	if (q->root_fd >= 0 || q->root_fd == AT_FDCWD) {
		n = snprintf(path, sizeof(path), "%.*s/%s", dirlen, q->path, name);
		if (n > 0 && (size_t)n < sizeof(path))
			dbg = try_candidate(q, q->root_fd, path, &crc, true, err);
		if (dbg || *err)
			return dbg;
		n = snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, q->path, name);
		if (n > 0 && (size_t)n < sizeof(path))
			dbg = try_candidate(q, q->root_fd, path, &crc, true, err);
		if (dbg || *err)
			return dbg;
	}
	if (q->debug_root) {
		n = snprintf(path, sizeof(path), "%s%.*s/%s", q->debug_root, dirlen, q->path, name);
		if (n > 0 && (size_t)n < sizeof(path))
			dbg = try_candidate(q, debug_root_fd(q), path, &crc, false, err);
	}
	return dbg;
}

struct elfsym *debugfile__open(const struct debugfile_query *q)
{
	struct elfsym *dbg = NULL;
	char path[PATH_MAX];
	const uint8_t *id;
	const char *name;
	uint32_t crc;
	size_t len;
	int err = 0;

	id = elfsym__build_id(q->es, &len);
	if (id && len >= 2 && q->debug_root && debugfile__build_id_path(path, sizeof(path), q->debug_root, id, len))
		dbg = try_candidate(q, debug_root_fd(q), path, NULL, false, &err);
	name = elfsym__debuglink(q->es, &crc);
	if (!dbg && !err && name)
		dbg = by_debuglink(q, name, crc, &err);
	if (!dbg)
		errno = err ? -err : ENOENT;
	return dbg;
}
