/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the sampler and the mapping tracker share: the ring buffer, the
 * targets, the counters, the settings.  Each object defines these maps; the
 * loader makes the mapping tracker reuse the sampler's (bpf_map__reuse_fd),
 * so there is one ring buffer and one time-ordered stream.
 */
#ifndef BPFSYM_MAPS_BPF_H
#define BPFSYM_MAPS_BPF_H

/* Settings, fixed by the loader before load. */
const volatile __u32 target_mode = BPFSYM_TARGET_ALL;
const volatile bool follow_children = false;
/*
 * Follow a process's mappings only from its first sample on, where the
 * sampler takes them whole (BPFSYM_EV_RESYNC): the tracker then does
 * nothing for a process never sampled, most of a busy host's short-lived
 * programs at 19-99 Hz, where following every exec, mmap and mprotect
 * from the start was the recorder's main cost (bench/README.md).  A
 * process is followed while it has a fresh view (unw_fresh); one
 * evicted from that LRU is taken whole again at its next sample.  Set
 * for whole-system and cgroup targets; -p and a workload keep the
 * tracker's full history.
 */
const volatile bool lazy_maps = false;
/* Wake the reader only once this many bytes wait in the ring buffer. */
const volatile __u64 wakeup_bytes = 1 << 20;

/* Sizes are set by the loader at load time (no recompile to change them). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

/* --cgroup: the one cgroup whose tasks (and its descendants') are sampled. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

/*
 * The unwinder's process views (bpf/unwind.bpf.h), written by userspace
 * from the mapping model.  The tracker lends a parent's view to its
 * child at fork (unw_alias) and drops a view at exec, so between such an
 * event and userspace's new view the walk never uses another image's
 * mappings.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);	/* tgid */
	__type(value, struct bpfsym_unw_proc);
} unw_procs SEC(".maps");

/*
 * py_procs[tgid]: the process's CPython (bpf/python.bpf.h), written by
 * userspace when an interpreter file is mapped, dropped by the tracker at
 * exec; a child that has not exec'd uses its parent's (unw_alias).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);	/* tgid */
	__type(value, struct bpfsym_py_proc);
} py_procs SEC(".maps");

/*
 * A forked child without a view of its own walks with its parent's
 * (child tgid -> parent tgid, written by the tracker at fork).  Copying
 * the parent's view instead (6 KiB into a hash) cost 5-8 us a fork, and
 * most forks exec at once, which drops it.  The loan is by tgid: were the
 * parent to exit and its tgid be reused before userspace writes the
 * child's own view (a reader's batch, ~100 ms), the child would walk with
 * the newcomer's view for that while; the walk checks every frame.  Sized
 * like unw_procs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);	/* tgid */
	__type(value, __u32);	/* the tgid whose view it walks with */
} unw_alias SEC(".maps");

/*
 * A process's executable mappings since its exec, kept by the tracker
 * (struct bpfsym_unw_fresh): the walk looks here when the view written by
 * userspace misses or is not there yet.  LRU: a lost entry only sends the
 * walk to userspace's view; prealloc'd, so the tracker never allocates.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);	/* tgid */
	__type(value, struct bpfsym_unw_fresh);
} unw_fresh SEC(".maps");

/* A file's table, BPFSYM_UNW_FILE_VAL(id, gen), by identity (include/bpfsym.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFSYM_UNW_MAX_TABLES);
	__type(key, struct bpfsym_unw_file);
	__type(value, __u32);
} unw_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFSYM_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Flags for submitting a record.  By default the kernel wakes the reader
 * whenever it has caught up: once per sample, which cost ~6 us a sample and
 * put the reader on the CPU at the next tick.  Like perf, wake it only past
 * a watermark; the reader also drains on a timer, so nothing waits long.
 */
static __always_inline __u64 rb_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/* Whether the current task, of thread group @tgid, is being profiled. */
static __always_inline bool is_target(__u32 tgid)
{
	if (target_mode == BPFSYM_TARGET_ALL)
		return true;
	if (target_mode == BPFSYM_TARGET_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_map, 0) == 1;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/*
 * The fresh view of process @tgid, for the walk: not one seeded from the
 * start-up snapshot (BPFSYM_UNW_FRESH_SEEDED), whose tables are unknown:
 * the walk finds those mappings in userspace's view, or by their VMA.
 */
static __always_inline const struct bpfsym_unw_fresh *unw_fresh_of(const __u32 *tgid)
{
	const struct bpfsym_unw_fresh *f = bpf_map_lookup_elem(&unw_fresh, tgid);

	return f && !(f->flags & BPFSYM_UNW_FRESH_SEEDED) ? f : NULL;
}

/*
 * The views process @tgid walks with: its own (userspace's in *@v, the
 * tracker's in *@f), else, if it has neither, its parent's from fork.
 * Either may be NULL.
 */
static __always_inline void unw_views(__u32 tgid, const struct bpfsym_unw_proc **v,
				      const struct bpfsym_unw_fresh **f)
{
	__u32 *parent;

	/* Tested one by one: clang would OR the pointers, which the verifier refuses. */
	*v = bpf_map_lookup_elem(&unw_procs, &tgid);
	*f = unw_fresh_of(&tgid);
	if (*f)
		return;
	if (*v)
		return;
	parent = bpf_map_lookup_elem(&unw_alias, &tgid);
	if (!parent)
		return;
	*v = bpf_map_lookup_elem(&unw_procs, parent);
	*f = unw_fresh_of(parent);
}

#endif /* BPFSYM_MAPS_BPF_H */
