/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * probes: the BPF side of a recording, behind one handle.  Loads the
 * sampler, the mapping tracker and the snapshot iterator (libbpf
 * skeletons), makes them share one ring buffer, one target set and one set
 * of counters, and attaches them in the order that loses nothing: process
 * and mapping events first, then the snapshot of what already exists, then
 * the sampling events.  Errors are printed here, once, naming the subject.
 */
#ifndef BPFSYM_PROBES_H
#define BPFSYM_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfsym.h"

struct probes;

struct probes_opts {
	uint32_t target_mode;		/* enum bpfsym_target_mode */
	bool follow_children;		/* a fork of a target is a target */
	bool want_kernel, want_user;	/* stack sides */
	bool want_interp;		/* interpreters' frames in user stacks (bpf/python.bpf.h) */
	uint32_t freq;			/* sampling rate, Hz per CPU: sizes the ring buffer */
	uint64_t ring_size;		/* bytes of the ring buffer (a power of two pages); 0: by freq */
	uint32_t max_targets;		/* entries of the targets map */
	int cgroup_fd;			/* BPFSYM_TARGET_CGROUP: an open cgroup v2 directory */
	uint32_t ustack_mode;		/* enum bpfsym_ustack_mode */
	uint32_t max_unwind_procs;	/* entries of unw_procs (process views); 0: 4096 */
	uint32_t max_unwind_tables;	/* entries of unw_tables; 0: BPFSYM_UNW_MAX_TABLES */
	bool lazy_maps;			/* follow a process's mappings from its first sample (maps.bpf.h) */
	bool first_sample;		/* the kernel has what a first sample needs (task work,
					 * the VMA iterator): sampler.bpf.o, else
					 * sampler_exec.bpf.o */
	bool pend_maps;			/* lazy_maps without first_sample: from the lists the
					 * tracker keeps (bpf/pend.bpf.h) */
	/* --off-cpu (bpf/offcpu.bpf.h): loaded and attached only when set. */
	bool off_cpu;
	uint64_t off_cpu_min_ns;	/* shorter intervals dropped, counted */
	uint32_t off_cpu_states;	/* 1 << enum bpfsym_offstate kept */
	bool korc;			/* off-CPU kernel stacks by the kernel unwinder (KF_KORC) */
	bool korc_check;		/* the kernel unwinder's tables, checked at each switch-in (tests) */
};

/* Open and load the BPF objects; NULL + errno (the reason already printed). */
struct probes *probes__load(const struct probes_opts *o);

/* Free everything, detaching all.  NULL is a no-op. */
void probes__free(struct probes *p);

/* Add @pid (a thread group) to the targets: 0 or -errno (printed). */
int probes__add_target(struct probes *p, uint32_t pid);

/* The ring buffer's fd, for ring_buffer__new(). */
int probes__events_fd(const struct probes *p);

/*
 * Give process @pid, which the tracker has not seen exec (it ran before
 * the recording), fresh view @v: its executable mappings, so that the
 * tracker can tell, at a munmap's or mprotect's exit, whether the range
 * held code.  Not over a view the tracker made (an exec since: newer).
 * 0, -ENOSPC once half the views' room is used this way, or -errno.
 */
int probes__seed_fresh(struct probes *p, uint32_t pid, const struct bpfsym_unw_fresh *v);

/*
 * Attach the process and mapping tracepoints, mounting tracefs at
 * /sys/kernel/tracing when no tracefs is mounted.  0 or -errno (printed).
 */
int probes__attach_tracker(struct probes *p);

/*
 * Run the snapshot iterator: @cb gets every MAP record (struct
 * bpfsym_map_ev, cause BPFSYM_MAP_SNAPSHOT) of every executable mapping
 * of every process now.  Records are checked to be whole before @cb sees
 * them.  A non-zero return from @cb stops and is returned.  0 or -errno
 * (printed).
 */
int probes__snapshot(struct probes *p, int (*cb)(void *ctx, const void *rec, size_t len),
		     void *ctx);

/*
 * One sampling event per online CPU at @freq Hz: `cycles` where the
 * hardware has a PMU, else `cpu-clock`; *@event names the one used.  An
 * *@event of "cpu-clock" on entry asks for it even where there is a PMU
 * (-e cpu-clock); NULL or "cycles" for the default.  @cpus (-C), when not
 * NULL, names the CPUs to sample: CPU i where i < @nr_cpus and @cpus[i].
 * @kernel_only excludes user mode from the event itself.  0 or -errno
 * (printed).
 */
int probes__attach_sampler(struct probes *p, uint32_t freq, bool kernel_only, const char **event,
			   const bool *cpus, size_t nr_cpus);

/*
 * With off_cpu: attach the sched_switch program (off-CPU time), after the
 * sampler.  0 (also without off_cpu) or -errno (printed).
 */
int probes__attach_offcpu(struct probes *p);

/*
 * Off-CPU sums (bpf/offcpu.bpf.h): @cb gets each key's time summed since
 * it was last read, from the map BPF stopped writing at the previous
 * call (so stable), which is then emptied; then BPF is flipped to the
 * other map.  With @final (the program detached: nothing writes), both
 * maps are read.  A non-zero return from @cb stops and is returned.  0
 * or -errno.
 */
int probes__offcpu_drain(struct probes *p, bool final,
			 int (*cb)(void *ctx, const struct bpfsym_offcpu_key *k, const struct bpfsym_offcpu_sum *v),
			 void *ctx);

/* Forget that the stacks of @nr @keys were sent: BPF sends each again when next taken. */
void probes__offcpu_forget(struct probes *p, const uint64_t *keys, size_t nr);

/* Stop sampling (the tracker stays, so the ring buffer can be drained). */
void probes__detach_sampler(struct probes *p);

/* The unwinder's maps: the shards' outer array, the tables, the process views, the file ids. */
struct probes_unwind_fds {
	int shards, tables, procs, files;
};
void probes__unwind_fds(const struct probes *p, struct probes_unwind_fds *fds);

/* The fd of py_procs: tgid -> struct bpfsym_py_proc (bpf/python.bpf.h). */
int probes__py_procs_fd(const struct probes *p);

/*
 * Count a write of py_procs, made: BPF keeps a walk that found no
 * interpreter only while the count stays (bpf/python.bpf.h, py_epoch).
 */
void probes__py_changed(struct probes *p);

/* Sum the per-CPU counters into @out[BPFSYM_STAT_MAX]. */
void probes__read_stats(const struct probes *p, uint64_t *out);

#endif /* BPFSYM_PROBES_H */
