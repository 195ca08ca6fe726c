/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rotate: a recording in several files (`--switch-output`, perf's
 * spelling and naming).  The file being written is always OUTPUT (-o); at
 * each switch it is renamed OUTPUT.<UTC time of the switch,
 * YYYYmmddHHMMSSsss> and a new OUTPUT begins, and at the end the last
 * one is renamed too, so every OUTPUT.* is a finished file.  Each file
 * stands alone: its own header (its start times, the recording's event,
 * frequency, target) and END record with the counts of its own interval.
 * A file that cannot be written (a full disk) is given up with one log
 * line: sampling goes on without a file, the samples are counted, and a
 * new file is tried every ROTATE_RETRY_NS and at each switch; the next
 * file's END says how many samples were not written.
 *
 * Only the recorder's thread calls these (ingest is not thread-safe);
 * the SIGUSR2 handler only sets a flag.
 */
#ifndef BPFSYM_ROTATE_H
#define BPFSYM_ROTATE_H

#include <stdint.h>

#include "ingest/ingest.h"
#include "record/output.h"
#include "record/record.h"
#include "report/report.h"

/* With no file (a write failed), how often a new one is tried. */
#define ROTATE_RETRY_NS		(2 * 1000000000ull)

/* What the recorder lends rotate: all of it outlives the rotate. */
struct rotate_env {
	struct output *out;		/* -o: the file being written, its held directory */
	struct report_writer **w;	/* the recorder's writer, which rotate replaces (NULL: none) */
	struct ingest *ing;
	const struct rpt_header *hdr;	/* the recording's header: host, event, frequency, target */
	/* The END counters of the whole recording so far (BPF counters, ingest's) into @h. */
	void (*counters)(void *ctx, struct rpt_header *h);
	/* Read what the ring buffer holds now, so it lands in the file before a switch.  0 or -errno. */
	int (*drain)(void *ctx);
	void *ctx;
};

struct rotate;

/*
 * SIGUSR2 switches files with --switch-output; without, it is ignored
 * (perf's behaviour; by a handler, so a command bpfsym starts gets the
 * default back at exec).  Call once, before recording.
 */
void rotate__catch_signal(void);

/*
 * A rotation per @o over @env, whose *@env->w (the first file, OUTPUT,
 * opened with @env->hdr) it takes over.  NULL + errno (EINVAL, ENOMEM).
 */
struct rotate *rotate__new(const struct rotate_opts *o, const struct rotate_env *env);

/* NULL is a no-op.  Closes nothing: the writer stays the recorder's. */
void rotate__free(struct rotate *rot);

/*
 * Called by the recorder's loop between batches of records: switch files
 * when SIGUSR2 came, the file reached its size or its age, or try again
 * to open a file when there is none.  0, or -errno of a failure that must
 * end the recording (the ring buffer's, or memory).
 */
int rotate__tick(struct rotate *rot);

/*
 * A write of the current file failed with @err.  A failure of the disk
 * (ENOSPC, EDQUOT, EFBIG, EIO, EROFS) gives the file up, which keeps what
 * reached it (read as truncated): one log line, sampling goes on without
 * a file.  0 then; any other @err is returned for the recording to end.
 */
int rotate__drop(struct rotate *rot, int err);

/*
 * The end: close the current file with its END record from @final (the
 * recording's cumulative counters; their share since the file began is
 * written), name it like the others, apply --switch-max-files.  With no
 * file at the end, one is tried for the END's count of unwritten samples.
 * 0, or -errno (printed) when the last file could not be finished.
 */
int rotate__finish(struct rotate *rot, const struct rpt_header *final);

/*
 * For the summary line: samples in the files (those that reached them),
 * samples not written, bytes written (deleted files too), and where they
 * went ("5 files OUT.* (the last 'OUT.2026...', the 2 oldest deleted
 * (--switch-max-files): 1234 samples in the 3 kept)") in @where of @len
 * bytes.
 */
void rotate__summary(const struct rotate *rot, uint64_t *written, uint64_t *unwritten, uint64_t *bytes,
		     char *where, size_t len);

/* Bytes of the files closed so far (deleted ones too): a counter that rotation does not reset. */
uint64_t rotate__bytes_closed(const struct rotate *rot);

#endif /* BPFSYM_ROTATE_H */
