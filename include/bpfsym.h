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

/* Frames per side (kernel, user) of one sample; perf's default depth. */
#define BPFSYM_MAX_FRAMES 127
#define BPFSYM_COMM_LEN 16

enum bpfsym_ev_type {
	BPFSYM_EV_SAMPLE = 1,	/* struct bpfsym_sample */
	BPFSYM_EV_EXEC = 2,	/* struct bpfsym_task_ev: pid exec'd (new comm) */
	BPFSYM_EV_EXIT = 3,	/* struct bpfsym_task_ev: last thread of pid exited */
	BPFSYM_EV_FORK = 4,	/* struct bpfsym_task_ev: new process pid, parent ppid */
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

/*
 * One CPU sample.  ips[] holds nr_kernel kernel addresses followed by
 * nr_user user addresses, each side leaf first (ips[0] is where the CPU
 * was).  The record is truncated after the last address.
 */
struct bpfsym_sample {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;		/* thread group id, as seen from the init namespace */
	__u32 tid;
	__u64 pstart;		/* start_boottime of the group leader: (pid, pstart) is unique */
	__u64 cgroup_id;	/* cgroup v2 id of the task */
	char comm[BPFSYM_COMM_LEN];
	__u16 nr_kernel;
	__u16 nr_user;
	__u32 flags;		/* BPFSYM_SF_* */
	__u64 ips[2 * BPFSYM_MAX_FRAMES];
};

#define BPFSYM_SAMPLE_HDR_SIZE ((unsigned int)__builtin_offsetof(struct bpfsym_sample, ips))

/* Process lifetime events: exec, exit of the whole group, fork of a new process. */
struct bpfsym_task_ev {
	struct bpfsym_ev_hdr hdr;
	__u32 pid;		/* the process (tgid) the event is about */
	__u32 ppid;		/* FORK: the parent's tgid; otherwise 0 */
	__u64 pstart;		/* start_boottime of pid's group leader */
	char comm[BPFSYM_COMM_LEN];
};

/* Indexes of the per-CPU counter array `stats`. */
enum bpfsym_stat {
	BPFSYM_STAT_SAMPLES,		/* samples written to the ring buffer */
	BPFSYM_STAT_LOST_SAMPLES,	/* samples dropped: ring buffer full */
	BPFSYM_STAT_LOST_TASK_EVENTS,	/* exec/exit/fork records dropped: ring buffer full */
	BPFSYM_STAT_IDLE,		/* samples of the idle task, not recorded */
	BPFSYM_STAT_TARGETS_FULL,	/* a child could not be added to `targets` (map full) */
	BPFSYM_STAT_MAX,
};

/* Values of the rodata setting `target_mode`. */
enum bpfsym_target_mode {
	BPFSYM_TARGET_ALL = 0,		/* every process */
	BPFSYM_TARGET_PIDS = 1,		/* thread groups present in the `targets` map */
};

#endif /* BPFSYM_H */
