// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwinder: table ids per file identity, views from the mapping model,
 * publishing order, caps.  The sink keeps everything in memory; the files
 * are this machine's libc and python3.11 (the oracle for the rows is the
 * table cfi_table__build_fd makes of the same file).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "unwind/unwinder.h"

#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON	"/usr/bin/python3.11"
#define MAX_ROWS (8u << 20)

struct mem_sink {
	uint64_t *rows;			/* the global row space */
	struct bpfsym_unw_table tables[256];
	int published[256];		/* put_table calls */
	uint32_t view_pid[16];
	struct bpfsym_unw_proc views[16];
	int nr_views, dels, opens, fail_opens;
	int slow_opens;			/* the next opens answer -EINPROGRESS */
	int fail_after_slow;		/* then -EIO instead of the file */
	struct bpfsym_unw_file files[8];	/* put_file, by table id */
	int nr_files;
	struct bpfsym_unw_file deleted;		/* del_file's last */
	int nr_deleted;
};

static int put_rows(void *ctx, uint32_t first, const struct cfi_row *rows, uint32_t nr)
{
	struct mem_sink *m = ctx;
	uint32_t i;

	if ((uint64_t)first + nr > MAX_ROWS)
		return -ENOSPC;
	for (i = 0; i < nr; i++)
		m->rows[first + i] = rows[i].pc | (uint64_t)rows[i].rule << 32;
	return 0;
}

static int put_table(void *ctx, uint32_t id, const struct bpfsym_unw_table *t)
{
	struct mem_sink *m = ctx;

	if (id >= 256)
		return -ENOSPC;
	m->tables[id] = *t;
	m->published[id]++;
	return 0;
}

static int put_proc(void *ctx, uint32_t pid, const struct bpfsym_unw_proc *v)
{
	struct mem_sink *m = ctx;
	int i;

	for (i = 0; i < m->nr_views && m->view_pid[i] != pid; i++)
		;
	if (i == 16)
		return -ENOSPC;
	if (i == m->nr_views)
		m->nr_views++;
	m->view_pid[i] = pid;
	m->views[i] = *v;
	return 0;
}

static int del_proc(void *ctx, uint32_t pid)
{
	struct mem_sink *m = ctx;

	(void)pid;
	m->dels++;
	return 0;
}

static int put_file(void *ctx, const struct bpfsym_unw_file *f, uint32_t id, uint32_t gen)
{
	struct mem_sink *m = ctx;

	(void)gen;
	if (id >= 8)
		return -ENOSPC;
	m->files[id] = *f;
	m->nr_files++;
	return 0;
}

static int del_file(void *ctx, const struct bpfsym_unw_file *f)
{
	struct mem_sink *m = ctx;

	m->deleted = *f;
	m->nr_deleted++;
	return 0;
}

static int open_path(void *ctx, uint32_t pid, uint64_t pstart, const struct mapping *mp,
		     int *debug_fd)
{
	struct mem_sink *m = ctx;
	int fd;

	*debug_fd = -1;
	(void)pid;
	(void)pstart;
	m->opens++;
	if (m->slow_opens > 0) {
		m->slow_opens--;
		return -EINPROGRESS;
	}
	if (m->fail_after_slow)
		return -EIO;
	fd = open(mp->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		m->fail_opens++;
	return fd < 0 ? -errno : fd;
}

static const struct bpfsym_unw_proc *view_of(const struct mem_sink *m, uint32_t pid)
{
	int i;

	for (i = 0; i < m->nr_views; i++)
		if (m->view_pid[i] == pid)
			return &m->views[i];
	return NULL;
}

/* A mapping of @path's first executable PT_LOAD-ish range: its whole file, r-x, at @start. */
static int map_file(struct proc *p, const char *path, uint64_t start, struct stat *st)
{
	struct mapping m = { .start = start, .prot = PROT_READ | PROT_EXEC, .kind = MAPPING_FILE };

	if (stat(path, st))
		return -errno;
	m.end = start + ((uint64_t)st->st_size + 4095) / 4096 * 4096;
	m.dev = st->st_dev;
	m.ino = st->st_ino;
	m.mtime_sec = st->st_mtim.tv_sec;
	m.mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	m.path = path;
	return proc__map(p, &m);
}

static struct unwinder *new_unwinder(struct mem_sink *m, const struct unwind_opts *extra)
{
	struct unwind_opts o = extra ? *extra : (struct unwind_opts){ 0 };

	o.sink = (struct unwind_sink){ m, put_rows, put_table, put_proc, del_proc, put_file, del_file };
	o.open = open_path;
	o.open_ctx = m;
	return unwinder__new(&o);
}

/*
 * The rule the sink gives file offset @key in table @t the way the BPF
 * walk finds it: through the page index, then a search of its rows.
 */
static uint32_t sink_rule_indexed(const struct mem_sink *m, const struct bpfsym_unw_table *t,
				  uint32_t key)
{
	uint32_t j, lo, hi, mid;
	uint64_t e;

	if (key < t->base)
		return BPFSYM_UNW_FP_RULE;
	j = (key - t->base) >> BPFSYM_UNW_IDX_SHIFT;
	if (j < t->idx_nr) {
		e = m->rows[t->idx_first + j];
		lo = (uint32_t)e;
		hi = (uint32_t)(e >> 32) + 1;
	} else {
		lo = t->nr - 1;
		hi = t->nr;
	}
	if (lo >= t->nr || hi > t->nr || lo >= hi)
		return 0xdeadbeef;	/* an index entry out of its table */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((uint32_t)m->rows[t->first + mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (uint32_t)(m->rows[t->first + lo - 1] >> 32) : BPFSYM_UNW_FP_RULE;
}

/* The rule the sink's rows give file offset @key in table @t: the BPF walk's search. */
static uint32_t sink_rule(const struct mem_sink *m, const struct bpfsym_unw_table *t, uint32_t key)
{
	uint32_t lo = 0, hi = t->nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((uint32_t)m->rows[t->first + mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (uint32_t)(m->rows[t->first + lo - 1] >> 32) : BPFSYM_UNW_FP_RULE;
}

static struct mem_sink *sink_new(void)
{
	struct mem_sink *m = calloc(1, sizeof(*m));

	if (m)
		m->rows = calloc(MAX_ROWS, sizeof(uint64_t));
	if (m && !m->rows) {
		free(m);
		return NULL;
	}
	return m;
}

static void sink_free(struct mem_sink *m)
{
	if (m)
		free(m->rows);
	free(m);
}

/*
 * Two processes mapping libc share one table; a view lists the executable
 * mappings by start with their tables; anonymous code has none; the
 * published rows are the file's own table, row for row.
 */
static void test_views_and_tables(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct mapping anon = { .start = 0x1000, .end = 0x3000, .prot = PROT_READ | PROT_EXEC,
				.kind = MAPPING_ANON };
	const struct bpfsym_unw_proc *v1, *v2;
	struct cfi_table *oracle = NULL;
	struct unwind_stats st;
	struct unwinder *u = NULL;
	struct proc *a, *b;
	struct stat sl, sp;
	char err[160];
	size_t i;
	int fd;

	if (access(LIBC, R_OK) || access(PYTHON, R_OK)) {
		test__skip("%s or %s is not here", LIBC, PYTHON);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, NULL);
	if (!ASSERT_OK_PTR(u, "unwinder"))
		goto out;
	a = proc_table__add(pt, 100, 1);
	b = proc_table__add(pt, 200, 2);
	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	ASSERT_OK(map_file(a, PYTHON, 0x400000, &sp), "python in a");
	ASSERT_OK(map_file(a, LIBC, 0x7f0000000000, &sl), "libc in a");
	ASSERT_OK(proc__map(a, &anon), "anon in a");
	ASSERT_OK(map_file(b, LIBC, 0x7f1000000000, &sl), "libc in b");
	ASSERT_OK(unwinder__sync_proc(u, a), "view of a");
	ASSERT_OK(unwinder__sync_proc(u, b), "view of b");
	ASSERT_OK(unwinder__wait_idle(u, 60000), "builds end");
	v1 = view_of(m, 100);
	v2 = view_of(m, 200);
	if (!ASSERT_OK_PTR(v1, "a has a view") || !ASSERT_OK_PTR(v2, "b has a view"))
		goto out;
	if (!ASSERT_EQ(v1->nr, 3u, "a: anon, python, libc") || !ASSERT_EQ(v2->nr, 1u, "b: libc"))
		goto out;
	ASSERT_EQ(v1->r[0].start, 0x1000ull, "sorted by start");
	ASSERT_EQ(v1->r[0].table, BPFSYM_UNW_NO_TABLE, "anonymous code: no table");
	ASSERT_EQ(v1->r[2].table, v2->r[0].table, "libc: one table for both processes");
	/* BPF keeps a walk while its process's view has the same gen (offcpu.bpf.h). */
	ASSERT_NEQ(v1->gen, 0u, "a's view has a gen");
	ASSERT_NEQ(v2->gen, 0u, "b's view has a gen");
	ASSERT_NEQ(v1->gen, v2->gen, "two writes, two gens");
	ASSERT_NEQ(v1->r[1].table, v1->r[2].table, "python and libc: two tables");
	ASSERT_EQ(m->opens, 2, "each file opened once");
	ASSERT_EQ(m->nr_files, 2, "each file's identity told once");
	ASSERT_EQ(m->files[v2->r[0].table].ino, (uint64_t)sl.st_ino, "libc's inode under its table id");
	ASSERT_EQ(m->files[v2->r[0].table].dev,
		  (uint64_t)major(sl.st_dev) << 20 | minor(sl.st_dev), "the kernel's dev_t");
	ASSERT_EQ(m->files[v2->r[0].table].mtime_sec, (int64_t)sl.st_mtim.tv_sec, "its mtime");
	unwinder__stats(u, &st);
	ASSERT_EQ(st.tables, 2ull, "two tables");
	ASSERT_EQ(st.tables_ready, 2ull, "both built");
	ASSERT_EQ(m->tables[v2->r[0].table].state, (uint32_t)BPFSYM_UNW_READY, "libc published");
	ASSERT_EQ(m->published[v2->r[0].table], 1, "published once");

	/* The rows in the sink give the rule the file's own table gives, at every row. */
	fd = open(LIBC, O_RDONLY);
	if (!ASSERT_OK(cfi_table__build_fd(fd, &(struct cfi_opts){ .debug_fd = -1 }, &oracle, err,
					   sizeof(err)), err))
		goto close;
	ASSERT_EQ((uint64_t)m->tables[v2->r[0].table].nr, (uint64_t)oracle->nr, "all of libc's rows");
	for (i = 0; i < oracle->nr; i++) {
		if (!ASSERT_EQ(sink_rule(m, &m->tables[v2->r[0].table], oracle->rows[i].pc),
			       oracle->rows[i].rule, "a libc row's rule"))
			break;
	}
	/* The page index finds the same row for every row's first and last byte, and past the end. */
	for (i = 0; i < oracle->nr; i++) {
		const struct bpfsym_unw_table *lt = &m->tables[v2->r[0].table];
		uint32_t pc = oracle->rows[i].pc, want;

		if (!ASSERT_EQ(sink_rule_indexed(m, lt, pc), oracle->rows[i].rule, "indexed: a row's start"))
			break;
		want = i ? oracle->rows[i - 1].rule : BPFSYM_UNW_FP_RULE;
		if (pc && !ASSERT_EQ(sink_rule_indexed(m, lt, pc - 1), want, "indexed: the byte before"))
			break;
	}
	ASSERT_EQ(sink_rule_indexed(m, &m->tables[v2->r[0].table], UINT32_MAX),
		  oracle->rows[oracle->nr - 1].rule, "indexed: past the last row");
close:
	close(fd);
	/* Gone: the view goes; a second drop says so. */
	ASSERT_OK(unwinder__drop_proc(u, 200), "drop b");
	ASSERT_EQ(unwinder__drop_proc(u, 200), -ENOENT, "b has no view now");
	ASSERT_EQ(m->dels, 1, "deleted once: the BPF side makes no views of its own (a child borrows by reference)");
out:
	cfi_table__free(oracle);
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

/*
 * A file whose open is under way (-EINPROGRESS, a slow file system) gets
 * its table id in the view at once, is asked again by
 * unwinder__poll_opens() with the same mapping, and is built once it
 * answers; one that then fails keeps its id, unbuilt.  Before, such a
 * file had no table for the process's whole life.
 */
static void test_open_later(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	const struct bpfsym_unw_proc *v;
	struct unwinder *u = NULL;
	struct proc *a, *b;
	struct stat sl, sp;
	uint32_t id;

	if (access(LIBC, R_OK) || access(PYTHON, R_OK)) {
		test__skip("%s or %s is not here", LIBC, PYTHON);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, NULL);
	a = proc_table__add(pt, 100, 1);
	b = proc_table__add(pt, 200, 2);
	if (!ASSERT_OK_PTR(u, "unwinder") || !ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	ASSERT_OK(map_file(a, LIBC, 0x7f0000000000, &sl), "libc in a");
	m->slow_opens = 3;
	ASSERT_OK(unwinder__sync_proc(u, a), "view of a");
	v = view_of(m, 100);
	if (!ASSERT_OK_PTR(v, "a has a view") || !ASSERT_EQ(v->nr, 1u, "one range"))
		goto out;
	id = v->r[0].table;
	ASSERT_NEQ(id, BPFSYM_UNW_NO_TABLE, "an open under way: the view names a table id");
	ASSERT_NEQ(m->tables[id].state, (uint32_t)BPFSYM_UNW_READY, "not built yet");
	ASSERT_EQ(unwinder__poll_opens(u), 1, "asked again: still under way");
	ASSERT_EQ(unwinder__poll_opens(u), 1, "and again");
	ASSERT_EQ(unwinder__poll_opens(u), 0, "then it answers");
	ASSERT_OK(unwinder__wait_idle(u, 60000), "the build ends");
	ASSERT_EQ(m->tables[id].state, (uint32_t)BPFSYM_UNW_READY, "built once opened");
	ASSERT_EQ(m->opens, 4, "four asks, one per poll");
	ASSERT_EQ(unwinder__poll_opens(u), 0, "nothing left to ask");
	ASSERT_EQ(m->opens, 4, "no ask more");

	/* Under way, then an error: the id stays, unbuilt; nothing left to ask. */
	ASSERT_OK(map_file(b, PYTHON, 0x400000, &sp), "python in b");
	m->slow_opens = 1;
	m->fail_after_slow = 1;
	ASSERT_OK(unwinder__sync_proc(u, b), "view of b");
	v = view_of(m, 200);
	if (!ASSERT_OK_PTR(v, "b has a view"))
		goto out;
	id = v->r[0].table;
	ASSERT_NEQ(id, BPFSYM_UNW_NO_TABLE, "python: a table id");
	ASSERT_EQ(unwinder__poll_opens(u), 0, "its open failed");
	ASSERT_OK(unwinder__wait_idle(u, 60000), "idle");
	ASSERT_NEQ(m->tables[id].state, (uint32_t)BPFSYM_UNW_READY, "never built");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

/* Caps: processes (a view refused and counted), row memory (the table stays pending). */
static void test_caps(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct unwind_opts o = { .max_procs = 1, .max_bytes = 64 * 8, .sync = true };
	const struct bpfsym_unw_proc *v;
	uint32_t gen;
	struct unwind_stats st;
	struct unwinder *u = NULL;
	struct proc *a, *b;
	struct stat sl;

	if (access(LIBC, R_OK)) {
		test__skip("%s is not here", LIBC);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, &o);
	if (!ASSERT_OK_PTR(u, "unwinder"))
		goto out;
	a = proc_table__add(pt, 100, 1);
	b = proc_table__add(pt, 200, 2);
	ASSERT_OK(map_file(a, LIBC, 0x7f0000000000, &sl), "libc in a");
	ASSERT_OK(map_file(b, LIBC, 0x7f0000000000, &sl), "libc in b");
	ASSERT_OK(unwinder__sync_proc(u, a), "view of a");
	v = view_of(m, 100);
	gen = v ? v->gen : 0;
	ASSERT_EQ(unwinder__sync_proc(u, b), -ENOSPC, "b: past max_procs");
	ASSERT_OK(unwinder__sync_proc(u, a), "a again: it has its view already");
	v = view_of(m, 100);
	/* A view written again has a gen of its own: BPF's kept walks of the old one no longer hold. */
	if (ASSERT_OK_PTR(v, "a's view again"))
		ASSERT_NEQ(v->gen, gen, "a new gen for the view written again");
	unwinder__stats(u, &st);
	ASSERT_EQ(st.over_procs, 1ull, "one process refused");
	ASSERT_EQ(st.over_mem, 1ull, "libc does not fit in 64 rows");
	ASSERT_EQ(st.tables_ready, 0ull, "nothing built");
	v = view_of(m, 100);
	if (ASSERT_OK_PTR(v, "a's view") && ASSERT_EQ(v->nr, 1u, "one range"))
		ASSERT_EQ(m->published[v->r[0].table], 0, "libc's table never published: pending");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

/* The vdso's table comes from our own vdso image, once for every process. */
static void test_vdso(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct mapping vd = { .start = 0x7fff0000, .end = 0x7fff2000, .prot = PROT_READ | PROT_EXEC,
			      .kind = MAPPING_SPECIAL, .path = "[vdso]" };
	struct unwind_opts o = { .sync = true };
	const struct bpfsym_unw_proc *v;
	struct unwinder *u = NULL;
	struct proc *a, *b;

	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, &o);
	a = proc_table__add(pt, 100, 1);
	b = proc_table__add(pt, 200, 2);
	if (!ASSERT_OK_PTR(u, "unwinder") || !ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	ASSERT_OK(proc__map(a, &vd), "vdso in a");
	ASSERT_OK(proc__map(b, &vd), "vdso in b");
	ASSERT_OK(unwinder__sync_proc(u, a), "view of a");
	ASSERT_OK(unwinder__sync_proc(u, b), "view of b");
	v = view_of(m, 100);
	if (!ASSERT_OK_PTR(v, "a's view") || !ASSERT_EQ(v->nr, 1u, "one range"))
		goto out;
	ASSERT_EQ(view_of(m, 200)->r[0].table, v->r[0].table, "one vdso table");
	ASSERT_EQ(m->tables[v->r[0].table].state, (uint32_t)BPFSYM_UNW_READY, "built from our vdso");
	ASSERT_TRUE(m->tables[v->r[0].table].nr > 2, "the vdso has rows");
	ASSERT_EQ(m->opens, 0, "nothing opened for it");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

#define LIBM	"/lib/x86_64-linux-gnu/libm.so.6"

/* A process @pid mapping @path alone, its view written; the table id, or NO_TABLE. */
static uint32_t map_and_sync(struct unwinder *u, struct proc_table *pt, struct mem_sink *m,
			     uint32_t pid, const char *path)
{
	struct proc *p = proc_table__add(pt, pid, pid);
	const struct bpfsym_unw_proc *v;
	struct stat st;

	if (!ASSERT_OK_PTR(p, "process") || !ASSERT_OK(map_file(p, path, 0x7f0000000000, &st), path) ||
	    !ASSERT_OK(unwinder__sync_proc(u, p), "view"))
		return BPFSYM_UNW_NO_TABLE;
	v = view_of(m, pid);
	return ASSERT_OK_PTR(v, "view written") && ASSERT_EQ(v->nr, 1u, "one range") ?
	       v->r[0].table : BPFSYM_UNW_NO_TABLE;
}

/* Rows and index entries the table of @path takes (built alone, without caps). */
static uint64_t rows_of(const char *path)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct unwind_opts o = { .sync = true };
	struct unwind_stats st = { 0 };
	struct unwinder *u = m ? new_unwinder(m, &o) : NULL;

	if (u && pt)
		map_and_sync(u, pt, m, 1, path);
	if (u)
		unwinder__stats(u, &st);
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
	return st.rows_now;
}

/*
 * A table no view names is idle; past the idle budget it is evicted: its
 * entry pending again, its identity deleted, its id (next generation)
 * and rows reused by the next file.  A table a view still names stays.
 */
static void test_evict_idle(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct unwind_opts o = { .sync = true, .max_idle_bytes = 8 };
	struct unwind_stats st;
	struct unwind_sizes sz;
	struct unwinder *u = NULL;
	uint32_t libc, libm, first;
	struct stat sl;

	if (access(LIBC, R_OK) || access(LIBM, R_OK) || stat(LIBC, &sl)) {
		test__skip("%s or %s is not here", LIBC, LIBM);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, &o);
	if (!ASSERT_OK_PTR(u, "unwinder"))
		goto out;
	libc = map_and_sync(u, pt, m, 100, LIBC);
	if (!ASSERT_TRUE(libc < 256, "libc has a table id") ||
	    !ASSERT_EQ(map_and_sync(u, pt, m, 200, LIBC), libc, "b shares libc's table"))
		goto out;
	first = m->tables[libc].first;
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_READY, "built");
	ASSERT_OK(unwinder__drop_proc(u, 100), "a exits");
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_READY, "b still names it: kept");
	ASSERT_EQ(m->nr_deleted, 0, "nothing deleted yet");
	ASSERT_OK(unwinder__drop_proc(u, 200), "b exits");
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_PENDING, "idle past the budget: evicted");
	ASSERT_EQ(m->nr_deleted, 1, "its identity deleted");
	ASSERT_EQ(m->deleted.ino, (uint64_t)sl.st_ino, "libc's identity");
	unwinder__stats(u, &st);
	ASSERT_EQ(st.evicted, 1ull, "one eviction counted");
	ASSERT_EQ(st.rows_now, 0ull, "no rows held");
	libm = map_and_sync(u, pt, m, 300, LIBM);
	ASSERT_EQ(libm, libc, "libm reuses the id");
	ASSERT_EQ(m->tables[libm].gen, 1u, "of the next generation");
	ASSERT_EQ(m->tables[libm].first, first, "and the rows libc gave back");
	ASSERT_EQ(map_and_sync(u, pt, m, 400, LIBC) == libc, false, "libc again: a new id");
	unwinder__sizes(u, &sz);
	ASSERT_EQ(sz.tables, 2ull, "two tables held");
	ASSERT_EQ(sz.views, 2ull, "two views");
	ASSERT_EQ(sz.idle_tables, 0ull, "none idle");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

/*
 * Row space or ids full: the table idle longest goes to make room (the
 * idle budget would have kept it); a table a view names never does.
 */
static void test_evict_for_room(void)
{
	uint64_t rl = rows_of(LIBC), rm = rows_of(LIBM);
	struct unwind_opts o = { .sync = true, .max_bytes = 8 * (rl > rm ? rl : rm),
				 .max_idle_bytes = 8 * (rl > rm ? rl : rm) };
	struct unwind_opts o1 = { .sync = true, .max_tables = 1 };
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct unwinder *u = NULL;
	struct unwind_stats st;
	uint32_t libc, libm;

	if (!rl || !rm) {
		test__skip("%s or %s has no table here", LIBC, LIBM);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	/* Rows: room for the larger one alone. */
	u = new_unwinder(m, &o);
	if (!ASSERT_OK_PTR(u, "unwinder"))
		goto out;
	libc = map_and_sync(u, pt, m, 100, LIBC);
	ASSERT_OK(unwinder__drop_proc(u, 100), "a exits: libc idle, kept");
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_READY, "kept within the budget");
	libm = map_and_sync(u, pt, m, 200, LIBM);
	unwinder__stats(u, &st);
	ASSERT_EQ(st.evicted, 1ull, "libc evicted for libm's rows");
	ASSERT_EQ(st.over_mem, 0ull, "nothing refused");
	ASSERT_EQ(m->tables[libm].state, (uint32_t)BPFSYM_UNW_READY, "libm built");
	map_and_sync(u, pt, m, 300, LIBC);
	unwinder__stats(u, &st);
	ASSERT_EQ(st.over_mem, 1ull, "libc again: libm is named, so no room");
	ASSERT_EQ(m->tables[libm].state, (uint32_t)BPFSYM_UNW_READY, "libm kept");
	unwinder__free(u);
	/* Ids: one. */
	u = new_unwinder(m, &o1);
	if (!ASSERT_OK_PTR(u, "unwinder, one id"))
		goto out;
	libc = map_and_sync(u, pt, m, 400, LIBC);
	ASSERT_EQ(map_and_sync(u, pt, m, 500, LIBM), BPFSYM_UNW_NO_TABLE, "libc named: no id for libm");
	ASSERT_OK(unwinder__drop_proc(u, 400), "libc idle");
	ASSERT_EQ(map_and_sync(u, pt, m, 600, LIBM), libc, "libm takes libc's id");
	unwinder__stats(u, &st);
	ASSERT_EQ(st.over_tables, 1ull, "one refusal");
	ASSERT_EQ(st.evicted, 1ull, "one eviction");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

/* A table idle longer than idle_ttl_ms goes at the next view written; one named stays. */
static void test_evict_ttl(void)
{
	struct proc_table *pt = proc_table__new(0);
	struct mem_sink *m = sink_new();
	struct unwind_opts o = { .sync = true, .idle_ttl_ms = 1 };
	struct unwinder *u = NULL;
	struct unwind_stats st;
	uint32_t libc, libm;

	if (access(LIBC, R_OK) || access(LIBM, R_OK)) {
		test__skip("%s or %s is not here", LIBC, LIBM);
		goto out;
	}
	if (!ASSERT_OK_PTR(pt, "table") || !ASSERT_OK_PTR(m, "sink"))
		goto out;
	u = new_unwinder(m, &o);
	if (!ASSERT_OK_PTR(u, "unwinder"))
		goto out;
	libc = map_and_sync(u, pt, m, 100, LIBC);
	libm = map_and_sync(u, pt, m, 200, LIBM);
	ASSERT_OK(unwinder__drop_proc(u, 100), "a exits: libc idle");
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_READY, "idle, not yet old");
	usleep(5000);
	ASSERT_OK(unwinder__sync_proc(u, proc_table__find_pid(pt, 200)), "b's view again");
	ASSERT_EQ(m->tables[libc].state, (uint32_t)BPFSYM_UNW_PENDING, "libc idle 5 ms: evicted");
	ASSERT_EQ(m->tables[libm].state, (uint32_t)BPFSYM_UNW_READY, "libm named: kept");
	unwinder__stats(u, &st);
	ASSERT_EQ(st.evicted, 1ull, "one eviction");
out:
	unwinder__free(u);
	proc_table__free(pt);
	sink_free(m);
}

int main(void)
{
	RUN_TEST(test_views_and_tables);
	RUN_TEST(test_caps);
	RUN_TEST(test_open_later);
	RUN_TEST(test_vdso);
	RUN_TEST(test_evict_idle);
	RUN_TEST(test_evict_for_room);
	RUN_TEST(test_evict_ttl);
	return TEST_EXIT();
}
