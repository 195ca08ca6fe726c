// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kallsyms: parsing, sizes, aliases, kptr_restrict, and the real file. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "symbolize/kernel/kallsyms.h"
#include "base/util.h"

TEST_SUITE("kallsyms");

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct ksyms *parse_str(const char *s)
{
	return ksyms__parse(s, strlen(s));
}

static void test_parse_sorted_sizes(void)
{
	/* Out of order, a data symbol, and a module; no trailing newline. */
	static const char text[] =
		"ffffffff81000200 T second\n"
		"ffffffff81000100 t first\n"
		"ffffffff81000300 D some_data\n"
		"ffffffff81000400 W weak_one\n"
		"ffffffffc0001000 t mod_fn\t[e1000]\n"
		"ffffffffc0001080 T mod_fn2\t[e1000]\n"
		"ffffffffc0009000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]";
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	ASSERT_EQ(ksyms__nr_syms(ks), (size_t)6, "text symbols kept");
	ASSERT_EQ(ksyms__nr_bad_lines(ks), (size_t)0, "bad lines");
	ASSERT_FALSE(ksyms__restricted(ks), "restricted");

	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff810000ffull), "below first");
	s = ksyms__lookup(ks, 0xffffffff81000100ull);
	if (ASSERT_OK_PTR(s, "first")) {
		ASSERT_STREQ(s->name, "first", "first name");
		ASSERT_EQ(s->size, (uint64_t)0x100, "first size");
		ASSERT_NULL(s->module, "vmlinux has no module");
	}
	s = ksyms__lookup(ks, 0xffffffff810002ffull);
	if (ASSERT_OK_PTR(s, "second end-1"))
		ASSERT_STREQ(s->name, "second", "data symbols are not boundaries");
	s = ksyms__lookup(ks, 0xffffffff81000400ull + 4095);
	if (ASSERT_OK_PTR(s, "weak_one tail"))
		ASSERT_STREQ(s->name, "weak_one", "name");
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff81000400ull + 4096),
		    "vmlinux's last symbol is bounded before the first module");

	s = ksyms__lookup(ks, 0xffffffffc000107full);
	if (ASSERT_OK_PTR(s, "mod_fn")) {
		ASSERT_STREQ(s->name, "mod_fn", "module symbol");
		ASSERT_STREQ(s->module, "e1000", "module name without brackets");
		ASSERT_EQ(s->size, (uint64_t)0x80, "size within a module");
	}
	s = ksyms__lookup(ks, 0xffffffffc0001080ull + 4095);
	if (ASSERT_OK_PTR(s, "module's last symbol"))
		ASSERT_EQ(s->size, (uint64_t)4096, "bounded at a module change");
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffffc0002080ull), "gap between modules");
	s = ksyms__lookup(ks, 0xffffffffc0009010ull);
	if (ASSERT_OK_PTR(s, "bpf prog")) {
		ASSERT_STREQ(s->module, "bpf", "BPF program module");
		ASSERT_STREQ(s->name, "bpf_prog_6deef7357e7b4530_sd_fw_ingress", "bpf name");
	}
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffffc0009000ull + 4096), "past the last symbol");
	ASSERT_NULL(ksyms__lookup(ks, UINT64_MAX), "u64 max");
	ksyms__free(ks);
}

static void test_aliases_modules_interned(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 t srso_local\n"
		"ffffffff81000000 T srso_alias_untrain_ret\n"
		"ffffffff81000000 W weak_alias\n"
		"ffffffff81000010 t a\t[m1]\n"
		"ffffffff81000020 t b\t[m2]\n"
		"ffffffff81000030 t c\t[m1]\n";
	struct ksyms *ks = parse_str(text);
	const struct ksym *a, *c;
	uint64_t addr = 0;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	a = ksyms__lookup(ks, 0xffffffff81000005ull);
	if (ASSERT_OK_PTR(a, "alias lookup"))
		ASSERT_STREQ(a->name, "srso_alias_untrain_ret",
			     "global, fewest underscores wins");
	a = ksyms__lookup(ks, 0xffffffff81000010ull);
	c = ksyms__lookup(ks, 0xffffffff81000030ull);
	if (ASSERT_OK_PTR(a, "a") && ASSERT_OK_PTR(c, "c"))
		ASSERT_TRUE(a->module == c->module, "module names interned");
	ASSERT_OK(ksyms__find(ks, "weak_alias", &addr), "find");
	ASSERT_EQ(addr, (uint64_t)0xffffffff81000000ull, "find addr");
	ASSERT_EQ(ksyms__find(ks, "nope", &addr), -ENOENT, "find absent");
	ksyms__free(ks);
}

/* Shuffled input, and the kernel's own layout (BPF programs after, but below, ftrace's). */
static void test_unsorted_merge(void)
{
	static const char layout[] =
		"ffffffff81000000 T a\n"
		"ffffffff81000100 T b\n"
		"ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
		"ffffffffc0025b9c t bpf_prog_1_on_sample\t[bpf]\n"
		"ffffffffc0025fa8 t bpf_prog_2_on_fork\t[bpf]\n"
		"ffffffff81000100 t b_local_alias\n";
	size_t n = 1000, len = 0, i;
	char *text = malloc(n * 80);
	const struct ksym *s;
	struct ksyms *ks;

	if (!ASSERT_OK_PTR(text, "malloc"))
		return;
	for (i = 0; i < n; i++) {
		size_t k = i * 7919 % n;	/* a permutation */

		len += (size_t)sprintf(text + len, "%016llx t fn_%zu\n", 0x1000ull + k * 16, k);
		if (k % 100 == 0)	/* an alias that loses: more underscores */
			len += (size_t)sprintf(text + len, "%016llx t _alias_%zu\n", 0x1000ull + k * 16, k);
	}
	ks = ksyms__parse(text, len);
	free(text);
	if (ASSERT_OK_PTR(ks, "parse shuffled")) {
		for (i = 0; i < n; i++) {
			char want[32];

			snprintf(want, sizeof(want), "fn_%zu", i);
			s = ksyms__lookup(ks, 0x1000ull + i * 16 + 15);
			if (!ASSERT_OK_PTR(s, want) || !ASSERT_STREQ(s->name, want, "sorted") ||
			    !ASSERT_EQ(s->size, (uint64_t)(i + 1 < n ? 16 : 4096), "size"))
				break;
		}
		ksyms__free(ks);
	}

	ks = ksyms__parse(layout, sizeof(layout) - 1);
	if (!ASSERT_OK_PTR(ks, "parse layout"))
		return;
	s = ksyms__lookup(ks, 0xffffffffc0025fa8ull + 4);
	if (ASSERT_OK_PTR(s, "bpf prog below ftrace"))
		ASSERT_STREQ(s->name, "bpf_prog_2_on_fork", "merged in");
	ASSERT_EQ(s ? s->size : 0, (uint64_t)4096, "bounded before another module");
	s = ksyms__lookup(ks, 0xffffffffc0025b9cull);
	if (ASSERT_OK_PTR(s, "first bpf prog"))
		ASSERT_EQ(s->size, (uint64_t)(0xffffffffc0025fa8ull - 0xffffffffc0025b9cull), "size");
	s = ksyms__lookup(ks, 0xffffffff81000100ull);
	if (ASSERT_OK_PTR(s, "alias merged from the tail"))
		ASSERT_STREQ(s->name, "b", "global wins over a local alias");
	ksyms__free(ks);
}

/*
 * Where a symbol ends: at the next symbol's address within vmlinux or one
 * module, even far away; at most 4 KiB when the next one belongs to another
 * module (or is the last): vmlinux never runs over a module, nor a module
 * over the next one or a BPF program placed in between.
 */
static void test_symbol_ends(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81200000 T far_next\n"		/* 2 MiB after startup_64 */
		"ffffffff81200100 T vmlinux_last\n"
		"ffffffff81200200 t close_mod_fn\t[close]\n"	/* 0x100 after vmlinux_last */
		"ffffffffc0001000 t a1\t[moda]\n"
		"ffffffffc0006000 t a2\t[moda]\n"	/* 0x5000 later, same module */
		"ffffffffc0006400 t a3\t[moda]\n"
		"ffffffffc0100000 t b1\t[modb]\n"
		"ffffffffc0100800 t b2\t[modb]\n"
		"ffffffffc0100400 t bpf_prog_0011223344556677_between\t[bpf]\n";
	static const struct {
		uint64_t addr, size;
		const char *name, *mod;
	} want[] = {
		{ 0xffffffff81000000ull, 0x200000, "startup_64", NULL },
		{ 0xffffffff81200000ull, 0x100, "far_next", NULL },
		{ 0xffffffff81200100ull, 0x100, "vmlinux_last", NULL },
		{ 0xffffffff81200200ull, 4096, "close_mod_fn", "close" },
		{ 0xffffffffc0001000ull, 0x5000, "a1", "moda" },
		{ 0xffffffffc0006000ull, 0x400, "a2", "moda" },
		{ 0xffffffffc0006400ull, 4096, "a3", "moda" },
		{ 0xffffffffc0100000ull, 0x400, "b1", "modb" },
		{ 0xffffffffc0100400ull, 0x400, "bpf_prog_0011223344556677_between", "bpf" },
		{ 0xffffffffc0100800ull, 4096, "b2", "modb" },
	};
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;
	size_t i;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		s = ksyms__lookup(ks, want[i].addr + want[i].size - 1);
		if (!ASSERT_OK_PTR(s, want[i].name) || !ASSERT_STREQ(s->name, want[i].name, "last byte") ||
		    !ASSERT_EQ(s->addr, want[i].addr, want[i].name) ||
		    !ASSERT_EQ(s->size, want[i].size, want[i].name))
			break;
		if (want[i].mod)
			ASSERT_STREQ(s->module, want[i].mod, want[i].name);
		else
			ASSERT_NULL(s->module, want[i].name);
		s = ksyms__lookup(ks, want[i].addr + want[i].size);
		ASSERT_TRUE(!s || s->addr == want[i].addr + want[i].size, "nothing runs past the end");
	}
	ksyms__free(ks);
}

/* _etext and _einittext end text sections: what follows is data until the next text symbol. */
static void test_end_markers(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff82200000 T last_fn\n"
		"ffffffff82200040 T __indirect_thunk_end\n"
		"ffffffff82200040 T _etext\n"
		"ffffffff82300000 D some_rodata\n"
		"ffffffff83780000 T _sinittext\n"
		"ffffffff83780000 t __pfx_init_fn\n"
		"ffffffff83780010 t init_fn\n"
		"ffffffff83780100 T _einittext\n"
		"ffffffff83780100 t shares_einittext\n"	/* local: still preferred */
		"ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n";
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;
	uint64_t addr;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	s = ksyms__lookup(ks, 0xffffffff8220003full);
	if (ASSERT_OK_PTR(s, "last function"))
		ASSERT_STREQ(s->name, "last_fn", "bounded by _etext");
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff82200040ull), "_etext covers nothing");
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff82300000ull), "rodata is not _etext+0x...");
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff8377ffffull), "up to init text");
	ASSERT_OK(ksyms__find(ks, "_etext", &addr), "still found by name");
	/* 6.1's layout: __indirect_thunk_end, a 'T', at _etext's address. */
	ASSERT_NULL(ksyms__lookup(ks, 0xffffffff82200840ull), "_etext's run covers nothing (6.1)");
	ASSERT_EQ(addr, (uint64_t)0xffffffff82200040ull, "its address");
	s = ksyms__lookup(ks, 0xffffffff837800ffull);
	if (ASSERT_OK_PTR(s, "init function"))
		ASSERT_STREQ(s->name, "init_fn", "init text named");
	/* A function at the marker's address is preferred and keeps its size. */
	s = ksyms__lookup(ks, 0xffffffff83780100ull + 10);
	if (ASSERT_OK_PTR(s, "function sharing _einittext's address")) {
		ASSERT_STREQ(s->name, "shares_einittext", "preferred");
		ASSERT_EQ(s->size, (uint64_t)4096, "sized up to the module rule");
	}
	s = ksyms__lookup(ks, 0xffffffffc0201000ull);
	if (ASSERT_OK_PTR(s, "module after"))
		ASSERT_STREQ(s->module, "__builtin__ftrace", "module");
	ksyms__free(ks);
}

/* BPF programs, trampolines and dispatchers: named, module "bpf". */
static void test_bpf_symbols(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffffc0025c30 t bpf_prog_74db80796d82856a_on_sample\t[bpf]\n"
		"ffffffffc002601c t bpf_prog_16e1d63df2f327db_on_fork\t[bpf]\n"
		"ffffffffc0022114 t bpf_prog_6e717dacc70c72de_visit_vma\t[bpf]\n"
		"ffffffffc0027000 t bpf_trampoline_6442491234\t[bpf]\n"
		"ffffffffc0028000 t bpf_dispatcher_xdp\t[bpf]\n";
	static const struct {
		uint64_t addr;
		const char *name;
	} want[] = {
		{ 0xffffffffc0022114ull, "bpf_prog_6e717dacc70c72de_visit_vma" },
		{ 0xffffffffc0025c30ull, "bpf_prog_74db80796d82856a_on_sample" },
		{ 0xffffffffc002601cull, "bpf_prog_16e1d63df2f327db_on_fork" },
		{ 0xffffffffc0027000ull, "bpf_trampoline_6442491234" },
		{ 0xffffffffc0028000ull, "bpf_dispatcher_xdp" },
	};
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;
	size_t i;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		s = ksyms__lookup(ks, want[i].addr + 3);
		if (ASSERT_OK_PTR(s, want[i].name)) {
			ASSERT_STREQ(s->name, want[i].name, "name");
			ASSERT_STREQ(s->module, "bpf", "module");
			ASSERT_EQ(s->addr, want[i].addr, "address");
		}
	}
	s = ksyms__lookup(ks, 0xffffffffc0025c2full);
	if (ASSERT_OK_PTR(s, "before on_sample"))
		ASSERT_STREQ(s->name, "bpf_prog_6e717dacc70c72de_visit_vma", "the one below");
	ksyms__free(ks);
}

/* ksyms__sym() walks every kept symbol in address order, preferred alias first. */
static void test_walk(void)
{
	static const char text[] =
		"ffffffff81000100 t b\n"
		"ffffffff81000000 t __a_alias\n"
		"ffffffff81000000 T a\n"
		"ffffffff81000080 D data\n"
		"ffffffffc0000000 t m\t[mod]\n";
	static const char *const order[] = { "a", "__a_alias", "b", "m" };
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;
	size_t i;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	if (ASSERT_EQ(ksyms__nr_syms(ks), (size_t)4, "text symbols")) {
		for (i = 0; i < 4; i++) {
			s = ksyms__sym(ks, i);
			if (!ASSERT_OK_PTR(s, "sym") || !ASSERT_STREQ(s->name, order[i], "order"))
				break;
		}
		ASSERT_STREQ(ksyms__sym(ks, 3)->module, "mod", "module kept");
	}
	ASSERT_NULL(ksyms__sym(ks, 4), "past the end");
	ASSERT_NULL(ksyms__sym(NULL, 0), "NULL");
	ksyms__free(ks);
}

static void test_bad_lines(void)
{
	static const char text[] =
		"\n"
		"zzzz T bad_hex\n"
		"ffffffff81000000 T\n"
		"ffffffff81000000\n"
		"11112222333344445 T too_long_addr\n"
		"ffffffff81000000 ? odd_type\n"
		"ffffffff81000000 T name [unterminated\n"
		"ffffffff81000000 T name []\n"
		"ffffffff81000000 T name [m] junk\n"
		"ffffffff81000000 Tx glued\n"
		"ffffffff81000000 T good\n"
		"ffffffff81000100 T  spaced\t\t[mod]  \r\n";
	struct ksyms *ks = parse_str(text);
	const struct ksym *s;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	ASSERT_EQ(ksyms__nr_syms(ks), (size_t)2, "kept");
	ASSERT_EQ(ksyms__nr_bad_lines(ks), (size_t)9, "bad lines counted, blank not");
	s = ksyms__lookup(ks, 0xffffffff81000100ull);
	if (ASSERT_OK_PTR(s, "lenient blanks")) {
		ASSERT_STREQ(s->name, "spaced", "name");
		ASSERT_STREQ(s->module, "mod", "module");
	}
	ksyms__free(ks);
}

/* A NUL inside a line would make a short or empty name: the line is bad. */
static void test_nul_in_line(void)
{
	static const char text[] =
		"ffffffff81000000 T good\n"
		"ffffffff81000100 t \0\0hidden [ext4]\n"
		"ffffffff81000200 T cut\0short\n"
		"ffffffff81000300 T also_good\n";
	struct ksyms *ks = ksyms__parse(text, sizeof(text) - 1);
	uint64_t addr;

	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	ASSERT_EQ(ksyms__nr_syms(ks), (size_t)2, "NUL lines dropped");
	ASSERT_EQ(ksyms__nr_bad_lines(ks), (size_t)2, "and counted");
	ASSERT_TRUE(ksyms__find(ks, "", &addr) != 0, "no empty name");
	ASSERT_TRUE(ksyms__find(ks, "cut", &addr) != 0, "no cut name");
	ksyms__free(ks);
}

static void test_restricted_and_empty(void)
{
	static const char zeros[] =
		"0000000000000000 T _text\n"
		"0000000000000000 t foo\n"
		"0000000000000000 D bar\n";
	struct ksyms *ks = parse_str(zeros);
	uint64_t addr;

	if (ASSERT_OK_PTR(ks, "parse zeros")) {
		ASSERT_TRUE(ksyms__restricted(ks), "restricted");
		ASSERT_NULL(ksyms__lookup(ks, 0), "no lookup at 0");
		ASSERT_NULL(ksyms__lookup(ks, 0x10), "no lookup");
		ASSERT_EQ(ksyms__find(ks, "_text", &addr), -ENOENT, "no address");
		ksyms__free(ks);
	}
	/* Modules and data lines too: still all zero. */
	ks = parse_str("0000000000000000 D data\n0000000000000000 t m\t[ext4]\n"
		       "0000000000000000 t bpf_prog_0011223344556677_x\t[bpf]\n");
	if (ASSERT_OK_PTR(ks, "parse zeros with modules")) {
		ASSERT_TRUE(ksyms__restricted(ks), "restricted");
		ASSERT_EQ(ksyms__nr_syms(ks), (size_t)2, "names still kept");
		ksyms__free(ks);
	}
	/* One real address, even a data symbol's: not restricted. */
	ks = parse_str("0000000000000000 T _text\nffffffff82000000 D data\n");
	if (ASSERT_OK_PTR(ks, "parse one nonzero")) {
		ASSERT_FALSE(ksyms__restricted(ks), "one address is enough");
		ksyms__free(ks);
	}
	errno = 0;
	ASSERT_NULL(parse_str("ffffffff81000000 D only_data\n"), "no text symbol");
	ASSERT_EQ(errno, ENODATA, "ENODATA");
	ASSERT_NULL(ksyms__parse("", 0), "empty");
	ASSERT_NULL(ksyms__load("/nonexistent/kallsyms"), "missing file");
	ASSERT_EQ(errno, ENOENT, "ENOENT");
	ksyms__free(NULL);
}

/* Not NUL terminated: the parser must stop at len. */
static void test_unterminated_buffer(void)
{
	static const char text[] = "ffffffff81000000 T abcdef";
	char *buf = malloc(sizeof(text) - 1);
	struct ksyms *ks;
	const struct ksym *s;

	if (!ASSERT_OK_PTR(buf, "malloc"))
		return;
	memcpy(buf, text, sizeof(text) - 1);
	ks = ksyms__parse(buf, sizeof(text) - 4);
	free(buf);
	if (!ASSERT_OK_PTR(ks, "parse"))
		return;
	s = ksyms__lookup(ks, 0xffffffff81000000ull);
	if (ASSERT_OK_PTR(s, "lookup"))
		ASSERT_STREQ(s->name, "abc", "name cut at len");
	ksyms__free(ks);
}

/* A temporary file holding @len bytes of @text; its path in @path. */
static int temp_file(char *path, size_t size, const char *text, size_t len)
{
	const char *tmp = getenv("BPFSYM_TEST_TMP");
	int fd;

	snprintf(path, size, "%s/kallsyms.XXXXXX", tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

/*
 * ksyms__load() parses as it reads: lines cut by its buffer, a line
 * longer than the buffer, and the size cap.
 */
static void test_load_streaming(void)
{
	size_t n = 40000, len = 0, i, cap = n * 64 + 400000;
	char *text = malloc(cap), path[256];
	struct ksyms *ks, *ref;
	int fd;

	if (!ASSERT_OK_PTR(text, "malloc"))
		return;
	for (i = 0; i < n; i++) {
		if (i == n / 2) {	/* one line of 300 KB */
			len += (size_t)sprintf(text + len, "ffffffff90000000 T ");
			memset(text + len, 'x', 300000);
			len += 300000;
			text[len++] = '\n';
		}
		len += (size_t)sprintf(text + len, "%016llx %c fn_%zu%s\n",
				       0xffffffff81000000ull + i * 0x40, i % 3 ? 't' : 'T', i,
				       i % 7 ? "" : "\t[mod]");
	}
	len--;	/* the last line without its newline */
	if (!ASSERT_OK(temp_file(path, sizeof(path), text, len), "temp file"))
		goto out;
	ks = ksyms__load(path);
	ref = ksyms__parse(text, len);
	unlink(path);
	if (ASSERT_OK_PTR(ks, "load") && ASSERT_OK_PTR(ref, "parse")) {
		ASSERT_EQ(ksyms__nr_syms(ks), n, "every short line");
		ASSERT_EQ(ksyms__nr_bad_lines(ks), (size_t)1, "the long line");
		for (i = 0; i < n; i++) {
			const struct ksym *a = ksyms__lookup(ks, 0xffffffff81000000ull + i * 0x40 + 3);
			const struct ksym *b = ksyms__lookup(ref, 0xffffffff81000000ull + i * 0x40 + 3);

			if (!ASSERT_OK_PTR(a, "lookup") || !ASSERT_OK_PTR(b, "lookup ref") ||
			    !ASSERT_STREQ(a->name, b->name, "load and parse agree") ||
			    !ASSERT_TRUE((a->module == NULL) == (i % 7 != 0), "module"))
				break;
		}
	}
	ksyms__free(ks);
	ksyms__free(ref);

	/* Past 256 MiB: refused (a sparse file, cheap to make). */
	snprintf(path, sizeof(path), "%s/kallsyms-big.XXXXXX",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp");
	fd = mkstemp(path);
	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		goto out;
	ASSERT_OK(ftruncate(fd, ((off_t)256 << 20) + 1), "ftruncate");
	close(fd);
	errno = 0;
	ASSERT_NULL(ksyms__load(path), "over the cap");
	ASSERT_EQ(errno, E2BIG, "E2BIG");
	unlink(path);
out:
	free(text);
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;	/* xorshift64: reproducible */
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * True when the whole line at LINE (up to its newline) is also a line of
 * TEXT (LEN bytes).
 */
static bool line_in(const char *text, size_t len, const char *line)
{
	const char *end = strchr(line, '\n');
	size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
	const char *p = text, *stop = text + len;

	while (p < stop && (p = memmem(p, (size_t)(stop - p), line, n)) != NULL) {
		if (p == text || p[-1] == '\n')
			return true;
		p++;
	}
	return false;
}

/*
 * The real file: load time, lookup cost, and ~1000 symbols resolving to
 * themselves.  Other processes load and unload BPF programs (and modules)
 * all the time on a shared machine: a line of the second read that the
 * load does not resolve to itself is judged only when the read before the
 * load had it too (it existed throughout).
 */
static void test_proc_kallsyms(void)
{
	double t0, t_read, t_load, t_parse, t_look;
	size_t len, text_len, before_len = 0, i, n, checked, same_name, changed, nr_lookups = 1000000;
	volatile size_t hits = 0;
	struct ksyms *ks, *ks2;
	const struct ksym *s;
	char *buf, *text, *before = NULL;
	int err;

	if (read_file_capped("/proc/kallsyms", (size_t)256 << 20, &before, &before_len))
		before = NULL;
	t0 = now_ms();
	ks = ksyms__load(NULL);
	t_load = now_ms() - t0;
	if (!ks) {
		test__skip("/proc/kallsyms: %s", strerror(errno));
		free(before);
		return;
	}
	if (ksyms__restricted(ks)) {
		test__skip("/proc/kallsyms addresses are hidden (kptr_restrict)");
		ksyms__free(ks);
		return;
	}
	n = ksyms__nr_syms(ks);
	ASSERT_TRUE(n > 1000, "many symbols");
	ASSERT_EQ(ksyms__nr_bad_lines(ks), (size_t)0, "no bad line in the real file");

	/* Where the time goes: the kernel formatting the text, or us. */
	t0 = now_ms();
	err = read_file_capped("/proc/kallsyms", (size_t)256 << 20, &buf, &len);
	t_read = now_ms() - t0;
	if (!ASSERT_OK(err, "read /proc/kallsyms"))
		goto out;
	t0 = now_ms();
	ks2 = ksyms__parse(buf, len);
	t_parse = now_ms() - t0;
	ksyms__free(ks2);
	text = buf;
	text_len = len;

	/*
	 * ~1000 random text lines of the file, read here with sscanf rather
	 * than our parser: each address must give that symbol or an alias.
	 */
	if (!ASSERT_OK_PTR(before, "read /proc/kallsyms before the load")) {
		free(text);
		goto out;
	}
	checked = same_name = changed = 0;
	for (i = 0; i < 200000 && checked < 1000; i++) {
		uint64_t addr;
		char type, name[512];
		const char *line;

		line = text + rnd() % text_len;
		while (line > text && line[-1] != '\n')
			line--;
		if (sscanf(line, "%" SCNx64 " %c %511s", &addr, &type, name) != 3 ||
		    !strchr("tTwW", type) || !strcmp(name, "_etext") || !strcmp(name, "_einittext"))
			continue;	/* the end markers cover nothing */
		s = ksyms__lookup(ks, addr);
		if ((!s || s->addr != addr || ksyms__lookup(ks, addr + s->size - 1) != s) &&
		    !line_in(before, before_len, line)) {
			changed++;	/* loaded (or moved) while we read */
			continue;
		}
		checked++;
		if (!ASSERT_OK_PTR(s, name))
			break;
		if (!ASSERT_EQ(s->addr, addr, name))
			break;
		same_name += !strcmp(s->name, name);
		if (!ASSERT_TRUE(ksyms__lookup(ks, addr + s->size - 1) == s, "last byte"))
			break;
	}
	ASSERT_EQ(checked, (size_t)1000, "symbols checked");
	if (changed)
		printf("     kallsyms: %zu sampled lines came or changed while it was loaded (other processes' BPF programs): not judged\n",
		       changed);
	free(text);

	t0 = now_ms();
	for (i = 0; i < nr_lookups; i++)
		hits += ksyms__lookup(ks, 0xffffffff81000000ull + rnd() % (64ull << 20)) != NULL;
	t_look = now_ms() - t0;
	printf("     kallsyms (this build): %zu symbols; load %.1f ms (read alone %.1f ms, parse alone %.1f ms); "
	       "lookup %.0f ns (%zu/%zu hit); %zu/%zu same name, others aliases\n",
	       n, t_load, t_read, t_parse, t_look * 1e6 / nr_lookups, (size_t)hits,
	       nr_lookups, same_name, checked);
out:
	free(before);
	ksyms__free(ks);
}

int main(void)
{
	RUN_TEST(test_parse_sorted_sizes);
	RUN_TEST(test_aliases_modules_interned);
	RUN_TEST(test_unsorted_merge);
	RUN_TEST(test_symbol_ends);
	RUN_TEST(test_end_markers);
	RUN_TEST(test_bpf_symbols);
	RUN_TEST(test_walk);
	RUN_TEST(test_bad_lines);
	RUN_TEST(test_nul_in_line);
	RUN_TEST(test_restricted_and_empty);
	RUN_TEST(test_unterminated_buffer);
	RUN_TEST(test_load_streaming);
	RUN_TEST(test_proc_kallsyms);
	return TEST_EXIT();
}
