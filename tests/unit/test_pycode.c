// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtime/python: pycode, pyproc and pycache against the interpreters
 * installed here.  The oracle is each interpreter's own view of its code
 * objects (py_fixture.h: id(), co_qualname, co_filename, co_firstlineno,
 * co_positions()), read from a child that waits on stdin; the reader gets
 * only the pid and the interpreter's ELF file.  Plus the location table
 * on hand-made tables and the cache's keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "runtime/python/pycache.h"
#include "runtime/python/pycode.h"
#include "base/offload.h"
#include "runtime/python/pyproc.h"
#include "runtime/python/pyrt.h"
#include "runtime/python/python.h"
#include "bpfsym.h"
#include "model/procmap.h"
#include "runtime/runtime.h"
#include "runtime/python/pywalk.h"
#include "py_fixture.h"
#include "test.h"

TEST_SUITE("pycode")

/* Entries: first byte 0x80 | code << 3 | (units - 1). */
#define E(code, units) (uint8_t)(0x80 | (code) << 3 | ((units) - 1))

static void test_linetable_forms(void)
{
	static const uint8_t t[] = {
		E(13, 2), 4,		/* no columns: +2 -> 12, units 0-1 */
		E(0, 1), 5,		/* short form: 12, unit 2 */
		E(11, 3), 1, 9,		/* one line, +1 -> 13, units 3-5 */
		E(15, 1),		/* no location, unit 6 */
		E(14, 2), 7, 0, 3, 4,	/* long: -3 -> 10, units 7-8 */
		E(13, 8), 0x41, 1,	/* varint 1 + (1 << 6) = 65: -32 -> -22 */
		E(12, 1), 2, 3,		/* +2 -> -20, unit 17 */
	};
	static const struct { uint32_t idx; int32_t line; } want[] = {
		{ 0, 12 }, { 1, 12 }, { 2, 12 }, { 3, 13 }, { 5, 13 }, { 6, -1 }, { 7, 10 },
		{ 8, 10 }, { 9, -22 }, { 16, -22 }, { 17, -20 },
	};
	int32_t line;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		line = 99;
		if (!ASSERT_OK(pylinetable__line(t, sizeof(t), 10, want[i].idx, &line), "line"))
			return;
		ASSERT_EQ(line, want[i].line, "line of the instruction");
	}
	ASSERT_EQ(pylinetable__line(t, sizeof(t), 10, 18, &line), -ENOENT, "past the end");
	ASSERT_EQ(pylinetable__line(t, 0, 10, 0, &line), -ENOENT, "empty table");
}

static void test_linetable_malformed(void)
{
	static const uint8_t no_high[] = { E(0, 1), 5, 0x05, 1 };
	static const uint8_t cut_varint[] = { E(13, 1), 0x40 };
	static const uint8_t cut_cols[] = { E(10, 1), 1 };
	static const uint8_t long_varint[] = { E(13, 1), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f };
	static const uint8_t overflow[] = { E(13, 1), 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	int32_t line;

	ASSERT_OK(pylinetable__line(no_high, sizeof(no_high), 1, 0, &line), "first entry fine");
	ASSERT_EQ(pylinetable__line(no_high, sizeof(no_high), 1, 1, &line), -EBADMSG, "no high bit");
	ASSERT_EQ(pylinetable__line(cut_varint, sizeof(cut_varint), 1, 0, &line), -EBADMSG, "cut varint");
	ASSERT_EQ(pylinetable__line(cut_cols, sizeof(cut_cols), 1, 0, &line), -EBADMSG, "cut columns");
	ASSERT_EQ(pylinetable__line(long_varint, sizeof(long_varint), 1, 0, &line), -EBADMSG,
		  "varint over 32 bits");
	ASSERT_EQ(pylinetable__line(overflow, sizeof(overflow), INT32_MAX - 5, 0, &line), -EBADMSG,
		  "line past int32");
}

/* A fake process: one buffer at a fixed address. */
struct fake_mem {
	uint64_t base;
	uint8_t buf[4096];
};

static int fake_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < m->base || addr - m->base > sizeof(m->buf) ||
	    len > sizeof(m->buf) - (addr - m->base))
		return -EFAULT;
	memcpy(out, m->buf + (addr - m->base), len);
	return 0;
}

/* A compact str object at @off in @m, with @n code points of @kind bytes from @data. */
static void fake_str(struct fake_mem *m, const struct py_layout *l, size_t off, bool ascii,
		     unsigned kind, const void *data, size_t n)
{
	uint64_t type = l->str_type + 0x1000;
	int64_t len = (int64_t)n;
	uint32_t state = kind << 2 | 1u << 5 | (ascii ? 1u << 6 : 0);

	memcpy(m->buf + off + l->ob_type, &type, 8);
	memcpy(m->buf + off + l->str_length, &len, 8);
	memcpy(m->buf + off + l->str_state, &state, 4);
	memcpy(m->buf + off + (ascii ? l->str_ascii_size : l->str_compact_size), data, n * kind);
}

static void test_str_forms(void)
{
	static const uint16_t ucs2[] = { 0x3bb, 0xd800, 0x41 };	/* lambda, a lone surrogate, A */
	static const uint32_t ucs4[] = { 0x20000, 0x110000, 0 };
	struct fake_mem *m = calloc(1, sizeof(*m));
	struct py_layout l;
	char buf[16];
	size_t len;

	if (!ASSERT_OK_PTR(m, "calloc") || !ASSERT_OK(pyelf__table(0x030c01f0, &l), "3.12 table"))
		goto out;
	l.str_type = 0x5000;
	m->base = 0x10000;
	fake_str(m, &l, 0, true, 1, "hello", 5);
	fake_str(m, &l, 256, false, 1, "gr\xf6\xdf" "e", 5);
	fake_str(m, &l, 512, false, 2, ucs2, 3);
	fake_str(m, &l, 768, false, 4, ucs4, 3);
	fake_str(m, &l, 1024, true, 1, "0123456789abcdefXYZ", 19);
	ASSERT_OK(pycode__str(fake_read, m, &l, 0x1000, m->base, buf, sizeof(buf), &len), "ascii");
	ASSERT_STREQ(buf, "hello", "ascii");
	ASSERT_OK(pycode__str(fake_read, m, &l, 0x1000, m->base + 256, buf, sizeof(buf), &len), "latin1");
	ASSERT_STREQ(buf, "gr\xc3\xb6\xc3\x9f" "e", "latin-1 to UTF-8");
	ASSERT_OK(pycode__str(fake_read, m, &l, 0x1000, m->base + 512, buf, sizeof(buf), &len), "ucs2");
	ASSERT_STREQ(buf, "\xce\xbb\xef\xbf\xbd" "A", "UCS-2, the surrogate replaced");
	ASSERT_OK(pycode__str(fake_read, m, &l, 0x1000, m->base + 768, buf, sizeof(buf), &len), "ucs4");
	ASSERT_STREQ(buf, "\xf0\xa0\x80\x80\xef\xbf\xbd\xef\xbf\xbd", "UCS-4, bad points replaced");
	ASSERT_OK(pycode__str(fake_read, m, &l, 0x1000, m->base + 1024, buf, sizeof(buf), &len), "long");
	ASSERT_EQ(len, (size_t)15, "cut to the buffer");
	ASSERT_STREQ(buf, "0123456789abcde", "cut at a character");
	ASSERT_EQ(pycode__str(fake_read, m, &l, 0, m->base, buf, sizeof(buf), &len), -EINVAL,
		  "another type (wrong bias)");
	m->buf[l.str_state] = 3 << 2 | 1 << 5;	/* kind 3 */
	ASSERT_EQ(pycode__str(fake_read, m, &l, 0x1000, m->base, buf, sizeof(buf), &len), -EINVAL,
		  "kind 3");
	ASSERT_EQ(pycode__str(fake_read, m, &l, 0x1000, m->base + 4090, buf, sizeof(buf), &len),
		  -EFAULT, "outside memory");
out:
	free(m);
}

static void test_cache_keys(void)
{
	struct pycache *c = pycache__new(3);
	struct py_code pc = { .func = "f", .file = "a.py", .firstlineno = 5 };
	struct py_name n;
	static const uint8_t t[] = { E(13, 2), 4 };

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	pc.linetable = malloc(sizeof(t));
	memcpy(pc.linetable, t, sizeof(t));
	pc.linetable_len = sizeof(t);
	ASSERT_OK(pycache__add(c, 10, 100, 0x1000, 5, &pc, 0), "add");
	ASSERT_NULL(pc.linetable, "line table taken");
	ASSERT_OK(pycache__lookup(c, 10, 100, 0x1000, 5, 1, &n), "hit");
	ASSERT_STREQ(n.func, "f", "func");
	ASSERT_STREQ(n.file, "a.py", "file");
	ASSERT_EQ(n.line, 7, "line from the kept table");
	ASSERT_OK(pycache__lookup(c, 10, 100, 0x1000, 5, PY_INDEX_BEFORE, &n), "before");
	ASSERT_EQ(n.line, 5, "before the first instruction: firstlineno");
	ASSERT_EQ(pycache__lookup(c, 10, 100, 0x1000, 6, 1, &n), -ENOENT, "another firstlineno");
	ASSERT_EQ(pycache__lookup(c, 10, 101, 0x1000, 5, 1, &n), -ENOENT, "another pstart");
	ASSERT_OK(pycache__add(c, 10, 100, 0x2000, 5, NULL, -EINVAL), "add a miss");
	ASSERT_OK(pycache__lookup(c, 10, 100, 0x2000, 5, 1, &n), "miss kept");
	ASSERT_EQ(n.err, -EINVAL, "the miss's reason");
	ASSERT_OK(pycache__add(c, 11, 200, 0x1000, 5, NULL, -ESRCH), "other process");
	pycache__drop_proc(c, 10, 100);
	ASSERT_EQ(pycache__nr(c), (size_t)1, "the process's entries gone");
	ASSERT_EQ(pycache__lookup(c, 10, 100, 0x1000, 5, 1, &n), -ENOENT, "dropped");
	ASSERT_OK(pycache__add(c, 12, 1, 1, 1, NULL, -EFAULT), "fill");
	ASSERT_OK(pycache__add(c, 12, 1, 2, 1, NULL, -EFAULT), "fill");
	ASSERT_OK(pycache__lookup(c, 12, 1, 1, 1, 0, &n), "touch the first");
	ASSERT_OK(pycache__add(c, 12, 1, 3, 1, NULL, -EFAULT), "over the cap");
	ASSERT_EQ(pycache__nr(c), (size_t)3, "capped");
	ASSERT_EQ(pycache__lookup(c, 11, 200, 0x1000, 5, 1, &n), -ENOENT, "least recent evicted");
	ASSERT_OK(pycache__lookup(c, 12, 1, 1, 1, 0, &n), "recent kept");
	pycache__free(c);
}


/* One CODE line of the fixture: the interpreter's own view of a code object. */
struct oracle_code {
	uint64_t id;
	uint32_t first;
	int resume;		/* the first RESUME's index: _co_firsttraceable */
	char qual[256], file[512];
	char *pairs;		/* "index:line ..." in the fixture's text */
};

static bool parse_code(char *line, struct oracle_code *oc)
{
	char qual[512], file[1024];
	int at;

	if (sscanf(line, "CODE %" SCNu64 " %u %d %511s %1023s %n", &oc->id, &oc->first, &oc->resume,
		   qual, file, &at) != 5)
		return false;
	oc->pairs = line + at;
	return py_fixture_unhex(qual, oc->qual, sizeof(oc->qual)) &&
	       py_fixture_unhex(file, oc->file, sizeof(oc->file));
}

/* Every (index, line) of @oc against what the reader says: the pairs compared. */
static int check_lines(const struct py_code *pc, const struct oracle_code *oc, const char *python)
{
	const char *p = oc->pairs;
	unsigned idx;
	int line, n, nr = 0;

	while (sscanf(p, "%u:%d%n", &idx, &line, &n) == 2) {
		if (!ASSERT_EQ(pycode__line(pc, idx), line, python))
			return -1;
		nr++;
		p += n;
	}
	return nr;
}

/* The reader's answer for @oc against the oracle's. */
static int check_code(struct pyproc *pp, const struct py_layout *l, uint64_t bias,
		      const struct oracle_code *oc, const char *python, struct pycache *cache)
{
	struct py_code *pc = calloc(1, sizeof(*pc));
	struct py_name n;
	int nr = 0, traceable;

	if (!ASSERT_OK_PTR(pc, "calloc"))
		return 0;
	if (!ASSERT_OK(pycode__read(pyproc__read, pp, l, bias, oc->id, oc->first, pc), oc->qual))
		goto out;
	ASSERT_STREQ(pc->func, oc->qual, python);
	ASSERT_STREQ(pc->file, oc->file, python);
	if (ASSERT_OK(pyproc__read(pp, oc->id + l->co_firsttraceable, &traceable, 4), "traceable"))
		ASSERT_EQ(traceable, oc->resume, "_co_firsttraceable is the first RESUME");
	nr = check_lines(pc, oc, python);
	ASSERT_TRUE(nr >= 2, "instructions compared");
	ASSERT_OK(pycache__add(cache, pp->pid, pp->pstart, oc->id, oc->first, pc, 0), "cache");
	ASSERT_OK(pycache__lookup(cache, pp->pid, pp->pstart, oc->id, oc->first, 0, &n), "cached");
	ASSERT_STREQ(n.func, oc->qual, "cached name");
	ASSERT_EQ(pycode__read(pyproc__read, pp, l, bias, oc->id, oc->first + 1, pc), -EINVAL,
		  "another firstlineno");
out:
	pycode__release(pc);
	free(pc);
	return nr;
}

/*
 * The main thread's frames walked as BPF is to walk them, named: the
 * child's own stack (STACK: qualname:line, leaf first), with the entry of
 * each _PyEval_EvalFrameDefault invocation where CPython starts one: the
 * lambda map() calls from C, and the module.
 */
static size_t check_walk(struct pyproc *pp, const struct py_layout *l, uint64_t bias,
			 const char *stack, const char *python)
{
	struct py_frame fr[32];
	struct py_code *pc = calloc(1, sizeof(*pc));
	char want[1024], got[1024], name[256];
	size_t nr = 0, i, len = 0;
	int entries = 0;

	if (!ASSERT_OK_PTR(pc, "calloc") ||
	    !ASSERT_OK(pywalk__thread(pyproc__read, pp, l, bias, pp->pid, fr, ARRAY_SIZE(fr), &nr),
		       python))
		goto out;
	snprintf(want, sizeof(want), "%s", stack);
	got[0] = 0;
	for (i = 0; i < nr; i++) {
		if (!ASSERT_OK(pycode__read(pyproc__read, pp, l, bias, fr[i].code, fr[i].firstlineno,
					    pc), "walked frame's code"))
			goto out;
		name[0] = 0;
		for (size_t k = 0; k < pc->func_len && 2 * k + 2 < sizeof(name); k++)
			sprintf(name + 2 * k, "%02x", (unsigned char)pc->func[k]);
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s:%d", i ? " " : "", name,
					pycode__line(pc, fr[i].index));
		pycode__release(pc);
		if (fr[i].entry)
			entries++;
		ASSERT_FALSE(fr[i].incomplete, "a frame blocked in a call has started");
	}
	ASSERT_STREQ(got, want, python);
	ASSERT_EQ(nr, (size_t)5, "frames: wait, the lambda, outer, main, the module");
	if (nr == 5) {
		ASSERT_TRUE(fr[1].entry && fr[4].entry, "the lambda and the module start invocations");
		ASSERT_EQ(entries, 2, "two invocations of the eval function");
	}
	if (test__failed_now)
		goto out;
	ASSERT_EQ(pywalk__thread(pyproc__read, pp, l, bias, 1, fr, ARRAY_SIZE(fr), &nr), -ESRCH,
		  "no such thread");
	nr = 5;
out:
	free(pc);
	return nr;
}

/* pyrt__name() until it answers (a read on a worker): its return. */
static int name_wait(struct pyrt *rt, uint32_t pid, uint64_t pstart, uint64_t code, uint32_t first,
		     struct py_name *n)
{
	int i, err = -EAGAIN;

	for (i = 0; i < 5000 && err == -EAGAIN; i++) {
		err = pyrt__name(rt, pid, pstart, code, first, 0, n);
		if (err == -EAGAIN)
			usleep(1000);
	}
	return err;
}

/* The runtime state the adapter wraps: reads on a pool, answers cached, misses by reason. */
static void check_pyrt(const struct py_fixture *fx, uint64_t pstart, const struct py_layout *l,
		       uint64_t bias, const struct oracle_code *oc)
{
	struct offload *pool = offload__new(NULL);
	struct pyrt_opts o = { .pool = pool };
	struct pyrt *rt = pool ? pyrt__new(&o) : NULL;
	struct py_name n;

	if (!ASSERT_OK_PTR(rt, "pyrt"))
		goto out;
	ASSERT_OK(pyrt__name(rt, fx->pid, pstart, oc->id, oc->first, 0, &n), "no interpreter known");
	ASSERT_EQ((int)pyrt__miss(n.err), (int)PYRT_MISS_VERSION, "no interpreter: not supported");
	ASSERT_OK(pyrt__set_interp(rt, fx->pid, pstart, l, bias), "set");
	if (ASSERT_OK(name_wait(rt, fx->pid, pstart, oc->id, oc->first, &n), "named")) {
		ASSERT_STREQ(n.func, oc->qual, "through the pool");
		ASSERT_EQ(n.firstlineno, (int32_t)oc->first, "first line");
	}
	ASSERT_OK(pyrt__name(rt, fx->pid, pstart, oc->id, oc->first, 0, &n), "cached: at once");
	if (ASSERT_OK(name_wait(rt, fx->pid, pstart, oc->id, oc->first + 1, &n), "reused address"))
		ASSERT_EQ((int)pyrt__miss(n.err), (int)PYRT_MISS_INVALID, "another firstlineno: invalid");
	ASSERT_OK(pyrt__set_interp(rt, fx->pid, pstart + 1000000000ull, l, bias), "set another");
	if (ASSERT_OK(name_wait(rt, fx->pid, pstart + 1000000000ull, oc->id, oc->first, &n), "x"))
		ASSERT_EQ((int)pyrt__miss(n.err), (int)PYRT_MISS_GONE, "another pstart: gone");
	pyrt__proc_gone(rt, fx->pid, pstart);
	ASSERT_OK(pyrt__name(rt, fx->pid, pstart, oc->id, oc->first, 0, &n), "gone");
	ASSERT_EQ((int)pyrt__miss(n.err), (int)PYRT_MISS_VERSION, "forgotten with its process");
out:
	pyrt__free(rt);
	offload__free(pool);
}

/* Name every code object the child printed; 1 when done, 0 when a check failed first. */
static int check_child(struct py_fixture *fx, const char *python, const char *lib)
{
	struct py_layout l, table;
	struct pycache *cache;
	struct oracle_code oc;
	struct pyproc pp;
	enum py_miss why;
	uint64_t bias, start, str_id, none_id, ident;
	char path[4096], *line, *save;
	int codes = 0, insns = 0;
	size_t walked = 0;

	if (!ASSERT_OK(pyproc__find_interp(fx->pid, &l, &bias, path, sizeof(path), &why), python))
		return 0;
	ASSERT_STREQ(path, lib, "the interpreter's file");
	ASSERT_OK(pyelf__table(l.version, &table), "table");
	ASSERT_EQ(l.co_code_adaptive, table.co_code_adaptive, "layout is the table's");
	if (!ASSERT_OK(pyproc__start_ns(fx->pid, &start), "start") ||
	    !ASSERT_EQ(pyproc__open(&pp, fx->pid, start + 1000000000ull), -ESRCH, "another pstart") ||
	    !ASSERT_OK(pyproc__open(&pp, fx->pid, start), "open"))
		return 0;
	cache = pycache__new(0);
	for (line = strtok_r(fx->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct py_code pc;

		if (!strncmp(line, "STACK ", 6)) {
			walked = check_walk(&pp, &l, bias, line + 6, python);
			continue;
		}
		if (sscanf(line, "OTHER %" SCNu64 " %" SCNu64 " %" SCNu64, &str_id, &none_id,
			   &ident) == 3) {
			uint64_t ts, tid = 0;

			/* The thread's pthread_self(), what the BPF walk matches thread states by. */
			if (ASSERT_OK(pywalk__thread_state(pyproc__read, &pp, &l, bias, fx->pid, &ts),
				      "thread state") &&
			    ASSERT_OK(pyproc__read(&pp, ts + l.ts_thread_id, &tid, 8), "thread_id"))
				ASSERT_EQ(tid, ident, "thread_id is threading.get_ident()");
			ASSERT_EQ(pycode__read(pyproc__read, &pp, &l, bias, str_id, 1, &pc), -EINVAL,
				  "a str is no code object");
			ASSERT_EQ(pycode__read(pyproc__read, &pp, &l, bias, none_id, 1, &pc), -EINVAL,
				  "None is no code object");
			continue;
		}
		if (!ASSERT_TRUE(parse_code(line, &oc), line))
			break;
		insns += check_code(&pp, &l, bias, &oc, python, cache);
		if (!codes++)
			check_pyrt(fx, start, &l, bias, &oc);
	}
	ASSERT_EQ(codes, 7, "code objects named");
	printf("     note: %s (%#x in %s, bias %#" PRIx64 "): %d code objects, %d instructions'"
	       " lines, %zu frames walked\n", python, l.version, path, bias, codes, insns, walked);
	ASSERT_EQ(walked, (size_t)5, "the main thread walked");
	pycache__free(cache);
	pyproc__close(&pp);
	return 1;
}

static void test_live_names(void)
{
	char dir[] = "/tmp/bpfsym-pycode.XXXXXX", script[256], python[512], lib[512];
	int ran = 0;
	size_t i;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") ||
	    !ASSERT_OK(py_fixture_write(dir, script, sizeof(script)), "script"))
		return;
	for (i = 0; i < ARRAY_SIZE(py_fixture_pythons); i++) {
		struct py_fixture fx;
		char real[PATH_MAX];

		if (!py_fixture_glob(py_fixture_pythons[i], python, sizeof(python)) ||
		    !py_fixture_glob(py_fixture_libs[i], lib, sizeof(lib)) || !realpath(lib, real))
			continue;	/* not installed */
		if (!ASSERT_OK(py_fixture_start(&fx, python, script), python)) {
			printf("     output: %s\n", fx.text ? fx.text : "");
			py_fixture_stop(&fx);
			continue;
		}
		ran += check_child(&fx, python, real);
		py_fixture_stop(&fx);
	}
	unlink(script);
	rmdir(dir);
	if (!ran && !test__failed_now)
		test__skip("no CPython 3.11-3.13 installed");
}

/* A process that exited is gone for the reader: never another's memory. */
static void test_live_gone(void)
{
	char dir[] = "/tmp/bpfsym-pycode.XXXXXX", script[256], python[512];
	struct py_fixture fx;
	struct pyproc pp;
	uint64_t start, w;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(py_fixture_pythons); i++)
		if (py_fixture_glob(py_fixture_pythons[i], python, sizeof(python)))
			break;
	if (i == ARRAY_SIZE(py_fixture_pythons)) {
		test__skip("no CPython 3.11-3.13 installed");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") ||
	    !ASSERT_OK(py_fixture_write(dir, script, sizeof(script)), "script"))
		return;
	if (ASSERT_OK(py_fixture_start(&fx, python, script), python) &&
	    ASSERT_OK(pyproc__start_ns(fx.pid, &start), "start") &&
	    ASSERT_OK(pyproc__open(&pp, fx.pid, start), "open")) {
		pid_t pid = fx.pid;

		ASSERT_OK(pyproc__read(&pp, 0x1000, &w, 0), "empty read");
		py_fixture_stop(&fx);
		ASSERT_EQ(pyproc__read(&pp, (uint64_t)(uintptr_t)&w, &w, sizeof(w)), -ESRCH,
			  "read after exit");
		pyproc__close(&pp);
		ASSERT_EQ(pyproc__open(&pp, (uint32_t)pid, start), -ESRCH, "open after exit");
	} else {
		py_fixture_stop(&fx);
	}
	unlink(script);
	rmdir(dir);
}

/*
 * The runtime through the registry, as a recording drives it: the
 * process's mappings (from its /proc/PID/maps, as ingest's model has
 * them) to the mapping-time call, which finds the interpreter (no pool:
 * here), then the child's first code object named.
 */
static void check_adapter(const struct py_fixture *fx)
{
	struct runtimes *rs = runtimes__new();
	struct proc_table *pt = proc_table__new(0);
	struct oracle_code oc;
	struct rt_name nm;
	struct rt_frame f;
	struct proc *p = NULL;
	uint64_t start;
	char maps[64], *text = strdup(fx->text), *line, *save;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)fx->pid);
	if (!ASSERT_OK_PTR(rs, "registry") || !ASSERT_OK_PTR(pt, "model") || !ASSERT_OK_PTR(text, "strdup") ||
	    !ASSERT_OK(python__register(rs, &(struct python_opts){ 0 }), "register") ||
	    !ASSERT_OK(pyproc__start_ns(fx->pid, &start), "start") ||
	    !ASSERT_OK_PTR(p = proc_table__add(pt, (uint32_t)fx->pid, start), "proc") ||
	    !ASSERT_OK(proc__load_maps(p, maps) < 0, "maps"))
		goto out;
	for (size_t i = 0; i < proc__nr_maps(p); i++)
		runtimes__mapped(rs, p, proc__map_at(p, i));
	runtimes__poll(rs, 0);
	for (line = strtok_r(text, "\n", &save); line && !parse_code(line, &oc);)
		line = strtok_r(NULL, "\n", &save);
	if (!ASSERT_OK_PTR(line, "a CODE line"))
		goto out;
	f = (struct rt_frame){ .pid = (uint32_t)fx->pid, .pstart = start,
			       .slot0 = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, oc.id),
			       .slot1 = bpfsym_fk_py_slot1((uint32_t)oc.first, PY_INDEX_BEFORE) };
	ASSERT_OK(runtimes__name(rs, BPFSYM_FK_PYTHON, &f, NULL, &nm), "named");
	ASSERT_STREQ(nm.func, oc.qual, "through the registry");
	ASSERT_STREQ(nm.file, oc.file, "file");
	ASSERT_EQ(nm.first_line, oc.first, "first line");
	ASSERT_EQ(nm.line, oc.first, "before the first instruction: the first line");
	f.slot1 += 1ull << 32;
	ASSERT_OK(runtimes__name(rs, BPFSYM_FK_PYTHON, &f, NULL, &nm), "reused address");
	ASSERT_EQ(nm.reason, (uint32_t)RT_MISS_INVALID, "another firstlineno");
	runtimes__proc_gone(rs, (uint32_t)fx->pid, start);
	ASSERT_OK(runtimes__name(rs, BPFSYM_FK_PYTHON, &f, NULL, &nm), "gone");
	ASSERT_EQ(nm.reason, (uint32_t)RT_MISS_VERSION, "its interpreter forgotten");
out:
	free(text);
	runtimes__free(rs);
	proc_table__free(pt);
}

/* runtime.h's Python runtime (python.c), found at mapping time and naming. */
static void test_adapter(void)
{
	char dir[] = "/tmp/bpfsym-pycode.XXXXXX", script[256], python[512];
	struct py_fixture fx;

	if (!py_fixture_glob(py_fixture_pythons[0], python, sizeof(python)) &&
	    !py_fixture_glob(py_fixture_pythons[3], python, sizeof(python))) {
		test__skip("no CPython 3.11 or 3.13 installed");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") ||
	    !ASSERT_OK(py_fixture_write(dir, script, sizeof(script)), "script"))
		return;
	if (ASSERT_OK(py_fixture_start(&fx, python, script), python))
		check_adapter(&fx);
	py_fixture_stop(&fx);
	unlink(script);
	rmdir(dir);
}

int main(void)
{
	RUN_TEST(test_linetable_forms);
	RUN_TEST(test_linetable_malformed);
	RUN_TEST(test_str_forms);
	RUN_TEST(test_cache_keys);
	RUN_TEST(test_live_names);
	RUN_TEST(test_live_gone);
	RUN_TEST(test_adapter);
	return TEST_EXIT();
}
