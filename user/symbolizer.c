// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer: address -> (module, file offset, symbol + offset, reason).
 *
 * A module is one identity, created on first sight and kept for the
 * symbolizer's life so that frames (and the caller's report ids) can point
 * to it: a mapped file by (dev, ino), a kernel image by name, [vdso] and
 * friends by name, and one module for all anonymous memory.  A file's ELF
 * symbols are loaded on first use and at most max_files stay loaded; the
 * least recently used is dropped and reloaded if needed again.
 *
 * Symbol names handed out must outlive an ELF eviction, so the names of
 * ELF symbols are interned in the symbolizer; kallsyms names live as long
 * as the symbolizer already.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elfsym.h"
#include "kallsyms.h"
#include "hash.h"
#include "lru.h"
#include "symbolizer.h"
#include "util.h"

#define MAX_FILES_DEFAULT	4096
/*
 * Opening a file can fail because of the process we went through (it
 * exited, it is in another mount namespace we cannot enter), so another
 * process mapping the same file may succeed.  Retries are bounded: a file
 * nobody can open costs a few syscalls in total, not a few per frame.
 */
#define MAX_OPEN_ATTEMPTS	8
#define STR_CHUNK		(64 * 1024)

struct smod {
	struct sym_module pub;	/* first: frames point here */
	char *path;		/* owned; pub.rpt.path */
	size_t path_len;
	uint64_t hash;
	struct smod *hnext;	/* chain in files or named */
	/* Files only. */
	struct elfsym *es;	/* NULL: not loaded (yet, or evicted) */
	struct elfsym *dbg;	/* the separate debug file's symbols, if richer */
	struct lru_node lru;	/* in symbolizer.loaded while es is set */
	uint32_t fail_reason;	/* RPT_OK: the last attempt did not fail */
	uint32_t fail_pid;
	unsigned int attempts;	/* failed attempts since the last success */
	bool fail_final;	/* the file itself is bad: never retried */
};

struct modtab {
	struct smod **b;
	size_t nb, nr;		/* nb: power of two */
};

struct str_chunk {
	struct str_chunk *next;
	char data[];
};

/* Interned strings: open addressing over pointers into chunks. */
struct strtab {
	const char **slots;
	size_t cap, nr;
	struct str_chunk *chunks;
	char *cur;
	size_t left;
};

struct symbolizer {
	char *proc_root;
	char *debug_root;
	struct ksyms *ks;
	uint64_t text_addr;
	size_t max_files, nr_loaded;
	struct modtab files;	/* by (dev, ino) */
	struct modtab named;	/* kernel modules and [vdso]-like, by (kind, path) */
	struct lru loaded;	/* files with symbols in memory, most recent first */
	struct smod anon;
	struct smod *vmlinux;
	struct strtab names;
};

/* Link @m, whose hash is set, into @t.  A failed grow only lengthens chains. */
static void modtab_insert(struct modtab *t, struct smod *m)
{
	size_t i;

	if (t->nr >= t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 64;
		struct smod **b = calloc(nb, sizeof(*b)), *p, *next;

		if (b) {
			for (i = 0; i < t->nb; i++) {
				for (p = t->b[i]; p; p = next) {
					next = p->hnext;
					p->hnext = b[p->hash & (nb - 1)];
					b[p->hash & (nb - 1)] = p;
				}
			}
			free(t->b);
			t->b = b;
			t->nb = nb;
		}
	}
	i = m->hash & (t->nb - 1);
	m->hnext = t->b[i];
	t->b[i] = m;
	t->nr++;
}

static void modtab_free(struct modtab *t)
{
	struct smod *m, *next;
	size_t i;

	for (i = 0; i < t->nb; i++) {
		for (m = t->b[i]; m; m = next) {
			next = m->hnext;
			elfsym__free(m->es);
			elfsym__free(m->dbg);
			free(m->path);
			free(m);
		}
	}
	free(t->b);
}

static int strtab_grow(struct strtab *st)
{
	size_t cap = st->cap ? st->cap * 2 : 1024, i, j;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < st->cap; i++) {
		const char *s = st->slots[i];

		if (!s)
			continue;
		for (j = hash_bytes(0, s, strlen(s)) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	free(st->slots);
	st->slots = slots;
	st->cap = cap;
	return 0;
}

/* A copy of @s that lives as long as @st, shared by equal strings; NULL on ENOMEM. */
static const char *strtab_intern(struct strtab *st, const char *s)
{
	size_t len = strlen(s), j;
	const char *hit;
	char *copy;

	if ((st->nr + 1) * 2 > st->cap && strtab_grow(st))
		return NULL;
	for (j = hash_bytes(0, s, len) & (st->cap - 1); (hit = st->slots[j]); j = (j + 1) & (st->cap - 1))
		if (!strcmp(hit, s))
			return hit;
	if (len + 1 > st->left) {
		size_t size = len + 1 > STR_CHUNK ? len + 1 : STR_CHUNK;
		struct str_chunk *c = malloc(sizeof(*c) + size);

		if (!c)
			return NULL;
		c->next = st->chunks;
		st->chunks = c;
		st->cur = c->data;
		st->left = size;
	}
	copy = st->cur;
	memcpy(copy, s, len + 1);
	st->cur += len + 1;
	st->left -= len + 1;
	st->slots[j] = copy;
	st->nr++;
	return copy;
}

static void strtab_free(struct strtab *st)
{
	struct str_chunk *c, *next;

	for (c = st->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(st->slots);
}

/* The module of kind @kind named @name; "[name]" when @bracket.  NULL on ENOMEM. */
static struct smod *named_module(struct symbolizer *s, uint32_t kind, const char *name, bool bracket)
{
	size_t len = strlen(name), plen = len + (bracket ? 2 : 0);
	uint64_t h = hash_u64(hash_bytes(0, name, len), kind);
	struct smod *m;

	if (s->named.nb) {
		for (m = s->named.b[h & (s->named.nb - 1)]; m; m = m->hnext) {
			if (m->hash == h && m->pub.rpt.kind == kind && m->path_len == plen &&
			    !memcmp(m->path + (bracket ? 1 : 0), name, len))
				return m;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = malloc(plen + 1);
	if (!m->path) {
		free(m);
		return NULL;
	}
	snprintf(m->path, plen + 1, bracket ? "[%s]" : "%s", name);
	m->path_len = plen;
	m->hash = h;
	m->pub.rpt.kind = kind;
	m->pub.rpt.path = m->path;
	modtab_insert(&s->named, m);
	return m;
}

/* The module of the file mapped by @mp, by (dev, ino).  NULL on ENOMEM. */
static struct smod *file_module(struct symbolizer *s, const struct mapping *mp)
{
	uint64_t h = hash_u64(hash_u64(0, mp->dev), mp->ino);
	const char *path = mp->path ? mp->path : "";
	struct smod *m;

	if (s->files.nb) {
		for (m = s->files.b[h & (s->files.nb - 1)]; m; m = m->hnext)
			if (m->pub.rpt.dev == mp->dev && m->pub.rpt.ino == mp->ino)
				return m;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	/* The first path seen names it; another process may see another. */
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->path_len = strlen(path);
	m->hash = h;
	m->pub.rpt.kind = RPT_MOD_FILE;
	m->pub.rpt.path = m->path;
	m->pub.rpt.dev = mp->dev;
	m->pub.rpt.ino = mp->ino;
	modtab_insert(&s->files, m);
	return m;
}

/* Open @path under @dirfd: inside it as the root when @in_root (containers). */
static int open_at(int dirfd, const char *path, int flags, bool in_root)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (!in_root)
		return open(path, flags | O_CLOEXEC);
	/* An absolute symlink in a container must not lead to the host's file. */
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	while (*path == '/')
		path++;
	return openat(dirfd, *path ? path : ".", flags | O_CLOEXEC);
}

static bool is_mapped_file(int fd, const struct mapping *mp)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_dev == mp->dev && (uint64_t)st.st_ino == mp->ino;
}

/*
 * Open @path for reading only if it is the regular file @mp maps.  It is
 * looked at through O_PATH first, so a FIFO or a device found there is
 * never opened for real.  -1 with *@mismatch set when a file was there
 * but not that one.
 */
static int open_verified(int dirfd, const char *path, bool in_root,
			 const struct mapping *mp, bool *mismatch)
{
	char self[64];
	int pfd, fd;

	pfd = open_at(dirfd, path, O_PATH, in_root);
	if (pfd < 0)
		return -1;
	if (!is_mapped_file(pfd, mp)) {
		*mismatch = true;
		close(pfd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0)	/* no /proc of our own: open the name again */
		fd = open_at(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, in_root);
	close(pfd);
	if (fd >= 0 && !is_mapped_file(fd, mp)) {
		*mismatch = true;	/* replaced in between */
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * The file @mp maps in process @pid, through map_files (the very file,
 * even deleted or in another mount namespace, but CAP_SYS_ADMIN only on
 * some kernels), else through the process's root.  -1 and *@reason.
 */
static int open_mapped(struct symbolizer *s, uint32_t pid, const struct mapping *mp,
		       uint32_t *reason)
{
	bool mismatch = false;
	char path[PATH_MAX];
	int fd, dirfd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64,
		 s->proc_root, pid, mp->start, mp->end);
	fd = open_verified(AT_FDCWD, path, false, mp, &mismatch);
	if (fd >= 0)
		return fd;
	if (mp->path && mp->path[0] == '/') {
		snprintf(path, sizeof(path), "%s/%u/root", s->proc_root, pid);
		dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd >= 0) {
			fd = open_verified(dirfd, mp->path, true, mp, &mismatch);
			close(dirfd);
			if (fd >= 0)
				return fd;
		}
	}
	*reason = mismatch ? RPT_BUILD_ID_MISMATCH : RPT_FILE_UNREADABLE;
	return -1;
}

static void fill_build_id(struct smod *m)
{
	struct rpt_module *r = &m->pub.rpt;
	const uint8_t *id;
	size_t len;

	id = elfsym__build_id(m->es, &len);
	if (!id || len > RPT_BUILD_ID_MAX)
		len = 0;
	if (len == r->build_id_len && !memcmp(r->build_id, id, len))
		return;
	memset(r->build_id, 0, sizeof(r->build_id));
	if (len)
		memcpy(r->build_id, id, len);
	r->build_id_len = (uint32_t)len;
	/* The identity changed: the caller must intern it again. */
	m->pub.has_report_id = 0;
}

static void evict_files(struct symbolizer *s)
{
	while (s->nr_loaded > s->max_files && s->loaded.tail) {
		struct smod *m = lru_entry(s->loaded.tail, struct smod, lru);

		lru__unlink(&s->loaded, &m->lru);
		elfsym__free(m->es);
		elfsym__free(m->dbg);
		m->es = NULL;
		m->dbg = NULL;
		s->nr_loaded--;
	}
}

/*
 * The symbols of the separate debug file named by @es's build-id,
 * DEBUG_ROOT/.build-id/xx/rest.debug, as Debian's -dbg and -dbgsym packages
 * install them: stripped binaries keep only .dynsym, the debug file has the
 * full .symtab.  Used only when it carries the same build-id and more
 * symbols.  The debug root is the host's own directory, not a process's.
 */
static struct elfsym *open_debug_file(const struct symbolizer *s, const struct elfsym *es)
{
	const uint8_t *id, *dbg_id;
	size_t len, dbg_len, i;
	struct elfsym *dbg;
	char path[4096];
	int off;

	id = elfsym__build_id(es, &len);
	if (!id || len < 2 || !s->debug_root)
		return NULL;
	off = snprintf(path, sizeof(path), "%s/.build-id/%02x/", s->debug_root, id[0]);
	for (i = 1; i < len && off > 0 && (size_t)off + 3 < sizeof(path); i++)
		off += snprintf(path + off, sizeof(path) - (size_t)off, "%02x", id[i]);
	if (off <= 0 || (size_t)off + sizeof(".debug") > sizeof(path))
		return NULL;
	strcpy(path + off, ".debug");
	if (access(path, R_OK))
		return NULL;
	dbg = elfsym__open(path, NULL);
	if (!dbg) {
		pr_debug("symbolizer: '%s': unusable debug file: %s\n", path, strerror(errno));
		return NULL;
	}
	dbg_id = elfsym__build_id(dbg, &dbg_len);
	if (!dbg_id || dbg_len != len || memcmp(dbg_id, id, len) ||
	    elfsym__nr_syms(dbg) <= elfsym__nr_syms(es)) {
		elfsym__free(dbg);
		return NULL;
	}
	pr_debug("symbolizer: using debug file '%s'\n", path);
	return dbg;
}

/* Make @m's symbols available: RPT_OK, or why not. */
static uint32_t file_load(struct symbolizer *s, struct smod *m, uint32_t pid,
			  const struct mapping *mp)
{
	uint32_t reason = RPT_FILE_UNREADABLE;
	int fd, err;

	if (m->es) {
		lru__touch(&s->loaded, &m->lru);
		return RPT_OK;
	}
	if (m->fail_reason != RPT_OK &&
	    (m->fail_final || m->fail_pid == pid || m->attempts >= MAX_OPEN_ATTEMPTS))
		return m->fail_reason;

	fd = open_mapped(s, pid, mp, &reason);
	if (fd < 0) {
		pr_debug("symbolizer: '%s': pid %u: %s\n", m->path, pid,
			 reason == RPT_BUILD_ID_MISMATCH ? "another file is at that path" :
			 "cannot open the mapped file");
		goto fail;
	}
	m->es = elfsym__open_fd(fd, m->path, NULL);
	err = errno;
	close(fd);
	if (!m->es) {
		pr_debug("symbolizer: '%s': %s\n", m->path, strerror(err));
		reason = RPT_FILE_UNREADABLE;
		/* Not ELF, or over a cap: the same bytes will fail again. */
		m->fail_final = err == ENOEXEC || err == E2BIG;
		goto fail;
	}
	m->fail_reason = RPT_OK;
	m->attempts = 0;
	fill_build_id(m);
	m->dbg = open_debug_file(s, m->es);
	lru__push_front(&s->loaded, &m->lru);
	s->nr_loaded++;
	evict_files(s);
	return RPT_OK;
fail:
	m->fail_reason = reason;
	m->fail_pid = pid;
	m->attempts++;
	return reason;
}

static void file_frame(struct symbolizer *s, uint32_t pid, const struct mapping *mp,
		       uint64_t ip, struct sym_frame *out)
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
	syms = m->dbg ? m->dbg : m->es;
	if (!elfsym__nr_syms(syms)) {
		out->reason = RPT_NO_SYMBOLS;
		return;
	}
	/*
	 * pgoff is real: offset -> the PT_LOAD holding it -> vaddr -> symbol.
	 * The program headers are the mapped file's: a debug file's describe
	 * the same addresses but not its own offsets.
	 */
	if (elfsym__offset_to_vaddr(m->es, out->offset, &vaddr) ||
	    !(sym = elfsym__lookup(syms, vaddr))) {
		out->reason = RPT_OUTSIDE_SYMBOL;
		return;
	}
	name = strtab_intern(&s->names, sym->name);
	if (!name) {
		out->reason = RPT_FILE_UNREADABLE;	/* ENOMEM: nothing better to say */
		return;
	}
	out->sym = name;
	out->sym_off = vaddr - sym->addr;
}

int symbolizer__user(struct symbolizer *s, uint32_t pid, const struct proc *p,
		     uint64_t ip, struct sym_frame *out)
{
	const struct mapping *mp = proc__find_mapping(p, ip);
	struct smod *m;

	memset(out, 0, sizeof(*out));
	if (!mp) {
		out->offset = ip;
		out->reason = RPT_NO_MAPPING;
		return 0;
	}
	switch (mp->kind) {
	case MAPPING_ANON:
		out->module = &s->anon.pub;
		out->offset = ip;
		out->reason = RPT_ANON;
		break;
	case MAPPING_SPECIAL:
		m = mp->path ? named_module(s, RPT_MOD_SPECIAL, mp->path, false) : NULL;
		out->module = m ? &m->pub : NULL;
		out->offset = ip - mp->start;
		out->reason = RPT_NO_SYMBOLS;
		break;
	default:
		file_frame(s, pid, mp, ip, out);
		break;
	}
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out)
{
	const struct ksym *ks;
	struct smod *m;

	memset(out, 0, sizeof(*out));
	out->offset = ip;
	if (!s->ks) {
		out->reason = RPT_NO_MAPPING;	/* kernel symbols not loaded */
		return 0;
	}
	if (ksyms__restricted(s->ks)) {
		out->module = &s->vmlinux->pub;
		out->reason = RPT_KALLSYMS_RESTRICTED;
		return 0;
	}
	ks = ksyms__lookup(s->ks, ip);
	if (!ks) {
		out->reason = RPT_NO_MAPPING;
		return 0;
	}
	m = ks->module ? named_module(s, RPT_MOD_KERNEL, ks->module, true) : s->vmlinux;
	out->module = m ? &m->pub : NULL;
	out->sym = ks->name;
	out->sym_off = ip - ks->addr;
	out->reason = RPT_OK;
	return 0;
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
	s->max_files = opts->max_files ? opts->max_files : MAX_FILES_DEFAULT;
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	s->debug_root = strdup(opts->debug_root ? opts->debug_root : "/usr/lib/debug");
	if (!s->proc_root || !s->debug_root) {
		err = ENOMEM;
		goto fail;
	}
	s->anon.pub.rpt.kind = RPT_MOD_ANON;
	s->anon.pub.rpt.path = "[anon]";
	if (!opts->no_kernel) {
		s->ks = ksyms__load(opts->kallsyms);
		if (!s->ks) {
			err = errno;
			pr_warn("symbolizer: '%s': cannot load kernel symbols: %s\n",
				opts->kallsyms ? opts->kallsyms : "/proc/kallsyms", strerror(err));
			goto fail;
		}
		if (ksyms__find(s->ks, "_text", &s->text_addr))
			s->text_addr = 0;
		s->vmlinux = calloc(1, sizeof(*s->vmlinux));
		if (!s->vmlinux) {
			err = ENOMEM;
			goto fail;
		}
		s->vmlinux->pub.rpt.kind = RPT_MOD_KERNEL;
		s->vmlinux->pub.rpt.path = "[kernel.kallsyms]";
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
	modtab_free(&s->files);
	modtab_free(&s->named);
	strtab_free(&s->names);
	free(s->vmlinux);
	ksyms__free(s->ks);
	free(s->proc_root);
	free(s->debug_root);
	free(s);
}

uint64_t symbolizer__text_addr(const struct symbolizer *s)
{
	return s->text_addr;
}

int symbolizer__kernel_restricted(const struct symbolizer *s)
{
	return ksyms__restricted(s->ks);
}
