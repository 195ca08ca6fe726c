// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym unit tests.  Fixtures are compiled from the C source in elfsym_fixture.h at test
 * time; the oracles are binutils (`nm -f sysv`, `readelf -lW/-SW/-n`), run on
 * the same files.  Hostile inputs are in test_elfsym_hostile.c.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elf/elfsym.h"
#include "base/util.h"
#include "test.h"
#include "elfsym_fixture.h"
#include "readelf_oracle.h"

TEST_SUITE("elfsym")

/* ---- oracle: symbols as binutils sees them ---- */

struct osym {
	uint64_t addr, size;
	char *name;
};

/* Distinct start addresses; span is the extent the reference rule gives. */
struct ogroup {
	uint64_t addr, size, span;
	size_t first, n;
};

struct oracle {
	struct osym *v;
	size_t n;
	struct ogroup *g;
	size_t ng;
};

static void oracle_free(struct oracle *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		free(o->v[i].name);
	free(o->v);
	free(o->g);
	memset(o, 0, sizeof(*o));
}

static int osym_cmp(const void *a, const void *b)
{
	const struct osym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Section names and offsets from `readelf -SW`: ET_REL symbols are relative to them. */
struct osec {
	char name[256];
	uint64_t addr, off, size;
};

static size_t read_sections(const char *path, struct osec *v, size_t max)
{
	unsigned long long addr, off, size;
	char stype[64];
	struct lines l;
	size_t i, n = 0;

	run_lines(&l, "readelf -SW '%s'", path);
	for (i = 0; i < l.n && n < max; i++) {
		const char *p = strchr(l.v[i], ']');

		if (strstr(l.v[i], "  [") && p &&
		    sscanf(p + 1, "%255s %63s %llx %llx %llx", v[n].name, stype, &addr, &off, &size) == 5) {
			v[n].addr = addr;
			v[n].off = off;
			v[n].size = size;
			n++;
		}
	}
	lines_free(&l);
	return n;
}

static const struct osec *section_find(const struct osec *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].name, name))
			return &v[i];
	}
	return NULL;
}

/*
 * Load `nm -f sysv --defined-only [-D]` of @path.  @funcs_only keeps FUNC
 * and IFUNC ("<OS specific>: 10") symbols, what elfsym calls functions.
 * Symbol versions (name@@VER) are cut: the string table has the bare name.
 */
static bool oracle_load(struct oracle *o, const char *path, bool dynamic, bool rel, bool funcs_only)
{
	static struct osec secs[128];
	size_t i, j, nsecs = 0;
	struct lines l;

	memset(o, 0, sizeof(*o));
	if (rel)
		nsecs = read_sections(path, secs, 128);
	if (!run_lines(&l, "nm -f sysv --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "", path)) {
		lines_free(&l);
		return false;
	}
	o->v = calloc(l.n ? l.n : 1, sizeof(*o->v));
	for (i = 0; o->v && i < l.n; i++) {
		char *f[7], *s = l.v[i], *at;
		uint64_t base = 0;
		int nf = 0;

		while (nf < 7 && (f[nf] = strsep(&s, "|")))
			nf++;
		if (nf < 7)
			continue;
		for (j = 0; j < 7; j++)
			trim(f[j]);
		if (funcs_only && strcmp(f[3], "FUNC") && !strstr(f[3], ": 10"))
			continue;
		if (!*f[0] || !*f[1])
			continue;
		if (rel) {
			const struct osec *sec = section_find(secs, nsecs, f[6]);

			if (!sec)
				continue;
			base = sec->off;
		}
		at = strchr(f[0], '@');
		if (at)
			*at = 0;
		o->v[o->n].addr = strtoull(f[1], NULL, 16) + base;
		o->v[o->n].size = *f[4] ? strtoull(f[4], NULL, 16) : 0;
		o->v[o->n].name = strdup(f[0]);
		o->n++;
	}
	lines_free(&l);
	if (!o->v)
		return false;
	qsort(o->v, o->n, sizeof(*o->v), osym_cmp);

	/*
	 * Reference rule, written from the contract rather than the code:
	 * aliases share one extent (the largest size); a size-0 function runs
	 * to the next function's start.
	 */
	o->g = calloc(o->n ? o->n : 1, sizeof(*o->g));
	if (!o->g)
		return false;
	for (i = 0; i < o->n; i = j) {
		struct ogroup *g = &o->g[o->ng++];

		g->addr = o->v[i].addr;
		g->first = i;
		for (j = i; j < o->n && o->v[j].addr == g->addr; j++) {
			if (o->v[j].size > g->size)
				g->size = o->v[j].size;
		}
		g->n = j - i;
		g->span = g->size ? g->size : (j < o->n ? o->v[j].addr - g->addr : 1);
	}
	return true;
}

static const struct osym *oracle_find(const struct oracle *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		if (!strcmp(o->v[i].name, name))
			return &o->v[i];
	}
	return NULL;
}

/* The group the reference rule says covers @a: the covering one that starts last. */
static const struct ogroup *oracle_ref(const struct oracle *o, uint64_t a)
{
	size_t lo = 0, hi = o->ng, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (o->g[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo--) {
		if (a - o->g[lo].addr < o->g[lo].span)
			return &o->g[lo];
	}
	return NULL;
}

static bool group_has(const struct oracle *o, const struct ogroup *g, const char *name)
{
	size_t i;

	for (i = g->first; i < g->first + g->n; i++) {
		if (!strcmp(o->v[i].name, name))
			return true;
	}
	return false;
}

/*
 * Probe every function's start, middle and last byte; elfsym must name the
 * function (or an alias) the reference rule names.  Returns the probe count.
 */
/*
 * PLT stubs objdump labels "<name@plt>:" in @path (.plt, .plt.sec and
 * .plt.got), and PLT0 ("<x@plt-0x10>:", or "<.plt>:" with IBT, its first
 * instruction a push; a static program's "<.plt>" is stubs): elfsym
 * names them too (elfplt.c; test_elfplt.c checks each one), on top of
 * nm's functions.
 */
static size_t plt_labels(const char *path)
{
	char cmd[PATH_MAX + 128], line[512];
	size_t n = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (strstr(line, "@plt>:\n") || strstr(line, "@plt-0x10>:\n"))
			n++;
		/* "<.plt>:" is PLT0 with IBT, or a static program's IRELATIVE stubs (elfplt names none there). */
		else if (strstr(line, " <.plt>:\n") && fgets(line, sizeof(line), fp) && strstr(line, "push"))
			n++;
	}
	if (fp)
		pclose(fp);
	return n;
}

static size_t oracle_check(const struct elfsym *es, const struct oracle *o, const char *label,
			   const char *path)
{
	size_t i, k, nprobe = 0, nfail = 0;

	for (i = 0; i < o->ng; i++) {
		const struct ogroup *g = &o->g[i];
		uint64_t probes[3] = { g->addr, g->addr + g->size / 2, g->addr + g->size - 1 };

		for (k = 0; k < (g->size ? 3 : 1); k++) {
			const struct ogroup *want = oracle_ref(o, probes[k]);
			const struct elfsym_sym *got = elfsym__lookup(es, probes[k]);

			nprobe++;
			if (want && got && got->addr == want->addr && group_has(o, want, got->name))
				continue;
			if (nfail++ < 8)
				test__fail_msg(__FILE__, __LINE__, "%s: 0x%llx: got %s@0x%llx, expected %s@0x%llx",
					       label, (unsigned long long)probes[k],
					       got ? got->name : "(none)",
					       got ? (unsigned long long)got->addr : 0ULL,
					       want ? o->v[want->first].name : "(none)",
					       want ? (unsigned long long)want->addr : 0ULL);
		}
	}
	ASSERT_EQ(nfail, (size_t)0, "lookups disagreeing with nm");
	ASSERT_EQ(elfsym__nr_syms(es), o->ng + plt_labels(path),
		  "functions kept vs distinct nm function addresses + objdump's PLT stubs");
	return nprobe;
}

static void check_fixture_oracle(enum fx_id id, bool dynamic)
{
	struct oracle o;
	char path[PATH_MAX];
	struct elfsym *es;
	size_t nprobe;

	if (!fixture(id, path, sizeof(path)))
		return;
	if (!ASSERT_TRUE(oracle_load(&o, path, dynamic, id == FX_REL, true), "nm output"))
		return;
	es = open_ok(path);
	if (es && ASSERT_TRUE(o.ng >= (id == FX_SO_STRIPPED ? 6u : 12u), "nm found the fixture's functions")) {
		nprobe = oracle_check(es, &o, fixtures[id].file, path);
		ASSERT_TRUE(nprobe >= o.ng, "probes run");
	}
	elfsym__free(es);
	oracle_free(&o);
}

static void test_oracle_pie(void) { check_fixture_oracle(FX_PIE, false); }
static void test_oracle_nopie(void) { check_fixture_oracle(FX_NOPIE, false); }
static void test_oracle_static(void) { check_fixture_oracle(FX_STATIC, false); }
static void test_oracle_so(void) { check_fixture_oracle(FX_SO, false); }
static void test_oracle_so_stripped(void) { check_fixture_oracle(FX_SO_STRIPPED, true); }
static void test_oracle_rel(void) { check_fixture_oracle(FX_REL, false); }
static void test_oracle_elf32(void) { check_fixture_oracle(FX_32, false); }

static const char *first_existing(const char *const *paths)
{
	for (; *paths; paths++) {
		if (access(*paths, R_OK) == 0)
			return *paths;
	}
	return NULL;
}

/* A big stripped system library: .dynsym only, thousands of functions. */
static void check_system_lib(const char *const *candidates, size_t min_probes)
{
	const char *path = first_existing(candidates);
	struct elfsym *es;
	struct oracle o;
	size_t nprobe;

	if (!have_tool("nm")) {
		test__skip("'nm' not found");
		return;
	}
	if (!path) {
		test__skip("no %s here", candidates[0]);
		return;
	}
	if (!ASSERT_TRUE(oracle_load(&o, path, true, false, true), "nm -D output"))
		return;
	es = open_ok(path);
	if (es) {
		nprobe = oracle_check(es, &o, path, path);
		if (ASSERT_TRUE(nprobe >= min_probes, "thousands of probes"))
			printf("     %s: %zu functions, %zu probes agree with nm\n", path, o.ng, nprobe);
	}
	elfsym__free(es);
	oracle_free(&o);
}

static void test_oracle_libc(void)
{
	static const char *const libc[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					    "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", NULL };

	check_system_lib(libc, 3000);
}

static void test_oracle_libllvm(void)
{
	static const char *const llvm[] = { "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
					    "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", NULL };

	check_system_lib(llvm, 30000);
}

/* ---- exact answers on the fixture's hand-made symbols ---- */

/* The alias rule of elfsym.h, on every kind of fixture. */
static void test_aliases(void)
{
	static const enum fx_id ids[] = { FX_PIE, FX_NOPIE, FX_STATIC, FX_SO, FX_SO_STRIPPED, FX_REL, FX_32 };
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		bool dyn = ids[i] == FX_SO_STRIPPED;
		const struct osym *t, *b, *w, *r;
		char path[PATH_MAX];
		struct elfsym *es;
		struct oracle o;

		if (!fixture(ids[i], path, sizeof(path)))
			return;
		if (!ASSERT_TRUE(oracle_load(&o, path, dyn, ids[i] == FX_REL, false), "nm output"))
			return;
		es = open_ok(path);
		t = oracle_find(&o, "fx_target_long_name");
		b = oracle_find(&o, "fx_same_b");
		w = oracle_find(&o, "fx_weak_long");
		r = oracle_find(&o, "fx_ifunc_resolver");
		if (es && ASSERT_TRUE(t && b && w, path)) {
			/* fx_a is weak and sorts first: binding beats length and bytes. */
			lookup_is(es, t->addr, "fx_g", "global, shortest (weak fx_a and local fx_l lose)");
			lookup_is(es, t->addr + 1, "fx_g", "same answer inside the function");
			lookup_is(es, b->addr, "fx_same_a", "two globals of one length: byte order");
			lookup_is(es, w->addr, "fx_weak_long", "weak beats a shorter local");
		}
		/* The resolver is local; the IFUNC symbol sharing its address is global. */
		if (es && r)
			lookup_is(es, r->addr, "fx_ifunc", "STT_GNU_IFUNC kept and preferred");
		elfsym__free(es);
		oracle_free(&o);
	}
}

/* Nested functions, a size-0 function and a NOTYPE label (from the asm block). */
static void test_nested_zero_notype(void)
{
	static const enum fx_id ids[] = { FX_PIE, FX_NOPIE, FX_STATIC, FX_SO, FX_REL, FX_32 };
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct osym *out, *in, *zero, *nt, *after, *sz;
		const struct elfsym_sym *s;
		char path[PATH_MAX];
		struct elfsym *es;
		struct oracle o;

		if (!fixture(ids[i], path, sizeof(path)))
			return;
		if (!ASSERT_TRUE(oracle_load(&o, path, false, ids[i] == FX_REL, false), "nm output"))
			return;
		es = open_ok(path);
		out = oracle_find(&o, "fx_outer");
		in = oracle_find(&o, "fx_inner");
		zero = oracle_find(&o, "fx_zero");
		nt = oracle_find(&o, "fx_notype");
		after = oracle_find(&o, "fx_after");
		sz = oracle_find(&o, "fx_sz");
		if (es && ASSERT_TRUE(out && in && zero && nt && after, path) &&
		    ASSERT_EQ(in->addr - out->addr, (uint64_t)16, "fixture layout") &&
		    ASSERT_EQ(zero->size, (uint64_t)0, "fixture: fx_zero has st_size 0")) {
			lookup_is(es, out->addr + 15, "fx_outer", "before the nested function");
			lookup_is(es, in->addr, "fx_inner", "nested function: innermost wins");
			lookup_is(es, in->addr + 15, "fx_inner", "last byte of the nested function");
			lookup_is(es, in->addr + 16, "fx_outer", "past the nested one: the outer again");
			lookup_is(es, out->addr + out->size - 1, "fx_outer", "last byte of the outer");
			lookup_is(es, nt->addr, "fx_zero", "a NOTYPE label is not a function");
			lookup_is(es, after->addr, "fx_after", "the next function");
			s = elfsym__lookup(es, zero->addr);
			if (ASSERT_OK_PTR(s, "fx_zero"))
				ASSERT_EQ(s->size, after->addr - zero->addr, "size 0 fixed up to the next start");
			/* fx_sz (4 bytes) names the group, which spans the 16 of its alias. */
			if (ASSERT_OK_PTR(sz, "fx_sz") && ASSERT_EQ(sz->size, (uint64_t)4, "fixture: fx_sz size"))
				lookup_is(es, sz->addr + 15, "fx_sz", "aliases cover the largest size");
		}
		elfsym__free(es);
		oracle_free(&o);
	}
}

/*
 * crti's _init has st_size 0 and is alone in .init, and the next function
 * is far away in .text: its fixed-up end is the end of .init.
 */
static void test_zero_size_section_end(void)
{
	static const enum fx_id ids[] = { FX_PIE, FX_NOPIE, FX_STATIC, FX_SO };
	static struct osec secs[128];
	const struct elfsym_sym *s;
	const struct osym *init;
	const struct osec *sec;
	char path[PATH_MAX];
	struct elfsym *es;
	struct oracle o;
	size_t i, nsecs;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (!fixture(ids[i], path, sizeof(path)))
			return;
		if (!ASSERT_TRUE(oracle_load(&o, path, false, false, true), "nm output"))
			return;
		nsecs = read_sections(path, secs, 128);
		sec = section_find(secs, nsecs, ".init");
		init = oracle_find(&o, "_init");
		es = open_ok(path);
		if (es && ASSERT_TRUE(sec && init, "fixture has .init and _init") &&
		    ASSERT_EQ(init->size, (uint64_t)0, "fixture: _init has st_size 0") &&
		    ASSERT_EQ(init->addr, sec->addr, "fixture: _init starts .init")) {
			s = elfsym__lookup(es, init->addr);
			if (ASSERT_OK_PTR(s, "_init"))
				ASSERT_EQ(s->size, sec->size, "size 0 fixed up to the end of its section");
			lookup_is(es, sec->addr + sec->size - 1, "_init", "last byte of .init");
			s = elfsym__lookup(es, sec->addr + sec->size);
			ASSERT_TRUE(!s || strcmp(s->name, "_init"), "not past the end of .init");
		}
		elfsym__free(es);
		oracle_free(&o);
	}
}

/* strip --strip-all leaves .dynsym: exported names still resolve, statics do not. */
static void test_stripped_so(void)
{
	char full[PATH_MAX], stripped[PATH_MAX];
	const struct osym *st, *alpha;
	const struct elfsym_sym *s;
	struct elfsym *es = NULL;
	struct oracle o;
	struct lines l;

	if (!fixture(FX_SO, full, sizeof(full)) || !fixture(FX_SO_STRIPPED, stripped, sizeof(stripped)))
		return;
	run_lines(&l, "readelf -SW '%s' | grep -c ' .symtab '", stripped);
	ASSERT_TRUE(l.n == 1 && !strcmp(l.v[0], "0"), "fixture really has no .symtab");
	lines_free(&l);
	/* Same link command, so the same addresses. */
	if (!ASSERT_TRUE(oracle_load(&o, full, false, false, true), "nm output"))
		return;
	st = oracle_find(&o, "fx_static_one");
	alpha = oracle_find(&o, "fx_global_alpha");
	es = open_ok(stripped);
	if (es && ASSERT_TRUE(st && alpha, "fixture symbols")) {
		lookup_is(es, alpha->addr, "fx_global_alpha", "exported function from .dynsym");
		s = elfsym__lookup(es, st->addr);
		ASSERT_TRUE(!s || strcmp(s->name, "fx_static_one"), "a static function is gone");
	}
	elfsym__free(es);
	oracle_free(&o);
}

/*
 * The whole path of design.md section 2: a sample in a mapping of the text
 * segment (mapped from a non-zero, page-aligned offset) back to its name.
 */
static void check_mapping(enum fx_id id)
{
	const uint64_t page = 4096, base = id == FX_NOPIE ? 0 : 0x7f3a12340000ULL;
	uint64_t vma_start, pgoff, ip, off, vaddr;
	const struct oload *text;
	struct oload loads[32];
	const struct osym *f;
	char path[PATH_MAX];
	struct elfsym *es;
	struct oracle o;
	size_t n;

	if (!fixture(id, path, sizeof(path)))
		return;
	n = read_loads(path, loads, 32);
	if (!ASSERT_TRUE(oracle_load(&o, path, false, false, true), "nm output"))
		return;
	f = oracle_find(&o, "fx_global_beta");
	text = f ? load_of(loads, n, f->addr, false) : NULL;
	es = open_ok(path);
	if (es && ASSERT_TRUE(text != NULL, "PT_LOAD of fx_global_beta") &&
	    ASSERT_TRUE(text->off >= page, "text mapped from a non-zero offset")) {
		/* What the loader does: mmap(base + vaddr & ~page, .., offset & ~page). */
		vma_start = base + (text->vaddr & ~(page - 1));
		pgoff = text->off / page;
		ip = base + f->addr + f->size / 2;
		off = ip - vma_start + pgoff * page;
		if (ASSERT_OK(elfsym__offset_to_vaddr(es, off, &vaddr), "offset_to_vaddr")) {
			ASSERT_EQ(vaddr, f->addr + f->size / 2, "vaddr");
			lookup_is(es, vaddr, "fx_global_beta", "sample to name");
		}
	}
	elfsym__free(es);
	oracle_free(&o);
}

static void test_mapping_pie(void) { check_mapping(FX_PIE); }
static void test_mapping_nopie(void) { check_mapping(FX_NOPIE); }
static void test_mapping_so(void) { check_mapping(FX_SO); }

static bool copy_file(const char *from, const char *to)
{
	char cmd[2 * PATH_MAX + 32];

	if (snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to) >= (int)sizeof(cmd))
		return false;
	return system(cmd) == 0;
}

/* Nothing refers to the file or the fd after open: truncate both away. */
static void test_lifetime(void)
{
	char path[PATH_MAX], copy[PATH_MAX + 16];
	const struct osym *alpha;
	struct elfsym *es;
	struct oracle o;
	int fd;

	elfsym__free(NULL);
	if (!fixture(FX_NOPIE, path, sizeof(path)))
		return;
	snprintf(copy, sizeof(copy), "%s.copy", path);
	if (!ASSERT_TRUE(copy_file(path, copy), "cp") ||
	    !ASSERT_TRUE(oracle_load(&o, path, false, false, true), "nm output"))
		return;
	alpha = oracle_find(&o, "fx_global_alpha");
	fd = open(copy, O_RDWR | O_CLOEXEC);
	if (ASSERT_TRUE(fd >= 0, "open copy") && ASSERT_OK_PTR(alpha, "fx_global_alpha")) {
		es = elfsym__open_fd(fd, copy, NULL);
		ASSERT_OK(ftruncate(fd, 0), "truncate");
		close(fd);
		unlink(copy);
		if (ASSERT_OK_PTR(es, "open_fd"))
			lookup_is(es, alpha->addr + 1, "fx_global_alpha", "lookup after truncate+close");
		elfsym__free(es);
	}
	oracle_free(&o);
}

int main(void)
{
	if (getenv("BPFSYM_DEBUG"))
		log_set_level(LOG_DEBUG);
	RUN_TEST(test_oracle_pie);
	RUN_TEST(test_oracle_nopie);
	RUN_TEST(test_oracle_static);
	RUN_TEST(test_oracle_so);
	RUN_TEST(test_oracle_so_stripped);
	RUN_TEST(test_oracle_rel);
	RUN_TEST(test_oracle_elf32);
	RUN_TEST(test_oracle_libc);
	RUN_TEST(test_oracle_libllvm);
	RUN_TEST(test_aliases);
	RUN_TEST(test_nested_zero_notype);
	RUN_TEST(test_zero_size_section_end);
	RUN_TEST(test_stripped_so);
	RUN_TEST(test_mapping_pie);
	RUN_TEST(test_mapping_nopie);
	RUN_TEST(test_mapping_so);
	RUN_TEST(test_lifetime);
	fixtures_cleanup();
	return TEST_EXIT();
}
