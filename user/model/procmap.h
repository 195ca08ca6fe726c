/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * procmap: the mapping model.  Per process, the executable mappings that
 * were in place, found by address with a binary search.  A process is
 * keyed by (pid, pstart) so that a reused pid is a different process.
 *
 * The model is fed by events replayed in time order, interleaved with the
 * samples (map, unmap, fork, exec, exit: proc__map, proc__unmap,
 * proc_table__fork, proc__clear_maps, proc_table__remove), so when a sample
 * is handled the model holds the mappings of that moment.  A start-up
 * snapshot fills processes that existed before recording (proc__map per
 * mapping, or proc__parse_maps of /proc/PID/maps text as a fallback).
 * Memory is bounded: processes (LRU), mappings per process, path bytes.
 * No libbpf here.
 */
#ifndef BPFSYM_PROCMAP_H
#define BPFSYM_PROCMAP_H

#include <stddef.h>
#include <stdint.h>

enum mapping_kind {
	MAPPING_FILE = 0,	/* backed by a file: dev, ino, path */
	MAPPING_ANON = 1,	/* anonymous memory (JITs), [heap], [stack] */
	MAPPING_SPECIAL = 2,	/* [vdso], [vsyscall], ... : path holds the name */
};

struct mapping {
	uint64_t start;		/* first address */
	uint64_t end;		/* one past the last address */
	uint64_t pgoff;		/* file offset of start, in BYTES */
	uint64_t dev;		/* makedev(major, minor) as in stat's st_dev */
	uint64_t ino;
	int64_t mtime_sec;	/* the file's mtime when mapped (0: unknown) */
	uint32_t mtime_nsec;
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t kind;		/* enum mapping_kind */
	uint32_t mnt_ns;	/* inode of the mount namespace path is in (nsfs); 0: unknown */
	const char *path;	/* as the process sees it, " (deleted)" stripped; NULL for plain anon */
	int deleted;		/* the maps line said " (deleted)" */
};

struct proc_table;
struct proc;

/*
 * A table of at most @max_procs processes (0: 65536).  When full, adding
 * evicts the process used least recently.  NULL + errno.
 */
struct proc_table *proc_table__new(size_t max_procs);
void proc_table__free(struct proc_table *pt);	/* NULL is a no-op */

/* The process (pid, pstart), or NULL if not in the table. */
struct proc *proc_table__find(struct proc_table *pt, uint32_t pid, uint64_t pstart);

/*
 * Insert an empty process (pid, pstart); any other process with the same
 * pid is dropped (the pid was reused).  Returns it, or NULL + errno.
 * A struct proc stays valid until it is removed, replaced, or evicted by a
 * later proc_table__add().
 */
struct proc *proc_table__add(struct proc_table *pt, uint32_t pid, uint64_t pstart);

/* Drop every process with this pid. */
void proc_table__remove(struct proc_table *pt, uint32_t pid);

size_t proc_table__nr_procs(const struct proc_table *pt);
/* Bytes of the distinct paths the table's mappings hold now (capped). */
size_t proc_table__path_bytes(const struct proc_table *pt);
/* Processes ever added, counting those since removed. */
size_t proc_table__nr_seen(const struct proc_table *pt);

uint32_t proc__pid(const struct proc *p);

/*
 * Replace @p's mappings with the executable ones (PROT_EXEC) described by
 * /proc/PID/maps text in @buf (@len bytes, need not be NUL terminated).
 * Lines that do not parse are skipped, and so are mappings overlapping an
 * earlier one.  Returns the number of executable mappings kept, or -errno:
 * -E2BIG (over 2^20 lines, or over the per-process mapping cap), -ENOMEM;
 * on error @p is unchanged.
 */
int proc__parse_maps(struct proc *p, const char *buf, size_t len);

/* Read @path (a /proc/PID/maps file) and proc__parse_maps() it; -errno. */
int proc__load_maps(struct proc *p, const char *path);

/* Forget every mapping and hint (exec: a new image). */
void proc__clear_maps(struct proc *p);

/* Forget every mapping, keep the hints (the same image, taken whole again). */
void proc__drop_maps(struct proc *p);

/*
 * Make [m->start, m->end) map as @m (an mmap, an mprotect adding PROT_EXEC,
 * the new place of an mremap): whatever overlapped it is cut away, splitting
 * a mapping that @m lies inside (the pieces keep their own pgoff arithmetic:
 * the right piece's pgoff moves by the bytes cut from its left).  m->path is
 * copied (interned, shared by every mapping of the table with that path);
 * a path of 4096 bytes or more, or one past the table's path budget, is
 * not kept: the mapping is made with path NULL, its range and (dev, ino)
 * intact.  A set m->mnt_ns becomes @p's (proc__mnt_ns).  Pointers from
 * proc__find_mapping() into @p are invalid afterwards.  0, or -errno:
 * -EINVAL (empty or inverted range), -E2BIG (the per-process mapping cap,
 * 65536), -ENOMEM.  On error @p is unchanged.
 */
int proc__map(struct proc *p, const struct mapping *m);

/*
 * Remove [start, end) from @p's mappings (munmap, mprotect dropping
 * PROT_EXEC, the old place of an mremap), splitting a mapping that covers
 * the range only partly; an empty range removes nothing.  0 or -errno:
 * -EINVAL (start > end), -E2BIG (a split past the per-process mapping cap),
 * -ENOMEM (a split needs room); @p is then unchanged.  Pointers into @p are
 * invalid afterwards.
 */
int proc__unmap(struct proc *p, uint64_t start, uint64_t end);

/*
 * A user's hint (--map-anon, see hints.h): [start, end) of the process
 * holds a copy of the bytes of hint file @id from file offset @file_off.
 * Hints are carried by the process: copied to a forked child, dropped at
 * exec (proc__clear_maps) and when the process leaves the table.
 */
struct proc_hint {
	uint64_t start, end;
	uint64_t file_off;	/* file offset of start */
	uint32_t id;		/* the caller's: which file */
};

#define PROC_MAX_HINTS 64

/* Add @h to @p; for an address two hints cover, the later one wins.  0, -EINVAL (empty), -E2BIG (PROC_MAX_HINTS), -ENOMEM. */
int proc__add_hint(struct proc *p, const struct proc_hint *h);

/*
 * Give @p, which has none, a copy of @parent's hints: a child the model
 * learns of after its fork (lazy_maps), still running its parent's image.
 * 0 (also when @p has hints already or @parent none), -ENOMEM.
 */
int proc__inherit_hints(struct proc *p, const struct proc *parent);

/* The hint covering @addr in @p (NULL @p: none), or NULL.  Valid until @p's hints change. */
const struct proc_hint *proc__find_hint(const struct proc *p, uint64_t addr);

/* The process with this pid started last, or NULL. */
struct proc *proc_table__find_pid(struct proc_table *pt, uint32_t pid);

/* The start time @p is keyed by, with its pid. */
uint64_t proc__pstart(const struct proc *p);

/* Number of mappings of @p. */
size_t proc__nr_maps(const struct proc *p);

/* Mapping @i of @p (0 <= @i < proc__nr_maps), by start; valid until @p's maps change. */
const struct mapping *proc__map_at(const struct proc *p, size_t i);

/*
 * Fork: a new process (pid, pstart) holding a copy of @parent's mappings
 * and hints, in its mount namespace (any other process with this pid is
 * dropped, as by proc_table__add).
 * Returns it, or NULL + errno: EINVAL (@pid is @parent's, or @parent is of
 * another table), ENOSPC (a table of one process cannot hold both),
 * ENOMEM.  @parent stays valid: a full table evicts another process.
 */
struct proc *proc_table__fork(struct proc_table *pt, const struct proc *parent,
			      uint32_t pid, uint64_t pstart);

/*
 * The mount namespace (its nsfs inode number) of @p's latest mapping that
 * said which (proc__map with m->mnt_ns set; copied at fork), or 0.
 */
uint32_t proc__mnt_ns(const struct proc *p);

/*
 * The processes of mount namespace @mnt_ns (as proc__mnt_ns() says; not
 * 0), most recently used first: @prev NULL gives the first, then pass the
 * previous one.  NULL when there are no more.  A walk does not reorder
 * the table; it is invalid once a process is added or removed.  O(n) for
 * the whole walk: for the rare file that no other route opens.
 */
const struct proc *proc_table__next_in_mnt_ns(const struct proc_table *pt, uint32_t mnt_ns,
					       const struct proc *prev);

/* The mapping holding @addr, or NULL.  O(log n).  Valid until @p's maps change. */
const struct mapping *proc__find_mapping(const struct proc *p, uint64_t addr);

/*
 * Note that @p was sampled: returns 1 the first time, then 0.  The table
 * counts such processes (proc_table__nr_sampled), which is what "processes
 * seen" means to a user: the model also knows processes never sampled.
 */
int proc__note_sampled(struct proc *p);

/* Processes noted as sampled, counting those since removed. */
size_t proc_table__nr_sampled(const struct proc_table *pt);

/* The file offset an address in @m corresponds to: the pgoff arithmetic. */
static inline uint64_t mapping__file_offset(const struct mapping *m, uint64_t addr)
{
	return addr - m->start + m->pgoff;
}

#endif /* BPFSYM_PROCMAP_H */
