/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer_int: the symbolizer's insides, shared by its files, each
 * calling only into those below it:
 *   symbolizer_frame.c  the entries naming an address: user (through the
 *                       process's mappings, hints and JIT files), kernel;
 *   symbolizer_named.c  code named from files no mapping of it points to
 *                       (--map-anon hints, symbolize --elf, JIT perf maps
 *                       and jitdumps);
 *   symbolizer_wait.c   frames whose file did not answer yet, named
 *                       again later (a caller's deferred samples);
 *   symbolizer_dinfod.c a file's debug file from debuginfod, asked once
 *                       per build-id when its own symbols miss a frame;
 *   symbolizer.c        the modules, one per identity, and a file module's
 *                       file pinned, opened, checked, its symbols loaded and
 *                       looked up; new and free;
 *   fileload.c          a file's blocking work (open, read) as an offload
 *                       job, run off the caller's thread;
 *   imgcache.c          the images (symbols of file contents) within caps,
 *                       and the names handed out.
 * Not a public interface.
 */
#ifndef BPFSYM_SYMBOLIZER_INT_H
#define BPFSYM_SYMBOLIZER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/lru.h"
#include "base/offload.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"
#include "symbolize/imgcache.h"
#include "symbolize/jit/jitmap.h"
#include "symbolize/kernel/kallsyms.h"
#include "symbolize/symbolizer.h"

struct smod {
	struct sym_module pub;	/* first: frames point here */
	char *path;		/* owned; pub.rpt.path */
	size_t path_len;
	struct smod *next;	/* in symbolizer.all_mods */
	struct lru_node lru;	/* files: in symbolizer.file_lru, unless kept */
	bool kept;		/* files: never evicted (a --map-anon hint's, symbolize --elf's) */
	struct fd_slot fd;	/* files: the file, kept open since it was read; -1 for others */
	/* Files only. */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	struct image *img;	/* NULL: never read, the identity is not known */
	uint32_t fail_reason;	/* RPT_OK: the last attempt did not fail */
	int fail_err;		/* its -errno, for symbolizer__pin */
	uint32_t fail_pid;
	unsigned int attempts;	/* failed attempts since the last success */
	bool fail_final;	/* the file itself is unusable: never retried */
	/*
	 * The open or read of the file that did not answer in time, still
	 * running (fileload.c): its frames say RPT_FILE_NO_ANSWER, nothing
	 * waits on it again, and what it makes is taken if it ever ends.
	 */
	struct file_job *job;
	/*
	 * Frames of samples that wait for this file's names (ingest's
	 * deferred samples) point here: never evicted while held.
	 */
	unsigned int holds;
	/* How job was seen to move (symbolizer__stuck): reset when a job is adopted. */
	const struct file_job *watch_job;
	struct offload_watch watch;
	uint64_t watch_since;	/* when watch_job was first watched */
};

enum file_job_kind {
	FILE_JOB_OPEN,		/* open the mapped file (a jitdump) */
	FILE_JOB_OPEN_ID,	/* ...and read its build-id (a module's file) */
	FILE_JOB_SYMS,		/* read the symbols of the open file, and its debug file's */
	FILE_JOB_DEBUGINFOD,	/* fetch (or reopen) the debug file of build-id id (debuginfod.h) */
};

/* One file's blocking work, run by the offload pool (fileload.c). */
struct file_job {
	struct offload_job job;	/* first */
	enum file_job_kind kind;
	/* In: copies, the job may outlive the symbolizer. */
	char *proc_root, *debug_root, *path;	/* DEBUGINFOD: path is the cached file, in and out */
	uint32_t pid;			/* whose view; 0: the host's (hints, --elf) */
	struct mapping mp;		/* OPEN*: what to open (path: ours); SYMS: dev, ino */
	uint32_t peers[FILEID_PEERS_MAX];	/* the namespace's processes, when pid is gone */
	size_t nr_peers;
	/* Out (SYMS: fd is a dup of the module's, in). */
	int fd;
	int err;			/* 0 or -errno */
	uint8_t id[FILEID_BUILD_ID_MAX];	/* DEBUGINFOD: in */
	size_t id_len;
	struct elfsym *es, *dbg;
	int gate_fd;			/* tests: a byte read from it before the work; -1: none */
};

/* The kernel's symbols, once loaded (NULL: none): waits for an async load. */
struct ksyms *symbolizer_ksyms(struct symbolizer *s);

#define SYMBOLIZER_KCACHE	1024	/* a power of two */

#define SYM_HUNG_DEVS	8	/* the pool's workers: more cannot hang at once */

struct symbolizer {
	char *proc_root;
	char *debug_root;
	const struct proc_table *procs;	/* the model: other processes of a namespace */
	struct ksyms *ks;		/* read symbolizer_ksyms(): maybe still loading */
	uint64_t text_addr;
	pthread_t ks_thread;		/* symbolizer_opts.kernel_async: loading ks */
	bool ks_loading;		/* ...and not joined yet */
	const char *ks_path;		/* what it loads */
	/*
	 * Kernel addresses looked up lately (ip -> its symbol in ks): return
	 * addresses repeat from sample to sample, and a binary search over
	 * ~200k symbols misses the cache at every step (ksyms__lookup was the
	 * recorder's top function under churn, 10% of its profile).
	 */
	struct kcache_ent {
		uint64_t ip;
		const struct ksym *ks;
	} kcache[SYMBOLIZER_KCACHE];
	struct htab files;	/* hash of (dev, ino, mtime) -> smod */
	struct htab named;	/* hash of (kind, path), JIT files' with (dev, ino) -> smod */
	struct smod *all_mods;	/* every module of both tables */
	/*
	 * File modules by last use (pinned or asked about), most recent
	 * first: past max_mods the least recent goes (its fd closed; its
	 * image, shared by build-id, stays in the image cache), so a
	 * recording of weeks among ever new binaries holds a bounded number.
	 */
	struct lru file_lru;
	size_t nr_file_mods, max_mods;
	uint64_t mods_evicted;
	struct imgcache images;	/* the files' symbols, and every name handed out */
	struct fd_cache fds;	/* file modules' open files */
	struct smod anon;
	struct smod *vmlinux;
	struct jitmap *jit;	/* perf maps and jitdumps, per process */
	struct offload *pool;	/* where files are opened and read; NULL: here */
	bool dinfod;		/* debuginfod lookups on (debuginfod.h) */
	struct htab dinfod_ids;	/* hash of a build-id -> struct dinfod_id (symbolizer_dinfod.c) */
	struct dinfod_id *dinfod_list;	/* ...each of them, to free */
	unsigned int dinfod_busy;	/* debuginfod jobs running */
	uint64_t no_answer;	/* file jobs that did not end in time, or found no worker */
	/*
	 * File systems (st_dev) with a job that did not end in time: their
	 * other files are not asked at all (RPT_FILE_NO_ANSWER at once), so
	 * one hostile mount holds one worker, not all of them.  Forgotten as
	 * soon as a look finds that job ended or its worker's clock moved
	 * (a slow file being read: symbolizer.c dev_hung), not
	 * only when its own file is looked up again: a slow file that no
	 * sample names again must not leave its file system unnamed.
	 */
	struct hung_dev {
		uint64_t dev;			/* 0: a free slot */
		struct smod *m;			/* whose job it is */
		struct offload_watch watch;	/* that job's worker's clock */
	} hung_devs[SYM_HUNG_DEVS];
	/*
	 * Tests only (-1 otherwise): each file job reads a byte from (a dup
	 * of) this fd before its work, so a test makes a file as slow as it
	 * likes, or one that never answers.
	 */
	int test_gate_fd;
	struct elfsym *vdso;	/* our own [vdso]'s symbols, once read */
	size_t vdso_size;
	bool vdso_tried;
	/* --map-anon files, by the id proc_hint.id holds. */
	struct hint_file {
		struct smod *m;
		struct mapping mp;	/* the whole file, as if mapped at 0 */
	} *hints;
	uint32_t nr_hints;
	/* symbolizer__elf()'s last file: asked about again and again. */
	char *elf_path;
	struct smod *elf_mod;
	struct mapping elf_map;
};

/* symbolizer.c */

/*
 * A new module of kind @kind whose path is @path (malloc'd, @len bytes,
 * taken even on failure), stored under @h in @tab.  NULL on ENOMEM.
 */
struct smod *module_add(struct symbolizer *s, struct htab *tab, uint64_t h, uint32_t kind,
			char *path, size_t len);
/* Free every module of the tables, closing their files. */
void modules_free(struct symbolizer *s);
/* The module of kind @kind named @name; "[name]" when @bracket.  NULL on ENOMEM. */
struct smod *named_module(struct symbolizer *s, uint32_t kind, const char *name, bool bracket);
/*
 * The module of the file version mapped by @mp, by (dev, ino, mtime).
 * NULL on ENOMEM.  Making a new one may evict the least recently used
 * other file module: a module pointer is valid until the next call.
 */
struct smod *file_module(struct symbolizer *s, const struct mapping *mp);
/* @m (a file module) is never evicted. */
void module_keep(struct symbolizer *s, struct smod *m);
/* Take @fd (consumed), a checked open of @m's file: learn or check @m's identity.  0 or -errno. */
int module_adopt(struct symbolizer *s, struct smod *m, int fd);
/* Open @m's file through @pid's view and adopt it.  0 or -errno, remembered. */
int module_open(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp);
/* A failed attempt on @m through @pid: the reason its frames get. */
uint32_t note_failure(struct smod *m, uint32_t pid, int err);
/*
 * Make @m's symbols available: RPT_OK, or why not.  @mp NULL (a retry,
 * the process may be gone): what needs the file opened anew through the
 * mapping says RPT_FILE_NO_ANSWER instead.
 */
uint32_t file_load(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp);
/* Name @ip of mapping @mp (a file's) of process @pid into @out. */
void file_frame(struct symbolizer *s, uint32_t pid, const struct mapping *mp, uint64_t ip,
		struct sym_frame *out);
/*
 * The second half of file_frame(): name @out, whose module is @m and
 * offset set, through file_load(@mp, which may be NULL as there).
 */
void file_name(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp,
	       struct sym_frame *out);

/* fileload.c */

/* A job opening @mp's file through @pid's view (@kind an OPEN one).  NULL on ENOMEM. */
struct file_job *file_job__open(const struct symbolizer *s, uint32_t pid,
				const struct mapping *mp, enum file_job_kind kind);
/* A job reading the symbols of @m's open file (a dup of its fd).  NULL + errno. */
struct file_job *file_job__syms(const struct symbolizer *s, const struct smod *m, uint32_t pid);
/*
 * A job fetching the debug file of build-id @id (@len bytes) through
 * debuginfod, or with @cached, reopening the file a fetch found.  NULL on
 * ENOMEM.
 */
struct file_job *file_job__dinfod(const struct symbolizer *s, const uint8_t *id, size_t len,
				  const char *cached);
/* Close and free what @j holds, and @j.  NULL is a no-op. */
void file_job__free(struct file_job *j);

/* symbolizer_dinfod.c */

/*
 * A frame of file module @m (loaded, no debug file) that its own symbols
 * could not name (@reason): ask debuginfod for its debug file once per
 * build-id.  RPT_FILE_NO_ANSWER: asked, the answer comes in a job (@m's);
 * RPT_OK: a debug file was attached now (no pool): look again; else @reason.
 */
uint32_t dinfod_ask(struct symbolizer *s, struct smod *m, uint32_t reason);
/* Take what @j, @m's debuginfod job that ended, made: the build-id's answer, @m's debug file. */
int dinfod_adopt(struct symbolizer *s, struct smod *m, struct file_job *j);
/* @j, a debuginfod job, is given up: its build-id may be asked again. */
void dinfod_abandon(struct symbolizer *s, const struct file_job *j);
/* Free the answers kept by build-id. */
void dinfod_free(struct symbolizer *s);

/* symbolizer_named.c */

/* Name @ip of process @p from its JIT's own files: true when they did. */
bool jit_frame(struct symbolizer *s, const struct proc *p, uint64_t ip, struct sym_frame *out);

#endif /* BPFSYM_SYMBOLIZER_INT_H */
