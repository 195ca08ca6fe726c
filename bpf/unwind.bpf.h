/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-stack walk done here, in BPF: by the files' call-frame tables
 * (include/bpfsym.h, "Unwind tables"), with the frame-pointer rule where a
 * file has none (anonymous JIT code, a gap between FDEs), or by frame
 * pointers alone (--call-graph fp).  Userspace (user/unwind/) builds the
 * tables off the sampling path and keeps each process's view of its
 * executable mappings current from the mapping events.
 *
 * Every frame: find the mapping holding the PC in the process view
 * (binary search), its table, the row for the PC's file offset (binary
 * search over the sharded rows), then compute the CFA and read the return
 * address (and the saved rbp) with bpf_probe_read_user.  A bounded
 * bpf_loop of at most BPFSYM_MAX_FRAMES steps; the walk records why it
 * ended (enum bpfsym_uend).  Every address that is read comes from the
 * untrusted user stack: a bad one ends the walk as "read fault", and every
 * frame must move toward the stack's base, so garbage cannot loop.
 */
#ifndef BPFSYM_UNWIND_BPF_H
#define BPFSYM_UNWIND_BPF_H

#include "inode.bpf.h"
#include "python.bpf.h"

/* How user stacks are walked: enum bpfsym_ustack_mode. */
const volatile __u32 ustack_mode = BPFSYM_USTACK_TABLES;

/* Offsets in the x86-64 signal frame at rsp in __restore_rt (struct ucontext). */
#define UC_MCONTEXT	40
#define SC_RBP		(UC_MCONTEXT + 10 * 8)
#define SC_RSP		(UC_MCONTEXT + 15 * 8)
#define SC_RIP		(UC_MCONTEXT + 16 * 8)

/*
 * A walk's witness (struct unw_walk): at most this many words (one or two
 * a frame), within this many bytes above its sp.
 */
#define UNW_WIT_MAX	48
#define UNW_WIT_SPAN	4096

/* log2 of the row and range searches' bounds, plus one. */
#define ROW_SEARCH_STEPS	27	/* up to 64 Mi rows in one table */
#define RANGE_SEARCH_STEPS	9	/* BPFSYM_UNW_PROC_RANGES = 256 */

struct unw_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFSYM_UNW_SHARD_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
};

/* The global row space: shard i holds rows [i << SHARD_SHIFT, (i + 1) << SHARD_SHIFT). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BPFSYM_UNW_MAX_SHARDS);
	__type(key, __u32);
	__array(values, struct unw_shard);
} unw_shards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFSYM_UNW_MAX_TABLES);
	__type(key, __u32);
	__type(value, struct bpfsym_unw_table);
} unw_tables SEC(".maps");

/*
 * unw_procs, unw_fresh (the process views) and unw_files are in
 * maps.bpf.h: the tracker keeps the views through fork and exec.
 */

/*
 * The walk's state.  In a per-CPU map, not on the stack: the verifier
 * then knows nothing precise of it and checks the bpf_loop() callback in
 * one pass (see vma.bpf.h, struct pathbuf).
 */
struct unw_walk {
	__u64 pc, sp, fp;
	__u32 tgid;
	__u32 base;		/* index in ips[] of the first user frame */
	__u32 n;		/* user frames so far */
	__u32 end;		/* enum bpfsym_uend: set when the walk stops */
	__u32 exact;		/* pc is where the CPU was, not a return address */
	__u32 no_view;		/* no process view: the frame-pointer rule throughout */
	/* The search in progress (unw_search_step). */
	__u64 key;
	__u32 lo, hi, first;
	/*
	 * The mapping of the last frame and its table, for the next frame
	 * (most callers are in the same file): r_len 0 when none yet.
	 */
	__u64 r_start, r_base;	/* r_base: start - file offset of start */
	__u64 r_len;
	__u32 r_table;		/* table id, or BPFSYM_UNW_NO_TABLE */
	__u32 t_state, t_first, t_nr;
	__u32 t_base, t_idx_first, t_idx_nr;	/* its page index */
	__u32 t_gen, t_pad;
	/* A mapping the view does not hold, as bpf_find_vma saw it (unw_vma_cb). */
	__u32 vma_tried, vma_found;
	__u64 v_start, v_end, v_pgoff;
	struct bpfsym_unw_file vkey;
	struct py_walk py;	/* the interpreter's frames, if the process has one */
	/*
	 * The walk's witness, when asked for (unw_walk_regs' @wit): every
	 * stack word it read, as (offset from the starting sp, value), and
	 * the generation of the view it found every mapping in.  The walk is a function of
	 * its registers, those words and the view alone (tables never change
	 * once published), so a later walk from the same registers that
	 * would read the same words in the same view would give the same
	 * frames: offcpu.bpf.h checks the words instead of walking again.
	 * wit_ok goes 0 when the walk used anything else (the tracker's
	 * fresh view, the VMA, an interpreter's memory) or read outside
	 * UNW_WIT_SPAN bytes, or more than UNW_WIT_MAX words.
	 */
	__u64 sp0;
	__u32 wit_ok, wit_nr, wit_span, wit_gen, wit_py;
	__u16 wit_off[UNW_WIT_MAX];
	__u64 wit_val[UNW_WIT_MAX];
};

/*
 * Rules found lately, per CPU: (table, file offset) -> rule.  Return
 * addresses repeat from sample to sample (main, the interpreter loop's
 * callers...), so most frames but the leaf skip the row search.  A table
 * never changes once published; its id is reused only with a new
 * generation, which is in the tag, so an entry never goes stale.
 */
#define RCACHE_SIZE	1024
struct unw_rcache {
	__u64 tag[RCACHE_SIZE];		/* (gen << 14 | table) << 32 | key, + 1; 0: empty */
	__u32 rule[RCACHE_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unw_rcache);
} unw_rcaches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unw_walk);
} unw_walks SEC(".maps");

/* Row @idx of the global row space (pc low, rule high), or 0 when it is not there. */
static __always_inline __u64 unw_row(__u32 idx)
{
	__u32 shard = idx >> BPFSYM_UNW_SHARD_SHIFT, slot = idx & (BPFSYM_UNW_SHARD_ROWS - 1);
	void *inner = bpf_map_lookup_elem(&unw_shards, &shard);
	__u64 *row;

	if (!inner)
		return 0;
	row = bpf_map_lookup_elem(inner, &slot);
	return row ? *row : 0;
}

/* The walk read @val at @addr: into its witness, if it keeps one. */
static __always_inline void unw_wit(struct unw_walk *w, __u64 addr, __u64 val)
{
	__u64 off = addr - w->sp0;
	__u32 i = w->wit_nr;

	if (!w->wit_ok)
		return;
	if (i >= UNW_WIT_MAX || off > UNW_WIT_SPAN - 8) {
		w->wit_ok = 0;
		return;
	}
	/* Bounded where it is used: clang would index by i + 1 - 1, which 6.1 cannot follow. */
	asm volatile("" : "+r"(i));
	if (i >= UNW_WIT_MAX)
		return;
	w->wit_off[i] = off;
	w->wit_val[i] = val;
	w->wit_nr = i + 1;
	if (off + 8 > w->wit_span)
		w->wit_span = off + 8;
}

/*
 * One step of the binary search for the first row past w->key among rows
 * w->first + [w->lo, w->hi), its bounds in the per-CPU walk state (so the
 * verifier checks it once, whatever the table's size): 1 when it is over.
 * A bpf_loop callback, never an inline loop: clang enters such a loop in
 * its middle, which closes it on a fall-through that Linux 6.1 refuses
 * (scripts/check-bpf-cfg.py), and the verifier inlines bpf_loop itself.
 */
static long unw_search_step(__u64 i, void *ctx)
{
	__u32 zero = 0, mid;
	struct unw_walk *w = bpf_map_lookup_elem(&unw_walks, &zero);

	if (!w || w->lo >= w->hi)
		return 1;
	mid = w->lo + (w->hi - w->lo) / 2;
	if ((__u32)unw_row(w->first + mid) <= w->key)
		w->lo = mid + 1;
	else
		w->hi = mid;
	return 0;
}

/* One step of the range search (unw_find_range), a bpf_loop callback. */
struct unw_range_search {
	const struct bpfsym_unw_proc *v;
	__u64 pc;
	__u32 lo, hi;
};

static long unw_range_step(__u32 i, void *ctx)
{
	struct unw_range_search *rs = ctx;
	const struct bpfsym_unw_proc *v = rs->v;
	__u32 mid;

	if (!v || rs->lo >= rs->hi)
		return 1;
	mid = ((rs->lo + rs->hi) / 2) & (BPFSYM_UNW_PROC_RANGES - 1);
	if (v->r[mid].start <= rs->pc)
		rs->lo = mid + 1;
	else
		rs->hi = mid;
	return 0;
}

/*
 * The mapping of @v holding @pc, or NULL: a bounded binary search, one
 * step a bpf_loop callback, so the verifier checks a step once instead
 * of unrolling the search at every state the walk reaches it with.
 */
static __always_inline const struct bpfsym_unw_range *unw_find_range(const struct bpfsym_unw_proc *v,
								    __u64 pc)
{
	struct unw_range_search rs = {
		.v = v, .pc = pc, .hi = v->nr < BPFSYM_UNW_PROC_RANGES ? v->nr : BPFSYM_UNW_PROC_RANGES,
	};
	__u32 i;

	bpf_loop(RANGE_SEARCH_STEPS, unw_range_step, &rs, 0);
	if (rs.lo == 0)
		return NULL;
	i = (rs.lo - 1) & (BPFSYM_UNW_PROC_RANGES - 1);
	if (pc - v->r[i].start >= v->r[i].len)
		return NULL;
	return &v->r[i];
}

/*
 * The rule of the last row at or before file offset @key of the table
 * whose entry @w's mapping cache holds: its page index narrows the search
 * to the rows of @key's KiB, usually a few, searched with the bounds in
 * map memory (checked once by the verifier).  Before the first row: the
 * frame-pointer rule.
 */
static __always_inline __u32 unw_find_rule(struct unw_walk *w, __u32 key)
{
	__u32 j;
	__u64 e, row;

	if (key < w->t_base)
		return BPFSYM_UNW_FP_RULE;
	j = (key - w->t_base) >> BPFSYM_UNW_IDX_SHIFT;
	if (j < w->t_idx_nr) {
		e = unw_row(w->t_idx_first + j);
		w->lo = (__u32)e;
		w->hi = (__u32)(e >> 32) + 1;
	} else {
		w->lo = w->t_nr ? w->t_nr - 1 : 0;
		w->hi = w->t_nr;
	}
	/* Find the first row past @key in [lo, hi); the answer is the one before. */
	w->first = w->t_first;
	w->key = key;
	bpf_loop(ROW_SEARCH_STEPS, unw_search_step, NULL, 0);
	if (w->lo == 0 || w->lo > w->t_nr)
		return BPFSYM_UNW_FP_RULE;
	row = unw_row(w->t_first + w->lo - 1);
	return row ? (__u32)(row >> 32) : BPFSYM_UNW_FP_RULE;
}

/* Move @w to the caller by the frame-pointer rule; 1 when the walk ends. */
static __always_inline int unw_step_fp(struct unw_walk *w)
{
	__u64 pair[2];

	if (w->fp == 0) {
		w->end = BPFSYM_UEND_ROOT;
		return 1;
	}
	/* The frame must be above the stack pointer: toward the stack's base. */
	if (w->fp < w->sp || (w->fp & 7)) {
		w->end = BPFSYM_UEND_BAD_FRAME;
		return 1;
	}
	if (bpf_probe_read_user(pair, sizeof(pair), (void *)w->fp)) {
		w->end = BPFSYM_UEND_READ_FAULT;
		return 1;
	}
	unw_wit(w, w->fp, pair[0]);
	unw_wit(w, w->fp + 8, pair[1]);
	w->sp = w->fp + 16;
	w->fp = pair[0];
	w->pc = pair[1];
	w->exact = 0;
	return 0;
}

/* Move @w to the caller through the signal frame at its rsp; 1 when the walk ends. */
static __always_inline int unw_step_signal(struct unw_walk *w)
{
	__u64 regs[7];	/* rbp .. rip of struct sigcontext */

	if (bpf_probe_read_user(regs, sizeof(regs), (void *)(w->sp + SC_RBP))) {
		w->end = BPFSYM_UEND_READ_FAULT;
		return 1;
	}
	unw_wit(w, w->sp + SC_RBP, regs[0]);
	unw_wit(w, w->sp + SC_RSP, regs[(SC_RSP - SC_RBP) / 8]);
	unw_wit(w, w->sp + SC_RIP, regs[(SC_RIP - SC_RBP) / 8]);
	w->fp = regs[0];
	w->sp = regs[(SC_RSP - SC_RBP) / 8];
	w->pc = regs[(SC_RIP - SC_RBP) / 8];
	/* The interrupted instruction itself, not a return address. */
	w->exact = 1;
	return 0;
}

/* Move @w to the caller by table rule @rule; 1 when the walk ends. */
static __always_inline int unw_step_rule(struct unw_walk *w, __u32 rule)
{
	__u32 kind = BPFSYM_UNW_RULE_KIND(rule), off = BPFSYM_UNW_RULE_CFA_OFF(rule);
	__u64 cfa, ra, fp = w->fp, pair[2];

	switch (kind) {
	case BPFSYM_UNW_FP_RULE:
		return unw_step_fp(w);
	case BPFSYM_UNW_CFA_SP:
		cfa = w->sp + off;
		break;
	case BPFSYM_UNW_CFA_FP:
		cfa = w->fp + off;
		break;
	case BPFSYM_UNW_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= off ? 8 : 0);
		break;
	case BPFSYM_UNW_SIGNAL:
		return unw_step_signal(w);
	case BPFSYM_UNW_END:
		w->end = BPFSYM_UEND_ROOT;
		return 1;
	default:
		w->end = BPFSYM_UEND_UNSUPPORTED;
		return 1;
	}
	/* The caller's frame is above this one: the stack grows down. */
	if (cfa <= w->sp) {
		w->end = BPFSYM_UEND_BAD_FRAME;
		return 1;
	}
	/*
	 * rbp saved right below the return address (push %rbp first in the
	 * prologue: most frames that save it) comes in the same read.
	 */
	if ((rule & BPFSYM_UNW_FP_SAVED) && BPFSYM_UNW_RULE_FP_NEG(rule) == 16) {
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(cfa - 16))) {
			w->end = BPFSYM_UEND_READ_FAULT;
			return 1;
		}
		fp = pair[0];
		ra = pair[1];
		unw_wit(w, cfa - 16, fp);
		unw_wit(w, cfa - 8, ra);
	} else {
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
			w->end = BPFSYM_UEND_READ_FAULT;
			return 1;
		}
		unw_wit(w, cfa - 8, ra);
		if (rule & BPFSYM_UNW_FP_SAVED) {
			if (bpf_probe_read_user(&fp, sizeof(fp), (void *)(cfa - BPFSYM_UNW_RULE_FP_NEG(rule)))) {
				w->end = BPFSYM_UEND_READ_FAULT;
				return 1;
			}
			unw_wit(w, cfa - BPFSYM_UNW_RULE_FP_NEG(rule), fp);
		}
	}
	w->sp = cfa;
	w->fp = fp;
	w->pc = ra;
	w->exact = 0;
	return 0;
}

/* Fill the table part of @w's mapping cache from table @tid's entry. */
static __always_inline void unw_cache_table(struct unw_walk *w, __u32 tid)
{
	const struct bpfsym_unw_table *t = bpf_map_lookup_elem(&unw_tables, &tid);

	w->r_table = tid;
	w->t_state = t ? t->state : BPFSYM_UNW_PENDING;
	w->t_first = t ? t->first : 0;
	w->t_nr = t ? t->nr : 0;
	w->t_base = t ? t->base : 0;
	w->t_idx_first = t ? t->idx_first : 0;
	w->t_idx_nr = t ? t->idx_nr : 0;
	w->t_gen = t ? t->gen : 0;
}

/*
 * A table named by identity (a fresh view, the VMA fallback) may have been
 * evicted since and its id given to another file: its generation then
 * differs from @gen, and the walk takes it as not built (it ends there).
 */
static __always_inline void unw_check_gen(struct unw_walk *w, __u32 gen)
{
	if (((w->t_gen ^ gen) & ((1u << BPFSYM_UNW_GEN_BITS) - 1)) != 0)
		w->t_state = BPFSYM_UNW_PENDING;
}

/* bpf_find_vma's callback: the file mapping and identity of the VMA found. */
static long unw_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct unw_walk *w;
	struct inode *inode;
	struct file *file;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&unw_walks, &zero);
	file = vma->vm_file;
	if (!w || !file)
		return 0;
	inode = file_inode_seen(file);
	w->vkey.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	w->vkey.ino = BPF_CORE_READ(inode, i_ino);
	inode_mtime(inode, &w->vkey.mtime_sec, &w->vkey.mtime_nsec);
	w->vkey.pad = 0;
	w->v_start = BPF_CORE_READ(vma, vm_start);
	w->v_end = BPF_CORE_READ(vma, vm_end);
	w->v_pgoff = BPF_CORE_READ(vma, vm_pgoff);
	w->vma_found = 1;
	return 0;
}

/*
 * @pc is in no mapping of the view: the view may lag (a library mapped
 * since userspace last wrote it).  Ask the kernel for the VMA, once a
 * sample (bpf_find_vma's mmap-lock release goes through a per-CPU
 * irq_work, so a second call in one interrupt would fail anyway), and
 * take its file's table if the unwinder has one.  1 when @w's mapping
 * cache now holds it.
 */
static __always_inline int unw_vma_fallback(struct unw_walk *w, __u64 pc)
{
	__u32 *val;

	if (w->vma_tried)
		return 0;
	w->vma_tried = 1;
	w->wit_ok = 0;	/* the VMA is not in the view: nothing says when it changes */
	w->vma_found = 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, unw_vma_cb, NULL, 0) || !w->vma_found)
		return 0;
	val = bpf_map_lookup_elem(&unw_files, &w->vkey);
	if (!val || pc < w->v_start || pc >= w->v_end)
		return 0;
	w->r_start = w->v_start;
	w->r_len = w->v_end - w->v_start;
	w->r_base = w->v_start - (w->v_pgoff << 12);
	unw_cache_table(w, BPFSYM_UNW_FILE_ID(*val));
	unw_check_gen(w, BPFSYM_UNW_FILE_GEN(*val));
	return 1;
}

/*
 * A scan of fresh view ->f for ->pc (unsorted: the tracker appends), one
 * range a bpf_loop step: an inline loop of 32 would be checked 32 times
 * over by the verifier, at every frame of the walk's callback.
 */
struct unw_fresh_scan {
	const struct bpfsym_unw_fresh *f;
	__u64 pc;
	__s32 found;		/* the index, or -1 */
};

static long unw_fresh_step(__u32 i, void *ctx)
{
	struct unw_fresh_scan *s = ctx;
	const struct bpfsym_unw_fresh *f = s->f;

	if (!f || i >= f->nr || i >= BPFSYM_UNW_FRESH_RANGES)
		return 1;
	if (s->pc - f->r[i].start < f->r[i].len) {
		s->found = i;
		return 1;
	}
	return 0;
}

/* The range of fresh view @f holding @pc, or NULL. */
static __always_inline const struct bpfsym_unw_range *unw_find_fresh(const struct bpfsym_unw_fresh *f,
								    __u64 pc)
{
	struct unw_fresh_scan s = { .f = f, .pc = pc, .found = -1 };

	bpf_loop(BPFSYM_UNW_FRESH_RANGES, unw_fresh_step, &s, 0);
	if (s.found < 0)
		return NULL;
	return &f->r[s.found & (BPFSYM_UNW_FRESH_RANGES - 1)];
}

/*
 * Fill @w's mapping cache for @pc from its process views and the table's
 * entry: userspace's view first (sorted, whole when written), then the
 * tracker's fresh one (what was mapped since, or all of a process exec'd
 * a moment ago), then the VMA.  1 when the walk ends (no mapping), else 0
 * (w->no_view: no view at all).
 */
static __always_inline int unw_find_mapping(struct unw_walk *w, __u64 pc)
{
	const struct bpfsym_unw_fresh *f;
	const struct bpfsym_unw_proc *v;
	const struct bpfsym_unw_range *r = NULL;
	bool fresh = false;
	__u32 tid;

	unw_views(w->tgid, &v, &f);
	if (!v && !f) {
		w->no_view = 1;
		w->wit_ok = 0;
		return 0;
	}
	/*
	 * A witness holds for one view, userspace's own for this process
	 * (wit_gen, taken at the start): generations are never reused, so a
	 * parent's view, or this one rewritten since, has another.
	 */
	if (!v || v->gen != w->wit_gen)
		w->wit_ok = 0;
	if (v)
		r = unw_find_range(v, pc);
	if (!r && f) {
		r = unw_find_fresh(f, pc);
		fresh = true;
		w->wit_ok = 0;
	}
	if (!r) {
		if (unw_vma_fallback(w, pc))
			return 0;
		w->end = BPFSYM_UEND_NO_MAPPING;
		return 1;
	}
	w->r_start = r->start;
	w->r_len = r->len;
	w->r_base = r->start - ((__u64)r->pgoff << 12);
	w->r_table = tid = r->table;
	w->t_state = BPFSYM_UNW_NONE;
	if (tid == BPFSYM_UNW_NO_TABLE)
		return 0;
	unw_cache_table(w, tid);
	/* Userspace's views hold their tables; the tracker's only name them. */
	if (fresh)
		unw_check_gen(w, r->gen);
	return 0;
}

/* The rule for @w's PC from its process view and the tables; 1 when the walk ends. */
static __always_inline int unw_rule_at(struct unw_walk *w, __u32 *rule)
{
	__u64 pc = w->exact ? w->pc : w->pc - 1, tag;
	struct unw_rcache *rc;
	__u32 zero = 0, key, slot;

	*rule = BPFSYM_UNW_FP_RULE;
	if (ustack_mode != BPFSYM_USTACK_TABLES)
		return 0;
	if (pc - w->r_start >= w->r_len) {
		if (!w->no_view && unw_find_mapping(w, pc))
			return 1;
		/*
		 * No view yet (a process exec'd a moment ago): the VMA of this
		 * PC, once a sample, walks the frames of its file by its
		 * table; the rest by frame pointers.
		 */
		if (w->no_view && !unw_vma_fallback(w, pc))
			return 0;
	}
	if (w->t_state == BPFSYM_UNW_NONE)
		return 0;
	if (w->t_state != BPFSYM_UNW_READY) {
		w->end = BPFSYM_UEND_NO_TABLE;
		return 1;
	}
	key = (__u32)(pc - w->r_base);
	tag = ((__u64)((w->t_gen & ((1u << BPFSYM_UNW_GEN_BITS) - 1)) << 14 | w->r_table) << 32 | key) + 1;
	slot = (__u32)((tag * 0x9e3779b97f4a7c15ull) >> 54) & (RCACHE_SIZE - 1);
	rc = bpf_map_lookup_elem(&unw_rcaches, &zero);
	if (rc && rc->tag[slot] == tag) {
		*rule = rc->rule[slot];
		return 0;
	}
	*rule = unw_find_rule(w, key);
	if (rc) {
		rc->tag[slot] = tag;
		rc->rule[slot] = *rule;
	}
	return 0;
}

/* One frame: record the PC, then move to the caller.  bpf_loop's callback: 1 ends the walk. */
static long unw_step(__u64 i, void *ctx)
{
	struct bpfsym_sample *s;
	struct unw_walk *w;
	__u32 zero = 0, idx, rule;

	w = bpf_map_lookup_elem(&unw_walks, &zero);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!w || !s)
		return 1;
	if (w->n >= BPFSYM_MAX_FRAMES) {
		w->end = BPFSYM_UEND_DEPTH;
		return 1;
	}
	idx = w->base + w->n;
	if (idx >= 2 * BPFSYM_MAX_FRAMES)
		return 1;
	/* A frame of the eval function: the Python frames it runs first, one a step. */
	if (w->py.phase == PY_NATIVE && py_in_eval(&w->py, w->pc, w->exact))
		w->py.phase = PY_FRAMES;
	if (w->py.phase == PY_FRAMES) {
		w->wit_ok = 0;	/* interpreter memory is not in the witness */
		if (w->n + 2 > BPFSYM_MAX_FRAMES) {
			w->end = BPFSYM_UEND_DEPTH;
			return 1;
		}
		w->n += py_step(&w->py, s, idx);
		return 0;
	}
	w->py.phase = PY_NATIVE;
	s->ips[idx] = w->pc;
	w->n++;
	if (unw_rule_at(w, &rule) || unw_step_rule(w, rule))
		return 1;
	if (w->pc == 0) {
		w->end = BPFSYM_UEND_ROOT;
		return 1;
	}
	return 0;
}

/*
 * The walk's loop, from the state in unw_walks.  Global, so the verifier
 * checks it once, alone (no arguments, its state in map memory), not at
 * every state each caller reaches it with: the sampler's verification
 * took 0.45-0.7 s on 6.18 before.  Once a sample, not once a frame: a
 * global call a frame cost ~15 % of the walk's time (bench/README.md
 * section 7).
 */
__noinline int unw_run(void)
{
	/* A step writes a frame, or none: a Python call's shim, entering or leaving its frames. */
	bpf_loop(2 * BPFSYM_MAX_FRAMES + 2, unw_step, NULL, 0);
	return 0;
}

/*
 * Walk the user stack of process @tgid from registers @pc, @sp, @fp into
 * the scratch sample's ips[@base...]; returns the number of frames and
 * sets *@end (enum bpfsym_uend).
 */
static __always_inline long unw_walk_regs(__u64 pc, __u64 sp, __u64 fp, __u32 tgid, __u32 base,
					  bool wit, __u32 *end)
{
	const struct bpfsym_unw_proc *v;
	struct unw_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&unw_walks, &zero);
	if (!w)
		return -2;	/* -ENOENT */
	w->pc = pc;
	w->sp = sp;
	w->fp = fp;
	w->tgid = tgid;
	w->base = base;
	w->n = 0;
	w->end = BPFSYM_UEND_DEPTH;
	w->exact = 1;
	w->no_view = ustack_mode != BPFSYM_USTACK_TABLES;
	w->r_len = 0;
	w->vma_tried = 0;
	w->sp0 = sp;
	w->wit_ok = wit;
	w->wit_nr = 0;
	w->wit_span = 0;
	/* Before py_start looks: a write of py_procs after it changes the count. */
	w->wit_py = py_epoch;
	if (wit && ustack_mode == BPFSYM_USTACK_TABLES) {
		v = bpf_map_lookup_elem(&unw_procs, &tgid);
		w = bpf_map_lookup_elem(&unw_walks, &zero);
		if (!w)
			return -2;	/* -ENOENT */
		if (v)
			w->wit_gen = v->gen;
		else
			w->wit_ok = 0;
	}
	if (w->pc == 0) {
		*end = BPFSYM_UEND_ROOT;
		return 0;
	}
	py_start(&w->py, tgid);
	unw_run();
	w = bpf_map_lookup_elem(&unw_walks, &zero);
	if (!w)
		return -2;	/* -ENOENT */
	if (w->py.on && w->py.frame)
		stat_inc(BPFSYM_STAT_PY_LEFT);
	/* An interpreter's process: its frames may come and go with memory the witness does not hold. */
	if (w->py.on)
		w->wit_ok = 0;
	/* Without a view the whole walk was by frame pointers: say why when it fell short. */
	if (ustack_mode == BPFSYM_USTACK_TABLES && w->no_view && w->end != BPFSYM_UEND_ROOT)
		w->end = BPFSYM_UEND_NO_PROC;
	*end = w->end;
	return w->n;
}

/* The same, from the registers @task entered the kernel with (its user ones). */
static __always_inline long unw_walk_task(struct task_struct *task, __u32 tgid, __u32 base, bool wit,
					  __u32 *end)
{
	struct pt_regs *ur = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!ur)
		return -2;	/* -ENOENT */
	return unw_walk_regs(BPF_CORE_READ(ur, ip), BPF_CORE_READ(ur, sp), BPF_CORE_READ(ur, bp),
			     tgid, base, wit, end);
}

/*
 * The same for the sampled task: from the sampled registers when the CPU
 * was in user mode, else from the ones the task entered the kernel with.
 */
static __always_inline long unw_walk_user(struct bpf_perf_event_data *ctx, struct task_struct *task,
					  __u32 tgid, __u32 base, __u32 *end)
{
	if (regs_user_mode(&ctx->regs))
		return unw_walk_regs(ctx->regs.ip, ctx->regs.sp, ctx->regs.bp, tgid, base, false, end);
	return unw_walk_task(task, tgid, base, false, end);
}

#endif /* BPFSYM_UNWIND_BPF_H */
