// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procmap: maps parsing, lookups, pid reuse, removal, eviction. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "model/procmap.h"

TEST_SUITE("procmap");

static const char maps_text[] =
	"55d0c8a00000-55d0c8a02000 r--p 00000000 fe:00 1234                       /usr/bin/my prog\n"
	"55d0c8a02000-55d0c8a06000 r-xp 00002000 fe:00 1234                       /usr/bin/my prog\n"
	"55d0c8a06000-55d0c8a07000 rw-p 00006000 fe:00 1234                       /usr/bin/my prog\n"
	"55d0c9000000-55d0c9021000 rwxp 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"
	"7f0000010000-7f0000020000 r-xp 00000000 00:00 0\n"
	"7f0000100000-7f0000180000 r-xp 00026000 103:0a 987654                    /tmp/lib with space.so (deleted)\n"
	"7f0000200000-7f0000201000 r-xs 00000000 00:01 42                         /memfd:jit (deleted)\n"
	"7f0000300000-7f0000301000 r-xp 00000000 00:00 0                          [anon:v8 code]\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"garbage line\n"
	"7f0000400000-7f0000300000 r-xp 00000000 00:00 0  end below start\n"
	"7f0000500000-7f0000501000 r-xq 00000000 00:00 0  bad perms\n"
	"7f0000600000-7f0000601000 r-xp 00000000 00:00 12x glued\n"
	"7f0000700000-7f0000701000 r-xp 00000000 fe00 1 no colon\n"
	"\n"
	"7f0000800000-7f0000801000 r-xp 00001000 fe:00 77 /no/newline/at/end";

static struct proc_table *pt;

static struct proc *fresh(uint32_t pid)
{
	return proc_table__add(pt, pid, 1000 + pid);
}

static void test_parse_kinds(void)
{
	const struct mapping *m;
	struct proc *p = fresh(1);
	int n;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	n = proc__parse_maps(p, maps_text, strlen(maps_text));
	ASSERT_EQ(n, 10, "executable mappings kept");

	m = proc__find_mapping(p, 0x55d0c8a02000ull);
	if (ASSERT_OK_PTR(m, "file text")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_FILE, "kind");
		ASSERT_STREQ(m->path, "/usr/bin/my prog", "path with a space");
		ASSERT_EQ(m->pgoff, (uint64_t)0x2000, "pgoff in bytes");
		ASSERT_EQ(m->dev, (uint64_t)makedev(0xfe, 0), "dev");
		ASSERT_EQ(m->ino, (uint64_t)1234, "ino");
		ASSERT_EQ(m->prot, (uint32_t)(PROT_READ | PROT_EXEC), "prot");
		ASSERT_EQ(m->deleted, 0, "not deleted");
		ASSERT_EQ(mapping__file_offset(m, 0x55d0c8a02010ull), (uint64_t)0x2010, "pgoff arithmetic");
	}
	ASSERT_NULL(proc__find_mapping(p, 0x55d0c8a00000ull), "r-- mapping dropped");
	ASSERT_NULL(proc__find_mapping(p, 0x55d0c8a06000ull), "rw- mapping dropped");

	m = proc__find_mapping(p, 0x55d0c9000000ull);
	if (ASSERT_OK_PTR(m, "heap rwx")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_ANON, "heap is anon");
		ASSERT_STREQ(m->path, "[heap]", "heap path");
		ASSERT_EQ(m->prot, (uint32_t)(PROT_READ | PROT_WRITE | PROT_EXEC), "rwx");
	}
	m = proc__find_mapping(p, 0x7f0000000000ull);
	if (ASSERT_OK_PTR(m, "plain anon, trailing blank")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_ANON, "anon");
		ASSERT_NULL(m->path, "no path");
	}
	m = proc__find_mapping(p, 0x7f0000010000ull);
	if (ASSERT_OK_PTR(m, "plain anon, line ends at inode"))
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_ANON, "anon");

	m = proc__find_mapping(p, 0x7f0000100000ull);
	if (ASSERT_OK_PTR(m, "deleted")) {
		ASSERT_STREQ(m->path, "/tmp/lib with space.so", "(deleted) cut");
		ASSERT_EQ(m->deleted, 1, "deleted");
		ASSERT_EQ(m->dev, (uint64_t)makedev(0x103, 0x0a), "3-digit hex major");
		ASSERT_EQ(m->ino, (uint64_t)987654, "ino");
	}
	m = proc__find_mapping(p, 0x7f0000200000ull);
	if (ASSERT_OK_PTR(m, "memfd")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_FILE, "memfd is a file");
		ASSERT_STREQ(m->path, "/memfd:jit", "memfd path");
	}
	m = proc__find_mapping(p, 0x7f0000300800ull);
	if (ASSERT_OK_PTR(m, "named anon")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_ANON, "anon: is anon");
		ASSERT_STREQ(m->path, "[anon:v8 code]", "name");
	}
	m = proc__find_mapping(p, 0x7ffd00100000ull);
	if (ASSERT_OK_PTR(m, "vdso")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_SPECIAL, "special");
		ASSERT_STREQ(m->path, "[vdso]", "vdso");
	}
	m = proc__find_mapping(p, 0xffffffffff600fffull);
	if (ASSERT_OK_PTR(m, "vsyscall")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_SPECIAL, "special");
		ASSERT_EQ(m->prot, (uint32_t)PROT_EXEC, "--x");
	}
	ASSERT_NULL(proc__find_mapping(p, 0x7ffd00000000ull), "stack rw- dropped");
	ASSERT_NULL(proc__find_mapping(p, 0x7f0000400000ull), "end < start dropped");
	ASSERT_NULL(proc__find_mapping(p, 0x7f0000500000ull), "bad perms dropped");
	ASSERT_NULL(proc__find_mapping(p, 0x7f0000600000ull), "glued inode dropped");
	ASSERT_NULL(proc__find_mapping(p, 0x7f0000700000ull), "no colon dropped");
	m = proc__find_mapping(p, 0x7f0000800000ull);
	if (ASSERT_OK_PTR(m, "last line without newline"))
		ASSERT_STREQ(m->path, "/no/newline/at/end", "path");
}

static void test_lookup_edges(void)
{
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 1 /a\n"
		"2000-3000 r-xp 00001000 08:01 1 /a\n"	/* adjacent */
		"5000-6000 r-xp 00000000 08:01 2 /b\n";	/* after a gap */
	struct proc *p = fresh(2);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 3, "parsed");
	ASSERT_NULL(proc__find_mapping(p, 0), "0");
	ASSERT_NULL(proc__find_mapping(p, 0xfff), "before first");
	ASSERT_EQ(proc__find_mapping(p, 0x1000)->start, (uint64_t)0x1000, "at start");
	ASSERT_EQ(proc__find_mapping(p, 0x1fff)->start, (uint64_t)0x1000, "end - 1");
	ASSERT_EQ(proc__find_mapping(p, 0x2000)->start, (uint64_t)0x2000, "end is the next one's start");
	ASSERT_NULL(proc__find_mapping(p, 0x3000), "end of the second: gap");
	ASSERT_NULL(proc__find_mapping(p, 0x4fff), "gap");
	ASSERT_EQ(proc__find_mapping(p, 0x5fff)->start, (uint64_t)0x5000, "last end - 1");
	ASSERT_NULL(proc__find_mapping(p, 0x6000), "last end");
	ASSERT_NULL(proc__find_mapping(p, UINT64_MAX), "u64 max");
	ASSERT_NULL(proc__find_mapping(NULL, 0x1000), "NULL proc");
}

/* A NUL in a path would cut it short (even to ""): the line is dropped. */
static void test_nul_in_path(void)
{
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 1 /a\n"
		"3000-4000 r-xp 00000000 08:01 2 \0\a/opt/my app/lib\n"
		"5000-6000 r-xp 00000000 08:01 3 /b\0c\n";
	struct proc *p = fresh(9);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 1, "NUL lines dropped");
	ASSERT_STREQ(proc__find_mapping(p, 0x1000)->path, "/a", "good line kept");
	ASSERT_NULL(proc__find_mapping(p, 0x3000), "no empty path");
	ASSERT_NULL(proc__find_mapping(p, 0x5000), "no cut path");
}

static void test_unsorted_overlapping(void)
{
	static const char text[] =
		"5000-6000 r-xp 00000000 08:01 2 /b\n"
		"1000-3000 r-xp 00000000 08:01 1 /a\n"
		"2000-4000 r-xp 00000000 08:01 3 /overlaps\n";
	struct proc *p = fresh(3);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 2, "overlap dropped");
	ASSERT_STREQ(proc__find_mapping(p, 0x2800)->path, "/a", "first kept");
	ASSERT_STREQ(proc__find_mapping(p, 0x5000)->path, "/b", "sorted");
	ASSERT_NULL(proc__find_mapping(p, 0x3800), "overlapping tail not kept");

	/* A reparse replaces; clear forgets; the old pointers are not used after. */
	ASSERT_EQ(proc__parse_maps(p, "", 0), 0, "empty text");
	ASSERT_NULL(proc__find_mapping(p, 0x2800), "replaced");
	ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 2, "again");
	proc__clear_maps(p);
	ASSERT_NULL(proc__find_mapping(p, 0x2800), "cleared");
}

static void test_pid_reuse_and_remove(void)
{
	struct proc_table *t = proc_table__new(0);
	struct proc *a, *b;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	a = proc_table__add(t, 42, 100);
	if (!ASSERT_OK_PTR(a, "add"))
		goto out;
	ASSERT_TRUE(proc_table__find(t, 42, 100) == a, "found");
	ASSERT_NULL(proc_table__find(t, 42, 101), "other pstart: another process");
	ASSERT_EQ(proc__pid(a), (uint32_t)42, "pid");
	b = proc_table__add(t, 42, 200);	/* the pid was reused */
	if (!ASSERT_OK_PTR(b, "add reused"))
		goto out;
	ASSERT_NULL(proc_table__find(t, 42, 100), "old process dropped");
	ASSERT_TRUE(proc_table__find(t, 42, 200) == b, "new one found");
	ASSERT_OK_PTR(proc_table__add(t, 43, 100), "another pid");
	ASSERT_EQ(proc_table__nr_procs(t), (size_t)2, "two live");
	ASSERT_EQ(proc_table__nr_seen(t), (size_t)3, "three seen");
	proc_table__remove(t, 42);
	ASSERT_NULL(proc_table__find(t, 42, 200), "removed");
	ASSERT_OK_PTR(proc_table__find(t, 43, 100), "other kept");
	proc_table__remove(t, 4242);
	ASSERT_EQ(proc_table__nr_procs(t), (size_t)1, "one live");
	ASSERT_EQ(proc_table__nr_seen(t), (size_t)3, "seen counts removed ones");
out:
	proc_table__free(t);
}

static void test_eviction_bound(void)
{
	struct proc_table *t = proc_table__new(100);
	static const char text[] = "1000-2000 r-xp 00000000 08:01 1 /a\n";
	uint32_t pid;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	/* Many more processes than room, each with a mapping to free. */
	for (pid = 1; pid <= 10000; pid++) {
		struct proc *p = proc_table__add(t, pid, pid);

		if (!ASSERT_OK_PTR(p, "add"))
			goto out;
		ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 1, "parse");
		/* pid 1 is sampled all along: it must never be the one evicted. */
		if (!ASSERT_OK_PTR(proc_table__find(t, 1, 1), "hot process kept"))
			goto out;
		if (proc_table__nr_procs(t) > 100) {
			ASSERT_TRUE(false, "bound exceeded");
			goto out;
		}
	}
	ASSERT_EQ(proc_table__nr_procs(t), (size_t)100, "at the bound");
	ASSERT_EQ(proc_table__nr_seen(t), (size_t)10000, "seen");
	ASSERT_NULL(proc_table__find(t, 2, 2), "cold process evicted");
	ASSERT_OK_PTR(proc_table__find(t, 10000, 10000), "newest kept");
	ASSERT_OK_PTR(proc_table__find(t, 9902, 9902), "the 99th newest kept (pid 1 holds a slot)");
	ASSERT_NULL(proc_table__find(t, 9901, 9901), "the 100th newest evicted");
out:
	proc_table__free(t);
}

static void test_load_self(void)
{
	const struct mapping *m;
	struct proc *p = fresh(4);
	char path[64];
	int n;

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	n = proc__load_maps(p, path);
	if (n == -ENOENT) {
		test__skip("'%s': not mounted", path);
		return;
	}
	ASSERT_TRUE(n > 0, "executable mappings in our own process");
	m = proc__find_mapping(p, (uint64_t)(uintptr_t)&test_load_self);
	if (ASSERT_OK_PTR(m, "our own code is mapped")) {
		ASSERT_EQ(m->kind, (uint32_t)MAPPING_FILE, "a file");
		ASSERT_TRUE(m->prot & PROT_EXEC, "executable");
	}
	m = proc__find_mapping(p, (uint64_t)(uintptr_t)&memchr);
	ASSERT_OK_PTR(m, "libc is mapped");
	ASSERT_EQ(proc__load_maps(p, "/nonexistent/maps"), -ENOENT, "missing file");
}

/* The caps hold: over a million lines is refused, the old mappings kept. */
static void test_line_cap(void)
{
	static const char line[] = "1000-2000 r-xp 00000000 08:01 1 /a\n";
	size_t n = (1u << 20) + 1, i;
	char *buf = malloc(n * 2);
	struct proc *p = fresh(5);

	if (!ASSERT_OK_PTR(buf, "malloc") || !ASSERT_OK_PTR(p, "add")) {
		free(buf);
		return;
	}
	ASSERT_EQ(proc__parse_maps(p, line, sizeof(line) - 1), 1, "one line");
	for (i = 0; i < n; i++) {
		buf[2 * i] = 'x';	/* short bad lines: only the count matters */
		buf[2 * i + 1] = '\n';
	}
	ASSERT_EQ(proc__parse_maps(p, buf, n * 2), -E2BIG, "too many lines");
	ASSERT_OK_PTR(proc__find_mapping(p, 0x1000), "old mappings kept");
	ASSERT_EQ(proc__parse_maps(p, buf, (n - 1) * 2), 0, "at the cap: parsed");
	free(buf);
}

/*
 * More executable mappings than the per-process cap: refused, the old ones
 * kept.  A path too long to open is dropped, not its mapping.
 */
static void test_maps_cap_and_long_path(void)
{
	const size_t cap = 65536, line = 64;
	char *buf = malloc((cap + 1) * line + 8192), *q;
	struct proc *p = fresh(6);
	const struct mapping *m;
	size_t i;

	if (!ASSERT_OK_PTR(buf, "malloc") || !ASSERT_OK_PTR(p, "add"))
		goto out;
	for (i = 0, q = buf; i < cap; i++)
		q += sprintf(q, "%zx-%zx r-xp 00000000 08:01 1 /lib/%zu.so\n", 2 * i + 2, 2 * i + 3, i % 7);
	ASSERT_EQ(proc__parse_maps(p, buf, (size_t)(q - buf)), (int)cap, "at the cap");
	ASSERT_STREQ(proc__find_mapping(p, 2 * cap)->path, "/lib/1.so", "last line: 65535 % 7");
	sprintf(q, "%zx-%zx r-xp 00000000 08:01 1 /one/more\n", 2 * cap + 2, 2 * cap + 3);
	ASSERT_EQ(proc__parse_maps(p, buf, strlen(buf)), -E2BIG, "past the cap");
	ASSERT_EQ(proc__nr_maps(p), cap, "old mappings kept");

	q = buf + sprintf(buf, "1000-2000 r-xp 00000000 08:01 1 /");
	memset(q, 'x', 4095);
	strcpy(q + 4095, "\n3000-4000 r-xp 00000000 08:01 1 /");
	q = buf + strlen(buf);
	memset(q, 'y', 4094);
	strcpy(q + 4094, " (deleted)\n");
	ASSERT_EQ(proc__parse_maps(p, buf, strlen(buf)), 2, "both kept");
	m = proc__find_mapping(p, 0x1000);
	if (ASSERT_OK_PTR(m, "4096 bytes: mapped"))
		ASSERT_NULL(m->path, "4096 bytes: no path");
	m = proc__find_mapping(p, 0x3000);
	if (ASSERT_OK_PTR(m, "4095 bytes") && ASSERT_OK_PTR(m->path, "4095 bytes: path kept")) {
		ASSERT_EQ(strlen(m->path), (size_t)4095, "whole");
		ASSERT_EQ(m->deleted, 1, "deleted");
	}
out:
	free(buf);
}

/* The snapshot and the events share the storage: each replaces the other's. */
static void test_parse_after_events(void)
{
	static const char text[] = "1000-3000 r-xp 00001000 08:01 1 /a\n";
	struct mapping m = { .start = 0x2000, .end = 0x2800, .pgoff = 0, .path = "/b",
			     .prot = PROT_READ | PROT_EXEC };
	struct proc *p = fresh(7);

	if (!ASSERT_OK_PTR(p, "add"))
		return;
	ASSERT_OK(proc__map(p, &m), "event first");
	ASSERT_EQ(proc__parse_maps(p, text, sizeof(text) - 1), 1, "snapshot replaces");
	ASSERT_STREQ(proc__find_mapping(p, 0x2000)->path, "/a", "the event's mapping replaced");
	ASSERT_OK(proc__map(p, &m), "event after the snapshot");
	ASSERT_EQ(proc__nr_maps(p), (size_t)3, "split");
	ASSERT_EQ(proc__find_mapping(p, 0x2800)->pgoff, (uint64_t)0x2800, "right piece: pgoff moved");
	ASSERT_STREQ(proc__find_mapping(p, 0x1fff)->path, "/a", "left piece");
	proc_table__remove(pt, 7);
}

/* Sampled processes are counted once each, apart from those merely known. */
static void test_note_sampled(void)
{
	struct proc_table *t = proc_table__new(0);
	struct proc *a, *b;

	if (!ASSERT_OK_PTR(t, "table"))
		return;
	a = proc_table__add(t, 1, 1);
	b = proc_table__add(t, 2, 1);
	proc_table__add(t, 3, 1);
	if (ASSERT_OK_PTR(a, "a") && ASSERT_OK_PTR(b, "b")) {
		ASSERT_EQ(proc__note_sampled(a), 1, "first sample of a");
		ASSERT_EQ(proc__note_sampled(a), 0, "second sample of a");
		ASSERT_EQ(proc__note_sampled(b), 1, "first sample of b");
		ASSERT_EQ(proc_table__nr_sampled(t), (size_t)2, "two sampled of three known");
		proc_table__remove(t, 1);
		ASSERT_EQ(proc_table__nr_sampled(t), (size_t)2, "removal keeps the count");
	}
	proc_table__free(t);
}

int main(void)
{
	pt = proc_table__new(0);
	if (!pt) {
		printf("FAIL procmap/setup: proc_table__new: %s\n", strerror(errno));
		return 1;
	}
	RUN_TEST(test_parse_kinds);
	RUN_TEST(test_lookup_edges);
	RUN_TEST(test_unsorted_overlapping);
	RUN_TEST(test_nul_in_path);
	RUN_TEST(test_note_sampled);
	RUN_TEST(test_pid_reuse_and_remove);
	RUN_TEST(test_eviction_bound);
	RUN_TEST(test_load_self);
	RUN_TEST(test_line_cap);
	RUN_TEST(test_maps_cap_and_long_path);
	RUN_TEST(test_parse_after_events);
	proc_table__free(pt);
	proc_table__free(NULL);
	return TEST_EXIT();
}
