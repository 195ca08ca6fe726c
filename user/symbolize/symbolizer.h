/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer: turns one sampled address into a name.  User addresses go
 * through the process's mapping (procmap) to a file offset and then to the
 * ELF symbols of that file.  A mapped file is identified by (dev, ino,
 * mtime) and read when it is mapped (symbolizer__pin); its symbols are
 * loaded once per build-id and shared by every process and every copy of
 * the file mapping it.  Kernel addresses go to kallsyms.  A miss is data
 * (a reason), not an error.  No libbpf here.
 */
#ifndef BPFSYM_SYMBOLIZER_H
#define BPFSYM_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/procmap.h"
#include "report/report.h"

struct symbolizer;
struct offload;

struct symbolizer_opts {
	const char *proc_root;		/* "/proc" when NULL (tests point it elsewhere) */
	const char *kallsyms;		/* "/proc/kallsyms" when NULL */
	const char *debug_root;		/* "/usr/lib/debug" when NULL: build-id debug files */
	int no_kernel;			/* do not load kallsyms (user-only recordings) */
	int kernel_async;		/* load kallsyms on a thread of its own (a recorder's
					 * start-up): the first use of kernel symbols waits
					 * for it, and a failure there is a warning */
	int no_demangle;		/* keep C++/Rust names as mangled in the file */
	int no_jit;			/* do not read perf maps and jitdumps */
	size_t max_files;		/* symbol tables kept in memory, one per build-id; 0: 4096 */
	size_t max_mem;			/* bytes those tables may take; 0: 512 MiB (the one in use
					 * is kept even past it) */
	size_t max_fds;			/* mapped files kept open; 0: 256 */
	size_t max_modules;		/* file versions known, least recently used dropped; 0: 8192 */
	/*
	 * The mapping model, read only: when a process is gone, the other
	 * processes of its mount namespace to open its files through
	 * (fileid__open_mapped).  NULL: only our own namespace.
	 */
	const struct proc_table *procs;
	/*
	 * Where files are opened and read (base/offload.h), so that a file
	 * that never answers (a hung FUSE mount) costs its own names and
	 * nothing else: the caller waits at most 100 ms for one, the file's
	 * frames then say RPT_FILE_NO_ANSWER and it is not waited on again,
	 * what it makes being taken if it ever ends.  Outlives the
	 * symbolizer.  NULL: on the caller's thread (tools, tests).
	 */
	struct offload *offload;
};

/*
 * A resolved frame.  Strings live as long as the symbolizer; module too,
 * unless it is a file's (RPT_MOD_FILE): valid until the next call, or
 * held (symbolizer__hold).  module is NULL when the address is in no
 * mapping.
 */
struct sym_module {
	struct rpt_module rpt;		/* identity as written to reports */
};

struct sym_frame {
	struct sym_module *module;	/* NULL: no mapping */
	uint64_t offset;		/* user: file offset; kernel: the address */
	const char *sym;		/* NULL when unnamed */
	uint64_t sym_off;
	uint32_t reason;		/* enum rpt_reason */
};

/* NULL + errno.  Loads kallsyms now (unless no_kernel) so a failure is early. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);	/* NULL is a no-op */

/*
 * Read the file that mapping @m of process (@pid, @pstart) maps, now, while the
 * mapping surely exists: call it at each MAP event of a file mapping (mmap,
 * mprotect to exec, exec, the start-up snapshot), before any sample in it.
 * The file is opened through PROC_ROOT/PID/map_files/START-END, else
 * PROC_ROOT/PID/root + m->path resolved inside that root, else, the
 * process being gone (its MAP record is read late), by m->path in the
 * mount namespace m->mnt_ns: ours, or a live process's of it that the
 * model (opts.procs) knows; it must be a non-empty regular file with the
 * mapping's (dev, ino) and, when m->mtime is known (not 0), mtime.  Its
 * build-id is read now (its symbols on first use) and the file is kept
 * open, up to max_fds files, least recently pinned closed first: a file
 * deleted or replaced at its path later still symbolizes as what ran.  A file already known costs a table lookup (and
 * a reopen if its fd was closed since and its symbols are not in memory).
 * 0 (also for a mapping that is not a file's), or -errno: -ESTALE (the file
 * found is not the one mapped), -ENOEXEC (not a regular ELF file), -ENOENT,
 * -EACCES...  A failure is remembered as for symbolizer__user: the reason
 * its frames get, retried through other processes a bounded number of
 * times.
 */
int symbolizer__pin(struct symbolizer *s, uint32_t pid, uint64_t pstart, const struct mapping *m);

/*
 * Make host file @path a source of --map-anon hints (hints.h): it is
 * opened and identified now, so a bad FILE is an error at start-up rather
 * than unnamed frames later.  *@id receives the id for struct proc_hint.
 * 0 or -errno (-ENOEXEC: not a regular, non-empty ELF file).
 */
int symbolizer__add_hint_file(struct symbolizer *s, const char *path, uint32_t *id);

/*
 * Resolve user address @ip of process @pid, whose mapping model is @p
 * (p may be NULL: no mapping).  A hint of @p covering @ip comes first: the
 * address is then at file offset hint.file_off + (ip - hint.start) of the
 * hint's file.  Then, for anonymous memory (or no mapping), the process's
 * perf map and jitdump files (jitmap.h), read when first needed and again
 * when an address misses.  A pinned file is read through the fd kept
 * since; otherwise (never pinned, or its fd closed since) it is opened as
 * by symbolizer__pin through @pid's view, and must also have the build-id
 * known for it (else RPT_BUILD_ID_MISMATCH).  Always fills @out; returns 0.
 */
int symbolizer__user(struct symbolizer *s, uint32_t pid, const struct proc *p,
		     uint64_t ip, struct sym_frame *out);

/* symbolizer__user() in mapping @m (NULL: none), which holds @ip. */
int symbolizer__user_mapping(struct symbolizer *s, uint32_t pid, const struct mapping *m,
			     uint64_t ip, struct sym_frame *out);

/*
 * Resolve an address of the ELF file at host path @path, as `bpfsym
 * symbolize --elf` does: @addr is a virtual address of the file (what
 * `addr2line -e` takes; for a relocatable .o, a file offset), or with
 * @file_offset an offset in the file.  The file is opened once and kept
 * like a mapped file (module, image, debug files, demangling: the same
 * path as a sampled address).  Always fills @out; 0, or -errno when the
 * file cannot be opened or is not a regular ELF file.
 */
int symbolizer__elf(struct symbolizer *s, const char *path, uint64_t addr, bool file_offset,
		    struct sym_frame *out);

/*
 * Frames whose file did not answer yet (RPT_FILE_NO_ANSWER while the
 * file's open or read still runs on the offload pool): a caller may keep
 * the sample and name them again later rather than write them unnamed.
 *
 * symbolizer__retry(): name @f, a frame of process @pid, again from its
 * module and offset, taking what the file's job made if it ended (and
 * starting its next one, the symbols' read after the open, waiting for it
 * as symbolizer__user does).  The mapping is not needed (the process may
 * be gone): what would need the file opened anew through it keeps
 * RPT_FILE_NO_ANSWER.  Returns whether @f still waits: it still says
 * RPT_FILE_NO_ANSWER and its file's job still runs.  A frame of any other
 * reason or module is left alone (false).
 */
bool symbolizer__retry(struct symbolizer *s, uint32_t pid, struct sym_frame *f);

/*
 * Whether the job @f's file waits for looks hung rather than slow (false
 * when there is none): its worker used no CPU in the last @stall_ns
 * (offload__stalled: a file system that does not answer leaves it still,
 * a big file on a loaded machine keeps it busy), or it has been watched
 * for @max_ns.  @now_ns is CLOCK_MONOTONIC; the watch starts at the first
 * call for a job, so call it now and then while waiting.
 */
bool symbolizer__stuck(struct symbolizer *s, const struct sym_frame *f, uint64_t now_ns,
		       uint64_t stall_ns, uint64_t max_ns);

/*
 * Keep @f's module (a frame's module is valid only until the next call
 * otherwise: file modules past max_modules are dropped) until as many
 * symbolizer__release() calls: a frame kept for later holds it.  Names
 * need no hold: every name handed out lives as long as the symbolizer.
 */
void symbolizer__hold(struct symbolizer *s, const struct sym_frame *f);
void symbolizer__release(struct symbolizer *s, const struct sym_frame *f);

/* Resolve kernel address @ip through kallsyms.  Always fills @out; returns 0. */
int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out);

/* The runtime _text address from kallsyms (0 if unknown or restricted). */
uint64_t symbolizer__text_addr(struct symbolizer *s);

/* True when kallsyms addresses are all zero (kptr_restrict). */
int symbolizer__kernel_restricted(struct symbolizer *s);

/* Bytes the symbol tables in memory take now. */
size_t symbolizer__loaded_bytes(const struct symbolizer *s);

/* Files whose symbols are in memory now (for tests and diagnostics). */
size_t symbolizer__nr_loaded(const struct symbolizer *s);

/* What the symbolizer holds now (a metrics endpoint's cache sizes). */
struct symbolizer_stats {
	uint64_t file_modules;		/* file versions known (capped by max_modules) */
	uint64_t modules_evicted;	/* dropped past the cap */
	uint64_t named_modules;		/* JIT files, hint files, kernel modules */
	uint64_t images;		/* file contents known (by build-id), held by modules */
	uint64_t images_loaded;		/* files whose symbols are in memory (max_files) */
	uint64_t loaded_bytes;		/* their bytes (max_mem) */
	uint64_t fds;			/* files kept open (max_fds) */
	uint64_t names;			/* distinct names handed out (they live as long as it) */
	uint64_t no_answer;		/* file opens and reads not answered in time (or no worker free) */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif /* BPFSYM_SYMBOLIZER_H */
