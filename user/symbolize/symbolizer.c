// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer: the modules, and a file module's symbols.
 *
 * A module is one identity, created on first sight and kept for the
 * symbolizer's life so that frames (and the caller's report ids) can point
 * to it: a mapped file by (dev, ino, mtime), a kernel image by name,
 * [vdso] and friends by name, and one module for all anonymous memory.
 *
 * A file module is a version of a file: the same inode written in place
 * has another mtime, so it is another module.  What a file module holds is
 * an image, the content's symbols, found by build-id (imgcache.h): copies
 * of a binary (other inodes, other containers, a file touched but not
 * changed) share one image, so a library is indexed once however many
 * processes and paths map it.  A file without a build-id has an image of
 * its own, by its (dev, ino, mtime).
 *
 * A file is read when it is mapped (symbolizer__pin, at the MAP event),
 * while the mapping surely exists: its build-id then, its symbols on first
 * use.  The fd is kept, up to max_fds of them, so a file deleted or
 * replaced at its path later still symbolizes as what ran.  Without an fd
 * the file is reopened through a live process's view, and accepted only
 * with the same (dev, ino, mtime) and build-id.  At most max_files images,
 * taking at most max_mem bytes, keep their symbols in memory; the least
 * recently used is dropped and reloaded if needed again.
 *
 * Symbol names handed out must outlive an image's eviction, so the names
 * of ELF symbols are interned in the image cache; kallsyms names live as
 * long as the symbolizer already.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/util.h"
#include "symbolize/debuginfod.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"
#include "symbolize/imgcache.h"
#include "symbolize/jit/jitmap.h"
#include "symbolize/kernel/kallsyms.h"
#include "symbolize/symbolizer_int.h"

#define MAX_FILES_DEFAULT	4096
/* A few hundred libraries' symbols; libLLVM-14's take about 12 MiB. */
#define MAX_MEM_DEFAULT		(512ul << 20)
/* Well below the usual 1024 soft RLIMIT_NOFILE, whatever else is open. */
#define MAX_FDS_DEFAULT		256
/* File modules (one per file version seen): a few hundred bytes each and their path. */
#define MAX_MODS_DEFAULT	8192
/*
 * Opening a file can fail because of the process we went through (it
 * exited, it is in another mount namespace we cannot enter), so another
 * process mapping the same file may succeed.  Retries are bounded: a file
 * nobody can open costs a few syscalls in total, not a few per frame.
 */
#define MAX_OPEN_ATTEMPTS	8

_Static_assert(FILEID_BUILD_ID_MAX == RPT_BUILD_ID_MAX, "a build-id read is a build-id reported");

struct smod *module_add(struct symbolizer *s, struct htab *tab, uint64_t h, uint32_t kind,
			char *path, size_t len)
{
	struct smod *m;

	m = path ? calloc(1, sizeof(*m)) : NULL;
	if (!m || htab__add(tab, h, (uint64_t)(uintptr_t)m)) {
		free(path);
		free(m);
		return NULL;
	}
	m->path = path;
	m->path_len = len;
	m->pub.rpt.kind = kind;
	m->pub.rpt.path = path;
	fd_slot__init(&m->fd);
	m->next = s->all_mods;
	s->all_mods = m;
	return m;
}

/* Forget the hung file system whose job is @m's, if any. */
static void hung_forget(struct symbolizer *s, const struct smod *m)
{
	for (int i = 0; i < SYM_HUNG_DEVS; i++)
		if (s->hung_devs[i].m == m)
			s->hung_devs[i] = (struct hung_dev){ 0 };
}

/* Give up @m's job still running, if any: dropped when it ends. */
static void job_abandon(struct symbolizer *s, struct smod *m)
{
	hung_forget(s, m);
	if (m->job) {
		dinfod_abandon(s, m->job);
		offload__abandon(s->pool, &m->job->job);
	}
	m->job = NULL;
}

void modules_free(struct symbolizer *s)
{
	struct smod *m, *next;

	for (m = s->all_mods; m; m = next) {
		next = m->next;
		job_abandon(s, m);
		fd_cache__drop(&s->fds, &m->fd);
		free(m->path);
		free(m);
	}
	s->all_mods = NULL;
	htab__free(&s->files);
	htab__free(&s->named);
}

struct smod *named_module(struct symbolizer *s, uint32_t kind, const char *name, bool bracket)
{
	size_t len = strlen(name), plen = len + (bracket ? 2 : 0), pos = HTAB_START;
	uint64_t h = hash_u64(hash_bytes(0, name, len), kind), v;
	struct smod *m;
	char *path;

	while (htab__next(&s->named, h, &pos, &v)) {
		m = (struct smod *)(uintptr_t)v;
		if (m->pub.rpt.kind == kind && m->path_len == plen &&
		    !memcmp(m->path + (bracket ? 1 : 0), name, len))
			return m;
	}
	path = malloc(plen + 1);
	if (path)
		snprintf(path, plen + 1, bracket ? "[%s]" : "%s", name);
	return module_add(s, &s->named, h, kind, path, plen);
}

static uint64_t file_hash(uint64_t dev, uint64_t ino, int64_t mtime_sec, uint32_t mtime_nsec)
{
	return hash_u64(hash_u64(hash_u64(hash_u64(0, dev), ino), (uint64_t)mtime_sec), mtime_nsec);
}

/* Drop file module @m: out of the tables, its fd closed, freed. */
static void module_evict(struct symbolizer *s, struct smod *m)
{
	struct smod **pp;

	lru__unlink(&s->file_lru, &m->lru);
	htab__del(&s->files, file_hash(m->pub.rpt.dev, m->pub.rpt.ino, m->mtime_sec, m->mtime_nsec),
		  (uint64_t)(uintptr_t)m);
	/* O(modules), once per module past the cap. */
	for (pp = &s->all_mods; *pp && *pp != m; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = m->next;
	job_abandon(s, m);
	fd_cache__drop(&s->fds, &m->fd);
	imgcache__put(&s->images, m->img);
	free(m->path);
	free(m);
	s->nr_file_mods--;
	s->mods_evicted++;
}

/*
 * Drop the least recently used file module but @keep (the one just made)
 * that no kept frame holds (symbolizer__hold).  Held ones are passed
 * over: the cap is exceeded for a while, by at most the modules of the
 * frames kept (ingest's deferred samples, a bounded FIFO).
 */
static void evict_lru(struct symbolizer *s, const struct smod *keep)
{
	struct lru_node *n;
	struct smod *m;

	for (n = s->file_lru.tail; n; n = n->prev) {
		m = lru_entry(n, struct smod, lru);
		if (m != keep && !m->holds) {
			module_evict(s, m);
			return;
		}
	}
}

void module_keep(struct symbolizer *s, struct smod *m)
{
	if (m->kept)
		return;
	lru__unlink(&s->file_lru, &m->lru);
	s->nr_file_mods--;
	m->kept = true;
}

struct smod *file_module(struct symbolizer *s, const struct mapping *mp)
{
	uint64_t h = file_hash(mp->dev, mp->ino, mp->mtime_sec, mp->mtime_nsec), v;
	const char *path = mp->path ? mp->path : "";
	size_t pos = HTAB_START;
	struct smod *m;

	while (htab__next(&s->files, h, &pos, &v)) {
		m = (struct smod *)(uintptr_t)v;
		if (m->pub.rpt.dev == mp->dev && m->pub.rpt.ino == mp->ino &&
		    m->mtime_sec == mp->mtime_sec && m->mtime_nsec == mp->mtime_nsec) {
			if (!m->kept)
				lru__touch(&s->file_lru, &m->lru);
			return m;
		}
	}
	/* The first path seen names it; another process may see another. */
	m = module_add(s, &s->files, h, RPT_MOD_FILE, strdup(path), strlen(path));
	if (!m)
		return NULL;
	m->pub.rpt.dev = mp->dev;
	m->pub.rpt.ino = mp->ino;
	m->mtime_sec = mp->mtime_sec;
	m->mtime_nsec = mp->mtime_nsec;
	lru__push_front(&s->file_lru, &m->lru);
	if (++s->nr_file_mods > s->max_mods)
		evict_lru(s, m);
	return m;
}

/* @m's identity is now its image's: what reports say of it. */
static void set_identity(struct smod *m)
{
	struct rpt_module *r = &m->pub.rpt;

	memset(r->build_id, 0, sizeof(r->build_id));
	memcpy(r->build_id, m->img->build_id, m->img->build_id_len);
	r->build_id_len = (uint32_t)m->img->build_id_len;
}

/*
 * A failed attempt on @m through @pid.  -ENOEXEC (not a regular ELF file)
 * and -E2BIG (over elfsym's caps) are final: the same bytes fail again.
 * That is @m's file's fault, not its content's: a copy with the same
 * build-id still gets its own chance.
 */
uint32_t note_failure(struct smod *m, uint32_t pid, int err)
{
	m->fail_reason = err == -ESTALE ? RPT_BUILD_ID_MISMATCH : RPT_FILE_UNREADABLE;
	m->fail_err = err;
	m->fail_pid = pid;
	m->fail_final = err == -ENOEXEC || err == -E2BIG;
	m->attempts++;
	return m->fail_reason;
}

/*
 * Whether the last failure on @m may go otherwise through @pid.  A file
 * that did not answer is not asked again while it keeps its job waiting
 * (a worker refused it: at once).
 */
static bool may_retry(const struct smod *m, uint32_t pid)
{
	if (m->fail_reason == RPT_FILE_NO_ANSWER)
		return !m->job;
	return m->fail_reason == RPT_OK ||
	       (!m->fail_final && m->fail_pid != pid && m->attempts < MAX_OPEN_ATTEMPTS);
}

/*
 * Take @fd, a checked open of @m's file whose build-id is @id (@len bytes,
 * 0: none): learn @m's identity from it, or check it is the content
 * already known, and keep it open.  @fd is consumed.  0 or -errno:
 * -ESTALE (another build-id).
 */
static int module_adopt_id(struct symbolizer *s, struct smod *m, int fd, const uint8_t *id,
			   size_t len)
{
	struct image_key key = {
		.build_id = id, .build_id_len = len, .dev = m->pub.rpt.dev, .ino = m->pub.rpt.ino,
		.mtime_sec = m->mtime_sec, .mtime_nsec = m->mtime_nsec,
	};
	int err;

	if (m->img) {
		if (key.build_id_len != m->img->build_id_len ||
		    memcmp(id, m->img->build_id, key.build_id_len)) {
			err = -ESTALE;
			goto fail;
		}
	} else {
		m->img = imgcache__get(&s->images, &key);
		if (!m->img) {
			err = -ENOMEM;
			goto fail;
		}
		set_identity(m);
	}
	fd_cache__put(&s->fds, &m->fd, fd);
	return 0;
fail:
	close(fd);
	return err;
}

int module_adopt(struct symbolizer *s, struct smod *m, int fd)
{
	uint8_t id[FILEID_BUILD_ID_MAX];
	size_t len;
	int err;

	err = fileid__build_id(fd, id, &len);
	if (err) {
		close(fd);
		return err;
	}
	return module_adopt_id(s, m, fd, id, len);
}

/* What @j, an open of @m's file that ended, made: @m's fd and identity.  0 or -errno, noted. */
static int adopt_open(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	int err = j->err;

	if (!err) {
		err = module_adopt_id(s, m, j->fd, j->id, j->id_len);
		j->fd = -1;	/* consumed */
	}
	if (err) {
		pr_debug("symbolizer: '%s': pid %u: %s\n", m->path, j->pid,
			 err == -ESTALE ? "another file is at that path" : strerror(-err));
		note_failure(m, j->pid, err);
		return err;
	}
	m->fail_reason = RPT_OK;
	m->attempts = 0;
	return 0;
}

/* What @j, a read of @m's symbols that ended, made: @m's image loaded.  0 or -errno, noted. */
static int adopt_syms(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	if (!j->es) {
		pr_debug("symbolizer: '%s': %s\n", m->path, strerror(-j->err));
		note_failure(m, j->pid, j->err);
		return j->err;
	}
	if (m->img->es)
		return 0;	/* loaded from a copy meanwhile */
	if (!image__matches(m->img, j->es)) {
		/* Rewritten in place since it was opened: this fd no longer holds what ran. */
		pr_debug("symbolizer: '%s': the file changed under us\n", m->path);
		fd_cache__drop(&s->fds, &m->fd);
		note_failure(m, j->pid, -ESTALE);
		return -ESTALE;
	}
	m->fail_reason = RPT_OK;
	m->attempts = 0;
	imgcache__attach(&s->images, m->img, j->es, j->dbg);
	j->es = j->dbg = NULL;	/* the image's now */
	return 0;
}

/* Take what @j, @m's job that ended, made, and free it.  0 or -errno, noted. */
static int job_adopt(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	int err = j->kind == FILE_JOB_SYMS ? adopt_syms(s, m, j) :
		  j->kind == FILE_JOB_DEBUGINFOD ? dinfod_adopt(s, m, j) : adopt_open(s, m, j);

	m->watch_job = NULL;	/* @j's address may be the next job's */
	file_job__free(j);
	return err;
}

/*
 * The slot of file system @dev in s->hung_devs (0 is no device: a free
 * slot is found by asking for 0), or -1.
 */
static int hung_slot(const struct symbolizer *s, uint64_t dev)
{
	for (int i = 0; i < SYM_HUNG_DEVS; i++)
		if (s->hung_devs[i].dev == dev)
			return i;
	return -1;
}

/* Whether @m has no job running; one that ended is adopted first (its file system answers again). */
static bool job_idle(struct symbolizer *s, struct smod *m)
{
	struct file_job *j = m->job;

	if (!j)
		return true;
	if (offload__wait(s->pool, &j->job, 0))
		return false;
	m->job = NULL;
	hung_forget(s, m);
	job_adopt(s, m, j);
	return true;
}

/*
 * Whether file system @dev still looks hung: the job that marked it has
 * not ended (else it is adopted here, whatever file it was for) and its
 * worker has used no CPU since the last look.  A worker whose clock moved
 * reads a large file slowly: the file system answers, the mark goes.
 */
static bool dev_hung(struct symbolizer *s, uint64_t dev)
{
	int i = dev ? hung_slot(s, dev) : -1;
	struct hung_dev *h;

	if (i < 0)
		return false;
	h = &s->hung_devs[i];
	if (job_idle(s, h->m))
		return false;	/* adopted, the slot forgotten */
	if (!offload__stalled(s->pool, &h->m->job->job, &h->watch, clock_ns(CLOCK_MONOTONIC), 1)) {
		*h = (struct hung_dev){ 0 };
		return false;
	}
	return true;
}

/*
 * Mark @m's file system hung after its job @j did not end in time; its
 * worker's clock is taken now, and the first look that finds it moved
 * (a slow file being read, not a file system that does not answer)
 * forgets the mark (dev_hung).
 */
static void dev_mark(struct symbolizer *s, struct smod *m, struct file_job *j)
{
	struct hung_dev h = { .dev = m->pub.rpt.dev, .m = m };
	int i;

	if (!h.dev || hung_slot(s, h.dev) >= 0 || (i = hung_slot(s, 0)) < 0)
		return;
	offload__stalled(s->pool, &j->job, &h.watch, clock_ns(CLOCK_MONOTONIC), 1);
	s->hung_devs[i] = h;
}

/* How long the recorder's thread waits for a file before going on without it. */
#define FILE_WAIT_NS	(100 * 1000000ull)

/*
 * Run @j, @m's work through @pid, and adopt what it made: 0 or -errno,
 * noted in @m.  A job that did not end in time stays @m's (its frames
 * say RPT_FILE_NO_ANSWER until it ends, and nothing waits on it again);
 * one no worker could take is dropped (tried again next time).
 */
static int job_start(struct symbolizer *s, struct smod *m, uint32_t pid, struct file_job *j)
{
	int err;

	if (!j) {
		note_failure(m, pid, -ENOMEM);
		return -ENOMEM;
	}
	/* Its file system left a job hanging: not asked (a retry comes when that job ends). */
	if (dev_hung(s, m->pub.rpt.dev)) {
		file_job__free(j);
		err = -ETIMEDOUT;
		goto no_answer;
	}
	err = offload__run(s->pool, &j->job, FILE_WAIT_NS);
	if (!err)
		return job_adopt(s, m, j);
	if (err == -ETIMEDOUT) {
		m->job = j;
		dev_mark(s, m, j);
		pr_debug("symbolizer: '%s': pid %u: no answer in %llu ms: its frames go without names\n",
			 m->path, pid, FILE_WAIT_NS / 1000000ull);
	} else {
		file_job__free(j);
	}
no_answer:
	s->no_answer++;
	m->fail_reason = RPT_FILE_NO_ANSWER;
	m->fail_err = err;
	m->fail_pid = pid;
	return err;
}

/* Open @m's file through @pid's view and adopt it.  0 or -errno, remembered. */
int module_open(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp)
{
	if (!may_retry(m, pid))
		return m->fail_err;
	return job_start(s, m, pid, file_job__open(s, pid, mp, FILE_JOB_OPEN_ID));
}

/* Open the jitdump @mp maps in process (@pid, @pstart) and give it to the JIT reader. */
static int pin_jitdump(struct symbolizer *s, uint32_t pid, uint64_t pstart,
		       const struct mapping *mp)
{
	struct file_job *j = file_job__open(s, pid, mp, FILE_JOB_OPEN);
	int err, fd;

	if (!j)
		return -ENOMEM;
	err = offload__run(s->pool, &j->job, FILE_WAIT_NS);
	if (err == -ETIMEDOUT)
		offload__abandon(s->pool, &j->job);
	if (err) {
		s->no_answer++;
		if (err != -ETIMEDOUT)
			file_job__free(j);
		return err;
	}
	fd = j->fd;
	err = j->err;
	j->fd = -1;
	file_job__free(j);
	return fd < 0 ? err : jitmap__add_jitdump(s->jit, pid, pstart, fd, mp->path);
}

int symbolizer__pin(struct symbolizer *s, uint32_t pid, uint64_t pstart, const struct mapping *mp)
{
	struct smod *m;

	if (!mp || mp->kind != MAPPING_FILE)
		return 0;
	/* A JIT maps its jitdump file so that profilers find it: read it, it is no ELF. */
	if (s->jit && jitmap__is_jitdump_path(mp->path))
		return pin_jitdump(s, pid, pstart, mp);
	m = file_module(s, mp);
	if (!m)
		return -ENOMEM;
	/* Not answered yet: asked once, never waited on again. */
	if (!job_idle(s, m))
		return 0;
	if (m->fd.fd >= 0) {
		fd_cache__touch(&s->fds, &m->fd);
		return 0;
	}
	/* Known and loaded: an fd would only cost a slot. */
	if (m->img && m->img->es)
		return 0;
	return module_open(s, m, pid, mp);
}

/*
 * Read @m's image's symbols through @m's fd, and its separate debug
 * file's when one has more: by build-id under the debug root, else by
 * .gnu_debuglink next to the binary as @pid sees it (inside its root; pid
 * 0: a file the user named, as we see it), else under the debug root
 * (debugfile.h), all in a job (fileload.c).  RPT_OK, or why not.
 */
static uint32_t image_load(struct symbolizer *s, struct smod *m, uint32_t pid)
{
	return job_start(s, m, pid, file_job__syms(s, m, pid)) ? m->fail_reason : RPT_OK;
}

/* Make @m's symbols available: RPT_OK, or why not. */
uint32_t file_load(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp)
{
	uint32_t reason;

	if (!job_idle(s, m))
		return RPT_FILE_NO_ANSWER;
	if (!m->img || !m->img->es) {
		if (!may_retry(m, pid))
			return m->fail_reason;
		if (m->fd.fd >= 0)
			fd_cache__touch(&s->fds, &m->fd);
		else if (!mp)
			return RPT_FILE_NO_ANSWER;	/* a retry: opening it anew needs the mapping */
		else if (module_open(s, m, pid, mp))
			return m->fail_reason;
	}
	/* Opening it may have found the content loaded already, by a copy. */
	if (!m->img->es) {
		reason = image_load(s, m, pid);
		if (reason != RPT_OK)
			return reason;
	}
	imgcache__touch(&s->images, m->img);
	return RPT_OK;
}

void file_frame(struct symbolizer *s, uint32_t pid, const struct mapping *mp, uint64_t ip,
		struct sym_frame *out)
{
	struct smod *m;

	out->offset = mapping__file_offset(mp, ip);
	m = file_module(s, mp);
	if (!m) {
		out->reason = RPT_FILE_UNREADABLE;
		return;
	}
	out->module = &m->pub;
	file_name(s, m, pid, mp, out);
}

/* Name @out (its offset set) from @m's loaded image: RPT_OK, or why not. */
static uint32_t image_name(struct symbolizer *s, struct smod *m, struct sym_frame *out)
{
	const struct elfsym *syms = image__syms(m->img);
	const struct elfsym_sym *sym;
	uint64_t vaddr;
	const char *name;

	if (!elfsym__nr_syms(syms))
		return RPT_NO_SYMBOLS;
	/*
	 * pgoff is real: offset -> the PT_LOAD holding it -> vaddr -> symbol.
	 * The program headers are the mapped file's: a debug file's describe
	 * the same addresses but not its own offsets.
	 */
	if (elfsym__offset_to_vaddr(m->img->es, out->offset, &vaddr))
		return RPT_OUTSIDE_SYMBOL;
	sym = elfsym__lookup(syms, vaddr);
	if (sym) {
		name = imgcache__sym_name(&s->images, m->img, sym);
	} else if (syms != m->img->es && (sym = elfsym__lookup(m->img->es, vaddr))) {
		/* Only in the binary: its PLT stubs (a debug file's .plt has no bytes). */
		name = imgcache__name(&s->images, sym->name);
	} else {
		return RPT_OUTSIDE_SYMBOL;
	}
	if (!name)
		return RPT_FILE_UNREADABLE;	/* ENOMEM: nothing better to say */
	out->sym = name;
	out->sym_off = vaddr - sym->addr;
	return RPT_OK;
}

void file_name(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp,
	       struct sym_frame *out)
{
	out->sym = NULL;
	out->sym_off = 0;
	out->reason = file_load(s, m, pid, mp);
	if (out->reason != RPT_OK)
		return;
	out->reason = image_name(s, m, out);
	/* Not from the file nor a local debug file: maybe from debuginfod's. */
	if (out->reason == RPT_NO_SYMBOLS || out->reason == RPT_OUTSIDE_SYMBOL) {
		out->reason = dinfod_ask(s, m, out->reason);
		if (out->reason == RPT_OK)
			out->reason = image_name(s, m, out);
	}
}

/* Load the kernel's symbols into @arg's ks and text_addr; @arg, or NULL + errno. */
static void *ks_load(void *arg)
{
	struct symbolizer *s = arg;

	s->ks = ksyms__load(s->ks_path);
	if (!s->ks)
		return NULL;
	if (ksyms__find(s->ks, "_text", &s->text_addr))
		s->text_addr = 0;
	return s;
}

struct ksyms *symbolizer_ksyms(struct symbolizer *s)
{
	void *ret = NULL;

	if (s->ks_loading) {
		s->ks_loading = false;
		pthread_join(s->ks_thread, &ret);
		if (!ret)
			pr_warn("symbolizer: '%s': cannot load kernel symbols: kernel frames stay unnamed\n",
				s->ks_path);
	}
	return s->ks;
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	static const struct symbolizer_opts defaults;
	struct symbolizer *s;
	int err;

	if (!opts)
		opts = &defaults;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	imgcache__init(&s->images, opts->max_files ? opts->max_files : MAX_FILES_DEFAULT,
		       opts->max_mem ? opts->max_mem : MAX_MEM_DEFAULT, opts->no_demangle);
	s->fds.cap = opts->max_fds ? opts->max_fds : MAX_FDS_DEFAULT;
	s->max_mods = opts->max_modules ? opts->max_modules : MAX_MODS_DEFAULT;
	s->procs = opts->procs;
	s->pool = opts->offload;
	s->test_gate_fd = -1;
	s->dinfod = dinfod__enabled();
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	s->debug_root = strdup(opts->debug_root ? opts->debug_root : "/usr/lib/debug");
	if (!s->proc_root || !s->debug_root) {
		err = ENOMEM;
		goto fail;
	}
	if (!opts->no_jit) {
		struct jitmap_opts jo = { .proc_root = s->proc_root, .pool = s->pool };

		s->jit = jitmap__new(&jo);
		if (!s->jit) {
			err = errno;
			goto fail;
		}
	}
	s->anon.pub.rpt.kind = RPT_MOD_ANON;
	s->anon.pub.rpt.path = "[anon]";
	if (!opts->no_kernel) {
		s->vmlinux = calloc(1, sizeof(*s->vmlinux));
		if (!s->vmlinux) {
			err = ENOMEM;
			goto fail;
		}
		s->vmlinux->pub.rpt.kind = RPT_MOD_KERNEL;
		s->vmlinux->pub.rpt.path = "[kernel.kallsyms]";
		s->ks_path = opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
		/* Beside the BPF side's loading: /proc/kallsyms takes ~45 ms to read. */
		if (opts->kernel_async && !pthread_create(&s->ks_thread, NULL, ks_load, s)) {
			s->ks_loading = true;
		} else if (!ks_load(s)) {
			err = errno;
			pr_warn("symbolizer: '%s': cannot load kernel symbols: %s\n", s->ks_path,
				strerror(err));
			goto fail;
		}
	}
	return s;
fail:
	symbolizer__free(s);
	errno = err;
	return NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dinfod)
		dinfod__stop();	/* fetches still running end at their next progress call */
	modules_free(s);
	dinfod_free(s);
	imgcache__free(&s->images);
	elfsym__free(s->vdso);
	free(s->elf_path);
	free(s->hints);
	jitmap__free(s->jit);
	free(s->vmlinux);
	ksyms__free(symbolizer_ksyms(s));
	free(s->proc_root);
	free(s->debug_root);
	free(s);
}

uint64_t symbolizer__text_addr(struct symbolizer *s)
{
	symbolizer_ksyms(s);
	return s->text_addr;
}

int symbolizer__kernel_restricted(struct symbolizer *s)
{
	return ksyms__restricted(symbolizer_ksyms(s));
}

size_t symbolizer__loaded_bytes(const struct symbolizer *s)
{
	return imgcache__loaded_bytes(&s->images);
}

size_t symbolizer__nr_loaded(const struct symbolizer *s)
{
	return imgcache__nr_loaded(&s->images);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = (struct symbolizer_stats){
		.file_modules = s->nr_file_mods, .modules_evicted = s->mods_evicted,
		.named_modules = htab__nr(&s->named),
		.images_loaded = s->images.nr_loaded, .loaded_bytes = s->images.loaded_bytes,
		.fds = s->fds.nr, .names = strtab__nr(&s->images.names),
		.images = imgcache__nr_images(&s->images), .no_answer = s->no_answer,
	};
}
