/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording test_report and test_report_corrupt share: a header, four
 * modules, frames with and without names, stacks (one empty) and samples
 * that exercise every field's encoding (backward times, tid below pid,
 * u32/u64 extremes), written with flushes at chosen places so the tests
 * know where every block ends.
 */
#ifndef BPFSYM_TEST_REPORT_FIXTURE_H
#define BPFSYM_TEST_REPORT_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "report/report.h"
#include "base/util.h"

static char errbuf[512];

static void tmp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("BPFSYM_TEST_TMP");

	snprintf(buf, len, "%s/test_report.%d.%s", dir && *dir ? dir : "/tmp", (int)getpid(), name);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static const struct rpt_header fx_hdr = {
	.hostname = "testhost",
	.release = "6.18.0-test",
	.boot_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
	.event = "cpu-clock",
	.target = "all",
	.text_addr = 0xffffffff81000000ULL,
	.freq = 99,
	.flags = RPT_HF_USER_ONLY,
	.nr_cpus = 4,
	.start_wall_ns = 1714560000123456789ULL,
	.start_mono_ns = 987654321ULL,
	.kfeatures = "task work no, VMA iterator yes -> mappings followed from exec",
};

#define FX_MODS 4
#define FX_FRAMES 8
#define FX_STACKS 6
#define FX_MAX_SAMPLES 4000

static struct rpt_module fx_mods[FX_MODS] = {
	{ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	{ .kind = RPT_MOD_FILE, .path = "/usr/lib/x86_64-linux-gnu/libc.so.6", .build_id_len = 20,
	  .dev = 0x801, .ino = 12345 },
	{ .kind = RPT_MOD_FILE, .path = "/opt/app/bin/app", .build_id_len = RPT_BUILD_ID_MAX,
	  .dev = UINT64_MAX, .ino = UINT64_MAX - 1 },
	{ .kind = RPT_MOD_ANON, .path = "" },
};

static char long_sym[5000];

static struct rpt_frame fx_frames[FX_FRAMES] = {
	{ RPT_FRAME_KERNEL, 0, 0xffffffff81234567ULL, 0xffffffff81234567ULL, "do_syscall_64", 0x17, RPT_OK },
	{ RPT_FRAME_KERNEL, 0, 0xffffffff81abcdefULL, 0xffffffff81abcdefULL, "entry_SYSCALL_64", 0, RPT_OK },
	{ RPT_FRAME_USER, 1, 0x28000, 0x7f0000028010ULL, "__libc_write", 0x10, RPT_OK },
	{ RPT_FRAME_USER, 2, 0x1234, 0x555555555234ULL, "main", 0, RPT_OK },
	{ RPT_FRAME_USER, 2, 0x9999, 0x555555559999ULL, NULL, 0, RPT_OUTSIDE_SYMBOL },
	{ RPT_FRAME_USER, RPT_NONE, 0, 0x1000, NULL, 0, RPT_NO_MAPPING },
	{ RPT_FRAME_USER, 3, 0x40, 0x7fff00000040ULL, NULL, 0, RPT_ANON },
	{ RPT_FRAME_USER, 2, 0x2000, 0x555555556000ULL, long_sym, 3, RPT_OK },
};

static const uint32_t fx_stack_ids[FX_STACKS][4] = { { 0, 1, 2, 3 }, { 3 }, { 4, 3 }, { 5 }, { 0 }, { 6, 7, 3 } };
static const uint32_t fx_stack_nr[FX_STACKS] = { 4, 1, 2, 1, 0, 3 };
static const char *const fx_comms[] = { "app", "worker", "a;b c", "" };

struct fixture {
	struct rpt_sample samples[FX_MAX_SAMPLES];
	size_t nr_samples;
	uint64_t bounds[64];	/* file size after each block */
	size_t bound_samples[64];	/* samples in the file at that size */
	size_t nr_bounds;
	uint64_t size;
	struct rpt_header final;
};

static struct fixture fx;

static __attribute__((unused)) void fx_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(long_sym) - 1; i++)
		long_sym[i] = (char)('a' + i % 26);
	for (i = 0; i < RPT_BUILD_ID_MAX; i++) {
		fx_mods[1].build_id[i] = (uint8_t)(0xa0 + i);
		fx_mods[2].build_id[i] = (uint8_t)(0xff - i);
	}
}

/*
 * Write the fixture: @nr samples, a flush every @per, then close.  Every
 * block boundary is recorded.  Returns false (a test failure) on error.
 */
static __attribute__((unused)) bool fx_write(const char *path, size_t nr, size_t per)
{
	struct report_writer *w;
	uint32_t ids[FX_FRAMES], sids[FX_STACKS], id;
	uint64_t t = 5000;
	struct stat st;
	size_t i;

	memset(&fx, 0, sizeof(fx));
	if (!ASSERT_TRUE(nr <= FX_MAX_SAMPLES && per && nr / per < 64, "fixture size"))
		return false;
	w = report_writer__open(path, &fx_hdr);
	if (!ASSERT_OK_PTR(w, "report_writer__open"))
		return false;
	fx.bounds[0] = report_writer__bytes(w);
	fx.nr_bounds = 1;
	for (i = 0; i < FX_MODS; i++)
		if (!ASSERT_OK(report_writer__module(w, &fx_mods[i], &id), "module") ||
		    !ASSERT_EQ(id, (uint32_t)i, "module id"))
			goto fail;
	for (i = 0; i < FX_FRAMES; i++)
		if (!ASSERT_OK(report_writer__frame(w, &fx_frames[i], &ids[i]), "frame") ||
		    !ASSERT_EQ(ids[i], (uint32_t)i, "frame id"))
			goto fail;
	for (i = 0; i < FX_STACKS; i++)
		if (!ASSERT_OK(report_writer__stack(w, fx_stack_ids[i], fx_stack_nr[i], &sids[i]), "stack") ||
		    !ASSERT_EQ(sids[i], (uint32_t)i, "stack id"))
			goto fail;
	for (i = 0; i < nr; i++) {
		struct rpt_sample *s = &fx.samples[i];

		/* Mostly forward, sometimes a little back: ring-buffer order. */
		t += 1000000 + rng() % 50000;
		s->time = i % 7 == 3 ? t - 2000000 : t;
		s->pid = i % 5 == 4 ? 4000000000u : 100 + (uint32_t)(i % 3) * 100;
		s->tid = i % 4 == 0 ? s->pid : i % 4 == 1 ? s->pid + 7 : i % 4 == 2 ? s->pid - 1 : 0;
		s->cpu = (uint32_t)(i % 4);
		s->cgroup = i % 2 ? 0x1234 : UINT64_MAX;
		s->comm = fx_comms[i % 4];
		s->stack = sids[i % FX_STACKS];
		if (!ASSERT_OK(report_writer__sample(w, s), "sample"))
			goto fail;
		fx.nr_samples++;
		if ((i + 1) % per == 0) {
			if (!ASSERT_OK(report_writer__flush(w), "flush"))
				goto fail;
			fx.bounds[fx.nr_bounds] = report_writer__bytes(w);
			fx.bound_samples[fx.nr_bounds++] = fx.nr_samples;
		}
	}
	fx.final = fx_hdr;
	fx.final.end_wall_ns = fx_hdr.start_wall_ns + 10000000000ULL;
	fx.final.lost_samples = 3;
	fx.final.lost_events = 2;
	fx.final.nr_procs = 7;
	fx.final.idle = 11;
	fx.final.lost_children = 1;
	fx.final.missed_vma_busy = 5;
	fx.final.missed_syscalls = UINT64_MAX;
	fx.final.bad_records = 4;
	if (!ASSERT_OK(report_writer__close(w, &fx.final), "close") || !ASSERT_OK(stat(path, &st), "stat"))
		return false;
	fx.size = (uint64_t)st.st_size;
	return true;
fail:
	report_writer__abort(w);
	return false;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Compare @r with the fixture's first @nr samples; @complete says whether END is expected. */
static __attribute__((unused)) void fx_check(const struct report *r, size_t nr, bool complete)
{
	const struct rpt_header *h = report__header(r);
	uint32_t i, n;

	ASSERT_STREQ(h->hostname, fx_hdr.hostname, "hostname");
	ASSERT_STREQ(h->release, fx_hdr.release, "release");
	ASSERT_STREQ(h->boot_id, fx_hdr.boot_id, "boot_id");
	ASSERT_STREQ(h->event, fx_hdr.event, "event");
	ASSERT_STREQ(h->target, fx_hdr.target, "target");
	ASSERT_EQ(h->text_addr, fx_hdr.text_addr, "text_addr");
	ASSERT_EQ(h->freq, fx_hdr.freq, "freq");
	ASSERT_EQ(h->flags, fx_hdr.flags, "flags");
	ASSERT_EQ(h->nr_cpus, fx_hdr.nr_cpus, "nr_cpus");
	ASSERT_EQ(h->start_wall_ns, fx_hdr.start_wall_ns, "start_wall_ns");
	ASSERT_EQ(h->start_mono_ns, fx_hdr.start_mono_ns, "start_mono_ns");
	ASSERT_STREQ(h->kfeatures, fx_hdr.kfeatures, "kfeatures");
	ASSERT_EQ(h->complete, complete, "complete");
	ASSERT_EQ(h->samples, (uint64_t)nr, "header samples");
	if (complete) {
		ASSERT_EQ(h->end_wall_ns, fx.final.end_wall_ns, "end_wall_ns");
		ASSERT_EQ(h->lost_samples, fx.final.lost_samples, "lost_samples");
		ASSERT_EQ(h->lost_events, fx.final.lost_events, "lost_events");
		ASSERT_EQ(h->nr_procs, fx.final.nr_procs, "nr_procs");
		ASSERT_EQ(h->idle, fx.final.idle, "idle");
		ASSERT_EQ(h->lost_children, fx.final.lost_children, "lost_children");
		ASSERT_EQ(h->missed_vma_busy, fx.final.missed_vma_busy, "missed_vma_busy");
		ASSERT_EQ(h->missed_syscalls, fx.final.missed_syscalls, "missed_syscalls");
		ASSERT_EQ(h->bad_records, fx.final.bad_records, "bad_records");
	}
	if (!ASSERT_EQ(report__nr_modules(r), (size_t)FX_MODS, "nr_modules") ||
	    !ASSERT_EQ(report__nr_frames(r), (size_t)FX_FRAMES, "nr_frames") ||
	    !ASSERT_EQ(report__nr_samples(r), nr, "nr_samples"))
		return;
	for (i = 0; i < FX_MODS; i++) {
		const struct rpt_module *m = report__module(r, i), *e = &fx_mods[i];

		ASSERT_EQ(m->kind, e->kind, "module kind");
		ASSERT_STREQ(m->path, e->path, "module path");
		ASSERT_EQ(m->build_id_len, e->build_id_len, "build_id_len");
		ASSERT_TRUE(!memcmp(m->build_id, e->build_id, e->build_id_len), "build_id");
		ASSERT_EQ(m->dev, e->dev, "dev");
		ASSERT_EQ(m->ino, e->ino, "ino");
	}
	ASSERT_NULL(report__module(r, FX_MODS), "module out of range");
	for (i = 0; i < FX_FRAMES; i++) {
		const struct rpt_frame *f = report__frame(r, i), *e = &fx_frames[i];

		ASSERT_EQ(f->kind, e->kind, "frame kind");
		ASSERT_EQ(f->module, e->module, "frame module");
		ASSERT_EQ(f->offset, e->offset, "frame offset");
		ASSERT_EQ(f->addr, e->addr, "frame addr");
		ASSERT_TRUE(same_str(f->sym, e->sym), "frame sym");
		ASSERT_EQ(f->sym_off, e->sym_off, "frame sym_off");
		ASSERT_EQ(f->reason, e->reason, "frame reason");
	}
	ASSERT_NULL(report__frame(r, FX_FRAMES), "frame out of range");
	for (i = 0; i < FX_STACKS; i++) {
		const uint32_t *ids = report__stack(r, i, &n);

		if (!ASSERT_OK_PTR(ids, "stack") || !ASSERT_EQ(n, fx_stack_nr[i], "stack nr"))
			continue;
		ASSERT_TRUE(!n || !memcmp(ids, fx_stack_ids[i], n * sizeof(*ids)), "stack ids");
	}
	ASSERT_NULL(report__stack(r, FX_STACKS, &n), "stack out of range");
	for (i = 0; i < nr; i++) {
		const struct rpt_sample *s = report__sample(r, i), *e = &fx.samples[i];

		if (!ASSERT_EQ(s->time, e->time, "sample time") || !ASSERT_EQ(s->pid, e->pid, "pid") ||
		    !ASSERT_EQ(s->tid, e->tid, "tid") || !ASSERT_EQ(s->cpu, e->cpu, "cpu") ||
		    !ASSERT_EQ(s->cgroup, e->cgroup, "cgroup") || !ASSERT_STREQ(s->comm, e->comm, "comm") ||
		    !ASSERT_EQ(s->stack, e->stack, "sample stack"))
			break;
	}
	ASSERT_NULL(report__sample(r, nr), "sample out of range");
}


#endif /* BPFSYM_TEST_REPORT_FIXTURE_H */
