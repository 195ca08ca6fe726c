// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer_named: code named from files that no mapping of it points
 * to.  A --map-anon hint says which file's bytes were copied where;
 * `symbolize --elf` names a file directly; a JIT publishes names in a perf
 * map or a jitdump.  The first two are ordinary file modules opened by
 * path, as we see it; a JIT file is a module of its own per (path, dev,
 * ino), so two containers' /tmp/perf-1.map stay apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "symbolize/imgcache.h"
#include "symbolize/symbolizer_int.h"

/*
 * The module of the host file @path, opened and adopted now, kept for
 * later calls (the last one is remembered: `symbolize --elf` asks about
 * one file many times).  *@mp describes the whole file as mapped at 0.
 */
static struct smod *elf_module(struct symbolizer *s, const char *path, struct mapping *mp, int *errp)
{
	char abs[PATH_MAX];
	struct stat st;
	struct smod *m;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		err = -ENOEXEC;
		goto fail;
	}
	memset(mp, 0, sizeof(*mp));
	mp->end = (uint64_t)st.st_size;
	mp->dev = st.st_dev;
	mp->ino = st.st_ino;
	mp->mtime_sec = st.st_mtim.tv_sec;
	mp->mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
	mp->prot = 5;	/* PROT_READ | PROT_EXEC */
	mp->kind = MAPPING_FILE;
	/* Absolute, like a mapped file's: its debuglink is looked for next to it. */
	mp->path = realpath(path, abs) ? abs : path;
	m = file_module(s, mp);
	if (!m) {
		err = -ENOMEM;
		goto fail;
	}
	/* Hints and symbolize --elf keep pointers to it. */
	module_keep(s, m);
	if (m->fd.fd >= 0) {
		close(fd);
		return m;
	}
	err = module_adopt(s, m, fd);
	if (err) {
		note_failure(m, 0, err);
		*errp = err;
		return m;
	}
	m->fail_reason = RPT_OK;
	return m;
fail:
	if (fd >= 0)
		close(fd);
	*errp = err;
	return NULL;
}

int symbolizer__add_hint_file(struct symbolizer *s, const char *path, uint32_t *id)
{
	struct hint_file *tmp;
	struct mapping mp;
	struct smod *m;
	int err = 0;

	m = elf_module(s, path, &mp, &err);
	if (!m || err)
		return err ? err : -ENOMEM;
	tmp = realloc(s->hints, (s->nr_hints + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	s->hints = tmp;
	mp.path = m->path;
	mp.end = UINT64_MAX;
	s->hints[s->nr_hints].m = m;
	s->hints[s->nr_hints].mp = mp;
	*id = s->nr_hints++;
	return 0;
}

/*
 * The module of JIT symbol file @hit->source: one per file (path, dev,
 * ino), so two containers' /tmp/perf-1.map are two modules.  NULL on ENOMEM.
 */
static struct smod *jit_module(struct symbolizer *s, const struct jit_hit *hit)
{
	size_t len = strlen(hit->source), pos = HTAB_START;
	uint64_t h = hash_u64(hash_u64(hash_u64(hash_bytes(0, hit->source, len), RPT_MOD_ANON),
				       hit->dev), hit->ino), v;
	struct smod *m;

	while (htab__next(&s->named, h, &pos, &v)) {
		m = (struct smod *)(uintptr_t)v;
		if (m->pub.rpt.kind == RPT_MOD_ANON && m->pub.rpt.dev == hit->dev &&
		    m->pub.rpt.ino == hit->ino && m->path_len == len && !memcmp(m->path, hit->source, len))
			return m;
	}
	m = module_add(s, &s->named, h, RPT_MOD_ANON, strdup(hit->source), len);
	if (!m)
		return NULL;
	m->pub.rpt.dev = hit->dev;
	m->pub.rpt.ino = hit->ino;
	return m;
}

/* Name @ip of process @p from its JIT's own files: true when they did. */
bool jit_frame(struct symbolizer *s, const struct proc *p, uint64_t ip, struct sym_frame *out)
{
	struct jit_hit hit;
	struct smod *m;
	const char *name;

	if (!s->jit || !p || jitmap__lookup(s->jit, proc__pid(p), proc__pstart(p), ip, &hit))
		return false;
	m = jit_module(s, &hit);
	name = imgcache__name(&s->images, hit.name);
	if (!m || !name)
		return false;
	memset(out, 0, sizeof(*out));
	out->module = &m->pub;
	out->offset = ip;
	out->sym = name;
	out->sym_off = ip - hit.start;
	out->reason = RPT_OK;
	return true;
}

int symbolizer__elf(struct symbolizer *s, const char *path, uint64_t addr, bool file_offset,
		    struct sym_frame *out)
{
	struct mapping mp;
	uint64_t off = addr;
	struct smod *m;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->offset = addr;
	if (s->elf_path && !strcmp(s->elf_path, path)) {
		m = s->elf_mod;
		mp = s->elf_map;
	} else {
		m = elf_module(s, path, &mp, &err);
		if (m && !err) {
			free(s->elf_path);
			s->elf_path = strdup(path);
			s->elf_mod = s->elf_path ? m : NULL;
			s->elf_map = mp;
			s->elf_map.path = s->elf_path;
		}
	}
	if (!m || err) {
		out->module = m ? &m->pub : NULL;
		out->reason = RPT_FILE_UNREADABLE;
		return err;
	}
	if (!file_offset) {
		out->module = &m->pub;
		out->reason = file_load(s, m, 0, &mp);
		if (out->reason != RPT_OK)
			return 0;
		if (elfsym__vaddr_to_offset(m->img->es, addr, &off)) {
			out->reason = RPT_OUTSIDE_SYMBOL;
			return 0;
		}
	}
	mp.end = UINT64_MAX;	/* an offset past the end is the lookup's to refuse */
	file_frame(s, 0, &mp, off, out);
	return 0;
}

