/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Off-CPU time (--off-cpu, issue 28): a BTF tracepoint on sched_switch.
 *
 * At a target's switch-out the task is still current: its user registers
 * are those it entered the kernel with, so the sampler's walker
 * (unwind.bpf.h, Python frames included) takes its whole user stack, as
 * for a CPU sample.  The stack, the process, thread and state hash to a
 * key; a key not seen before is sent once as a BPFSYM_EV_OFFCPU_STACK
 * record, in order with the mapping records that name its frames.  The
 * thread's entry then keeps (time, key).  At its switch-in (a `next` of a
 * later sched_switch) the time it was off is summed under the key: a
 * thread blocking 100k times a second at one place costs one map update
 * each, not a record.
 *
 * The kernel stack is taken at the switch-in by korc.bpf.h's unwinder,
 * from the registers the task saved (offcpu_kside): half of what
 * bpf_get_stack costs at the switch-out, the scheduler's frames kept, and
 * nothing for an interval under the minimum.  It has a key and a record
 * of its own (BPFSYM_OFFCPU_KTAG), and the time is summed under the pair
 * (struct bpfsym_offcpu_key).  Without the unwinder's tables (t->kin 0),
 * bpf_get_stack at the switch-out puts the kernel stack in the switch-out's
 * record and key, the pair's kernel key 0.
 *
 * A thread that blocks again where it blocked lately is not walked again
 * (BPFSYM_STAT_OFF_REUSED).  A walk keeps a witness (struct unw_walk):
 * every user stack word it read.  Its frames are a function of its
 * registers, those words and the process's view, so the same registers,
 * the same words (one read of the stack) and the same view generation
 * give the same frames, and the hash of the frames the entry kept for
 * that witness is this switch-out's.  Not for a walk that ended short of
 * the root, met an interpreter, or used a mapping from outside userspace's
 * view: nothing says when those change.  The kernel stack is taken every
 * time.
 *
 * The sums live in two maps; the recorder flips `offcpu_gen` and reads
 * (then empties) the one BPF stopped writing at its previous flip, a
 * second or more before: no interval is summed into an element being read
 * and deleted.
 *
 * Included by sampler.bpf.c after unwind.bpf.h and korc.bpf.h: it shares the scratch
 * sample and the walk state with on_sample, per CPU.  sched_switch runs
 * with interrupts off, so a cpu-clock sample (a timer interrupt) cannot
 * come in between; an NMI sample (cycles) can, and is dropped while
 * `offcpu_busy` is set (BPFSYM_STAT_OFF_BUSY).  A first sample's task
 * work (sampler, lazy_maps) may be preempted mid-walk: its switch-out is
 * not walked then (counted lost).
 */
#ifndef BPFSYM_OFFCPU_BPF_H
#define BPFSYM_OFFCPU_BPF_H

/* Settings (the loader's, before load). */
const volatile bool want_offcpu = false;
const volatile __u64 offcpu_min_ns = 0;			/* shorter intervals are dropped, counted */
const volatile __u32 offcpu_states = (1u << BPFSYM_OS_NR) - 1;	/* 1 << enum bpfsym_offstate */
/*
 * Check the kernel unwinder (korc.bpf.h) against the kernel's in the same
 * run: each switch-out keeps the hash of bpf_get_stack's frames but the
 * first, each switch-in unwinds the task's saved stack and compares
 * (BPFSYM_STAT_KORC_*).  A test's setting (BPFSYM_KORC_CHECK=1).
 */
const volatile bool korc_check = false;

/*
 * The recorder's count of its deletions from offcpu_seen, bumped after
 * them: a thread whose key was seen at one count need not look again
 * while it stays (struct offcpu_thread, seen_key).
 */
__u32 offcpu_seen_epoch = 0;

/* Which sums map BPF writes: the recorder flips it (.bss, mmapped). */
__u32 offcpu_gen = 0;

/* include/linux/sched.h's state bits: not in BTF. */
#define OS_TASK_INTERRUPTIBLE	0x0001
#define OS_TASK_UNINTERRUPTIBLE	0x0002
#define OS_EXIT_DEAD		0x0010
#define OS_EXIT_ZOMBIE		0x0020
#define OS_TASK_DEAD		0x0080
#define OS_TASK_NOLOAD		0x0400

/* Frames of bpf_get_stack's to skip: the program's and bpf_trace_run4's. */
#define OFFCPU_SKIP		2

/*
 * Witnesses a thread keeps: the places it blocked at lately.  Three of
 * UNW_WIT_MAX words keep an entry under 2 KiB, the allocator's size class
 * (4 took 4 KiB a thread).
 */
#define OFFCPU_WITS		3

/* A user walk's witness (see above) and the hash of the frames it gave. */
struct offcpu_wit {
	__u64 pc, sp, fp;	/* the registers it started from; sp 0: none */
	__u64 uhash;
	__u32 nu;		/* its slots */
	__u32 gen;		/* the view's generation */
	__u32 py;		/* py_epoch: no interpreter was found */
	__u32 nr, span;		/* words, and the bytes above sp they lie in */
	__u16 off[UNW_WIT_MAX];
	__u64 val[UNW_WIT_MAX];
};

/* A thread of a target, from its first switch-out to its exit. */
struct offcpu_thread {
	__u64 ts;		/* when it left the CPU; 0: on one, or not followed */
	__u64 key;		/* the key its time goes under; 0: its stacks did not reach the recorder */
	__u64 pstart;		/* its process's start (struct bpfsym_sample) */
	__u64 seen_key;		/* a key found in offcpu_seen, or sent, at offcpu_seen_epoch seen_epoch */
	__u32 seen_epoch;
	__u32 tgid;		/* the process of the witnesses and pstart */
	__u32 next;		/* the witness to replace next */
	__u32 kcheck_n;		/* korc_check: the switch-out's kernel frames */
	__u64 kcheck;		/* ...and the hash of all but the first; 0: none */
	__u64 kseen_key;	/* a kernel side's key found in offcpu_seen, or sent, at kseen_epoch */
	__u32 kseen_epoch;
	__u32 kin;		/* 1: its kernel stack is taken at its switch-in (korc) */
	struct offcpu_wit wit[OFFCPU_WITS];
};

/*
 * Threads of targets by tid (sizes are the loader's; 1 without
 * --off-cpu).  Not preallocated: an entry is ~1.7 KB (2 KiB allocated)
 * and only threads that switched out have one (the hash map's any-context allocator, 6.1); it
 * goes at the thread's exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct offcpu_thread);
} offcpu_threads SEC(".maps");

_Static_assert(sizeof(struct offcpu_thread) <= 2048 - 64, "a thread's entry past the 2 KiB size class");

/* A new entry's first value, zero (per CPU: never written). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_thread);
} offcpu_blank SEC(".maps");

/* The stack a witness is checked against: one read of its span. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[UNW_WIT_SPAN]);
} offcpu_wbuf SEC(".maps");

/* Keys whose stack record was sent; the recorder deletes those it let go. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} offcpu_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct bpfsym_offcpu_key);
	__type(value, struct bpfsym_offcpu_sum);
} offcpu_sum0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct bpfsym_offcpu_key);
	__type(value, struct bpfsym_offcpu_sum);
} offcpu_sum1 SEC(".maps");

/* 1 while this CPU's scratch sample and walk state hold an off-CPU walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_busy SEC(".maps");

/* The state @preempt and @prev_state say (enum bpfsym_offstate). */
static __always_inline __u32 offcpu_state(bool preempt, __u32 prev_state)
{
	if (preempt || !prev_state)
		return BPFSYM_OS_PREEMPT;
	if (prev_state & OS_TASK_NOLOAD)
		return BPFSYM_OS_OTHER;
	if (prev_state & OS_TASK_INTERRUPTIBLE)
		return BPFSYM_OS_SLEEP;
	if (prev_state & OS_TASK_UNINTERRUPTIBLE)
		return BPFSYM_OS_DISK;
	return BPFSYM_OS_OTHER;
}

static __always_inline __u64 offcpu_mix(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * The hash of scratch frames ips[@first...] (@nr of them), seeded with
 * @h.  Global, so the verifier checks its loop once, not at every state
 * each caller reaches it with.  A plain bounded loop, not bpf_loop: a
 * callback a frame, looking the scratch up each time, cost more than the
 * rest of the key.
 */
__noinline __u64 offcpu_hash_scratch(__u64 h, __u32 first, __u32 nr)
{
	const struct bpfsym_sample *s;
	__u32 zero = 0, i, idx;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return h;
	for (i = 0; i < BPFSYM_MAX_FRAMES; i++) {
		idx = first + i;
		if (i >= nr)
			break;
		/* Checked where it is used: clang would step a pointer the verifier cannot bound. */
		asm volatile("" : "+r"(idx));
		if (idx >= 2 * BPFSYM_MAX_FRAMES)
			break;
		h = offcpu_mix(h, s->ips[idx]);
	}
	return h;
}

/*
 * The key of the scratch sample @s, @nk kernel frames filled, with a user
 * side of @nu slots hashing to @uhash; never 0.
 */
static __always_inline __u64 offcpu_key(const struct bpfsym_sample *s, __u32 nk, __u32 nu, __u64 uhash)
{
	const __u64 *comm = (const __u64 *)s->comm;
	__u64 h;

	h = offcpu_mix(0x6f666663707500ull, (__u64)s->pid << 32 | s->tid);
	h = offcpu_mix(h, s->pstart);
	h = offcpu_mix(h, s->cgroup_id);
	h = offcpu_mix(h, comm[0]);
	h = offcpu_mix(h, comm[1]);
	h = offcpu_mix(h, (__u64)s->flags << 32 | nk << 16 | nu);
	h = offcpu_hash_scratch(h, 0, nk);
	h = offcpu_mix(h, uhash);
	/* Untagged: a kernel side's keys are (BPFSYM_OFFCPU_KTAG), in the same seen set. */
	h &= ~BPFSYM_OFFCPU_KTAG;
	return h ? h : 1;
}

/*
 * Whether every word witness @x read is the same on the stack now: one
 * read of its span.  Global, so the verifier checks the loop once.
 */
__noinline int offcpu_wit_words(const struct offcpu_wit *x)
{
	__u32 zero = 0, i, nr, span, off;
	__u8 *buf;

	if (!x)
		return 0;
	nr = x->nr;
	span = x->span;
	if (!nr)
		return 1;
	buf = bpf_map_lookup_elem(&offcpu_wbuf, &zero);
	if (!buf || !span || span > UNW_WIT_SPAN)
		return 0;
	if (bpf_probe_read_user(buf, span, (void *)x->sp))
		return 0;
	for (i = 0; i < UNW_WIT_MAX; i++) {
		if (i >= nr)
			break;
		off = x->off[i];
		if (off > UNW_WIT_SPAN - 8)
			return 0;
		if (*(__u64 *)(buf + off) != x->val[i])
			return 0;
	}
	return 1;
}

/*
 * Whether witness @x of process @tgid holds now, its registers @x's
 * already: the same view, no interpreter since, every word the same.
 */
static __always_inline bool offcpu_wit_holds(const struct offcpu_wit *x, __u32 tgid)
{
	const struct bpfsym_unw_proc *v;

	if (ustack_mode == BPFSYM_USTACK_TABLES) {
		v = bpf_map_lookup_elem(&unw_procs, &tgid);
		if (!v || v->gen != x->gen)
			return false;
	}
	if (want_interp && x->py != py_epoch)
		return false;
	return offcpu_wit_words(x);
}

/*
 * The witness of @t (of process @tgid: offcpu_out cleared those of
 * another) that holds at registers @pc, @sp, @fp, or NULL.
 */
static __always_inline const struct offcpu_wit *offcpu_wit_find(const struct offcpu_thread *t, __u32 tgid,
							       __u64 pc, __u64 sp, __u64 fp)
{
	__u32 i;

	if (!sp)
		return NULL;
	/*
	 * Registers first, then the words: two callers of one wait leave the
	 * CPU with the same registers, and only their stacks tell them apart.
	 */
	for (i = 0; i < OFFCPU_WITS; i++) {
		if (t->wit[i].sp == sp && t->wit[i].pc == pc && t->wit[i].fp == fp &&
		    offcpu_wit_holds(&t->wit[i], tgid))
			return &t->wit[i];
	}
	return NULL;
}

/*
 * Keep the witness of the walk just done (from @pc, @sp, @fp; @nu slots
 * hashing to @uhash) in @t, in place of its oldest: none held, so none it
 * replaces is this walk's.
 */
static __always_inline void offcpu_wit_keep(struct offcpu_thread *t, __u64 pc, __u64 sp, __u64 fp,
					    __u32 nu, __u64 uhash)
{
	const struct unw_walk *w;
	struct offcpu_wit *x;
	__u32 zero = 0, i;

	w = bpf_map_lookup_elem(&unw_walks, &zero);
	if (!w || ustack_mode == BPFSYM_USTACK_KERNEL_FP || !w->wit_ok || w->end != BPFSYM_UEND_ROOT || !sp)
		return;
	i = t->next < OFFCPU_WITS ? t->next : 0;
	t->next = i + 1;
	x = &t->wit[i];
	x->pc = pc;
	x->sp = sp;
	x->fp = fp;
	x->nu = nu;
	x->uhash = uhash;
	x->gen = w->wit_gen;
	x->py = w->wit_py;
	x->nr = w->wit_nr;
	x->span = w->wit_span;
	bpf_probe_read_kernel(x->off, sizeof(x->off), w->wit_off);
	bpf_probe_read_kernel(x->val, sizeof(x->val), w->wit_val);
}

/*
 * Whether @key's record was sent (offcpu_seen), remembered in the
 * thread's (*@ck, *@ce) while the recorder deletes nothing; *@epoch gets
 * the recorder's count, read before the look-up (a deletion after it is
 * counted after it), for offcpu_seen_mark.
 */
static __always_inline bool offcpu_seen_has(__u64 key, __u64 *ck, __u32 *ce, __u32 *epoch)
{
	*epoch = offcpu_seen_epoch;
	if (key == *ck && *epoch == *ce)
		return true;
	if (!bpf_map_lookup_elem(&offcpu_seen, &key))
		return false;
	*ck = key;
	*ce = *epoch;
	return true;
}

/*
 * @key's record was sent: seen from now (and by the thread).  Full: sent
 * again next time, which costs a record, not the time.
 */
static __always_inline void offcpu_seen_mark(__u64 key, __u64 *ck, __u32 *ce, __u32 epoch)
{
	__u8 one = 1;

	if (!bpf_map_update_elem(&offcpu_seen, &key, &one, BPF_ANY)) {
		*ck = key;
		*ce = epoch;
	}
}

/*
 * Take the current task's stacks into the scratch sample (@t its entry)
 * and send them if their key is new; the key, or 0 when they did not
 * reach the recorder.
 */
static __always_inline __u64 offcpu_take(void *ctx, struct offcpu_thread *t, struct task_struct *task,
					 __u32 tgid, __u32 tid, __u32 state, bool kthread, __u64 now)
{
	const struct offcpu_wit *x = NULL;
	struct bpfsym_sample *s;
	struct pt_regs *ur;
	__u32 zero = 0, nk = 0, nu = 0, epoch;
	__u64 key, size, uhash = 0, pc = 0, sp = 0, fp = 0;
	long n;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	/* sample_head's, with the time and process start known. */
	s->hdr.type = BPFSYM_EV_OFFCPU_STACK;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts = now;
	s->pid = tgid;
	s->tid = tid;
	s->pstart = t->pstart;
	s->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->flags = state << BPFSYM_SF_STATE_SHIFT;
	/* With the kernel unwinder, the kernel side waits for the switch-in (offcpu_kside). */
	t->kin = want_kernel && korc_on && !korc_check && korc_ready;
	if (want_kernel && !t->kin) {
		/* Not this program's own two frames (bpf_trace_run4 and the program; 6.1 and 6.18 alike). */
		n = bpf_get_stack(ctx, s->ips, BPFSYM_MAX_FRAMES * sizeof(__u64), OFFCPU_SKIP & BPF_F_SKIP_FIELD_MASK);
		n = n < 0 ? n : (long)((__u64)n / sizeof(__u64));
		if (n < 0)
			s->flags |= BPFSYM_SF_KSTACK_ERR;
		else
			nk = n;
	}
	if (nk > BPFSYM_MAX_FRAMES)
		nk = BPFSYM_MAX_FRAMES;
	/* The first frame is where the program runs in __schedule: the unwinder's is where it switches. */
	if (korc_check) {
		t->kcheck_n = nk;
		t->kcheck = nk > 1 ? offcpu_hash_scratch(nk, 1, nk - 1) : 0;
	}
	if (want_user && !kthread) {
		ur = (struct pt_regs *)bpf_task_pt_regs(task);
		if (ur) {
			pc = ur->ip;
			sp = ur->sp;
			fp = ur->bp;
		}
		x = offcpu_wit_find(t, tgid, pc, sp, fp);
		if (x) {
			nu = x->nu;
			uhash = x->uhash;
			s->flags |= BPFSYM_UEND_ROOT << BPFSYM_SF_UEND_SHIFT;
			stat_inc(BPFSYM_STAT_OFF_REUSED);
		} else {
			nu = user_side(ctx, NULL, task, tgid, nk);
			if (nu > BPFSYM_MAX_FRAMES)
				nu = BPFSYM_MAX_FRAMES;
			uhash = offcpu_hash_scratch(nu, nk, nu);
			offcpu_wit_keep(t, pc, sp, fp, nu, uhash);
		}
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	key = offcpu_key(s, nk, nu, uhash);
	if (offcpu_seen_has(key, &t->seen_key, &t->seen_epoch, &epoch))
		return key;
	/* A new key, its user side kept from the last walk: walked again for its frames. */
	if (x) {
		nu = user_side(ctx, NULL, task, tgid, nk);
		s = bpf_map_lookup_elem(&scratch, &zero);
		if (!s)
			return 0;
		if (nu > BPFSYM_MAX_FRAMES)
			nu = BPFSYM_MAX_FRAMES;
		/* The stack changed under the check (another thread wrote it): this walk's key. */
		uhash = offcpu_hash_scratch(nu, nk, nu);
		s->flags &= ~BPFSYM_SF_UEND_MASK;
		key = offcpu_key(s, nk, nu, uhash);
	}
	size = sample_seal(s, nk, nu);
	s->aux = key;
	/* Seen only once it is sent: a key whose record was lost is sent again next time. */
	if (bpf_ringbuf_output(&events, s, size, rb_flags()))
		return 0;
	stat_inc(BPFSYM_STAT_OFF_STACKS);
	offcpu_seen_mark(key, &t->seen_key, &t->seen_epoch, epoch);
	return key;
}

/* Sum @ns off the CPU under (@key, @kkey) in the map BPF writes now. */
static __always_inline void offcpu_sum(__u64 key, __u64 kkey, __u64 ns)
{
	struct bpfsym_offcpu_sum zsum = {}, *v;
	struct bpfsym_offcpu_key k = { key, kkey };
	void *map = (offcpu_gen & 1) ? (void *)&offcpu_sum1 : (void *)&offcpu_sum0;

	v = bpf_map_lookup_elem(map, &k);
	if (!v) {
		bpf_map_update_elem(map, &k, &zsum, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, &k);
	}
	if (!v) {
		stat_inc(BPFSYM_STAT_OFF_LOST);
		stat_add(BPFSYM_STAT_OFF_LOST_NS, ns);
		return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, 1);
	stat_inc(BPFSYM_STAT_OFF_SUMMED);
	stat_add(BPFSYM_STAT_OFF_SUMMED_NS, ns);
}

/* The hash of korc_buf's frames @first to @nr - 1, seeded with @h (as offcpu_hash_scratch).  Global: one check. */
__noinline __u64 korc_hash_buf(__u64 h, __u32 first, __u32 nr)
{
	const struct korc_out *o;
	__u32 zero = 0, i;

	o = bpf_map_lookup_elem(&korc_buf, &zero);
	if (!o)
		return h;
	for (i = first; i < KORC_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h = offcpu_mix(h, o->s.ips[i]);
	}
	return h;
}

/* Count an unwind that ended short of the stack's end (@stop); whether it did. */
static __always_inline bool korc_count_short(__u32 stop)
{
	if (stop == KORC_STOP_TABLE)
		stat_inc(BPFSYM_STAT_KORC_NO_TABLE);
	else if (stop != KORC_STOP_END)
		stat_inc(BPFSYM_STAT_KORC_STOPPED);
	return stop != KORC_STOP_END;
}

/* korc_check: @next's kernel stack by the unwinder, against its switch-out's (in @t). */
static __always_inline void korc_check_in(struct task_struct *next, struct offcpu_thread *t)
{
	__u32 stop, mods, n = korc_unwind(next, &stop, &mods);

	if (korc_count_short(stop))
		return;
	if (n == t->kcheck_n && korc_hash_buf(n, 1, n) == t->kcheck) {
		stat_inc(BPFSYM_STAT_KORC_SAME);
		if (mods)
			stat_inc(BPFSYM_STAT_KORC_SAME_MOD);
	} else
		stat_inc(BPFSYM_STAT_KORC_DIFF);
}

/*
 * @next's kernel side at its switch-in (@t its entry, @now the time): its
 * saved stack unwound (korc.bpf.h), and sent under its key if new.  The
 * key (BPFSYM_OFFCPU_KTAG set), or 0 when it did not reach the recorder.
 * Sent from korc_buf's own record: neither the scratch sample nor the
 * walk state is touched, so no CPU sample is dropped meanwhile.
 */
static __always_inline __u64 offcpu_kside(struct task_struct *next, struct offcpu_thread *t, __u64 now)
{
	__u32 zero = 0, stop, mods, n, epoch;
	struct korc_out *o;
	__u64 key, size;

	n = korc_unwind(next, &stop, &mods);
	korc_count_short(stop);
	key = korc_hash_buf(0x6b6f7263ull << 8 | n, 0, n) | BPFSYM_OFFCPU_KTAG;
	if (offcpu_seen_has(key, &t->kseen_key, &t->kseen_epoch, &epoch))
		return key;
	o = bpf_map_lookup_elem(&korc_buf, &zero);
	if (!o)
		return 0;
	o->s.hdr.type = BPFSYM_EV_OFFCPU_STACK;
	o->s.hdr.cpu = bpf_get_smp_processor_id();
	o->s.hdr.ts = now;
	o->s.pid = next->tgid;
	o->s.tid = next->pid;
	o->s.pstart = t->pstart;
	o->s.cgroup_id = 0;
	__builtin_memset(o->s.comm, 0, sizeof(o->s.comm));
	o->s.flags = stop == KORC_STOP_END || stop == KORC_STOP_DEPTH ? 0 : BPFSYM_SF_KSTACK_ERR;
	o->s.aux = key;
	size = sample_seal(&o->s, n, 0);
	if (bpf_ringbuf_output(&events, &o->s, size, rb_flags()))
		return 0;
	stat_inc(BPFSYM_STAT_OFF_STACKS);
	offcpu_seen_mark(key, &t->kseen_key, &t->kseen_epoch, epoch);
	return key;
}

/* @next's switch-in: the interval it was off the CPU, if it was followed, is summed. */
static __always_inline void offcpu_in(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid;
	struct offcpu_thread *t;
	__u64 ns, key, kkey;

	if (!tid)
		return;
	t = bpf_map_lookup_elem(&offcpu_threads, &tid);
	if (!t || !t->ts)
		return;
	if (korc_check && t->kcheck) {
		korc_check_in(next, t);
		t->kcheck = 0;
	}
	ns = now - t->ts;
	key = t->key;
	t->ts = 0;
	if ((__s64)ns <= 0)
		return;
	if (ns < offcpu_min_ns) {
		stat_inc(BPFSYM_STAT_OFF_SHORT);
		stat_add(BPFSYM_STAT_OFF_SHORT_NS, ns);
		return;
	}
	kkey = key && t->kin ? offcpu_kside(next, t, now) : 0;
	if (!key || (t->kin && !kkey)) {
		stat_inc(BPFSYM_STAT_OFF_LOST);
		stat_add(BPFSYM_STAT_OFF_LOST_NS, ns);
		return;
	}
	offcpu_sum(key, kkey, ns);
}

/* The entry of thread @tid, made if it has none; NULL when the map is full. */
static __always_inline struct offcpu_thread *offcpu_thread_of(__u32 tid)
{
	struct offcpu_thread *t = bpf_map_lookup_elem(&offcpu_threads, &tid);
	__u32 zero = 0;
	void *blank;

	if (t)
		return t;
	blank = bpf_map_lookup_elem(&offcpu_blank, &zero);
	if (!blank)
		return NULL;
	bpf_map_update_elem(&offcpu_threads, &tid, blank, BPF_NOEXIST);
	return bpf_map_lookup_elem(&offcpu_threads, &tid);
}

/* @prev's switch-out (it is current): its stacks and the time, if it is a target. */
static __always_inline void offcpu_out(void *ctx, struct task_struct *prev, bool preempt, __u32 prev_state,
				       __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, state, i, *busy;
	struct offcpu_thread *t;
	bool kthread;

	if (!tid)
		return;
	/* An exiting task never comes back: its entry goes, target or not (it may have been one). */
	if (!preempt && (prev_state & (OS_TASK_DEAD | OS_EXIT_DEAD | OS_EXIT_ZOMBIE))) {
		bpf_map_delete_elem(&offcpu_threads, &tid);
		return;
	}
	if (!is_target(tgid))
		return;
	state = offcpu_state(preempt, prev_state);
	if (!(offcpu_states & (1u << state)))
		return;
	kthread = prev->flags & PF_KTHREAD;
	if (!want_kernel && kthread)
		return;
	t = offcpu_thread_of(tid);
	if (!t) {
		stat_inc(BPFSYM_STAT_OFF_UNTRACKED);
		return;
	}
	t->ts = now;
	t->key = 0;
	/* A tid of another process now: its witnesses are not this one's. */
	if (t->tgid != tgid) {
		for (i = 0; i < OFFCPU_WITS; i++)
			t->wit[i].sp = 0;
		t->tgid = tgid;
		t->pstart = BPF_CORE_READ(prev, group_leader, start_boottime);
	}
	busy = bpf_map_lookup_elem(&offcpu_busy, &zero);
	/* A first sample's work was preempted mid-walk: its scratch is not ours (key 0: lost). */
	if (!busy || first_held())
		return;
	*busy = 1;
	t->key = offcpu_take(ctx, t, prev, tgid, tid, state, kthread, now);
	*busy = 0;
	stat_inc(BPFSYM_STAT_OFF_SWITCHES);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	if (!want_offcpu)
		return 0;
	offcpu_in(next, now);
	offcpu_out(ctx, prev, preempt, prev_state, now);
	return 0;
}

#endif /* BPFSYM_OFFCPU_BPF_H */
