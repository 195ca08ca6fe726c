/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * snapshot: the processes that ran before the recording.  The tracker's
 * iter/task_vma program lists their executable mappings once, at start-up
 * (probes__snapshot()); this keeps those of the targets (with -p only the
 * targets', with -G only those of processes in the cgroup, so no other
 * process's files are opened) in the mapping model, remembers which
 * processes it kept, and gives each a fresh view in BPF, as the tracker
 * keeps for the processes it sees exec.
 */
#ifndef BPFSYM_RECORD_SNAPSHOT_H
#define BPFSYM_RECORD_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct mapevents;
struct probes;
struct proc_table;

/* Which processes the snapshot keeps: snapshot_filter.mode. */
enum snapshot_mode {
	SNAPSHOT_ALL,		/* every process */
	SNAPSHOT_PIDS,		/* those in pids[] */
	SNAPSHOT_CGROUP,	/* those in the cgroup at path cgroup (as /proc/PID/cgroup names it) */
};

struct snapshot_filter {
	enum snapshot_mode mode;
	const uint32_t *pids;
	size_t nr_pids;
	const char *cgroup;
};

struct snapshot;

/*
 * A snapshot that applies the records it keeps (per @f, which must
 * outlive it) to @mev.  NULL + errno.
 */
struct snapshot *snapshot__new(const struct snapshot_filter *f, struct mapevents *mev);
void snapshot__free(struct snapshot *s);	/* NULL is a no-op */

/*
 * probes__snapshot()'s callback (@ctx: the snapshot): one MAP record.  The
 * records of one process come together, so the decision is made once.  0,
 * or -ENOMEM.
 */
int snapshot__record(void *ctx, const void *rec, size_t len);

/* The processes kept, in the order the snapshot gave them; *@n their number. */
const uint32_t *snapshot__pids(const struct snapshot *s, size_t *n);

/*
 * Give each process kept a fresh view of its executable mappings (as
 * @pt's model has them) in @bpf's maps: without one, each munmap, data
 * mprotect or MAP_FIXED data mmap of theirs would send an UNMAP record
 * (at a syscall's exit the tracker cannot tell whether the range held
 * code).  More than the view's 32 ranges: the view says it is partial,
 * and such a process's changes are all sent.  The tables are left
 * unknown: the walk looks in userspace's views first, which
 * unwmaps__first_views() writes for these processes.  Returns how many
 * got one.
 */
size_t snapshot__seed_fresh(const struct snapshot *s, struct proc_table *pt, struct probes *bpf);

#endif /* BPFSYM_RECORD_SNAPSHOT_H */
