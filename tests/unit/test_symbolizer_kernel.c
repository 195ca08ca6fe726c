// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer, kernel side: addresses of the running kernel named as
 * /proc/kallsyms names them, and saved kallsyms copies (kernel modules, BPF
 * programs, kptr_restrict's all-zero addresses, a missing file).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/kernel/kallsyms.h"
#include "symbolize/symbolizer.h"
#include "base/util.h"

TEST_SUITE("symbolizer_kernel");

static void test_kernel(void)
{
	static const char *const names[] = { "schedule", "vfs_read", "do_syscall_64", "kfree" };
	struct symbolizer_opts o = { .proc_root = "/proc" };
	struct symbolizer *s;
	struct ksyms *ks;
	struct sym_frame f;
	uint64_t addr, text;
	const struct sym_module *vmlinux = NULL;
	size_t i, done = 0;

	ks = ksyms__load(NULL);
	if (!ks || ksyms__restricted(ks)) {
		test__skip("/proc/kallsyms %s", ks ? "addresses are hidden" : "unreadable");
		ksyms__free(ks);
		return;
	}
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "new"))
		goto out;
	ASSERT_FALSE(symbolizer__kernel_restricted(s), "not restricted");
	if (!ksyms__find(ks, "_text", &text))
		ASSERT_EQ(symbolizer__text_addr(s), text, "_text");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct ksym *want;

		if (ksyms__find(ks, names[i], &addr))
			continue;
		want = ksyms__lookup(ks, addr);
		if (!ASSERT_OK_PTR(want, names[i]) || want->size < 2)
			continue;
		symbolizer__kernel(s, addr + 1, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_OK, names[i]);
		ASSERT_STREQ(f.sym, want->name, "name (or its alias)");
		ASSERT_EQ(f.sym_off, (uint64_t)1, "offset");
		ASSERT_EQ(f.offset, addr + 1, "the address");
		if (ASSERT_OK_PTR(f.module, "module")) {
			ASSERT_STREQ(f.module->rpt.path, "[kernel.kallsyms]", "vmlinux");
			ASSERT_EQ(f.module->rpt.kind, (uint32_t)RPT_MOD_KERNEL, "kind");
			if (vmlinux)
				ASSERT_TRUE(f.module == vmlinux, "one vmlinux module");
			vmlinux = f.module;
		}
		done++;
	}
	ASSERT_TRUE(done >= 2, "kernel symbols checked");
	symbolizer__kernel(s, 0x10, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_NO_MAPPING, "below every symbol");
	ASSERT_NULL(f.module, "no module");
out:
	symbolizer__free(s);
	ksyms__free(ks);
}

/* From saved kallsyms copies: modules, and kptr_restrict. */
static void test_kernel_saved(void)
{
	char path[PATH_MAX];
	struct symbolizer_opts o = { .kallsyms = path };
	const char *tmp = getenv("BPFSYM_TEST_TMP");
	const struct sym_module *m1;
	struct symbolizer *s;
	struct sym_frame f;
	int pass, k, bad;

	snprintf(path, sizeof(path), "%s/test_symbolizer_kernel.%d", tmp ? tmp : "/tmp", (int)getpid());
	if (!ASSERT_OK(test__write_file(path,
			"ffffffff81000000 T _text\n"
			"ffffffff81000000 T start\n"
			"ffffffff81000100 T end\n"
			"ffffffffc0000000 t bpf_prog_abc_handler\t[bpf]\n"
			"ffffffffc0000100 t bpf_prog_def_other\t[bpf]\n"
			"ffffffffc0010000 t e1000_xmit\t[e1000]\n"), "write"))
		return;
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "new"))
		return;
	ASSERT_EQ(symbolizer__text_addr(s), (uint64_t)0xffffffff81000000ull, "_text");
	symbolizer__kernel(s, 0xffffffffc0000004ull, &f);
	ASSERT_STREQ(f.sym, "bpf_prog_abc_handler", "bpf prog");
	m1 = f.module;
	if (ASSERT_OK_PTR(m1, "module")) {
		ASSERT_STREQ(m1->rpt.path, "[bpf]", "bracketed module path");
		ASSERT_EQ(m1->rpt.kind, (uint32_t)RPT_MOD_KERNEL, "kind");
	}
	symbolizer__kernel(s, 0xffffffffc0000104ull, &f);
	ASSERT_TRUE(f.module == m1, "one module per kernel module name");
	symbolizer__kernel(s, 0xffffffffc0010000ull, &f);
	if (ASSERT_OK_PTR(f.module, "e1000"))
		ASSERT_STREQ(f.module->rpt.path, "[e1000]", "e1000 path");
	/*
	 * Lookups go through a cache of recent addresses: more addresses than
	 * it has slots, twice, each named as the table names it.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (k = 0, bad = 0; k < 3000; k++) {
			uint64_t ip = 0xffffffffc0000000ull + (uint64_t)k, base;
			const char *want = ip < 0xffffffffc0000100ull ? "bpf_prog_abc_handler" : "bpf_prog_def_other";

			base = ip < 0xffffffffc0000100ull ? 0xffffffffc0000000ull : 0xffffffffc0000100ull;
			symbolizer__kernel(s, ip, &f);
			if (!f.sym || strcmp(f.sym, want) || f.sym_off != ip - base)
				bad++;
		}
		ASSERT_EQ(bad, 0, pass ? "addresses named wrong, from the cache" : "addresses named wrong");
	}
	symbolizer__free(s);

	if (!ASSERT_OK(test__write_file(path, "0000000000000000 T _text\n0000000000000000 t foo\n"), "write"))
		return;
	s = symbolizer__new(&o);
	if (!ASSERT_OK_PTR(s, "new restricted"))
		return;
	ASSERT_TRUE(symbolizer__kernel_restricted(s), "restricted");
	ASSERT_EQ(symbolizer__text_addr(s), (uint64_t)0, "no _text");
	symbolizer__kernel(s, 0xffffffff81000000ull, &f);
	ASSERT_EQ(f.reason, (uint32_t)RPT_KALLSYMS_RESTRICTED, "restricted reason");
	ASSERT_NULL(f.sym, "no wrong name");
	symbolizer__free(s);

	unlink(path);
	o.kallsyms = "/nonexistent/kallsyms";
	log_set_level(LOG_ERROR);	/* the warning naming the file is expected */
	errno = 0;
	ASSERT_NULL(symbolizer__new(&o), "missing kallsyms fails early");
	ASSERT_EQ(errno, ENOENT, "errno");
	log_set_level(LOG_WARN);
	o.no_kernel = 1;
	s = symbolizer__new(&o);
	if (ASSERT_OK_PTR(s, "no_kernel skips kallsyms")) {
		symbolizer__kernel(s, 0xffffffff81000000ull, &f);
		ASSERT_EQ(f.reason, (uint32_t)RPT_NO_MAPPING, "no kernel symbols");
		symbolizer__free(s);
	}
	symbolizer__free(NULL);
}

int main(void)
{
	RUN_TEST(test_kernel);
	RUN_TEST(test_kernel_saved);
	return TEST_EXIT();
}
