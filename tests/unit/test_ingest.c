// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest: a recording's whole per-record path without root or BPF.  The
 * ring buffer's records (fork, exec, map, exit, samples) are built here
 * for a shared library compiled at test time, fed through ingest into a
 * real report file, and read back with report__open: frame names (from
 * the library's own symbols, as nm lists them, and from a saved kallsyms),
 * modules, counts, and what happens to samples of a process the model
 * does not know, or whose MAP record came after its EXIT.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "bpfsym.h"
#include "ingest/ingest.h"
#include "report/report.h"
#include "base/util.h"

TEST_SUITE("ingest");

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
static bool read_nm(void)
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
static bool read_text_segment(void)
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
static bool setup(void)
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

static bool rec_open(struct rec *r, const char *name, bool kernel_only)
{
	struct symbolizer_opts so = { .kallsyms = ksyms_path, .no_jit = 1 };

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
		.pids = watch_pids, .nr_pids = nr_watch_pids,
	});
	return ASSERT_OK_PTR(r->in, "ingest__new");
}

/* Write the END record with ingest's counts and read the file back. */
static bool rec_finish(struct rec *r)
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

static void rec_close(struct rec *r)
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

static int feed(struct rec *r, const void *rec, size_t len)
{
	return ingest__record(r->in, rec, len);
}

static void task_ev(struct rec *r, uint16_t type, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	struct bpfsym_task_ev t = {
		.hdr = { .type = type, .size = sizeof(t), .ts = ts },
		.pid = pid, .pstart = pid + 1000, .ppid = ppid, .ppstart = ppid + 1000,
	};

	ASSERT_OK(feed(r, &t, sizeof(t)), "a task record");
}

/* The library's text mapped at BASE in @pid, seen in mount namespace @mnt_ns (0: unknown). */
static void map_lib(struct rec *r, uint32_t pid, uint32_t mnt_ns, uint64_t ts)
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
	};

	e.path_len = (uint16_t)snprintf(e.path, sizeof(e.path), "%s", lib_path);
	e.hdr.size = (uint16_t)((BPFSYM_MAP_EV_HDR_SIZE + e.path_len + 1 + 7) & ~7u);
	ASSERT_OK(feed(r, &e, e.hdr.size), "a MAP record");
}

/* A sample of @pid with @nk kernel then @nu user addresses from @ips, built as the BPF side does. */
static size_t sample(struct bpfsym_sample *s, uint32_t pid, uint64_t ts, const uint64_t *ips,
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

static int feed_sample(struct rec *r, uint32_t pid, uint64_t ts, const uint64_t *ips, uint32_t nk,
		       uint32_t nu)
{
	struct bpfsym_sample s;

	return feed(r, &s, sample(&s, pid, ts, ips, nk, nu));
}

/* Frame @i (leaf first) of sample @si of the report read back; NULL (a failure) if none. */
static const struct rpt_frame *frame_of(const struct rec *r, size_t si, uint32_t i)
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

static uint32_t stack_len(const struct rec *r, size_t si)
{
	const struct rpt_sample *s = report__sample(r->rpt, si);
	uint32_t nr = 0;

	if (s)
		report__stack(r->rpt, s->stack, &nr);
	return nr;
}

/* Frame @i of sample @si is named @name + @off, in module @mod_path (NULL: none). */
static bool frame_is(const struct rec *r, size_t si, uint32_t i, const char *name, uint64_t off,
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

static const struct rpt_module *module_of(const struct rec *r, size_t si, uint32_t i)
{
	const struct rpt_frame *f = frame_of(r, si, i);

	return f ? report__module(r->rpt, f->module) : NULL;
}

/*
 * fork, exec, map, then samples with kernel and user frames: the names
 * nm gives, callers looked up at ip - 1 but recorded at ip, one module
 * per file, every field of the sample.
 */
static void test_fork_exec_map_samples(void)
{
	const uint32_t pid = FAKE_PID + 1;
	uint64_t a = BASE + func_value[ALPHA], b = BASE + func_value[BETA], g = BASE + func_value[GAMMA];
	/* kernel leaf, kernel caller at k_two's first byte; user leaf, two callers */
	const uint64_t ips[] = { K_ONE + 0x10, K_TWO, b + 2, a + func_size[ALPHA], g + 1 };
	const struct rpt_module *m;
	const struct rpt_sample *s;
	const struct rpt_frame *f;
	struct rec r;

	if (!rec_open(&r, "basic", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, pid, FAKE_PID, 10);
	task_ev(&r, BPFSYM_EV_EXEC, pid, 0, 20);
	map_lib(&r, pid, our_mnt_ns, 30);
	ASSERT_OK(feed_sample(&r, pid, START_NS + 5000, ips, 2, 3), "sample");
	ASSERT_OK(feed_sample(&r, pid, START_NS - 1, ips + 2, 0, 1), "a sample from before the start");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)2, "samples counted");
	ASSERT_EQ(ingest__stats(r.in)->model_misses, (uint64_t)0, "the records made the process");
	if (!rec_finish(&r))
		goto out;
	if (!ASSERT_EQ(report__nr_samples(r.rpt), (size_t)2, "samples in the report") ||
	    !ASSERT_EQ(stack_len(&r, 0), 5u, "2 kernel + 3 user frames"))
		goto out;
	frame_is(&r, 0, 0, "k_one", 0x10, "[kernel.kallsyms]");
	/* A caller at k_two's first byte returns there from the end of k_one. */
	frame_is(&r, 0, 1, "k_one", 0xff, "[kernel.kallsyms]");
	frame_is(&r, 0, 2, "ing_beta", 2, lib_path);
	frame_is(&r, 0, 3, "ing_alpha", func_size[ALPHA] - 1, lib_path);
	frame_is(&r, 0, 4, "ing_gamma", 0, lib_path);
	f = frame_of(&r, 0, 4);
	if (f) {
		ASSERT_EQ(f->addr, g + 1, "the address sampled is kept");
		ASSERT_EQ(f->kind, (uint32_t)RPT_FRAME_USER, "user frame");
		ASSERT_EQ(f->offset, func_value[GAMMA] - text_vaddr + text_off, "file offset of ip - 1");
	}
	f = frame_of(&r, 0, 1);
	if (f)
		ASSERT_EQ(f->kind, (uint32_t)RPT_FRAME_KERNEL, "kernel frame");
	/* The same address as a leaf is itself, not ip - 1. */
	frame_is(&r, 1, 0, "ing_beta", 2, lib_path);
	m = module_of(&r, 0, 2);
	if (ASSERT_OK_PTR(m, "module")) {
		ASSERT_EQ(m->kind, (uint32_t)RPT_MOD_FILE, "a file");
		ASSERT_EQ(m->ino, (uint64_t)lib_st.st_ino, "its inode");
		ASSERT_EQ(m->build_id_len, (uint32_t)LIB_BUILD_ID_LEN, "its build-id");
		ASSERT_EQ(m->build_id[0], 0x01, "first byte");
		ASSERT_EQ(m->build_id[19], 0x67, "last byte");
	}
	ASSERT_EQ(report__nr_modules(r.rpt), (size_t)2, "one module per file: vmlinux, the library");
	s = report__sample(r.rpt, 0);
	if (ASSERT_OK_PTR(s, "sample 0")) {
		ASSERT_EQ(s->time, (uint64_t)5000, "time from the report's start");
		ASSERT_EQ(s->pid, pid, "pid");
		ASSERT_EQ(s->tid, pid + 1, "tid");
		ASSERT_EQ(s->cpu, 1u, "cpu");
		ASSERT_EQ(s->cgroup, (uint64_t)77, "cgroup");
		ASSERT_STREQ(s->comm, "ingest-test-comm", "a 16-byte comm, whole");
	}
	s = report__sample(r.rpt, 1);
	if (ASSERT_OK_PTR(s, "sample 1"))
		ASSERT_EQ(s->time, (uint64_t)0, "a sample from before the start is at 0");
	ASSERT_EQ(report__header(r.rpt)->samples, (uint64_t)2, "END: samples");
	ASSERT_EQ(report__header(r.rpt)->nr_procs, (uint64_t)1, "END: processes sampled");
	ASSERT_EQ(report__header(r.rpt)->bad_records, (uint64_t)0, "END: nothing skipped");
out:
	rec_close(&r);
}

/*
 * A process's MAP record read after its EXIT (it lived 25 ms): it stays
 * in the model for the exit grace, and its file is opened by path in its
 * mount namespace.  After the grace it is gone: a late sample is a model
 * miss, read from /proc once (there is no such pid), its frames unnamed.
 */
static void test_map_after_exit(void)
{
	const uint32_t pid = FAKE_PID + 2;
	const uint64_t ips[] = { K_ONE, BASE + func_value[GAMMA] + 3 };
	const uint64_t t_exit = START_NS + 1000;
	struct rec r;

	if (!rec_open(&r, "after_exit", false))
		goto out;
	task_ev(&r, BPFSYM_EV_EXIT, pid, 0, t_exit);
	map_lib(&r, pid, our_mnt_ns, t_exit + 1);
	ASSERT_OK(feed_sample(&r, pid, t_exit + 2, ips, 1, 1), "a sample within the grace");
	ASSERT_OK(feed_sample(&r, pid, t_exit + MAPEVENTS_EXIT_GRACE_NS + 10, ips, 1, 1), "after it");
	ASSERT_OK(feed_sample(&r, pid, t_exit + MAPEVENTS_EXIT_GRACE_NS + 20, ips, 1, 1), "again");
	ASSERT_EQ(ingest__stats(r.in)->model_misses, (uint64_t)1, "one miss: /proc is read once");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)3, "every sample written");
	if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)3, "samples"))
		goto out;
	frame_is(&r, 0, 0, "k_one", 0, "[kernel.kallsyms]");
	frame_is(&r, 0, 1, "ing_gamma", 3, lib_path);
	frame_is(&r, 1, 0, "k_one", 0, "[kernel.kallsyms]");
	frame_is(&r, 1, 1, NULL, 0, NULL);
	if (frame_of(&r, 1, 1))
		ASSERT_EQ(frame_of(&r, 1, 1)->reason, (uint32_t)RPT_NO_MAPPING, "no mapping known");
	frame_is(&r, 2, 1, NULL, 0, NULL);
	ASSERT_EQ(report__header(r.rpt)->nr_procs, (uint64_t)2, "the process, and the one /proc made");
out:
	rec_close(&r);
}

/*
 * Samples of processes no record told of.  A pid that does not exist:
 * kernel frames named, user frames not, the sample still written.  This
 * test's own pid: its mappings are read from /proc (once), as the
 * recorder does for a process whose records were lost, unless only kernel
 * frames are recorded.
 */
static void test_unknown_pids(void)
{
	const uint32_t self = (uint32_t)getpid();
	struct link_map *lm = NULL;
	uint64_t ips[3] = { K_TWO + 4 };
	void *lib;
	struct rec r;
	int ko;

	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(lib, "dlopen the library") ||
	    !ASSERT_OK(dlinfo(lib, RTLD_DI_LINKMAP, &lm), "its load address"))
		goto out_lib;
	ips[1] = lm->l_addr + func_value[BETA] + 1;
	ips[2] = lm->l_addr + func_value[GAMMA] + 8;
	for (ko = 0; ko <= 1; ko++) {
		if (!rec_open(&r, ko ? "unknown_ko" : "unknown", ko))
			goto out;
		ASSERT_OK(feed_sample(&r, FAKE_PID + 3, START_NS, ips, 1, 2), "no such pid");
		ASSERT_OK(feed_sample(&r, self, START_NS, ips, 1, 2), "this process");
		ASSERT_EQ(ingest__stats(r.in)->model_misses, (uint64_t)2, "two misses");
		if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)2, "both written"))
			goto out;
		frame_is(&r, 0, 0, "k_two", 4, "[kernel.kallsyms]");
		frame_is(&r, 0, 1, NULL, 0, NULL);
		frame_is(&r, 0, 2, NULL, 0, NULL);
		frame_is(&r, 1, 0, "k_two", 4, "[kernel.kallsyms]");
		if (ko) {
			frame_is(&r, 1, 1, NULL, 0, NULL);
		} else {
			frame_is(&r, 1, 1, "ing_beta", 1, lib_path);
			frame_is(&r, 1, 2, "ing_gamma", 7, lib_path);
		}
		ASSERT_EQ(report__header(r.rpt)->nr_procs, (uint64_t)2, "both counted as processes");
		rec_close(&r);
	}
	goto out_lib;
out:
	rec_close(&r);
out_lib:
	if (lib)
		dlclose(lib);
}

/*
 * A module written before its build-id was known (its file could not be
 * opened through the first process) and after (through a second one) is
 * two modules of the report: ids follow the identity, not the module.
 */
static void test_module_identity_change(void)
{
	const uint32_t pa = FAKE_PID + 4, pb = FAKE_PID + 5;
	const uint64_t ips[] = { BASE + func_value[ALPHA] + 1 };
	const struct rpt_module *m0, *m1, *m2;
	const struct rpt_frame *f;
	struct rec r;

	if (!rec_open(&r, "identity", false))
		goto out;
	log_set_level(LOG_ERROR);	/* pa's file cannot be opened: expected */
	map_lib(&r, pa, 0, 10);		/* no mount namespace known: no way to its file */
	ASSERT_OK(feed_sample(&r, pa, START_NS, ips, 0, 1), "sample of pa");
	map_lib(&r, pb, our_mnt_ns, 20);
	ASSERT_OK(feed_sample(&r, pb, START_NS, ips, 0, 1), "sample of pb");
	ASSERT_OK(feed_sample(&r, pa, START_NS, ips, 0, 1), "pa again: the file is open now");
	log_set_level(LOG_WARN);
	if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)3, "samples"))
		goto out;
	f = frame_of(&r, 0, 0);
	if (f)
		ASSERT_NEQ(f->reason, (uint32_t)RPT_OK, "pa's first frame: its file unread");
	frame_is(&r, 1, 0, "ing_alpha", 1, lib_path);
	frame_is(&r, 2, 0, "ing_alpha", 1, lib_path);
	m0 = module_of(&r, 0, 0);
	m1 = module_of(&r, 1, 0);
	m2 = module_of(&r, 2, 0);
	if (!ASSERT_OK_PTR(m0, "m0") || !ASSERT_OK_PTR(m1, "m1") || !ASSERT_OK_PTR(m2, "m2"))
		goto out;
	ASSERT_EQ(m0->build_id_len, 0u, "first written without a build-id");
	ASSERT_EQ(m1->build_id_len, (uint32_t)LIB_BUILD_ID_LEN, "then with it");
	ASSERT_TRUE(m2 == m1, "the same identity, the same module");
	ASSERT_EQ(report__nr_modules(r.rpt), (size_t)2, "two identities of one file");
out:
	rec_close(&r);
}

/* Many modules in one stack: each frame gets its own file's module, again and again. */
static void test_many_modules(void)
{
	enum { NR = 100 };	/* more than the first memo holds, fewer than BPFSYM_MAX_FRAMES */
	const uint32_t pid = FAKE_PID + 6;
	struct bpfsym_map_ev e;
	uint64_t ips[NR];
	const struct rpt_frame *f;
	char want[64];
	struct rec r;
	int i, round;

	if (!rec_open(&r, "many", false))
		goto out;
	log_set_level(LOG_ERROR);	/* none of these files exists */
	for (i = 0; i < NR; i++) {
		memset(&e, 0, sizeof(e));
		e.hdr.type = BPFSYM_EV_MAP;
		e.pid = pid;
		e.pstart = pid + 1000;
		e.start = BASE + (uint64_t)i * 0x10000;
		e.end = e.start + 0x1000;
		e.dev = 1;
		e.ino = 1000 + (uint64_t)i;
		e.prot = PROT_READ | PROT_EXEC;
		e.path_len = (uint16_t)snprintf(e.path, sizeof(e.path), "/nonexistent/lib%d.so", i);
		e.hdr.size = (uint16_t)(BPFSYM_MAP_EV_HDR_SIZE + e.path_len + 1);
		ASSERT_OK(feed(&r, &e, e.hdr.size), "MAP");
		ips[i] = e.start + 0x10 + (uint64_t)i;
	}
	for (round = 0; round < 3; round++)
		ASSERT_OK(feed_sample(&r, pid, START_NS, ips, 0, NR), "sample");
	log_set_level(LOG_WARN);
	if (!rec_finish(&r) || !ASSERT_EQ(report__nr_samples(r.rpt), (size_t)3, "samples"))
		goto out;
	ASSERT_EQ(report__nr_modules(r.rpt), (size_t)NR, "one module per file");
	for (round = 0; round < 3; round++) {
		for (i = 0; i < NR; i++) {
			f = frame_of(&r, (size_t)round, (uint32_t)i);
			snprintf(want, sizeof(want), "/nonexistent/lib%d.so", i);
			if (!f || !frame_is(&r, (size_t)round, (uint32_t)i, NULL, 0, want))
				goto out;
			/* Callers at ip - 1. */
			if (!ASSERT_EQ(f->offset, (uint64_t)(0x10 + i - (i ? 1 : 0)), "offset in the file"))
				goto out;
		}
	}
out:
	rec_close(&r);
}

/*
 * Why each user stack ended travels in the sample's flags to the END
 * record's counts; a reason no BPF side sends is not counted anywhere.
 */
static void test_end_reasons(void)
{
	const uint64_t ips[] = { K_ONE, K_TWO };
	static const uint32_t why[] = { BPFSYM_UEND_ROOT, BPFSYM_UEND_ROOT, BPFSYM_UEND_NO_TABLE,
					BPFSYM_UEND_READ_FAULT, 0, 15 };
	struct bpfsym_sample s;
	const struct rpt_header *h;
	uint64_t sum = 0;
	size_t i, len;
	struct rec r;

	if (!rec_open(&r, "end_reasons", false))
		goto out;
	for (i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
		len = sample(&s, FAKE_PID + 9, START_NS, ips, 1, 1);
		s.flags |= why[i] << BPFSYM_SF_UEND_SHIFT;
		ASSERT_OK(feed(&r, &s, len), "a sample");
	}
	if (!rec_finish(&r))
		goto out;
	h = report__header(r.rpt);
	ASSERT_EQ(h->uend[BPFSYM_UEND_ROOT], (uint64_t)2, "root");
	ASSERT_EQ(h->uend[BPFSYM_UEND_NO_TABLE], (uint64_t)1, "no table");
	ASSERT_EQ(h->uend[BPFSYM_UEND_READ_FAULT], (uint64_t)1, "read fault");
	for (i = 0; i < RPT_UEND_MAX; i++)
		sum += h->uend[i];
	ASSERT_EQ(sum, (uint64_t)4, "0 and the unknown 15: not counted");
	ASSERT_EQ(h->samples, (uint64_t)6, "every sample written");
out:
	rec_close(&r);
}

/* Malformed records are counted and skipped; nothing is written for them. */
static void test_malformed(void)
{
	const uint64_t ips[] = { K_ONE, K_TWO };
	struct bpfsym_sample s;
	struct bpfsym_ev_hdr h = { .type = BPFSYM_EV_SAMPLE, .size = sizeof(h) };
	size_t len;
	struct rec r;

	if (!rec_open(&r, "malformed", false))
		goto out;
	ASSERT_OK(feed(&r, &h, sizeof(h) - 1), "shorter than a header");
	len = sample(&s, FAKE_PID + 7, START_NS, ips, 2, 0);
	ASSERT_OK(feed(&r, &s, len - 1), "size past the record");
	s.hdr.size = (uint16_t)(len - 8);
	ASSERT_OK(feed(&r, &s, len - 8), "addresses past the record");
	len = sample(&s, FAKE_PID + 7, START_NS, ips, 2, 0);
	s.nr_kernel = BPFSYM_MAX_FRAMES + 1;
	ASSERT_OK(feed(&r, &s, len), "too many kernel frames");
	len = sample(&s, FAKE_PID + 7, START_NS, ips, 2, 0);
	s.hdr.type = 77;
	ASSERT_OK(feed(&r, &s, len), "a type nobody knows");
	ASSERT_EQ(ingest__stats(r.in)->bad, (uint64_t)4, "counted by ingest");
	ASSERT_EQ(mapevents__stats(r.mev)->bad, (uint64_t)1, "the unknown type, by mapevents");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)0, "no sample");
	ASSERT_OK(feed_sample(&r, FAKE_PID + 7, START_NS, ips, 2, 0), "a good one");
	if (!rec_finish(&r))
		goto out;
	ASSERT_EQ(report__nr_samples(r.rpt), (size_t)1, "only the good sample written");
	ASSERT_EQ(report__header(r.rpt)->bad_records, (uint64_t)5, "END: both counts");
	ASSERT_EQ(report__header(r.rpt)->samples, (uint64_t)1, "END: samples");
out:
	rec_close(&r);
}

/* -p targets: an EXIT record, or the loader's word, ends each; a pid given twice is one. */
static void test_watched_pids(void)
{
	static const uint32_t pids[] = { FAKE_PID + 10, FAKE_PID + 11, FAKE_PID + 10 };
	struct bpfsym_task_ev t = { .hdr = { .type = BPFSYM_EV_EXIT, .size = sizeof(t) - 8 } };
	struct rec r;

	watch_pids = pids;
	nr_watch_pids = 3;
	if (!rec_open(&r, "pids", false))
		goto out;
	ASSERT_EQ(ingest__stats(r.in)->pids_alive, (size_t)3, "all alive");
	t.pid = FAKE_PID + 11;
	ASSERT_OK(feed(&r, &t, sizeof(t) - 8), "a cut EXIT");
	ASSERT_EQ(ingest__stats(r.in)->pids_alive, (size_t)3, "a cut EXIT is no exit");
	task_ev(&r, BPFSYM_EV_EXIT, FAKE_PID + 12, 0, 1);
	ASSERT_EQ(ingest__stats(r.in)->pids_alive, (size_t)3, "another process's exit");
	task_ev(&r, BPFSYM_EV_EXIT, FAKE_PID + 10, 0, 2);
	ASSERT_EQ(ingest__stats(r.in)->pids_alive, (size_t)1, "both copies of the pid");
	ASSERT_TRUE(ingest__pid_is_gone(r.in, FAKE_PID + 10), "gone");
	ASSERT_FALSE(ingest__pid_is_gone(r.in, FAKE_PID + 11), "alive");
	ASSERT_FALSE(ingest__pid_is_gone(r.in, FAKE_PID + 12), "not watched");
	ingest__pid_gone(r.in, FAKE_PID + 11);
	ingest__pid_gone(r.in, FAKE_PID + 11);
	ingest__pid_gone(r.in, FAKE_PID + 10);
	ASSERT_EQ(ingest__stats(r.in)->pids_alive, (size_t)0, "the loader's word, once each");
out:
	watch_pids = NULL;
	nr_watch_pids = 0;
	rec_close(&r);
}

/* A write error is returned (it stops the recording), and the sample is not counted. */
static void test_write_error(void)
{
	const uint64_t ips[] = { K_ONE };
	struct rlimit old, lim;
	struct stat st;
	struct rec r;
	int err;

	if (!rec_open(&r, "write_error", false))
		goto out;
	ASSERT_OK(feed_sample(&r, FAKE_PID + 8, START_NS, ips, 1, 0), "a sample");
	if (!ASSERT_OK(getrlimit(RLIMIT_FSIZE, &old), "getrlimit") ||
	    !ASSERT_OK(stat(r.path, &st), "stat"))
		goto out;
	/* The file may not grow: the next block fails with EFBIG (SIGXFSZ ignored). */
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size;
	if (!ASSERT_OK(setrlimit(RLIMIT_FSIZE, &lim), "setrlimit"))
		goto out;
	err = report_writer__flush(r.w);
	/* Back before anything is printed: stdout may be a file too. */
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	ASSERT_EQ(err, -EFBIG, "the block cannot be written");
	ASSERT_EQ(feed_sample(&r, FAKE_PID + 8, START_NS, ips, 1, 0), -EFBIG, "ingest says so");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)1, "the failed sample is not counted");
out:
	rec_close(&r);
}

static void test_new_refuses(void)
{
	struct ingest_opts o = {};

	errno = 0;
	ASSERT_NULL(ingest__new(&o), "nothing to work with");
	ASSERT_EQ(errno, EINVAL, "errno");
	ASSERT_NULL(ingest__new(NULL), "no options");
	ingest__free(NULL);
}

static void cleanup(void)
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

int main(void)
{
	char log[sizeof(dir) + 16], why[512];

	RUN_TEST(test_new_refuses);
	if (!setup()) {
		snprintf(log, sizeof(log), "%s/build.log", dir);
		if (!test__have("cc") || !test__have("nm"))
			TEST_SETUP_SKIP("'cc' or 'nm' not found: no fixture");
		else
			TEST_SETUP_FAIL("cannot build or read the fixture in %s: %s", dir,
					test__build_error(log, why, sizeof(why)));
	}
	RUN_TEST(test_fork_exec_map_samples);
	RUN_TEST(test_map_after_exit);
	RUN_TEST(test_unknown_pids);
	RUN_TEST(test_module_identity_change);
	RUN_TEST(test_many_modules);
	RUN_TEST(test_malformed);
	RUN_TEST(test_end_reasons);
	RUN_TEST(test_watched_pids);
	RUN_TEST(test_write_error);
	cleanup();
	return TEST_EXIT();
}
