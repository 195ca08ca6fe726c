/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record: the loader.  Loads the BPF sampler, records, writes the report. */
#ifndef BPFSYM_RECORD_H
#define BPFSYM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hints.h"

struct ingest;
struct mapevents;
struct proc_table;
struct report_writer;
struct rpt_header;
struct symbolizer;

/*
 * What the recorder shows a hook (record_opts.hook), on the recorder thread
 * and for the length of one call: the parts below ingest, to read, and
 * @ing, whose taps the hook may add and remove (ingest__add_writer).
 * Nothing here may be kept past the call or touched from another thread.
 */
struct record_tick {
	struct ingest *ing;
	const struct rpt_header *hdr;	/* the recording's: event, freq, start */
	const struct proc_table *procs;
	const struct mapevents *mev;
	const struct symbolizer *sym;
	const struct report_writer *w;	/* the file's writer; NULL: none */
	uint64_t bytes_closed;		/* bytes of the files rotation closed before w */
	uint64_t unwind_bytes;		/* BPF map memory of the call-frame tables */
	bool final;			/* sampling stopped, the ring buffer drained */
	/* The BPF side's counters (BPFSYM_STAT_MAX of them): a syscall each, so on demand. */
	void (*read_bpf_stats)(const struct record_tick *t, uint64_t *out);
	const void *priv;		/* read_bpf_stats's */
};

/*
 * Called after each batch of ring-buffer records (at most ~100 ms apart)
 * and once more with tick->final set before the END record is written:
 * the last chance to remove taps.  A hook cannot fail the recording; it
 * must return quickly (it holds up the ring buffer's reader).
 */
struct record_hook {
	void (*tick)(void *ctx, const struct record_tick *t);
	void *ctx;
};

enum record_target {
	RECORD_ALL = 0,		/* every process */
	RECORD_PIDS = 1,	/* pids[] and all their threads */
	RECORD_COMMAND = 2,	/* argv[] and everything it forks */
	RECORD_CGROUP = 3,	/* every task in cgroup (v2) and below it */
};

/* --switch-output: when the recording moves on to a new file (record/rotate.h). */
enum rotate_mode {
	ROTATE_OFF = 0,
	ROTATE_SIGNAL = 1,	/* at each SIGUSR2 */
	ROTATE_SIZE = 2,	/* when the file has this many bytes */
	ROTATE_TIME = 3,	/* when the file is this old */
};

/* The smallest --switch-output SIZE and TIME: smaller makes files of a few samples. */
#define ROTATE_MIN_SIZE		(64ull << 10)
#define ROTATE_MIN_TIME_NS	1000000000ull

struct rotate_opts {
	enum rotate_mode mode;
	uint64_t size;			/* ROTATE_SIZE: bytes */
	uint64_t time_ns;		/* ROTATE_TIME */
	uint32_t max_files;		/* --switch-max-files: rotated files kept; 0: all */
};

struct record_opts {
	enum record_target target;
	const uint32_t *pids;
	size_t nr_pids;
	/*
	 * NULL-terminated.  RECORD_COMMAND: the target; RECORD_ALL or
	 * RECORD_CGROUP: run it and record until it exits (perf's -a -- COMMAND).
	 */
	char *const *argv;
	const char *cgroup;		/* RECORD_CGROUP: a cgroup v2 path */
	uint32_t freq;			/* Hz per CPU */
	double duration;		/* seconds; 0: until a signal or the command exits */
	const char *output;
	uint64_t mmap_pages;		/* -m: ring-buffer pages; 0: sized by freq */
	const struct anon_hint *hints;	/* --map-anon */
	size_t nr_hints;
	bool user_only, kernel_only;
	bool no_interp;			/* --no-interp: native frames only, no interpreter frames */
	bool quiet, verbose;
	bool force;			/* -f: an existing OUTPUT is replaced (record/output.h) */
	uint32_t call_graph;		/* enum bpfsym_ustack_mode; the default: tables */
	uint64_t unwind_mem;		/* --unwind-mem: bytes of tables; 0: the default */
	struct rotate_opts rotate;	/* --switch-output, --switch-max-files */
	const bool *cpus;		/* -C: sample CPU i where cpus[i], i < nr_cpus; NULL: all */
	size_t nr_cpus;
	bool cpu_clock;			/* -e cpu-clock: the software clock even with a PMU */
	uint64_t max_size;		/* --max-size: stop once the file has this many bytes; 0: never */
	/* --off-cpu (issue 28): time off the CPU, by stack and state, beside the samples. */
	bool off_cpu;
	uint64_t off_cpu_min_ns;	/* --off-cpu-thresh: shorter intervals dropped, counted */
	uint32_t off_cpu_states;	/* --off-cpu-state: 1 << enum bpfsym_offstate kept; 0: all */
	const struct record_hook *hook;	/* NULL: none (--listen sets one) */
};

/*
 * Record per @o until the duration ends, SIGINT/SIGTERM arrive, the command
 * exits, or every target process is gone; then write the END record and
 * print the summary line.  Returns the process exit status: 0 success,
 * 1 runtime failure, 2 usage or permission error (one line already printed).
 */
int record__run(const struct record_opts *o);

#endif /* BPFSYM_RECORD_H */
