// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rotate: --switch-output and --switch-max-files (rotate.h has the
 * behaviour).  A switch, in order: the ring buffer is drained, so every
 * record taken before the switch time T goes to the old file; T is read;
 * OUTPUT (the old file, its fd still open) is renamed OUTPUT.<T>; a new
 * OUTPUT is opened with T as its start; ingest is pointed at it; the old
 * file is closed with its END record.  ingest runs on this thread only,
 * so no sample falls between the two files or goes to both.  A sample
 * taken just before T but read after it (in flight on another CPU) is in
 * the new file at its time 0: the files' time ranges never overlap.
 *
 * The counters of an END record are the recording's since the last END
 * written (the BPF counters and ingest's only grow), so the files'
 * counters add up to the recording's; a file given up (disk full) has no
 * END, and the next file's counts include its interval and the gap.
 *
 * Every rename, create and unlink is relative to the directory held by
 * record/output.h, and OUTPUT is renamed only while it is still the file
 * this recording writes.  Before that (issue 25) they went by path:
 * whatever was at OUTPUT's name was renamed, a new OUTPUT was created
 * with O_TRUNC, and a second writer of the name (another recorder with
 * the same -o, a restart overlapping the old instance's end) made each
 * recorder rename the other's file, truncate the one it was writing,
 * leave header-only files in the series, and at the end find its own
 * OUTPUT gone: "writing 'OUT.<T>' failed: No such file or directory",
 * exit 1, a file lost.  Now the second recorder is refused at its start
 * (O_EXCL), and a name taken meanwhile is never renamed or deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "record/rotate.h"

#define NSEC_PER_MSEC	1000000ull
#define NAME_TRIES	1000		/* a name taken: the next millisecond, this many times */

static volatile sig_atomic_t switch_signal;

static void on_sigusr2(int sig)
{
	(void)sig;
	switch_signal = 1;
}

void rotate__catch_signal(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr2 };

	sigaction(SIGUSR2, &sa, NULL);
}

/* A rotated file still there (--switch-max-files keeps the newest N). */
struct kept {
	char *name;			/* in the output's directory */
	uint64_t samples;		/* written to it */
};

struct rotate {
	struct rotate_opts o;
	struct rotate_env env;
	struct rpt_header base;		/* the recording's counters at the last END written */
	uint64_t file_start;		/* CLOCK_MONOTONIC: the current file's start, or when it was lost */
	uint64_t retry_at;		/* no file: when to try again */
	uint64_t samples_base;		/* ingest's samples written when the current file began */
	uint64_t gap_base;		/* no file: ingest's symbolized - samples when it was lost */
	uint64_t unwritten;		/* samples lost since the last END, for the next one */
	uint64_t written;		/* samples that reached a file */
	uint64_t nr_files, nr_deleted;
	uint64_t bytes;			/* of the rotated files, when each was renamed */
	struct kept *kept;		/* rotated files, a ring of o.max_files (none when 0) */
	size_t nr_kept, cap_kept, first_kept, newest;
	char last[PATH_MAX];		/* the newest rotated file, as -o names it plus the suffix */
	int logged_err;			/* the error last logged, so a full disk is said once */
};

struct rotate *rotate__new(const struct rotate_opts *o, const struct rotate_env *env)
{
	struct rotate *rot;

	if (!o || !env || !env->out || !env->w || !*env->w || !env->ing || !env->hdr ||
	    !env->counters || !env->drain || o->mode == ROTATE_OFF) {
		errno = EINVAL;
		return NULL;
	}
	rot = calloc(1, sizeof(*rot));
	if (!rot)
		return NULL;
	rot->o = *o;
	rot->env = *env;
	/* The first file's counters start with the recording, its samples with ingest's. */
	rot->file_start = env->hdr->start_mono_ns;
	rot->samples_base = ingest__stats(env->ing)->samples;
	return rot;
}

void rotate__free(struct rotate *rot)
{
	size_t i;

	if (!rot)
		return;
	for (i = 0; i < rot->nr_kept; i++)
		free(rot->kept[i].name);
	free(rot->kept);
	free(rot);
}

/* A disk's failure, which rotation rides out; anything else ends the recording. */
static bool disk_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG || err == -EIO || err == -EROFS;
}

/* Log @err about @what once per kind (a full disk is said once, not every retry). */
static void log_once(struct rotate *rot, int err, const char *what)
{
	if (rot->logged_err == err)
		return;
	rot->logged_err = err;
	pr_err("bpfsym: '%s': %s: %s; sampling goes on, samples are counted and not written "
	       "until a file can be written again\n", rot->env.out->path, what,
	       err == -ESTALE ? "another file is at its name now (not renamed)" : strerror(-err));
}

/* The suffix .<UTC time of @wall_ns in ms> into @buf. */
static void suffix_at(uint64_t wall_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(wall_ns / 1000000000ull);
	char stamp[32];
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		snprintf(stamp, sizeof(stamp), "%llu", (unsigned long long)secs);
	snprintf(buf, len, ".%s%03u", stamp, (unsigned int)(wall_ns / NSEC_PER_MSEC % 1000));
}

/*
 * Remember @name as rotated, in a ring of --switch-max-files names; once
 * it is full, delete the oldest.  Without the option nothing is kept: a
 * recording of weeks makes no list that grows.  0 or -ENOMEM.
 */
static int keep(struct rotate *rot, const char *name)
{
	size_t cap;
	struct kept *v;
	char *copy;
	int err;

	if (!rot->o.max_files)
		return 0;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	if (rot->nr_kept == rot->o.max_files) {
		struct kept *old = &rot->kept[rot->first_kept];

		err = output__unlink(rot->env.out, old->name);
		if (err && err != -ENOENT)
			pr_warn("bpfsym: --switch-max-files: cannot delete '%s': %s\n", old->name, strerror(-err));
		else
			rot->nr_deleted++;
		free(old->name);
		*old = (struct kept){ .name = copy };
		rot->newest = rot->first_kept;
		rot->first_kept = (rot->first_kept + 1) % rot->nr_kept;
		return 0;
	}
	/* Grown as files come (N may be large), so the ring starts at 0 until it is full. */
	if (rot->nr_kept == rot->cap_kept) {
		cap = rot->cap_kept ? 2 * rot->cap_kept : 16;
		cap = cap < rot->o.max_files ? cap : rot->o.max_files;
		v = realloc(rot->kept, cap * sizeof(*v));
		if (!v) {
			free(copy);
			return -ENOMEM;
		}
		rot->kept = v;
		rot->cap_kept = cap;
	}
	rot->newest = rot->nr_kept;
	rot->kept[rot->nr_kept++] = (struct kept){ .name = copy };
	return 0;
}

/* @n samples reached the file renamed last, for the summary of the kept ones. */
static void kept_samples(struct rotate *rot, uint64_t n)
{
	if (rot->nr_kept)
		rot->kept[rot->newest].samples = n;
}

/*
 * Rename OUTPUT to OUTPUT.<time of @wall_ns>, the next millisecond when
 * the name is taken (never replacing a file, -f or not), and keep it.
 * 0 or -errno (-ESTALE, -ENOENT: OUTPUT is not this recording's file any
 * more, and nothing was renamed).
 */
static int rename_rotated(struct rotate *rot, uint64_t wall_ns)
{
	const struct output *out = rot->env.out;
	char suffix[48], name[OUTFILE_NAME_MAX + 48];
	int i, err = -EEXIST;

	for (i = 0; i < NAME_TRIES && err == -EEXIST; i++, wall_ns += NSEC_PER_MSEC) {
		suffix_at(wall_ns, suffix, sizeof(suffix));
		snprintf(name, sizeof(name), "%s%s", out->name, suffix);
		err = output__rename(rot->env.out, name);
	}
	if (err)
		return err;
	snprintf(rot->last, sizeof(rot->last), "%s%s", out->path, suffix);
	rot->nr_files++;
	return keep(rot, name);
}

/* The END of the current file: @cum (the recording's counters) minus those at the last END. */
static void file_end(const struct rotate *rot, const struct report_writer *w, const struct rpt_header *cum,
		     struct rpt_header *h)
{
	const struct rpt_header *b = &rot->base;
	size_t i;

	*h = *cum;
	h->lost_samples -= b->lost_samples;
	h->lost_events -= b->lost_events;
	h->idle -= b->idle;
	h->lost_children -= b->lost_children;
	h->missed_vma_busy -= b->missed_vma_busy;
	h->missed_syscalls -= b->missed_syscalls;
	h->bad_records -= b->bad_records;
	for (i = 0; i < RPT_UEND_MAX; i++)
		h->uend[i] -= b->uend[i];
	for (i = 0; i < RPT_CAPPED_MAX; i++)
		h->capped[i] -= b->capped[i];
	for (i = 0; i < RPT_DINFOD_MAX; i++)
		h->dinfod[i] -= b->dinfod[i];
	for (i = 0; i < RPT_INTERP_MAX; i++)
		h->interp[i] -= b->interp[i];
	for (i = 0; i < RPT_OFFCPU_MAX; i++)
		h->offcpu[i] -= b->offcpu[i];
	/* Processes seen in this file; the unwinder's figures stay the recording's (state, not counts). */
	h->nr_procs = report_writer__nr_pids(w);
	h->unwritten = rot->unwritten;
}

/*
 * Close @w, the file of @samples samples, with its END record (@cum: the
 * recording's counters now).  0, or -errno: the file then has no END (it
 * reads as truncated) and its unflushed samples are counted as unwritten.
 */
static int close_file(struct rotate *rot, struct report_writer *w, uint64_t samples,
		      const struct rpt_header *cum)
{
	struct rpt_header h;
	uint64_t flushed;
	int err;

	/* Flushed first, so the summary counts the bytes written, as without rotation. */
	report_writer__flush(w);
	flushed = report_writer__samples_flushed(w);
	rot->bytes += report_writer__bytes(w);
	file_end(rot, w, cum, &h);
	err = report_writer__close(w, &h);
	if (err) {
		/* Flushed before the END may be more than counted here: at least these reached it. */
		rot->written += flushed;
		rot->unwritten += samples - flushed;
		return err;
	}
	rot->written += samples;
	rot->unwritten = 0;
	rot->base = *cum;
	return 0;
}

/*
 * A new OUTPUT starting at (@mono, @wall), given to ingest; @after_gap:
 * there was no file before it.  0 or -errno (no file, nothing left).
 */
static int open_next(struct rotate *rot, uint64_t mono, uint64_t wall, bool after_gap)
{
	const struct ingest_stats *st = ingest__stats(rot->env.ing);
	struct rpt_header h = *rot->env.hdr;
	struct report_writer *w;

	h.start_mono_ns = mono;
	h.start_wall_ns = wall;
	/* A header cut short is removed by output__next: not a file of the series. */
	w = output__next(rot->env.out, &h);
	if (!w)
		return -errno;
	if (after_gap)	/* the samples read meanwhile were not written */
		rot->unwritten += st->symbolized - st->samples - rot->gap_base;
	*rot->env.w = w;
	ingest__set_writer(rot->env.ing, w);
	rot->file_start = mono;
	rot->samples_base = st->samples;
	return 0;
}

/* Without a file from now on: ingest keeps symbolizing and counting. */
static void enter_gap(struct rotate *rot, uint64_t mono)
{
	const struct ingest_stats *st = ingest__stats(rot->env.ing);

	ingest__set_writer(rot->env.ing, NULL);
	*rot->env.w = NULL;
	rot->gap_base = st->symbolized - st->samples;
	rot->retry_at = mono + ROTATE_RETRY_NS;
}

int rotate__drop(struct rotate *rot, int err)
{
	struct report_writer *w = *rot->env.w;
	uint64_t appended, flushed, mono = clock_ns(CLOCK_MONOTONIC);

	if (!disk_error(err) || !w)
		return err;
	log_once(rot, err, "writing failed");
	appended = ingest__stats(rot->env.ing)->samples - rot->samples_base;
	flushed = report_writer__samples_flushed(w);
	rot->bytes += report_writer__bytes(w);
	rot->written += flushed;
	rot->unwritten += appended - flushed;
	report_writer__abort(w);
	/* What reached it stays, as one of the series (it reads as truncated). */
	if (rename_rotated(rot, clock_ns(CLOCK_REALTIME)))
		output__discard(rot->env.out);
	else
		kept_samples(rot, flushed);
	enter_gap(rot, mono);
	return 0;
}

/*
 * Switch now: drain, rename the old file, open the next, close the old.
 * With no file, only the open.  0, or -errno that ends the recording.
 */
static int switch_now(struct rotate *rot)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), mono, wall, samples = 0;
	struct report_writer *old;
	struct rpt_header cum;
	int err;

	err = rot->env.drain(rot->env.ctx);
	if (err < 0)
		return err;
	mono = clock_ns(CLOCK_MONOTONIC);
	wall = clock_ns(CLOCK_REALTIME);
	old = *rot->env.w;	/* NULL after a gap, or when the drain's writes failed */
	if (old) {
		err = rename_rotated(rot, wall);
		if (err == -ENOMEM)
			return err;
		if (err) {
			/* Go on in the same file rather than lose it; say why once. */
			log_once(rot, err, "renaming it failed");
			rot->file_start = mono;
			return 0;
		}
		rot->env.counters(rot->env.ctx, &cum);
		samples = ingest__stats(rot->env.ing)->samples - rot->samples_base;
	}
	err = open_next(rot, mono, wall, !old);
	if (err) {
		log_once(rot, err, "opening it failed");
		/* A gap already begun goes on: its count of unwritten samples runs from its start. */
		if (old)
			enter_gap(rot, mono);
	} else if (rot->logged_err) {
		pr_warn("bpfsym: '%s': writing again\n", rot->env.out->path);
		rot->logged_err = 0;
	}
	/* The new file (or none) takes the samples now; the old one gets its END. */
	if (old) {
		uint64_t before = rot->written;

		err = close_file(rot, old, samples, &cum);
		kept_samples(rot, rot->written - before);
		if (err)
			log_once(rot, err, "finishing the file before failed");
	}
	pr_debug("bpfsym: switched to a new '%s' in %.2f ms (drain to END)\n", rot->env.out->path,
		 (clock_ns(CLOCK_MONOTONIC) - start) / 1e6);
	return 0;
}

int rotate__tick(struct rotate *rot)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct report_writer *w = *rot->env.w;
	bool due = switch_signal;

	switch_signal = 0;
	if (!w) {
		/* No file: a try every ROTATE_RETRY_NS (or at a signal), not at every loop. */
		if (!due && now < rot->retry_at)
			return 0;
		rot->retry_at = now + ROTATE_RETRY_NS;
		return switch_now(rot);
	}
	if (rot->o.mode == ROTATE_TIME && now - rot->file_start >= rot->o.time_ns)
		due = true;
	if (rot->o.mode == ROTATE_SIZE && report_writer__bytes(w) >= rot->o.size)
		due = true;
	return due ? switch_now(rot) : 0;
}

int rotate__finish(struct rotate *rot, const struct rpt_header *final)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), wall = clock_ns(CLOCK_REALTIME), samples, before;
	struct report_writer *w = *rot->env.w;
	int err = 0, rerr;

	/* No file at the end: one more try, so an END says what was not written. */
	if (!w && (err = open_next(rot, mono, wall, true))) {
		const struct ingest_stats *st = ingest__stats(rot->env.ing);

		pr_err("bpfsym: '%s': %s: the last %llu samples were not written\n", rot->env.out->path,
		       strerror(-err), (unsigned long long)(rot->unwritten + st->symbolized - st->samples - rot->gap_base));
		return err;
	}
	w = *rot->env.w;
	samples = ingest__stats(rot->env.ing)->samples - rot->samples_base;
	*rot->env.w = NULL;
	ingest__set_writer(rot->env.ing, NULL);
	before = rot->written;
	err = close_file(rot, w, samples, final);
	/* Named like the others even when its END failed: what reached it reads as truncated. */
	rerr = rename_rotated(rot, wall);
	if (!rerr)
		kept_samples(rot, rot->written - before);
	if (rerr == -ESTALE || rerr == -ENOENT)
		pr_err("bpfsym: '%s' is not this recording's file any more (%s): its last file was not renamed\n",
		       rot->env.out->path, rerr == -ENOENT ? "gone" : "another file is at its name");
	else if (rerr || err)
		pr_err("bpfsym: writing '%s' failed: %s\n", rot->last[0] ? rot->last : rot->env.out->path,
		       strerror(-(rerr ?: err)));
	return rerr ?: err;
}

void rotate__summary(const struct rotate *rot, uint64_t *written, uint64_t *unwritten, uint64_t *bytes,
		     char *where, size_t len)
{
	const struct ingest_stats *st = ingest__stats(rot->env.ing);
	char deleted[128] = "";
	uint64_t in_kept = 0;
	size_t i;

	*written = rot->written;
	*bytes = rot->bytes;
	*unwritten = st->symbolized > rot->written ? st->symbolized - rot->written : 0;
	for (i = 0; i < rot->nr_kept; i++)
		in_kept += rot->kept[i].samples;
	/* What the files still there hold, so their merge can be checked against it. */
	if (rot->nr_deleted)
		snprintf(deleted, sizeof(deleted), ", the %llu oldest deleted (--switch-max-files): "
			 "%llu samples in the %zu kept", (unsigned long long)rot->nr_deleted,
			 (unsigned long long)in_kept, rot->nr_kept);
	snprintf(where, len, "%llu file%s %s.* (the last '%s'%s)", (unsigned long long)rot->nr_files,
		 rot->nr_files == 1 ? "" : "s", rot->env.out->path, rot->last, deleted);
}

uint64_t rotate__bytes_closed(const struct rotate *rot)
{
	return rot->bytes;
}
