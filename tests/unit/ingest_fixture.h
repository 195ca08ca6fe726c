/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One recording without root or BPF, for the ingest tests (test_ingest.c:
 * the per-record path; test_ingest_writers.c: the file writer swapped and
 * taps): a shared library compiled at test time and a saved kallsyms,
 * ring-buffer records built as the BPF side builds them, fed through
 * ingest into a real report file and read back with report__open.
 * Everything static; functions marked unused, each test takes what it
 * needs.  Include after test.h, once per test program.
 */
#ifndef BPFSYM_INGEST_FIXTURE_H
#define BPFSYM_INGEST_FIXTURE_H

#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpfsym.h"
#include "ingest/ingest.h"
#include "report/report.h"
#include "base/util.h"
#include "test.h"

#define IFX static __attribute__((unused))

/* Functions of known names, big enough for the offsets probed. */
static const char lib_src[] =
	"#define F __attribute__((noinline, used))\n"
	"F int ing_alpha(int x) { volatile int v = x; v += 3; v *= 7; v ^= 5; return v; }\n"
	"F int ing_beta(int x) { volatile int v = x; v -= 5; v *= 11; return v + ing_alpha(x); }\n"
	"F int ing_gamma(int x) { volatile int v = x; v |= 9; v *= 13; return v + ing_beta(x); }\n";

/* The build-id the linker is told to write, so the test knows it without reading it. */
#define LIB_BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define LIB_BUILD_ID_LEN 20

enum { ALPHA, BETA, GAMMA, NR_FUNCS };
static const char *const func_names[NR_FUNCS] = { "ing_alpha", "ing_beta", "ing_gamma" };

/* A saved kallsyms: functions 0x100 apart. */
#define K_TEXT		0xffffffff81000000ull
#define K_ONE		(K_TEXT + 0x100)
#define K_TWO		(K_TEXT + 0x200)
static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T k_one\n"
	"ffffffff81000200 T k_two\n"
	"ffffffff81000300 T k_three\n";

/* Processes no kernel can have: pids are below PID_MAX_LIMIT (4 Mi). */
#define FAKE_PID	(4u << 20)
#define BASE		0x7f0000000000ull	/* where the records say the library is mapped */
#define START_NS	1000000000ull		/* the report's time base */

static char dir[PATH_MAX], lib_path[PATH_MAX + 16], ksyms_path[PATH_MAX + 16];
static bool fixture_ok;

/* The library as nm and its program headers describe it. */
static uint64_t func_value[NR_FUNCS], func_size[NR_FUNCS];
static uint64_t text_vaddr, text_end, text_off;	/* the executable PT_LOAD, page-aligned */
static struct stat lib_st;
static uint32_t our_mnt_ns;

/* Each function's value and size, from nm: names the test expects, not ingest's reading. */
IFX bool read_nm(void)
{
	char cmd[PATH_MAX + 64], line[256], name[128];
	unsigned long long v, sz;
	int found = 0, i;
	char type;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only -S '%s'", lib_path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %c %127s", &v, &sz, &type, name) != 4)
			continue;
		for (i = 0; i < NR_FUNCS; i++) {
			if (!strcmp(name, func_names[i]) && (type == 'T' || type == 't')) {
				func_value[i] = v;
				func_size[i] = sz;
				found |= 1 << i;
			}
		}
	}
	return pclose(p) == 0 && found == (1 << NR_FUNCS) - 1;
}

/* The executable PT_LOAD, as the kernel would map it: page-aligned. */
IFX bool read_text_segment(void)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool ok = false;
	int fd, i;

	fd = open(lib_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		text_vaddr = ph.p_vaddr & ~(page - 1);
		text_off = ph.p_offset & ~(page - 1);
		text_end = (ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
		ok = true;
		break;
	}
out:
	close(fd);
	return ok;
}

/* Build the library and the kallsyms file once; false (the caller SKIPs) if they cannot be. */
IFX bool setup(void)
{
	static int state;	/* 0: not tried, 1: ready, -1: failed */
	const char *tmp = getenv("BPFSYM_TEST_TMP");
	char src[PATH_MAX + 16], cmd[4 * PATH_MAX + 128];
	struct stat ns;

	if (state)
		return state > 0;
	state = -1;
	snprintf(dir, sizeof(dir), "%s/test_ingest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return false;
	snprintf(src, sizeof(src), "%s/ing.c", dir);
	snprintf(lib_path, sizeof(lib_path), "%s/libing.so", dir);
	snprintf(ksyms_path, sizeof(ksyms_path), "%s/kallsyms", dir);
	if (test__write_file(src, lib_src) || test__write_file(ksyms_path, kallsyms_text))
		return false;
	snprintf(cmd, sizeof(cmd), "cc -O1 -shared -fPIC -Wl,--build-id=0x%s -o '%s' '%s' >'%s/build.log' 2>&1",
		 LIB_BUILD_ID, lib_path, src, dir);
	if (system(cmd) || !read_nm() || !read_text_segment() || stat(lib_path, &lib_st) ||
	    stat("/proc/self/ns/mnt", &ns))
		return false;
	our_mnt_ns = (uint32_t)ns.st_ino;
	state = fixture_ok = 1;
	return true;
}

/*
 * setup(), or else the reason every later RUN_TEST of the program is
 * skipped (no cc or nm) or failed (the fixture would not build).
 */
IFX void setup_or_report(void)
{
	char log[sizeof(dir) + 16], why[512];

	if (setup())
		return;
	snprintf(log, sizeof(log), "%s/build.log", dir);
	if (!test__have("cc") || !test__have("nm"))
		TEST_SETUP_SKIP("'cc' or 'nm' not found: no fixture");
	else
		TEST_SETUP_FAIL("cannot build or read the fixture in %s: %s", dir,
				test__build_error(log, why, sizeof(why)));
}

/* One recording: the pieces record.c puts together, and ingest over them. */
struct rec {
	char path[PATH_MAX + 32];
	struct proc_table *pt;
	struct symbolizer *sym;
	struct mapevents *mev;
	struct report_writer *w;
	struct ingest *in;
	struct rpt_header hdr;
	struct report *rpt;		/* read back by rec_finish() */
};

static const uint32_t *watch_pids;	/* given to the next rec_open() */
static size_t nr_watch_pids;
static struct cgpaths *watch_cgroups;	/* given to the next rec_open() */
static struct unwinder *watch_unw;	/* given to the next rec_open() */
static struct offload *watch_offload;	/* given to the next rec_open()'s symbolizer */
static size_t watch_max_modules;	/* ditto (0: its default) */
static uint64_t watch_stall_ns, watch_max_ns;	/* given to the next rec_open(): deferral */
static struct runtimes *watch_runtimes;	/* given to the next rec_open(): interpreter frames */

IFX bool rec_open(struct rec *r, const char *name, bool kernel_only)
{
	struct symbolizer_opts so = { .kallsyms = ksyms_path, .no_jit = 1, .offload = watch_offload,
				      .max_modules = watch_max_modules };

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s/%s.data", dir, name);
	snprintf(r->hdr.event, sizeof(r->hdr.event), "cpu-clock");
	snprintf(r->hdr.target, sizeof(r->hdr.target), "test");
	r->hdr.start_mono_ns = START_NS;
	r->pt = proc_table__new(0);
	so.procs = r->pt;
	r->sym = r->pt ? symbolizer__new(&so) : NULL;
	r->mev = r->sym ? mapevents__new(r->pt, r->sym) : NULL;
	r->w = r->mev ? report_writer__open(r->path, &r->hdr) : NULL;
	if (!ASSERT_OK_PTR(r->w, "the model, symbolizer, replayer and writer"))
		return false;
	r->in = ingest__new(&(struct ingest_opts){
		.procs = r->pt, .mev = r->mev, .sym = r->sym, .w = r->w,
		.start_mono_ns = START_NS, .kernel_only = kernel_only,
		.pids = watch_pids, .nr_pids = nr_watch_pids, .cgroups = watch_cgroups,
		.unw = watch_unw, .defer_stall_ns = watch_stall_ns, .defer_max_ns = watch_max_ns,
		.runtimes = watch_runtimes,
	});
	return ASSERT_OK_PTR(r->in, "ingest__new");
}

/* Write the END record with ingest's counts and read the file back. */
IFX bool rec_finish(struct rec *r)
{
	char err[256] = "";

	ingest__fill_header(r->in, &r->hdr);
	if (!ASSERT_OK(report_writer__close(r->w, &r->hdr), "close the report"))
		return r->w = NULL, false;
	r->w = NULL;
	r->rpt = report__open(r->path, err, sizeof(err));
	if (!r->rpt)
		printf("     report__open: %s\n", err);
	return ASSERT_OK_PTR(r->rpt, "read the report back");
}

IFX void rec_close(struct rec *r)
{
	report__free(r->rpt);
	if (r->w)
		report_writer__abort(r->w);
	ingest__free(r->in);
	mapevents__free(r->mev);
	symbolizer__free(r->sym);
	proc_table__free(r->pt);
	unlink(r->path);
}

IFX int feed(struct rec *r, const void *rec, size_t len)
{
	return ingest__record(r->in, rec, len);
}

IFX void task_ev(struct rec *r, uint16_t type, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	struct bpfsym_task_ev t = {
		.hdr = { .type = type, .size = sizeof(t), .ts = ts },
		.pid = pid, .pstart = pid + 1000, .ppid = ppid, .ppstart = ppid + 1000,
	};

	ASSERT_OK(feed(r, &t, sizeof(t)), "a task record");
}

/*
 * The library's text mapped at BASE in @pid, seen in mount namespace
 * @mnt_ns (0: unknown), with BPFSYM_MF_* @flags.
 */
IFX void map_lib_flags(struct rec *r, uint32_t pid, uint32_t mnt_ns, uint64_t ts, uint32_t flags)
{
	struct bpfsym_map_ev e = {
		.hdr = { .type = BPFSYM_EV_MAP, .ts = ts },
		.pid = pid, .tid = pid, .pstart = pid + 1000,
		.start = BASE + text_vaddr, .end = BASE + text_end, .pgoff = text_off,
		/* The kernel's dev_t, not userspace's. */
		.dev = ((uint64_t)major(lib_st.st_dev) << 20) | minor(lib_st.st_dev),
		.ino = lib_st.st_ino,
		.mtime_sec = lib_st.st_mtim.tv_sec, .mtime_nsec = (uint32_t)lib_st.st_mtim.tv_nsec,
		.prot = PROT_READ | PROT_EXEC,
		.cause = BPFSYM_MAP_EXEC,
		.mnt_ns = mnt_ns,
		.flags = flags,
	};

	e.path_len = (uint16_t)snprintf(e.path, sizeof(e.path), "%s", lib_path);
	e.hdr.size = (uint16_t)((BPFSYM_MAP_EV_HDR_SIZE + e.path_len + 1 + 7) & ~7u);
	ASSERT_OK(feed(r, &e, e.hdr.size), "a MAP record");
}

/* The library's text mapped at BASE in @pid, seen in mount namespace @mnt_ns (0: unknown). */
IFX void map_lib(struct rec *r, uint32_t pid, uint32_t mnt_ns, uint64_t ts)
{
	map_lib_flags(r, pid, mnt_ns, ts, 0);
}

/* A sample of @pid with @nk kernel then @nu user addresses from @ips, built as the BPF side does. */
IFX size_t sample(struct bpfsym_sample *s, uint32_t pid, uint64_t ts, const uint64_t *ips,
		     uint32_t nk, uint32_t nu)
{
	memset(s, 0, sizeof(*s));
	s->hdr.type = BPFSYM_EV_SAMPLE;
	s->hdr.cpu = 1;
	s->hdr.ts = ts;
	s->pid = pid;
	s->tid = pid + 1;
	s->pstart = pid + 1000;
	s->cgroup_id = 77;
	memcpy(s->comm, "ingest-test-comm", BPFSYM_COMM_LEN);	/* 16 bytes, no NUL */
	s->nr_kernel = (uint16_t)nk;
	s->nr_user = (uint16_t)nu;
	memcpy(s->ips, ips, (nk + nu) * sizeof(ips[0]));
	s->hdr.size = (uint16_t)(BPFSYM_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(ips[0]));
	return s->hdr.size;
}

IFX int feed_sample(struct rec *r, uint32_t pid, uint64_t ts, const uint64_t *ips, uint32_t nk,
		       uint32_t nu)
{
	struct bpfsym_sample s;

	return feed(r, &s, sample(&s, pid, ts, ips, nk, nu));
}

/* A sample of @pid at @ts: k_one, then ing_alpha <- ing_beta <- ing_gamma in the library. */
IFX int feed_chain(struct rec *r, uint32_t pid, uint64_t ts)
{
	const uint64_t ips[] = {
		K_ONE,
		BASE + func_value[ALPHA] + 4,
		BASE + func_value[BETA] + 5,
		BASE + func_value[GAMMA] + 5,
	};

	return feed_sample(r, pid, ts, ips, 1, 3);
}

/* Frame @i (leaf first) of sample @si of the report read back; NULL (a failure) if none. */
IFX const struct rpt_frame *frame_of(const struct rec *r, size_t si, uint32_t i)
{
	const struct rpt_sample *s = report__sample(r->rpt, si);
	const uint32_t *ids;
	uint32_t nr = 0;

	if (!ASSERT_OK_PTR(s, "sample"))
		return NULL;
	ids = report__stack(r->rpt, s->stack, &nr);
	if (!ASSERT_OK_PTR(ids, "stack") || !ASSERT_TRUE(i < nr, "frame in the stack"))
		return NULL;
	return report__frame(r->rpt, ids[i]);
}

IFX uint32_t stack_len(const struct rec *r, size_t si)
{
	const struct rpt_sample *s = report__sample(r->rpt, si);
	uint32_t nr = 0;

	if (s)
		report__stack(r->rpt, s->stack, &nr);
	return nr;
}

/* Frame @i of sample @si is named @name + @off, in module @mod_path (NULL: none). */
IFX bool frame_is(const struct rec *r, size_t si, uint32_t i, const char *name, uint64_t off,
		     const char *mod_path)
{
	const struct rpt_frame *f = frame_of(r, si, i);
	const struct rpt_module *m;
	char what[96];
	bool ok;

	snprintf(what, sizeof(what), "sample %zu frame %u", si, i);
	if (!ASSERT_OK_PTR(f, what))
		return false;
	if (!name)
		ok = ASSERT_NULL(f->sym, what);
	else
		ok = ASSERT_STREQ(f->sym, name, what) && ASSERT_EQ(f->sym_off, off, what);
	if (!mod_path)
		return ok && ASSERT_EQ(f->module, RPT_NONE, what);
	m = report__module(r->rpt, f->module);
	return ok && ASSERT_OK_PTR(m, what) && ASSERT_STREQ(m->path, mod_path, what);
}

IFX const struct rpt_module *module_of(const struct rec *r, size_t si, uint32_t i)
{
	const struct rpt_frame *f = frame_of(r, si, i);

	return f ? report__module(r->rpt, f->module) : NULL;
}

IFX void cleanup(void)
{
	char cmd[PATH_MAX + 32];

	if (!dir[0])
		return;
	if (test__nr_fail || !fixture_ok) {
		printf("     fixtures kept in %s\n", dir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd))
		printf("     could not remove %s\n", dir);
}

#endif /* BPFSYM_INGEST_FIXTURE_H */
