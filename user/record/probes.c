// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maptrack.skel.h"
#include "record/korc.h"
#include "record/probes.h"
#include "sampler.skel.h"
#include "sampler_exec.skel.h"
#include "snapshot.skel.h"
#include "base/util.h"

#define SNAPSHOT_CAP	(256u << 20)	/* bytes of snapshot records read, at most */
#define SNAPSHOT_CHUNK	(64u << 10)

struct probes {
	struct sampler_bpf *sampler;
	struct maptrack_bpf *tracker;
	int nr_cpus;
	uint32_t ring_size;		/* bytes of the shared ring buffer */
	struct bpf_link **links;	/* one per CPU event, NULL where none */
	struct bpf_link *offcpu;	/* the sched_switch program's, NULL when none */
	struct korc *korc;		/* the kernel unwinder's tables, NULL when not loaded */
	uint64_t offcpu_flip_ns;	/* CLOCK_MONOTONIC of the last flip of offcpu_gen */
	int *pfds;
	uint32_t nr_seeded;		/* fresh views given by probes__seed_fresh() */
};

#define RB_SECONDS	2		/* of samples the ring buffer holds */
#define RB_SAMPLE_BYTES	1024		/* one sample with a deep stack */
#define RB_FREQ_DEFAULT	99		/* Hz, when none is given */
#define RB_MIN_BYTES	(1u << 20)
#define RB_MAX_BYTES	(1u << 30)

/*
 * Ring buffer: room for 2 s of samples of 1 KiB (a deep stack) on every
 * CPU at @freq, so a reader that drains every 100 ms, and is woken at a
 * quarter full, never falls behind a steady rate, and a burst of mapping
 * records (an exec storm) wakes it early.  At least 1 MiB, a power of two
 * as the kernel requires.  Its pages are mapped twice in our address space
 * (the kernel's trick for records that wrap), so they count twice in RSS:
 * a fixed 8 MiB was most of the recorder's memory at 99 Hz.
 */
/*
 * The least time between two wakeups the tracker forces for new
 * mappings: a sampling period (a new process's next sample on a CPU
 * is that far away), within [1 ms, 100 ms] (the reader drains every
 * 100 ms anyway).
 */
static uint64_t wake_gap_ns(uint32_t freq)
{
	uint64_t gap = 1000000000ull / (freq ? freq : RB_FREQ_DEFAULT);

	return gap < 1000000 ? 1000000 : gap > 100000000 ? 100000000 : gap;
}

static uint32_t ringbuf_size(int nr_cpus, uint32_t freq)
{
	uint64_t want = (uint64_t)nr_cpus * (freq ? freq : RB_FREQ_DEFAULT) * RB_SAMPLE_BYTES * RB_SECONDS;
	uint64_t size = RB_MIN_BYTES;

	while (size < want && size < RB_MAX_BYTES)
		size <<= 1;
	return (uint32_t)size;
}

/*
 * BPFSYM_VERIFIER_STATS=1 with -v: the verifier's own statistics of each
 * program loaded (its time, instructions processed, states), for
 * bench/startup.sh: what start-up costs, and on an old kernel how near a
 * program is to the 1M-instruction limit.  Not by default: a program
 * with a log level of its own loses libbpf's retry with the full
 * verifier log when it fails.
 */
static void want_verifier_stats(struct bpf_object *obj)
{
	struct bpf_program *prog;
	const char *env = getenv("BPFSYM_VERIFIER_STATS");

	if (!env || strcmp(env, "1") || log_get_level() < LOG_DEBUG)
		return;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_log_level(prog, 4);
}

/*
 * The sampler for this kernel, opened: sampler.bpf.o where the kernel has
 * what a first sample needs, else sampler_exec.bpf.o (bpf/sampler.bpf.c
 * built without it, and without its kfuncs, which libbpf would otherwise
 * have to find).  Both through sampler.skel.h's struct: the build checks
 * that the two declare the same maps, programs and settings
 * (scripts/same-skeleton.sh).  NULL + errno.
 */
static struct sampler_bpf *sampler_open(bool first_sample)
{
	struct sampler_bpf *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	err = sampler_bpf__create_skeleton(s);
	if (!err && !first_sample)
		s->skeleton->data = sampler_exec_bpf__elf_bytes(&s->skeleton->data_sz);
	err = err ?: bpf_object__open_skeleton(s->skeleton, NULL);
	if (err) {
		sampler_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/*
 * The kernel unwinder's tables: an off-CPU kernel stack at the switch-in
 * (o->korc), or checked against bpf_get_stack (korc_check).  Without
 * them, bpf_get_stack at the switch-out.  Found and sized on opened @s;
 * the milliseconds it took to find them.
 */
static double korc_plan(struct probes *p, const struct probes_opts *o, struct sampler_bpf *s)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);

	if ((o->korc || o->korc_check) && o->off_cpu && o->want_kernel) {
		p->korc = korc__plan();
		if (!p->korc && o->korc_check)
			pr_warn("bpfsym: BPFSYM_KORC_CHECK: no kernel unwinder tables (-v says why)\n");
	}
	if (!p->korc && o->off_cpu && o->want_kernel)
		pr_debug("bpfsym: off-CPU kernel stacks: bpf_get_stack at each switch-out (%s)\n",
			 o->korc ? "the ORC tables were not found" :
			 "this kernel has no ORC unwinder, or BPFSYM_FORCE_FALLBACK=korc");
	korc__size(p->korc, s);
	s->rodata->korc_check = p->korc && o->korc_check;
	return (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e6;
}

/* The tables into the loaded sampler, then kept as modules come and go (@plan_ms: for -v). */
static void korc_start(struct probes *p, const struct probes_opts *o, double plan_ms)
{
	uint64_t fill_ns = clock_ns(CLOCK_MONOTONIC), entries;
	uint32_t segs;
	int err;

	if (!p->korc)
		return;
	if (korc__fill(p->korc, p->sampler)) {
		/* korc_ready stays 0: the kernel stacks come from bpf_get_stack. */
		if (o->korc_check)
			pr_warn("bpfsym: BPFSYM_KORC_CHECK: the kernel unwinder's tables could not be made (-v says why)\n");
		korc__free(p->korc);
		p->korc = NULL;
		return;
	}
	korc__counts(p->korc, &entries, &segs);
	pr_debug("bpfsym: kernel unwinder: %llu ORC entries in %u text ranges (found in %.0f ms, "
		 "copied and indexed in %.0f)\n", (unsigned long long)entries, segs, plan_ms,
		 (double)(clock_ns(CLOCK_MONOTONIC) - fill_ns) / 1e6);
	err = korc__watch(p->korc);
	if (err)
		pr_debug("bpfsym: kernel unwinder: modules loaded from now on will have no tables: %s\n",
			 strerror(-err));
}

static int load_sampler(struct probes *p, const struct probes_opts *o)
{
	struct sampler_bpf *s;
	double plan_ms;
	int err;

	s = p->sampler = sampler_open(o->first_sample);
	if (!s) {
		err = -errno;
		pr_err("bpfsym: opening the BPF sampler failed: %s\n", strerror(-err));
		return err;
	}
	s->rodata->target_mode = o->target_mode;
	s->rodata->follow_children = o->follow_children;
	s->rodata->want_kernel = o->want_kernel;
	s->rodata->want_user = o->want_user;
	s->rodata->want_interp = o->want_interp;
	s->rodata->wakeup_bytes = p->ring_size / 4;
	bpf_map__set_max_entries(s->maps.targets, o->max_targets ? o->max_targets : 1);
	bpf_map__set_max_entries(s->maps.events, p->ring_size);
	s->rodata->ustack_mode = o->ustack_mode;
	/* For a first sample's MAP records (lazy_maps), as the tracker's. */
	s->rodata->lazy_maps = o->lazy_maps;
	s->rodata->pend_maps = o->pend_maps;
	s->rodata->unwinder_on = o->ustack_mode == BPFSYM_USTACK_TABLES;
	s->rodata->wake_gap_ns = wake_gap_ns(o->freq);
	bpf_map__set_max_entries(s->maps.unw_procs, o->max_unwind_procs ? o->max_unwind_procs : 4096);
	bpf_map__set_max_entries(s->maps.unw_alias, o->max_unwind_procs ? o->max_unwind_procs : 4096);
	/*
	 * In every mode: besides the table-driven walk, the tracker asks
	 * them whether a range that lost its code had any.
	 */
	bpf_map__set_max_entries(s->maps.unw_fresh, o->max_unwind_procs ? o->max_unwind_procs : 4096);
	/* A list a process not followed yet (1.3 KiB each): 5 MiB, so only where used. */
	bpf_map__set_max_entries(s->maps.unw_pend,
				 !o->pend_maps ? 1 : o->max_unwind_procs ? o->max_unwind_procs : 4096);
	if (o->max_unwind_tables && o->max_unwind_tables < BPFSYM_UNW_MAX_TABLES) {
		bpf_map__set_max_entries(s->maps.unw_tables, o->max_unwind_tables);
		bpf_map__set_max_entries(s->maps.unw_files, o->max_unwind_tables);
	}
	/* Off-CPU: the program and room in its maps only when asked for. */
	s->rodata->want_offcpu = o->off_cpu;
	s->rodata->offcpu_min_ns = o->off_cpu_min_ns;
	s->rodata->offcpu_states = o->off_cpu_states;
	bpf_program__set_autoload(s->progs.on_switch, o->off_cpu);
	if (!o->off_cpu) {
		bpf_map__set_max_entries(s->maps.offcpu_threads, 1);
		bpf_map__set_max_entries(s->maps.offcpu_seen, 1);
		bpf_map__set_max_entries(s->maps.offcpu_sum0, 1);
		bpf_map__set_max_entries(s->maps.offcpu_sum1, 1);
	}
	plan_ms = korc_plan(p, o, s);
	/* The first sample's maps exist only for it. */
	if (!o->first_sample) {
		bpf_map__set_autocreate(s->maps.first_slots, false);
		bpf_map__set_autocreate(s->maps.first_busy, false);
		bpf_map__set_autocreate(s->maps.first_counts, false);
	}
	want_verifier_stats(s->obj);
	err = sampler_bpf__load(s);
	if (err) {
		pr_err("bpfsym: loading the BPF sampler failed: %s%s\n", strerror(-err),
			log_get_level() >= LOG_DEBUG ? "" : " (run with -v for the verifier log)");
		return err;
	}
	korc_start(p, o, plan_ms);
	return 0;
}

/* The tracker writes into the sampler's maps: one stream, one target set. */
static int load_tracker(struct probes *p, const struct probes_opts *o)
{
	struct maptrack_bpf *t;
	int err;

	t = p->tracker = maptrack_bpf__open();
	if (!t) {
		err = -errno;
		pr_err("bpfsym: opening the BPF mapping tracker failed: %s\n", strerror(-err));
		return err;
	}
	t->rodata->target_mode = o->target_mode;
	t->rodata->follow_children = o->follow_children;
	t->rodata->wakeup_bytes = p->ring_size / 4;
	t->rodata->lazy_maps = o->lazy_maps;
	t->rodata->pend_maps = o->pend_maps;
	t->rodata->unwinder_on = o->ustack_mode == BPFSYM_USTACK_TABLES;
	t->rodata->wake_gap_ns = wake_gap_ns(o->freq);
	err = bpf_map__reuse_fd(t->maps.events, bpf_map__fd(p->sampler->maps.events));
	err = err ?: bpf_map__reuse_fd(t->maps.targets, bpf_map__fd(p->sampler->maps.targets));
	err = err ?: bpf_map__reuse_fd(t->maps.stats, bpf_map__fd(p->sampler->maps.stats));
	err = err ?: bpf_map__reuse_fd(t->maps.cgroup_map, bpf_map__fd(p->sampler->maps.cgroup_map));
	err = err ?: bpf_map__reuse_fd(t->maps.unw_procs, bpf_map__fd(p->sampler->maps.unw_procs));
	err = err ?: bpf_map__reuse_fd(t->maps.unw_alias, bpf_map__fd(p->sampler->maps.unw_alias));
	err = err ?: bpf_map__reuse_fd(t->maps.unw_fresh, bpf_map__fd(p->sampler->maps.unw_fresh));
	err = err ?: bpf_map__reuse_fd(t->maps.unw_files, bpf_map__fd(p->sampler->maps.unw_files));
	err = err ?: bpf_map__reuse_fd(t->maps.unw_pend, bpf_map__fd(p->sampler->maps.unw_pend));
	err = err ?: bpf_map__reuse_fd(t->maps.pend_busy, bpf_map__fd(p->sampler->maps.pend_busy));
	err = err ?: bpf_map__reuse_fd(t->maps.py_procs, bpf_map__fd(p->sampler->maps.py_procs));
	if (err) {
		pr_err("bpfsym: sharing maps with the mapping tracker failed: %s\n", strerror(-err));
		return err;
	}
	want_verifier_stats(t->obj);
	err = maptrack_bpf__load(t);
	if (err) {
		pr_err("bpfsym: loading the BPF mapping tracker failed: %s%s\n", strerror(-err),
			log_get_level() >= LOG_DEBUG ? "" : " (run with -v for the verifier log)");
		return err;
	}
	return 0;
}

struct probes *probes__load(const struct probes_opts *o)
{
	struct probes *p = calloc(1, sizeof(*p));
	uint32_t zero = 0;
	int err, i;

	if (!p) {
		pr_err("bpfsym: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	p->nr_cpus = libbpf_num_possible_cpus();
	if (p->nr_cpus <= 0) {
		err = p->nr_cpus ? p->nr_cpus : -ENODEV;
		pr_err("bpfsym: cannot count CPUs: %s\n", strerror(-err));
		goto fail;
	}
	p->links = calloc((size_t)p->nr_cpus, sizeof(*p->links));
	p->pfds = calloc((size_t)p->nr_cpus, sizeof(*p->pfds));
	if (!p->links || !p->pfds) {
		err = -ENOMEM;
		pr_err("bpfsym: out of memory\n");
		goto fail;
	}
	for (i = 0; i < p->nr_cpus; i++)
		p->pfds[i] = -1;
	p->ring_size = o->ring_size ? (uint32_t)o->ring_size : ringbuf_size(p->nr_cpus, o->freq);
	err = load_sampler(p, o);
	err = err ?: load_tracker(p, o);
	if (err)
		goto fail;
	if (o->target_mode == BPFSYM_TARGET_CGROUP &&
	    bpf_map_update_elem(bpf_map__fd(p->sampler->maps.cgroup_map), &zero, &o->cgroup_fd, BPF_ANY)) {
		err = -errno;
		pr_err("bpfsym: setting the target cgroup failed: %s\n", strerror(-err));
		goto fail;
	}
	return p;
fail:
	probes__free(p);
	errno = -err;
	return NULL;
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	if (p->links)
		probes__detach_sampler(p);
	/* Its watcher writes the sampler's maps: stopped first. */
	korc__free(p->korc);
	maptrack_bpf__destroy(p->tracker);
	sampler_bpf__destroy(p->sampler);
	free(p->links);
	free(p->pfds);
	free(p);
}

void probes__unwind_fds(const struct probes *p, struct probes_unwind_fds *fds)
{
	fds->shards = bpf_map__fd(p->sampler->maps.unw_shards);
	fds->tables = bpf_map__fd(p->sampler->maps.unw_tables);
	fds->procs = bpf_map__fd(p->sampler->maps.unw_procs);
	fds->files = bpf_map__fd(p->sampler->maps.unw_files);
}

int probes__py_procs_fd(const struct probes *p)
{
	return bpf_map__fd(p->sampler->maps.py_procs);
}

void probes__py_changed(struct probes *p)
{
	__atomic_add_fetch(&p->sampler->bss->py_epoch, 1, __ATOMIC_RELEASE);
}

int probes__add_target(struct probes *p, uint32_t pid)
{
	uint8_t one = 1;
	int err;

	if (bpf_map_update_elem(bpf_map__fd(p->sampler->maps.targets), &pid, &one, BPF_ANY)) {
		err = -errno;
		pr_err("bpfsym: adding pid %u to the targets failed: %s\n", pid, strerror(-err));
		return err;
	}
	return 0;
}

int probes__seed_fresh(struct probes *p, uint32_t pid, const struct bpfsym_unw_fresh *v)
{
	int err;

	/* Half the LRU at most: evicting views costs every later exec and fork. */
	if (p->nr_seeded >= bpf_map__max_entries(p->sampler->maps.unw_fresh) / 2)
		return -ENOSPC;
	err = bpf_map_update_elem(bpf_map__fd(p->sampler->maps.unw_fresh), &pid, v, BPF_NOEXIST);
	if (err)
		return err == -EEXIST ? 0 : err;
	p->nr_seeded++;
	return 0;
}

int probes__events_fd(const struct probes *p)
{
	return bpf_map__fd(p->sampler->maps.events);
}

/* libbpf finds syscall tracepoints through tracefs, which a fresh machine may not mount. */
static int ensure_tracefs(void)
{
	int err;

	/*
	 * AT_EACCESS: access() checks the real uid, and drops every capability
	 * when it is not root, so a non-root user with CAP_DAC_READ_SEARCH
	 * would not see the mounted tracefs (its directory is 0700).
	 */
	if (faccessat(AT_FDCWD, "/sys/kernel/tracing/events", F_OK, AT_EACCESS) == 0 ||
	    faccessat(AT_FDCWD, "/sys/kernel/debug/tracing/events", F_OK, AT_EACCESS) == 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		err = -errno;
		pr_err("bpfsym: tracefs is not mounted, and mounting it at /sys/kernel/tracing failed: %s\n",
			strerror(-err));
		return err;
	}
	pr_info("bpfsym: mounted tracefs at /sys/kernel/tracing\n");
	return 0;
}

int probes__attach_tracker(struct probes *p)
{
	int err = ensure_tracefs();

	if (err)
		return err;
	err = maptrack_bpf__attach(p->tracker);
	if (err)
		pr_err("bpfsym: attaching the mapping tracker failed: %s\n", strerror(-err));
	return err;
}

/*
 * Hand every whole record at the front of @buf to @cb, each copied to
 * aligned storage first: the stream promises no alignment.  The consumed
 * length goes in *@used.
 */
static int snapshot_records(const char *buf, size_t len, size_t *used,
			    int (*cb)(void *ctx, const void *rec, size_t len), void *ctx)
{
	struct bpfsym_map_ev rec;
	struct bpfsym_ev_hdr h;
	size_t off = 0;
	int err;

	while (len - off >= sizeof(h)) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.type != BPFSYM_EV_MAP || h.size < BPFSYM_MAP_EV_HDR_SIZE + 1 ||
		    h.size > sizeof(rec)) {
			pr_err("bpfsym: snapshot: malformed record (type %u, size %u)\n",
				h.type, h.size);
			return -EINVAL;
		}
		if (len - off < h.size)
			break;
		memcpy(&rec, buf + off, h.size);
		err = cb(ctx, &rec, h.size);
		if (err)
			return err;
		off += h.size;
	}
	*used = off;
	return 0;
}

int probes__snapshot(struct probes *p, int (*cb)(void *ctx, const void *rec, size_t len), void *ctx)
{
	struct snapshot_bpf *snap;
	struct bpf_link *link = NULL;
	size_t have = 0, used, total = 0;
	char *buf = NULL;
	int fd = -1, err;
	ssize_t n;

	snap = snapshot_bpf__open_and_load();
	if (!snap) {
		err = -errno;
		pr_err("bpfsym: loading the snapshot iterator failed: %s\n", strerror(-err));
		return err;
	}
	link = bpf_program__attach_iter(snap->progs.snapshot, NULL);
	if (!link) {
		err = -errno;
		pr_err("bpfsym: attaching the snapshot iterator failed: %s\n", strerror(-err));
		goto out;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	buf = malloc(2 * SNAPSHOT_CHUNK);
	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		pr_err("bpfsym: starting the snapshot failed: %s\n", strerror(-err));
		goto out;
	}
	for (;;) {
		n = read(fd, buf + have, 2 * SNAPSHOT_CHUNK - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			pr_err("bpfsym: reading the snapshot failed: %s\n", strerror(-err));
			goto out;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > SNAPSHOT_CAP) {
			err = -E2BIG;
			pr_err("bpfsym: the snapshot is over %u MiB: giving up on it\n", SNAPSHOT_CAP >> 20);
			goto out;
		}
		have += (size_t)n;
		err = snapshot_records(buf, have, &used, cb, ctx);
		if (err)
			goto out;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	err = have ? -EINVAL : 0;
	if (err)
		pr_err("bpfsym: snapshot: %zu bytes of a truncated record\n", have);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	snapshot_bpf__destroy(snap);
	return err;
}

static int open_cpu_event(int cpu, uint32_t freq, int hw, bool kernel_only)
{
	/*
	 * --kernel-only samples only kernel time, as perf's ":k" does, so
	 * user-mode ticks cost no BPF run at all.
	 */
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq,
		.exclude_user = kernel_only,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int probes__attach_sampler(struct probes *p, uint32_t freq, bool kernel_only, const char **event,
			   const bool *cpus, size_t nr_cpus)
{
	int cpu, hw = !(*event && !strcmp(*event, "cpu-clock")), fd, err, attached = 0;

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		if (cpus && ((size_t)cpu >= nr_cpus || !cpus[cpu]))
			continue;	/* -C: not one of the CPUs asked for */
		fd = open_cpu_event(cpu, freq, hw, kernel_only);
		if (fd < 0 && hw && fd != -ENODEV) {
			hw = 0;
			fd = open_cpu_event(cpu, freq, hw, kernel_only);
		}
		if (fd == -ENODEV)	/* offline CPU */
			continue;
		if (fd < 0) {
			pr_err("bpfsym: perf_event_open on CPU %d failed: %s\n", cpu, strerror(-fd));
			return fd;
		}
		p->pfds[cpu] = fd;
		p->links[cpu] = bpf_program__attach_perf_event(p->sampler->progs.on_sample, fd);
		if (!p->links[cpu]) {
			err = -errno;
			pr_err("bpfsym: attaching the sampler to CPU %d failed: %s\n", cpu, strerror(-err));
			return err;
		}
		attached++;
	}
	if (!attached) {
		pr_err("bpfsym: no online CPU to sample\n");
		return -ENODEV;
	}
	*event = hw ? "cycles" : "cpu-clock";
	return 0;
}

int probes__attach_offcpu(struct probes *p)
{
	int err;

	if (!p->sampler->rodata->want_offcpu || p->offcpu)
		return 0;
	p->offcpu = bpf_program__attach(p->sampler->progs.on_switch);
	if (!p->offcpu) {
		err = -errno;
		pr_err("bpfsym: attaching the off-CPU program to sched_switch failed: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

#define OFFCPU_BATCH	1024
#define OFFCPU_FLIP_GAP_NS	(10 * 1000000ull)	/* 10 ms */

/* Read and empty sums map @fd: each key to @cb.  0 or -errno. */
static int offcpu_drain_map(int fd,
			    int (*cb)(void *ctx, const struct bpfsym_offcpu_key *k, const struct bpfsym_offcpu_sum *v),
			    void *ctx)
{
	static struct bpfsym_offcpu_key keys[OFFCPU_BATCH];
	static struct bpfsym_offcpu_sum vals[OFFCPU_BATCH];
	struct bpfsym_offcpu_key in = {}, out = {};
	bool first = true;
	uint32_t n, i;
	int err, ret;

	/* Nothing writes this map now: a batch read and deleted is all of it, once. */
	for (;;) {
		n = OFFCPU_BATCH;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		ret = err ? -errno : 0;
		for (i = 0; i < n && i < OFFCPU_BATCH; i++) {
			err = cb(ctx, &keys[i], &vals[i]);
			if (err)
				return err;
		}
		if (ret == -ENOENT)
			return 0;
		if (ret)
			return ret;
		in = out;
		first = false;
	}
}

int probes__offcpu_drain(struct probes *p, bool final,
			 int (*cb)(void *ctx, const struct bpfsym_offcpu_key *k, const struct bpfsym_offcpu_sum *v),
			 void *ctx)
{
	struct sampler_bpf *s = p->sampler;
	uint32_t gen;
	int err;

	if (!s->rodata->want_offcpu)
		return 0;
	/*
	 * A program that read offcpu_gen just before the last flip may still
	 * be adding into the map left then: read it only once that is long
	 * past (programs run for microseconds), else at the next call.
	 */
	if (!final && clock_ns(CLOCK_MONOTONIC) - p->offcpu_flip_ns < OFFCPU_FLIP_GAP_NS)
		return 0;
	gen = __atomic_load_n(&s->bss->offcpu_gen, __ATOMIC_RELAXED);
	/* The map BPF writes is gen & 1: the other was left a drain ago. */
	err = offcpu_drain_map(bpf_map__fd((gen & 1) ? s->maps.offcpu_sum0 : s->maps.offcpu_sum1), cb, ctx);
	if (err)
		return err;
	if (final)
		return offcpu_drain_map(bpf_map__fd((gen & 1) ? s->maps.offcpu_sum1 : s->maps.offcpu_sum0), cb,
					ctx);
	__atomic_store_n(&s->bss->offcpu_gen, gen + 1, __ATOMIC_RELEASE);
	p->offcpu_flip_ns = clock_ns(CLOCK_MONOTONIC);
	return 0;
}

void probes__offcpu_forget(struct probes *p, const uint64_t *keys, size_t nr)
{
	int fd = bpf_map__fd(p->sampler->maps.offcpu_seen);

	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	/* After the deletions: a thread that found its key seen before them looks again. */
	if (nr)
		__atomic_add_fetch(&p->sampler->bss->offcpu_seen_epoch, 1, __ATOMIC_RELEASE);
}

void probes__detach_sampler(struct probes *p)
{
	int cpu;

	bpf_link__destroy(p->offcpu);
	p->offcpu = NULL;

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		bpf_link__destroy(p->links[cpu]);
		p->links[cpu] = NULL;
		if (p->pfds[cpu] >= 0)
			close(p->pfds[cpu]);
		p->pfds[cpu] = -1;
	}
}

void probes__read_stats(const struct probes *p, uint64_t *out)
{
	int fd = bpf_map__fd(p->sampler->maps.stats);
	uint64_t *vals;
	uint32_t k;
	int c;

	memset(out, 0, sizeof(*out) * BPFSYM_STAT_MAX);
	vals = calloc((size_t)p->nr_cpus, sizeof(*vals));
	if (!vals)
		return;
	for (k = 0; k < BPFSYM_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < p->nr_cpus; c++)
			out[k] += vals[c];
	}
	free(vals);
}
