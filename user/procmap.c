// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procmap: processes keyed by (pid, pstart), each with its executable
 * mappings sorted by address.
 *
 * Adding a process drops every other one with its pid, so the table never
 * holds two processes with one pid: the hash is on the pid alone and the
 * pstart is checked on the chain.  Every find moves the process to the
 * front of a recency list, so eviction when the table is full takes the
 * process sampled least recently, in O(1).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "hash.h"
#include "lru.h"
#include "procmap.h"
#include "util.h"

#define PROCS_DEFAULT	65536
/*
 * Bounds on one process's maps text.  vm.max_map_count defaults to 65530,
 * so a real process is far below both; a hostile or corrupt source is not.
 */
#define MAPS_MAX_LINES	(1u << 20)
#define MAPS_FILE_CAP	((size_t)128 << 20)

struct proc {
	uint32_t pid;
	uint64_t pstart;
	struct mapping *maps;	/* by start, not overlapping */
	size_t nr_maps;
	char *paths;		/* one allocation for every path in maps */
	int has_maps;
	struct proc *hnext;	/* hash chain */
	struct lru_node lru;	/* in proc_table.lru */
};

struct proc_table {
	struct proc **buckets;
	size_t nr_buckets;	/* power of two */
	size_t nr, max, seen;
	struct lru lru;		/* most recently used first */
};

static size_t pid_bucket(uint32_t pid, size_t nr_buckets)
{
	return (size_t)hash_u64(0, pid) & (nr_buckets - 1);
}

struct proc_table *proc_table__new(size_t max_procs)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->max = max_procs ? max_procs : PROCS_DEFAULT;
	/* Start small: most recordings see a handful of processes. */
	pt->nr_buckets = 64;
	pt->buckets = calloc(pt->nr_buckets, sizeof(*pt->buckets));
	if (!pt->buckets) {
		free(pt);
		errno = ENOMEM;
		return NULL;
	}
	return pt;
}

static void proc_free(struct proc *p)
{
	free(p->maps);
	free(p->paths);
	free(p);
}

/* Unlink @p from its chain and the recency list, and free it. */
static void table_drop(struct proc_table *pt, struct proc *p)
{
	struct proc **pp = &pt->buckets[pid_bucket(p->pid, pt->nr_buckets)];

	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	lru__unlink(&pt->lru, &p->lru);
	pt->nr--;
	proc_free(p);
}

void proc_table__free(struct proc_table *pt)
{
	struct lru_node *n, *next;

	if (!pt)
		return;
	for (n = pt->lru.head; n; n = next) {
		next = n->next;
		proc_free(lru_entry(n, struct proc, lru));
	}
	free(pt->buckets);
	free(pt);
}

struct proc *proc_table__find(struct proc_table *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *p;

	for (p = pt->buckets[pid_bucket(pid, pt->nr_buckets)]; p; p = p->hnext) {
		if (p->pid == pid && p->pstart == pstart) {
			lru__touch(&pt->lru, &p->lru);
			return p;
		}
	}
	return NULL;
}

/* Double the buckets.  A failure only makes chains longer, so it is not an error. */
static void table_grow(struct proc_table *pt)
{
	size_t n = pt->nr_buckets * 2, i;
	struct proc **b = calloc(n, sizeof(*b)), *p, *next;

	if (!b)
		return;
	for (i = 0; i < pt->nr_buckets; i++) {
		for (p = pt->buckets[i]; p; p = next) {
			size_t j = pid_bucket(p->pid, n);

			next = p->hnext;
			p->hnext = b[j];
			b[j] = p;
		}
	}
	free(pt->buckets);
	pt->buckets = b;
	pt->nr_buckets = n;
}

struct proc *proc_table__add(struct proc_table *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *p;
	size_t b;

	proc_table__remove(pt, pid);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (pt->nr >= pt->max && pt->lru.tail)
		table_drop(pt, lru_entry(pt->lru.tail, struct proc, lru));
	if (pt->nr >= pt->nr_buckets)
		table_grow(pt);
	p->pid = pid;
	p->pstart = pstart;
	b = pid_bucket(pid, pt->nr_buckets);
	p->hnext = pt->buckets[b];
	pt->buckets[b] = p;
	lru__push_front(&pt->lru, &p->lru);
	pt->nr++;
	pt->seen++;
	return p;
}

void proc_table__remove(struct proc_table *pt, uint32_t pid)
{
	struct proc *p, *next;

	for (p = pt->buckets[pid_bucket(pid, pt->nr_buckets)]; p; p = next) {
		next = p->hnext;
		if (p->pid == pid)
			table_drop(pt, p);
	}
}

size_t proc_table__nr_procs(const struct proc_table *pt)
{
	return pt->nr;
}

size_t proc_table__nr_seen(const struct proc_table *pt)
{
	return pt->seen;
}

uint32_t proc__pid(const struct proc *p)
{
	return p->pid;
}

/* Up to 16 hex digits (max_digits fewer for narrower fields); p advanced. */
static bool parse_hex(const char **pp, const char *end, unsigned int max_digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int n;

	for (n = 0; p < end; p++, n++) {
		char c = *p;
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned int)((c | 0x20) - 'a' + 10);
		else
			break;
		v = v << 4 | d;
	}
	if (n == 0 || n > max_digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (p == *pp)
		return false;
	*pp = p;
	*out = v;
	return true;
}

/* One or more spaces (the kernel pads before the path). */
static bool skip_spaces(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

static bool expect(const char **pp, const char *end, char c)
{
	if (*pp >= end || **pp != c)
		return false;
	(*pp)++;
	return true;
}

/* "[heap]", "[stack]", "[stack:TID]", "[anon:NAME]", "[anon_shmem:NAME]" */
static bool bracket_is_anon(const char *path, size_t len)
{
	return (len == 6 && !memcmp(path, "[heap]", 6)) ||
	       (len >= 6 && !memcmp(path, "[stack", 6)) ||
	       (len >= 5 && !memcmp(path, "[anon", 5));
}

/*
 * Parse one maps line [p, end) into @m; the path is returned as a span
 * of the line (*@path, *@path_len), " (deleted)" cut.  false: malformed.
 */
static bool parse_line(const char *p, const char *end, struct mapping *m,
		       const char **path, size_t *path_len)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	uint64_t major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&p, end, 16, &m->start) || !expect(&p, end, '-') ||
	    !parse_hex(&p, end, 16, &m->end) || !skip_spaces(&p, end))
		return false;
	if (m->start >= m->end || end - p < 4)
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return false;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 4;
	if (!skip_spaces(&p, end) || !parse_hex(&p, end, 16, &m->pgoff) ||
	    !skip_spaces(&p, end) || !parse_hex(&p, end, 8, &major) ||
	    !expect(&p, end, ':') || !parse_hex(&p, end, 8, &minor) ||
	    !skip_spaces(&p, end) || !parse_dec(&p, end, &m->ino))
		return false;
	m->dev = makedev((unsigned int)major, (unsigned int)minor);
	if (p < end && !skip_spaces(&p, end))
		return false;	/* junk glued to the inode */

	/* The rest of the line is the path: it may hold spaces. */
	len = (size_t)(end - p);
	if (len >= dlen && !memcmp(end - dlen, deleted, dlen)) {
		len -= dlen;
		m->deleted = 1;
	}
	*path = p;
	*path_len = len;
	if (!len)
		m->kind = MAPPING_ANON;
	else if (p[0] == '[' && p[len - 1] == ']')
		m->kind = bracket_is_anon(p, len) ? MAPPING_ANON : MAPPING_SPECIAL;
	else
		m->kind = MAPPING_FILE;
	return true;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/*
 * Walk the lines of @buf.  With @maps NULL, count the executable mappings
 * and their path bytes; otherwise fill @maps and @paths (sized by the
 * counting pass).  -E2BIG past MAPS_MAX_LINES.
 */
static int walk_maps(const char *buf, size_t len, struct mapping *maps, char *paths,
		     size_t *nr, size_t *path_bytes)
{
	const char *p = buf, *end = buf + len, *nl, *path;
	size_t lines = 0, n = 0, used = 0, path_len;
	struct mapping m;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (++lines > MAPS_MAX_LINES)
			return -E2BIG;
		/* A NUL would cut the path short (even to ""): the kernel never writes one. */
		if (memchr(p, '\0', (size_t)(nl - p)) ||
		    !parse_line(p, nl, &m, &path, &path_len) || !(m.prot & PROT_EXEC))
			continue;
		if (path_len)
			used += path_len + 1;
		if (maps) {
			if (path_len) {
				memcpy(paths, path, path_len);
				paths[path_len] = '\0';
				m.path = paths;
				paths += path_len + 1;
			}
			maps[n] = m;
		}
		n++;
	}
	*nr = n;
	*path_bytes = used;
	return 0;
}

int proc__parse_maps(struct proc *p, const char *buf, size_t len)
{
	size_t nr, bytes, nr2, bytes2, i, kept;
	struct mapping *maps;
	char *paths = NULL;
	int err;

	/* Count, allocate once, fill: the old mappings stay until this succeeds. */
	err = walk_maps(buf, len, NULL, NULL, &nr, &bytes);
	if (err)
		return err;
	maps = calloc(nr ? nr : 1, sizeof(*maps));
	if (bytes)
		paths = malloc(bytes);
	if (!maps || (bytes && !paths)) {
		free(maps);
		free(paths);
		return -ENOMEM;
	}
	walk_maps(buf, len, maps, paths, &nr2, &bytes2);

	/* The kernel prints in order; other sources may not, nor avoid overlaps. */
	for (i = 1; i < nr; i++)
		if (maps[i].start < maps[i - 1].start)
			break;
	if (i < nr)
		qsort(maps, nr, sizeof(*maps), mapping_cmp);
	for (i = 0, kept = 0; i < nr; i++) {
		if (kept && maps[i].start < maps[kept - 1].end)
			continue;
		maps[kept++] = maps[i];
	}
	if (kept < nr)
		pr_debug("procmap: pid %u: dropped %zu overlapping mappings\n", p->pid, nr - kept);

	free(p->maps);
	free(p->paths);
	p->maps = maps;
	p->paths = paths;
	p->nr_maps = kept;
	return (int)kept;
}

int proc__load_maps(struct proc *p, const char *path)
{
	size_t len;
	char *buf;
	int err;

	err = read_file_capped(path, MAPS_FILE_CAP, &buf, &len);
	if (err)
		return err;
	err = proc__parse_maps(p, buf, len);
	free(buf);
	if (err < 0)
		pr_debug("procmap: '%s': %s\n", path, strerror(-err));
	return err;
}

void proc__clear_maps(struct proc *p)
{
	free(p->maps);
	free(p->paths);
	p->maps = NULL;
	p->paths = NULL;
	p->nr_maps = 0;
}

const struct mapping *proc__find_mapping(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi, mid;

	if (!p)
		return NULL;
	hi = p->nr_maps;
	/* The last mapping starting at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

int proc__has_maps(const struct proc *p)
{
	return p->has_maps;
}

void proc__set_has_maps(struct proc *p)
{
	p->has_maps = 1;
}
