// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report --kallsyms FILE`: kernel frames of a recording re-resolved
 * from another boot's kallsyms text, relocated by the _text delta, in
 * frame_namer__name() and in every view; and the unnamed-frame summary of
 * the table.  The recording is written with the real writer and read back.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "test.h"
#include "view_render.h"
#include "view/frame_namer.h"
#include "symbolize/kernel/kallsyms.h"
#include "report/report.h"
#include "view/report_view.h"

TEST_SUITE("frame_namer");

#define TEXT_A 0xffffffff81000000ULL	/* _text when the recording was made */

static char errbuf[512];
static char path[PATH_MAX];

enum { M_K, M_EXT4, M_BPF, M_APP, M_ANON };
static const struct rpt_module mods[] = {
	[M_K] = { .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" },
	[M_EXT4] = { .kind = RPT_MOD_KERNEL, .path = "[ext4]" },
	[M_BPF] = { .kind = RPT_MOD_KERNEL, .path = "[bpf]" },
	[M_APP] = { .kind = RPT_MOD_FILE, .path = "/usr/bin/app", .dev = 1, .ino = 2 },
	[M_ANON] = { .kind = RPT_MOD_ANON, .path = "" },
};

/*
 * Named as the recorder named them from kallsyms_a.  F_CALLER is a return
 * address at the first byte of ksys_read: the recorder looked up addr - 1
 * (its offset) and found ksys_write, and so must a namer.  F_KLATE is a
 * BPF program loaded after the recorder read kallsyms: unnamed then.
 */
enum { F_LEAF, F_CALLER, F_EXT4, F_BPF, F_EARLY, F_KLATE, F_MAIN, F_ANON, F_UNK, NR_FRAMES };
static const struct rpt_frame frames[] = {
	[F_LEAF] = { RPT_FRAME_KERNEL, M_K, 0xffffffff81000123ULL, 0xffffffff81000123ULL,
		     "do_syscall_64", 0x23, RPT_OK },
	[F_CALLER] = { RPT_FRAME_KERNEL, M_K, 0xffffffff810002ffULL, 0xffffffff81000300ULL,
		       "ksys_write", 0xff, RPT_OK },
	[F_EXT4] = { RPT_FRAME_KERNEL, M_EXT4, 0xffffffffc0001010ULL, 0xffffffffc0001011ULL,
		     "ext4_file_write_iter", 0x10, RPT_OK },
	[F_BPF] = { RPT_FRAME_KERNEL, M_BPF, 0xffffffffc0003008ULL, 0xffffffffc0003008ULL,
		    "bpf_prog_0123456789abcdef_on_sample", 8, RPT_OK },
	[F_EARLY] = { RPT_FRAME_KERNEL, M_K, 0xffffffff80fff010ULL, 0xffffffff80fff010ULL,
		      "early_stuff", 0x10, RPT_OK },
	[F_KLATE] = { RPT_FRAME_KERNEL, RPT_NONE, 0xffffffffc0004010ULL, 0xffffffffc0004010ULL,
		      NULL, 0, RPT_NO_MAPPING },
	[F_MAIN] = { RPT_FRAME_USER, M_APP, 0x1100, 0x555555555100ULL, "main", 0, RPT_OK },
	[F_ANON] = { RPT_FRAME_USER, M_ANON, 0x40, 0x7f0000000040ULL, NULL, 0, RPT_ANON },
	[F_UNK] = { RPT_FRAME_USER, RPT_NONE, 0, 0xdead, NULL, 0, RPT_NO_MAPPING },
};

/* Leaf first, kernel frames before user frames, as the recorder writes them. */
static const struct {
	uint32_t nr, ids[3];
	uint32_t pid, count;
	const char *comm;
} stacks[] = {
	{ 3, { F_LEAF, F_CALLER, F_MAIN }, 100, 4, "app" },
	{ 3, { F_EXT4, F_CALLER, F_MAIN }, 100, 3, "app" },
	{ 2, { F_BPF, F_MAIN }, 100, 2, "app" },
	{ 2, { F_EARLY, F_MAIN }, 100, 2, "app" },
	{ 1, { F_KLATE }, 7, 1, "kworker/0:1" },
	{ 2, { F_ANON, F_MAIN }, 100, 2, "app" },
	{ 2, { F_UNK, F_MAIN }, 100, 1, "app" },
};

/* The recording, its header's _text at @text_addr. */
static struct report *build(uint64_t text_addr)
{
	struct rpt_header h = {
		.hostname = "testhost", .release = "6.18.0-test", .event = "cpu-clock",
		.target = "all", .freq = 99, .nr_cpus = 2, .text_addr = text_addr,
		.start_wall_ns = 1714560000000000000ULL,
	};
	uint32_t fid[NR_FRAMES], id, ids[3], sid, j;
	struct report_writer *w;
	struct report *r;
	size_t i, k;

	snprintf(path, sizeof(path), "%s/test_frame_namer.%d.data",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp", (int)getpid());
	w = report_writer__open(path, &h);
	if (!ASSERT_OK_PTR(w, "open"))
		return NULL;
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (!ASSERT_OK(report_writer__module(w, &mods[i], &id), "module"))
			goto fail;
	for (i = 0; i < NR_FRAMES; i++)
		if (!ASSERT_OK(report_writer__frame(w, &frames[i], &fid[i]), "frame"))
			goto fail;
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		for (j = 0; j < stacks[i].nr; j++)
			ids[j] = fid[stacks[i].ids[j]];
		if (!ASSERT_OK(report_writer__stack(w, ids, stacks[i].nr, &sid), "stack"))
			goto fail;
		for (k = 0; k < stacks[i].count; k++) {
			struct rpt_sample s = {
				.time = (i * 10 + k) * 1000000ULL, .pid = stacks[i].pid,
				.tid = stacks[i].pid, .comm = stacks[i].comm, .stack = sid,
			};

			if (!ASSERT_OK(report_writer__sample(w, &s), "sample"))
				goto fail;
		}
	}
	h.end_wall_ns = h.start_wall_ns + 1000000000ULL;
	if (!ASSERT_OK(report_writer__close(w, &h), "close"))
		return NULL;
	r = report__open(path, errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(r, errbuf);
	unlink(path);
	return r;
fail:
	report_writer__abort(w);
	unlink(path);
	return NULL;
}

/* The kallsyms text of a boot: the recording's own (A), or later ones. */
enum variant {
	BOOT_A,		/* what the recorder read */
	BOOT_B,		/* moved; ksys_write renamed, early_stuff gone, a trampoline added */
	BOOT_C,		/* moved; [xfs] where ext4 was, [kvm] where do_syscall_64 was */
};

static const struct {
	uint64_t addr;
	char type;
	const char *name, *mod;
	unsigned int in;	/* the boots that have it, 1 << variant */
} lines[] = {
	{ 0xffffffff80fff000ULL, 't', "early_stuff", NULL, 1 << BOOT_A },
	{ 0xffffffff81000000ULL, 'T', "_text", NULL, 7 },
	{ 0xffffffff81000000ULL, 'T', "startup_64", NULL, 7 },
	{ 0xffffffff81000100ULL, 'T', "do_syscall_64", NULL, 3 },
	{ 0xffffffff81000100ULL, 't', "kvm_fake", "kvm", 1 << BOOT_C },
	{ 0xffffffff81000200ULL, 't', "ksys_write", NULL, 5 },
	{ 0xffffffff81000200ULL, 't', "ksys_write_renamed", NULL, 1 << BOOT_B },
	{ 0xffffffff81000300ULL, 't', "ksys_read", NULL, 7 },
	{ 0xffffffff81000380ULL, 'D', "some_data", NULL, 7 },
	{ 0xffffffff81000400ULL, 'T', "_etext", NULL, 7 },
	{ 0xffffffffc0001000ULL, 't', "ext4_file_write_iter", "ext4", 3 },
	{ 0xffffffffc0001000ULL, 't', "xfs_file_write_iter", "xfs", 1 << BOOT_C },
	{ 0xffffffffc0001100ULL, 't', "ext4_buffered_write_iter", "ext4", 7 },
	{ 0xffffffffc0003000ULL, 't', "bpf_prog_0123456789abcdef_on_sample", "bpf", 7 },
	{ 0xffffffffc0004000ULL, 't', "bpf_trampoline_6442491234", "bpf", 1 << BOOT_B },
};

/* Boot @v's kallsyms, every address moved by @delta, parsed. */
static struct ksyms *boot(enum variant v, uint64_t delta)
{
	char text[4096];
	size_t len = 0, i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!(lines[i].in & (1u << v)))
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%016" PRIx64 " %c %s%s%s%s\n",
					lines[i].addr + delta, lines[i].type, lines[i].name,
					lines[i].mod ? "\t[" : "", lines[i].mod ? lines[i].mod : "",
					lines[i].mod ? "]" : "");
	}
	return ksyms__parse(text, len);
}

static struct ksyms *parse_str(const char *s)
{
	return ksyms__parse(s, strlen(s));
}

static void test_refusals(void)
{
	struct report *r = build(TEXT_A), *r0 = build(0);
	struct ksyms *ks = boot(BOOT_B, 0), *zeros, *notext;
	struct frame_namer *n;

	zeros = parse_str("0000000000000000 T _text\n0000000000000000 t foo\t[ext4]\n");
	notext = parse_str("ffffffff81000000 T startup_64\nffffffff81000100 T do_syscall_64\n");
	if (!ASSERT_OK_PTR(r, "report") || !ASSERT_OK_PTR(r0, "report without _text") ||
	    !ASSERT_OK_PTR(ks, "ks") || !ASSERT_OK_PTR(zeros, "zeros") || !ASSERT_OK_PTR(notext, "notext"))
		goto out;

	errbuf[0] = '\0';
	errno = 0;
	ASSERT_NULL(frame_namer__new(r0, ks, "f", errbuf, sizeof(errbuf)), "recording without _text");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	ASSERT_TRUE(strstr(errbuf, "_text"), errbuf);

	errno = 0;
	ASSERT_NULL(frame_namer__new(r, zeros, "f", errbuf, sizeof(errbuf)), "all-zero kallsyms");
	ASSERT_EQ(errno, EPERM, "EPERM");
	ASSERT_TRUE(strstr(errbuf, "every address is 0") && strstr(errbuf, "kptr_restrict"), errbuf);

	errno = 0;
	ASSERT_NULL(frame_namer__new(r, notext, "f", errbuf, sizeof(errbuf)), "kallsyms without _text");
	ASSERT_EQ(errno, ENOENT, "ENOENT");
	ASSERT_TRUE(strstr(errbuf, "no _text"), errbuf);
	ASSERT_TRUE(!strchr(errbuf, '\n'), "one line");

	n = frame_namer__new(r, ks, "f", errbuf, sizeof(errbuf));
	ASSERT_OK_PTR(n, errbuf);
	frame_namer__free(n);
	frame_namer__free(NULL);
out:
	ksyms__free(ks);
	ksyms__free(zeros);
	ksyms__free(notext);
	report__free(r);
	report__free(r0);
}

/* Frame @id's name through @n, checked field by field. */
static void expect(const struct frame_namer *n, const struct report *r, uint32_t id, const char *sym,
		   uint64_t sym_off, const char *mod, uint64_t offset, uint32_t reason)
{
	struct frame_name fn;
	char what[64];

	snprintf(what, sizeof(what), "frame %u", id);
	frame_namer__name(n, r, report__frame(r, id), &fn);
	if (sym)
		ASSERT_STREQ(fn.sym, sym, what);
	else
		ASSERT_NULL(fn.sym, what);
	ASSERT_EQ(fn.sym_off, sym_off, what);
	if (mod)
		ASSERT_TRUE(fn.module && fn.module->path && !strcmp(fn.module->path, mod) &&
			    (fn.module->kind == RPT_MOD_KERNEL) == (mod[0] == '['), what);
	else
		ASSERT_NULL(fn.module, what);
	ASSERT_EQ(fn.offset, offset, what);
	ASSERT_EQ(fn.reason, reason, what);
}

/* Boot B, moved up or down: renamed symbols show, gone ones are unnamed, new ones named. */
static void check_boot_b(int64_t delta)
{
	uint64_t d = (uint64_t)delta;
	struct report *r = build(TEXT_A);
	struct ksyms *ks = boot(BOOT_B, d);
	struct frame_namer *n = NULL;

	if (!ASSERT_OK_PTR(r, "report") || !ASSERT_OK_PTR(ks, "ks"))
		goto out;
	n = frame_namer__new(r, ks, "boot-b", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	ASSERT_EQ(frame_namer__delta(n), d, "delta");
	ASSERT_STREQ(frame_namer__source(n), "boot-b", "source");

	expect(n, r, F_LEAF, "do_syscall_64", 0x23, "[kernel.kallsyms]", 0xffffffff81000123ULL + d, RPT_OK);
	/* The offset (addr - 1) is looked up, not addr, which is ksys_read's first byte. */
	expect(n, r, F_CALLER, "ksys_write_renamed", 0xff, "[kernel.kallsyms]", 0xffffffff810002ffULL + d,
	       RPT_OK);
	expect(n, r, F_EXT4, "ext4_file_write_iter", 0x10, "[ext4]", 0xffffffffc0001010ULL + d, RPT_OK);
	expect(n, r, F_BPF, "bpf_prog_0123456789abcdef_on_sample", 8, "[bpf]", 0xffffffffc0003008ULL + d,
	       RPT_OK);
	/* Named when recorded, absent from B: unnamed, never the stale name. */
	expect(n, r, F_EARLY, NULL, 0, NULL, 0xffffffff80fff010ULL + d, RPT_NO_MAPPING);
	/* Unnamed when recorded, in B: named. */
	expect(n, r, F_KLATE, "bpf_trampoline_6442491234", 0x10, "[bpf]", 0xffffffffc0004010ULL + d, RPT_OK);
	/* User frames as recorded. */
	expect(n, r, F_MAIN, "main", 0, "/usr/bin/app", 0x1100, RPT_OK);
	expect(n, r, F_ANON, NULL, 0, "", 0x40, RPT_ANON);
	expect(n, r, F_UNK, NULL, 0, NULL, 0, RPT_NO_MAPPING);
	/* No namer: as recorded. */
	expect(NULL, r, F_CALLER, "ksys_write", 0xff, "[kernel.kallsyms]", 0xffffffff810002ffULL, RPT_OK);
	expect(NULL, r, F_EARLY, "early_stuff", 0x10, "[kernel.kallsyms]", 0xffffffff80fff010ULL, RPT_OK);
	expect(NULL, r, F_KLATE, NULL, 0, NULL, 0xffffffffc0004010ULL, RPT_NO_MAPPING);
out:
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

static void test_relocated_up(void)
{
	check_boot_b(0x3400000);
}

static void test_relocated_down(void)
{
	check_boot_b(-0x1000000);
}

/* Modules move apart from _text: landing in another module is no name, not a wrong one. */
static void test_other_module(void)
{
	struct report *r = build(TEXT_A);
	struct ksyms *ks = boot(BOOT_C, 0x200000);
	struct frame_namer *n = NULL;

	if (!ASSERT_OK_PTR(r, "report") || !ASSERT_OK_PTR(ks, "ks"))
		goto out;
	n = frame_namer__new(r, ks, "boot-c", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	expect(n, r, F_EXT4, NULL, 0, NULL, 0xffffffffc0001010ULL + 0x200000, RPT_NO_MAPPING);
	expect(n, r, F_LEAF, NULL, 0, NULL, 0xffffffff81000123ULL + 0x200000, RPT_NO_MAPPING);
	expect(n, r, F_CALLER, "ksys_write", 0xff, "[kernel.kallsyms]", 0xffffffff810002ffULL + 0x200000,
	       RPT_OK);
	/* Recorded without a module: whatever is there. */
	expect(n, r, F_KLATE, NULL, 0, NULL, 0xffffffffc0004010ULL + 0x200000, RPT_NO_MAPPING);
out:
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

/* Every format asks the namer: folded, the table, view__frame_name. */
static void test_views(void)
{
	static const char want[] =
		"app;main;[anon+0x40] 2\n"
		"app;main;[unknown] 1\n"
		"app;main;[unknown]_[k] 2\n"
		"app;main;bpf_prog_0123456789abcdef_on_sample_[k] 2\n"
		"app;main;ksys_write_renamed_[k];do_syscall_64_[k] 4\n"
		"app;main;ksys_write_renamed_[k];ext4_file_write_iter_[k] 3\n"
		"kworker/0:1;bpf_trampoline_6442491234_[k] 1\n";
	struct report *r = build(TEXT_A);
	struct ksyms *ks = boot(BOOT_B, 0x3400000);
	struct frame_namer *n = NULL;
	struct view_opts o = {};
	char *out = NULL, buf[64];

	if (!ASSERT_OK_PTR(r, "report") || !ASSERT_OK_PTR(ks, "ks"))
		goto out;
	n = frame_namer__new(r, ks, "/tmp/kallsyms.\x1b[31mb", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	o.namer = n;
	out = render(report_view__folded, r, &o);
	ASSERT_STREQ(out, want, "folded through the namer");
	free(out);

	ASSERT_STREQ(view__frame_name(&o, r, report__frame(r, F_CALLER), buf, sizeof(buf)),
		     "ksys_write_renamed_[k]", "view__frame_name");
	ASSERT_STREQ(view__frame_name(&o, r, report__frame(r, F_EARLY), buf, sizeof(buf)),
		     "[unknown]_[k]", "gone: unknown");
	ASSERT_STREQ(view__frame_name(NULL, r, report__frame(r, F_EARLY), buf, sizeof(buf)),
		     "early_stuff_[k]", "no options: recorded");

	out = render(report_view__table, r, &o);
	if (!ASSERT_OK_PTR(out, "table"))
		goto out;
	ASSERT_TRUE(strstr(out, "# kernel symbols: from /tmp/kallsyms.?[31mb, relocated by +0x3400000 "
			       "from the recorded _text 0xffffffff81000000\n"), out);
	/* 36 frames: early_stuff twice and 0xdead have no mapping, the JIT code twice is anonymous. */
	ASSERT_TRUE(strstr(out, "\n# unnamed frames: 13.9% of 36 (no mapping 8.3%, anonymous memory 5.6%)\n# rows: 8"),
		    out);
	ASSERT_TRUE(strstr(out, "  [ext4]             ext4_file_write_iter\n"), "module column from the text");
	ASSERT_TRUE(strstr(out, "  [bpf]              bpf_trampoline_6442491234\n"), "bpf module");
	ASSERT_TRUE(strstr(out, "  [kernel.kallsyms]  ksys_write_renamed\n"), "vmlinux");
	ASSERT_TRUE(strstr(out, "  [unknown]          [unknown]\n"), "gone frame");
	ASSERT_FALSE(strstr(out, "early_stuff"), "no stale name");
	free(out);

	/* Without the namer: recorded names, one fewer frame with no mapping. */
	o.namer = NULL;
	out = render(report_view__table, r, &o);
	ASSERT_TRUE(out && strstr(out, "\n# unnamed frames: 11.1% of 36 (no mapping 5.6%, anonymous memory 5.6%)\n"),
		    out);
	ASSERT_TRUE(out && strstr(out, "early_stuff") && !strstr(out, "# kernel symbols:"), "recorded names");
out:
	free(out);
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

/* The text the recorder read, as FILE: the same output as without it. */
static void test_same_text_same_output(void)
{
	struct report *r = build(TEXT_A);
	struct ksyms *ks = boot(BOOT_A, 0);
	struct frame_namer *n = NULL;
	struct view_opts o = {};
	char *plain = NULL, *again = NULL;

	if (!ASSERT_OK_PTR(r, "report") || !ASSERT_OK_PTR(ks, "ks"))
		goto out;
	n = frame_namer__new(r, ks, "a", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	o.namer = n;
	ASSERT_EQ(frame_namer__delta(n), (uint64_t)0, "delta 0");
	plain = render(report_view__folded, r, NULL);
	again = render(report_view__folded, r, &o);
	ASSERT_STREQ(again, plain, "folded");
	ASSERT_TRUE(plain && strstr(plain, "early_stuff_[k]"), "named as recorded");
out:
	free(plain);
	free(again);
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

/* One unnamed frame in 2001: "<0.1%", not "0.0%" that reads as none. */
static void test_tiny_share(void)
{
	struct rpt_header h = { .event = "cpu-clock", .target = "all", .freq = 99, .nr_cpus = 1 };
	struct rpt_module app = mods[M_APP];
	struct rpt_frame named = frames[F_MAIN], unk = frames[F_UNK];
	uint32_t mid, fid[2], sid[2];
	struct report_writer *w;
	struct report *r = NULL;
	char *out = NULL;
	size_t i;

	snprintf(path, sizeof(path), "%s/test_frame_namer.%d.tiny",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp", (int)getpid());
	w = report_writer__open(path, &h);
	if (!ASSERT_OK_PTR(w, "open"))
		return;
	named.module = 0;
	if (!ASSERT_OK(report_writer__module(w, &app, &mid), "module") ||
	    !ASSERT_OK(report_writer__frame(w, &named, &fid[0]), "frame") ||
	    !ASSERT_OK(report_writer__frame(w, &unk, &fid[1]), "frame") ||
	    !ASSERT_OK(report_writer__stack(w, &fid[0], 1, &sid[0]), "stack") ||
	    !ASSERT_OK(report_writer__stack(w, &fid[1], 1, &sid[1]), "stack")) {
		report_writer__abort(w);
		goto out;
	}
	for (i = 0; i < 2001; i++) {
		struct rpt_sample s = { .pid = 1, .tid = 1, .comm = "x", .stack = sid[i == 1000] };

		if (!ASSERT_OK(report_writer__sample(w, &s), "sample")) {
			report_writer__abort(w);
			goto out;
		}
	}
	if (!ASSERT_OK(report_writer__close(w, &h), "close"))
		goto out;
	r = report__open(path, errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(r, errbuf))
		goto out;
	out = render(report_view__table, r, NULL);
	ASSERT_TRUE(out && strstr(out, "\n# unnamed frames: <0.1% of 2001 (no mapping <0.1%)\n"), out);
out:
	free(out);
	report__free(r);
	unlink(path);
}

int main(void)
{
	RUN_TEST(test_refusals);
	RUN_TEST(test_relocated_up);
	RUN_TEST(test_relocated_down);
	RUN_TEST(test_other_module);
	RUN_TEST(test_views);
	RUN_TEST(test_same_text_same_output);
	RUN_TEST(test_tiny_share);
	return TEST_EXIT();
}
