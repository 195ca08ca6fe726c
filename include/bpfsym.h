/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF <-> userspace ABI of bpfsym: the records the BPF programs put in
 * the ring buffer, the counters they keep, and the settings the loader
 * passes through .rodata.  Fixed-width types only, because this header is
 * compiled both against vmlinux.h (BPF) and <linux/types.h> (userspace).
 *
 * Every ring-buffer record starts with struct bpfsym_ev_hdr; `size` is the
 * whole record, so a consumer can skip types it does not know.  All
 * timestamps are bpf_ktime_get_ns() (CLOCK_MONOTONIC, nanoseconds).
 */
#ifndef BPFSYM_H
#define BPFSYM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames per side (kernel, user) of one sample; perf's default depth. */
#define BPFSYM_MAX_FRAMES 127
#define BPFSYM_COMM_LEN 16

enum bpfsym_ev_type {
	BPFSYM_EV_SAMPLE = 1,	/* struct bpfsym_sample */
	BPFSYM_EV_EXEC = 2,	/* struct bpfsym_task_ev: pid exec'd (new comm) */
	BPFSYM_EV_EXIT = 3,	/* struct bpfsym_task_ev: last thread of pid exited */
	BPFSYM_EV_FORK = 4,	/* struct bpfsym_task_ev: new process pid, parent ppid */
	BPFSYM_EV_MAP = 5,	/* struct bpfsym_map_ev: an executable mapping is in place now */
	BPFSYM_EV_UNMAP = 6,	/* struct bpfsym_unmap_ev: [start, end) holds no executable mapping now */
	/*
	 * struct bpfsym_task_ev: pid's executable mappings are taken whole
	 * (lazy_maps: at its first sample); forget those known, the MAP
	 * records that follow (cause FIRST_SAMPLE) are all of them.  ppid,
	 * ppstart: its parent, when it has not exec'd since its fork (it
	 * runs its parent's image), else 0.
	 */
	BPFSYM_EV_RESYNC = 7,
	/*
	 * struct bpfsym_sample: the stacks a task left the CPU with (--off-cpu,
	 * bpf/offcpu.bpf.h), sent the first time its key (aux) is seen; the
	 * time spent off the CPU is summed in BPF under that key
	 * (offcpu_sum0/1) and read by the recorder, which names the stacks
	 * from this record.  hdr.ts: the switch-out; flags: the state
	 * (BPFSYM_SF_STATE_*).
	 */
	BPFSYM_EV_OFFCPU_STACK = 8,
};

struct bpfsym_ev_hdr {
	__u16 type;		/* enum bpfsym_ev_type */
	__u16 size;		/* bytes in the whole record, header included */
	__u32 cpu;
	__u64 ts;		/* CLOCK_MONOTONIC ns */
};

/* bpfsym_sample.flags */
#define BPFSYM_SF_KSTACK_ERR	(1u << 0)	/* bpf_get_stack failed for the kernel side */
#define BPFSYM_SF_USTACK_ERR	(1u << 1)	/* ... for the user side */
#define BPFSYM_SF_USER_MODE	(1u << 2)	/* the interrupt hit user mode */
/* Bits 8-11: why the user stack ended (enum bpfsym_uend), when it was walked here. */
#define BPFSYM_SF_UEND_SHIFT	8
#define BPFSYM_SF_UEND_MASK	(0xfu << BPFSYM_SF_UEND_SHIFT)
/* Bits 12-13 of an off-CPU stack record: the state it left the CPU in (enum bpfsym_offstate). */
#define BPFSYM_SF_STATE_SHIFT	12
#define BPFSYM_SF_STATE_MASK	(0x3u << BPFSYM_SF_STATE_SHIFT)

/*
 * The state a task left the CPU in, from sched_switch's preempt and
 * prev_state (the values of user/report's enum rpt_offstate).
 */
enum bpfsym_offstate {
	BPFSYM_OS_SLEEP = 0,	/* S: TASK_INTERRUPTIBLE */
	BPFSYM_OS_DISK = 1,	/* D: TASK_UNINTERRUPTIBLE (not TASK_NOLOAD: an idle kernel thread is "other") */
	BPFSYM_OS_PREEMPT = 2,	/* R: preempted, or runnable when it switched */
	BPFSYM_OS_OTHER = 3,	/* stopped, traced, parked, idle kernel threads */
	BPFSYM_OS_NR = 4,
};

/* An off-CPU key's time, summed at each switch-in (offcpu_sum0/1[key]). */
struct bpfsym_offcpu_sum {
	__u64 ns;
	__u64 count;
};

/*
 * What off-CPU time is summed under: the key of the switch-out's record
 * (the thread, its state, its user stack and, when taken there, its
 * kernel stack) and, when the kernel stack was taken at the switch-in
 * (bpf/korc.bpf.h), the key of that record (BPFSYM_OFFCPU_KTAG set), else 0.
 */
struct bpfsym_offcpu_key {
	__u64 key;
	__u64 kkey;
};

/* In a record's aux: the key of a kernel stack alone, taken at a switch-in. */
#define BPFSYM_OFFCPU_KTAG	(1ull << 63)

/*
 * The kernel unwinder's tables (bpf/korc.bpf.h, user/record/korc.c).  A
 * text range (vmlinux's is segment 0, then modules by base) and its
 * entries: korc_ips/korc_ents [first, first + n), ips relative to base;
 * its block index korc_blk [blk, blk + nblk], per 256 bytes of text the
 * first of its entries at or past the block (relative to first).
 */
struct bpfsym_korc_seg {
	__u64 base, end;
	__u32 first, n;
	__u32 blk, nblk;
};

/* The loader's request to korc_copy: n entries of a kernel table, from ip_tab/orc_tab, to dst. */
struct bpfsym_korc_req {
	__u64 ip_tab, orc_tab;
	__u64 base;		/* the segment's: ips are stored relative to it */
	__u32 dst, n;
	__u32 done, pad;	/* out: entries copied */
};

/* A module's text and ORC tables, as kdesc.bpf.c reads them from its struct module. */
struct bpfsym_kdesc_mod {
	__u64 base, size;	/* its core text */
	__u64 ip_tab, orc_tab;	/* mod->arch.orc_unwind_ip, orc_unwind */
	__u32 n;		/* mod->arch.num_orcs */
	__u32 ok;		/* 1: read */
};

/*
 * Why a user stack ended, per sample (bpfsym_sample.flags bits 8-11).  Set
 * by the table-driven walk (--call-graph dwarf, the default) and by the
 * frame-pointer walk done here (--call-graph fp); 0 when the kernel walked
 * the stack (bpf_get_stack) or there is no user side (kernel threads).
 */
enum bpfsym_uend {
	BPFSYM_UEND_NONE = 0,		/* not walked here */
	BPFSYM_UEND_ROOT = 1,		/* reached the outermost frame: return address undefined, or FP 0 */
	BPFSYM_UEND_NO_TABLE = 2,	/* the file's table is not built yet */
	BPFSYM_UEND_UNSUPPORTED = 3,	/* a CFI rule the tables cannot express */
	BPFSYM_UEND_READ_FAULT = 4,	/* reading the stack failed: not user memory, or paged out */
	BPFSYM_UEND_DEPTH = 5,		/* BPFSYM_MAX_FRAMES reached */
	BPFSYM_UEND_NO_MAPPING = 6,	/* an address in no executable mapping the unwinder knows */
	BPFSYM_UEND_NO_PROC = 7,	/* the unwinder has no view of the process yet */
	BPFSYM_UEND_BAD_FRAME = 8,	/* the next frame does not move toward the stack's base */
	BPFSYM_UEND_MAX = 9,
};

/*
 * Frame kinds of the user side (issue 27).  The nr_user entries of
 * bpfsym_sample.ips[] after the kernel ones are *slots*; bits 63..60 of a
 * frame's first slot say its kind, and so how many slots it takes:
 *   BPFSYM_FK_NATIVE: one slot, a native user address.  x86-64 user
 *     addresses never set bits 60-63, so every slot written before
 *     frame kinds existed reads as a native frame, unchanged.
 *   BPFSYM_FK_PYTHON: two slots.
 *     slot 0: BPFSYM_FK_PYTHON << BPFSYM_FK_SHIFT | the code object's
 *             address (bits 0..47, BPFSYM_FK_ADDR_MASK);
 *     slot 1: co_firstlineno << 32 | the instruction index (2-byte code
 *             units from the start of the code object's bytecode), as
 *             read in BPF: user space checks with the firstlineno that
 *             the code object it reads at that address is the one BPF saw.
 *   2..15: reserved (a JVM, V8 ...).  A consumer cannot know the slot count
 *     of a kind it does not know: the rest of that user side is dropped
 *     there, and counted.
 * nr_user counts slots, so BPFSYM_MAX_FRAMES stays the cap on slots per
 * side.  Kernel entries have no kind.
 */
#define BPFSYM_FK_SHIFT		60
#define BPFSYM_FK_MASK		(0xfull << BPFSYM_FK_SHIFT)
#define BPFSYM_FK_ADDR_MASK	((1ull << 48) - 1)

enum bpfsym_frame_kind {
	BPFSYM_FK_NATIVE = 0,
	BPFSYM_FK_PYTHON = 1,
	BPFSYM_FK_MAX = 16,		/* 4 bits */
};

/* The kind of the frame whose first slot is @slot (enum bpfsym_frame_kind). */
static inline __u32 bpfsym_fk_kind(__u64 slot)
{
	return (__u32)(slot >> BPFSYM_FK_SHIFT);
}

/* Slots a frame of @kind takes; 0: a kind this ABI does not define (reserved). */
static inline __u32 bpfsym_fk_slots(__u32 kind)
{
	return kind == BPFSYM_FK_NATIVE ? 1 : kind == BPFSYM_FK_PYTHON ? 2 : 0;
}

/* A frame's first slot: @kind over @addr (bits 0..47). */
static inline __u64 bpfsym_fk_slot0(__u32 kind, __u64 addr)
{
	return (__u64)kind << BPFSYM_FK_SHIFT | (addr & BPFSYM_FK_ADDR_MASK);
}

/* A Python frame's second slot: the code object's co_firstlineno, the instruction index. */
static inline __u64 bpfsym_fk_py_slot1(__u32 firstlineno, __u32 instr)
{
	return (__u64)firstlineno << 32 | instr;
}

/*
 * One CPU sample.  ips[] holds nr_kernel kernel addresses followed by
 * nr_user user slots (above: a native frame's address, or an interpreter
 * frame's two slots), each side leaf first (ips[0] is where the CPU was).
 * The record is truncated after the last entry.
 */
struct bpfsym_sample {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;		/* thread group id, as seen from the init namespace */
	__u32 tid;
	__u64 pstart;		/* start_boottime of the group leader: (pid, pstart) is unique */
	__u64 cgroup_id;	/* cgroup v2 id of the task */
	char comm[BPFSYM_COMM_LEN];
	__u16 nr_kernel;
	__u16 nr_user;		/* slots, not frames: see BPFSYM_FK_SHIFT */
	__u32 flags;		/* BPFSYM_SF_* */
	/*
	 * BPFSYM_EV_OFFCPU_STACK: the key its off-CPU time is summed under (a
	 * hash of the process, thread, state and stacks; never 0).  0 in a
	 * SAMPLE.
	 */
	__u64 aux;
	__u64 ips[2 * BPFSYM_MAX_FRAMES];
};

#define BPFSYM_SAMPLE_HDR_SIZE ((unsigned int)__builtin_offsetof(struct bpfsym_sample, ips))

/* Process lifetime events: exec, exit of the whole group, fork of a new process. */
struct bpfsym_task_ev {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;		/* the process (tgid) the event is about */
	__u32 ppid;		/* FORK: the parent's tgid; otherwise 0 */
	__u64 pstart;		/* start_boottime of pid's group leader */
	__u64 ppstart;		/* FORK: start_boottime of the parent's group leader */
	char comm[BPFSYM_COMM_LEN];
};

/* Why a mapping event was sent: bpfsym_map_ev.cause, bpfsym_unmap_ev.cause. */
enum bpfsym_map_cause {
	BPFSYM_MAP_MMAP = 1,		/* mmap() with PROT_EXEC; or MAP_FIXED (unmap) */
	BPFSYM_MAP_MPROTECT = 2,	/* mprotect() adding PROT_EXEC; or removing it (unmap) */
	BPFSYM_MAP_MREMAP = 3,		/* mremap() of an executable mapping */
	BPFSYM_MAP_MUNMAP = 4,		/* munmap() of a range holding an executable mapping */
	BPFSYM_MAP_EXEC = 5,		/* the mappings the kernel's ELF loader made at exec */
	BPFSYM_MAP_SNAPSHOT = 6,	/* the start-up snapshot (iter/task_vma) */
	BPFSYM_MAP_FIRST_SAMPLE = 7,	/* taken whole at the process's first sample (lazy_maps) */
};

/* bpfsym_map_ev.flags */
#define BPFSYM_MF_ANON		(1u << 0)	/* no file: anonymous memory (JIT code) */
#define BPFSYM_MF_SPECIAL	(1u << 1)	/* [vdso] and other kernel-provided code */
#define BPFSYM_MF_SHARED	(1u << 2)	/* VM_SHARED */
#define BPFSYM_MF_PATH_TRUNC	(1u << 3)	/* path incomplete: too deep or too long */
/*
 * MAP and UNMAP: the tracker applied this change to the process's fresh
 * view (unw_fresh), which is whole: it knew the file's table and the
 * process has no view written by userspace, which need not write one.
 */
#define BPFSYM_MF_VIEWED	(1u << 4)

#define BPFSYM_PATH_MAX 256

/*
 * An executable VMA of process pid, as it is right after the event.  The
 * record is truncated after path[path_len] (a NUL is always there), its
 * size rounded up to a multiple of 8.
 * dev is the kernel's dev_t (major << 20 | minor), not userspace's.
 * path is the file's path as the process sees it (up to its root), as far
 * as a bounded dentry walk in BPF gets: prefer /proc/PID/map_files while
 * the mapping exists.  mnt_ns says which mount namespace that path is in,
 * so the file can be found by path after the process has exited.
 */
struct bpfsym_map_ev {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 pstart;
	__u64 start;
	__u64 end;
	__u64 pgoff;		/* file offset of start, in bytes */
	__u64 dev;
	__u64 ino;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	__u32 flags;		/* BPFSYM_MF_* */
	__u16 cause;		/* enum bpfsym_map_cause */
	__u16 path_len;		/* bytes in path before its NUL */
	/*
	 * The task's mount namespace when the event was made: the inode
	 * number of its nsfs inode (st_ino of /proc/PID/ns/mnt; the device is
	 * nsfs's, the same for every namespace).  0: unknown (an exiting
	 * task has no namespaces any more).  A number is reused only once its
	 * namespace is gone: check the file's identity, not just the path.
	 */
	__u32 mnt_ns;
	char path[BPFSYM_PATH_MAX];
};

#define BPFSYM_MAP_EV_HDR_SIZE ((unsigned int)__builtin_offsetof(struct bpfsym_map_ev, path))

/* [start, end) of process pid holds no executable mapping any more. */
struct bpfsym_unmap_ev {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 pstart;
	__u64 start;
	__u64 end;
	__u32 cause;		/* enum bpfsym_map_cause */
	__u32 flags;		/* BPFSYM_MF_VIEWED or 0 */
};

/*
 * Unwind tables (user/unwind/, bpf/unwind.bpf.h).
 *
 * A row says how to find the caller's frame from any PC in [pc, next row's
 * pc) of one file: 8 bytes, the PC as a FILE OFFSET (so a mapping needs no
 * load bias: key = addr - start + pgoff) and its rule packed in 32 bits.
 * The rows of every file live in one global row space split into shards
 * (inner ARRAY maps of BPFSYM_UNW_SHARD_ROWS u64 each, created as needed
 * under the ARRAY_OF_MAPS `unw_shards`); a table is a range of it.  Row i
 * is shard i >> BPFSYM_UNW_SHARD_SHIFT, slot i & (SHARD_ROWS - 1); as a u64
 * the PC is the low 32 bits, the rule the high 32.
 */
#define BPFSYM_UNW_SHARD_SHIFT	15		/* 256 KiB a shard: memory grows in small steps */
#define BPFSYM_UNW_SHARD_ROWS	(1u << BPFSYM_UNW_SHARD_SHIFT)
#define BPFSYM_UNW_MAX_SHARDS	2048		/* 64 Mi rows, 512 MiB: the hard limit */
#define BPFSYM_UNW_MAX_TABLES	16384		/* file identities with a table id (the loader may set fewer) */
#define BPFSYM_UNW_PROC_RANGES	256		/* executable mappings per process view */
#define BPFSYM_UNW_NO_TABLE	0xffffffffu	/* bpfsym_unw_range.table: no table (anon, JIT) */

/* The rule's CFA kinds: bits 0-2. */
enum bpfsym_unw_kind {
	BPFSYM_UNW_FP_RULE = 0,		/* no FDE covers the PC: the frame-pointer rule */
	BPFSYM_UNW_CFA_SP = 1,		/* CFA = rsp + cfa_off */
	BPFSYM_UNW_CFA_FP = 2,		/* CFA = rbp + cfa_off */
	BPFSYM_UNW_PLT = 3,		/* .plt: CFA = rsp + 8, + 8 more when (pc & 15) >= 11 */
	BPFSYM_UNW_SIGNAL = 4,		/* signal trampoline: registers in the ucontext at rsp */
	BPFSYM_UNW_END = 5,		/* return address undefined: the outermost frame */
	BPFSYM_UNW_UNSUPPORTED = 6,	/* a rule not expressible here: the stack ends */
};

/*
 * rule = kind | FP_SAVED | cfa_off << 4 | fp_neg << 18:
 * CFA = reg + cfa_off (0..16383); the return address is at CFA - 8; with
 * FP_SAVED the caller's rbp is at CFA - fp_neg (0..16383), else rbp is
 * unchanged.  Anything else is BPFSYM_UNW_UNSUPPORTED.
 */
#define BPFSYM_UNW_KIND_MASK	0x7u
#define BPFSYM_UNW_FP_SAVED	(1u << 3)
#define BPFSYM_UNW_OFF_MAX	16383u
#define BPFSYM_UNW_CFA_SHIFT	4
#define BPFSYM_UNW_FP_SHIFT	18
#define BPFSYM_UNW_RULE(kind, cfa_off, fp_saved, fp_neg) \
	((__u32)(kind) | ((fp_saved) ? BPFSYM_UNW_FP_SAVED : 0) | \
	 ((__u32)(cfa_off) << BPFSYM_UNW_CFA_SHIFT) | ((__u32)(fp_neg) << BPFSYM_UNW_FP_SHIFT))
#define BPFSYM_UNW_RULE_KIND(r)		((r) & BPFSYM_UNW_KIND_MASK)
#define BPFSYM_UNW_RULE_CFA_OFF(r)	(((r) >> BPFSYM_UNW_CFA_SHIFT) & BPFSYM_UNW_OFF_MAX)
#define BPFSYM_UNW_RULE_FP_NEG(r)	(((r) >> BPFSYM_UNW_FP_SHIFT) & BPFSYM_UNW_OFF_MAX)

/* unw_tables[table id]: where a file's rows are.  state 0: not built yet. */
enum bpfsym_unw_state {
	BPFSYM_UNW_PENDING = 0,		/* the stack ends here: BPFSYM_UEND_NO_TABLE */
	BPFSYM_UNW_READY = 1,		/* rows [first, first + nr) */
	BPFSYM_UNW_NONE = 2,		/* the file has no usable CFI: the frame-pointer rule */
};

/*
 * A table's page index: for file offsets [base + (j << SHIFT), + 1 <<
 * SHIFT), the rows that can hold the answer are [lo, hi] of the table
 * (entry j, a u64 in the row space: lo low, hi high), so the walk's binary
 * search covers a few rows, not the whole table.  1 KiB: ~20 rows of a
 * typical file, 8 bytes of index per KiB of code (~5% of the rows).
 */
#define BPFSYM_UNW_IDX_SHIFT	10

struct bpfsym_unw_table {
	__u32 first;		/* global row index of the first row */
	__u32 nr;		/* rows; the last one ends the table (its PC ends the last FDE) */
	__u32 state;		/* enum bpfsym_unw_state */
	__u32 base;		/* the first row's PC: the page index starts there */
	__u32 idx_first;	/* global row index of the page index's first entry */
	__u32 idx_nr;		/* its entries; a key past them is in the last row */
	__u32 gen;		/* the id's generation: ids are reused once a table is evicted */
	__u32 pad;
};

/* Bits of bpfsym_unw_table.gen in the BPF rule cache's tag, above the id's 14. */
#define BPFSYM_UNW_GEN_BITS	18

/* One executable mapping of a process view: [start, start + len). */
struct bpfsym_unw_range {
	__u64 start;
	__u32 len;		/* bytes (a mapping past 4 GiB is cut there) */
	__u32 pgoff;		/* file offset of start, in pages */
	__u32 table;		/* unw_tables index, or BPFSYM_UNW_NO_TABLE */
	__u32 gen;		/* fresh views: the table's generation (BPFSYM_UNW_FILE_GEN) */
};

/*
 * unw_files[identity]: a file's table id and the id's generation, packed
 * (BPFSYM_UNW_FILE_VAL), for a mapping no view written by userspace holds
 * yet: the tracker's fresh views, and the walk's bpf_find_vma fallback.
 * The identity as the mapping events carry it: the kernel's dev_t (major
 * << 20 | minor), inode, mtime; all zero: the vdso.
 */
#define BPFSYM_UNW_ID_BITS	14		/* BPFSYM_UNW_MAX_TABLES = 1 << 14 */
#define BPFSYM_UNW_FILE_VAL(id, gen) \
	((__u32)(id) | (__u32)(gen) << BPFSYM_UNW_ID_BITS)
#define BPFSYM_UNW_FILE_ID(v)	((v) & ((1u << BPFSYM_UNW_ID_BITS) - 1))
#define BPFSYM_UNW_FILE_GEN(v)	((v) >> BPFSYM_UNW_ID_BITS)
struct bpfsym_unw_file {
	__u64 dev;
	__u64 ino;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 pad;
};

/*
 * unw_fresh[tgid]: the executable mappings of a process since its exec, as
 * the tracker saw them, for the walk until (and beside) a view written by
 * userspace: a short program's stacks need no round trip through the
 * reader.  Unsorted; ranges of files whose tables are unknown hold
 * BPFSYM_UNW_NO_TABLE.  A process with more ranges gets a userspace view.
 * The tracker keeps these in every call-graph mode: they also tell it,
 * at a munmap, mprotect or MAP_FIXED mmap's exit, whether anything
 * executable was in the range, once the kernel has changed it.
 */
#define BPFSYM_UNW_FRESH_RANGES	32		/* a power of two: the BPF side masks indexes */
/*
 * flags: an executable range of the process may be missing from r[] (it
 * overflowed, a cut dropped a remainder, a VMA lookup failed): a range
 * it holds nothing of may still hold code.
 */
#define BPFSYM_UNW_FRESH_PARTIAL	1u
/*
 * flags: written by userspace from the start-up snapshot, for a process
 * the tracker did not see exec: its tables are unknown, so a mapping
 * change still wants a view written by userspace (never
 * BPFSYM_MF_VIEWED).
 */
#define BPFSYM_UNW_FRESH_SEEDED		2u

struct bpfsym_unw_fresh {
	__u32 nr;
	__u32 flags;
	struct bpfsym_unw_range r[BPFSYM_UNW_FRESH_RANGES];
};

/* unw_procs[tgid]: the process's executable mappings, sorted by start. */
struct bpfsym_unw_proc {
	__u32 nr;
	/*
	 * Userspace's count of its writes of this map, never 0 and never
	 * the same twice: a walk remembered in one view (bpf/offcpu.bpf.h)
	 * holds while the process's view has the same gen.
	 */
	__u32 gen;
	struct bpfsym_unw_range r[BPFSYM_UNW_PROC_RANGES];
};

/* Values of the rodata setting `ustack_mode`. */
enum bpfsym_ustack_mode {
	BPFSYM_USTACK_KERNEL_FP = 0,	/* bpf_get_stack's frame-pointer walk (no reasons) */
	BPFSYM_USTACK_FP = 1,		/* --call-graph fp: the frame-pointer walk done here */
	BPFSYM_USTACK_TABLES = 2,	/* --call-graph dwarf: tables, the FP rule where there is none */
};

/* Indexes of the per-CPU counter array `stats`. */
enum bpfsym_stat {
	BPFSYM_STAT_SAMPLES,		/* samples written to the ring buffer */
	BPFSYM_STAT_LOST_SAMPLES,	/* samples dropped: ring buffer full */
	BPFSYM_STAT_LOST_TASK_EVENTS,	/* exec/exit/fork/map/unmap records dropped: ring buffer full */
	BPFSYM_STAT_IDLE,		/* samples of the idle task, not recorded */
	BPFSYM_STAT_TARGETS_FULL,	/* a child could not be added to `targets` (map full) */
	BPFSYM_STAT_VMA_BUSY,		/* bpf_find_vma failed (mmap lock contended): a mapping event is missing */
	BPFSYM_STAT_PENDING_FULL,	/* a syscall's arguments could not be kept until its exit */
	BPFSYM_STAT_FIRST_SAMPLE,	/* processes whose mappings were taken at their first sample */
	BPFSYM_STAT_FIRST_TRUNC,	/* ...of which some were left out (too many VMAs) */
	BPFSYM_STAT_FIRST_DIRECT,	/* first samples sent before their process's mappings (no slot free) */
	/*
	 * samples dropped around a first sample's task work: taken on a CPU
	 * while one ran there, or one whose slot was taken over before its
	 * work ran (a task sampled on its way to sleep in the kernel)
	 */
	BPFSYM_STAT_FIRST_LOST,
	/*
	 * ns spent in first samples' task work: run by the task, not
	 * counted in the sampler's run_time_ns (kernel.bpf_stats_enabled)
	 */
	BPFSYM_STAT_FIRST_NS,
	/* Python (bpf/python.bpf.h), per sample of a process with an interpreter: */
	BPFSYM_STAT_PY_SAMPLES,		/* walked with its thread's interpreter frames */
	BPFSYM_STAT_PY_NO_THREAD,	/* its thread has no thread state (a thread Python did not start) */
	BPFSYM_STAT_PY_READ_FAULT,	/* the interpreter's memory could not be read: frames missing */
	BPFSYM_STAT_PY_LEFT,		/* interpreter frames left when the native walk ended */
	/* Off-CPU (bpf/offcpu.bpf.h, issue 28): */
	BPFSYM_STAT_OFF_SWITCHES,	/* switch-outs of targets, in a state kept: stacks taken */
	BPFSYM_STAT_OFF_STACKS,		/* off-CPU stack records sent (keys not seen before) */
	BPFSYM_STAT_OFF_SUMMED,		/* intervals summed under their key */
	BPFSYM_STAT_OFF_SUMMED_NS,
	BPFSYM_STAT_OFF_SHORT,		/* intervals under the minimum (offcpu_min_ns): dropped */
	BPFSYM_STAT_OFF_SHORT_NS,
	/* intervals whose stack did not reach the recorder (ring buffer full, a map full, the walk busy) */
	BPFSYM_STAT_OFF_LOST,
	BPFSYM_STAT_OFF_LOST_NS,
	/* switch-outs not followed: the thread map full (their intervals are not counted anywhere) */
	BPFSYM_STAT_OFF_UNTRACKED,
	/* CPU samples dropped: taken (an NMI) while an off-CPU walk used this CPU's walk state */
	BPFSYM_STAT_OFF_BUSY,
	/* switch-outs whose user side was the thread's last one, its witness checked: not walked again */
	BPFSYM_STAT_OFF_REUSED,
	/* The kernel unwinder against bpf_get_stack (BPFSYM_KORC_CHECK=1, a test's), per switch-in: */
	BPFSYM_STAT_KORC_SAME,		/* the same frames but the first */
	BPFSYM_STAT_KORC_SAME_MOD,	/* ...of those, stacks with a module's frame */
	BPFSYM_STAT_KORC_DIFF,		/* others */
	BPFSYM_STAT_KORC_NO_TABLE,	/* not compared: it met a frame in no table (a module, BPF) */
	BPFSYM_STAT_KORC_STOPPED,	/* not compared: it stopped short otherwise (enum korc_stop) */
	BPFSYM_STAT_MAX,
};

/*
 * A Python frame's instruction index (slot 1's low half) when the frame
 * has not run an instruction yet: its line is then its first line.
 */
#define BPFSYM_PY_NO_INDEX	0xffffffffu

/* bpfsym_py_proc.flags */
#define BPFSYM_PY_CFRAME	(1u << 0)	/* the frame via tstate->cframe->current_frame (3.11, 3.12) */
#define BPFSYM_PY_OWNER		(1u << 1)	/* fr_entry is `owner`, a C-stack shim ends a call (3.12+); else `is_entry` (3.11) */

/*
 * py_procs[tgid]: where a process's CPython keeps its threads and frames,
 * from its interpreter file (user/runtime/python/): runtime addresses and
 * the version's offsets, each checked against the file before it gets
 * here.  How the walker uses them: bpf/python.bpf.h.
 */
struct bpfsym_py_proc {
	__u64 runtime;		/* &_PyRuntime */
	__u64 eval_start;	/* _PyEval_EvalFrameDefault: [start, end) */
	__u64 eval_end;
	__u64 code_type;	/* &PyCode_Type */
	__u32 flags;		/* BPFSYM_PY_* */
	__u16 interp_head;	/* _PyRuntimeState.interpreters.head */
	__u16 threads_head;	/* PyInterpreterState.threads.head */
	__u16 ts_next;		/* PyThreadState.next */
	__u16 ts_thread_id;	/* PyThreadState.thread_id: pthread_self(), the thread's fs base */
	__u16 ts_frame;		/* PyThreadState.cframe (PY_CFRAME) or .current_frame */
	__u16 cframe_frame;	/* _PyCFrame.current_frame (PY_CFRAME) */
	__u16 fr_code;		/* _PyInterpreterFrame.f_code (3.13: f_executable) */
	__u16 fr_previous;	/* .previous */
	__u16 fr_instr;		/* .prev_instr (3.13: instr_ptr) */
	__u16 fr_entry;		/* .is_entry (3.11) or .owner (PY_OWNER): one byte */
	__u16 co_code;		/* PyCodeObject.co_code_adaptive: the bytecode */
	__u16 co_firstlineno;	/* PyCodeObject.co_firstlineno (int) */
	__u16 ob_type;		/* PyObject.ob_type */
	__u16 owner_cstack;	/* FRAME_OWNED_BY_CSTACK's value (PY_OWNER) */
};

/* The bytes of a frame and of a code object the walker reads: every offset above is below. */
#define BPFSYM_PY_READ	96

/* Values of the rodata setting `target_mode`. */
enum bpfsym_target_mode {
	BPFSYM_TARGET_ALL = 0,		/* every process */
	BPFSYM_TARGET_PIDS = 1,		/* thread groups present in the `targets` map */
	BPFSYM_TARGET_CGROUP = 2,	/* tasks in the cgroup of `cgroup_map`[0] or below it */
};

#endif /* BPFSYM_H */
