/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * korc: the kernel stack of a task that is off the CPU, unwound in BPF
 * from its saved stack pointer with the kernel's own ORC tables (issue 28).
 *
 * Why: bpf_get_stack at a switch-out costs ~190 ns a kernel frame (2-2.3
 * us for an off-CPU stack), two thirds of the sched_switch program, and
 * bpf_get_task_stack at the switch-in drops every scheduler and lock
 * frame (schedule, mutex_lock, do_nanosleep), which is what an off-CPU
 * profile is about.  With the tables in array maps and a 256-byte block
 * index (the kernel's orc_lookup is not in kallsyms), a frame costs a few
 * map look-ups and one read of the stack.
 *
 * The tables: record/korc.c finds vmlinux's in kallsyms
 * (__start_orc_unwind_ip...) and each module's through its
 * `__this_module` (described by kdesc.bpf.c, which sizes these maps),
 * has korc_copy (run with BPF_PROG_TEST_RUN, never attached) copy them
 * into korc_ips / korc_ents a chunk at a time, then builds korc_blk through the maps' mmap and
 * describes each text range in korc_segs.  korc_ready is set last.
 *
 * Modules come and go while recording: the loader's watcher (korc.c)
 * copies a new module's table into room kept spare at the end of the
 * maps and writes the whole segment list again into the other half of
 * korc_segs, then publishes it with one store of korc_view.  An unwind
 * reads korc_view once a frame, so it sees one whole list, old or new;
 * entries are never overwritten (a module's room is not reused), so an
 * old list still reads what it described.  Until then, and for a BPF
 * program, a frame in no segment stops the unwind (KORC_STOP_TABLE).
 *
 * The two formats: before 6.3 an entry is type:2 (CALL 0, REGS 1,
 * REGS_PARTIAL 2) then end:1; since, type:3 (UNDEFINED 0, END_OF_STACK 1,
 * CALL 2, REGS 3, REGS_PARTIAL 4) then signal:1.  CO-RE tells them apart
 * by whether struct orc_entry has `signal`.  The ORC_REG_* values are the
 * same in both.
 *
 * What is not followed: a CFA behind SP_INDIRECT (the IRQ stack's link
 * back to the task's, not a place a task sleeps), or in a scratch
 * register without a full pt_regs to take it from; a frame outside every
 * table.  The unwind stops there and says why (KORC_STOP_*).
 */
#ifndef BPFSYM_KORC_BPF_H
#define BPFSYM_KORC_BPF_H

/* Settings (the loader's, before load). */
const volatile bool korc_on = false;		/* the tables are loaded: korc_copy runs, korc_ready follows */

/* Set by the loader once the tables, the index and the segments are whole (.bss). */
__u32 korc_ready = 0;
/*
 * The segment list in use (.bss, the loader's): its first slot in
 * korc_segs (0 or KORC_MAX_SEGS, the two halves) << 32 | its length.
 */
__u64 korc_view = 0;

#define KORC_MAX_SEGS	1024
#define KORC_MAX_FRAMES	BPFSYM_MAX_FRAMES
#define KORC_BLOCK_SHIFT 8
/* Entries a copy run takes (the loader's chunk): one bpf_loop. */
#define KORC_CHUNK	65536

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * KORC_MAX_SEGS);	/* two lists: the one in use, the next */
	__type(key, __u32);
	__type(value, struct bpfsym_korc_seg);
} korc_segs SEC(".maps");

/* Sizes are the loader's (1 without the tables). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);	/* ip - its segment's base */
} korc_ips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);	/* the 6-byte struct orc_entry */
} korc_ents SEC(".maps");

/* korc_blk[seg.blk + b]: the first of the segment's entries at or past base + b * 256 (relative to seg.first). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} korc_blk SEC(".maps");

/*
 * The walk's state, in the per-CPU map beside its frames: on the stack,
 * the verifier followed the frame count as a constant through every turn
 * of the loop, a state per frame.
 */
struct korc_walk {
	__u64 sp, bp, ip;
	__u32 n, stop;
	__u64 regs;		/* a full struct pt_regs the last frame ended with; 0: none */
	__u32 signal;		/* ip is where the task was stopped, not a return address */
	__u32 mods;		/* frames found in a module's table */
};

/*
 * What an unwind gives, per CPU: its state, and its frames, leaf first,
 * in a stack record that can be sent as it is (bpf/offcpu.bpf.h).
 */
struct korc_out {
	struct korc_walk w;
	struct bpfsym_sample s;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct korc_out);
} korc_buf SEC(".maps");

/* Why an unwind ended. */
enum korc_stop {
	KORC_STOP_NONE,		/* still going */
	KORC_STOP_END,		/* the end of the stack: user mode's registers, or an end entry */
	KORC_STOP_TABLE,	/* a frame in no table: a module loaded later, a BPF program */
	KORC_STOP_ENTRY,	/* before its segment's first entry, or an undefined entry */
	KORC_STOP_REG,		/* a CFA in a register not followed */
	KORC_STOP_READ,		/* the stack could not be read */
	KORC_STOP_DEPTH,	/* KORC_MAX_FRAMES */
};

/* The loader's request to korc_copy (.bss). */
struct bpfsym_korc_req korc_req = {};

/* struct orc_entry since 6.3: `signal` says which type values the entries use. */
struct orc_entry___korc_new {
	short sp_offset;
	short bp_offset;
	unsigned int sp_reg: 4;
	unsigned int bp_reg: 4;
	unsigned int type: 3;
	unsigned int signal: 1;
} __attribute__((packed));

#define KORC_REG_UNDEFINED	0
#define KORC_REG_PREV_SP	1
#define KORC_REG_DX		2
#define KORC_REG_DI		3
#define KORC_REG_BP		4
#define KORC_REG_SP		5
#define KORC_REG_R10		6
#define KORC_REG_R13		7
#define KORC_REG_BP_INDIRECT	8

/* Types as 6.3+ numbers them; 6.1's are mapped onto these. */
#define KORC_T_UNDEFINED	0
#define KORC_T_END		1
#define KORC_T_CALL		2
#define KORC_T_REGS		3
#define KORC_T_REGS_PARTIAL	4

/* struct pt_regs offsets (x86-64). */
#define KORC_PT_R13	16
#define KORC_PT_BP	32
#define KORC_PT_R10	56
#define KORC_PT_DX	96
#define KORC_PT_DI	112
#define KORC_PT_IP	128	/* then cs, flags, sp, ss: the IRET frame */

/* Entry @i of korc_req's chunk into the maps; korc_req.done counts those copied. */
static long korc_copy_one(__u64 i, void *ctx)
{
	__u64 a = korc_req.ip_tab + 4 * i, e = 0;
	__u32 k = korc_req.dst + (__u32)i, v;
	__s32 rel;

	if (bpf_probe_read_kernel(&rel, sizeof(rel), (void *)a) ||
	    bpf_probe_read_kernel(&e, 6, (void *)(korc_req.orc_tab + 6 * i)))
		return 1;
	v = (__u32)(a + (__s64)rel - korc_req.base);
	if (bpf_map_update_elem(&korc_ips, &k, &v, BPF_ANY) || bpf_map_update_elem(&korc_ents, &k, &e, BPF_ANY))
		return 1;
	korc_req.done++;
	return 0;
}

/* Run by the loader with BPF_PROG_TEST_RUN, a request at a time; never attached. */
SEC("raw_tp")
int korc_copy(void *ctx)
{
	korc_req.done = 0;
	bpf_loop(korc_req.n < KORC_CHUNK ? korc_req.n : KORC_CHUNK, korc_copy_one, NULL, 0);
	return 0;
}

/* The CFA in a scratch register: only where a full pt_regs has it (the entry code). */
static __always_inline int korc_reg(const struct korc_walk *w, __u32 reg, __u64 *v)
{
	__u32 off;

	switch (reg) {
	case KORC_REG_DX: off = KORC_PT_DX; break;
	case KORC_REG_DI: off = KORC_PT_DI; break;
	case KORC_REG_R10: off = KORC_PT_R10; break;
	case KORC_REG_R13: off = KORC_PT_R13; break;
	default: return -1;
	}
	if (!w->regs)
		return -1;
	return bpf_probe_read_kernel(v, sizeof(*v), (void *)(w->regs + off)) ? -1 : 0;
}

/*
 * The module segment holding @ip in the list @view (korc_view): its slot
 * in korc_segs, or 0 when none.  The list's first segment (vmlinux's) is
 * the caller's test; the rest are sorted by base.  Global, like
 * korc_search: the verifier checks each loop once, not at every state
 * the unwind's callback reaches it with (inlined, the sched_switch
 * program passed a million instructions).
 */
__noinline __u32 korc_seg_find(__u64 ip, __u64 view)
{
	const struct bpfsym_korc_seg *s;
	__u32 off = (__u32)(view >> 32), lo = 1, hi = (__u32)view, mid, k, i;

	if (off > KORC_MAX_SEGS || hi > KORC_MAX_SEGS)
		return 0;
	/* The last segment with base <= ip: 10 halvings cover KORC_MAX_SEGS. */
	for (i = 0; i < 10 && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		k = off + mid;
		s = bpf_map_lookup_elem(&korc_segs, &k);
		if (!s)
			return 0;
		if (s->base <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < 2)
		return 0;
	k = off + lo - 1;
	s = bpf_map_lookup_elem(&korc_segs, &k);
	return s && ip >= s->base && ip < s->end ? k : 0;
}

/*
 * The first of entries [@lo, @hi) of the segment whose entries start at
 * @first with an ip past @key, or @hi; ~0 on a failed look-up.
 */
__noinline __u32 korc_search(__u32 first, __u32 lo, __u32 hi, __u32 key)
{
	__u32 mid, idx, i, *p;

	/* 12 halvings: 4096 entries in a 256-byte block at most. */
	for (i = 0; i < 12 && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		idx = first + mid;
		p = bpf_map_lookup_elem(&korc_ips, &idx);
		if (!p)
			return ~0u;
		if (*p <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The segment holding @ip: vmlinux's, else a module's. */
static __always_inline const struct bpfsym_korc_seg *korc_seg_of(__u64 ip)
{
	const struct bpfsym_korc_seg *s;
	/* One read: the slot and the length of one list, though the loader may publish another. */
	__u64 view = *(volatile __u64 *)&korc_view;
	__u32 k = (__u32)(view >> 32);

	s = bpf_map_lookup_elem(&korc_segs, &k);
	if (!s)
		return NULL;
	if (ip >= s->base && ip < s->end)
		return s;
	k = korc_seg_find(ip, view);
	return k ? bpf_map_lookup_elem(&korc_segs, &k) : NULL;
}

/* The entry for @key (ip - base) in @s: the last at or before it; 0 with *@e set, or -1. */
static __always_inline int korc_entry(const struct bpfsym_korc_seg *s, __u32 key, __u64 *e)
{
	__u32 b = key >> KORC_BLOCK_SHIFT, bk, lo, hi, idx;
	__u32 *p, *q;
	__u64 *ep;

	if (b >= s->nblk)
		return -1;
	bk = s->blk + b;
	p = bpf_map_lookup_elem(&korc_blk, &bk);
	bk++;
	q = bpf_map_lookup_elem(&korc_blk, &bk);
	if (!p || !q)
		return -1;
	/* Entries before blk[b] are below the block, those from blk[b + 1] past it. */
	lo = *p;
	hi = *q;
	if (hi > s->n)
		hi = s->n;
	lo = korc_search(s->first, lo, hi, key);
	if (!lo || lo == ~0u)
		return -1;
	idx = s->first + lo - 1;
	ep = bpf_map_lookup_elem(&korc_ents, &idx);
	if (!ep)
		return -1;
	*e = *ep;
	return 0;
}

static __always_inline int korc_read(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_kernel(dst, sizeof(*dst), (void *)addr) ? -1 : 0;
}

/* One frame: record w->ip, then find its caller's ip, sp and bp. */
static long korc_step(__u64 i, void *ctx)
{
	const struct bpfsym_korc_seg *s;
	struct korc_out *out;
	struct korc_walk *w;
	__u32 zero = 0, idx, sp_reg, bp_reg, type;
	__u64 e, cfa, regs[4];
	__s16 sp_off, bp_off;

	out = bpf_map_lookup_elem(&korc_buf, &zero);
	if (!out)
		return 1;
	w = &out->w;
	idx = w->n;
	/* Bounded where it indexes (6.1 loses a bound clang checked on a copy). */
	asm volatile("" : "+r"(idx));
	if (idx >= KORC_MAX_FRAMES) {
		w->stop = KORC_STOP_DEPTH;
		return 1;
	}
	out->s.ips[idx] = w->ip;
	w->n = idx + 1;
	s = korc_seg_of(w->ip);
	if (!s) {
		w->stop = KORC_STOP_TABLE;
		return 1;
	}
	w->mods += s->blk != 0;	/* vmlinux's index starts at 0, each module's past it */
	/* A return address is looked up one byte back: the call may be the function's last instruction. */
	if (korc_entry(s, (__u32)(w->ip - s->base - !w->signal), &e)) {
		w->stop = KORC_STOP_ENTRY;
		return 1;
	}
	sp_off = (__s16)e;
	bp_off = (__s16)(e >> 16);
	sp_reg = (e >> 32) & 15;
	bp_reg = (e >> 36) & 15;
	if (bpf_core_field_exists(struct orc_entry___korc_new, signal))
		type = (e >> 40) & 7;
	else
		type = ((e >> 42) & 1) ? KORC_T_END : ((e >> 40) & 3) + KORC_T_CALL;
	if (type == KORC_T_END) {
		w->stop = KORC_STOP_END;
		return 1;
	}
	/* 6.1 marks a kernel thread's end with sp_reg undefined (and end set, above). */
	if (type == KORC_T_UNDEFINED || sp_reg == KORC_REG_UNDEFINED) {
		w->stop = KORC_STOP_ENTRY;
		return 1;
	}
	/*
	 * SP_INDIRECT (the IRQ stack's link back) is not followed: a task
	 * never sleeps on the IRQ stack, and its meaning changed after 6.1.
	 */
	if (sp_reg == KORC_REG_SP) {
		cfa = w->sp + sp_off;
	} else if (sp_reg == KORC_REG_BP) {
		cfa = w->bp + sp_off;
	} else if (sp_reg == KORC_REG_BP_INDIRECT) {
		/* A realigned stack (DRAP): the CFA is saved below bp. */
		if (korc_read(&cfa, w->bp + sp_off))
			goto fault;
	} else if (!korc_reg(w, sp_reg, &cfa)) {
		cfa += sp_off;
	} else {
		w->stop = KORC_STOP_REG;
		return 1;
	}
	if (type == KORC_T_CALL) {
		if (korc_read(&w->ip, cfa - 8))
			goto fault;
		w->sp = cfa;
		w->signal = 0;
		w->regs = 0;
	} else if (type == KORC_T_REGS || type == KORC_T_REGS_PARTIAL) {
		bool full = type == KORC_T_REGS;

		/* The IRET frame (ip, cs, flags, sp): in a full struct pt_regs at the CFA, or alone there. */
		if (bpf_probe_read_kernel(regs, sizeof(regs), (void *)(cfa + (full ? KORC_PT_IP : 0))))
			goto fault;
		/* User mode's registers: the end. */
		if ((regs[1] & 3) == 3) {
			w->stop = KORC_STOP_END;
			return 1;
		}
		w->ip = regs[0];
		w->sp = regs[3];
		w->signal = 1;
		w->regs = full ? cfa : 0;
		/* A partial frame leaves bp as it was; a full one has it. */
		if (full) {
			if (bp_reg == KORC_REG_UNDEFINED && korc_read(&w->bp, cfa + KORC_PT_BP))
				goto fault;
			bp_reg = KORC_REG_UNDEFINED;
		}
	} else {
		w->stop = KORC_STOP_ENTRY;
		return 1;
	}
	if (bp_reg == KORC_REG_PREV_SP) {
		if (korc_read(&w->bp, cfa + bp_off))
			goto fault;
	} else if (bp_reg == KORC_REG_BP) {
		if (korc_read(&w->bp, w->bp + bp_off))
			goto fault;
	}
	return 0;
fault:
	w->stop = KORC_STOP_READ;
	return 1;
}

/*
 * Unwind the kernel stack of @task, which is off the CPU (its registers
 * saved by __switch_to_asm: struct inactive_task_frame at thread.sp),
 * into korc_buf.  Its frames, leaf first (0 without the tables); *@stop
 * says why it ended (enum korc_stop), *@mods how many frames were in a
 * module's text.
 */
static __always_inline __u32 korc_unwind(struct task_struct *task, __u32 *stop, __u32 *mods)
{
	struct inactive_task_frame f;
	struct korc_out *out;
	__u32 zero = 0;
	__u64 sp;

	*stop = KORC_STOP_TABLE;
	*mods = 0;
	if (!korc_ready)
		return 0;
	out = bpf_map_lookup_elem(&korc_buf, &zero);
	if (!out)
		return 0;
	sp = BPF_CORE_READ(task, thread.sp);
	if (bpf_probe_read_kernel(&f, sizeof(f), (void *)sp)) {
		*stop = KORC_STOP_READ;
		return 0;
	}
	out->w = (struct korc_walk){ .sp = sp + sizeof(f), .bp = f.bp, .ip = f.ret_addr };
	bpf_loop(KORC_MAX_FRAMES + 1, korc_step, &zero, 0);
	*stop = out->w.stop ? out->w.stop : KORC_STOP_DEPTH;
	*mods = out->w.mods;
	return out->w.n;
}

#endif /* BPFSYM_KORC_BPF_H */
