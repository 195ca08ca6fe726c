// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hints: the --map-anon parser, and the model carrying a hint with its
 * process (procmap): copied at fork, dropped at exec, the later of two
 * overlapping hints winning.  Seed 000's reviewer found a hint lost when
 * its process forked: test_fork_keeps_hints is that case.
 */
#include <errno.h>
#include <string.h>

#include "model/hints.h"
#include "model/procmap.h"
#include "test.h"

TEST_SUITE("hints");

static void test_parse_good(void)
{
	struct anon_hint h;
	char err[128];

	if (!ASSERT_OK(anon_hint__parse("./libtesta.o@257,0x7f864c0000,0x60,0", &h, err, sizeof(err)), err))
		return;
	ASSERT_EQ(h.file_len, strlen("./libtesta.o"), "file length");
	ASSERT_TRUE(!strncmp(h.file, "./libtesta.o", h.file_len), "file");
	ASSERT_EQ(h.pid, 257u, "pid");
	ASSERT_EQ(h.start, 0x7f864c0000ull, "start");
	ASSERT_EQ(h.len, 0x60ull, "len");
	ASSERT_EQ(h.offset, 0ull, "offset");

	/* OFFSET is optional; decimal and octal are C notation too. */
	if (!ASSERT_OK(anon_hint__parse("lib.so@12,4096,010", &h, err, sizeof(err)), err))
		return;
	ASSERT_EQ(h.start, 4096ull, "decimal start");
	ASSERT_EQ(h.len, 8ull, "octal len");
	ASSERT_EQ(h.offset, 0ull, "default offset");

	/* The last '@' splits: a path may hold one. */
	if (!ASSERT_OK(anon_hint__parse("/opt/a@b/x.so@99,0x1000,0x10,0x2000", &h, err, sizeof(err)), err))
		return;
	ASSERT_EQ(h.file_len, strlen("/opt/a@b/x.so"), "file with '@'");
	ASSERT_EQ(h.offset, 0x2000ull, "offset");

	/* Up to the last page; an end of 2^64 itself does not fit in 64 bits. */
	ASSERT_OK(anon_hint__parse("f@1,0xffffffffffffe000,0x1000", &h, err, sizeof(err)), "near the top");
	ASSERT_EQ(anon_hint__parse("f@1,0xfffffffffffff000,0x1000", &h, err, sizeof(err)), -EINVAL,
		  "an end of 2^64");
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"", "lib.so", "@12,0x1000,16", "lib.so@", "lib.so@12", "lib.so@12,0x1000",
		"lib.so@0,0x1000,16", "lib.so@-1,0x1000,16", "lib.so@4294967296,0x1000,16",
		"lib.so@12,0x1000,0", "lib.so@12,zz,16", "lib.so@12,0x1000,16,", "lib.so@12,,16",
		"lib.so@12,0x1000,16,0,5", "lib.so@12,0xfffffffffffff000,0x1001",
		"lib.so@12,0x1000,16,0xfffffffffffffff8", "lib.so@12, 0x1000,16", "lib.so@12,0x1000,16 ",
		"lib.so@12,0x100000000000000000,16", "lib.so@12,0x1000,1e3",
	};
	struct anon_hint h;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (!ASSERT_EQ(anon_hint__parse(bad[i], &h, err, sizeof(err)), -EINVAL, bad[i]))
			return;
		ASSERT_TRUE(err[0] != '\0', "a reason is given");
	}
	ASSERT_EQ(anon_hint__parse(NULL, &h, err, sizeof(err)), -EINVAL, "NULL");
}

static struct proc_hint hint(uint64_t start, uint64_t end, uint64_t off, uint32_t id)
{
	struct proc_hint h = { .start = start, .end = end, .file_off = off, .id = id };

	return h;
}

static void test_model_lookup(void)
{
	struct proc_table *pt = proc_table__new(0);
	const struct proc_hint *h;
	struct proc_hint in;
	struct proc *p;
	int i;

	if (!ASSERT_OK_PTR(pt, "table"))
		return;
	p = proc_table__add(pt, 100, 1);
	if (!ASSERT_OK_PTR(p, "proc"))
		goto out;
	ASSERT_NULL(proc__find_hint(p, 0x1000), "no hint yet");
	ASSERT_NULL(proc__find_hint(NULL, 0x1000), "no process");
	in = hint(0x1000, 0x2000, 0x40, 1);
	ASSERT_OK(proc__add_hint(p, &in), "add");
	in = hint(0x1800, 0x1900, 0x0, 2);
	ASSERT_OK(proc__add_hint(p, &in), "add overlapping");
	in = hint(0x3000, 0x3000, 0, 3);
	ASSERT_EQ(proc__add_hint(p, &in), -EINVAL, "empty range");
	h = proc__find_hint(p, 0x1000);
	ASSERT_TRUE(h && h->id == 1 && h->file_off == 0x40, "first byte");
	h = proc__find_hint(p, 0x1fff);
	ASSERT_TRUE(h && h->id == 1, "last byte");
	ASSERT_NULL(proc__find_hint(p, 0x2000), "end is exclusive");
	ASSERT_NULL(proc__find_hint(p, 0xfff), "below");
	h = proc__find_hint(p, 0x1850);
	ASSERT_TRUE(h && h->id == 2, "the later hint wins where both cover");
	for (i = 2; i < PROC_MAX_HINTS; i++) {
		in = hint(0x10000 + i * 0x100, 0x10000 + i * 0x100 + 0x10, 0, (uint32_t)i);
		if (!ASSERT_OK(proc__add_hint(p, &in), "add up to the cap"))
			goto out;
	}
	in = hint(0x90000, 0x90010, 0, 99);
	ASSERT_EQ(proc__add_hint(p, &in), -E2BIG, "past the cap");
out:
	proc_table__free(pt);
}

static void test_fork_keeps_hints(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct proc *parent, *child;
	const struct proc_hint *h;
	struct proc_hint in = hint(0x7f0000000000, 0x7f0000001000, 0x1000, 7);

	if (!ASSERT_OK_PTR(pt, "table"))
		return;
	parent = proc_table__add(pt, 200, 1);
	if (!ASSERT_OK_PTR(parent, "parent") || !ASSERT_OK(proc__add_hint(parent, &in), "add"))
		goto out;
	child = proc_table__fork(pt, parent, 201, 2);
	if (!ASSERT_OK_PTR(child, "fork"))
		goto out;
	h = proc__find_hint(child, 0x7f0000000800);
	ASSERT_TRUE(h && h->id == 7 && h->file_off == 0x1000, "the child has the parent's hint");
	/* The parent exits: the child's copy is its own. */
	proc_table__remove(pt, 200);
	h = proc__find_hint(child, 0x7f0000000800);
	ASSERT_TRUE(h && h->id == 7, "the child keeps it after the parent is gone");
	/* A grandchild too. */
	parent = proc_table__fork(pt, child, 202, 3);
	ASSERT_TRUE(parent && proc__find_hint(parent, 0x7f0000000000), "grandchild");
	/* exec: a new image, nothing of the old memory. */
	proc__clear_maps(child);
	ASSERT_NULL(proc__find_hint(child, 0x7f0000000800), "dropped at exec");
	ASSERT_EQ(proc_table__find_pid(pt, 201), child, "find by pid");
	ASSERT_NULL(proc_table__find_pid(pt, 200), "removed");
out:
	proc_table__free(pt);
}

int main(void)
{
	RUN_TEST(test_parse_good);
	RUN_TEST(test_parse_bad);
	RUN_TEST(test_model_lookup);
	RUN_TEST(test_fork_keeps_hints);
	return TEST_EXIT();
}
