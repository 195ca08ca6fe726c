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

#include "ingest_fixture.h"

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

/*
 * A SAMPLE record cut inside its fixed part (fuzz_ingest found it): its
 * frame counts lie past the record, so it is malformed before they are
 * read.  The record is in a buffer of exactly its length, as the ring
 * buffer hands one over, so ASan sees a read past it.
 */
static void test_short_sample(void)
{
	const size_t cuts[] = { sizeof(struct bpfsym_ev_hdr), BPFSYM_SAMPLE_HDR_SIZE - 8,
				BPFSYM_SAMPLE_HDR_SIZE - 1 };
	const uint64_t ips[] = { K_ONE };
	struct bpfsym_sample s;
	uint8_t *rec;
	struct rec r;
	size_t i;

	if (!rec_open(&r, "short_sample", false))
		goto out;
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		sample(&s, FAKE_PID + 9, START_NS, ips, 0, 0);
		s.hdr.size = (uint16_t)cuts[i];
		rec = malloc(cuts[i]);
		if (!ASSERT_OK_PTR(rec, "malloc"))
			goto out;
		memcpy(rec, &s, cuts[i]);
		ASSERT_OK(feed(&r, rec, cuts[i]), "a sample cut inside its header");
		free(rec);
	}
	ASSERT_EQ(ingest__stats(r.in)->bad, (uint64_t)ARRAY_SIZE(cuts), "each counted as malformed");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)0, "none written");
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

int main(void)
{
	RUN_TEST(test_new_refuses);
	setup_or_report();
	RUN_TEST(test_fork_exec_map_samples);
	RUN_TEST(test_map_after_exit);
	RUN_TEST(test_unknown_pids);
	RUN_TEST(test_module_identity_change);
	RUN_TEST(test_many_modules);
	RUN_TEST(test_malformed);
	RUN_TEST(test_short_sample);
	RUN_TEST(test_end_reasons);
	RUN_TEST(test_watched_pids);
	RUN_TEST(test_write_error);
	cleanup();
	return TEST_EXIT();
}
