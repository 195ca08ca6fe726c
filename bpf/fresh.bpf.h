/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sending a process's executable mappings, and keeping its fresh view
 * (unw_fresh) in step with them: shared by the mapping tracker, which
 * does it as mappings change, and by the sampler, which takes a
 * process's mappings whole at its first sample when the tracker follows
 * only the processes already sampled (lazy_maps).  Needs maps.bpf.h and
 * vma.bpf.h first.
 */
#ifndef BPFSYM_FRESH_BPF_H
#define BPFSYM_FRESH_BPF_H

/* Map events are too big for the BPF stack: built here, copied out at their size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfsym_map_ev);
} map_scratch SEC(".maps");

/*
 * The unwinder is on: lend views at fork (unw_alias), mark the records
 * the fresh view took whole (BPFSYM_MF_VIEWED), and wake the reader for
 * a mapping it could not take (a file whose table userspace has not
 * built yet): until it has read the mapping, userspace's view of the
 * process lacks it.  (The fresh views themselves are kept in every mode.)
 */
const volatile bool unwinder_on = false;
/*
 * ...at most once per wake_gap_ns (set by the loader from the sampling
 * period): each forced wakeup queues an irq_work, a self-IPI, which on
 * this VM made an exec's three MAP records cost 52 us instead of 5, and
 * the reader ran once per mapping.
 */
const volatile __u64 wake_gap_ns = 0;
static __u64 last_wake_ns;

static __always_inline __u64 map_rb_flags(bool viewed)
{
	__u64 now;

	if (!unwinder_on || viewed)
		return rb_flags();
	now = bpf_ktime_get_ns();
	if (now - last_wake_ns < wake_gap_ns)
		return rb_flags();
	/* Racy between CPUs on purpose: two wakeups at once are harmless. */
	last_wake_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * Process @ctgid, forked by @ptgid and still running its image, walks
 * with the parent's views (or the one the parent borrows) until
 * userspace writes its own; a loan a reused pid left is dropped.
 */
static __always_inline void unw_lend(__u32 ctgid, __u32 ptgid)
{
	__u32 *lender;

	if (!unwinder_on)
		return;		/* no unwinder: no walk to lend a view to */
	if (bpf_map_lookup_elem(&unw_fresh, &ptgid) || bpf_map_lookup_elem(&unw_procs, &ptgid))
		bpf_map_update_elem(&unw_alias, &ctgid, &ptgid, BPF_ANY);
	else if ((lender = bpf_map_lookup_elem(&unw_alias, &ptgid)))
		bpf_map_update_elem(&unw_alias, &ctgid, lender, BPF_ANY);
	else
		bpf_map_delete_elem(&unw_alias, &ctgid);	/* a reused pid's */
}

/* A new process's fresh view: no ranges yet (the value is copied whole). */
static const struct bpfsym_unw_fresh fresh_empty;

#define CUT_MET		1	/* fresh_cut(): a range met [start, end) */
#define CUT_PARTIAL	2	/* ...and reached outside it */

/* A pass over a fresh view's ranges, one a bpf_loop step (fresh_cut, fresh_slot). */
struct fresh_pass {
	struct bpfsym_unw_fresh *f;
	__u64 start, end;	/* fresh_cut: the range lost */
	__u32 hit;		/* fresh_cut: CUT_*; fresh_slot: the free slot found */
};

static long fresh_cut_step(__u32 k, void *ctx)
{
	struct fresh_pass *p = ctx;
	struct bpfsym_unw_fresh *f = p->f;
	__u64 rs, re;

	if (!f || k >= f->nr || k >= BPFSYM_UNW_FRESH_RANGES)
		return 1;
	rs = f->r[k].start;
	re = rs + f->r[k].len;
	if (rs >= p->end || re <= p->start || rs == re)
		return 0;
	p->hit |= CUT_MET;
	if (rs < p->start || re > p->end)
		p->hit |= CUT_PARTIAL;
	f->r[k].len = 0;
	return 0;
}

/*
 * Drop the ranges of fresh view @f that meet [start, end): their length
 * goes to 0, which no PC matches (compacting would cost the verifier a
 * state per index; a process mapping 32 ranges in all gets a userspace
 * view instead).  Returns CUT_MET if one did, | CUT_PARTIAL if one of
 * them reached outside the range: its remainder is dropped too (the walk
 * will not find it there) and the view is marked partial.  The view is
 * shared with the walk and, for a process with several threads, with
 * other CPUs: every index is bounded, so a race costs a range, never
 * memory safety.  A bpf_loop, not an inline loop: the verifier checks
 * one step, not 32 (a third of the tracker's start-up before).
 */
static __always_inline int fresh_cut(struct bpfsym_unw_fresh *f, __u64 start, __u64 end)
{
	struct fresh_pass p = { .f = f, .start = start, .end = end };

	bpf_loop(BPFSYM_UNW_FRESH_RANGES, fresh_cut_step, &p, 0);
	if (p.hit & CUT_PARTIAL)
		f->flags |= BPFSYM_UNW_FRESH_PARTIAL;
	return p.hit;
}

/* The fresh view of process @tgid may lack an executable range (a lookup failed). */
static __always_inline void fresh_lost(__u32 tgid)
{
	struct bpfsym_unw_fresh *f = bpf_map_lookup_elem(&unw_fresh, &tgid);

	if (f)
		f->flags |= BPFSYM_UNW_FRESH_PARTIAL;
}

/* The current task's process has one thread: no other CPU changes its views at once. */
static __always_inline bool one_thread(void)
{
	return bpf_get_current_task_btf()->signal->nr_threads == 1;
}

/*
 * Whether fresh view @f of the current task's process @tgid now says all
 * userspace's would: the tracker made it (not seeded from the snapshot,
 * whose tables are unknown), the tracker alone saw the change (one
 * thread) and userspace has written no view of its own, which would now
 * lag.
 */
static __always_inline bool fresh_whole(const struct bpfsym_unw_fresh *f, __u32 tgid)
{
	return !(f->flags & BPFSYM_UNW_FRESH_SEEDED) && one_thread() &&
	       !bpf_map_lookup_elem(&unw_procs, &tgid);
}

static long fresh_slot_step(__u32 k, void *ctx)
{
	struct fresh_pass *p = ctx;
	struct bpfsym_unw_fresh *f = p->f;

	if (!f || k >= f->nr || k >= BPFSYM_UNW_FRESH_RANGES || !f->r[k].len) {
		p->hit = k;
		return 1;
	}
	p->hit = k + 1;		/* all full so far: past them */
	return 0;
}

/* The first free slot of fresh view @f: an empty one, else its end (f->nr). */
static __always_inline __u32 fresh_slot(struct bpfsym_unw_fresh *f)
{
	struct fresh_pass p = { .f = f };

	bpf_loop(BPFSYM_UNW_FRESH_RANGES, fresh_slot_step, &p, 0);
	return p.hit;
}

/*
 * Put MAP record @e's mapping (the current task's) in its process's
 * fresh view, with its file's table if userspace has given it one.  1 if
 * the view is whole for it: userspace need not write one
 * (BPFSYM_MF_VIEWED).  Global, so the verifier checks it once, apart
 * from the path walk of its callers.
 */
__noinline int fresh_add(const struct bpfsym_map_ev *e)
{
	struct bpfsym_unw_file key = {};
	__u32 tgid, table = BPFSYM_UNW_NO_TABLE, gen = 0, *val, n;
	struct bpfsym_unw_fresh *f;
	struct bpfsym_unw_range *r;
	bool whole = true;
	__u64 len;

	if (!e)
		return 0;
	tgid = e->pid;
	len = e->end - e->start;
	f = bpf_map_lookup_elem(&unw_fresh, &tgid);
	if (!f)
		return 0;
	if (!(e->flags & BPFSYM_MF_ANON)) {
		/* The vdso's identity is all zeroes: no file. */
		if (!(e->flags & BPFSYM_MF_SPECIAL)) {
			key.dev = e->dev;
			key.ino = e->ino;
			key.mtime_sec = e->mtime_sec;
			key.mtime_nsec = e->mtime_nsec;
		}
		val = bpf_map_lookup_elem(&unw_files, &key);
		if (val) {
			table = BPFSYM_UNW_FILE_ID(*val);
			gen = BPFSYM_UNW_FILE_GEN(*val);
		} else {
			whole = false;	/* userspace builds its table once it reads this */
		}
	}
	if (fresh_cut(f, e->start, e->end) & CUT_PARTIAL)
		whole = false;
	/*
	 * A slot of its own even when two threads add at once (a lost range
	 * would make the view say "nothing executable here" where there is):
	 * with a single thread, the first empty one (a JIT's churn would
	 * fill the view), else a new one by an atomic add.
	 */
	if (one_thread()) {
		n = fresh_slot(f);
		if (n == f->nr && n < BPFSYM_UNW_FRESH_RANGES)
			f->nr = n + 1;
	} else {
		n = f->nr < BPFSYM_UNW_FRESH_RANGES ? __sync_fetch_and_add(&f->nr, 1) :
						      BPFSYM_UNW_FRESH_RANGES;
	}
	if (n >= BPFSYM_UNW_FRESH_RANGES) {
		f->flags |= BPFSYM_UNW_FRESH_PARTIAL;
		return 0;
	}
	barrier_var(n);		/* else clang drops the mask the verifier needs */
	r = &f->r[n & (BPFSYM_UNW_FRESH_RANGES - 1)];
	r->start = e->start;
	r->pgoff = (__u32)(e->pgoff >> 12);
	r->table = table;
	r->gen = gen;
	/* The length last: the walk matches nothing in the slot until then. */
	barrier();
	r->len = len > 0xffffffffull ? 0xffffffffu : (__u32)len;
	/*
	 * At exec, the view is on_exec's new one, the process has one
	 * thread, and on_exec has deleted userspace's view.
	 */
	return whole && (e->cause == BPFSYM_MAP_EXEC || fresh_whole(f, tgid));
}

static __always_inline void emit_task_ev(__u16 type, struct task_struct *p, __u32 pid, __u32 ppid,
					 struct task_struct *parent)
{
	struct bpfsym_task_ev *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(BPFSYM_STAT_LOST_TASK_EVENTS);
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->pid = pid;
	e->ppid = ppid;
	/* Plain loads: the tracepoints' tasks are trusted pointers. */
	e->pstart = p->group_leader->start_boottime;
	e->ppstart = parent ? parent->group_leader->start_boottime : 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_ringbuf_submit(e, rb_flags());
}

/*
 * Send the MAP record of VMA @vi of the current task.  Global, so that the
 * verifier checks it (and its path walk) once, not at every call site.
 */
__noinline int emit_map(const struct vma_info *vi, __u32 cause)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpfsym_map_ev *e;
	__u32 zero = 0, size;

	if (!vi)
		return 0;
	e = bpf_map_lookup_elem(&map_scratch, &zero);
	if (!e)
		return 0;
	size = map_ev_fill(e, task, vi, cause);
	if (fresh_add(e) && unwinder_on)
		e->flags |= BPFSYM_MF_VIEWED;
	if (bpf_ringbuf_output(&events, e, size, map_rb_flags(e->flags & BPFSYM_MF_VIEWED)))
		stat_inc(BPFSYM_STAT_LOST_TASK_EVENTS);
	return 0;
}

#endif /* BPFSYM_FRESH_BPF_H */
