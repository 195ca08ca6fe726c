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
	char **kept;			/* rotated names, a ring of o.max_files (none when 0) */
	size_t nr_kept, cap_kept, first_kept;
	char last[PATH_MAX];		/* the newest rotated name */
	int logged_err;			/* the error last logged, so a full disk is said once */
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct rotate *rotate__new(const struct rotate_opts *o, const struct rotate_env *env)
{
	struct rotate *rot;

	if (!o || !env || !env->output || !env->w || !*env->w || !env->ing || !env->hdr ||
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
		free(rot->kept[i]);
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
	       "until a file can be written again\n", rot->env.output, what, strerror(-err));
}

/* OUTPUT.<UTC time of @wall_ns in ms> into @buf. */
static void name_at(const struct rotate *rot, uint64_t wall_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(wall_ns / 1000000000ull);
	char stamp[32];
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		snprintf(stamp, sizeof(stamp), "%llu", (unsigned long long)secs);
	snprintf(buf, len, "%s.%s%03u", rot->env.output, stamp,
		 (unsigned int)(wall_ns / NSEC_PER_MSEC % 1000));
}

/*
 * Remember @name as rotated, in a ring of --switch-max-files names; once
 * it is full, delete the oldest.  Without the option nothing is kept: a
 * recording of weeks makes no list that grows.  0 or -ENOMEM.
 */
static int keep(struct rotate *rot, const char *name)
{
	size_t cap;
	char *copy, **v;

	if (!rot->o.max_files)
		return 0;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	if (rot->nr_kept == rot->o.max_files) {
		char *old = rot->kept[rot->first_kept];

		if (unlink(old) && errno != ENOENT)
			pr_warn("bpfsym: --switch-max-files: cannot delete '%s': %s\n", old, strerror(errno));
		else
			rot->nr_deleted++;
		free(old);
		rot->kept[rot->first_kept] = copy;
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
	rot->kept[rot->nr_kept++] = copy;
	return 0;
}

/*
 * Rename OUTPUT to OUTPUT.<time of @wall_ns>, the next millisecond when
 * the name is taken (never replacing a file), and keep it.  0 or -errno.
 */
static int rename_rotated(struct rotate *rot, uint64_t wall_ns)
{
	char name[PATH_MAX];
	int i, err = -EEXIST;

	for (i = 0; i < NAME_TRIES && err == -EEXIST; i++, wall_ns += NSEC_PER_MSEC) {
		name_at(rot, wall_ns, name, sizeof(name));
		err = renameat2(AT_FDCWD, rot->env.output, AT_FDCWD, name, RENAME_NOREPLACE) ? -errno : 0;
		/* A file system without RENAME_NOREPLACE: look first, then rename. */
		if (err == -EINVAL)
			err = access(name, F_OK) == 0 ? -EEXIST :
			      rename(rot->env.output, name) ? -errno : 0;
	}
	if (err)
		return err;
	snprintf(rot->last, sizeof(rot->last), "%s", name);
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
	w = report_writer__open(rot->env.output, &h);
	if (!w) {
		int err = -errno;

		/* What was created is the header, perhaps cut: not a file of the series. */
		unlink(rot->env.output);
		return err;
	}
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
	uint64_t appended, flushed, mono = now_ns(CLOCK_MONOTONIC);

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
	if (rename_rotated(rot, now_ns(CLOCK_REALTIME)))
		unlink(rot->env.output);
	enter_gap(rot, mono);
	return 0;
}

/*
 * Switch now: drain, rename the old file, open the next, close the old.
 * With no file, only the open.  0, or -errno that ends the recording.
 */
static int switch_now(struct rotate *rot)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC), mono, wall, samples = 0;
	struct report_writer *old;
	struct rpt_header cum;
	int err;

	err = rot->env.drain(rot->env.ctx);
	if (err < 0)
		return err;
	mono = now_ns(CLOCK_MONOTONIC);
	wall = now_ns(CLOCK_REALTIME);
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
		pr_warn("bpfsym: '%s': writing again\n", rot->env.output);
		rot->logged_err = 0;
	}
	/* The new file (or none) takes the samples now; the old one gets its END. */
	if (old && (err = close_file(rot, old, samples, &cum)))
		log_once(rot, err, "finishing the file before failed");
	pr_debug("bpfsym: switched to a new '%s' in %.2f ms (drain to END)\n", rot->env.output,
		 (now_ns(CLOCK_MONOTONIC) - start) / 1e6);
	return 0;
}

int rotate__tick(struct rotate *rot)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
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
	uint64_t mono = now_ns(CLOCK_MONOTONIC), wall = now_ns(CLOCK_REALTIME), samples;
	struct report_writer *w = *rot->env.w;
	int err = 0;

	/* No file at the end: one more try, so an END says what was not written. */
	if (!w && (err = open_next(rot, mono, wall, true))) {
		const struct ingest_stats *st = ingest__stats(rot->env.ing);

		pr_err("bpfsym: '%s': %s: the last %llu samples were not written\n", rot->env.output,
		       strerror(-err), (unsigned long long)(rot->unwritten + st->symbolized - st->samples - rot->gap_base));
		return err;
	}
	w = *rot->env.w;
	samples = ingest__stats(rot->env.ing)->samples - rot->samples_base;
	*rot->env.w = NULL;
	ingest__set_writer(rot->env.ing, NULL);
	err = close_file(rot, w, samples, final);
	/* Named like the others even when its END failed: what reached it reads as truncated. */
	err = rename_rotated(rot, wall) ?: err;
	if (err)
		pr_err("bpfsym: writing '%s' failed: %s\n", rot->last[0] ? rot->last : rot->env.output,
		       strerror(-err));
	return err;
}

void rotate__summary(const struct rotate *rot, uint64_t *written, uint64_t *unwritten, uint64_t *bytes,
		     char *where, size_t len)
{
	const struct ingest_stats *st = ingest__stats(rot->env.ing);
	char deleted[64] = "";

	*written = rot->written;
	*bytes = rot->bytes;
	*unwritten = st->symbolized > rot->written ? st->symbolized - rot->written : 0;
	if (rot->nr_deleted)
		snprintf(deleted, sizeof(deleted), ", the %llu oldest deleted (--switch-max-files)",
			 (unsigned long long)rot->nr_deleted);
	snprintf(where, len, "%llu file%s %s.* (the last '%s'%s)", (unsigned long long)rot->nr_files,
		 rot->nr_files == 1 ? "" : "s", rot->env.output, rot->last, deleted);
}

uint64_t rotate__bytes_closed(const struct rotate *rot)
{
	return rot->bytes;
}
