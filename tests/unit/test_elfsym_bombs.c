// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym against files built to cost it memory or time (quality.md cases 3
 * and 5), generated here byte by byte (no compiler needed):
 *   - compressed sections (SHF_COMPRESSED, zlib) whose stream really
 *     inflates to 256 MiB: elfsym never asks libelf to decompress
 *     (no elf_compress), so memory stays flat;
 *   - symbol tables of millions of symbols, in the worst orders for the
 *     index (shuffled, all at one address): loaded within a bound of time
 *     at the default cap, refused at once one symbol past it.
 * The memory tests run first: ru_maxrss only grows.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/elf/elfsym.h"
#include "base/util.h"
#include "test.h"

TEST_SUITE("elfsym_bombs")

#define DEFAULT_MAX_SYMS	((size_t)4 << 20)	/* elfsym.h: the default max_syms */
#define BOMB_SIZE		((uint64_t)256 << 20)	/* what the zlib stream inflates to */
#define TEXT_ADDR		0x1000ull
#define FN_SIZE			16u

static char dir[PATH_MAX];

enum layout { SORTED, SHUFFLED, ONE_ADDRESS };

struct gen {
	size_t nsyms;
	enum layout layout;
	bool symtab_compressed;		/* .symtab is SHF_COMPRESSED (the bomb) */
	bool debug_bomb;		/* a compressed .debug_info bomb as well */
	bool sparse_symtab;		/* header only: the table is a hole (refusal tests) */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long maxrss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

/* An Elf64_Chdr and a zlib stream of BOMB_SIZE zero bytes, padded to a multiple of 24. */
static uint8_t *zlib_bomb(size_t *len)
{
	static uint8_t zeros[1 << 20];
	size_t cap = 1 << 20, hdr = sizeof(Elf64_Chdr);
	uint64_t left = BOMB_SIZE;
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = BOMB_SIZE, .ch_addralign = 1 };
	z_stream zs = { 0 };
	uint8_t *out = calloc(1, cap + 24);
	int rc;

	if (!out || deflateInit(&zs, 9) != Z_OK) {
		free(out);
		return NULL;
	}
	memcpy(out, &ch, hdr);
	zs.next_out = out + hdr;
	zs.avail_out = (uInt)(cap - hdr);
	do {
		zs.next_in = zeros;
		zs.avail_in = left > sizeof(zeros) ? sizeof(zeros) : (uInt)left;
		left -= zs.avail_in;
		rc = deflate(&zs, left ? Z_NO_FLUSH : Z_FINISH);
	} while (left && rc == Z_OK && zs.avail_out);
	*len = cap - zs.avail_out;
	deflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*len = (*len + 23) / 24 * 24;
	return out;
}

static bool pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n <= 0)
			return false;
		p += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return true;
}

/* The address of function @i: 16 bytes each from TEXT_ADDR, in @layout's order. */
static uint64_t fn_addr(const struct gen *g, size_t i)
{
	if (g->layout == ONE_ADDRESS)
		return TEXT_ADDR;
	if (g->layout == SHUFFLED)	/* a permutation: gcd(2654435761, nsyms) == 1 here */
		i = (size_t)((uint64_t)i * 2654435761u % g->nsyms);
	return TEXT_ADDR + (uint64_t)i * FN_SIZE;
}

/*
 * Write a 64-bit ET_DYN at @path: one PT_LOAD, .text (a hole), .symtab of
 * g->nsyms functions "fNNNNNNN" (+ the null symbol), .strtab, .shstrtab,
 * and the bombs @g asks for.  The file is sparse where nothing is read.
 */
static bool gen_elf(const char *path, const struct gen *g)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0.debug_info";
	enum { S_TEXT = 1, S_SYMTAB, S_STRTAB, S_SHSTR, S_DEBUG, NSEC };
	size_t i, nent = g->nsyms + 1, bomb_len = 0, chunk = 1 << 16;
	uint64_t text_size = (uint64_t)(g->nsyms ? g->nsyms : 1) * FN_SIZE, off;
	Elf64_Shdr sh[NSEC] = { 0 };
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	uint8_t *bomb = NULL;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	bool ok = false;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	if ((g->symtab_compressed || g->debug_bomb) && !(bomb = zlib_bomb(&bomb_len)))
		goto out;

	sh[S_TEXT] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
		.sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_ADDR, .sh_offset = TEXT_ADDR,
		.sh_size = text_size, .sh_addralign = 16 };
	off = (TEXT_ADDR + text_size + 4095) & ~4095ull;
	sh[S_SYMTAB] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = off,
		.sh_size = nent * sizeof(Elf64_Sym), .sh_link = S_STRTAB, .sh_info = 1,
		.sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	if (g->symtab_compressed) {
		sh[S_SYMTAB].sh_flags = SHF_COMPRESSED;
		sh[S_SYMTAB].sh_size = bomb_len;
	}
	off += sh[S_SYMTAB].sh_size;
	sh[S_STRTAB] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = off,
		.sh_size = 1 + (uint64_t)g->nsyms * 9, .sh_addralign = 1 };
	off += sh[S_STRTAB].sh_size;
	sh[S_SHSTR] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = off,
		.sh_size = sizeof(shstr), .sh_addralign = 1 };
	off += sizeof(shstr);
	sh[S_DEBUG] = (Elf64_Shdr){ .sh_name = 33, .sh_type = SHT_PROGBITS, .sh_offset = off,
		.sh_size = g->debug_bomb ? bomb_len : 0, .sh_addralign = 1,
		.sh_flags = g->debug_bomb ? SHF_COMPRESSED : 0 };
	off = (off + sh[S_DEBUG].sh_size + 7) & ~7ull;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = NSEC;
	eh.e_shstrndx = S_SHSTR;
	ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = 0,
		.p_paddr = 0, .p_filesz = TEXT_ADDR + text_size, .p_memsz = TEXT_ADDR + text_size,
		.p_align = 4096 };
	if (!pwrite_all(fd, &eh, sizeof(eh), 0) || !pwrite_all(fd, &ph, sizeof(ph), sizeof(eh)) ||
	    !pwrite_all(fd, sh, sizeof(sh), eh.e_shoff) ||
	    !pwrite_all(fd, shstr, sizeof(shstr), sh[S_SHSTR].sh_offset))
		goto out;
	if (bomb && g->symtab_compressed &&
	    !pwrite_all(fd, bomb, bomb_len, sh[S_SYMTAB].sh_offset))
		goto out;
	if (bomb && g->debug_bomb && !pwrite_all(fd, bomb, bomb_len, sh[S_DEBUG].sh_offset))
		goto out;
	if (!g->symtab_compressed && !g->sparse_symtab) {
		/* In chunks: a table of millions is written without holding it all. */
		syms = calloc(chunk, sizeof(*syms));
		strs = calloc(chunk, 9);
		if (!syms || !strs || !pwrite_all(fd, "", 1, sh[S_STRTAB].sh_offset))
			goto out;
		for (i = 0; i < nent; i += chunk) {
			size_t k, n = nent - i < chunk ? nent - i : chunk;

			memset(syms, 0, n * sizeof(*syms));
			for (k = 0; k < n; k++) {
				size_t j = i + k;

				if (!j)
					continue;	/* the null symbol */
				syms[k].st_name = (Elf64_Word)(1 + (j - 1) * 9);
				syms[k].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
				syms[k].st_shndx = S_TEXT;
				syms[k].st_value = fn_addr(g, j - 1);
				syms[k].st_size = FN_SIZE;
			}
			if (!pwrite_all(fd, syms, n * sizeof(*syms),
					sh[S_SYMTAB].sh_offset + i * sizeof(*syms)))
				goto out;
		}
		for (i = 0; i < g->nsyms; i += chunk) {
			size_t k, n = g->nsyms - i < chunk ? g->nsyms - i : chunk;

			for (k = 0; k < n; k++)
				snprintf(strs + k * 9, 9, "f%07zx", i + k);	/* 8 chars + NUL */
			if (!pwrite_all(fd, strs, n * 9, sh[S_STRTAB].sh_offset + 1 + i * 9))
				goto out;
		}
	}
	ok = !ftruncate(fd, (off_t)(eh.e_shoff + sizeof(sh)));
out:
	free(bomb);
	free(syms);
	free(strs);
	return !close(fd) && ok;
}

static bool gen_path(char *buf, size_t sz, const char *name, const struct gen *g)
{
	snprintf(buf, sz, "%s/%s", dir, name);
	return ASSERT_TRUE(gen_elf(buf, g), "generate the ELF file");
}

/*
 * A .debug_info whose zlib stream inflates to 256 MiB, next to a good
 * .symtab: the symbols load, the bomb is never inflated.
 */
static void test_debug_section_bomb(void)
{
	struct gen g = { .nsyms = 1024, .debug_bomb = true };
	const struct elfsym_sym *s;
	char path[PATH_MAX];
	struct elfsym *es;
	long rss0, rss1;

	if (!gen_path(path, sizeof(path), "debug-bomb", &g))
		return;
	rss0 = maxrss_kib();
	es = elfsym__open(path, NULL);
	rss1 = maxrss_kib();
	if (!ASSERT_OK_PTR(es, "open"))
		return;
	s = elfsym__lookup(es, TEXT_ADDR + 5 * FN_SIZE + 3);
	ASSERT_STREQ(s ? s->name : NULL, "f0000005", "the symbols are read");
	printf("     compressed .debug_info bomb: peak RSS grew %ld KiB\n", rss1 - rss0);
	ASSERT_TRUE(rss1 - rss0 < 64 * 1024, "peak RSS grew under 64 MiB (the bomb is 256 MiB)");
	elfsym__free(es);
}

/*
 * .symtab itself SHF_COMPRESSED, its stream a 256 MiB bomb: refused as
 * malformed, or read as no symbols, never inflated.
 */
static void test_symtab_bomb(void)
{
	struct gen g = { .nsyms = 1024, .symtab_compressed = true };
	char path[PATH_MAX];
	struct elfsym *es;
	long rss0, rss1;

	if (!gen_path(path, sizeof(path), "symtab-bomb", &g))
		return;
	rss0 = maxrss_kib();
	errno = 0;
	es = elfsym__open(path, NULL);
	rss1 = maxrss_kib();
	printf("     compressed .symtab bomb: %s (errno %d), peak RSS grew %ld KiB\n",
	       es ? "opened" : "refused", es ? 0 : errno, rss1 - rss0);
	if (es)
		ASSERT_NULL(elfsym__lookup(es, TEXT_ADDR + 5 * FN_SIZE), "no symbol from a bomb");
	else
		ASSERT_EQ(errno, ENOEXEC, "refused as malformed");
	ASSERT_TRUE(rss1 - rss0 < 64 * 1024, "peak RSS grew under 64 MiB (the bomb is 256 MiB)");
	elfsym__free(es);
}

/* One symbol past the default cap: E2BIG before a byte of the table is read. */
static void test_over_cap_refused(void)
{
	struct gen g = { .nsyms = DEFAULT_MAX_SYMS, .sparse_symtab = true };
	char path[PATH_MAX];
	struct elfsym *es;
	double t;

	/* nsyms functions + the null symbol: one past the cap. */
	if (!gen_path(path, sizeof(path), "over-cap", &g))
		return;
	t = now_s();
	errno = 0;
	es = elfsym__open(path, NULL);
	t = now_s() - t;
	if (ASSERT_NULL(es, "refused"))
		ASSERT_EQ(errno, E2BIG, "E2BIG");
	printf("     %zu symbols (sparse, default cap): refused in %.3f s\n", g.nsyms + 1, t);
	ASSERT_TRUE(t < 1.0, "refused without reading the table (under 1 s)");
	elfsym__free(es);
}

/*
 * At the default cap exactly, in the orders hardest on the index: loaded,
 * right, and within 60 s even under ASan (a quadratic step on millions of
 * symbols would take hours).  The time is printed.
 */
static void test_at_cap_loads(void)
{
	static const struct { enum layout layout; const char *what; } cases[] = {
		{ SHUFFLED, "shuffled" }, { ONE_ADDRESS, "all at one address" },
	};
	/* With the null symbol: exactly the cap. */
	struct gen g = { .nsyms = DEFAULT_MAX_SYMS - 1 };
	const struct elfsym_sym *s;
	char path[PATH_MAX], want[32];
	struct elfsym *es;
	size_t i, k;
	double t;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		g.layout = cases[i].layout;
		if (!gen_path(path, sizeof(path), "at-cap", &g))
			return;
		t = now_s();
		es = elfsym__open(path, NULL);
		t = now_s() - t;
		printf("     %zu symbols, %s: loaded in %.2f s, peak RSS %ld MiB (this build)\n",
		       g.nsyms, cases[i].what, t, maxrss_kib() >> 10);
		if (!ASSERT_OK_PTR(es, cases[i].what))
			continue;
		ASSERT_TRUE(t < 60.0, "loaded within 60 s");
		/* The table (100 MiB), names (36 MiB) and index: ~0.6 GiB under ASan. */
		ASSERT_TRUE(maxrss_kib() < (1L << 20), "peak RSS under 1 GiB");
		for (k = 0; k < g.nsyms && g.layout == SHUFFLED; k += g.nsyms / 7 + 1) {
			snprintf(want, sizeof(want), "f%07zx", k);
			s = elfsym__lookup(es, fn_addr(&g, k) + FN_SIZE - 1);
			if (!ASSERT_STREQ(s ? s->name : NULL, want, "shuffled: the right name"))
				break;
		}
		if (g.layout == ONE_ADDRESS) {
			s = elfsym__lookup(es, TEXT_ADDR + 3);
			ASSERT_TRUE(s && s->name && s->name[0] == 'f', "one address: one of its names");
			ASSERT_NULL(elfsym__lookup(es, TEXT_ADDR + FN_SIZE), "past it: none");
		}
		elfsym__free(es);
	}
}

int main(void)
{
	const char *base = getenv("BPFSYM_TEST_TMP");
	char cmd[PATH_MAX + 32];

	if (getenv("BPFSYM_DEBUG"))
		log_set_level(LOG_DEBUG);
	if (!base || !*base || strchr(base, '\''))
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/elfsym-bombs.XXXXXX", base);
	if (!mkdtemp(dir)) {
		TEST_SETUP_FAIL("mkdtemp in '%s': %s", base, strerror(errno));
		dir[0] = 0;
	}
	RUN_TEST(test_debug_section_bomb);
	RUN_TEST(test_symtab_bomb);
	RUN_TEST(test_over_cap_refused);
	RUN_TEST(test_at_cap_loads);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (dir[0] && system(cmd))
		printf("     could not remove %s\n", dir);
	return TEST_EXIT();
}
