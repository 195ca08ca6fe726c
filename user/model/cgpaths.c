// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgpaths: cgroup id -> path (cgpaths.h).  Entries are in one htab by id
 * and one LRU list; an unknown id is an entry without a path, so it costs
 * a hash lookup per sample, not a /proc read, until a walk finds it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/lru.h"
#include "base/util.h"
#include "model/cgpaths.h"

#define WALK_DEPTH 32	/* directory levels a walk descends, at most */

struct cg_entry {
	struct lru_node lru;
	uint64_t id;
	char *path;		/* NULL: not known (yet) */
	uint64_t retry_at;	/* unknown: event time before which /proc is not asked again */
};

struct cgpaths {
	char *mount, *proc;
	size_t cap;
	uint64_t rescan_ns;
	uint64_t next_walk;	/* event time before which no walk starts */
	uint64_t walk_gap;	/* the gap after the last walk: doubles while walks find nothing */
	struct htab tab;	/* hash_fin(id) -> struct cg_entry * */
	struct lru lru;
	size_t nr_unknown;	/* entries without a path: what a walk looks for */
	struct cgpaths_stats st;
	char buf[CGPATHS_PATH_MAX + 1];	/* the walk's current path */
};

/*
 * Undo mountinfo's escapes of whitespace in place: the kernel writes a
 * space, tab or newline of a path as a backslash and three octal digits
 * (\040, \011, \012).  Its \134 (a backslash) is left: a backslash in a
 * cgroup mount point is not worth a reading that two texts could share.
 */
static void unescape_octal(char *s)
{
	char *w = s, c;

	for (; *s; s++) {
		c = 0;
		if (s[0] == '\\' && s[1] == '0' && s[2] == '4' && s[3] == '0')
			c = ' ';
		else if (s[0] == '\\' && s[1] == '0' && s[2] == '1' && (s[3] == '1' || s[3] == '2'))
			c = s[3] == '1' ? '\t' : '\n';
		if (c) {
			*w++ = c;
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

bool cgpaths__next_cgroup2(char *buf, char **save, char mp[CGPATHS_MOUNT_MAX])
{
	char root[CGPATHS_MOUNT_MAX], fstype[64], *line;

	for (line = strtok_r(*save ? NULL : buf, "\n", save); line; line = strtok_r(NULL, "\n", save)) {
		const char *sep = strstr(line, " - ");

		if (sep && sscanf(sep, " - %63s", fstype) == 1 && !strcmp(fstype, "cgroup2") &&
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mp) == 2 && !strcmp(root, "/")) {
			unescape_octal(mp);
			return true;
		}
	}
	return false;
}

int cgpaths__proc_v2(const char *text, const char **path, size_t *len)
{
	const char *line = text, *nl;

	for (;;) {
		nl = strchr(line, '\n');
		if (!strncmp(line, "0::", 3)) {
			*path = line + 3;
			*len = nl ? (size_t)(nl - *path) : strlen(*path);
			return 0;
		}
		if (!nl)
			return -ENOENT;
		line = nl + 1;
	}
}

/* The mount point of the first cgroup2 file system mounted at its root, from mountinfo. */
static char *find_mount(void)
{
	char *buf, *save = NULL, mp[CGPATHS_MOUNT_MAX], *out = NULL;
	size_t blen;

	if (read_file_capped("/proc/self/mountinfo", 16u << 20, &buf, &blen))
		return NULL;
	if (cgpaths__next_cgroup2(buf, &save, mp))
		out = strdup(mp);
	free(buf);
	return out;
}

struct cgpaths *cgpaths__new(const struct cgpaths_opts *o)
{
	struct cgpaths *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->mount = o && o->mount ? strdup(o->mount) : find_mount();
	c->proc = strdup(o && o->proc ? o->proc : "/proc");
	c->cap = o && o->cap ? o->cap : CGPATHS_CAP;
	c->rescan_ns = o && o->rescan_ns ? o->rescan_ns : CGPATHS_RESCAN_NS;
	c->walk_gap = c->rescan_ns;
	if (!c->mount || !c->proc) {
		int err = !c->mount && !(o && o->mount) ? ENOENT : ENOMEM;

		cgpaths__free(c);
		errno = err;
		return NULL;
	}
	return c;
}

static void entry__free(struct cg_entry *e)
{
	free(e->path);
	free(e);
}

void cgpaths__free(struct cgpaths *c)
{
	struct lru_node *n, *next;

	if (!c)
		return;
	for (n = c->lru.head; n; n = next) {
		next = n->next;
		entry__free(lru_entry(n, struct cg_entry, lru));
	}
	htab__free(&c->tab);
	free(c->mount);
	free(c->proc);
	free(c);
}

const struct cgpaths_stats *cgpaths__stats(const struct cgpaths *c)
{
	return &c->st;
}

static bool entry_eq(const void *ctx, const void *key, uint64_t val)
{
	(void)ctx;
	return ((const struct cg_entry *)(uintptr_t)val)->id == *(const uint64_t *)key;
}

static struct cg_entry *find(const struct cgpaths *c, uint64_t id)
{
	return (struct cg_entry *)(uintptr_t)htab__find(&c->tab, hash_fin(id), entry_eq, NULL, &id);
}

/* Drop the least recently used entry. */
static void evict(struct cgpaths *c)
{
	struct cg_entry *e = lru_entry(c->lru.tail, struct cg_entry, lru);

	lru__unlink(&c->lru, &e->lru);
	htab__del(&c->tab, hash_fin(e->id), (uint64_t)(uintptr_t)e);
	c->nr_unknown -= !e->path;
	c->st.evictions++;
	c->st.cached--;
	entry__free(e);
}

/* A new entry for @id, without a path; NULL when out of memory. */
static struct cg_entry *add(struct cgpaths *c, uint64_t id)
{
	struct cg_entry *e;

	if (c->st.cached >= c->cap && c->lru.tail)
		evict(c);
	e = calloc(1, sizeof(*e));
	if (!e || htab__add(&c->tab, hash_fin(id), (uint64_t)(uintptr_t)e)) {
		free(e);
		return NULL;
	}
	e->id = id;
	lru__push_front(&c->lru, &e->lru);
	c->st.cached++;
	c->nr_unknown++;
	return e;
}

static void set_path(struct cgpaths *c, struct cg_entry *e, const char *path)
{
	char *p = strdup(path);

	if (!p)
		return;
	c->nr_unknown -= !e->path;
	free(e->path);
	e->path = p;
}

/* The inode of MOUNT/@rel: the cgroup id of that path.  0 when it cannot be read. */
static uint64_t id_of_path(const struct cgpaths *c, const char *rel)
{
	char full[2 * CGPATHS_PATH_MAX + 2];
	struct stat st;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", c->mount, rel) >= sizeof(full) ||
	    stat(full, &st) || !S_ISDIR(st.st_mode))
		return 0;
	return (uint64_t)st.st_ino;
}

/* The "0::" path of process @pid, if it is still cgroup @id's.  0 or -errno. */
static int from_proc(struct cgpaths *c, struct cg_entry *e, uint32_t pid)
{
	char path[4096], rel[CGPATHS_PATH_MAX + 1], *buf;
	const char *cg;
	size_t len, n;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "%s/%u/cgroup", c->proc, pid);
	if (!pid || read_file_capped(path, 1u << 20, &buf, &len))
		return -ENOENT;
	if (!cgpaths__proc_v2(buf, &cg, &n) && n && n <= CGPATHS_PATH_MAX && cg[0] == '/') {
		memcpy(rel, cg, n);
		rel[n] = '\0';
		/*
		 * Outside our cgroup namespace the kernel prints "/../x": not a
		 * path under our mount, so not one to stat.  The process may
		 * have moved since the sample: the inode says.
		 */
		if (!strstr(rel, "/..") && id_of_path(c, rel) == e->id) {
			set_path(c, e, rel);
			err = e->path ? 0 : -ENOMEM;
		}
	}
	free(buf);
	return err;
}

/*
 * Walk the directory @fd, whose path in the hierarchy is c->buf (@len
 * bytes), naming every unknown entry met.  *@budget directories left.
 */
static void walk(struct cgpaths *c, int fd, size_t len, int depth, size_t *budget)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct cg_entry *e;
	struct stat st;
	size_t n;
	int sub;

	if (!d) {
		close(fd);
		return;
	}
	while (c->nr_unknown && *budget && (de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n = strlen(de->d_name);
		if (len + 1 + n > CGPATHS_PATH_MAX || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		(*budget)--;
		c->buf[len] = '/';
		memcpy(c->buf + len + 1, de->d_name, n + 1);
		e = find(c, (uint64_t)st.st_ino);
		if (e && !e->path) {
			set_path(c, e, c->buf);
			c->st.by_walk += e->path != NULL;
		}
		if (depth + 1 < WALK_DEPTH) {
			sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				walk(c, sub, len + 1 + n, depth + 1, budget);
		}
		c->buf[len] = '\0';
	}
	closedir(d);
}

/*
 * Walk the hierarchy for every id still unknown (@e's among them).  One
 * walk names them all, so an interval costs one walk; the interval
 * doubles, up to 64 times the rescan, while walks name nothing (ids of
 * cgroups already removed), so they cannot cost a share of a CPU.
 */
static void walk_all(struct cgpaths *c, struct cg_entry *e, uint64_t now_ns)
{
	uint64_t before = c->st.by_walk;
	size_t budget = CGPATHS_WALK_MAX;
	int fd;

	c->st.walks++;
	if (id_of_path(c, "/") == e->id) {
		set_path(c, e, "/");
		c->st.by_walk += e->path != NULL;
	}
	c->buf[0] = '\0';
	fd = open(c->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && c->nr_unknown)
		walk(c, fd, 0, 0, &budget);
	else if (fd >= 0)
		close(fd);
	if (c->st.by_walk > before)
		c->walk_gap = c->rescan_ns;
	else if (c->walk_gap < 64 * c->rescan_ns)
		c->walk_gap *= 2;
	c->next_walk = now_ns + c->walk_gap;
}

const char *cgpaths__lookup(struct cgpaths *c, uint64_t id, uint32_t pid, uint64_t now_ns)
{
	struct cg_entry *e;

	if (!c || !id)
		return NULL;
	c->st.lookups++;
	e = find(c, id);
	if (e) {
		lru__touch(&c->lru, &e->lru);
		if (e->path)
			return e->path;
	}
	c->st.misses++;
	if (!e && !(e = add(c, id)))
		return NULL;
	/* An id that stays unknown costs a hash lookup per sample, not a /proc read. */
	if (now_ns >= e->retry_at) {
		e->retry_at = now_ns + c->rescan_ns;
		if (!from_proc(c, e, pid)) {
			c->st.by_proc++;
			return e->path;
		}
	}
	if (now_ns < c->next_walk)
		return NULL;
	walk_all(c, e, now_ns);
	return e->path;
}
