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
#include "symbolize/debugfile.h"
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

void modules_free(struct symbolizer *s)
{
	struct smod *m, *next;

	for (m = s->all_mods; m; m = next) {
		next = m->next;
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
	fd_cache__drop(&s->fds, &m->fd);
	imgcache__put(&s->images, m->img);
	free(m->path);
	free(m);
	s->nr_file_mods--;
	s->mods_evicted++;
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
		module_evict(s, lru_entry(s->file_lru.tail, struct smod, lru));
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

/* Whether the last failure on @m may go otherwise through @pid. */
static bool may_retry(const struct smod *m, uint32_t pid)
{
	return m->fail_reason == RPT_OK ||
	       (!m->fail_final && m->fail_pid != pid && m->attempts < MAX_OPEN_ATTEMPTS);
}

/*
 * Take @fd, a checked open of @m's file: learn @m's identity from it, or
 * check it is the content already known, and keep it open.  @fd is
 * consumed.  0 or -errno: -ESTALE (another build-id), -ENOEXEC (not ELF).
 */
int module_adopt(struct symbolizer *s, struct smod *m, int fd)
{
	uint8_t id[FILEID_BUILD_ID_MAX];
	struct image_key key = {
		.build_id = id, .dev = m->pub.rpt.dev, .ino = m->pub.rpt.ino,
		.mtime_sec = m->mtime_sec, .mtime_nsec = m->mtime_nsec,
	};
	int err;

	err = fileid__build_id(fd, id, &key.build_id_len);
	if (err)
		goto fail;
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

/* Open @m's file through @pid's view and adopt it.  0 or -errno, remembered. */
int module_open(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp)
{
	int fd, err;

	if (!may_retry(m, pid))
		return m->fail_err;
	fd = fileid__open_mapped(s->proc_root, s->procs, pid, mp);
	err = fd < 0 ? fd : module_adopt(s, m, fd);
	if (err) {
		pr_debug("symbolizer: '%s': pid %u: %s\n", m->path, pid,
			 err == -ESTALE ? "another file is at that path" : strerror(-err));
		note_failure(m, pid, err);
		return err;
	}
	m->fail_reason = RPT_OK;
	m->attempts = 0;
	return 0;
}

int symbolizer__pin(struct symbolizer *s, uint32_t pid, uint64_t pstart, const struct mapping *mp)
{
	struct smod *m;
	int fd;

	if (!mp || mp->kind != MAPPING_FILE)
		return 0;
	/* A JIT maps its jitdump file so that profilers find it: read it, it is no ELF. */
	if (s->jit && jitmap__is_jitdump_path(mp->path)) {
		fd = fileid__open_mapped(s->proc_root, s->procs, pid, mp);
		return fd < 0 ? fd : jitmap__add_jitdump(s->jit, pid, pstart, fd, mp->path);
	}
	m = file_module(s, mp);
	if (!m)
		return -ENOMEM;
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
 * The symbols of @m's separate debug file, when one has more than @es:
 * by build-id under the debug root, else by .gnu_debuglink next to the
 * binary as @pid sees it (inside its root; pid 0: a file the user named,
 * as we see it), else under the debug root (debugfile.h).  The PT_LOAD
 * arithmetic keeps using @es.
 */
static struct elfsym *open_debug_file(const struct symbolizer *s, const struct smod *m,
				      uint32_t pid, const struct elfsym *es)
{
	struct debugfile_query q = {
		.es = es, .path = m->path, .dev = m->pub.rpt.dev, .ino = m->pub.rpt.ino,
		.debug_root = s->debug_root,
	};
	struct elfsym *dbg;
	char root[PATH_MAX];

	if (pid) {
		snprintf(root, sizeof(root), "%s/%u/root", s->proc_root, pid);
		q.root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		q.root_fd = AT_FDCWD;
	}
	dbg = debugfile__open(&q);
	if (q.root_fd >= 0)
		close(q.root_fd);
	return dbg;
}

/* Read @m's image's symbols through @m's fd: RPT_OK, or why not. */
static uint32_t image_load(struct symbolizer *s, struct smod *m, uint32_t pid)
{
	struct elfsym *es;
	int err;

	es = elfsym__open_fd(m->fd.fd, m->path, NULL);
	if (!es) {
		err = errno;
		pr_debug("symbolizer: '%s': %s\n", m->path, strerror(err));
		return note_failure(m, pid, -err);
	}
	if (!image__matches(m->img, es)) {
		/* Rewritten in place since it was opened: this fd no longer holds what ran. */
		pr_debug("symbolizer: '%s': the file changed under us\n", m->path);
		elfsym__free(es);
		fd_cache__drop(&s->fds, &m->fd);
		return note_failure(m, pid, -ESTALE);
	}
	m->fail_reason = RPT_OK;
	m->attempts = 0;
	imgcache__attach(&s->images, m->img, es, open_debug_file(s, m, pid, es));
	return RPT_OK;
}

/* Make @m's symbols available: RPT_OK, or why not. */
uint32_t file_load(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp)
{
	uint32_t reason;

	if (!m->img || !m->img->es) {
		if (!may_retry(m, pid))
			return m->fail_reason;
		if (m->fd.fd >= 0)
			fd_cache__touch(&s->fds, &m->fd);
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
	const struct elfsym_sym *sym;
	const struct elfsym *syms;
	struct smod *m;
	uint64_t vaddr;
	const char *name;

	out->offset = mapping__file_offset(mp, ip);
	m = file_module(s, mp);
	if (!m) {
		out->reason = RPT_FILE_UNREADABLE;
		return;
	}
	out->module = &m->pub;
	out->reason = file_load(s, m, pid, mp);
	if (out->reason != RPT_OK)
		return;
	syms = image__syms(m->img);
	if (!elfsym__nr_syms(syms)) {
		out->reason = RPT_NO_SYMBOLS;
		return;
	}
	/*
	 * pgoff is real: offset -> the PT_LOAD holding it -> vaddr -> symbol.
	 * The program headers are the mapped file's: a debug file's describe
	 * the same addresses but not its own offsets.
	 */
	if (elfsym__offset_to_vaddr(m->img->es, out->offset, &vaddr)) {
		out->reason = RPT_OUTSIDE_SYMBOL;
		return;
	}
	sym = elfsym__lookup(syms, vaddr);
	if (sym) {
		name = imgcache__sym_name(&s->images, m->img, sym);
	} else if (syms != m->img->es && (sym = elfsym__lookup(m->img->es, vaddr))) {
		/* Only in the binary: its PLT stubs (a debug file's .plt has no bytes). */
		name = imgcache__name(&s->images, sym->name);
	} else {
		out->reason = RPT_OUTSIDE_SYMBOL;
		return;
	}
	if (!name) {
		out->reason = RPT_FILE_UNREADABLE;	/* ENOMEM: nothing better to say */
		return;
	}
	out->sym = name;
	out->sym_off = vaddr - sym->addr;
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
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	s->debug_root = strdup(opts->debug_root ? opts->debug_root : "/usr/lib/debug");
	if (!s->proc_root || !s->debug_root) {
		err = ENOMEM;
		goto fail;
	}
	if (!opts->no_jit) {
		struct jitmap_opts jo = { .proc_root = s->proc_root };

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
	modules_free(s);
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
		.images = imgcache__nr_images(&s->images),
	};
}
