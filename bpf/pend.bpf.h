/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pending mappings: following a process from its first sample on kernels
 * without task work or the VMA iterator kfuncs (Debian 12's 6.1).
 *
 * Where the kernel has them, a process's first sample takes its mappings
 * whole with the VMA iterator, from a task work (sampler.bpf.c).  Without
 * them, a sample cannot list a process's VMAs: it runs in an interrupt,
 * where bpf_find_vma works once (its mmap-lock release is a per-CPU
 * irq_work) and only finds the VMA around an address.  Following every
 * process from its exec instead sends a MAP record with a path walk for
 * each of its code mappings, sampled or not: 0.70 % of a CPU at 300
 * programs/s (bench/README.md, section 7), most of it for programs that
 * are never sampled.
 *
 * So here the tracker notes, for a process not followed yet, what each
 * MAP record would say (a struct vma_info: the VMA's range and file, as
 * numbers) in a list of its own, unw_pend, from its exec on, and cuts it
 * as code is unmapped; no record, no path.  The first sample sends the
 * list as the records (RESYNC, then MAP with cause FIRST_SAMPLE, as the
 * VMA iterator would), and from then on the tracker follows the process
 * as usual.  The kernel pointers kept (file, dentry, mount) are only
 * read with probe reads, and only while the list says the VMA is there:
 * the VMA holds its file, and so the dentry and mount.
 *
 * A forked child runs its parent's image: a child of a followed parent
 * keeps nothing (its first sample sends FORK, and userspace copies the
 * parent's mappings) but the code it maps itself; a child of a parent
 * with a list gets a copy of it.  A list that fills up (PEND_MAX) is sent
 * at once, from the tracker, and the process followed from there.
 *
 * Needs maps.bpf.h, vma.bpf.h and fresh.bpf.h first.
 */
#ifndef BPFSYM_PEND_BPF_H
#define BPFSYM_PEND_BPF_H

/* Set with lazy_maps where the kernel has no first-sample kfuncs (loader). */
const volatile bool pend_maps = false;

#define PEND_MAX	8		/* a power of two: indexes are masked */

#define PEND_EXEC	1u	/* the list starts at an exec (or a copy of such a list) */
#define PEND_TRUNC	2u	/* a mapping was lost: a VMA look-up failed */

struct pend_list {
	__u64 pstart;		/* its process's start_boottime: a reused tgid's list is not its */
	__u32 nr;
	__u32 flags;		/* PEND_* */
	struct vma_info v[PEND_MAX];	/* an entry cut away has start == end */
};

/*
 * LRU: an evicted list costs that process's names, counted at its first
 * sample (BPFSYM_STAT_FIRST_TRUNC); prealloc'd, so the tracker never
 * allocates.  A list outlives its process (deleting it cost every exit
 * 0.5 us): the LRU takes the room back, and the process start time in it
 * keeps a later process with the same tgid from taking it for its own.
 * Sized like unw_fresh by the loader (1 entry when unused).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);	/* tgid */
	__type(value, struct pend_list);
} unw_pend SEC(".maps");

static const struct pend_list pend_empty;

/*
 * 1 while a tracker program edits lists on this CPU.  A sample's timer
 * interrupt can land in one (a tp_btf program does not hold off
 * perf_event programs as bpf_prog_active does for kprobes): a sample in
 * on_exec between pend_exec and the image's entries sent an empty list,
 * claimed the process, and the entries then went to a new list nothing
 * sends: a program whose own code and loader stayed unnamed for its
 * whole life, while the libraries mapped after were named.  The process
 * runs the tracker here, so no other CPU samples it meanwhile: per-CPU
 * is exact.  Its next sample sends the list.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pend_busy SEC(".maps");

/* The tracker holds (1) or releases (0) this CPU's lists; nothing unless lists are kept. */
static __always_inline void pend_hold(__u32 held)
{
	__u32 zero = 0, *b;

	if (!pend_maps)
		return;
	b = bpf_map_lookup_elem(&pend_busy, &zero);
	if (b)
		*b = held;
}

/* Whether the sample interrupted a tracker program editing lists. */
static __always_inline bool pend_held(void)
{
	__u32 zero = 0, *b = bpf_map_lookup_elem(&pend_busy, &zero);

	return b && *b;
}

/* A fresh view the walk does not use (a forked child walks with its parent's). */
static const struct bpfsym_unw_fresh fresh_seeded = { .flags = BPFSYM_UNW_FRESH_SEEDED };

/* The start time of @t's process, which a list names. */
static __always_inline __u64 pend_pstart(struct task_struct *t)
{
	return t->group_leader->start_boottime;
}

/* The list of the current task's process @tgid, or NULL (none, or a former process's). */
static __always_inline struct pend_list *pend_of(__u32 tgid)
{
	struct pend_list *p = bpf_map_lookup_elem(&unw_pend, &tgid);

	if (p && p->pstart != pend_pstart(bpf_get_current_task_btf()))
		return NULL;
	return p;
}

/*
 * A new, empty list for the current task's process @tgid, with @flags;
 * NULL if the map refused it.
 */
static __always_inline struct pend_list *pend_new(__u32 tgid, __u32 flags)
{
	struct pend_list *p;

	if (bpf_map_update_elem(&unw_pend, &tgid, &pend_empty, BPF_ANY))
		return NULL;
	p = bpf_map_lookup_elem(&unw_pend, &tgid);
	if (!p)
		return NULL;
	p->pstart = pend_pstart(bpf_get_current_task_btf());
	p->flags = flags;
	return p;
}

/* The current task's process @tgid has exec'd: its list starts again, empty. */
static __always_inline void pend_exec(__u32 tgid)
{
	pend_new(tgid, PEND_EXEC);
}

/*
 * Process @child (@ctgid) was forked by the current task's process
 * @ptgid, which is not followed: the child gets a copy of the parent's
 * list, if it keeps one.
 */
static __always_inline void pend_fork(__u32 ptgid, __u32 ctgid, struct task_struct *child)
{
	struct pend_list *p = pend_of(ptgid);

	if (!p || bpf_map_update_elem(&unw_pend, &ctgid, p, BPF_ANY))
		return;
	p = bpf_map_lookup_elem(&unw_pend, &ctgid);
	if (p)
		p->pstart = child->start_boottime;	/* a new process leads its group */
}

/* Sending a list, one entry a bpf_loop step (each a MAP record and its path walk). */
struct pend_pass {
	struct pend_list *p;
	__u32 nr;		/* the entries to send */
};

static long pend_send_step(__u32 i, void *ctx)
{
	struct pend_pass *c = ctx;
	struct pend_list *p = c->p;
	struct vma_info *v;

	if (!p || i >= c->nr)
		return 1;
	v = &p->v[i & (PEND_MAX - 1)];
	if (v->start < v->end)
		emit_map(v, BPFSYM_MAP_FIRST_SAMPLE);
	return 0;
}

/*
 * [start, end) of process @tgid, not followed, lost its code: cut its
 * list's entries that meet it (a part of one cut away drops it whole:
 * the loader's own partial unmaps are of data, and code so split is
 * rare).  1 if the process has a list.  Unrolled, not a bpf_loop: most
 * calls are a loader's data mappings and RELRO, and PEND_MAX is small.
 */
static __always_inline int pend_cut(__u32 tgid, __u64 start, __u64 end)
{
	struct pend_list *p = pend_of(tgid);
	struct vma_info *v;
	__u32 i, n;

	if (!p)
		return 0;
	n = p->nr;
#pragma unroll
	for (i = 0; i < PEND_MAX; i++) {
		if (i >= n)
			break;
		v = &p->v[i];
		if (v->start < end && start < v->end)
			v->end = v->start;	/* gone, or split: its remainder is lost too */
	}
	return 1;
}

/*
 * Follow the current task's process @tgid from now on, if nothing does:
 * claim its fresh view, tell userspace its mappings, drop the list.  By
 * what the list holds:
 *   - from its exec (PEND_EXEC): RESYNC, then the list as MAP records,
 *     all of its code;
 *   - a child that has not exec'd since its fork, with no such list:
 *     FORK (userspace copies the parent's mappings, as the tracker's
 *     fork record makes it do), then what it mapped itself;
 *   - else (a list or a fresh view evicted from its LRU): the list's
 *     records alone, over what userspace knew of it, and the view marked
 *     partial (BPFSYM_STAT_FIRST_TRUNC).
 * The sampler calls it at the process's first sample, the tracker when
 * the list is full.  Global, so the verifier checks it (and the path
 * walks under it) once.
 */
__noinline int pend_flush(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf(), *leader, *parent;
	struct pend_pass c = {};
	struct bpfsym_unw_fresh *f;
	struct pend_list *p;
	__u32 ptgid = 0;
	bool forked, whole, inherit;

	/* Exiting, its mappings gone (and the files a list names, maybe). */
	if (!task->mm)
		return 0;
	leader = task->group_leader;
	parent = leader->real_parent;
	/*
	 * Still its parent's image: no exec since the fork, in it or (for
	 * the parent's mappings to be its) in the parent, still the same.
	 */
	forked = parent && leader->self_exec_id == leader->parent_exec_id &&
		 parent->self_exec_id == leader->parent_exec_id;
	p = pend_of(tgid);
	whole = p && (p->flags & PEND_EXEC);
	inherit = !whole && forked;
	if (bpf_map_update_elem(&unw_fresh, &tgid, inherit ? &fresh_seeded : &fresh_empty, BPF_NOEXIST))
		return 0;	/* another CPU claimed it */
	stat_inc(BPFSYM_STAT_FIRST_SAMPLE);
	if (forked)
		ptgid = parent->tgid;
	if (whole || inherit) {
		/* A view of userspace's made before the process stopped being followed: stale. */
		if (bpf_map_lookup_elem(&unw_procs, &tgid))
			bpf_map_delete_elem(&unw_procs, &tgid);
	}
	if (whole) {
		emit_task_ev(BPFSYM_EV_RESYNC, task, tgid, ptgid, forked ? parent : NULL);
	} else if (inherit) {
		emit_task_ev(BPFSYM_EV_FORK, task, tgid, ptgid, parent);
		/* As the tracker lends at fork (its seeded view is not walked). */
		unw_lend(tgid, ptgid);
	}
	if (p) {
		c.p = p;
		c.nr = p->nr < PEND_MAX ? p->nr : PEND_MAX;
		bpf_loop(PEND_MAX, pend_send_step, &c, 0);
		p = pend_of(tgid);
		if (p && (p->flags & PEND_TRUNC))
			whole = inherit = false;
		bpf_map_delete_elem(&unw_pend, &tgid);
	}
	if (whole || inherit)
		return 0;
	stat_inc(BPFSYM_STAT_FIRST_TRUNC);
	f = bpf_map_lookup_elem(&unw_fresh, &tgid);
	if (f)
		f->flags |= BPFSYM_UNW_FRESH_PARTIAL;
	return 0;
}

/*
 * Note VMA @vi of the current task's process @tgid, not followed, in its
 * list (made if it has none: a child that maps code of its own before
 * its first sample).  1 if the list is full: the caller sends it
 * (pend_keep).  Global, so the verifier checks it once, not at every
 * step of the callers' VMA walks (inline, it tripled the tracker's
 * verification time).
 */
__noinline int pend_add(__u32 tgid, const struct vma_info *vi)
{
	struct pend_list *p;
	__u32 n;

	if (!vi)
		return 0;
	p = pend_of(tgid);
	if (!p && !(p = pend_new(tgid, 0)))
		return 0;
	n = p->nr;
	if (n >= PEND_MAX)
		return 1;
	p->v[n & (PEND_MAX - 1)] = *vi;
	p->nr = n + 1;
	return 0;
}

/*
 * pend_add, and where the list is full, send it and @vi (@cause) now:
 * the process is followed from here.  pend_flush is called here, in the
 * program, not from pend_add: one call frame fewer on the way down to
 * the path walk, whose chain's stack 6.1 caps at 512 bytes in all
 * (scripts/check-bpf-stack.py).
 */
static __always_inline void pend_keep(__u32 tgid, const struct vma_info *vi, __u32 cause)
{
	if (pend_add(tgid, vi)) {
		pend_flush(tgid);
		emit_map(vi, cause);
	}
}

/* A VMA look-up for process @tgid's list failed: a mapping may be missing from it. */
static __always_inline void pend_lost(__u32 tgid)
{
	struct pend_list *p = pend_of(tgid);

	if (p)
		p->flags |= PEND_TRUNC;
}

#endif /* BPFSYM_PEND_BPF_H */
