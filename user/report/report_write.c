// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_write: appends records to a pending buffer, deduplicating
 * strings, modules, frames and stacks, and turns the buffer into one
 * zstd-compressed block per flush.  docs/FORMAT.md has the layout.
 *
 * Ids are implicit (the n-th record of a kind has id n), so the writer's
 * tables and the records in the file must never disagree: every intern
 * reserves its table room first, appends the record, and only then
 * commits the id, so a failure leaves both unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/strtab.h"
#include "base/util.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "report/report_windex.h"
#include "report/report_write_int.h"

/*
 * The most pending bytes a block may hold, leaving room for zstd's
 * worst-case expansion (ZSTD_compressBound: +1/256) under RPT_BLOCK_MAX.
 */
#define PENDING_MAX (RPT_BLOCK_MAX - RPT_BLOCK_MAX / 128)

/*
 * Pids the set of sampled pids has a bit for: PID_MAX_LIMIT on 64-bit
 * kernels, so 512 KiB of address space, of which only the pages of pids
 * seen are ever touched.
 */
#define RPT_PID_BITS	(1u << 22)

struct stack_key {
	const uint32_t *ids;
	uint32_t nr;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* fsync, where the file supports it (pipes and character devices do not). */
static int sync_fd(int fd)
{
	if (fsync(fd) && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

/* The type and length of w->rec as a record of @type, in @hdr; its length. */
static size_t rec_hdr(const struct report_writer *w, uint32_t type, uint8_t hdr[2 * RPT_UV_MAX])
{
	size_t n = rpt_uv_encode(hdr, type);

	return n + rpt_uv_encode(hdr + n, w->rec.len);
}

/*
 * Room in the pending block for w->rec as one record of @type, so that
 * writer__append() cannot fail.  0, -E2BIG (past the block's cap) or -ENOMEM.
 */
static int writer__room(struct report_writer *w, uint32_t type)
{
	uint8_t hdr[2 * RPT_UV_MAX];
	size_t n = rec_hdr(w, type, hdr);

	if (w->rec.len > PENDING_MAX - n || w->pending.len > PENDING_MAX - n - w->rec.len)
		return -E2BIG;
	return rpt_buf__reserve(&w->pending, n + w->rec.len);
}

/* Append w->rec as one record of @type to the pending block, which writer__room() made room for. */
static void writer__append(struct report_writer *w, uint32_t type)
{
	uint8_t hdr[2 * RPT_UV_MAX];
	size_t n = rec_hdr(w, type, hdr);

	memcpy(w->pending.data + w->pending.len, hdr, n);
	memcpy(w->pending.data + w->pending.len + n, w->rec.data, w->rec.len);
	w->pending.len += n + w->rec.len;
}

/* Append w->rec as one record of @type to the pending block.  0 or -errno, nothing appended. */
int writer__emit(struct report_writer *w, uint32_t type)
{
	int err = writer__room(w, type);

	if (!err)
		writer__append(w, type);
	return err;
}

/*
 * The index is past its cap: forget (report_windex.h), after a FORGET
 * record, which must come before any record that repeats an identity.
 * Without room for the record the index stays as it is, to try again at
 * the next call.
 */
static void writer__forget(struct report_writer *w)
{
	size_t before = windex__bytes(&w->x);

	w->rec.len = 0;
	if (writer__emit(w, RPT_REC_FORGET))
		return;
	windex__forget(&w->x, w->index_max / 2);
	w->forget_due = false;
	pr_debug("report: the writer's index reached %zu bytes: forgot all but %zu (the working set)\n",
		 before, windex__bytes(&w->x));
}

/*
 * Start every public operation: refuse after a write error, cut a block
 * when enough is pending, keep the index under its cap.
 */
int writer__begin(struct report_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->pending.len >= RPT_BLOCK_TARGET) {
		int err = report_writer__flush(w);

		if (err)
			return err;
	}
	if (w->forget_due || windex__bytes(&w->x) > w->index_max)
		writer__forget(w);
	return 0;
}

/*
 * The id of @s, written as a STRING record if new.  The record is made to
 * fit before the string is interned and appended after, so the table and
 * the records agree whatever fails.
 */
int writer__string(struct report_writer *w, const char *s, uint32_t *id)
{
	size_t len = strlen(s);
	uint32_t got;
	int err;

	if (!strtab__find_id(&w->x.strs, s, len, id)) {
		*id += w->x.str_base;
		return 0;
	}
	if (w->nr_strs >= RPT_ID_LIMIT)
		return -E2BIG;
	w->rec.len = 0;
	err = rpt_buf__put(&w->rec, s, len);
	err = err ?: writer__room(w, RPT_REC_STRING);
	err = err ?: strtab__intern_id(&w->x.strs, s, len, &got);
	if (err)
		return err;
	writer__append(w, RPT_REC_STRING);
	w->x.str_bytes += len + 1 + sizeof(uint32_t);
	*id = w->nr_strs++;
	return 0;
}

/* Encode a string field of the HEADER record: at most @size - 1 bytes of @s. */
static int rec_fixed_str(struct rpt_buf *b, const char *s, size_t size)
{
	size_t n = strnlen(s, size - 1);
	int err = rpt_buf__uv(b, n);

	return err ? err : rpt_buf__put(b, s, n);
}

static int writer__header(struct report_writer *w, const struct rpt_header *h)
{
	struct rpt_buf *b = &w->rec;
	int err;

	b->len = 0;
	err = rec_fixed_str(b, h->hostname, sizeof(h->hostname));
	err = err ?: rec_fixed_str(b, h->release, sizeof(h->release));
	err = err ?: rec_fixed_str(b, h->boot_id, sizeof(h->boot_id));
	err = err ?: rec_fixed_str(b, h->event, sizeof(h->event));
	err = err ?: rec_fixed_str(b, h->target, sizeof(h->target));
	err = err ?: rpt_buf__uv(b, h->text_addr);
	err = err ?: rpt_buf__uv(b, h->freq);
	err = err ?: rpt_buf__uv(b, h->flags);
	err = err ?: rpt_buf__uv(b, h->nr_cpus);
	err = err ?: rpt_buf__uv(b, h->start_wall_ns);
	err = err ?: rpt_buf__uv(b, h->start_mono_ns);
	/* Appended (issue 24): older readers stop before it. */
	err = err ?: rec_fixed_str(b, h->kfeatures, sizeof(h->kfeatures));
	err = err ?: rpt_offcpu__write_header(b, h);
	return err ?: writer__emit(w, RPT_REC_HEADER);
}

static void writer__free(struct report_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	rpt_buf__free(&w->pending);
	rpt_buf__free(&w->rec);
	rpt_buf__free(&w->zbuf);
	windex__free(&w->x);
	htab__free(&w->cgroups);
	if (w->pid_bits)
		munmap(w->pid_bits, RPT_PID_BITS / 8);
	free(w);
}

struct report_writer *report_writer__fdopen(int fd, const struct rpt_header *h)
{
	uint8_t fhdr[RPT_FILE_HDR_LEN];
	struct report_writer *w;
	int err;

	if (fd < 0 || !h) {
		if (fd >= 0)
			close(fd);
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	w->time_base = h->start_mono_ns;
	w->index_max = RPT_INDEX_MAX;
	w->index_age = RPT_INDEX_AGE_NS;
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		err = -ENOMEM;
		goto fail;
	}
	/* The checksum lets the reader tell a damaged block from a good one. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, RPT_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
		err = -EINVAL;
		goto fail;
	}
	memcpy(fhdr, RPT_FILE_MAGIC, RPT_MAGIC_LEN);
	rpt_put_le32(fhdr + 8, RPT_VERSION);
	rpt_put_le32(fhdr + 12, 0);
	err = write_all(w->fd, fhdr, sizeof(fhdr));
	if (err)
		goto fail;
	w->bytes = sizeof(fhdr);
	/* The header goes out now: a recording killed at once still says what it was. */
	err = writer__header(w, h);
	if (!err)
		err = report_writer__flush(w);
	if (err)
		goto fail;
	return w;
fail:
	writer__free(w);
	errno = -err;
	return NULL;
}

struct report_writer *report_writer__open(const char *path, const struct rpt_header *h)
{
	int fd;

	if (!path || !h) {
		errno = EINVAL;
		return NULL;
	}
	/* 0600 as every output (base/outfile.h); a name a user gives goes through outfile instead. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	return report_writer__fdopen(fd, h);
}

static bool mod_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct wmod *a = &((const struct windex *)ctx)->mods[val - 1], *b = key;

	return a->kind == b->kind && a->runtime == b->runtime && a->dev == b->dev && a->ino == b->ino &&
	       !strcmp(a->path, b->path) && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/* Append the MODULE record of @k, whose path is string id @path.  0 or -errno, nothing appended. */
static int writer__mod_rec(struct report_writer *w, const struct wmod *k, uint32_t path)
{
	int err;

	w->rec.len = 0;
	err = rpt_buf__uv(&w->rec, k->kind);
	err = err ?: rpt_buf__uv(&w->rec, path);
	err = err ?: rpt_buf__uv(&w->rec, k->build_id_len);
	err = err ?: rpt_buf__put(&w->rec, k->build_id, k->build_id_len);
	err = err ?: rpt_buf__uv(&w->rec, k->dev);
	err = err ?: rpt_buf__uv(&w->rec, k->ino);
	/* Appended in version 2, for the one kind that has it: other modules stay as they were. */
	if (k->kind == RPT_MOD_SOURCE)
		err = err ?: rpt_buf__uv(&w->rec, k->runtime);
	return err ?: writer__emit(w, RPT_REC_MODULE);
}

int report_writer__module(struct report_writer *w, const struct rpt_module *m, uint32_t *id)
{
	struct windex *x;
	struct wmod k = {};
	uint32_t path;
	uint64_t h, v;
	int err;

	err = writer__begin(w);
	if (err)
		return err;
	if (!m || !id || m->build_id_len > RPT_BUILD_ID_MAX)
		return -EINVAL;
	x = &w->x;
	/* The path by value: a module outlives the strings a forget drops (report_windex.h). */
	k.path = (char *)(m->path ? m->path : "");
	k.kind = m->kind;
	k.runtime = m->kind == RPT_MOD_SOURCE ? m->runtime : RPT_RT_NONE;
	k.dev = m->dev;
	k.ino = m->ino;
	k.build_id_len = m->build_id_len;
	memcpy(k.build_id, m->build_id, m->build_id_len);
	h = rpt_mod_hash(k.kind, k.runtime, k.path, k.dev, k.ino, k.build_id, k.build_id_len);

	v = htab__find(&x->mod_tab, h, mod_eq, x, &k);
	if (v) {
		x->mods[v - 1].used = true;
		*id = x->mods[v - 1].id;
		return 0;
	}
	if (w->nr_mods >= RPT_ID_LIMIT)
		return -E2BIG;
	err = htab__reserve(&x->mod_tab, 1);
	err = err ?: rpt_grow((void **)&x->mods, &x->cap_mods, x->nr_mods + 1, sizeof(*x->mods));
	err = err ?: writer__string(w, k.path, &path);
	if (err)
		return err;
	k.path = strdup(k.path);
	if (!k.path)
		return -ENOMEM;
	err = writer__mod_rec(w, &k, path);
	if (err) {
		free(k.path);
		return err;
	}
	k.id = *id = w->nr_mods++;
	x->mods[x->nr_mods] = k;
	x->str_bytes += strlen(k.path) + 1;
	return htab__add(&x->mod_tab, h, ++x->nr_mods);	/* reserved: cannot fail */
}

static bool frame_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct wframe *a = &((const struct windex *)ctx)->frames[val - 1], *b = key;

	return a->kind == b->kind && a->module == b->module && a->key == b->key && a->sym == b->sym;
}

/*
 * Append the FRAME record of @f, whose symbol is string id @sym - 1 (0:
 * none).  0 or -errno, nothing appended.
 */
static int writer__frame_rec(struct report_writer *w, const struct rpt_frame *f, uint32_t sym)
{
	int err;

	w->rec.len = 0;
	err = rpt_buf__uv(&w->rec, f->kind);
	err = err ?: rpt_buf__uv(&w->rec, f->module == RPT_NONE ? 0 : (uint64_t)f->module + 1);
	err = err ?: rpt_buf__uv(&w->rec, f->offset);
	/* Kernel frames have addr == offset: the difference costs one byte. */
	err = err ?: rpt_buf__uv(&w->rec, rpt_zz_encode((int64_t)(f->addr - f->offset)));
	err = err ?: rpt_buf__uv(&w->rec, sym);
	err = err ?: rpt_buf__uv(&w->rec, f->sym_off);
	err = err ?: rpt_buf__uv(&w->rec, f->reason);
	return err ?: writer__emit(w, RPT_REC_FRAME);
}

/*
 * The FRAME record's sym field for @f (string id + 1, 0: unnamed) in
 * *@sym: interned now for a new frame (most samples hit known ones), as
 * @k holds it already for an interpreter's.  0 or -errno.
 */
static int frame_symref(struct report_writer *w, const struct rpt_frame *f, const struct wframe *k,
			uint32_t *sym)
{
	int err;

	*sym = k->sym;
	if (*sym || !f->sym)
		return 0;
	err = writer__string(w, f->sym, sym);
	*sym += !err;
	return err;
}

int report_writer__frame(struct report_writer *w, const struct rpt_frame *f, uint32_t *id)
{
	struct windex *x = &w->x;
	struct wframe k = {};
	uint32_t sym = 0;
	uint64_t h, v;
	int err;

	err = writer__begin(w);
	if (err)
		return err;
	if (!f || !id || f->kind > RPT_FRAME_INTERP ||
	    (f->module != RPT_NONE && f->module >= w->nr_mods))
		return -EINVAL;
	k.kind = f->kind;
	k.module = f->module;
	k.key = f->module == RPT_NONE ? f->addr : f->offset;
	/* An interpreter frame's name is part of its identity (struct wframe): interned first. */
	if (f->kind == RPT_FRAME_INTERP && f->sym) {
		err = writer__string(w, f->sym, &sym);
		if (err)
			return err;
		k.sym = sym + 1;
	}
	h = wframe_hash(k.kind, k.module, k.key, k.sym);

	v = htab__find(&x->frame_tab, h, frame_eq, x, &k);
	/*
	 * A frame written before its file answered is written again once it
	 * has a name (or a final reason), under a new id the index keeps:
	 * the first frame's samples stay as they were, the later ones named.
	 */
	if (v && !(x->frames[v - 1].waiting && f->reason != RPT_FILE_NO_ANSWER)) {
		x->frames[v - 1].used = true;
		*id = x->frames[v - 1].id;
		return 0;
	}
	if (v) {
		if (w->nr_frames >= RPT_ID_LIMIT)
			return -E2BIG;
		err = frame_symref(w, f, &k, &sym);
		err = err ?: writer__frame_rec(w, f, sym);
		if (err)
			return err;
		x->frames[v - 1].id = *id = w->nr_frames++;
		x->frames[v - 1].waiting = false;
		x->frames[v - 1].used = true;
		return 0;
	}
	if (w->nr_frames >= RPT_ID_LIMIT)
		return -E2BIG;
	err = htab__reserve(&x->frame_tab, 1);
	err = err ?: rpt_grow((void **)&x->frames, &x->cap_frames, x->nr_frames + 1, sizeof(*x->frames));
	if (err)
		return err;
	err = frame_symref(w, f, &k, &sym);
	err = err ?: writer__frame_rec(w, f, sym);
	if (err)
		return err;
	k.id = *id = w->nr_frames++;
	k.waiting = f->reason == RPT_FILE_NO_ANSWER;
	x->frames[x->nr_frames] = k;
	return htab__add(&x->frame_tab, h, ++x->nr_frames);	/* reserved: cannot fail */
}

static bool stack_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct windex *x = ctx;
	const struct wstack *a = &x->stacks[val - 1];
	const struct stack_key *b = key;

	return a->nr == b->nr &&
	       (!b->nr || !memcmp(x->stack_data + a->off, b->ids, b->nr * sizeof(*b->ids)));
}

/* Append the STACK record of @k.  0 or -errno, nothing appended. */
static int writer__stack_rec(struct report_writer *w, const struct stack_key *k)
{
	uint32_t i;
	int err;

	w->rec.len = 0;
	err = rpt_buf__uv(&w->rec, k->nr);
	for (i = 0; i < k->nr && !err; i++)
		err = rpt_buf__uv(&w->rec, k->ids[i]);
	return err ?: writer__emit(w, RPT_REC_STACK);
}

int report_writer__stack(struct report_writer *w, const uint32_t *frames, uint32_t nr, uint32_t *id)
{
	struct stack_key k = { frames, nr };
	struct windex *x = &w->x;
	uint64_t h, v;
	uint32_t i;
	int err;

	err = writer__begin(w);
	if (err)
		return err;
	if (!id || (nr && !frames))
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (frames[i] >= w->nr_frames)
			return -EINVAL;
	h = wstack_hash(frames, nr);

	v = htab__find(&x->stack_tab, h, stack_eq, x, &k);
	if (v) {
		x->stacks[v - 1].used = true;
		*id = x->stacks[v - 1].id;
		return 0;
	}
	if (w->nr_stacks >= RPT_ID_LIMIT)
		return -E2BIG;
	if (nr > SIZE_MAX - x->nr_stack_data)
		return -E2BIG;
	err = htab__reserve(&x->stack_tab, 1);
	err = err ?: rpt_grow((void **)&x->stacks, &x->cap_stacks, x->nr_stacks + 1, sizeof(*x->stacks));
	err = err ?: rpt_grow((void **)&x->stack_data, &x->cap_stack_data,
			      x->nr_stack_data + nr, sizeof(*x->stack_data));
	err = err ?: writer__stack_rec(w, &k);
	if (err)
		return err;
	if (nr)
		memcpy(x->stack_data + x->nr_stack_data, frames, nr * sizeof(*frames));
	*id = w->nr_stacks++;
	x->stacks[x->nr_stacks] = (struct wstack){ x->nr_stack_data, nr, *id, false };
	x->nr_stack_data += nr;
	return htab__add(&x->stack_tab, h, ++x->nr_stacks);	/* reserved: cannot fail */
}

static bool cgroup_eq(const void *ctx, const void *key, uint64_t val)
{
	(void)ctx;
	return val == *(const uint64_t *)key;
}

int report_writer__cgroup(struct report_writer *w, uint64_t id, const char *path)
{
	int err;

	err = writer__begin(w);
	if (err || htab__find(&w->cgroups, hash_fin(id), cgroup_eq, NULL, &id))
		return err;
	/* The reader refuses a file naming more: the rest keep their bare ids. */
	if (htab__nr(&w->cgroups) >= RPT_CGROUP_MAX)
		return -E2BIG;
	w->rec.len = 0;
	/* Room in the set first, so a record written is always remembered. */
	err = htab__reserve(&w->cgroups, 1);
	err = err ?: rpt_cgroup__write(&w->rec, id, path);
	err = err ?: writer__emit(w, RPT_REC_CGROUP);
	return err ?: htab__add(&w->cgroups, hash_fin(id), id);
}

/*
 * Count @pid among the file's distinct pids.  The bits are reserved (not
 * touched) at the first sample; without them, or for a pid past the
 * kernel's limit, the pid goes uncounted: a statistic, not worth a sample.
 */
static void writer__note_pid(struct report_writer *w, uint32_t pid)
{
	void *p;

	if (!w->pid_bits) {
		p = mmap(NULL, RPT_PID_BITS / 8, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return;
		w->pid_bits = p;
	}
	if (pid >= RPT_PID_BITS || (w->pid_bits[pid / 8] & (1u << (pid % 8))))
		return;
	w->pid_bits[pid / 8] |= (uint8_t)(1u << (pid % 8));
	w->nr_pids++;
}

int report_writer__sample(struct report_writer *w, const struct rpt_sample *s)
{
	uint32_t comm;
	int err;

	err = writer__begin(w);
	if (err)
		return err;
	if (!s || s->stack >= w->nr_stacks)
		return -EINVAL;
	err = writer__string(w, s->comm ? s->comm : "", &comm);
	if (err)
		return err;
	w->rec.len = 0;
	/*
	 * Ring-buffer order is only nearly time order, hence a signed delta;
	 * tid - pid is 0 for single-threaded processes.
	 */
	err = rpt_buf__uv(&w->rec, rpt_zz_encode((int64_t)(s->time - w->prev_time)));
	err = err ?: rpt_buf__uv(&w->rec, s->pid);
	err = err ?: rpt_buf__uv(&w->rec, rpt_zz_encode((int64_t)s->tid - (int64_t)s->pid));
	err = err ?: rpt_buf__uv(&w->rec, s->cpu);
	err = err ?: rpt_buf__uv(&w->rec, s->cgroup);
	err = err ?: rpt_buf__uv(&w->rec, comm);
	err = err ?: rpt_buf__uv(&w->rec, s->stack);
	err = err ?: writer__emit(w, RPT_REC_SAMPLE);
	if (err)
		return err;
	w->prev_time = s->time;
	w->nr_samples++;
	writer__note_pid(w, s->pid);
	/*
	 * Churn's one-off stacks are let go by age too, not only at the cap:
	 * what a minute did not find again is unlikely to come back, and a
	 * recorder's memory stays near its working set.  A small index is
	 * left alone: it costs little and saves rewriting.
	 */
	if (!w->index_due)
		w->index_due = s->time + w->index_age;
	else if (s->time >= w->index_due) {
		w->index_due = s->time + w->index_age;
		w->forget_due = windex__bytes(&w->x) > w->index_max / 16;
	}
	return 0;
}

int report_writer__flush(struct report_writer *w)
{
	size_t bound, csize;
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->pending.len)
		return 0;
	bound = ZSTD_compressBound(w->pending.len);
	w->zbuf.len = 0;
	err = rpt_buf__reserve(&w->zbuf, RPT_BLOCK_HDR_LEN + bound);
	if (err)
		return err;
	csize = ZSTD_compress2(w->cctx, w->zbuf.data + RPT_BLOCK_HDR_LEN, bound,
			       w->pending.data, w->pending.len);
	/* Nothing reached the file: the pending records stay for the next try. */
	if (ZSTD_isError(csize))
		return ZSTD_getErrorCode(csize) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
	if (csize > RPT_BLOCK_MAX)
		return -E2BIG;
	rpt_block_hdr_fill(w->zbuf.data, (uint32_t)csize, (uint32_t)w->pending.len);
	err = write_all(w->fd, w->zbuf.data, RPT_BLOCK_HDR_LEN + csize);
	if (err) {
		/* Part of the block may be in the file: only truncation can follow. */
		w->err = err;
		return err;
	}
	w->bytes += RPT_BLOCK_HDR_LEN + csize;
	w->flushed_samples = w->nr_samples;
	w->pending.len = 0;
	w->prev_time = w->prev_off_time = 0;
	return 0;
}

uint64_t report_writer__bytes(const struct report_writer *w)
{
	return w ? w->bytes : 0;
}

uint64_t report_writer__samples_flushed(const struct report_writer *w)
{
	return w ? w->flushed_samples : 0;
}

uint64_t report_writer__nr_pids(const struct report_writer *w)
{
	return w ? w->nr_pids : 0;
}

void report_writer__set_index_max(struct report_writer *w, size_t bytes, uint64_t age_ns)
{
	if (w) {
		w->index_max = bytes;
		w->index_age = age_ns;
		w->index_due = 0;
	}
}

size_t report_writer__index_bytes(const struct report_writer *w)
{
	return w ? windex__bytes(&w->x) : 0;
}

uint64_t report_writer__forgets(const struct report_writer *w)
{
	return w ? w->x.forgets : 0;
}

uint64_t report_writer__time_base(const struct report_writer *w)
{
	return w ? w->time_base : 0;
}

int report_writer__close(struct report_writer *w, const struct rpt_header *final)
{
	static const struct rpt_header zero;
	struct rpt_header end;
	uint64_t end_off = 0;
	int err;

	if (!w)
		return -EINVAL;
	/* The OFFCPU records and their ns are the file's own, as its samples are. */
	end = final ? *final : zero;
	end.offcpu[RPT_OC_RECORDS] = w->nr_offcpu;
	end.offcpu[RPT_OC_NS] = w->offcpu_ns;
	final = &end;
	/*
	 * A commit protocol: the samples are on disk before the END record is
	 * written, so an END record that survives vouches for everything
	 * before it.
	 */
	err = report_writer__flush(w);
	err = err ?: sync_fd(w->fd);
	if (!err) {
		end_off = w->bytes;
		w->rec.len = 0;
		err = rpt_end__write(&w->rec, final, w->nr_samples);
		err = err ?: writer__emit(w, RPT_REC_END);
		err = err ?: report_writer__flush(w);
		err = err ?: sync_fd(w->fd);
		/* Best effort: no END record, whole or partial, after a failure. */
		if (err && ftruncate(w->fd, (off_t)end_off) && errno != EINVAL)
			pr_debug("report: cannot drop the failed END block: %s\n", strerror(errno));
	}
	if (close(w->fd) && !err && errno != EINTR)
		err = -errno;
	w->fd = -1;
	writer__free(w);
	return err;
}

void report_writer__abort(struct report_writer *w)
{
	if (w)
		writer__free(w);
}
