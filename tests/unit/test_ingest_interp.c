// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Interpreter frames through the seam (issue 27): samples whose user side
 * holds Python slots (include/bpfsym.h, BPFSYM_FK_PYTHON), built as the
 * BPF walker will build them, fed through ingest with a test runtime
 * registered (runtime/runtime.h), into a real report and read back
 * through every format.
 *
 *   interp_stack     interleaved native and Python frames: each named by
 *                    its own (symbolizer, runtime); the recording's frames
 *                    (kind, source module and runtime, line, line offset,
 *                    code address); folded, table, perf-script, pprof and
 *                    the flame graph show them as docs/cli.md says.
 *   interp_same_line two functions on one line of one file (a listcomp
 *                    and its caller) stay two frames.
 *   interp_cut       a slot of a kind not known, a Python frame missing
 *                    its second slot: the user side ends there, counted.
 *   interp_misses    no runtime (not supported), a reused address
 *                    (firstlineno differs: invalid), a process gone: the
 *                    frame unnamed with its reason, counted in the header.
 *   interp_defer     a runtime whose read is still running (-EAGAIN)
 *                    keeps the sample until it answers; one that never
 *                    does is written unnamed at the end ("did not answer").
 *   interp_gone      the runtimes forget a process when the model does.
 *   registry         runtimes__add's refusals; a runtime breaking its
 *                    contract gives a miss, not a name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "test.h"
#include "ingest_fixture.h"
#include "view_render.h"
#include "profile.pb-c.h"
#include "runtime/runtime.h"
#include "view/format/report_flame.h"
#include "view/format/report_pprof.h"
#include "view/format/report_script.h"
#include "view/report_view.h"

TEST_SUITE("ingest_interp");

#define APP	"/srv/app.py"

/* The test runtime's code objects: address -> (first line, name, file). */
static const struct code {
	uint64_t addr;
	uint32_t first_line;
	const char *func, *file;
	uint32_t miss;		/* a miss to answer instead: enum rt_miss */
} codes[] = {
	{ 0x5000, 10, "leaf_a", APP, 0 },
	{ 0x5100, 20, "Outer.middle", APP, 0 },
	{ 0x5200, 30, "main", APP, 0 },
	{ 0x5300, 30, "<listcomp>", APP, 0 },
	{ 0x5400, 40, NULL, NULL, RT_MISS_GONE },
};

struct trt {
	int calls, eagain_left, frees, gone_calls;
	uint64_t eagain_addr;	/* the one address whose read takes eagain_left calls */
	uint32_t gone_pid;
	uint64_t gone_pstart;
};

static struct trt trt;

static int trt_name(void *ctx, const struct rt_frame *f, const struct proc *p, struct rt_name *out)
{
	struct trt *t = ctx;
	uint64_t addr = f->slot0 & BPFSYM_FK_ADDR_MASK;

	(void)p;
	t->calls++;
	if (addr == t->eagain_addr && t->eagain_left) {
		t->eagain_left--;
		return -EAGAIN;
	}
	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		if (codes[i].addr != addr)
			continue;
		if (codes[i].miss) {
			*out = (struct rt_name){ .reason = codes[i].miss };
			return 0;
		}
		/* The address is reused by another code object: never the stale name. */
		if (f->slot1 >> 32 != codes[i].first_line) {
			*out = (struct rt_name){ .reason = RT_MISS_INVALID };
			return 0;
		}
		*out = (struct rt_name){ .func = codes[i].func, .file = codes[i].file,
					 .line = codes[i].first_line + (uint32_t)f->slot1,
					 .first_line = codes[i].first_line };
		return 0;
	}
	*out = (struct rt_name){ .reason = RT_MISS_READ };
	return 0;
}

static void trt_gone(void *ctx, uint32_t pid, uint64_t pstart)
{
	struct trt *t = ctx;

	t->gone_calls++;
	t->gone_pid = pid;
	t->gone_pstart = pstart;
}

static void trt_free(void *ctx)
{
	((struct trt *)ctx)->frees++;
}

static const struct runtime_ops trt_ops = {
	.name = "python",
	.frame_kind = BPFSYM_FK_PYTHON,
	.name_frame = trt_name,
	.proc_gone = trt_gone,
	.free = trt_free,
};

/* A registry with the test runtime (reset) in watch_runtimes for the next rec_open(). */
static bool with_runtime(void)
{
	memset(&trt, 0, sizeof(trt));
	watch_runtimes = runtimes__new();
	return ASSERT_OK_PTR(watch_runtimes, "runtimes__new") &&
	       ASSERT_OK(runtimes__add(watch_runtimes, &trt_ops, &trt), "register the test runtime");
}

static void drop_runtime(void)
{
	runtimes__free(watch_runtimes);
	watch_runtimes = NULL;
}

/* A Python frame's two slots at @v: code object @addr, first line @fl, instruction @instr. */
static void py(uint64_t *v, uint64_t addr, uint32_t fl, uint32_t instr)
{
	v[0] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, addr);
	v[1] = bpfsym_fk_py_slot1(fl, instr);
}

/* k_one, then ing_alpha (a C extension) <- leaf_a <- ing_beta (eval) <- Outer.middle <- ing_gamma <- main. */
static int feed_mixed(struct rec *r, uint64_t ts)
{
	uint64_t ips[12];

	ips[0] = K_ONE;
	ips[1] = BASE + func_value[ALPHA] + 4;
	py(&ips[2], 0x5000, 10, 3);
	ips[4] = BASE + func_value[BETA] + 5;
	py(&ips[5], 0x5100, 20, 2);
	ips[7] = BASE + func_value[GAMMA] + 5;
	py(&ips[8], 0x5200, 30, 4);
	return feed_sample(r, FAKE_PID, ts, ips, 1, 9);
}

/* Frame @i of sample @si is Python function @func at @line of APP, code at @addr. */
static void interp_is(const struct rec *r, size_t si, uint32_t i, const char *func, uint32_t line,
		      uint32_t first_line, uint64_t addr)
{
	const struct rpt_frame *f = frame_of(r, si, i);
	const struct rpt_module *m = module_of(r, si, i);

	if (!ASSERT_OK_PTR(f, func) || !ASSERT_OK_PTR(m, func))
		return;
	ASSERT_EQ(f->kind, (uint32_t)RPT_FRAME_INTERP, func);
	ASSERT_STREQ(f->sym, func, "qualified name");
	ASSERT_EQ(f->offset, (uint64_t)line, "offset: the line");
	ASSERT_EQ(f->sym_off, (uint64_t)(line - first_line), "sym_off: the line's offset into its function");
	ASSERT_EQ(f->addr, addr, "addr: the code object's");
	ASSERT_EQ(f->reason, (uint32_t)RPT_OK, "named");
	ASSERT_EQ(m->kind, (uint32_t)RPT_MOD_SOURCE, "a source module");
	ASSERT_STREQ(m->path, APP, "the source file");
	ASSERT_EQ(m->runtime, (uint32_t)RPT_RT_PYTHON, "its runtime");
	ASSERT_EQ(m->build_id_len, 0u, "no build-id");
}

static int flame(FILE *f, const struct report *r, const struct view_opts *o)
{
	return report_flame__fprint(f, r, o, NULL);
}

/* @text (freed) holds @want. */
static void has(char *text, const char *want, const char *what)
{
	if (text && !strstr(text, want))
		test__fail_msg(__FILE__, __LINE__, "%s: \"%s\" not in:\n%s", what, want, text);
	free(text);
}

static Perftools__Profiles__Profile *pprof_of(const struct report *r, const char *path)
{
	static uint8_t buf[1 << 20];
	gzFile gz;
	int n;

	if (!ASSERT_OK(report_pprof__write(path, r, NULL), "pprof") || !(gz = gzopen(path, "rb")))
		return NULL;
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	unlink(path);
	return n > 0 ? perftools__profiles__profile__unpack(NULL, (size_t)n, buf) : NULL;
}

/* pprof: leaf_a a Function (file, first line) with a Line of its line, no mapping. */
static void check_pprof(const struct rec *r)
{
	char path[sizeof(r->path) + 8];
	Perftools__Profiles__Profile *p;
	uint64_t fid = 0;
	bool loc = false;

	snprintf(path, sizeof(path), "%s.pb.gz", r->path);
	p = pprof_of(r->rpt, path);
	if (!ASSERT_OK_PTR(p, "pprof decoded"))
		return;
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		if (strcmp(p->string_table[f->name], "leaf_a"))
			continue;
		fid = f->id;
		ASSERT_STREQ(p->string_table[f->filename], APP, "pprof: the function's file");
		ASSERT_EQ(f->start_line, (int64_t)10, "pprof: its first line");
	}
	ASSERT_TRUE(fid, "pprof: a function leaf_a");
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->n_line != 1 || l->line[0]->function_id != fid)
			continue;
		loc = true;
		ASSERT_EQ(l->line[0]->line, (int64_t)13, "pprof: the line");
		ASSERT_EQ(l->mapping_id, (uint64_t)0, "pprof: no mapping");
		ASSERT_EQ(l->address, (uint64_t)0x5000, "pprof: the code object's address");
	}
	ASSERT_TRUE(loc, "pprof: a location of leaf_a");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void check_views(const struct rec *r)
{
	has(render(report_view__folded, r->rpt, NULL),
	    "main_[p];ing_gamma;Outer.middle_[p];ing_beta;leaf_a_[p];ing_alpha;k_one_[k] 1",
	    "folded: qualified names marked _[p], interleaved");
	has(render(report_view__table, r->rpt, NULL), "Outer.middle", "table: the qualified name");
	has(render(report_view__table, r->rpt, NULL), "app.py", "table: its file in the module column");
	has(render(report_view__table, r->rpt, NULL), "# interpreter frames: 3 named", "table header");
	has(render(report_script__write, r->rpt, NULL), "5000 py::leaf_a+0x3 (" APP ":13)\n",
	    "perf-script: as perf prints Python's (+0x: lines past the first), the file and line for the DSO");
	has(render(report_script__write, r->rpt, NULL), " ing_beta+0x5 (",
	    "perf-script: a native caller after a Python frame is a return address");
	has(render(flame, r->rpt, NULL), "Outer.middle_[p]", "flame graph: the marked name");
	has(render(flame, r->rpt, NULL), ">Python</text>", "flame graph: the legend says which colour");
	check_pprof(r);
}

static void test_interp_stack(void)
{
	struct rec r;

	if (!with_runtime() || !rec_open(&r, "interp_stack", false))
		goto out;
	map_lib(&r, FAKE_PID, our_mnt_ns, 10);
	ASSERT_OK(feed_mixed(&r, START_NS + 1000), "a mixed sample");
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(stack_len(&r, 0), 7u, "frames: one per native slot, one per Python pair");
	frame_is(&r, 0, 0, "k_one", 0, "[kernel.kallsyms]");
	frame_is(&r, 0, 1, "ing_alpha", 4, lib_path);
	interp_is(&r, 0, 2, "leaf_a", 13, 10, 0x5000);
	frame_is(&r, 0, 3, "ing_beta", 4, lib_path);
	interp_is(&r, 0, 4, "Outer.middle", 22, 20, 0x5100);
	frame_is(&r, 0, 5, "ing_gamma", 4, lib_path);
	interp_is(&r, 0, 6, "main", 34, 30, 0x5200);
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_NAMED], (uint64_t)3, "END: frames named");
	check_views(&r);
out:
	rec_close(&r);
	drop_runtime();
}

static void test_interp_same_line(void)
{
	uint64_t ips[4];
	struct rec r;

	if (!with_runtime() || !rec_open(&r, "interp_same_line", false))
		goto out;
	py(&ips[0], 0x5300, 30, 4);
	py(&ips[2], 0x5200, 30, 4);
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 1000, ips, 0, 4), "listcomp in main, one line");
	if (!rec_finish(&r))
		goto out;
	interp_is(&r, 0, 0, "<listcomp>", 34, 30, 0x5300);
	interp_is(&r, 0, 1, "main", 34, 30, 0x5200);
	ASSERT_EQ(report__nr_frames(r.rpt), (size_t)2, "two frames, not one named twice");
	has(render(report_view__folded, r.rpt, NULL), "main_[p];<listcomp>_[p] 1", "folded");
out:
	rec_close(&r);
	drop_runtime();
}

static void test_interp_cut(void)
{
	uint64_t ips[6];
	struct rec r;

	if (!with_runtime() || !rec_open(&r, "interp_cut", false))
		goto out;
	map_lib(&r, FAKE_PID, our_mnt_ns, 10);
	ips[0] = BASE + func_value[ALPHA] + 4;
	py(&ips[1], 0x5000, 10, 3);
	ips[3] = 5ull << BPFSYM_FK_SHIFT | 0x1234;	/* a kind no one defined: its size unknown */
	ips[4] = BASE + func_value[BETA] + 5;
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 1000, ips, 0, 5), "a frame of kind 5");
	ips[1] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x5000);	/* and nothing after it */
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 2000, ips, 0, 2), "a Python frame cut short");
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(stack_len(&r, 0), 2u, "kept up to the unknown kind");
	interp_is(&r, 0, 1, "leaf_a", 13, 10, 0x5000);
	ASSERT_EQ(stack_len(&r, 1), 1u, "kept up to the short frame");
	frame_is(&r, 1, 0, "ing_alpha", 4, lib_path);
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_CUT_KIND], (uint64_t)1, "END: cut at a kind");
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_CUT_SHORT], (uint64_t)1, "END: cut short");
	has(render(report_view__table, r.rpt, NULL),
	    "1 stacks cut: unknown frame kind, 1 stacks cut: frame missing its slot", "table header");
out:
	rec_close(&r);
	drop_runtime();
}

/* Frame @i of sample @si is an unnamed interpreter frame at @addr, for @reason. */
static void unnamed_is(const struct rec *r, size_t si, uint32_t i, uint64_t addr, uint32_t reason)
{
	const struct rpt_frame *f = frame_of(r, si, i);

	if (!ASSERT_OK_PTR(f, "frame"))
		return;
	ASSERT_EQ(f->kind, (uint32_t)RPT_FRAME_INTERP, "an interpreter frame");
	ASSERT_NULL(f->sym, "unnamed");
	ASSERT_EQ(f->module, RPT_NONE, "no source file");
	ASSERT_EQ(f->addr, addr, "its code address");
	ASSERT_EQ(f->reason, reason, rpt_reason__str(reason));
}

static void test_interp_misses(void)
{
	uint64_t ips[2];
	struct rec r;

	/* No runtime at all: every interpreter frame is "not supported". */
	if (!rec_open(&r, "interp_none", false))
		goto out;
	py(ips, 0x5000, 10, 3);
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 1000, ips, 0, 2), "no runtime");
	if (!rec_finish(&r))
		goto out;
	unnamed_is(&r, 0, 0, 0x5000, RPT_INTERP_UNSUPPORTED);
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_UNSUPPORTED], (uint64_t)1, "END: not supported");
	has(render(report_view__folded, r.rpt, NULL), ";[interpreter]_[p] 1", "folded: unnamed, still marked");
	has(render(report_script__write, r.rpt, NULL), "5000 [unknown] ([interpreter])", "perf-script");
	rec_close(&r);

	if (!with_runtime() || !rec_open(&r, "interp_misses", false))
		goto out;
	py(ips, 0x5000, 11, 3);		/* 0x5000 now holds a code object of line 11 */
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 1000, ips, 0, 2), "a reused address");
	py(ips, 0x5400, 40, 0);
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 2000, ips, 0, 2), "a process gone");
	if (!rec_finish(&r))
		goto out;
	unnamed_is(&r, 0, 0, 0x5000, RPT_INTERP_INVALID);
	unnamed_is(&r, 1, 0, 0x5400, RPT_INTERP_GONE);
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_INVALID], (uint64_t)1, "END: invalid");
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_GONE], (uint64_t)1, "END: gone");
	has(render(report_view__table, r.rpt, NULL), "1 process gone, 1 invalid frame", "table header");
out:
	rec_close(&r);
	drop_runtime();
}

static void test_interp_defer(void)
{
	const struct ingest_stats *st;
	uint64_t ips[2];
	struct rec r;

	if (!with_runtime() || !rec_open(&r, "interp_defer", false))
		goto out;
	/* Asked at the sample, once more as it is kept (defer__waits), then at each tick. */
	trt.eagain_addr = 0x5000;
	trt.eagain_left = 3;
	py(ips, 0x5000, 10, 3);
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 1000, ips, 0, 2), "a read queued");
	st = ingest__stats(r.in);
	ASSERT_EQ(st->deferred, (uint64_t)1, "kept while the read runs");
	ASSERT_EQ(st->samples, (uint64_t)0, "not written yet");
	ASSERT_OK(ingest__tick(r.in), "tick: still running");
	ASSERT_EQ(st->samples, (uint64_t)0, "still kept");
	ASSERT_OK(ingest__tick(r.in), "tick: answered");
	ASSERT_EQ(st->samples, (uint64_t)1, "written once named");
	ASSERT_EQ(st->deferred_unnamed, (uint64_t)0, "named");

	trt.eagain_addr = 0x5100;
	trt.eagain_left = 1 << 30;	/* never answers */
	py(ips, 0x5100, 20, 2);
	ASSERT_OK(feed_sample(&r, FAKE_PID, START_NS + 2000, ips, 0, 2), "a read that never ends");
	ASSERT_OK(ingest__flush_deferred(r.in, 30 * 1000000ull, NULL), "the end");
	ASSERT_EQ(st->samples, (uint64_t)2, "written at the end");
	ASSERT_EQ(st->deferred_unnamed, (uint64_t)1, "unnamed after all");
	if (!rec_finish(&r))
		goto out;
	interp_is(&r, 0, 0, "leaf_a", 13, 10, 0x5000);
	unnamed_is(&r, 1, 0, 0x5100, RPT_INTERP_NO_ANSWER);
	ASSERT_EQ(report__header(r.rpt)->interp[RPT_IC_NO_ANSWER], (uint64_t)1, "END: did not answer");
out:
	rec_close(&r);
	drop_runtime();
}

static void test_interp_gone(void)
{
	struct rec r;

	if (!with_runtime() || !rec_open(&r, "interp_gone", false))
		goto out;
	map_lib(&r, FAKE_PID, our_mnt_ns, 10);
	ASSERT_OK(feed_mixed(&r, START_NS + 1000), "a sample");
	task_ev(&r, BPFSYM_EV_EXIT, FAKE_PID, 0, START_NS + 2000);
	ASSERT_OK(feed_mixed(&r, START_NS + 3000), "a late sample, in the grace");
	ASSERT_EQ(trt.gone_calls, 0, "not forgotten during its grace");
	task_ev(&r, BPFSYM_EV_EXIT, FAKE_PID + 1, 0, START_NS + 2000 + 2 * MAPEVENTS_EXIT_GRACE_NS);
	ASSERT_EQ(trt.gone_calls, 1, "forgotten when the model lets it go");
	ASSERT_EQ(trt.gone_pid, (uint32_t)FAKE_PID, "that process");
	ASSERT_EQ(trt.gone_pstart, (uint64_t)FAKE_PID + 1000, "by its start time");
out:
	rec_close(&r);
	drop_runtime();
	ASSERT_EQ(trt.frees, 1, "the registry freed its runtime");
}

static int breach(void *ctx, const struct rt_frame *f, const struct proc *p, struct rt_name *out)
{
	(void)ctx, (void)f, (void)p;
	*out = (struct rt_name){ .reason = RT_MISS_NONE };	/* neither a name nor a reason */
	return 0;
}

static void test_registry(void)
{
	struct runtimes *rs = runtimes__new();
	struct runtime_ops kind0 = trt_ops, kind16 = trt_ops, noname = trt_ops, bad = trt_ops;
	struct rt_frame f = { .slot0 = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x5000) };
	struct rt_name nm;

	if (!ASSERT_OK_PTR(rs, "runtimes__new"))
		return;
	kind0.frame_kind = BPFSYM_FK_NATIVE;
	kind16.frame_kind = BPFSYM_FK_MAX;
	noname.name_frame = NULL;
	bad.name_frame = breach;
	bad.free = NULL;
	ASSERT_EQ(runtimes__add(rs, &kind0, NULL), -EINVAL, "native frames are the symbolizer's");
	ASSERT_EQ(runtimes__add(rs, &kind16, NULL), -EINVAL, "past 4 bits");
	ASSERT_EQ(runtimes__add(rs, &noname, NULL), -EINVAL, "no name_frame()");
	ASSERT_OK(runtimes__name(rs, BPFSYM_FK_PYTHON, &f, NULL, &nm), "none registered");
	ASSERT_EQ(nm.reason, (uint32_t)RT_MISS_VERSION, "none registered: not supported");
	ASSERT_OK(runtimes__add(rs, &bad, NULL), "a runtime");
	ASSERT_EQ(runtimes__add(rs, &bad, NULL), -EEXIST, "one per kind");
	ASSERT_STREQ(runtimes__kind_name(rs, BPFSYM_FK_PYTHON), "python", "its name");
	ASSERT_OK(runtimes__name(rs, BPFSYM_FK_PYTHON, &f, NULL, &nm), "a breach");
	ASSERT_NULL(nm.func, "no name");
	ASSERT_EQ(nm.reason, (uint32_t)RT_MISS_READ, "a miss");
	ASSERT_EQ(bpfsym_fk_slots(BPFSYM_FK_NATIVE), 1u, "native: one slot");
	ASSERT_EQ(bpfsym_fk_slots(BPFSYM_FK_PYTHON), 2u, "python: two");
	ASSERT_EQ(bpfsym_fk_slots(7), 0u, "reserved: unknown");
	ASSERT_EQ(bpfsym_fk_kind(0x7fffffffffffull), 0u, "a user address is a native slot");
	runtimes__free(rs);
}

int main(void)
{
	RUN_TEST(test_registry);
	setup_or_report();
	RUN_TEST(test_interp_stack);
	RUN_TEST(test_interp_same_line);
	RUN_TEST(test_interp_cut);
	RUN_TEST(test_interp_misses);
	RUN_TEST(test_interp_defer);
	RUN_TEST(test_interp_gone);
	cleanup();
	return TEST_EXIT();
}
