/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jitmap: the names JITs publish for their code, per process: the perf map
 * (/tmp/perf-PID.map, PID as the process sees itself in its own PID
 * namespace, read inside the process's root) and jitdump files (found when
 * the process maps jit-PID.dump, as perf's JIT agents do).  Files are read
 * incrementally and re-read when a lookup misses, at most every refresh
 * interval, since a JIT names code after it runs it.  Parsing is
 * perfmap.c's and jitdump.c's.  No libbpf here.
 *
 * A perf map is in /tmp, where anyone can write: it is used only when it
 * is a regular file owned by the process's own user or by root.
 */
#ifndef BPFSYM_JITMAP_H
#define BPFSYM_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct offload;

struct jitmap;

struct jitmap_opts {
	const char *proc_root;		/* "/proc" when NULL */
	size_t max_procs;		/* processes with JIT state kept; 0: 1024 */
	size_t max_fds;			/* JIT files kept open; 0: 64 */
	uint64_t refresh_ns;		/* re-read a file at most this often; 0: 100 ms */
	uint64_t retry_ns;		/* look again for a missing perf map; 0: 1 s */
	/*
	 * Where the files are opened and read (base/offload.h), waited for
	 * wait_ns (0: 100 ms): one that did not answer is read when it does,
	 * its names missing meanwhile.  NULL: here, as long as it takes.
	 */
	struct offload *pool;
	uint64_t wait_ns;
};

/* NULL + errno. */
struct jitmap *jitmap__new(const struct jitmap_opts *opts);
void jitmap__free(struct jitmap *jm);	/* NULL is a no-op */

/* Whether @path (a mapped file's) names a jitdump file: .../jit-DIGITS.dump. */
bool jitmap__is_jitdump_path(const char *path);

/*
 * Process (@pid, @pstart) mapped the jitdump file open on @fd (consumed,
 * closed on error too), named @path in its view.  Read now.  0 or -errno.
 */
int jitmap__add_jitdump(struct jitmap *jm, uint32_t pid, uint64_t pstart, int fd, const char *path);

struct jit_hit {
	const char *name;	/* valid until the next jitmap call */
	uint64_t start;		/* the named code's start */
	const char *source;	/* the file's path as the process sees it; ditto */
	uint64_t dev, ino;	/* the file's identity */
};

/*
 * The JIT symbol naming @addr in process (@pid, @pstart): jitdump first,
 * then the perf map (found and read on first use, re-read after a miss).
 * 0 with *@out filled, or -ENOENT (no JIT name), -ENOMEM.
 */
int jitmap__lookup(struct jitmap *jm, uint32_t pid, uint64_t pstart, uint64_t addr,
		   struct jit_hit *out);

#endif /* BPFSYM_JITMAP_H */
