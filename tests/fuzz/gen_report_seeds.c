// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gen_report_seeds DIR: the seed corpus of fuzz_report, written with the
 * real writer so every seed is a report bpfsym could have produced.
 *
 * Each recording is written twice: NAME.bpfsym, the file itself, and
 * NAME.records, the same blocks decompressed in fuzz_report's "records
 * mode" (a byte that is not the file magic's, then per block a little-endian
 * u16 length and the block's records), so that mode starts from valid
 * records too.  Every file is read back first: a seed the reader refuses
 * would teach the fuzzer nothing, and means the writer or reader broke.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "report/report.h"
#include "report/report_fmt.h"
#include "base/util.h"

struct recording {
	const char *name;
	size_t samples;
	size_t flush_every;	/* 0: only at close */
	bool abort;		/* no END record: what a killed recorder leaves */
	bool forget;		/* a writer's index that forgets at every call, every id interned again */
	bool offcpu;		/* off-CPU time (issue 28): an OFFCPU record after every third sample */
};

static const struct recording recordings[] = {
	{ "empty", 0, 0, false, false, false },
	{ "empty_killed", 0, 0, true, false, false },
	{ "small", 12, 0, false, false, false },
	{ "blocks", 60, 10, false, false, false },
	{ "killed", 45, 10, true, false, false },
	{ "many", 400, 150, false, false, false },
	{ "forget", 60, 20, false, true, false },
	{ "offcpu", 60, 20, false, false, true },
	{ "offcpu_killed", 45, 10, true, false, true },
};

static const struct rpt_header hdr = {
	.hostname = "seedhost",
	.release = "6.1.0-fuzz",
	.boot_id = "01234567-89ab-cdef-0123-456789abcdef",
	.event = "cpu-clock",
	.target = "command: make -j4",
	.text_addr = 0xffffffff81000000ULL,
	.freq = 99,
	.flags = RPT_HF_USER_ONLY,
	.nr_cpus = 8,
	.start_wall_ns = 1714560000123456789ULL,
	.start_mono_ns = 987654321ULL,
};

static char long_sym[3000];

/* Every module kind, build-ids of 0, 20 and the maximum 64 bytes, extreme dev/ino. */
static struct rpt_module mods[] = {
	{ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	{ .kind = RPT_MOD_FILE, .path = "/usr/lib/x86_64-linux-gnu/libc.so.6", .build_id_len = 20,
	  .dev = 0x801, .ino = 12345 },
	{ .kind = RPT_MOD_FILE, .path = "/opt/app/bin/app (deleted)", .build_id_len = RPT_BUILD_ID_MAX,
	  .dev = UINT64_MAX, .ino = UINT64_MAX - 1 },
	{ .kind = RPT_MOD_ANON, .path = "" },
	{ .kind = RPT_MOD_SPECIAL, .path = "[vdso]" },
	{ .kind = RPT_MOD_KERNEL, .path = "[ext4]" },
};

#define NR_MODS (sizeof(mods) / sizeof(mods[0]))

/* Named and unnamed frames, every reason; module ids index mods[]. */
static struct rpt_frame frames[] = {
	{ RPT_FRAME_KERNEL, 0, 0xffffffff81234567ULL, 0xffffffff81234567ULL, "do_syscall_64", 0x17, RPT_OK },
	{ RPT_FRAME_KERNEL, 5, 0xffffffffc0a01234ULL, 0xffffffffc0a01234ULL, "ext4_readdir", 4, RPT_OK },
	{ RPT_FRAME_KERNEL, RPT_NONE, 0xffffffff8abcdef0ULL, 0xffffffff8abcdef0ULL, NULL, 0,
	  RPT_KALLSYMS_RESTRICTED },
	{ RPT_FRAME_USER, 1, 0x28000, 0x7f0000028010ULL, "__libc_write", 0x10, RPT_OK },
	{ RPT_FRAME_USER, 2, 0x1234, 0x555555555234ULL, "main", 0, RPT_OK },
	{ RPT_FRAME_USER, 2, 0x9999, 0x555555559999ULL, NULL, 0, RPT_OUTSIDE_SYMBOL },
	{ RPT_FRAME_USER, 2, 0x2000, 0x555555556000ULL, long_sym, 3, RPT_OK },
	{ RPT_FRAME_USER, RPT_NONE, 0, 0x1000, NULL, 0, RPT_NO_MAPPING },
	{ RPT_FRAME_USER, 3, 0x40, 0x7fff00000040ULL, NULL, 0, RPT_ANON },
	{ RPT_FRAME_USER, 4, 0x8f0, 0x7ffd000008f0ULL, "__vdso_clock_gettime", 0x20, RPT_OK },
	{ RPT_FRAME_USER, 1, 0x99000, 0x7f0000099000ULL, NULL, 0, RPT_FILE_UNREADABLE },
	{ RPT_FRAME_USER, 1, 0x99100, 0x7f0000099100ULL, NULL, 0, RPT_NO_SYMBOLS },
	{ RPT_FRAME_USER, 2, 0x3000, 0x555555557000ULL, NULL, 0, RPT_BUILD_ID_MISMATCH },
};

#define NR_FRAMES (sizeof(frames) / sizeof(frames[0]))

/* Leaf first, kernel before user; one empty stack (both walks failed). */
static const uint32_t stack_ids[][5] = {
	{ 0, 3, 4 }, { 4 }, { 5, 4 }, { 7 }, { 0 }, { 8, 6, 4 }, { 1, 0, 9 }, { 2, 10, 11, 12 }, { 0 },
};
static const uint32_t stack_nr[] = { 3, 1, 2, 1, 1, 3, 3, 4, 0 };

#define NR_STACKS (sizeof(stack_nr) / sizeof(stack_nr[0]))

static const char *const comms[] = { "app", "worker", "a;b c", "", "kworker/0:1" };

static int fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "gen_report_seeds: '%s': %s: %s\n", path, what, strerror(err));
	return -1;
}

/* Intern every module, frame and stack; the stacks' ids in @sids.  0 or -errno. */
static int intern_all(struct report_writer *w, uint32_t *sids)
{
	uint32_t mids[NR_MODS], fids[NR_FRAMES], fs[5], j;
	size_t i;
	int err = 0;

	for (i = 0; i < NR_MODS && !err; i++)
		err = report_writer__module(w, &mods[i], &mids[i]);
	for (i = 0; i < NR_FRAMES && !err; i++) {
		struct rpt_frame f = frames[i];

		if (f.module != RPT_NONE)
			f.module = mids[f.module];
		err = report_writer__frame(w, &f, &fids[i]);
	}
	for (i = 0; i < NR_STACKS && !err; i++) {
		for (j = 0; j < stack_nr[i]; j++)
			fs[j] = fids[stack_ids[i][j]];
		err = report_writer__stack(w, fs, stack_nr[i], &sids[i]);
	}
	return err;
}

static int write_recording(const struct recording *rec, const char *path)
{
	uint32_t sids[NR_STACKS];
	struct rpt_header final = hdr;
	struct report_writer *w;
	uint64_t t = 5000;
	size_t i;
	int err = 0;

	final.off_cpu = rec->offcpu;
	final.off_cpu_states = rec->offcpu ? RPT_OS_ALL : 0;
	final.off_cpu_min_ns = rec->offcpu ? 1000 : 0;
	w = report_writer__open(path, &final);
	if (!w)
		return fail("report_writer__open", path, errno);
	if (rec->forget)
		report_writer__set_index_max(w, 1, RPT_INDEX_AGE_NS);
	err = intern_all(w, sids);
	for (i = 0; i < rec->samples && !err; i++) {
		struct rpt_sample s = {
			.cpu = (uint32_t)(i % 8),
			.cgroup = i % 2 ? 0x1234 : UINT64_MAX,
			.comm = comms[i % (sizeof(comms) / sizeof(comms[0]))],
			.stack = sids[i % NR_STACKS],
		};

		/* Mostly forward, sometimes back (ring-buffer order); tids above, at and below the pid. */
		t += 1000000 + i * 37 % 50000;
		s.time = i % 7 == 3 ? t - 2000000 : t;
		s.pid = i % 5 == 4 ? 4000000000u : 100 + (uint32_t)(i % 3) * 100;
		s.tid = i % 4 == 0 ? s.pid : i % 4 == 1 ? s.pid + 7 : i % 4 == 2 ? s.pid - 1 : 0;
		/* One cgroup a docker container's (a CGROUP record, once), the other unnamed. */
		if (s.cgroup == 0x1234)
			err = report_writer__cgroup(w, s.cgroup, "/system.slice/docker-"
				"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope");
		/* Every identity again under new ids: what the reader must merge back. */
		if (rec->forget && i % 10 == 9)
			err = err ?: intern_all(w, sids);
		err = err ?: report_writer__sample(w, &s);
		if (!err && rec->offcpu && i % 3 == 2)
			err = report_writer__offcpu(w, &(struct rpt_offcpu){
				.time = s.time - 500000, .cgroup = s.cgroup, .comm = s.comm, .pid = s.pid,
				.tid = s.tid, .stack = s.stack, .state = (uint32_t)(i % RPT_OS__NR),
				.ns = 1000 + i * 1000003, .count = 1 + i % 4 });
		if (!err && rec->flush_every && (i + 1) % rec->flush_every == 0)
			err = report_writer__flush(w);
	}
	if (err) {
		report_writer__abort(w);
		return fail("writing", path, -err);
	}
	if (rec->abort) {
		/* Flushed blocks are all a killed recorder leaves behind. */
		err = report_writer__flush(w);
		report_writer__abort(w);
		return err ? fail("report_writer__flush", path, -err) : 0;
	}
	final.end_wall_ns = hdr.start_wall_ns + 10000000000ULL;
	final.lost_samples = 3;
	final.lost_events = 2;
	final.nr_procs = 7;
	final.offcpu[RPT_OC_SHORT] = rec->offcpu ? 5 : 0;
	final.offcpu[RPT_OC_LOST] = rec->offcpu ? 1 : 0;
	err = report_writer__close(w, &final);
	return err ? fail("report_writer__close", path, -err) : 0;
}

/* Write @buf's blocks, decompressed, as a records-mode seed at @path. */
static int write_records(const uint8_t *buf, size_t len, const char *path)
{
	size_t off = RPT_FILE_HDR_LEN;
	uint8_t *data;
	FILE *f;
	int err = 0;

	f = fopen(path, "w");
	if (!f)
		return fail("fopen", path, errno);
	fputc('R', f);
	while (!err && off + RPT_BLOCK_HDR_LEN <= len) {
		uint32_t clen = rpt_get_le32(buf + off + 4), ulen = rpt_get_le32(buf + off + 8);
		uint8_t n[2] = { (uint8_t)ulen, (uint8_t)(ulen >> 8) };
		size_t got;

		/* The records-mode length is a u16: keep recordings' blocks below 64 KiB. */
		if (ulen > UINT16_MAX || clen > len - off - RPT_BLOCK_HDR_LEN) {
			err = fail("block too big for records mode or cut short", path, EINVAL);
			break;
		}
		data = malloc(ulen ? ulen : 1);
		if (!data) {
			err = fail("malloc", path, ENOMEM);
			break;
		}
		got = ZSTD_decompress(data, ulen, buf + off + RPT_BLOCK_HDR_LEN, clen);
		if (ZSTD_isError(got) || got != ulen)
			err = fail("ZSTD_decompress", path, EINVAL);
		else if (fwrite(n, 1, 2, f) != 2 || fwrite(data, 1, ulen, f) != ulen)
			err = fail("fwrite", path, errno);
		free(data);
		off += RPT_BLOCK_HDR_LEN + clen;
	}
	if (fclose(f) && !err)
		err = fail("fclose", path, errno);
	return err;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], errbuf[256];
	struct report *r;
	size_t i, len;
	char *buf;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_report_seeds DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(long_sym) - 1; i++)
		long_sym[i] = (char)('a' + i % 26);
	for (i = 0; i < RPT_BUILD_ID_MAX; i++) {
		mods[1].build_id[i] = (uint8_t)(0xa0 + i);
		mods[2].build_id[i] = (uint8_t)(0xff - i);
	}
	for (i = 0; i < sizeof(recordings) / sizeof(recordings[0]); i++) {
		const struct recording *rec = &recordings[i];

		snprintf(path, sizeof(path), "%s/%s.bpfsym", argv[1], rec->name);
		if (write_recording(rec, path))
			return 1;
		r = report__open(path, errbuf, sizeof(errbuf));
		if (!r || report__nr_samples(r) != rec->samples || report__header(r)->complete == rec->abort) {
			fprintf(stderr, "gen_report_seeds: '%s' does not read back: %s\n", path,
				r ? "wrong sample count or completeness" : errbuf);
			report__free(r);
			return 1;
		}
		report__free(r);
		err = read_file_capped(path, 1 << 24, &buf, &len);
		if (err) {
			fail("read_file_capped", path, -err);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%s.records", argv[1], rec->name);
		err = write_records((const uint8_t *)buf, len, path);
		free(buf);
		if (err)
			return 1;
	}
	return 0;
}
