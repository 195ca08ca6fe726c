// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mapevents: the mapping tracker's records replayed into the model, as the
 * recorder does with the ring buffer: map, unmap, fork, exec, exit, and
 * malformed records, built here byte by byte.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "test.h"
#include "bpfsym.h"
#include "ingest/mapevents.h"

TEST_SUITE("mapevents");

static struct proc_table *pt;
static struct mapevents *me;
static struct mapevents_stats st;	/* a copy, refreshed after each record */

/* As ingest.c's dispatch routes a record (a header too short or too long is ingest's to count). */
static int route(const void *rec, size_t len)
{
	const struct bpfsym_ev_hdr *h = rec;

	if (len < sizeof(*h) || h->size > len) {
		mapevents__bad(me);
		return 0;
	}
	switch (h->type) {
	case BPFSYM_EV_MAP:
		return mapevents__map(me, rec, len);
	case BPFSYM_EV_UNMAP:
		return mapevents__unmap(me, rec, len);
	case BPFSYM_EV_FORK:
		return mapevents__fork(me, rec, len);
	case BPFSYM_EV_EXEC:
		return mapevents__exec(me, rec, len);
	case BPFSYM_EV_RESYNC:
		return mapevents__resync(me, rec, len);
	case BPFSYM_EV_EXIT:
		return mapevents__exit(me, rec, len);
	default:
		mapevents__bad(me);
		return 0;
	}
}

static int apply(const void *rec, size_t len)
{
	int err = route(rec, len);

	st = *mapevents__stats(me);
	return err;
}

static size_t map_rec(struct bpfsym_map_ev *e, uint32_t pid, uint64_t pstart, uint64_t start,
		      uint64_t end, uint64_t pgoff, const char *path, uint32_t flags)
{
	size_t plen = path ? strlen(path) : 0;

	memset(e, 0, sizeof(*e));
	e->hdr.type = BPFSYM_EV_MAP;
	e->hdr.size = (uint16_t)(BPFSYM_MAP_EV_HDR_SIZE + plen + 1);
	e->pid = pid;
	e->tid = pid;
	e->pstart = pstart;
	e->start = start;
	e->end = end;
	e->pgoff = pgoff;
	e->dev = (8ull << 20) | 1;	/* the kernel's 8:1 */
	e->ino = 42;
	e->prot = PROT_READ | PROT_EXEC;
	e->flags = flags;
	e->cause = BPFSYM_MAP_MMAP;
	e->mnt_ns = 4026531841u;
	e->path_len = (uint16_t)plen;
	if (plen)
		memcpy(e->path, path, plen);
	return e->hdr.size;
}

static void unmap(uint32_t pid, uint64_t pstart, uint64_t start, uint64_t end)
{
	struct bpfsym_unmap_ev u = {
		.hdr = { .type = BPFSYM_EV_UNMAP, .size = sizeof(u) },
		.pid = pid, .pstart = pstart, .start = start, .end = end,
	};

	apply(&u, sizeof(u));
}

static void task_ev_at(uint16_t type, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart,
		      uint64_t ts)
{
	struct bpfsym_task_ev t = {
		.hdr = { .type = type, .size = sizeof(t), .ts = ts },
		.pid = pid, .pstart = pstart, .ppid = ppid, .ppstart = ppstart,
	};

	apply(&t, sizeof(t));
}

static void task_ev(uint16_t type, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart)
{
	task_ev_at(type, pid, pstart, ppid, ppstart, 0);
}

static void map(uint32_t pid, uint64_t pstart, uint64_t start, uint64_t end, uint64_t pgoff,
		const char *path)
{
	struct bpfsym_map_ev e;

	ASSERT_OK(apply(&e, map_rec(&e, pid, pstart, start, end, pgoff, path, 0)), "apply MAP");
}

static void setup(void)
{
	mapevents__free(me);
	proc_table__free(pt);
	pt = proc_table__new(0);
	me = mapevents__new(pt, NULL);
	memset(&st, 0, sizeof(st));
}

static void test_map_fields(void)
{
	const struct mapping *m;
	struct proc *p;

	setup();
	map(10, 1, 0x1000, 0x3000, 0x5000, "/usr/lib/libx.so");
	p = proc_table__find(pt, 10, 1);
	if (!ASSERT_OK_PTR(p, "a MAP makes the process known"))
		return;
	m = proc__find_mapping(p, 0x2fff);
	if (!ASSERT_OK_PTR(m, "mapping"))
		return;
	ASSERT_EQ(m->start, (uint64_t)0x1000, "start");
	ASSERT_EQ(m->end, (uint64_t)0x3000, "end");
	ASSERT_EQ(m->pgoff, (uint64_t)0x5000, "pgoff in bytes");
	ASSERT_EQ(m->dev, (uint64_t)makedev(8, 1), "kernel dev_t to st_dev");
	ASSERT_EQ(m->ino, (uint64_t)42, "ino");
	ASSERT_EQ(m->kind, (uint32_t)MAPPING_FILE, "file");
	ASSERT_STREQ(m->path, "/usr/lib/libx.so", "path");
	ASSERT_EQ(m->mnt_ns, 4026531841u, "the mount namespace the path is in");
	ASSERT_EQ(proc__mnt_ns(p), 4026531841u, "and so the process's");
	ASSERT_EQ(mapping__file_offset(m, 0x2000), (uint64_t)0x6000, "pgoff arithmetic");
	ASSERT_EQ(st.maps, (uint64_t)1, "counted");
}

static void test_kinds(void)
{
	struct bpfsym_map_ev e;
	struct proc *p;

	setup();
	apply(&e, map_rec(&e, 11, 1, 0x1000, 0x2000, 0, NULL, BPFSYM_MF_ANON));
	apply(&e, map_rec(&e, 11, 1, 0x8000, 0x9000, 0, "[vdso]", BPFSYM_MF_SPECIAL));
	p = proc_table__find(pt, 11, 1);
	if (!ASSERT_OK_PTR(p, "process"))
		return;
	ASSERT_EQ(proc__find_mapping(p, 0x1800)->kind, (uint32_t)MAPPING_ANON, "anonymous JIT region");
	ASSERT_EQ(proc__find_mapping(p, 0x8800)->kind, (uint32_t)MAPPING_SPECIAL, "vdso");
	ASSERT_STREQ(proc__find_mapping(p, 0x8800)->path, "[vdso]", "vdso name");
}

/* A JIT: mprotect to RX maps, then mprotect back to RW unmaps; munmap of the middle splits. */
static void test_unmap_and_split(void)
{
	struct proc *p;

	setup();
	map(12, 1, 0x10000, 0x20000, 0, "/bin/app");
	unmap(12, 1, 0x14000, 0x15000);
	p = proc_table__find(pt, 12, 1);
	if (!ASSERT_OK_PTR(p, "process"))
		return;
	ASSERT_OK_PTR(proc__find_mapping(p, 0x13fff), "left piece");
	ASSERT_NULL(proc__find_mapping(p, 0x14000), "hole");
	if (ASSERT_OK_PTR(proc__find_mapping(p, 0x15000), "right piece"))
		ASSERT_EQ(mapping__file_offset(proc__find_mapping(p, 0x15000), 0x15000),
			  (uint64_t)0x5000, "right piece keeps the file offsets");
	/* An UNMAP of an unknown process creates nothing. */
	unmap(99, 1, 0x1000, 0x2000);
	ASSERT_NULL(proc_table__find(pt, 99, 1), "no process from an unmap");
}

static void test_fork_exec_exit(void)
{
	struct proc *parent, *child;

	setup();
	map(20, 5, 0x1000, 0x2000, 0, "/bin/sh");
	task_ev(BPFSYM_EV_FORK, 21, 6, 20, 5);
	child = proc_table__find(pt, 21, 6);
	if (!ASSERT_OK_PTR(child, "child exists after FORK"))
		return;
	if (ASSERT_OK_PTR(proc__find_mapping(child, 0x1800), "child inherits the mapping"))
		ASSERT_STREQ(proc__find_mapping(child, 0x1800)->path, "/bin/sh", "inherited path");

	/* exec in the child: the model forgets, then the new image's MAPs come. */
	task_ev(BPFSYM_EV_EXEC, 21, 6, 0, 0);
	child = proc_table__find(pt, 21, 6);
	if (!ASSERT_OK_PTR(child, "child after EXEC"))
		return;
	ASSERT_NULL(proc__find_mapping(child, 0x1800), "exec forgets the old image");
	map(21, 6, 0x5000, 0x6000, 0x1000, "/usr/bin/make");
	ASSERT_OK_PTR(proc__find_mapping(proc_table__find(pt, 21, 6), 0x5000), "new image");
	parent = proc_table__find(pt, 20, 5);
	if (ASSERT_OK_PTR(parent, "parent untouched"))
		ASSERT_OK_PTR(proc__find_mapping(parent, 0x1800), "parent keeps its mapping");

	task_ev_at(BPFSYM_EV_EXIT, 21, 6, 0, 0, 1000);
	/* A sample taken while it exited can still come: it stays a while. */
	mapevents__advance(me, 1000 + MAPEVENTS_EXIT_GRACE_NS);
	ASSERT_OK_PTR(proc_table__find(pt, 21, 6), "kept during the exit grace");
	mapevents__advance(me, 1001 + MAPEVENTS_EXIT_GRACE_NS);
	ASSERT_NULL(proc_table__find(pt, 21, 6), "dropped after it");
	ASSERT_EQ(st.forks, (uint64_t)1, "fork counted");
	ASSERT_EQ(st.execs, (uint64_t)1, "exec counted");
	ASSERT_EQ(st.exits, (uint64_t)1, "exit counted");

	/* A fork whose parent the model never saw: an empty child, counted. */
	task_ev(BPFSYM_EV_FORK, 31, 7, 30, 1);
	ASSERT_OK_PTR(proc_table__find(pt, 31, 7), "orphan child exists");
	ASSERT_EQ(st.unknown_parent, (uint64_t)1, "unknown parent counted");
}

/*
 * lazy_maps: a process the tracker did not follow is taken whole at its
 * first sample: RESYNC, then its MAP records.  What the model knew of it
 * (a start-up snapshot, a followed stretch since evicted) goes; an
 * unknown process is made; the exec count is not touched.
 */
static void test_resync(void)
{
	struct proc *p;

	setup();
	map(50, 3, 0x1000, 0x2000, 0, "/usr/bin/old");
	map(50, 3, 0x7000, 0x8000, 0, "/usr/lib/libgone.so");
	task_ev(BPFSYM_EV_RESYNC, 50, 3, 0, 0);
	p = proc_table__find(pt, 50, 3);
	if (!ASSERT_OK_PTR(p, "the process stays"))
		return;
	ASSERT_NULL(proc__find_mapping(p, 0x1800), "what was known goes");
	ASSERT_NULL(proc__find_mapping(p, 0x7800), "all of it");
	map(50, 3, 0x1000, 0x2000, 0, "/usr/bin/old");
	ASSERT_OK_PTR(proc__find_mapping(proc_table__find(pt, 50, 3), 0x1800), "what the MAPs say comes back");
	ASSERT_NULL(proc__find_mapping(proc_table__find(pt, 50, 3), 0x7800), "and nothing else");

	task_ev(BPFSYM_EV_RESYNC, 51, 9, 0, 0);
	ASSERT_OK_PTR(proc_table__find(pt, 51, 9), "a process first seen at its first sample");
	ASSERT_EQ(st.resyncs, (uint64_t)2, "resyncs counted");
	ASSERT_EQ(st.execs, (uint64_t)0, "not as execs");

	/* The same image: a --map-anon hint stays; a child still running its parent's gets a copy. */
	{
		const struct proc_hint h = { .start = 0x9000, .end = 0xa000, .file_off = 0x100, .id = 1 };

		ASSERT_OK(proc__add_hint(proc_table__find(pt, 50, 3), &h), "hint");
		task_ev(BPFSYM_EV_RESYNC, 50, 3, 0, 0);
		ASSERT_OK_PTR(proc__find_hint(proc_table__find(pt, 50, 3), 0x9800), "a RESYNC keeps the hints");
		task_ev(BPFSYM_EV_RESYNC, 53, 4, 50, 3);
		ASSERT_OK_PTR(proc__find_hint(proc_table__find(pt, 53, 4), 0x9800),
			      "a child named with its parent has the parent's hints");
		task_ev(BPFSYM_EV_RESYNC, 54, 4, 0, 0);
		ASSERT_NULL(proc__find_hint(proc_table__find(pt, 54, 4), 0x9800),
			    "one that exec'd (no parent named) has none");
		task_ev(BPFSYM_EV_RESYNC, 55, 4, 50, 999);
		ASSERT_NULL(proc__find_hint(proc_table__find(pt, 55, 4), 0x9800),
			    "nor one whose parent's pid was reused (start time differs)");
		task_ev(BPFSYM_EV_EXEC, 50, 3, 0, 0);
		ASSERT_NULL(proc__find_hint(proc_table__find(pt, 50, 3), 0x9800), "an EXEC drops them");
	}

	/* Cut short: no process, counted as malformed. */
	{
		struct bpfsym_task_ev t = { .hdr = { .type = BPFSYM_EV_RESYNC, .size = 8 }, .pid = 52 };

		apply(&t, 8);
		ASSERT_NULL(proc_table__find(pt, 52, 0), "a short RESYNC makes nothing");
		ASSERT_EQ(st.bad, (uint64_t)1, "and is counted");
	}
}

/* pid reuse: the same pid with another start time is another process. */
static void test_pid_reuse(void)
{
	setup();
	map(40, 100, 0x1000, 0x2000, 0, "/old");
	map(40, 200, 0x3000, 0x4000, 0, "/new");
	ASSERT_NULL(proc_table__find(pt, 40, 100), "the old process is gone");
	if (ASSERT_OK_PTR(proc_table__find(pt, 40, 200), "the new one"))
		ASSERT_NULL(proc__find_mapping(proc_table__find(pt, 40, 200), 0x1800),
			    "nothing of the old one");
}

static void test_malformed(void)
{
	struct bpfsym_map_ev e;
	size_t len;

	setup();
	len = map_rec(&e, 50, 1, 0x1000, 0x2000, 0, "/ok", 0);
	e.path[e.path_len] = 'x';	/* no NUL where the length says */
	ASSERT_OK(apply(&e, len), "skipped, not an error");
	len = map_rec(&e, 50, 1, 0x1000, 0x2000, 0, "/ok", 0);
	e.path_len = BPFSYM_PATH_MAX;	/* longer than the buffer */
	apply(&e, len);
	len = map_rec(&e, 50, 1, 0x1000, 0x2000, 0, "/ok", 0);
	apply(&e, len - 1);		/* cut before its NUL */
	len = map_rec(&e, 50, 1, 0x2000, 0x1000, 0, "/ok", 0);
	apply(&e, len);			/* inverted range */
	len = map_rec(&e, 50, 1, 0x1000, 0x2000, 0, "/a\0b", 0);
	e.path_len = 4;			/* a NUL inside the path */
	e.hdr.size = (uint16_t)(BPFSYM_MAP_EV_HDR_SIZE + 5);
	apply(&e, e.hdr.size);
	e.hdr.type = 77;		/* unknown type */
	apply(&e, len);
	apply(&e, 4);			/* shorter than a header */
	ASSERT_EQ(st.bad, (uint64_t)7, "every malformed record counted");
	ASSERT_EQ(st.maps, (uint64_t)0, "none applied");
	ASSERT_NULL(proc_table__find(pt, 50, 1), "no process made by them");
}

/* A pid reused during the grace: retiring the old process spares the new one. */
static void test_exit_grace_pid_reuse(void)
{
	int i;

	setup();
	map(60, 1, 0x1000, 0x2000, 0, "/old");
	task_ev_at(BPFSYM_EV_EXIT, 60, 1, 0, 0, 5000);
	task_ev_at(BPFSYM_EV_FORK, 60, 2, 61, 9, 6000);
	map(60, 2, 0x3000, 0x4000, 0, "/new");
	mapevents__advance(me, 5000 + 2 * MAPEVENTS_EXIT_GRACE_NS);
	if (ASSERT_OK_PTR(proc_table__find(pt, 60, 2), "the new process survives"))
		ASSERT_OK_PTR(proc__find_mapping(proc_table__find(pt, 60, 2), 0x3000), "with its mapping");
	/* Many exits in grace at once: the queue grows, and then drains. */
	for (i = 0; i < 1000; i++) {
		map(1000 + i, 1, 0x1000, 0x2000, 0, "/x");
		task_ev_at(BPFSYM_EV_EXIT, 1000 + i, 1, 0, 0, 10000 + i);
	}
	ASSERT_EQ(proc_table__nr_procs(pt), (size_t)1001, "all in grace");
	mapevents__advance(me, 20000 + MAPEVENTS_EXIT_GRACE_NS);
	ASSERT_EQ(proc_table__nr_procs(pt), (size_t)1, "all retired but the live one");
}

/*
 * A churn of short programs, each forked, exec'd, mapping files of its
 * own path and exiting, leaves nothing once their grace is over: no
 * process, no path bytes (ASan: nothing leaked at the end either).
 */
static void test_churn_leaves_nothing(void)
{
	char path[64];
	uint32_t pid;
	uint64_t ts = 1000;
	size_t init_bytes;

	setup();
	map(1, 1, 0x1000, 0x2000, 0, "/sbin/init");
	init_bytes = proc_table__path_bytes(pt);
	/* 1 ms apart: 5 s of churn, 100 ms of it in grace at any time. */
	for (pid = 100; pid < 5100; pid++, ts += 1000000) {
		task_ev_at(BPFSYM_EV_FORK, pid, pid, 1, 1, ts);
		task_ev_at(BPFSYM_EV_EXEC, pid, pid, 0, 0, ts + 1);
		snprintf(path, sizeof(path), "/usr/bin/prog-%u", pid % 97);
		map(pid, pid, 0x400000, 0x401000, 0, path);
		map(pid, pid, 0x7f0000000000, 0x7f0000100000, 0, "/lib/libc.so.6");
		task_ev_at(BPFSYM_EV_EXIT, pid, pid, 0, 0, ts + 2);
		mapevents__advance(me, ts + 2);
	}
	ASSERT_TRUE(proc_table__nr_procs(pt) < 150, "only those in their grace remain");
	mapevents__advance(me, ts + MAPEVENTS_EXIT_GRACE_NS + 1);
	ASSERT_EQ(proc_table__nr_procs(pt), (size_t)1, "init alone");
	ASSERT_TRUE(init_bytes > 0, "init's path is held");
	ASSERT_EQ(proc_table__path_bytes(pt), init_bytes, "init's path alone is held");
}

int main(void)
{
	RUN_TEST(test_map_fields);
	RUN_TEST(test_kinds);
	RUN_TEST(test_unmap_and_split);
	RUN_TEST(test_fork_exec_exit);
	RUN_TEST(test_resync);
	RUN_TEST(test_pid_reuse);
	RUN_TEST(test_malformed);
	RUN_TEST(test_exit_grace_pid_reuse);
	RUN_TEST(test_churn_leaves_nothing);
	mapevents__free(me);
	proc_table__free(pt);
	return TEST_EXIT();
}
