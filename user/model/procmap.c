// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procmap: processes keyed by (pid, pstart), each with its executable
 * mappings sorted by address.
 *
 * Adding a process drops every other one with its pid, so the table never
 * holds two processes with one pid: the hash is on the pid alone and the
 * pstart is checked on what it finds.  Every find moves the process to the
 * front of a recency list, so eviction when the table is full takes the
 * process sampled least recently, in O(1).
 *
 * A process's mappings are one array sorted by start, never overlapping,
 * never empty: a lookup is a binary search, and an edit (map, unmap) finds
 * the overlapped run [lo, hi) with two binary searches and replaces it by
 * at most three pieces with one memmove.  A process has tens to a few
 * thousand executable mappings and lookups outnumber edits by far, so an
 * O(n) edit on a flat, cache-friendly array beats a tree here; the per
 * process cap keeps n bounded.  A fork copies the array (and takes a
 * reference on each path): O(n), no sharing to undo on the next edit.
 *
 * Paths are interned in a store shared by the whole table and counted by
 * reference (one per mapping holding it), so a fork or a split costs no
 * string copy, and the store holds only the distinct paths of live
 * mappings: removing a process gives back everything it held.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/lru.h"
#include "base/util.h"
#include "model/mapsline.h"
#include "model/pathstore.h"
#include "model/procmap.h"

#define PROCS_DEFAULT	65536
/*
 * Bounds on one process's maps text.  vm.max_map_count defaults to 65530,
 * so a real process is far below both; a hostile or corrupt source is not.
 */
#define MAPS_MAX_LINES	(1u << 20)
#define MAPS_FILE_CAP	((size_t)128 << 20)
/* Mappings per process: above vm.max_map_count's default, 5 MiB of array. */
#define MAPS_PER_PROC	65536
/*
 * A path of PATH_MAX bytes or more cannot be opened anyway, and the path
 * bytes of the whole table are capped (distinct live paths: real systems
 * need well under 1 MiB).  Past either, the mapping is kept without its
 * path: its range stays right, and the symbolizer still finds the file
 * through /proc/PID/map_files and checks it by (dev, ino).  Refusing the
 * mapping instead would leave what it replaced in place: wrong answers.
 */
#define PATH_LEN_MAX	4095
#define PATH_STORE_MAX	((size_t)16 << 20)

struct proc {
	uint32_t pid;
	uint64_t pstart;
	struct proc_table *pt;	/* its path store */
	struct mapping *maps;	/* by start, not overlapping, not empty */
	size_t nr_maps;
	size_t cap_maps;	/* grows by doubling up to the cap; freed on exec */
	int sampled;		/* counted in proc_table.sampled */
	uint32_t mnt_ns;	/* of its latest mapping that said (0: unknown) */
	struct proc_hint *hints;	/* the user's --map-anon ranges, oldest first */
	size_t nr_hints;
	struct lru_node lru;	/* in proc_table.lru */
};

struct proc_table {
	struct htab procs;	/* hash of the pid -> struct proc * */
	size_t nr, max, seen, sampled;
	struct lru lru;		/* most recently used first */
	struct pathstore *paths;
};

static void maps_put(struct pathstore *ps, const struct mapping *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pathstore__put(ps, maps[i].path);
}

static uint64_t pid_hash(uint32_t pid)
{
	return hash_u64(0, pid);
}

/* A process sought: (pid, pstart). */
struct pkey {
	uint32_t pid;
	uint64_t pstart;
};

static bool proc_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct proc *p = (const struct proc *)(uintptr_t)val;
	const struct pkey *k = key;

	return p->pid == k->pid && p->pstart == k->pstart;
}

/*
 * A process of @pid after @pos (HTAB_START: the first), or NULL; the
 * table holds one at most, the walk is for the rules that say "every".
 */
static struct proc *next_of_pid(const struct proc_table *pt, uint32_t pid, size_t *pos)
{
	struct proc *p;
	uint64_t v;

	while (htab__next(&pt->procs, pid_hash(pid), pos, &v)) {
		p = (struct proc *)(uintptr_t)v;
		if (p->pid == pid)
			return p;
	}
	return NULL;
}

struct proc_table *proc_table__new(size_t max_procs)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->max = max_procs ? max_procs : PROCS_DEFAULT;
	pt->paths = pathstore__new(PATH_LEN_MAX, PATH_STORE_MAX);
	if (!pt->paths) {
		free(pt);
		errno = ENOMEM;
		return NULL;
	}
	return pt;
}

static void proc_free(struct proc *p)
{
	maps_put(p->pt->paths, p->maps, p->nr_maps);
	free(p->maps);
	free(p->hints);
	free(p);
}

/* Take @p out of the table and the recency list, and free it. */
static void table_drop(struct proc_table *pt, struct proc *p)
{
	htab__del(&pt->procs, pid_hash(p->pid), (uintptr_t)p);
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
	/* Every path was held by a mapping just freed: the store is empty. */
	pathstore__free(pt->paths);
	htab__free(&pt->procs);
	free(pt);
}

struct proc *proc_table__find(struct proc_table *pt, uint32_t pid, uint64_t pstart)
{
	struct pkey k = { pid, pstart };
	struct proc *p = (struct proc *)(uintptr_t)htab__find(&pt->procs, pid_hash(pid), proc_eq,
							      NULL, &k);

	if (p)
		lru__touch(&pt->lru, &p->lru);
	return p;
}

/*
 * proc_table__add(), except that a full table never evicts @keep (a parent
 * being forked; NULL: none): NULL + ENOSPC if it is the only process and
 * the table holds one.
 */
static struct proc *table_insert(struct proc_table *pt, uint32_t pid, uint64_t pstart,
				 const struct proc *keep)
{
	struct lru_node *victim;
	struct proc *p;

	proc_table__remove(pt, pid);
	/* Room first: once a victim is dropped, nothing may fail. */
	p = htab__reserve(&pt->procs, 1) ? NULL : calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (pt->nr >= pt->max) {
		victim = pt->lru.tail;
		if (keep && victim == &keep->lru)
			victim = victim->prev;
		if (!victim) {
			free(p);
			errno = ENOSPC;
			return NULL;
		}
		table_drop(pt, lru_entry(victim, struct proc, lru));
	}
	p->pid = pid;
	p->pstart = pstart;
	p->pt = pt;
	htab__add(&pt->procs, pid_hash(pid), (uintptr_t)p);	/* reserved: cannot fail */
	lru__push_front(&pt->lru, &p->lru);
	pt->nr++;
	pt->seen++;
	return p;
}

struct proc *proc_table__add(struct proc_table *pt, uint32_t pid, uint64_t pstart)
{
	return table_insert(pt, pid, pstart, NULL);
}

/* A copy of @p's hints (it has some), for a child of it; NULL + errno. */
static struct proc_hint *hints_dup(const struct proc *p)
{
	struct proc_hint *hints = malloc(p->nr_hints * sizeof(*hints));

	if (hints)
		memcpy(hints, p->hints, p->nr_hints * sizeof(*hints));
	return hints;
}

struct proc *proc_table__fork(struct proc_table *pt, const struct proc *parent,
			      uint32_t pid, uint64_t pstart)
{
	struct proc_hint *hints = NULL;
	struct mapping *maps = NULL;
	size_t n = parent->nr_maps, i;
	struct proc *p;
	int err;

	/* Adding the child drops every process with its pid; paths belong to one table. */
	if (parent->pid == pid || parent->pt != pt) {
		errno = EINVAL;
		return NULL;
	}
	if (n) {
		maps = malloc(n * sizeof(*maps));
		if (!maps)
			return NULL;
		memcpy(maps, parent->maps, n * sizeof(*maps));
	}
	/* The child has a copy of the memory the hints describe. */
	if (parent->nr_hints && !(hints = hints_dup(parent))) {
		free(maps);
		return NULL;
	}
	p = table_insert(pt, pid, pstart, parent);
	if (!p) {
		err = errno;
		free(maps);
		free(hints);
		errno = err;
		return NULL;
	}
	p->hints = hints;
	p->nr_hints = hints ? parent->nr_hints : 0;
	/* Until its own mappings say otherwise (clone with CLONE_NEWNS, then exec). */
	p->mnt_ns = parent->mnt_ns;
	for (i = 0; i < n; i++)
		pathstore__hold(maps[i].path);
	p->maps = maps;
	p->nr_maps = p->cap_maps = n;
	return p;
}

void proc_table__remove(struct proc_table *pt, uint32_t pid)
{
	size_t pos = HTAB_START;
	struct proc *p;

	/* A drop moves what the walk would see next: start it again. */
	while ((p = next_of_pid(pt, pid, &pos))) {
		table_drop(pt, p);
		pos = HTAB_START;
	}
}

size_t proc_table__nr_procs(const struct proc_table *pt)
{
	return pt->nr;
}

size_t proc_table__path_bytes(const struct proc_table *pt)
{
	return pathstore__bytes(pt->paths);
}

size_t proc_table__nr_seen(const struct proc_table *pt)
{
	return pt->seen;
}

uint32_t proc__pid(const struct proc *p)
{
	return p->pid;
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
 * Walk the lines of @buf.  With @maps NULL, count the executable mappings;
 * otherwise fill @maps (sized by the counting pass), interning each path in
 * @ps.  *@nr: the mappings counted or filled, also on -ENOMEM, so that the
 * caller can give their paths back.  -E2BIG past MAPS_MAX_LINES.
 */
static int walk_maps(struct pathstore *ps, const char *buf, size_t len, struct mapping *maps,
		     size_t *nr)
{
	const char *p = buf, *end = buf + len, *nl, *path;
	size_t lines = 0, n = 0, path_len;
	struct mapping m;
	int err = 0;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (++lines > MAPS_MAX_LINES) {
			err = -E2BIG;
			break;
		}
		/* A NUL would cut the path short (even to ""): the kernel never writes one. */
		if (memchr(p, '\0', (size_t)(nl - p)) ||
		    !maps_line__parse(p, nl, &m, &path, &path_len) || !(m.prot & PROT_EXEC))
			continue;
		if (maps) {
			err = pathstore__get(ps, path, path_len, &m.path);
			if (err)
				break;
			maps[n] = m;
		}
		n++;
	}
	*nr = n;
	return err;
}

int proc__parse_maps(struct proc *p, const char *buf, size_t len)
{
	struct pathstore *ps = p->pt->paths;
	struct mapping *maps = NULL;
	size_t nr, i, kept;
	int err;

	/* Count, allocate once, fill: the old mappings stay until this succeeds. */
	err = walk_maps(ps, buf, len, NULL, &nr);
	if (err)
		return err;
	if (nr > MAPS_PER_PROC)
		return -E2BIG;
	if (nr) {
		maps = malloc(nr * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		err = walk_maps(ps, buf, len, maps, &nr);
		if (err) {
			maps_put(ps, maps, nr);
			free(maps);
			return err;
		}
	}

	/* The kernel prints in order; other sources may not, nor avoid overlaps. */
	for (i = 1; i < nr; i++)
		if (maps[i].start < maps[i - 1].start)
			break;
	if (i < nr)
		qsort(maps, nr, sizeof(*maps), mapping_cmp);
	for (i = 0, kept = 0; i < nr; i++) {
		if (kept && maps[i].start < maps[kept - 1].end) {
			pathstore__put(ps, maps[i].path);
			continue;
		}
		maps[kept++] = maps[i];
	}
	if (kept < nr)
		pr_debug("procmap: pid %u: dropped %zu overlapping mappings\n", p->pid, nr - kept);

	maps_put(ps, p->maps, p->nr_maps);
	free(p->maps);
	p->maps = maps;
	p->nr_maps = kept;
	p->cap_maps = nr;
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

void proc__drop_maps(struct proc *p)
{
	maps_put(p->pt->paths, p->maps, p->nr_maps);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = p->cap_maps = 0;
}

void proc__clear_maps(struct proc *p)
{
	proc__drop_maps(p);
	/* A new image: what the hints described is gone with the old one. */
	free(p->hints);
	p->hints = NULL;
	p->nr_hints = 0;
}

int proc__inherit_hints(struct proc *p, const struct proc *parent)
{
	struct proc_hint *hints;

	if (p->nr_hints || !parent->nr_hints || parent == p)
		return 0;
	hints = hints_dup(parent);
	if (!hints)
		return -ENOMEM;
	p->hints = hints;
	p->nr_hints = parent->nr_hints;
	return 0;
}

int proc__add_hint(struct proc *p, const struct proc_hint *h)
{
	struct proc_hint *tmp;

	if (h->start >= h->end)
		return -EINVAL;
	if (p->nr_hints >= PROC_MAX_HINTS)
		return -E2BIG;
	tmp = realloc(p->hints, (p->nr_hints + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	p->hints = tmp;
	p->hints[p->nr_hints++] = *h;
	return 0;
}

const struct proc_hint *proc__find_hint(const struct proc *p, uint64_t addr)
{
	size_t i;

	/* Newest first: a later hint for the same range replaces an earlier one. */
	for (i = p ? p->nr_hints : 0; i-- > 0;)
		if (addr >= p->hints[i].start && addr < p->hints[i].end)
			return &p->hints[i];
	return NULL;
}

struct proc *proc_table__find_pid(struct proc_table *pt, uint32_t pid)
{
	struct proc *p, *best = NULL;
	size_t pos = HTAB_START;

	while ((p = next_of_pid(pt, pid, &pos)))
		if (!best || p->pstart > best->pstart)
			best = p;
	return best;
}

uint64_t proc__pstart(const struct proc *p)
{
	return p->pstart;
}

/*
 * The first mapping of @p that ends above @addr: the one holding @addr if
 * any, else the first above it.  Starts and ends both grow along the array.
 */
static size_t first_ending_above(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first mapping of @p starting at or above @addr. */
static size_t first_starting_from(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for @want mappings in @p.  0 or -ENOMEM, @p unchanged. */
static int maps_reserve(struct proc *p, size_t want)
{
	size_t cap = p->cap_maps ? p->cap_maps : 8;
	struct mapping *maps;

	if (want <= p->cap_maps)
		return 0;
	while (cap < want)
		cap *= 2;
	/* Growth is refused past the cap, so want is within it. */
	if (cap > MAPS_PER_PROC)
		cap = MAPS_PER_PROC;
	maps = realloc(p->maps, cap * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	p->maps = maps;
	p->cap_maps = cap;
	return 0;
}

/* Cut the part of @m below @addr (inside it) away: the pgoff arithmetic. */
static void cut_below(struct mapping *m, uint64_t addr)
{
	m->pgoff += addr - m->start;
	m->start = addr;
}

/*
 * Make [start, end) (not empty) of @p hold @m, or nothing when @m is NULL:
 * the mappings overlapping it, a run [lo, hi) of the array, are replaced by
 * at most three pieces: what stuck out below, @m, what stuck out above.
 * Everything that can fail comes first.  0, or -E2BIG or -ENOMEM with @p
 * unchanged.
 */
static int maps_replace(struct proc *p, uint64_t start, uint64_t end, const struct mapping *m)
{
	struct pathstore *ps = p->pt->paths;
	size_t lo, hi, nr, k = 0, i, mine = SIZE_MAX;
	struct mapping pieces[3];
	const char *path = NULL;
	int err;

	lo = first_ending_above(p, start);
	hi = first_starting_from(p, end);
	if (lo == hi && !m)
		return 0;
	if (lo < hi && p->maps[lo].start < start) {
		pieces[k] = p->maps[lo];
		pieces[k++].end = start;
	}
	if (m) {
		mine = k;
		pieces[k++] = *m;
	}
	if (lo < hi && p->maps[hi - 1].end > end) {
		pieces[k] = p->maps[hi - 1];
		cut_below(&pieces[k++], end);
	}
	nr = p->nr_maps - (hi - lo) + k;
	if (nr > p->nr_maps && nr > MAPS_PER_PROC)
		return -E2BIG;
	if (m && m->path) {
		err = pathstore__get(ps, m->path, strnlen(m->path, PATH_LEN_MAX + 1), &path);
		if (err)
			return err;
	}
	err = maps_reserve(p, nr);
	if (err) {
		pathstore__put(ps, path);
		return err;
	}

	/* Hold the cut pieces' paths before the old mappings let theirs go. */
	for (i = 0; i < k; i++) {
		if (i == mine)
			pieces[i].path = path;
		else
			pathstore__hold(pieces[i].path);
	}
	maps_put(ps, p->maps + lo, hi - lo);
	memmove(p->maps + lo + k, p->maps + hi, (p->nr_maps - hi) * sizeof(*p->maps));
	memcpy(p->maps + lo, pieces, k * sizeof(*pieces));
	p->nr_maps = nr;
	return 0;
}

int proc__map(struct proc *p, const struct mapping *m)
{
	int err;

	if (m->start >= m->end)
		return -EINVAL;
	err = maps_replace(p, m->start, m->end, m);
	/* The latest word: unshare(CLONE_NEWNS) or setns() moves a live process. */
	if (!err && m->mnt_ns)
		p->mnt_ns = m->mnt_ns;
	return err;
}

int proc__unmap(struct proc *p, uint64_t start, uint64_t end)
{
	if (start >= end)
		return start > end ? -EINVAL : 0;
	return maps_replace(p, start, end, NULL);
}

size_t proc__nr_maps(const struct proc *p)
{
	return p->nr_maps;
}

const struct mapping *proc__map_at(const struct proc *p, size_t i)
{
	return i < p->nr_maps ? &p->maps[i] : NULL;
}

uint32_t proc__mnt_ns(const struct proc *p)
{
	return p->mnt_ns;
}

const struct proc *proc_table__next_in_mnt_ns(const struct proc_table *pt, uint32_t mnt_ns,
					       const struct proc *prev)
{
	const struct lru_node *n = prev ? prev->lru.next : pt->lru.head;
	const struct proc *p;

	for (; n && mnt_ns; n = n->next) {
		p = lru_entry(n, struct proc, lru);
		if (p->mnt_ns == mnt_ns)
			return p;
	}
	return NULL;
}

const struct mapping *proc__find_mapping(const struct proc *p, uint64_t addr)
{
	size_t i;

	if (!p)
		return NULL;
	i = first_ending_above(p, addr);
	if (i == p->nr_maps || p->maps[i].start > addr)
		return NULL;
	return &p->maps[i];
}

int proc__note_sampled(struct proc *p)
{
	if (p->sampled)
		return 0;
	p->sampled = 1;
	p->pt->sampled++;
	return 1;
}

size_t proc_table__nr_sampled(const struct proc_table *pt)
{
	return pt->sampled;
}

