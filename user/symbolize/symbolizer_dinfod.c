// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer_dinfod: a file's debug file from debuginfod, asked once per
 * build-id when the file's own symbols (and no local debug file) fail to
 * name a frame, the way perf looks for a .symtab before settling for
 * .dynsym.
 *
 * The fetch is a job of the file module's (fileload.c), started without
 * waiting: meanwhile the module's frames say RPT_FILE_NO_ANSWER, so the
 * samples that hold them wait (ingest's deferred samples) and are named
 * once the job ends (symbolizer_wait.c), or are written unnamed when it
 * looks hung.  Unlike a file's own jobs, a slow fetch does not mark the
 * file's file system hung: it is the network that is slow.
 *
 * Each build-id's answer is kept for the symbolizer's life: a debug file
 * found (its path in libdebuginfod's cache, reopened without asking when
 * the image is read again after an eviction) or a miss with its reason,
 * never asked again.  At most DINFOD_JOBS fetches run at once, so jobs
 * waiting on the network never hold all of the pool's workers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "symbolize/debuginfod.h"
#include "symbolize/symbolizer_int.h"

#define DINFOD_JOBS	2

struct dinfod_id {
	uint8_t id[FILEID_BUILD_ID_MAX];
	size_t len;
	bool pending;		/* a job of some module's is asking */
	int err;		/* the answer: 0, found (path), or why not */
	char *path;
	struct dinfod_id *next;	/* in symbolizer.dinfod_list */
};

struct id_key {
	const uint8_t *id;
	size_t len;
};

static bool id_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct dinfod_id *e = (const struct dinfod_id *)(uintptr_t)val;
	const struct id_key *k = key;

	(void)ctx;
	return e->len == k->len && !memcmp(e->id, k->id, k->len);
}

static struct dinfod_id *id_find(struct symbolizer *s, const uint8_t *id, size_t len)
{
	struct id_key k = { id, len };

	return (struct dinfod_id *)(uintptr_t)htab__find(&s->dinfod_ids, hash_bytes(0, id, len),
							   id_eq, NULL, &k);
}

static struct dinfod_id *id_add(struct symbolizer *s, const uint8_t *id, size_t len)
{
	struct dinfod_id *e = calloc(1, sizeof(*e));

	if (!e || len > sizeof(e->id) ||
	    htab__add(&s->dinfod_ids, hash_bytes(0, id, len), (uint64_t)(uintptr_t)e)) {
		free(e);
		return NULL;
	}
	memcpy(e->id, id, len);
	e->len = len;
	e->next = s->dinfod_list;
	s->dinfod_list = e;
	return e;
}

/* Start @j, @m's: 0 (running, @m's job; or, without a pool, done and adopted) or -errno. */
static int job_go(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	int err;

	if (!s->pool) {
		offload__run(NULL, &j->job, 0);
		s->dinfod_busy++;
		err = dinfod_adopt(s, m, j);
		file_job__free(j);
		return err;
	}
	err = offload__submit(s->pool, &j->job);
	if (err) {
		file_job__free(j);
		return err;
	}
	s->dinfod_busy++;
	m->job = j;
	return -EINPROGRESS;
}

uint32_t dinfod_ask(struct symbolizer *s, struct smod *m, uint32_t reason)
{
	struct image *img = m->img;
	struct dinfod_id *e;
	struct file_job *j;
	int err;

	if (!s->dinfod || m->job || !img || !img->es || img->dbg || !img->build_id_len ||
	    s->dinfod_busy >= DINFOD_JOBS)
		return reason;
	e = id_find(s, img->build_id, img->build_id_len);
	if (e && (e->pending || e->err))
		return reason;	/* asked already: by another copy now, or answered without a file */
	if (!e && !(e = id_add(s, img->build_id, img->build_id_len)))
		return reason;
	j = file_job__dinfod(s, e->id, e->len, e->path);
	if (!j)
		return reason;
	e->pending = true;
	err = job_go(s, m, j);
	if (err == -EINPROGRESS)
		return RPT_FILE_NO_ANSWER;
	if (!err)
		return RPT_OK;	/* fetched in place (no pool) and attached */
	/* Not submitted (every worker busy): asked again at a later miss.  Else answered without a file. */
	e->pending = false;
	return reason;
}

int dinfod_adopt(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	struct dinfod_id *e = id_find(s, j->id, j->id_len);

	s->dinfod_busy--;
	if (e) {
		e->pending = false;
		e->err = j->err;
		if (!j->err && j->path && !e->path) {
			e->path = j->path;
			j->path = NULL;
		}
	}
	if (j->dbg && m->img && m->img->es && !m->img->dbg &&
	    image__matches(m->img, j->dbg)) {
		pr_debug("symbolizer: '%s': debug file from debuginfod\n", m->path);
		imgcache__attach_debug(&s->images, m->img, j->dbg);
		j->dbg = NULL;
		return 0;
	}
	return j->err ? j->err : -ENOENT;
}

void dinfod_abandon(struct symbolizer *s, const struct file_job *j)
{
	struct dinfod_id *e;

	if (j->kind != FILE_JOB_DEBUGINFOD)
		return;
	s->dinfod_busy--;
	e = id_find(s, j->id, j->id_len);
	if (e)
		e->pending = false;
}

void dinfod_free(struct symbolizer *s)
{
	struct dinfod_id *e, *next;

	for (e = s->dinfod_list; e; e = next) {
		next = e->next;
		free(e->path);
		free(e);
	}
	s->dinfod_list = NULL;
	htab__free(&s->dinfod_ids);
}
