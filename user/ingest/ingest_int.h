/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ingest_int: internal to ingest.c (the records' dispatch),
 * ingest_sample.c (a sample's slots decoded into frames and named) and
 * ingest_out.c (a named sample to every writer).
 */
#ifndef BPFSYM_INGEST_INT_H
#define BPFSYM_INGEST_INT_H

#include "base/htab.h"
#include "ingest/defer.h"
#include "ingest/ingest.h"

/* A module's writer id, and the identity the writer gave it for. */
struct mod_memo {
	const struct sym_module *m;	/* NULL: a free slot */
	struct rpt_module seen;
	uint32_t id;
};

/*
 * A writer samples go to, with its own module memo (ids are per writer).
 * out[0] is the recording's file; out[1..] are taps (ingest__add_writer).
 */
struct ingest_out {
	struct report_writer *w;	/* NULL: a free slot (out[0]: no file now) */
	uint64_t base;			/* its samples' time base: its header's start_mono_ns */
	struct mod_memo *memo;		/* open addressing by module pointer, under half full */
	size_t nr_memo, cap_memo;	/* cap_memo: 0 or a power of two */
	uint64_t memo_forgets;		/* the writer's forgets when the memo started */
	int err;			/* taps: the first error; the tap gets nothing more */
};

/*
 * Interpreters' source files as modules (RPT_MOD_SOURCE), one per (file
 * string, runtime): the runtime interns its file names, so the pointer is
 * the identity.  Alive as long as the ingest: kept samples point to them.
 */
struct src_mods {
	struct htab tab;		/* hash of (file, runtime) -> index + 1 */
	struct sym_module **v;
	size_t nr, cap;
};

/* Source files at most: past it an interpreter frame keeps its name, not its file. */
#define INGEST_SRC_MODS_MAX	(1u << 20)

/* Off-CPU stacks kept, named, by key (ingest_offcpu.c). */
#define INGEST_OFF_HELD_MAX	8192		/* as many as BPF's offcpu_seen holds */
#define INGEST_OFF_HELD_BYTES	(32u << 20)
struct held;
struct ingest_off {
	struct htab tab;		/* hash of the key -> index + 1 */
	struct held **v;
	size_t nr, cap, bytes;
	uint64_t sums;			/* sums taken: the clock of held.used */
	uint64_t forget[INGEST_OFF_HELD_MAX];	/* keys let go, for BPF's seen set: room for every one kept */
	size_t nr_forget;
	uint64_t st_stacks, st_evicted;
};

struct ingest {
	struct ingest_opts o;
	struct ingest_off off;
	uint8_t *pid_gone;		/* one per o.pids[i]: its exit is known */
	struct ingest_stats st;
	struct ingest_out out[1 + INGEST_MAX_TAPS];
	struct named_frame frames[2 * BPFSYM_MAX_FRAMES];
	struct htab dirty;		/* pid + 1 of processes whose view is stale */
	uint32_t *dirty_pids;
	size_t nr_dirty, cap_dirty;
	size_t nr_urgent;		/* notes since the last sync that cannot wait for the batch's end */
	struct defer *def;		/* samples waiting for their files' (or runtimes') names */
	struct src_mods src;
};

/* ingest_sample.c: a SAMPLE record, whole or not (counted).  0 or -errno as ingest__record. */
int ingest__sample(struct ingest *in, const struct bpfsym_sample *s, size_t len);

/*
 * ingest_sample.c: name @s's @nk kernel entries and @nu user slots into
 * in->frames (leaf first); how many frames.
 */
uint32_t ingest__name_frames(struct ingest *in, const struct bpfsym_sample *s, uint32_t nk, uint32_t nu);

/* ingest_offcpu.c: an off-CPU stack record (BPFSYM_EV_OFFCPU_STACK).  0 or -errno as ingest__record. */
int ingest__offcpu_stack(struct ingest *in, const struct bpfsym_sample *s, size_t len);

/* ingest_offcpu.c: free the stacks kept. */
void ingest__offcpu_free(struct ingest_off *o);

/* ingest_sample.c: defer's rt_retry (defer_rt_retry_fn), @ctx the ingest. */
bool ingest__rt_retry(void *ctx, uint32_t pid, struct named_frame *f);

/* ingest_sample.c: free the source modules. */
void ingest__src_free(struct src_mods *sm);

/* ingest_out.c: point @out at writer @w (NULL: none), forgetting the ids of the writer before. */
void ingest_out__reset(struct ingest_out *out, struct report_writer *w);

/*
 * ingest_out.c: write sample @out taken at @ts, whose @nr frames are @frames,
 * to every writer (counted), after its cgroup's path (@cgpath, NULL:
 * unknown).  0 or -errno (the file's: a tap's error stops only that tap).
 */
int ingest__write(struct ingest *in, const struct named_frame *frames, struct rpt_sample *out,
		  uint32_t nr, uint64_t ts, const char *cgpath);

/* ingest_out.c: defer's hand-back (defer_write_fn), @ctx the ingest. */
int ingest__deferred_write(void *ctx, struct deferred *e, enum defer_why why);

#endif /* BPFSYM_INGEST_INT_H */
