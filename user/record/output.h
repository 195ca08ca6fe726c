/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output: the recording's file (-o), created at the start, before anything
 * is loaded, so an existing name is refused at once: 0600, never through a
 * symbolic link, never over an existing file unless -f (then made beside
 * and renamed over it once its header is written, so a recording that
 * fails to start leaves the old file as it was).  Its directory is opened
 * once and held: every later create, rename and unlink of the recording
 * (rotation's too) is relative to it, and a rename or unlink of OUTPUT is
 * done only while OUTPUT is still the file this recording writes (device
 * and inode), never to whatever another process put at the name.  An
 * existing device or FIFO (/dev/null, a pipe) is written in place without
 * rotation (base/outfile.h says when a link to one is followed).
 */
#ifndef BPFSYM_RECORD_OUTPUT_H
#define BPFSYM_RECORD_OUTPUT_H

#include <stdbool.h>

#include "base/outfile.h"
#include "report/report.h"

struct output {
	const char *path;		/* -o as given, for messages */
	int dfd;			/* its directory, O_PATH, held for the recording */
	char name[OUTFILE_NAME_MAX];	/* its last component, OUTPUT */
	unsigned int flags;		/* OUTFILE_FORCE (-f), OUTFILE_SPECIAL (no rotation) */
	struct outfile f;		/* the file OUTPUT is now (its fd -1 once a writer has it) */
	bool written;			/* a writer was made on f: not ours to discard silently */
};

/*
 * Open @path's directory and create OUTPUT in it per @force and
 * @rotating (a device or FIFO only without rotation).  0, or -errno with
 * one line printed (an existing name: "exists ... -f replaces it").
 */
int output__open(struct output *out, const char *path, bool force, bool rotating);

/*
 * The report writer on OUTPUT, its header from @h written; with -f the
 * file is then renamed over the old name.  NULL with errno set (nothing
 * printed; OUTPUT removed when it was ours).
 */
struct report_writer *output__writer(struct output *out, const struct rpt_header *h);

/*
 * A new OUTPUT after the last was renamed (rotation), and its writer from
 * @h, as output__open and output__writer.  NULL with errno set (nothing
 * printed, nothing left at the name by us): -EEXIST when something took
 * the name meanwhile and -f was not given.
 */
struct report_writer *output__next(struct output *out, const struct rpt_header *h);

/*
 * Rename OUTPUT to @to (a name in the same directory) if OUTPUT is still
 * this recording's file, never replacing anything at @to.  0, -EEXIST
 * (@to taken), -ESTALE (OUTPUT is another file now: left alone), -ENOENT
 * (OUTPUT is gone), or -errno.
 */
int output__rename(struct output *out, const char *to);

/* Remove OUTPUT if it is still this recording's file (a header that was cut, an empty start). */
void output__discard(struct output *out);

/* Remove @name (a rotated file) from the directory.  0 or -errno. */
int output__unlink(const struct output *out, const char *name);

/* Close the directory; OUTPUT and its fd stay as they are.  A zeroed @out is a no-op. */
void output__close(struct output *out);

#endif /* BPFSYM_RECORD_OUTPUT_H */
