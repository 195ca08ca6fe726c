// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym on relocatable objects (ET_REL .o files): a function's "address"
 * is its file offset, sh_offset of its section + st_value, so code copied
 * from the file into anonymous memory is looked up by its offset.  Oracles:
 * `readelf -SW` (section offsets, types, flags) and `nm -f sysv` (values,
 * types, sections), on fixtures from elfsym_fixture.h, one of them with a
 * section per function.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include "symbolize/elf/elfsym.h"
#include "base/util.h"
#include "test.h"
#include "elfsym_fixture.h"

TEST_SUITE("elfsym_rel")

#define MAX_SECS	256
#define MAX_FUNCS	256

struct rsec {
	char name[128], type[32], flags[16];
	uint64_t off, size;
};

struct rfunc {
	char name[128];
	uint64_t addr, size;	/* addr: the section's offset + value */
};

/* `readelf -SW`: "[Nr] Name Type Address Off Size ES Flg ..." */
static size_t read_secs(const char *path, struct rsec *v, size_t max)
{
	char line[512], cmd[PATH_MAX + 32];
	unsigned long long addr, off, size, es;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		const char *b = strchr(line, ']');
		struct rsec *s = &v[n];

		if (!strstr(line, "  [") || !b)
			continue;
		s->flags[0] = 0;
		if (sscanf(b + 1, "%127s %31s %llx %llx %llx %llx %15s", s->name, s->type,
			   &addr, &off, &size, &es, s->flags) < 6)
			continue;
		/* A section without flags: the link field came where they go. */
		if (s->flags[0] >= '0' && s->flags[0] <= '9')
			s->flags[0] = 0;
		s->off = off;
		s->size = size;
		n++;
	}
	pclose(p);
	return n;
}

static const struct rsec *sec_by_name(const struct rsec *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].name, name))
			return &v[i];
	}
	return NULL;
}

static bool is_code(const struct rsec *s)
{
	return !strcmp(s->type, "PROGBITS") && strchr(s->flags, 'X');
}

/* `nm -f sysv --defined-only`: "name|value|class|type|size|line|section" */
static size_t read_funcs(const char *path, const struct rsec *secs, size_t nsecs,
			 struct rfunc *v, size_t max)
{
	char line[512], cmd[PATH_MAX + 64];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -f sysv --defined-only '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		char *f[7], *s = line;
		const struct rsec *sec;
		int nf = 0;

		while (nf < 7 && (f[nf] = strsep(&s, "|")))
			nf++;
		if (nf < 7 || (!strstr(f[3], "FUNC") && !strstr(f[3], ": 10")))
			continue;
		f[0][strcspn(f[0], " ")] = 0;
		f[6][strcspn(f[6], " \n")] = 0;
		sec = sec_by_name(secs, nsecs, f[6] + strspn(f[6], " "));
		if (!sec || !*f[0])
			continue;
		snprintf(v[n].name, sizeof(v[n].name), "%s", f[0]);
		v[n].addr = sec->off + strtoull(f[1], NULL, 16);
		v[n].size = strtoull(f[4], NULL, 16);
		n++;
	}
	pclose(p);
	return n;
}

/* Another function nm lists at @addr: aliases fold into one entry. */
static bool alias_at(const struct rfunc *v, size_t n, uint64_t addr, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].addr == addr && !strcmp(v[i].name, name))
			return true;
	}
	return false;
}

/*
 * Every function nm lists is found at its section's offset + value, under
 * its name or an alias's, over its whole size; offsets translate as
 * themselves exactly inside the code sections.
 */
static void check_rel(enum fx_id id, size_t min_code_secs)
{
	static struct rsec secs[MAX_SECS];
	static struct rfunc funcs[MAX_FUNCS];
	size_t nsecs, nfuncs, i, ncode = 0, found = 0;
	const struct elfsym_sym *s;
	char path[PATH_MAX];
	struct elfsym *es;
	struct stat st;
	uint64_t v;

	if (!fixture(id, path, sizeof(path)) || !ASSERT_OK(stat(path, &st), "stat"))
		return;
	nsecs = read_secs(path, secs, MAX_SECS);
	nfuncs = read_funcs(path, secs, nsecs, funcs, MAX_FUNCS);
	if (!ASSERT_TRUE(nsecs > 3 && nfuncs > 10, "readelf/nm output"))
		return;
	es = elfsym__open(path, NULL);
	if (!ASSERT_OK_PTR(es, "open"))
		return;
	ASSERT_EQ(elfsym__type(es), ET_REL, "e_type");
	for (i = 0; i < nfuncs; i++) {
		const struct rfunc *f = &funcs[i];

		s = elfsym__lookup(es, f->addr);
		if (!ASSERT_OK_PTR(s, f->name) || !ASSERT_EQ(s->addr, f->addr, f->name) ||
		    !ASSERT_TRUE(alias_at(funcs, nfuncs, f->addr, s->name), f->name))
			break;
		if (f->size > 1)
			ASSERT_TRUE(elfsym__lookup(es, f->addr + f->size - 1) != NULL, "last byte");
		if (ASSERT_OK(elfsym__offset_to_vaddr(es, f->addr, &v), "offset_to_vaddr"))
			ASSERT_EQ(v, f->addr, "identity");
		found++;
	}
	for (i = 0; i < nsecs; i++) {
		const struct rsec *sc = &secs[i];
		int want = is_code(sc) && sc->size ? 0 : -ENOENT;

		ncode += want == 0;
		if (!sc->size || !strcmp(sc->type, "NOBITS") || !strcmp(sc->type, "NULL"))
			continue;
		ASSERT_EQ(elfsym__offset_to_vaddr(es, sc->off, &v), want, sc->name);
		ASSERT_EQ(elfsym__offset_to_vaddr(es, sc->off + sc->size - 1, &v), want, sc->name);
		ASSERT_EQ(elfsym__vaddr_to_offset(es, sc->off, &v), want, sc->name);
	}
	ASSERT_TRUE(ncode >= min_code_secs, "code sections");
	ASSERT_EQ(elfsym__offset_to_vaddr(es, 0, &v), -ENOENT, "the ELF header");
	ASSERT_EQ(elfsym__offset_to_vaddr(es, (uint64_t)st.st_size, &v), -ENOENT, "end of file");
	ASSERT_EQ(elfsym__offset_to_vaddr(es, UINT64_MAX, &v), -ENOENT, "2^64-1");
	printf("     %s: %zu functions in %zu code sections\n", path, found, ncode);
	elfsym__free(es);
}

static void test_rel_one_text(void) { check_rel(FX_REL, 1); }
static void test_rel_function_sections(void) { check_rel(FX_REL_SECS, 8); }

/*
 * The bytes at a function's offset in the file are its code, what a copy
 * into memory holds: fx_outer (asm, in .text) is 47 nops and a ret.
 */
static void test_rel_bytes(void)
{
	static struct rsec secs[MAX_SECS];
	static struct rfunc funcs[MAX_FUNCS];
	const struct rfunc *outer = NULL;
	unsigned char code[48];
	char path[PATH_MAX];
	struct elfsym *es;
	size_t n, i;
	FILE *f;

	if (!fixture(FX_REL_SECS, path, sizeof(path)))
		return;
	n = read_funcs(path, secs, read_secs(path, secs, MAX_SECS), funcs, MAX_FUNCS);
	for (i = 0; i < n; i++) {
		if (!strcmp(funcs[i].name, "fx_outer"))
			outer = &funcs[i];
	}
	if (!ASSERT_OK_PTR(outer, "fx_outer in nm") || !ASSERT_EQ(outer->size, (uint64_t)48, "its size"))
		return;
	es = elfsym__open(path, NULL);
	if (!ASSERT_OK_PTR(es, "open"))
		return;
	lookup_is(es, outer->addr + 20, "fx_inner", "nested, by offset");
	lookup_is(es, outer->addr + 40, "fx_outer", "by offset");
	f = fopen(path, "rb");
	if (ASSERT_OK_PTR(f, "fopen") &&
	    ASSERT_OK(fseek(f, (long)outer->addr, SEEK_SET), "seek") &&
	    ASSERT_EQ(fread(code, 1, sizeof(code), f), sizeof(code), "read")) {
		ASSERT_EQ(code[0], (unsigned char)0x90, "first byte: nop");
		ASSERT_EQ(code[47], (unsigned char)0xc3, "last byte: ret");
	}
	if (f)
		fclose(f);
	elfsym__free(es);
}

int main(void)
{
	RUN_TEST(test_rel_one_text);
	RUN_TEST(test_rel_function_sections);
	RUN_TEST(test_rel_bytes);
	fixtures_cleanup();
	return TEST_EXIT();
}
