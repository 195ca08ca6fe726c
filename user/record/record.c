// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record: a recording from start to end.
 *
 * Check privileges and targets (preflight.c) -> load the BPF side (probes.c) -> fill
 * `targets` -> attach the mapping tracker -> replay the snapshot of what
 * exists into the mapping model -> attach the sampler -> start the command
 * -> poll the ring buffer, handing each record to ingest (ingest.c: mapping
 * records to the model, samples symbolized and written) -> on stop, detach
 * the sampler first, drain what is left, read the loss counters -> END
 * record.  The per-record path is all below ingest: nothing here is called
 * back while a record is handled.
 */
#include <errno.h>
#include <linux/capability.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfsym.h"
#include "record/anonhints.h"
#include "record/cgroup.h"
#include "record/drain.h"
#include "ingest/ingest.h"
#include "ingest/mapevents.h"
#include "record/preflight.h"
#include "record/pace.h"
#include "record/kfeatures.h"
#include "record/offcpu.h"
#include "record/probes.h"
#include "model/procmap.h"
#include "record/header.h"
#include "record/record.h"
#include "record/output.h"
#include "record/rotate.h"
#include "record/rtmaps.h"
#include "record/snapshot.h"
#include "record/summary.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"
#include "base/inputcap.h"
#include "symbolize/debuginfod.h"
#include "base/offload.h"
#include "base/privdrop.h"
#include "base/util.h"
#include "record/unwmaps.h"
#include "record/workload.h"
#include "unwind/unwinder.h"

#define NSEC_PER_SEC		1000000000ull
#define NSEC_PER_MSEC		1000000ull
#define FLUSH_INTERVAL_NS	NSEC_PER_SEC	/* a SIGKILL loses at most this much */
#define STATUS_INTERVAL_NS	(NSEC_PER_SEC / 2)
#define COMMAND_MAX_TARGETS	65536	/* -- COMMAND: targets map entries, its whole process tree */
#define UNWIND_START_WAIT_MS	3000	/* for the tables of what exists, before sampling */

/* record__run()'s exit statuses (record.h); RUN_OK also means "go on" between its steps. */
enum { RUN_OK = 0, RUN_FAILED = 1, RUN_USAGE = 2 };

struct recorder {
	const struct record_opts *o;
	struct probes *bpf;
	struct ring_buffer *rb;
	struct proc_table *procs;
	struct mapevents *mev;
	int cgroup_fd;			/* RECORD_CGROUP */
	char cgroup_rel[PATH_MAX];	/* RECORD_CGROUP: its path in the hierarchy, "/a/b" */
	struct symbolizer *sym;
	struct offload *pool;		/* where files are opened and read, off this thread */
	struct output out;		/* -o: its held directory, the file (record/output.h) */
	struct report_writer *w;
	struct rpt_header hdr;
	struct ingest *ing;		/* the records' way to the model and the report */
	uint64_t t0;			/* CLOCK_MONOTONIC when recording began: the summary's duration */
	struct workload cmd;		/* RECORD_COMMAND */
	uint32_t *hint_ids;		/* the symbolizer's id of each --map-anon file */
	struct unwmaps *umaps;		/* --call-graph dwarf: the unwinder and its BPF maps */
	struct unwinder *unw;		/* its unwinder, for ingest */
	struct cgpaths *cgp;		/* cgroup ids -> paths, for ingest (NULL: no cgroup2) */
	struct rtmaps *rtm;		/* interpreters' frames (record/rtmaps.h); NULL: off */
	struct snapshot_filter snap_filter;
	struct snapshot *snap;		/* the processes that ran before the recording */
	int err;			/* first write error, sticky */
	struct rotate *rot;		/* --switch-output: r->w is the current file (NULL: none now) */
	struct kfeatures kf;		/* what the kernel offers the BPF side */
	struct drain drain;		/* the ring buffer read in slices */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* libbpf's messages join ours: one print path, one threshold (-v). */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	log_vmsg(level == LIBBPF_WARN ? LOG_WARN : level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG, fmt, ap);
	return 0;
}

/* Each ring-buffer record to ingest; a write error (or a spent slice) stops libbpf's loop. */
static int on_record(void *ctx, void *data, size_t len)
{
	struct recorder *r = ctx;
	int err;

	err = ingest__record(r->ing, data, len);

	/* With rotation, a full disk costs the file, not the recording. */
	if (err && r->rot)
		err = rotate__drop(r->rot, err);
	if (err)
		r->err = err;	/* the file is unusable */
	else if (!drain__more(&r->drain))
		err = drain__stop();	/* taken: libbpf has moved past it */
	return err;
}

static void print_status(struct recorder *r, uint64_t elapsed_ns, int final)
{
	char bytes[32];

	human_bytes(report_writer__bytes(r->w), bytes, sizeof(bytes));
	fprintf(stderr, "\rbpfsym: %6.1fs  %llu samples  %zu processes  %s\033[K%s",
		elapsed_ns / (double)NSEC_PER_SEC, (unsigned long long)ingest__stats(r->ing)->samples,
		proc_table__nr_sampled(r->procs), bytes, final ? "\n" : "");
}

/* Whether the recording should end now, besides signals and the deadline. */
static int targets_gone(struct recorder *r)
{
	size_t i;

	/* --max-size: what the writer has written, as perf counts its output. */
	if (r->o->max_size && r->w && report_writer__bytes(r->w) >= r->o->max_size) {
		fprintf(stderr, "bpfsym: '%s' reached --max-size, stopping\n", r->o->output);
		return 1;
	}
	/* A command's run, also with -a or -G (perf's -a -- COMMAND: the system while it runs). */
	if (r->o->argv)
		return workload__exited(&r->cmd);
	if (r->o->target == RECORD_PIDS) {
		/* The EXIT record can be lost when the ring buffer is full: ask the kernel. */
		for (i = 0; i < r->o->nr_pids; i++) {
			uint32_t pid = r->o->pids[i];

			if (!ingest__pid_is_gone(r->ing, pid) && kill((pid_t)pid, 0) && errno == ESRCH)
				ingest__pid_gone(r->ing, pid);
		}
		return ingest__stats(r->ing)->pids_alive == 0;
	}
	return 0;
}

/* ---- the hook (record_opts.hook, --listen): the recorder's parts, read on this thread ---- */

static void hook_bpf_stats(const struct record_tick *t, uint64_t *out)
{
	probes__read_stats(t->priv, out);
}

static void call_hook(struct recorder *r, bool final)
{
	struct record_tick t;

	if (!r->o->hook)
		return;
	t = (struct record_tick){
		.ing = r->ing, .hdr = &r->hdr, .procs = r->procs, .mev = r->mev, .sym = r->sym,
		.w = r->w, .bytes_closed = r->rot ? rotate__bytes_closed(r->rot) : 0, .unwind_bytes = r->umaps ? unwmaps__bytes(r->umaps) : 0, .final = final,
		.read_bpf_stats = hook_bpf_stats, .priv = r->bpf,
	};
	r->o->hook->tick(r->o->hook->ctx, &t);
}

static int run_loop(struct recorder *r)
{
	const struct record_opts *o = r->o;
	uint64_t start = clock_ns(CLOCK_MONOTONIC), now, last_flush = start, last_status = 0, last_off = start;
	uint64_t deadline = o->duration > 0 ? start + (uint64_t)(o->duration * NSEC_PER_SEC) : 0;
	int status_line = !o->quiet && isatty(STDERR_FILENO);
	/* --max-size sees the bytes flushed: more often, so the file ends nearer the bound. */
	uint64_t flush_ns = o->max_size ? FLUSH_INTERVAL_NS / 10 : FLUSH_INTERVAL_NS;
	const struct ingest_stats *ist = ingest__stats(r->ing);
	int err, timeout;
	struct pace pace;

	pace__init(&pace, o->freq, r->unw != NULL);
	for (;;) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (stop_signal || (deadline && now >= deadline) || targets_gone(r))
			break;
		timeout = pace__timeout_ms(&pace, now, ist->views_wanted);
		if (deadline && deadline - now < (uint64_t)timeout * NSEC_PER_MSEC)
			timeout = (int)((deadline - now) / NSEC_PER_MSEC) + 1;
		/*
		 * Records come without wakeups until a quarter of the ring is
		 * full (rb_flags in bpf/maps.bpf.h): poll sleeps for the
		 * timeout, then everything waiting is drained.
		 */
		err = drain__run(&r->drain, r->rb, timeout);
		if ((!err || err == -EINTR) && !r->drain.cut)
			err = drain__run(&r->drain, r->rb, -1);
		if (err < 0 && err != -EINTR)
			return r->err ? r->err : err;
		err = ingest__sync_unwind(r->ing) ?: ingest__tick(r->ing);
		if (!err && (now = clock_ns(CLOCK_MONOTONIC)) - last_off >= OFFCPU_READ_NS) {
			err = offcpu__read(r->bpf, r->ing, now, false);
			last_off = now;
		}
		err = err && r->rot ? rotate__drop(r->rot, err) : err;	/* a waiting sample, full disk */
		/*
		 * No switch once a stop is pending: a switch that fell due while
		 * poll slept would otherwise run when SIGINT wakes it, and the
		 * recording's last file would hold only the instant between the
		 * switch and the stop (often no sample at all).
		 */
		err = err ?: (r->rot && !stop_signal ? rotate__tick(r->rot) : 0);
		if (err)
			return err;
		call_hook(r, false);
		now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_flush >= flush_ns) {
			err = r->w ? report_writer__flush(r->w) : 0;
			if (err && r->rot)
				err = rotate__drop(r->rot, err);
			if (err)
				return err;
			last_flush = now;
		}
		if (status_line && now - last_status >= STATUS_INTERVAL_NS) {
			print_status(r, now - start, 0);
			last_status = now;
		}
	}
	if (status_line)
		fprintf(stderr, "\r\033[K");
	return 0;
}

static void print_summary(struct recorder *r, const uint64_t *stats, uint64_t nbytes, double secs)
{
	char bytes[32], lost[160] = "0 lost", cmd[64] = "", where[PATH_MAX + 160], unwritten[64] = "";
	uint64_t samples = ingest__stats(r->ing)->samples, nr_unwritten = 0;
	size_t nr = proc_table__nr_sampled(r->procs);
	int st = r->cmd.status;

	if (stats[BPFSYM_STAT_LOST_SAMPLES] || stats[BPFSYM_STAT_LOST_TASK_EVENTS])
		snprintf(lost, sizeof(lost), "%llu lost (ring buffer full), %llu process events lost (ring buffer full)",
			 (unsigned long long)stats[BPFSYM_STAT_LOST_SAMPLES],
			 (unsigned long long)stats[BPFSYM_STAT_LOST_TASK_EVENTS]);
	/* The recording succeeded either way; say how the command ended if it failed. */
	if (r->o->argv && r->cmd.pid == 0) {
		if (WIFEXITED(st) && WEXITSTATUS(st))
			snprintf(cmd, sizeof(cmd), "; the command exited with status %d", WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			snprintf(cmd, sizeof(cmd), "; the command was killed by signal %d", WTERMSIG(st));
	}
	snprintf(where, sizeof(where), "'%s'", r->o->output);
	if (r->rot) {
		rotate__summary(r->rot, &samples, &nr_unwritten, &nbytes, where, sizeof(where));
		if (nr_unwritten)
			snprintf(unwritten, sizeof(unwritten), " (%llu more not written: no file)",
				 (unsigned long long)nr_unwritten);
	}
	human_bytes(nbytes, bytes, sizeof(bytes));
	fprintf(stderr, "bpfsym: %llu samples%s, %s, %zu process%s, %s written to %s in %.1f s%s\n",
		(unsigned long long)samples, unwritten, lost, nr, nr == 1 ? "" : "es", bytes, where, secs, cmd);
}

static void recorder__cleanup(struct recorder *r)
{
	ring_buffer__free(r->rb);
	rotate__free(r->rot);
	ingest__free(r->ing);
	rtmaps__free(r->rtm);
	cgpaths__free(r->cgp);
	unwmaps__free(r->umaps);
	snapshot__free(r->snap);
	probes__free(r->bpf);
	mapevents__free(r->mev);
	symbolizer__free(r->sym);
	offload__free(r->pool);		/* after its users: jobs still stuck free themselves */
	proc_table__free(r->procs);
	free(r->hint_ids);
	if (r->cgroup_fd >= 0)
		close(r->cgroup_fd);
}

/* The runtimes (any walk done here), --call-graph dwarf's unwinder: their maps.  RUN_OK or RUN_FAILED. */
static int unwind_start(struct recorder *r)
{
	r->rtm = rtmaps__start(r->bpf, r->o);
	if (r->o->call_graph != BPFSYM_USTACK_TABLES || r->o->kernel_only)
		return RUN_OK;
	r->umaps = unwmaps__start(r->bpf, r->procs, r->o->unwind_mem, r->pool);
	if (!r->umaps) {
		pr_err("bpfsym: starting the unwinder failed: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	r->unw = unwmaps__unwinder(r->umaps);
	return RUN_OK;
}

static uint32_t bpf_target_mode(enum record_target t)
{
	switch (t) {
	case RECORD_ALL:
		return BPFSYM_TARGET_ALL;
	case RECORD_CGROUP:
		return BPFSYM_TARGET_CGROUP;
	default:
		return BPFSYM_TARGET_PIDS;
	}
}

/*
 * Whether a process's mappings are followed from its first sample only
 * (maps.bpf.h), taken there with the VMA iterator from a task work where
 * the kernel has them, else from the lists the tracker keeps
 * (bpf/pend.bpf.h): for a whole system's or a container's processes,
 * most of the short-lived ones are never sampled; -p's and a command's
 * are what the user asked for, followed from their start.
 */
static bool lazy_maps(const struct record_opts *o)
{
	return o->target == RECORD_ALL || o->target == RECORD_CGROUP;
}


/* The BPF side's settings, from the command line's. */
static void probes_opts_of(const struct recorder *r, struct probes_opts *p)
{
	const struct record_opts *o = r->o;

	*p = (struct probes_opts){
		.target_mode = bpf_target_mode(o->target),
		.follow_children = o->target == RECORD_COMMAND,
		.want_kernel = !o->user_only,
		.want_user = !o->kernel_only,
		.want_interp = !o->no_interp,
		.freq = o->freq,
		.ring_size = o->mmap_pages * (uint64_t)sysconf(_SC_PAGESIZE),
		/* a command's whole process tree; -p's pids */
		.max_targets = o->target == RECORD_COMMAND ? COMMAND_MAX_TARGETS : (uint32_t)o->nr_pids,
		.cgroup_fd = o->target == RECORD_CGROUP ? r->cgroup_fd : 0,
		.ustack_mode = o->call_graph,
		.lazy_maps = lazy_maps(r->o),
		.first_sample = kfeatures__first_sample(&r->kf),
		.pend_maps = lazy_maps(r->o) && !kfeatures__first_sample(&r->kf),
		.off_cpu = o->off_cpu,
		.off_cpu_min_ns = o->off_cpu_min_ns,
		.off_cpu_states = o->off_cpu_states ? o->off_cpu_states : (1u << BPFSYM_OS_NR) - 1,
		.korc = r->kf.have & KF_KORC,
		/* A test's: the kernel unwinder checked against the kernel's (bpf/offcpu.bpf.h). */
		.korc_check = o->off_cpu && getenv("BPFSYM_KORC_CHECK") && !strcmp(getenv("BPFSYM_KORC_CHECK"), "1"),
	};
}

/*
 * What can be checked before anything is loaded: privileges, -F, -p, the
 * command; the cgroup is opened.  RUN_OK, or RUN_USAGE (one line printed).
 */
static int recorder__check(struct recorder *r)
{
	const struct record_opts *o = r->o;
	int err;

	char what[128];

	if (preflight__privileges() || preflight__perf_events() || preflight__freq(o->freq) ||
	    preflight__pids(o) ||
	    kfeatures__probe(&r->kf))
		return RUN_USAGE;
	kfeatures__describe(&r->kf, lazy_maps(o), what, sizeof(what));
	pr_debug("bpfsym: kernel: %s\n", what);
	preflight__warn_optional_caps(o);
	if (o->argv) {
		err = workload__check(o->argv[0]);
		if (err) {
			pr_err("bpfsym: cannot execute '%s': %s\n", o->argv[0], strerror(-err));
			return RUN_USAGE;
		}
	}
	if (o->target == RECORD_CGROUP) {
		r->cgroup_fd = cgroup__open(o->cgroup, r->cgroup_rel, sizeof(r->cgroup_rel));
		if (r->cgroup_fd < 0)
			return RUN_USAGE;
	}
	/* The output now, before seconds of loading: an existing name is refused at once. */
	if (output__open(&r->out, o->output, o->force, o->rotate.mode != ROTATE_OFF))
		return RUN_FAILED;
	return RUN_OK;
}

/*
 * The userspace side: signals, the mapping model, the symbolizer (kallsyms
 * read now), the mapping replayer, the --map-anon files.  RUN_OK, or the
 * exit status (the reason printed).
 */
static int recorder__open(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct symbolizer_opts sopts = { .no_kernel = o->user_only, .kernel_async = 1 };
	struct sigaction sa = { .sa_handler = on_signal };

	libbpf_set_print(libbpf_print);
	/* Without SA_RESTART, poll() returns at once on Ctrl-C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rotate__catch_signal();

	r->procs = proc_table__new(0);
	if (!r->procs) {
		pr_err("bpfsym: out of memory\n");
		return RUN_FAILED;
	}
	sopts.procs = r->procs;	/* files of exited processes: through others of their namespace */
	/* No file work on this thread, which drains the ring buffer: a hung file must not stop it. */
	r->pool = offload__new(&(struct offload_opts){ .thread_start = privdrop__file_worker });
	if (!r->pool) {
		pr_err("bpfsym: out of memory\n");
		return RUN_FAILED;
	}
	sopts.offload = r->pool;
	r->sym = symbolizer__new(&sopts);
	if (!r->sym) {
		pr_err("bpfsym: starting the symbolizer failed: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	r->mev = mapevents__new(r->procs, r->sym);
	if (!r->mev) {
		pr_err("bpfsym: out of memory\n");
		return RUN_FAILED;
	}
	if (anonhints__load(r->o, r->sym, &r->hint_ids))
		return RUN_USAGE;
	return RUN_OK;
}

/*
 * The BPF side loaded and given its targets (a command is forked, stopped
 * before exec, to be one), and the ring-buffer reader made.  RUN_OK or
 * RUN_FAILED (printed).
 */
static int recorder__load(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct probes_opts popts;
	size_t i;
	int err;

	probes_opts_of(r, &popts);
	r->bpf = probes__load(&popts);
	if (!r->bpf || unwind_start(r))
		return RUN_FAILED;
	for (i = 0; i < o->nr_pids; i++)
		if (probes__add_target(r->bpf, o->pids[i]))
			return RUN_FAILED;
	if (o->argv) {
		err = workload__prepare(&r->cmd, o->argv);
		if (err) {
			pr_err("bpfsym: starting '%s' failed: %s\n", o->argv[0], strerror(-err));
			return RUN_FAILED;
		}
		if (o->target == RECORD_COMMAND && probes__add_target(r->bpf, (uint32_t)r->cmd.pid))
			return RUN_FAILED;
	}
	r->rb = ring_buffer__new(probes__events_fd(r->bpf), on_record, r, NULL);
	if (!r->rb) {
		pr_err("bpfsym: creating the ring buffer reader failed: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	return RUN_OK;
}

/*
 * Attach, then create the report.  Mapping events first, then the
 * snapshot of what already exists: a change between the two is in the ring
 * buffer, and replaying it over the snapshot converges (each record sets
 * the state of its range).  A command has nothing to snapshot: it has not
 * exec'd yet.  The sampler last, so every sample finds its mappings; the
 * report names the event it got.  RUN_OK, or the exit status (printed).
 */
static int recorder__attach(struct recorder *r)
{
	const struct record_opts *o = r->o;
	const char *event = o->cpu_clock ? "cpu-clock" : "cycles";
	size_t n;

	if (probes__attach_tracker(r->bpf))
		return RUN_FAILED;
	if (o->target != RECORD_COMMAND && !o->kernel_only) {
		r->snap_filter = (struct snapshot_filter){
			.mode = o->target == RECORD_PIDS ? SNAPSHOT_PIDS :
				o->target == RECORD_CGROUP ? SNAPSHOT_CGROUP : SNAPSHOT_ALL,
			.pids = o->pids, .nr_pids = o->nr_pids, .cgroup = r->cgroup_rel,
		};
		r->snap = snapshot__new(&r->snap_filter, r->mev);
		if (!r->snap) {
			pr_err("bpfsym: out of memory\n");
			return RUN_FAILED;
		}
		if (probes__snapshot(r->bpf, snapshot__record, r->snap))
			return RUN_FAILED;
	}
	if (anonhints__attach(r->o, r->procs, r->hint_ids))
		return RUN_USAGE;
	if (r->snap) {
		snapshot__seed_fresh(r->snap, r->procs, r->bpf);
		if (r->umaps) {
			const uint32_t *pids = snapshot__pids(r->snap, &n);

			unwmaps__first_views(r->umaps, pids, n, UNWIND_START_WAIT_MS);
		}
		rtmaps__first(r->rtm, r->procs, snapshot__pids(r->snap, &n), n, UNWIND_START_WAIT_MS);
	}
	/* kallsyms was read beside the loading: this waits for it, if need be. */
	if (!o->user_only && symbolizer__kernel_restricted(r->sym))
		pr_warn("bpfsym: warning: /proc/kallsyms hides kernel addresses (kernel.kptr_restrict, kernel.perf_event_paranoid%s): "
			"kernel frames stay unnamed\n", preflight__has_cap(CAP_SYSLOG) ? "" : "; grant CAP_SYSLOG");
	record_header__fill(&r->hdr, r->o, r->sym ? symbolizer__text_addr(r->sym) : 0, event);
	kfeatures__describe(&r->kf, lazy_maps(o), r->hdr.kfeatures, sizeof(r->hdr.kfeatures));
	if (probes__attach_sampler(r->bpf, o->freq, o->kernel_only, &event, o->cpus, o->nr_cpus) ||
	    probes__attach_offcpu(r->bpf))
		return RUN_FAILED;
	snprintf(r->hdr.event, sizeof(r->hdr.event), "%s", event);
	r->w = output__writer(&r->out, &r->hdr);
	if (!r->w) {
		pr_err("bpfsym: cannot create '%s': %s\n", o->output, strerror(errno));
		return RUN_FAILED;
	}
	return RUN_OK;
}

static void fill_end(struct recorder *r, const uint64_t *stats);

/* rotate's view of the recording's counters: the END fields as of now. */
static void rotation_counters(void *ctx, struct rpt_header *h)
{
	struct recorder *r = ctx;
	uint64_t stats[BPFSYM_STAT_MAX];

	probes__read_stats(r->bpf, stats);
	fill_end(r, stats);
	*h = r->hdr;
}

/* rotate's drain before a switch: what the ring buffer holds goes to the old file. */
static int rotation_drain(void *ctx)
{
	struct recorder *r = ctx;
	int err = drain__run(&r->drain, r->rb, -1);

	if (err < 0 && err != -EINTR)
		return r->err ? r->err : err;
	return offcpu__read(r->bpf, r->ing, clock_ns(CLOCK_MONOTONIC), false);
}

/* --switch-output: rotate takes over the file just opened.  0 or -ENOMEM. */
static int rotation_start(struct recorder *r)
{
	r->rot = rotate__new(&r->o->rotate, &(struct rotate_env){
		.out = &r->out, .w = &r->w, .ing = r->ing, .hdr = &r->hdr,
		.counters = rotation_counters, .drain = rotation_drain, .ctx = r,
	});
	return r->rot ? 0 : -ENOMEM;
}

/* Nothing was recorded: no file is left behind. */
static void discard_output(struct recorder *r)
{
	report_writer__abort(r->w);
	r->w = NULL;
	output__discard(&r->out);
}

/*
 * The ingest over the model, the symbolizer and the report, then the
 * command let exec.  RUN_OK, or the exit status (printed, the report
 * removed).
 */
static int recorder__start(struct recorder *r)
{
	const struct record_opts *o = r->o;
	bool pids = o->target == RECORD_PIDS;
	int err;

	/* Without a cgroup v2 hierarchy samples keep bare ids: not an error. */
	r->cgp = cgpaths__new(NULL);
	r->ing = ingest__new(&(struct ingest_opts){
		.procs = r->procs, .mev = r->mev, .sym = r->sym, .w = r->w,
		.start_mono_ns = r->hdr.start_mono_ns, .kernel_only = o->kernel_only,
		.pids = pids ? o->pids : NULL, .nr_pids = pids ? o->nr_pids : 0,
		.unw = r->unw, .cgroups = r->cgp, .runtimes = rtmaps__runtimes(r->rtm),
	});
	if (!r->ing) {
		pr_err("bpfsym: out of memory\n");
		discard_output(r);
		return RUN_FAILED;
	}
	if (o->rotate.mode != ROTATE_OFF && rotation_start(r)) {
		pr_err("bpfsym: out of memory\n");
		discard_output(r);
		return RUN_FAILED;
	}
	r->t0 = clock_ns(CLOCK_MONOTONIC);
	if (o->argv) {
		err = workload__start(&r->cmd);
		if (err) {
			pr_err("bpfsym: cannot execute '%s': %s\n", o->argv[0], strerror(-err));
			discard_output(r);
			return RUN_USAGE;
		}
	}
	return RUN_OK;
}

/* What the counters say went missing, and the details with -v. */
static void warn_counts(const struct recorder *r, const uint64_t *stats)
{
	const struct mapevents_stats *mst = mapevents__stats(r->mev);
	const struct ingest_stats *ist = ingest__stats(r->ing);

	/* The ring buffer was drained after sampling stopped: all it held was read. */
	if (stats[BPFSYM_STAT_SAMPLES] > ist->symbolized + ist->bad)
		pr_warn("bpfsym: %llu of the %llu samples in the ring buffer were not read\n",
			(unsigned long long)(stats[BPFSYM_STAT_SAMPLES] - ist->symbolized - ist->bad),
			(unsigned long long)stats[BPFSYM_STAT_SAMPLES]);
	if (ist->bad || mst->bad)
		pr_warn("bpfsym: %llu malformed ring-buffer records skipped\n",
			(unsigned long long)(ist->bad + mst->bad));
	inputcap__log_counts();
	dinfod__log_counts();
	rtmaps__log_counts(r->rtm, stats);
	pr_debug("bpfsym: mapping events: %llu map, %llu unmap, %llu fork, %llu exec, %llu exit; "
		 "%llu model misses, %llu pin failures, %llu map errors, %llu busy VMA lookups\n",
		 (unsigned long long)mst->maps, (unsigned long long)mst->unmaps,
		 (unsigned long long)mst->forks, (unsigned long long)mst->execs,
		 (unsigned long long)mst->exits, (unsigned long long)ist->model_misses,
		 (unsigned long long)mst->pin_errors, (unsigned long long)mst->map_errors,
		 (unsigned long long)stats[BPFSYM_STAT_VMA_BUSY]);
	if (lazy_maps(r->o))
		pr_debug("bpfsym: first samples: %llu processes taken whole (%llu resync records), "
			 "%llu cut short, %llu sent before their mappings, "
			 "%llu samples dropped around a first sample's work\n",
			 (unsigned long long)stats[BPFSYM_STAT_FIRST_SAMPLE],
			 (unsigned long long)mst->resyncs,
			 (unsigned long long)stats[BPFSYM_STAT_FIRST_TRUNC],
			 (unsigned long long)stats[BPFSYM_STAT_FIRST_DIRECT],
			 (unsigned long long)stats[BPFSYM_STAT_FIRST_LOST]);
	if (r->umaps)
		unwmaps__log_views(r->umaps, ist->views_wanted);
	record__log_no_answer(r->pool);
	record__log_offcpu(stats, ist);
	pr_debug("bpfsym: samples: %llu put in the ring buffer, %llu read, %llu written\n",
		 (unsigned long long)stats[BPFSYM_STAT_SAMPLES], (unsigned long long)ist->symbolized,
		 (unsigned long long)ist->samples);
	if (r->cgp) {
		const struct cgpaths_stats *c = cgpaths__stats(r->cgp);

		pr_debug("bpfsym: cgroup paths: %llu misses, %llu from /proc, %llu by %llu walks, "
			 "%zu cached, %llu evicted\n", (unsigned long long)c->misses,
			 (unsigned long long)c->by_proc, (unsigned long long)c->by_walk,
			 (unsigned long long)c->walks, c->cached, (unsigned long long)c->evictions);
	}
}

/* The END record's fields: ingest's counts, the BPF side's counters. */
static void fill_end(struct recorder *r, const uint64_t *stats)
{
	struct rpt_header *h = &r->hdr;

	h->end_wall_ns = clock_ns(CLOCK_REALTIME);
	ingest__fill_header(r->ing, h);
	h->lost_samples = stats[BPFSYM_STAT_LOST_SAMPLES];
	h->lost_events = stats[BPFSYM_STAT_LOST_TASK_EVENTS];
	h->idle = stats[BPFSYM_STAT_IDLE];
	h->lost_children = stats[BPFSYM_STAT_TARGETS_FULL];
	h->missed_vma_busy = stats[BPFSYM_STAT_VMA_BUSY];
	h->missed_syscalls = stats[BPFSYM_STAT_PENDING_FULL];
	if (!r->o->kernel_only)
		h->call_graph = r->o->call_graph == BPFSYM_USTACK_TABLES ? RPT_CG_DWARF :
				r->o->call_graph == BPFSYM_USTACK_FP ? RPT_CG_FP : RPT_CG_UNKNOWN;
	if (r->umaps)
		unwmaps__fill_end(r->umaps, h);
	offcpu__fill_end(stats, h);
}

/* Write the END record and close; then, and only then, the summary.  RUN_OK or RUN_FAILED. */
static int recorder__finish(struct recorder *r)
{
	uint64_t stats[BPFSYM_STAT_MAX], nbytes = 0;
	double secs = 0;
	int err;

	probes__read_stats(r->bpf, stats);
	warn_counts(r, stats);
	fill_end(r, stats);
	if (r->rot) {
		/* Each file's END and name are rotate's; the summary is the recording's. */
		if (rotate__finish(r->rot, &r->hdr))
			return RUN_FAILED;
		print_summary(r, stats, 0, (clock_ns(CLOCK_MONOTONIC) - r->t0) / (double)NSEC_PER_SEC);
		return RUN_OK;
	}
	/* Flushed first, so the summary counts the bytes really written. */
	err = report_writer__flush(r->w);
	if (err) {
		report_writer__abort(r->w);
	} else {
		nbytes = report_writer__bytes(r->w);
		secs = (clock_ns(CLOCK_MONOTONIC) - r->t0) / (double)NSEC_PER_SEC;
		err = report_writer__close(r->w, &r->hdr);	/* frees it, whatever happens */
	}
	r->w = NULL;
	if (err) {
		pr_err("bpfsym: writing '%s' failed: %s\n", r->o->output, strerror(-err));
		return RUN_FAILED;
	}
	/* Only now: a summary before a failing close (fsync's EIO) would claim a good file. */
	print_summary(r, stats, nbytes, secs);
	return RUN_OK;
}

/* Record until told to stop, then drain what is left and finish the report. */
static int recorder__record(struct recorder *r)
{
	int err = run_loop(r);

	/* Stop sampling before draining, so the drain ends. */
	probes__detach_sampler(r->bpf);
	if (!err && !r->err) {
		err = ring_buffer__consume(r->rb);
		err = err < 0 ? (r->err ? r->err : err) : 0;
		err = err ?: offcpu__read(r->bpf, r->ing, clock_ns(CLOCK_MONOTONIC), true);
	}
	/* Fetches under way end at their next progress call (~1 s): their frames are not waited for. */
	dinfod__stop();
	stop_signal = 0;	/* a second signal ends the wait for slow files' names (2 s at most) */
	if (!err && !r->err && (err = ingest__flush_deferred(r->ing, 2 * NSEC_PER_SEC, &stop_signal)) && r->rot)
		err = rotate__drop(r->rot, err);
	call_hook(r, true);
	if (err || r->err) {
		err = r->err ? r->err : err;
		pr_err("bpfsym: writing '%s' failed: %s\n", r->o->output, strerror(-err));
		report_writer__abort(r->w);
		r->w = NULL;
		return RUN_FAILED;
	}
	return recorder__finish(r);
}

int record__run(const struct record_opts *o)
{
	struct recorder r = { .o = o, .cmd = { .go_fd = -1, .err_fd = -1 }, .cgroup_fd = -1,
			      .out = { .dfd = -1, .f = { .fd = -1 } } };
	int ret;

	ret = recorder__check(&r);
	if (ret == RUN_OK)
		ret = recorder__open(&r);
	if (ret == RUN_OK)
		ret = recorder__load(&r);
	if (ret == RUN_OK)
		ret = recorder__attach(&r);
	if (ret == RUN_OK)
		ret = recorder__start(&r);
	/* Loaded, attached, the command started: the rest parses what others wrote. */
	if (ret == RUN_OK)
		privdrop__recorder(o->rotate.mode != ROTATE_OFF);
	if (ret == RUN_OK)
		ret = recorder__record(&r);
	if (r.w)
		report_writer__abort(r.w);
	/* Created at the start, never written (loading failed): not left behind. */
	if (!r.out.written)
		output__discard(&r.out);
	output__close(&r.out);
	/* A command still running (duration, signal, failure) is ended, as perf does. */
	workload__stop(&r.cmd);
	recorder__cleanup(&r);
	return ret;
}
