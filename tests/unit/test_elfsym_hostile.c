// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym on hostile input: missing, non-ELF and empty files, and real
 * fixtures (elfsym_fixture.h) truncated or patched: offsets and sizes past
 * the end, absurd counts, bad string tables, lying notes, caps, random
 * mutations.  Each must fail cleanly (ENOEXEC, E2BIG) or give a usable
 * result; ASan/UBSan watch the rest.
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

TEST_SUITE("elfsym")

static void expect_fail(const char *path, int want_errno, const struct elfsym_opts *opts, const char *what)
{
	struct elfsym *es;

	errno = 0;
	es = elfsym__open(path, opts);
	if (ASSERT_NULL(es, what))
		ASSERT_EQ(errno, want_errno, what);
	elfsym__free(es);
}

static bool write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = false;
	return ok;
}

static void test_not_elf(void)
{
	char path[PATH_MAX];

	if (!setup())
		return;
	expect_fail("/nonexistent/elfsym-test", ENOENT, NULL, "missing file");
	expect_fail(tmpdir, ENOEXEC, NULL, "a directory");
	expect_fail("/dev/null", ENOEXEC, NULL, "a character device");
	path_in_tmp(path, sizeof(path), "empty");
	if (ASSERT_TRUE(write_file(path, "", 0), "write"))
		expect_fail(path, ENOEXEC, NULL, "empty file");
	path_in_tmp(path, sizeof(path), "text");
	if (ASSERT_TRUE(write_file(path, "#!/bin/sh\necho hi\n", 18), "write"))
		expect_fail(path, ENOEXEC, NULL, "a script");
	path_in_tmp(path, sizeof(path), "magic-only");
	if (ASSERT_TRUE(write_file(path, ELFMAG "\2\1\1", 7), "write"))
		expect_fail(path, ENOEXEC, NULL, "ELF magic only");
}

/* ---- hostile input: a real 64-bit fixture, truncated or patched ---- */

struct img {
	uint8_t *buf;
	size_t len;
	char out[PATH_MAX + 16];
};

static bool img_load(struct img *im)
{
	char path[PATH_MAX];
	struct stat st;
	FILE *f;

	memset(im, 0, sizeof(*im));
	if (!fixture(FX_NOPIE, path, sizeof(path)) || !ASSERT_OK(stat(path, &st), "stat"))
		return false;
	im->len = (size_t)st.st_size;
	im->buf = malloc(im->len);
	f = fopen(path, "r");
	if (!ASSERT_TRUE(im->buf && f && fread(im->buf, 1, im->len, f) == im->len, "read fixture")) {
		if (f)
			fclose(f);
		free(im->buf);
		return false;
	}
	fclose(f);
	snprintf(im->out, sizeof(im->out), "%s.hostile", path);
	return ASSERT_EQ(im->buf[EI_CLASS], ELFCLASS64, "64-bit fixture");
}

static Elf64_Ehdr *img_eh(struct img *im)
{
	return (Elf64_Ehdr *)im->buf;
}

static Elf64_Shdr *img_sh(struct img *im, size_t i)
{
	return (Elf64_Shdr *)(im->buf + img_eh(im)->e_shoff) + i;
}

static Elf64_Phdr *img_ph(struct img *im, size_t i)
{
	return (Elf64_Phdr *)(im->buf + img_eh(im)->e_phoff) + i;
}

static size_t img_sec(struct img *im, uint32_t type)
{
	size_t i;

	for (i = 1; i < img_eh(im)->e_shnum; i++) {
		if (img_sh(im, i)->sh_type == type)
			return i;
	}
	return 0;
}

static Elf64_Sym *img_sym(struct img *im, const char *name)
{
	Elf64_Shdr *sym = img_sh(im, img_sec(im, SHT_SYMTAB)), *str = img_sh(im, sym->sh_link);
	Elf64_Sym *s = (Elf64_Sym *)(im->buf + sym->sh_offset);
	size_t i;

	for (i = 0; i < sym->sh_size / sizeof(*s); i++) {
		if (s[i].st_name < str->sh_size &&
		    !strcmp((char *)im->buf + str->sh_offset + s[i].st_name, name))
			return &s[i];
	}
	return NULL;
}

/* Write @len bytes of a patched copy of @im, then restore the original bytes. */
static struct elfsym *img_open(struct img *im, const uint8_t *orig, size_t len,
			       const struct elfsym_opts *opts)
{
	struct elfsym *es = NULL;

	if (ASSERT_TRUE(write_file(im->out, im->buf, len), "write hostile file"))
		es = elfsym__open(im->out, opts);
	memcpy(im->buf, orig, im->len);
	return es;
}

static void img_expect_fail(struct img *im, const uint8_t *orig, size_t len, int want, const char *what)
{
	struct elfsym *es;

	errno = 0;
	es = img_open(im, orig, len, NULL);
	if (ASSERT_NULL(es, what))
		ASSERT_EQ(errno, want, what);
	elfsym__free(es);
}

static void test_truncated(void)
{
	struct img im;
	uint8_t *orig;
	size_t cuts[6], i;
	char what[64];

	if (!img_load(&im))
		return;
	orig = malloc(im.len);
	if (ASSERT_OK_PTR(orig, "malloc")) {
		memcpy(orig, im.buf, im.len);
		cuts[0] = 8;
		cuts[1] = 64;
		cuts[2] = 256;
		cuts[3] = img_eh(&im)->e_phoff + img_eh(&im)->e_phnum * sizeof(Elf64_Phdr) / 2;
		cuts[4] = im.len * 3 / 4;
		cuts[5] = im.len - 1;
		for (i = 0; i < 6; i++) {
			snprintf(what, sizeof(what), "truncated at %zu of %zu bytes", cuts[i], im.len);
			img_expect_fail(&im, orig, cuts[i], ENOEXEC, what);
		}
	}
	free(orig);
	free(im.buf);
}

static void test_hostile_headers(void)
{
	Elf64_Ehdr *eh;
	struct img im;
	uint8_t *orig;

	if (!img_load(&im))
		return;
	orig = malloc(im.len);
	if (!ASSERT_OK_PTR(orig, "malloc"))
		goto out;
	memcpy(orig, im.buf, im.len);
	eh = img_eh(&im);
	eh->e_shoff = im.len + 4096;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shoff past EOF");
	eh->e_shoff = UINT64_MAX - 8;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shoff near 2^64");
	eh->e_shentsize = 65535;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shentsize 65535");
	eh->e_shnum = 0xfeff;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shnum past EOF");
	eh->e_shstrndx = eh->e_shnum + 3;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shstrndx out of range");
	eh->e_shstrndx = SHN_XINDEX;
	img_sh(&im, 0)->sh_link = 50000;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "SHN_XINDEX to an out-of-range index");
	eh->e_shoff = 0;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_shnum without e_shoff");
	eh->e_phentsize = 65535;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_phentsize 65535");
	eh->e_phoff = im.len - 8;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "e_phoff past EOF");
out:
	free(orig);
	free(im.buf);
}

static void test_hostile_symtab(void)
{
	size_t symtab, strtab, text, base_nr;
	Elf64_Sym *beta, *alpha;
	uint64_t beta_addr, text_end;
	const struct elfsym_sym *s;
	struct elfsym *es;
	struct img im;
	uint8_t *orig;

	if (!img_load(&im))
		return;
	orig = malloc(im.len);
	symtab = img_sec(&im, SHT_SYMTAB);
	beta = img_sym(&im, "fx_global_beta");
	alpha = img_sym(&im, "fx_global_alpha");
	if (!ASSERT_OK_PTR(orig, "malloc") || !ASSERT_TRUE(symtab && beta && alpha, "fixture symtab"))
		goto out;
	memcpy(orig, im.buf, im.len);
	strtab = img_sh(&im, symtab)->sh_link;
	text = beta->st_shndx;
	beta_addr = beta->st_value;
	text_end = img_sh(&im, text)->sh_addr + img_sh(&im, text)->sh_size;

	es = img_open(&im, orig, im.len, NULL);
	if (!ASSERT_OK_PTR(es, "unpatched copy"))
		goto out;
	base_nr = elfsym__nr_syms(es);
	elfsym__free(es);

	img_sh(&im, symtab)->sh_size = 1ULL << 63;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "symtab sh_size 2^63");
	img_sh(&im, symtab)->sh_offset = im.len + 1;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "symtab past EOF");
	img_sh(&im, symtab)->sh_entsize = 7;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "symtab sh_entsize 7");
	img_sh(&im, symtab)->sh_link = 60000;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "symtab sh_link out of range");
	img_sh(&im, symtab)->sh_link = (Elf64_Word)text;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "symtab linked to .text");
	img_sh(&im, strtab)->sh_size = im.len;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "strtab past EOF");

	/* Bad single symbols are dropped, the rest of the file stays usable. */
	beta->st_name = (Elf64_Word)img_sh(&im, strtab)->sh_size + 100;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "name past strtab end")) {
		ASSERT_EQ(elfsym__nr_syms(es), base_nr - 1, "only that symbol dropped");
		ASSERT_NULL(elfsym__lookup(es, beta_addr), "dropped symbol");
		lookup_is(es, alpha->st_value, "fx_global_alpha", "others intact");
	}
	elfsym__free(es);

	/* The table now ends inside "fx_global_beta": no terminating NUL. */
	img_sh(&im, strtab)->sh_size = beta->st_name + 5;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "strtab cut inside a name")) {
		s = elfsym__lookup(es, beta_addr);
		ASSERT_NULL(s, "name running off the table");
		ASSERT_TRUE(elfsym__nr_syms(es) < base_nr, "names past the cut dropped");
	}
	elfsym__free(es);

	/* Forged, not truncated: still refused, we do not guess which parts hold. */
	img_sh(&im, img_sec(&im, SHT_PROGBITS))->sh_offset = im.len;
	img_expect_fail(&im, orig, im.len, ENOEXEC, "an unrelated section past EOF");

	im.buf[img_sh(&im, strtab)->sh_offset + img_sh(&im, strtab)->sh_size - 1] = 'X';
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "strtab's last NUL overwritten"))
		ASSERT_TRUE(elfsym__nr_syms(es) + 1 >= base_nr, "at most the last name lost");
	elfsym__free(es);

	beta->st_shndx = 0xfe00;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "st_shndx out of range"))
		ASSERT_NULL(elfsym__lookup(es, beta_addr), "symbol of a missing section");
	elfsym__free(es);

	beta->st_shndx = SHN_ABS;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "SHN_ABS"))
		ASSERT_NULL(elfsym__lookup(es, beta_addr), "SHN_ABS is not code");
	elfsym__free(es);

	beta->st_size = UINT64_MAX;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "st_size 2^64-1")) {
		s = elfsym__lookup(es, beta_addr);
		if (ASSERT_OK_PTR(s, "huge symbol"))
			ASSERT_EQ(s->addr + s->size, text_end, "clamped to its section");
		lookup_is(es, alpha->st_value, "fx_global_alpha", "later functions still win");
	}
	elfsym__free(es);
out:
	free(orig);
	free(im.buf);
}

static void test_hostile_segments_notes(void)
{
	static const struct { int field; uint32_t val; const char *what; } lies[] = {
		{ 1, 0xffffffffu, "descsz 2^32-1" },
		{ 1, 0, "descsz 0" },
		{ 1, 200, "descsz past the note area" },
		{ 0, 0xfffffffdu, "namesz 2^32-3" },
		{ 0, 5, "namesz 5: misaligned, wrong name" },
	};
	size_t i, note = 0, text = 0, bid_sec, n, len;
	uint8_t bid[64];
	uint32_t *nhdr;
	const uint8_t *got;
	struct elfsym *es;
	struct img im;
	uint8_t *orig;
	uint64_t v;

	if (!img_load(&im))
		return;
	orig = malloc(im.len);
	if (!ASSERT_OK_PTR(orig, "malloc"))
		goto out;
	memcpy(orig, im.buf, im.len);
	bid_sec = 0;
	for (i = 1; i < img_eh(&im)->e_shnum; i++) {
		Elf64_Shdr *sh = img_sh(&im, i);
		uint32_t *h = (uint32_t *)(im.buf + sh->sh_offset);

		if (sh->sh_type == SHT_NOTE && h[2] == NT_GNU_BUILD_ID)
			bid_sec = i;
	}
	for (i = 0; i < img_eh(&im)->e_phnum; i++) {
		if (img_ph(&im, i)->p_type == PT_NOTE &&
		    img_ph(&im, i)->p_offset == img_sh(&im, bid_sec)->sh_offset)
			note = i;
		if (img_ph(&im, i)->p_type == PT_LOAD && (img_ph(&im, i)->p_flags & PF_X))
			text = i;
	}
	if (!ASSERT_TRUE(bid_sec && note && text, "fixture has a build-id note and a text segment"))
		goto out;
	es = img_open(&im, orig, im.len, NULL);
	if (!ASSERT_OK_PTR(es, "unpatched copy"))
		goto out;
	got = elfsym__build_id(es, &len);
	n = len;
	if (ASSERT_EQ(len, (size_t)20, "build-id length"))
		memcpy(bid, got, len);
	elfsym__free(es);

	/* A segment claiming more than the file: ignored, symbols still usable. */
	img_ph(&im, text)->p_filesz = 1ULL << 63;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "PT_LOAD p_filesz 2^63")) {
		ASSERT_EQ(elfsym__offset_to_vaddr(es, img_ph(&im, text)->p_offset, &v),
			  -ENOENT, "no translation through the bogus segment");
		ASSERT_TRUE(elfsym__nr_syms(es) > 0, "symbols kept");
	}
	elfsym__free(es);

	/* A giant PT_NOTE is skipped; the SHT_NOTE section still has the id. */
	img_ph(&im, note)->p_filesz = 1ULL << 40;
	es = img_open(&im, orig, im.len, NULL);
	if (ASSERT_OK_PTR(es, "PT_NOTE p_filesz 2^40")) {
		got = elfsym__build_id(es, &len);
		if (ASSERT_EQ(len, n, "build-id from the section") && ASSERT_OK_PTR(got, "build-id"))
			ASSERT_TRUE(!memcmp(got, bid, n), "same bytes");
	}
	elfsym__free(es);

	/* Note headers that lie: the id is rejected, the file is not. */
	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		nhdr = (uint32_t *)(im.buf + img_sh(&im, bid_sec)->sh_offset);
		nhdr[lies[i].field] = lies[i].val;
		es = img_open(&im, orig, im.len, NULL);
		if (ASSERT_OK_PTR(es, lies[i].what)) {
			got = elfsym__build_id(es, &len);
			ASSERT_NULL(got, lies[i].what);
			ASSERT_EQ(len, (size_t)0, lies[i].what);
		}
		elfsym__free(es);
	}
out:
	free(orig);
	free(im.buf);
}

/* The caps: exactly the file's symbol count passes, one less is E2BIG. */
static void test_caps(void)
{
	struct elfsym_opts opts = { 0 };
	size_t i, nsyms = 0, nstr = 0;
	struct elfsym *es;
	struct img im;

	if (!img_load(&im))
		return;
	for (i = 1; i < img_eh(&im)->e_shnum; i++) {
		Elf64_Shdr *sh = img_sh(&im, i);

		if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM) {
			nsyms += sh->sh_size / sh->sh_entsize;
			nstr += img_sh(&im, sh->sh_link)->sh_size;
		}
	}
	if (!ASSERT_TRUE(write_file(im.out, im.buf, im.len), "write copy"))
		goto out;
	opts.max_syms = nsyms;
	es = elfsym__open(im.out, &opts);
	ASSERT_OK_PTR(es, "max_syms == symbols in the file");
	elfsym__free(es);
	opts.max_syms = nsyms - 1;
	expect_fail(im.out, E2BIG, &opts, "max_syms one short");
	opts.max_syms = 0;
	opts.max_strtab = nstr;
	es = elfsym__open(im.out, &opts);
	ASSERT_OK_PTR(es, "max_strtab == string table bytes");
	elfsym__free(es);
	opts.max_strtab = nstr - 1;
	expect_fail(im.out, E2BIG, &opts, "max_strtab one short");
out:
	free(im.buf);
}

/*
 * Random byte damage in the headers and tables (deterministic seed).  The
 * assertion is that each open either fails with ENOEXEC/E2BIG or gives an
 * object whose every getter works; ASan/UBSan check the rest.
 */
static void test_mutations(void)
{
	uint64_t rng = 0x9e3779b97f4a7c15ULL, v, regions[3][2];
	size_t iter, k, nopen = 0, nrej = 0, nbad = 0, len;
	const struct elfsym_sym *s;
	struct elfsym *es;
	struct img im;
	uint8_t *orig;

	if (!img_load(&im))
		return;
	orig = malloc(im.len);
	if (!ASSERT_OK_PTR(orig, "malloc"))
		goto out;
	memcpy(orig, im.buf, im.len);
	regions[0][0] = 0;
	regions[0][1] = img_eh(&im)->e_phoff + img_eh(&im)->e_phnum * sizeof(Elf64_Phdr);
	regions[1][0] = img_eh(&im)->e_shoff;
	regions[1][1] = im.len;
	regions[2][0] = img_sh(&im, img_sec(&im, SHT_SYMTAB))->sh_offset;
	regions[2][1] = regions[2][0] + img_sh(&im, img_sec(&im, SHT_SYMTAB))->sh_size;
	for (iter = 0; iter < 600; iter++) {
		size_t nmut = 1 + iter % 8;

		for (k = 0; k < nmut; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			v = regions[rng % 3][0] + (rng >> 8) % (regions[rng % 3][1] - regions[rng % 3][0]);
			im.buf[v] = (rng >> 40) & 1 ? 0xff : (uint8_t)(rng >> 48);
		}
		errno = 0;
		es = img_open(&im, orig, im.len, NULL);
		if (!es) {
			nrej++;
			if (errno != ENOEXEC && errno != E2BIG && nbad++ < 5)
				test__fail_msg(__FILE__, __LINE__, "iteration %zu: errno %d (%s)",
					       iter, errno, strerror(errno));
			continue;
		}
		nopen++;
		for (k = 0; k < 64; k++) {
			s = elfsym__lookup(es, 0x401000 + k * 97);
			if (s && (0x401000 + k * 97 - s->addr >= s->size || !s->name))
				nbad++;
			elfsym__offset_to_vaddr(es, 0x1000 + k * 131, &v);
			elfsym__vaddr_to_offset(es, 0x401000 + k * 131, &v);
		}
		elfsym__build_id(es, &len);
		nbad += len > 64;
		elfsym__free(es);
	}
	ASSERT_EQ(nbad, (size_t)0, "bad errno or inconsistent result");
	ASSERT_TRUE(nopen > 0 && nrej > 0, "both outcomes exercised");
out:
	free(orig);
	free(im.buf);
}

int main(void)
{
	if (getenv("BPFSYM_DEBUG"))
		log_set_level(LOG_DEBUG);
	RUN_TEST(test_not_elf);
	RUN_TEST(test_truncated);
	RUN_TEST(test_hostile_headers);
	RUN_TEST(test_hostile_symtab);
	RUN_TEST(test_hostile_segments_notes);
	RUN_TEST(test_caps);
	RUN_TEST(test_mutations);
	fixtures_cleanup();
	return TEST_EXIT();
}
