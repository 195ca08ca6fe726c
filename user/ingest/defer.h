/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * defer: samples that wait for their files' names.  A file opened or read
 * off the recorder's thread (symbolizer.h, offload) that has not answered
 * within the symbolizer's 100 ms leaves its frames unnamed ("file did not
 * answer"); the recording format keeps a frame's first names, so a sample
 * written now would keep its frames unnamed in that file for good.  A
 * slow file is not a hung one: such a sample is kept here, in a bounded
 * FIFO, and written once its files answered, or their jobs look hung
 * (their workers used no CPU for a while), or it waited too long, or the
 * FIFO is full, or the recording ends.  Used by ingest.c only.
 */
#ifndef BPFSYM_DEFER_H
#define BPFSYM_DEFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfsym.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"

/*
 * A sample's frame, symbolized once for every writer.  An interpreter's
 * (kind RPT_FRAME_INTERP) is named by its runtime (runtime/runtime.h):
 * sf.sym the function, sf.module its source file (ingest's), sf.offset
 * the line; it keeps what the runtime is asked again with while its read
 * runs.
 */
struct named_frame {
	struct sym_frame sf;
	uint64_t addr;			/* as sampled (interp: the code address, slot 0's low bits) */
	uint32_t kind;			/* enum rpt_frame_kind */
	uint32_t fk;			/* interp: its frame kind (include/bpfsym.h) */
	bool rt_wait;			/* interp: the runtime's read still runs (-EAGAIN) */
	uint64_t slot1;			/* interp: its second slot */
	uint64_t pstart;		/* interp: the process's start time */
};

/*
 * Ask the runtime again for interpreter frame @f (rt_wait) of process
 * @pid: renamed in place; whether it still waits.  ingest's.
 */
typedef bool (*defer_rt_retry_fn)(void *ctx, uint32_t pid, struct named_frame *f);

/* A sample kept: what ingest writes of it, with copies of its strings. */
struct deferred {
	struct deferred *next;
	struct rpt_sample s;		/* comm points to comm below; stack and time: none yet */
	uint64_t ts;			/* as sampled */
	uint64_t since;			/* CLOCK_MONOTONIC: when it was kept */
	char comm[BPFSYM_COMM_LEN + 1];
	char *cgpath;			/* its cgroup's path; NULL: unknown */
	size_t bytes;			/* what it takes, for the cap */
	uint32_t nr;			/* frames, leaf first */
	struct named_frame frames[];
};

struct defer_opts {
	uint64_t stall_ns;	/* a job whose worker used no CPU this long is hung; 0: 5 s */
	uint64_t max_ns;	/* no sample waits longer; 0: 60 s */
	size_t max_samples;	/* kept at once; 0: 65536 */
	size_t max_bytes;	/* their bytes; 0: 64 MiB */
	defer_rt_retry_fn rt_retry;	/* frames waiting for a runtime (NULL: none ever do) */
	void *rt_ctx;
};

struct defer;

/* A FIFO over @sym (which outlives it).  NULL on ENOMEM. */
struct defer *defer__new(struct symbolizer *sym, const struct defer_opts *o);

/* Free every sample kept, unwritten (their module holds released).  NULL is a no-op. */
void defer__free(struct defer *d);

/*
 * Whether the sample of process @pid whose @nr frames are @f waits for a
 * file: one of its frames says RPT_FILE_NO_ANSWER, its file's job still
 * runs (taken if it ended: the frame is then named in place) and does not
 * look hung; or for a runtime: an interpreter frame's read still runs
 * (asked again through opts.rt_retry).
 */
bool defer__waits(struct defer *d, uint32_t pid, struct named_frame *f, uint32_t nr);

/*
 * Keep sample @s taken at @ts, of cgroup path @cgpath (NULL: unknown),
 * whose @nr frames are @f: copied, their modules held.  0, or -ENOMEM
 * (the caller writes it now, as it is).
 */
int defer__push(struct defer *d, const struct rpt_sample *s, uint64_t ts, const char *cgpath,
		const struct named_frame *f, uint32_t nr);

/* Why a kept sample is let go. */
enum defer_why {
	DEFER_ANSWERED,		/* its files answered: every frame named as it can be */
	DEFER_GAVE_UP,		/* a file still did not answer: hung, waited too long, the end */
	DEFER_OVER_CAP,		/* the oldest, pushed out by the caps; a file still did not answer */
};

/*
 * What is done with each sample let go (ingest writes it): 0 or -errno.
 * The sample is freed after, whatever it returns.
 */
typedef int (*defer_write_fn)(void *ctx, struct deferred *e, enum defer_why why);

/*
 * Name the kept samples' waiting frames again, oldest first, and let go
 * through @write those that no longer wait: their files answered, or look
 * hung (no worker CPU for @stall_ns; 0: the options'), or they waited the
 * options' max; with @all, every one.  The first error of @write stops
 * the pass and is returned; else 0.
 */
int defer__pass(struct defer *d, uint64_t stall_ns, bool all, defer_write_fn write, void *ctx);

/*
 * Let go the oldest samples, named as they can be now, while more than
 * the caps are kept.  0, or @write's first error.
 */
int defer__trim(struct defer *d, defer_write_fn write, void *ctx);

/* Samples kept now. */
size_t defer__nr(const struct defer *d);

#endif /* BPFSYM_DEFER_H */
