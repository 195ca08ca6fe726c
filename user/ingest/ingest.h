/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ingest: a recording's records, one at a time, in the order the ring
 * buffer gives them (include/bpfsym.h).  Mapping and process records go to
 * the mapping model (mapevents.c); a sample is symbolized against the
 * model of that moment and written to the report with the ids the writer
 * gives its modules, frames and stack.  The counters a recording ends with
 * (samples written, records skipped, processes the model missed, -p
 * targets still alive) are kept here as data.  No libbpf here: records can
 * come from the ring buffer, a file or a test; the loader (record.c) only
 * hands them over.
 */
#ifndef BPFSYM_INGEST_H
#define BPFSYM_INGEST_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/mapevents.h"
#include "model/cgpaths.h"
#include "model/procmap.h"
#include "bpfsym.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwinder.h"

/* What an ingest works with: borrowed, all of it, and kept by the caller. */
struct ingest_opts {
	struct proc_table *procs;	/* the mapping model */
	struct mapevents *mev;		/* replays mapping and process records into procs */
	struct symbolizer *sym;
	struct report_writer *w;	/* the recording's file (NULL: none yet); ingest__set_writer */
	/*
	 * The time base of samples while there is no writer; each writer's
	 * samples are on its own header's start_mono_ns (a rotated file's,
	 * a tap's window).
	 */
	uint64_t start_mono_ns;
	/*
	 * No user frames are recorded: the mappings of a process the model
	 * missed are not read from /proc.
	 */
	bool kernel_only;
	const uint32_t *pids;		/* processes whose exit is watched (-p), nr_pids of them */
	size_t nr_pids;
	/*
	 * The BPF unwinder's tables and views (NULL: none): processes whose
	 * mappings change are noted, and their views rewritten by
	 * ingest__sync_unwind().
	 */
	struct unwinder *unw;
	/* Sampled cgroup ids -> paths, each file's CGROUP records (NULL: ids only). */
	struct cgpaths *cgroups;
	/*
	 * A sample with a frame whose file has not answered yet (its open or
	 * read still runs on the symbolizer's offload pool) waits for it,
	 * kept (up to 65536 samples, 64 MiB), rather than be written with
	 * that frame unnamed for good: until the file answers, or its job
	 * looks hung (its worker used no CPU for defer_stall_ns; 0: 5 s), or
	 * it waited defer_max_ns (0: 60 s).  Tests shorten them.
	 */
	uint64_t defer_stall_ns, defer_max_ns;
	/*
	 * Who names interpreter frames, by frame kind (runtime/runtime.h;
	 * NULL: nobody, every one a miss, "not supported").  A runtime's
	 * read still running keeps the sample waiting as a slow file does;
	 * the runtimes are told when a process leaves the model.
	 */
	struct runtimes *runtimes;
};

struct ingest_stats {
	uint64_t samples;		/* samples written to the file's writer (opts.w) */
	/*
	 * Samples named and handed to the writers, whether a file took them
	 * or not (none then); those kept waiting for a file are not yet.
	 */
	uint64_t symbolized;
	uint64_t deferred;		/* samples that waited for a file that had not answered */
	uint64_t deferred_unnamed;	/* ...written with a frame still unanswered (hung, 60 s, caps, end) */
	uint64_t deferred_over_cap;	/* ...of which pushed out by the caps */
	uint64_t bad;			/* malformed records skipped here (mapevents counts its own) */
	uint64_t model_misses;		/* samples of processes the model did not know */
	/*
	 * MAP and UNMAP records the tracker's fresh views did not take whole
	 * (a file without a table yet, a process with a view of ours...):
	 * each makes us write a view before the next sample.
	 */
	uint64_t views_wanted;
	size_t pids_alive;		/* of opts.pids, those not known to have exited */
	uint64_t uend[BPFSYM_UEND_MAX];	/* samples by why their user stack ended */
	/*
	 * Interpreter frames of the samples written, by what came of them,
	 * and user sides cut at a frame that could not be decoded (enum
	 * rpt_interp).
	 */
	uint64_t interp[RPT_IC__NR];
	/*
	 * Off-CPU (enum rpt_offcpu_count): OFFCPU records written to the
	 * file and their ns; sums whose stack was not kept (lost).
	 */
	uint64_t offcpu[RPT_OC__NR];
};

struct ingest;
struct runtimes;

/*
 * An ingest over @o's model, replayer, symbolizer and writer (which may be
 * NULL), which must outlive it.  NULL + errno (EINVAL: one of them
 * missing; ENOMEM).
 */
struct ingest *ingest__new(const struct ingest_opts *o);

/* NULL is a no-op.  Frees nothing it was given. */
void ingest__free(struct ingest *in);

/*
 * Take one ring-buffer record of @len bytes at @rec.  A sample is
 * symbolized and written (or kept until its files or runtimes answer:
 * ingest__tick); its user side's slots are decoded frame by frame
 * (include/bpfsym.h), a frame of a kind not known or cut short ending it
 * there (counted in stats.interp);
 * any other record goes to the mapping model; the
 * EXIT of a watched pid is counted.  A malformed record is counted and
 * skipped.  0, or -errno when the report cannot be written (or memory ran
 * out): the report is then unusable and the recording should stop.
 */
int ingest__record(struct ingest *in, const void *rec, size_t len);

/*
 * Watched pid @pid is gone, by another word than its EXIT record (which a
 * full ring buffer can lose): the loader asked the kernel.  Idempotent.
 */
void ingest__pid_gone(struct ingest *in, uint32_t pid);

/* Whether watched pid @pid is known to have exited (false for a pid not watched). */
bool ingest__pid_is_gone(const struct ingest *in, uint32_t pid);

/*
 * Rewrite the unwinder's view of every process whose mappings changed
 * since the last call (exited ones: dropped).  ingest__record calls it
 * before a sample that follows such changes; call it after each batch of
 * records too (a batch may end with them).  0, or -ENOMEM.
 */
int ingest__sync_unwind(struct ingest *in);

/*
 * Write the samples kept waiting for their files (ingest_opts) whose files
 * have answered, or look hung, or that waited long enough.  It never
 * waits for a job still running; a file that answered its open gets its
 * symbols' read started, waited for as a sample's would be (100 ms).
 * Call it after each batch of records.  0, or -errno as ingest__record.
 */
int ingest__tick(struct ingest *in);

/*
 * The recording ends: wait for the files samples are kept for, at most
 * @wait_ns in all and only while a job's worker moves (one still for
 * 1 s is taken as hung), and until *@cancel (may be NULL) becomes
 * non-zero; then write every sample kept, named as far as it can be.
 * Call it before the last file's END.  0, or -errno as ingest__record.
 */
int ingest__flush_deferred(struct ingest *in, uint64_t wait_ns, const volatile sig_atomic_t *cancel);

/* Taps a recording can have at once (ingest__add_writer). */
#define INGEST_MAX_TAPS 8

/*
 * Send samples from now on to @w (NULL: to no file) instead of the writer
 * before, which the caller closes: rotation, or a file that could not be
 * written.  Ids are the writer's, so the new file is self-contained: each
 * module, frame and stack is written again at its first use there.  0.
 */
int ingest__set_writer(struct ingest *in, struct report_writer *w);

/*
 * Also send every sample from now on to @w, a tap (say the window of a
 * pull request), until ingest__remove_writer.  A tap's write error stops
 * that tap only, never the recording.  0, -EINVAL (@w NULL), -ENOSPC
 * (INGEST_MAX_TAPS taps already).
 */
int ingest__add_writer(struct ingest *in, struct report_writer *w);

/*
 * Stop sending samples to tap @w (which the caller then closes).  0, the
 * first write error the tap had (-errno), or -ENOENT (@w is no tap).
 */
int ingest__remove_writer(struct ingest *in, struct report_writer *w);

/*
 * Off-CPU time (issue 28): @ns off the CPU in @count intervals, summed in
 * BPF under (@key, @kkey) since the last call for them, read at @ts
 * (CLOCK_MONOTONIC ns): an OFFCPU record to every writer with the stack
 * the off-CPU stack record sent under @key carries, below the kernel
 * stack the one sent under @kkey carries (a switch-in's, bpf/korc.bpf.h;
 * 0: none, @key's record has the kernel's side).  A key whose stack is
 * not kept (lost, or let go) is counted (stats.offcpu[RPT_OC_LOST]).  0,
 * or -errno as ingest__record.
 */
int ingest__offcpu(struct ingest *in, uint64_t key, uint64_t kkey, uint64_t ns, uint64_t count, uint64_t ts);

/*
 * Up to @max keys whose stacks ingest let go since the last call, into
 * @keys, taken from its list: BPF must forget it sent them (its seen set),
 * so that their stacks are sent again.  How many.
 */
size_t ingest__offcpu_forgotten(struct ingest *in, uint64_t *keys, size_t max);

/* The counters so far, updated in place by each later call on @in. */
const struct ingest_stats *ingest__stats(const struct ingest *in);

/*
 * The END record's counts that ingest knows: samples written, processes
 * sampled, malformed records skipped (here and by mapevents).  The other
 * END fields of @h are left alone.
 */
void ingest__fill_header(const struct ingest *in, struct rpt_header *h);

#endif /* BPFSYM_INGEST_H */
