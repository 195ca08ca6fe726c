// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procmap, the event side: map, unmap, fork, exec, exit replayed on the
 * model, checked against the exact layout each must leave (start, end,
 * pgoff and path of every piece), the caps, and memory under a storm of
 * short-lived processes.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "test.h"
#include "model/procmap.h"
#include "base/util.h"

TEST_SUITE("procmap_events");

#define PG 0x1000ull

/* What one piece of a layout must be. */
struct piece {
	uint64_t start, end, pgoff;
	const char *path;	/* NULL: none */
};

static struct proc_table *pt;

static struct proc *fresh(uint32_t pid)
{
	return proc_table__add(pt, pid, 1000 + pid);
}

/* A file mapping of pages [first, last) at file page @pgoff_pages. */
static struct mapping file_map(uint64_t first, uint64_t last, uint64_t pgoff_pages, const char *path)
{
	struct mapping m = {
		.start = first * PG,
		.end = last * PG,
		.pgoff = pgoff_pages * PG,
		.dev = makedev(8, 1),
		.ino = first + 1,
		.mtime_sec = 1700000000,
		.mtime_nsec = 42,
		.prot = PROT_READ | PROT_EXEC,
		.kind = MAPPING_FILE,
		.path = path,
	};

	return m;
}

static int map(struct proc *p, uint64_t first, uint64_t last, uint64_t pgoff_pages, const char *path)
{
	struct mapping m = file_map(first, last, pgoff_pages, path);

	return proc__map(p, &m);
}

/*
 * @p holds exactly the @n pieces of @want (in pages): each found at both
 * ends with its pgoff and path, nothing between them or around them.
 */
static bool layout_is(const struct proc *p, const struct piece *want, size_t n, const char *what)
{
	char msg[160];
	size_t i;

	snprintf(msg, sizeof(msg), "%s: number of mappings", what);
	if (!ASSERT_EQ(proc__nr_maps(p), n, msg))
		return false;
	for (i = 0; i < n; i++) {
		uint64_t start = want[i].start * PG, end = want[i].end * PG;
		const struct mapping *m = proc__find_mapping(p, start);

		snprintf(msg, sizeof(msg), "%s: piece %zu [%#" PRIx64 ", %#" PRIx64 ")", what, i, start, end);
		if (!ASSERT_OK_PTR(m, msg) || !ASSERT_EQ(m->start, start, msg) ||
		    !ASSERT_EQ(m->end, end, msg) || !ASSERT_EQ(m->pgoff, want[i].pgoff * PG, msg) ||
		    !ASSERT_TRUE(proc__find_mapping(p, end - 1) == m, msg))
			return false;
		if (want[i].path ? !ASSERT_STREQ(m->path, want[i].path, msg) : !ASSERT_NULL(m->path, msg))
			return false;
		/* Where no piece starts at this one's end, nothing is mapped there. */
		if ((i + 1 == n || want[i + 1].start != want[i].end) &&
		    !ASSERT_NULL(proc__find_mapping(p, end), msg))
			return false;
		if ((i == 0 || want[i - 1].end != want[i].start) && start &&
		    !ASSERT_NULL(proc__find_mapping(p, start - 1), msg))
			return false;
	}
	return true;
}

#define LAYOUT_IS(p, what, ...) ({					\
	static const struct piece ___w[] = { __VA_ARGS__ };		\
	layout_is((p), ___w, sizeof(___w) / sizeof(___w[0]), (what)); })
#define EMPTY(p, what) ASSERT_EQ(proc__nr_maps(p), (size_t)0, (what))

static void test_map_fields_copied(void)
{
	struct proc *p = fresh(1);
	char path[] = "/usr/lib/libfoo.so";
	struct mapping m = file_map(0x10, 0x20, 3, path);
	const struct mapping *got;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	m.deleted = 1;
	m.prot |= PROT_WRITE;
	ASSERT_OK(proc__map(p, &m), "map");
	path[1] = 'X';	/* the caller's buffer is not kept */
	got = proc__find_mapping(p, 0x10 * PG + 5);
	if (!ASSERT_OK_PTR(got, "found"))
		return;
	ASSERT_STREQ(got->path, "/usr/lib/libfoo.so", "path copied");
	ASSERT_EQ(got->dev, (uint64_t)makedev(8, 1), "dev");
	ASSERT_EQ(got->ino, (uint64_t)0x11, "ino");
	ASSERT_EQ(got->mtime_sec, (int64_t)1700000000, "mtime_sec");
	ASSERT_EQ(got->mtime_nsec, (uint32_t)42, "mtime_nsec");
	ASSERT_EQ(got->prot, (uint32_t)(PROT_READ | PROT_WRITE | PROT_EXEC), "prot");
	ASSERT_EQ(got->kind, (uint32_t)MAPPING_FILE, "kind");
	ASSERT_EQ(got->deleted, 1, "deleted");
	ASSERT_EQ(mapping__file_offset(got, 0x10 * PG + 5), 3 * PG + 5, "file offset");

	m = file_map(0x30, 0x31, 0, NULL);
	m.kind = MAPPING_ANON;
	ASSERT_OK(proc__map(p, &m), "anon");
	m = file_map(0x40, 0x41, 0, "");
	ASSERT_OK(proc__map(p, &m), "empty path");
	LAYOUT_IS(p, "three", { 0x10, 0x20, 3, "/usr/lib/libfoo.so" }, { 0x30, 0x31, 0, NULL },
		  { 0x40, 0x41, 0, NULL });

	m = file_map(5, 5, 0, "/x");
	ASSERT_EQ(proc__map(p, &m), -EINVAL, "empty range");
	m = file_map(6, 5, 0, "/x");
	ASSERT_EQ(proc__map(p, &m), -EINVAL, "inverted range");
	ASSERT_EQ(proc__nr_maps(p), (size_t)3, "unchanged");
	proc_table__remove(pt, 1);
}

/* The kernel splits a VMA that an mmap(MAP_FIXED) or mprotect lands inside. */
static void test_map_inside_splits(void)
{
	struct proc *p = fresh(2);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x20, 0x100, "/a"), "map a");
	ASSERT_OK(map(p, 0x14, 0x16, 0, "/b"), "map b inside a");
	LAYOUT_IS(p, "split in three", { 0x10, 0x14, 0x100, "/a" }, { 0x14, 0x16, 0, "/b" },
		  { 0x16, 0x20, 0x106, "/a" });
	ASSERT_EQ(mapping__file_offset(proc__find_mapping(p, 0x17 * PG + 8), 0x17 * PG + 8),
		  0x107 * PG + 8, "right piece: the file offset of an address is unchanged");

	/* Sharing the start, sharing the end: two pieces, not three. */
	ASSERT_OK(map(p, 0x10, 0x11, 7, "/c"), "at a's start");
	ASSERT_OK(map(p, 0x1f, 0x20, 9, "/d"), "at a's end");
	LAYOUT_IS(p, "ends", { 0x10, 0x11, 7, "/c" }, { 0x11, 0x14, 0x101, "/a" }, { 0x14, 0x16, 0, "/b" },
		  { 0x16, 0x1f, 0x106, "/a" }, { 0x1f, 0x20, 9, "/d" });
	proc_table__remove(pt, 2);
}

static void test_map_replaces(void)
{
	struct proc *p = fresh(3);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x20, 0, "/a"), "a");
	ASSERT_OK(map(p, 0x10, 0x20, 4, "/b"), "exactly over a");
	LAYOUT_IS(p, "replaced", { 0x10, 0x20, 4, "/b" });

	/* Over two neighbours: both cut, the one between them gone. */
	ASSERT_OK(map(p, 0x20, 0x30, 0x50, "/c"), "c");
	ASSERT_OK(map(p, 0x30, 0x38, 0x60, "/d"), "d, adjacent");
	ASSERT_OK(map(p, 0x40, 0x48, 0x70, "/e"), "e, after a gap");
	ASSERT_OK(map(p, 0x1c, 0x44, 1, "/n"), "over b's tail, c, d, the gap, e's head");
	LAYOUT_IS(p, "neighbours cut", { 0x10, 0x1c, 4, "/b" }, { 0x1c, 0x44, 1, "/n" },
		  { 0x44, 0x48, 0x74, "/e" });

	/* Over everything, edges included. */
	ASSERT_OK(map(p, 0x10, 0x48, 0, "/all"), "everything");
	LAYOUT_IS(p, "one left", { 0x10, 0x48, 0, "/all" });
	ASSERT_OK(map(p, 0x8, 0x50, 0, "/wider"), "wider than everything");
	LAYOUT_IS(p, "wider", { 0x8, 0x50, 0, "/wider" });
	proc_table__remove(pt, 3);
}

static void test_unmap_middle(void)
{
	struct proc *p = fresh(4);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x20, 0x30, "/a"), "map");
	ASSERT_OK(proc__unmap(p, 0x14 * PG, 0x18 * PG), "munmap of a middle piece");
	LAYOUT_IS(p, "hole", { 0x10, 0x14, 0x30, "/a" }, { 0x18, 0x20, 0x38, "/a" });
	ASSERT_OK(proc__unmap(p, 0x1a * PG, 0x1a * PG + 1), "one byte: a page in the kernel, a byte here");
	ASSERT_NULL(proc__find_mapping(p, 0x1a * PG), "the byte is gone");
	ASSERT_EQ(proc__find_mapping(p, 0x1a * PG + 1)->pgoff, 0x3a * PG + 1, "byte-exact pgoff");
	proc_table__remove(pt, 4);
}

static void test_unmap_spanning_and_edges(void)
{
	struct proc *p = fresh(5);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x18, 0, "/a"), "a");
	ASSERT_OK(map(p, 0x18, 0x20, 0, "/b"), "b");
	ASSERT_OK(map(p, 0x28, 0x30, 0x10, "/c"), "c");
	ASSERT_OK(map(p, 0x30, 0x38, 0, "/d"), "d");
	ASSERT_OK(proc__unmap(p, 0x14 * PG, 0x2c * PG), "across a's tail, b, a gap, c's head");
	LAYOUT_IS(p, "spanning", { 0x10, 0x14, 0, "/a" }, { 0x2c, 0x30, 0x14, "/c" }, { 0x30, 0x38, 0, "/d" });

	ASSERT_OK(proc__unmap(p, 0x8 * PG, 0x10 * PG), "ending at a's start");
	ASSERT_OK(proc__unmap(p, 0x14 * PG, 0x2c * PG), "exactly the hole");
	ASSERT_OK(proc__unmap(p, 0x38 * PG, 0x40 * PG), "starting at d's end");
	ASSERT_OK(proc__unmap(p, 0x12 * PG, 0x12 * PG), "empty, inside a: no split");
	ASSERT_EQ(proc__unmap(p, 0x13 * PG, 0x12 * PG), -EINVAL, "inverted");
	LAYOUT_IS(p, "nothing removed", { 0x10, 0x14, 0, "/a" }, { 0x2c, 0x30, 0x14, "/c" },
		  { 0x30, 0x38, 0, "/d" });

	ASSERT_OK(proc__unmap(p, 0x10 * PG, 0x11 * PG), "a's first page");
	ASSERT_OK(proc__unmap(p, 0x37 * PG, 0x38 * PG), "d's last page");
	ASSERT_OK(proc__unmap(p, 0x2c * PG, 0x30 * PG), "c exactly");
	LAYOUT_IS(p, "edges", { 0x11, 0x14, 1, "/a" }, { 0x30, 0x37, 0, "/d" });
	ASSERT_OK(proc__unmap(p, 0, UINT64_MAX), "everything");
	EMPTY(p, "empty");
	ASSERT_OK(proc__unmap(p, 0x10 * PG, 0x20 * PG), "on an empty process");
	proc_table__remove(pt, 5);
}

/* mremap arrives as unmap(old) + map(new) with the old pgoff. */
static void test_mremap_move(void)
{
	const struct mapping *m;
	struct proc *p = fresh(6);
	struct mapping moved;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x14, 2, "/jit.so"), "map");
	ASSERT_OK(map(p, 0x14, 0x18, 6, "/next.so"), "neighbour");
	/* The event brings its own path: the model's may go with the unmap. */
	moved = *proc__find_mapping(p, 0x10 * PG);
	moved.path = "/jit.so";
	moved.start = 0x100 * PG;
	moved.end = 0x104 * PG;
	ASSERT_OK(proc__unmap(p, 0x10 * PG, 0x14 * PG), "unmap old place");
	ASSERT_OK(proc__map(p, &moved), "map new place");
	LAYOUT_IS(p, "moved", { 0x14, 0x18, 6, "/next.so" }, { 0x100, 0x104, 2, "/jit.so" });
	m = proc__find_mapping(p, 0x101 * PG + 3);
	if (ASSERT_OK_PTR(m, "new place"))
		ASSERT_EQ(mapping__file_offset(m, 0x101 * PG + 3), 3 * PG + 3, "same file offset as before");

	/* Moving a middle part: the source splits, the moved part keeps its own pgoff. */
	moved = *proc__find_mapping(p, 0x101 * PG);
	moved.path = "/jit.so";
	moved.pgoff += 1 * PG;
	moved.start = 0x200 * PG;
	moved.end = 0x202 * PG;
	ASSERT_OK(proc__unmap(p, 0x101 * PG, 0x103 * PG), "unmap the middle");
	ASSERT_OK(proc__map(p, &moved), "map it elsewhere");
	LAYOUT_IS(p, "part moved", { 0x14, 0x18, 6, "/next.so" }, { 0x100, 0x101, 2, "/jit.so" },
		  { 0x103, 0x104, 5, "/jit.so" }, { 0x200, 0x202, 3, "/jit.so" });
	proc_table__remove(pt, 6);
}

static void test_fork_copy(void)
{
	struct proc *parent = fresh(7), *child, *again;
	const struct mapping *pm, *cm;

	if (!ASSERT_OK_PTR(parent, "add"))
		return;
	ASSERT_OK(map(parent, 0x10, 0x20, 0, "/bin/sh"), "a");
	ASSERT_OK(map(parent, 0x30, 0x40, 8, "/lib/libc.so.6"), "b");
	child = proc_table__fork(pt, parent, 8, 5000);
	if (!ASSERT_OK_PTR(child, "fork"))
		return;
	ASSERT_TRUE(proc_table__find(pt, 7, 1007) == parent, "parent still there");
	ASSERT_EQ(proc__pid(child), (uint32_t)8, "child pid");
	LAYOUT_IS(child, "copy", { 0x10, 0x20, 0, "/bin/sh" }, { 0x30, 0x40, 8, "/lib/libc.so.6" });
	pm = proc__find_mapping(parent, 0x30 * PG);
	cm = proc__find_mapping(child, 0x30 * PG);
	ASSERT_TRUE(pm != cm, "the child has its own mappings");
	ASSERT_TRUE(pm->path == cm->path, "but shares the interned path");

	/* Edits on either side stay there. */
	ASSERT_OK(proc__unmap(parent, 0x34 * PG, 0x38 * PG), "parent unmaps");
	ASSERT_OK(map(parent, 0x50, 0x51, 0, "/parent-only"), "parent maps");
	ASSERT_OK(map(child, 0x18, 0x1c, 1, "/child-only"), "child maps");
	LAYOUT_IS(parent, "parent", { 0x10, 0x20, 0, "/bin/sh" }, { 0x30, 0x34, 8, "/lib/libc.so.6" },
		  { 0x38, 0x40, 0x10, "/lib/libc.so.6" }, { 0x50, 0x51, 0, "/parent-only" });
	LAYOUT_IS(child, "child", { 0x10, 0x18, 0, "/bin/sh" }, { 0x18, 0x1c, 1, "/child-only" },
		  { 0x1c, 0x20, 0xc, "/bin/sh" }, { 0x30, 0x40, 8, "/lib/libc.so.6" });

	/* The parent exits first: the child's paths live on (ASan would say otherwise). */
	proc_table__remove(pt, 7);
	LAYOUT_IS(child, "orphan", { 0x10, 0x18, 0, "/bin/sh" }, { 0x18, 0x1c, 1, "/child-only" },
		  { 0x1c, 0x20, 0xc, "/bin/sh" }, { 0x30, 0x40, 8, "/lib/libc.so.6" });

	/* A fork into a pid in the table replaces that (dead) process. */
	parent = fresh(9);
	if (!ASSERT_OK_PTR(parent, "add 9"))
		return;
	again = proc_table__fork(pt, child, 9, 6000);
	if (!ASSERT_OK_PTR(again, "fork into pid 9"))
		return;
	ASSERT_NULL(proc_table__find(pt, 9, 1009), "old pid 9 dropped");
	ASSERT_EQ(proc__nr_maps(again), (size_t)4, "copy of the child");
	errno = 0;
	ASSERT_NULL(proc_table__fork(pt, again, 9, 7000), "a child cannot have its parent's pid");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	ASSERT_TRUE(proc_table__find(pt, 9, 6000) == again, "the parent is left alone");
	proc_table__remove(pt, 8);
	proc_table__remove(pt, 9);
}

/* A full table evicts the least recent process, never the parent. */
static void test_fork_full_table(void)
{
	struct proc_table *t = proc_table__new(2);
	struct proc *a, *b, *c;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	a = proc_table__add(t, 1, 1);
	b = proc_table__add(t, 2, 2);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b") || !ASSERT_OK(map(a, 1, 2, 0, "/a"), "map"))
		goto out;
	proc_table__find(t, 2, 2);	/* a is now the least recent */
	c = proc_table__fork(t, a, 3, 3);
	if (!ASSERT_OK_PTR(c, "fork in a full table"))
		goto out;
	ASSERT_TRUE(proc_table__find(t, 1, 1) == a, "parent kept");
	ASSERT_NULL(proc_table__find(t, 2, 2), "the other one evicted");
	LAYOUT_IS(c, "copy", { 1, 2, 0, "/a" });
	proc_table__free(t);

	t = proc_table__new(1);
	if (!ASSERT_OK_PTR(t, "new(1)"))
		return;
	a = proc_table__add(t, 1, 1);
	if (!ASSERT_OK_PTR(a, "a"))
		goto out;
	errno = 0;
	ASSERT_NULL(proc_table__fork(t, a, 2, 2), "no room for two");
	ASSERT_EQ(errno, ENOSPC, "ENOSPC");
	ASSERT_TRUE(proc_table__find(t, 1, 1) == a, "parent kept");
out:
	proc_table__free(t);
}

static void test_exec_exit_reuse(void)
{
	struct proc *p = fresh(10), *q;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(map(p, 0x10, 0x20, 0, "/bin/sh"), "map");
	ASSERT_OK(map(p, 0x30, 0x40, 0, "/lib/libc.so.6"), "map");
	proc__clear_maps(p);	/* exec */
	EMPTY(p, "exec reset");
	ASSERT_NULL(proc__find_mapping(p, 0x10 * PG), "old image gone");
	ASSERT_OK(map(p, 0x10, 0x18, 2, "/usr/bin/python3"), "new image");
	ASSERT_OK(map(p, 0x30, 0x40, 0, "/lib/libc.so.6"), "its libc");
	LAYOUT_IS(p, "after exec", { 0x10, 0x18, 2, "/usr/bin/python3" }, { 0x30, 0x40, 0, "/lib/libc.so.6" });

	/* The pid is reused by another process: a different start time. */
	q = proc_table__add(pt, 10, 999999);
	if (!ASSERT_OK_PTR(q, "reuse"))
		return;
	ASSERT_NULL(proc_table__find(pt, 10, 1010), "the old one is gone");
	EMPTY(q, "the new one starts empty");
	ASSERT_OK(map(q, 0x10, 0x11, 0, "/other"), "map");
	LAYOUT_IS(q, "its own", { 0x10, 0x11, 0, "/other" });

	proc_table__remove(pt, 10);	/* exit */
	ASSERT_NULL(proc_table__find(pt, 10, 999999), "exited");
}

/* Path caps: the mapping is kept, only its path is not. */
static void test_path_caps(void)
{
	size_t i, n = 5000, with_path = 0;
	struct proc *p = fresh(11);
	char *path = malloc(4097);
	const struct mapping *m;

	if (!ASSERT_OK_PTR(p, "add") || !ASSERT_OK_PTR(path, "malloc"))
		goto out;
	memset(path, 'a', 4096);
	path[0] = '/';
	path[4096] = '\0';
	ASSERT_OK(map(p, 1, 2, 0, path), "4096 bytes");
	path[4095] = '\0';
	ASSERT_OK(map(p, 2, 3, 0, path), "4095 bytes");
	m = proc__find_mapping(p, 1 * PG);
	if (ASSERT_OK_PTR(m, "too long: mapped"))
		ASSERT_NULL(m->path, "too long: no path");
	m = proc__find_mapping(p, 2 * PG);
	if (ASSERT_OK_PTR(m, "longest") && ASSERT_OK_PTR(m->path, "longest: kept"))
		ASSERT_EQ(strlen(m->path), (size_t)4095, "whole");

	/* 5000 distinct 4 KiB paths are past the 16 MiB budget (it says so once: quiet). */
	log_set_level(LOG_ERROR);
	for (i = 0; i < n; i++) {
		int len = snprintf(path, 32, "/%zu/", i);

		path[len] = 'b';	/* over the NUL: the filler up to 4095 bytes follows */
		if (!ASSERT_OK(map(p, 0x100 + i, 0x101 + i, 0, path), "map"))
			goto out;
		with_path += proc__find_mapping(p, (0x100 + i) * PG)->path != NULL;
	}
	log_set_level(LOG_WARN);
	ASSERT_TRUE(with_path > 3500 && with_path < n, "the budget is reached, not before 14 MiB");
	ASSERT_NULL(proc__find_mapping(p, (0x100 + n - 1) * PG)->path, "the last has none");
	ASSERT_OK_PTR(proc__find_mapping(p, 0x100 * PG)->path, "the first has its path");
	/* An interned path costs nothing more: still given. */
	ASSERT_OK(map(p, 3, 4, 0, proc__find_mapping(p, 2 * PG)->path), "a path already held");
	ASSERT_OK_PTR(proc__find_mapping(p, 3 * PG)->path, "kept past the budget");
	/* Freed paths make room again. */
	ASSERT_OK(proc__unmap(p, 0x100 * PG, 0x200 * PG), "unmap 256");
	ASSERT_OK(map(p, 0x100, 0x101, 0, "/a/new/path"), "map");
	ASSERT_STREQ(proc__find_mapping(p, 0x100 * PG)->path, "/a/new/path", "room again");
out:
	free(path);
	proc_table__remove(pt, 11);
}

/* The per-process cap: a map or a split past it is refused, the rest works. */
static void test_maps_cap(void)
{
	struct proc *p = fresh(12);
	const uint32_t cap = 65536;
	uint32_t i;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	for (i = 0; i < cap; i++)
		if (!ASSERT_OK(map(p, 2 * i, 2 * i + 1, i, (i & 1) ? "/odd" : "/even"), "under the cap"))
			return;
	ASSERT_EQ(proc__map(p, &(struct mapping){ .start = 2 * cap * PG, .end = (2 * cap + 1) * PG }),
		  -E2BIG, "one more");
	ASSERT_EQ(proc__unmap(p, 4 * PG + 1, 4 * PG + 2), -E2BIG, "a split past the cap");
	ASSERT_EQ(proc__nr_maps(p), (size_t)cap, "unchanged");
	ASSERT_EQ(proc__find_mapping(p, 4 * PG + 1)->start, 4 * PG, "not split");
	ASSERT_OK(map(p, 0, 1, 77, "/replaced"), "a replacement does not grow");
	ASSERT_OK(map(p, 0, 3, 0, "/merged"), "nor does a map over two");
	ASSERT_OK(map(p, 2 * cap, 2 * cap + 1, 0, "/now"), "a slot freed");
	ASSERT_EQ(proc__nr_maps(p), (size_t)cap, "at the cap");
	ASSERT_OK(proc__unmap(p, 0, UINT64_MAX), "all");
	EMPTY(p, "empty");
	proc_table__remove(pt, 12);
}

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_FROM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_FROM_ASAN 1
#endif
#endif

/* Bytes allocated now; ASan replaces malloc, and with it mallinfo2's view. */
#ifdef HEAP_FROM_ASAN
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}
#endif

/*
 * 100k short-lived processes, each forked from a long-lived parent, given
 * its own binary and a shared library, then exiting, 64 alive at a time:
 * the table and the path store give everything back.
 */
static void test_storm_bounded(void)
{
	struct proc_table *t = proc_table__new(0);
	const uint32_t n = 100000, window = 64;
	size_t before = 0, peak_procs = 0;
	struct proc *parent, *c;
	char path[64];
	uint32_t i;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	parent = proc_table__add(t, 1, 1);
	if (!ASSERT_OK_PTR(parent, "parent") || !ASSERT_OK(map(parent, 0x10, 0x20, 0, "/bin/sh"), "map"))
		goto out;
	for (i = 0; i < n; i++) {
		uint32_t pid = 2 + i % 30000;	/* pids wrap and are reused */

		if (i == 1000)
			before = heap_in_use();	/* once the window is full, buckets grown */
		if (i >= window)
			proc_table__remove(t, 2 + (i - window) % 30000);
		c = proc_table__fork(t, parent, pid, 10 + i);
		if (!ASSERT_OK_PTR(c, "fork"))
			goto out;
		snprintf(path, sizeof(path), "/tmp/job-%u", i);
		proc__clear_maps(c);	/* exec */
		if (!ASSERT_OK(map(c, 0x10, 0x18, 0, path), "map") ||
		    !ASSERT_OK(map(c, 0x30, 0x40, 0, "/lib/libc.so.6"), "map libc") ||
		    !ASSERT_OK(proc__unmap(c, 0x12 * PG, 0x14 * PG), "unmap"))
			goto out;
		if (proc_table__nr_procs(t) > peak_procs)
			peak_procs = proc_table__nr_procs(t);
	}
	ASSERT_EQ(peak_procs, (size_t)window + 1, "at most the window and the parent alive");
	ASSERT_EQ(proc_table__nr_seen(t), (size_t)n + 1, "seen");
	ASSERT_TRUE(heap_in_use() < before + 64 * 1024, "the heap did not grow with the storm");
	for (i = n - window; i < n; i++)
		proc_table__remove(t, 2 + i % 30000);
	ASSERT_EQ(proc_table__nr_procs(t), (size_t)1, "only the parent left");
	LAYOUT_IS(parent, "parent untouched", { 0x10, 0x20, 0, "/bin/sh" });
out:
	proc_table__free(t);
}

/*
 * A process's mount namespace is its latest mapping's that said (one made
 * after an unshare or setns says another), inherited at fork; the walk
 * over a namespace's processes goes most recently used first, reorders
 * nothing, and stops at the end.
 */
static void test_mnt_ns(void)
{
	struct proc_table *t = proc_table__new(0);
	struct proc *a, *b, *c, *d;
	const struct mapping *got;
	const struct proc *w;
	struct mapping m;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	a = proc_table__add(t, 1, 1);
	b = proc_table__add(t, 2, 2);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	ASSERT_EQ(proc__mnt_ns(a), (uint32_t)0, "unknown at first");
	m = file_map(0x10, 0x20, 0, "/bin/sh");
	m.mnt_ns = 4026531841u;
	ASSERT_OK(proc__map(a, &m), "map in the first namespace");
	got = proc__find_mapping(a, 0x10 * PG);
	if (ASSERT_OK_PTR(got, "found"))
		ASSERT_EQ(got->mnt_ns, 4026531841u, "kept in the mapping");
	m = file_map(0x30, 0x31, 0, "/lib/x.so");
	ASSERT_OK(proc__map(a, &m), "a mapping that does not say");
	ASSERT_EQ(proc__mnt_ns(a), 4026531841u, "the last one that said");
	m.mnt_ns = 4026532000u;
	ASSERT_OK(proc__map(b, &m), "b in another");
	c = proc_table__fork(t, a, 3, 3);
	if (!ASSERT_OK_PTR(c, "fork"))
		goto out;
	ASSERT_EQ(proc__mnt_ns(c), 4026531841u, "inherited at fork");
	m = file_map(0x40, 0x41, 0, "/srv/app");
	m.mnt_ns = 4026532000u;
	d = proc_table__fork(t, a, 4, 4);
	if (!ASSERT_OK_PTR(d, "fork") || !ASSERT_OK(proc__map(d, &m), "unshared, then mapped"))
		goto out;
	ASSERT_EQ(proc__mnt_ns(d), 4026532000u, "moved");
	ASSERT_EQ(proc__mnt_ns(a), 4026531841u, "its parent did not");

	/* Most recently used first: c was made after a, d after c; then a is used. */
	proc_table__find(t, 1, 1);
	w = proc_table__next_in_mnt_ns(t, 4026531841u, NULL);
	ASSERT_TRUE(w == a, "a, used last");
	w = w ? proc_table__next_in_mnt_ns(t, 4026531841u, w) : NULL;
	ASSERT_TRUE(w == c, "then c");
	w = w ? proc_table__next_in_mnt_ns(t, 4026531841u, w) : NULL;
	ASSERT_NULL(w, "no more");
	ASSERT_TRUE(proc_table__next_in_mnt_ns(t, 4026532000u, NULL) == d, "d, then");
	ASSERT_TRUE(proc_table__next_in_mnt_ns(t, 4026532000u, d) == b, "b");
	ASSERT_NULL(proc_table__next_in_mnt_ns(t, 0, NULL), "0 is no namespace");
	ASSERT_NULL(proc_table__next_in_mnt_ns(t, 7, NULL), "nobody there");
	/* The walk did not reorder: a is still the most recent. */
	ASSERT_TRUE(proc_table__next_in_mnt_ns(t, 4026531841u, NULL) == a, "order unchanged");
	proc__clear_maps(a);
	ASSERT_EQ(proc__mnt_ns(a), 4026531841u, "exec keeps the namespace until the new image says");
out:
	proc_table__free(t);
}

int main(void)
{
	pt = proc_table__new(0);
	if (!pt) {
		printf("FAIL procmap_events/setup: proc_table__new: %s\n", strerror(errno));
		return 1;
	}
	RUN_TEST(test_map_fields_copied);
	RUN_TEST(test_map_inside_splits);
	RUN_TEST(test_map_replaces);
	RUN_TEST(test_unmap_middle);
	RUN_TEST(test_unmap_spanning_and_edges);
	RUN_TEST(test_mremap_move);
	RUN_TEST(test_fork_copy);
	RUN_TEST(test_fork_full_table);
	RUN_TEST(test_exec_exit_reuse);
	RUN_TEST(test_path_caps);
	RUN_TEST(test_maps_cap);
	RUN_TEST(test_storm_bounded);
	RUN_TEST(test_mnt_ns);
	proc_table__free(pt);
	return TEST_EXIT();
}
