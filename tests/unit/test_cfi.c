// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi: unwind tables of real files against binutils' readelf.
 *
 * `readelf --debug-dump=frames-interp` prints, for every FDE of
 * .eh_frame, the rules in effect at each location where one changes: the
 * CFA (rsp+8, rbp+16, exp), and each register ("c-16": saved at CFA-16;
 * "u": undefined).  Every such row of libc and python3.11 must get the
 * same rule from cfi_table__find() at its file offset: the CFA kind and
 * offset, END exactly when the return address is undefined, the same rbp
 * slot; an expression CFA is PLT inside .plt/.plt.sec, else UNSUPPORTED;
 * a signal frame's CIE ("S") makes every row SIGNAL.  An FDE without rows
 * in that output (no instructions) has its CIE's rules at its first PC.
 * Then: glibc's signal trampoline (the sa_restorer the kernel holds for
 * this process) is SIGNAL, python's entry point (_start) is END, its PLT
 * stubs are PLT, this process's vdso image has rows over
 * __vdso_clock_gettime, and libc without section headers (found through
 * PT_GNU_EH_FRAME) gives the same table.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfsym.h"
#include "unwind/cfi.h"
#include "test.h"

TEST_SUITE("cfi")

#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON	"/usr/bin/python3.11"

static char dir[PATH_MAX];

/* What the file's headers say: executable PT_LOADs and the PLT sections. */
struct layout {
	struct { uint64_t vaddr, end, off; } seg[16];
	size_t nseg;
	struct { uint64_t lo, hi; } plt[4];
	size_t nplt;
	uint64_t entry;
};

static bool read_layout(const char *path, struct layout *l)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	size_t i, n, shstr;
	const char *name;
	bool ok = false;
	int fd;
	Elf *elf;

	memset(l, 0, sizeof(*l));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(fd >= 0, path))
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ASSERT_OK_PTR(elf, "elf_begin") || !ASSERT_OK_PTR(gelf_getehdr(elf, &eh), "ehdr") ||
	    !ASSERT_OK(elf_getphdrnum(elf, &n), "phdrnum") ||
	    !ASSERT_OK(elf_getshdrstrndx(elf, &shstr), "shstrndx"))
		goto out;
	l->entry = eh.e_entry;
	for (i = 0; i < n && gelf_getphdr(elf, (int)i, &ph); i++) {
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || l->nseg == 16)
			continue;
		l->seg[l->nseg].vaddr = ph.p_vaddr;
		l->seg[l->nseg].end = ph.p_vaddr + ph.p_memsz;
		l->seg[l->nseg].off = ph.p_offset;
		l->nseg++;
	}
	while ((scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh)) {
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec")) && l->nplt < 4) {
			l->plt[l->nplt].lo = sh.sh_addr;
			l->plt[l->nplt].hi = sh.sh_addr + sh.sh_size;
			l->nplt++;
		}
	}
	ok = ASSERT_TRUE(l->nseg > 0, "executable PT_LOAD");
out:
	elf_end(elf);
	close(fd);
	return ok;
}

/* vaddr -> file offset in an executable PT_LOAD; false outside them. */
static bool to_off(const struct layout *l, uint64_t v, uint32_t *off)
{
	size_t i;

	for (i = 0; i < l->nseg; i++)
		if (v >= l->seg[i].vaddr && v < l->seg[i].end) {
			*off = (uint32_t)(v - l->seg[i].vaddr + l->seg[i].off);
			return true;
		}
	return false;
}

static bool in_plt(const struct layout *l, uint64_t v)
{
	size_t i;

	for (i = 0; i < l->nplt; i++)
		if (v >= l->plt[i].lo && v < l->plt[i].hi)
			return true;
	return false;
}

static struct cfi_table *build_path(const char *path, int debug_fd)
{
	struct cfi_opts o = { .debug_fd = debug_fd };
	struct cfi_table *t = NULL;
	char err[256];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_TRUE(fd >= 0, path))
		return NULL;
	ret = cfi_table__build_fd(fd, &o, &t, err, sizeof(err));
	close(fd);
	if (ret)
		test__fail_msg(__FILE__, __LINE__, "%s: %d (%s): %s", path, ret, strerror(-ret), err);
	return t;
}

/* A file to test, its real path; SKIP when it is missing. */
static bool have_file(const char *path, char *real)
{
	if (!realpath(path, real)) {
		test__skip("%s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* ---- the readelf oracle ---- */

/* The rules of one readelf row, as text. */
struct rrow {
	char cfa[32], rbp[32], ra[32];
};

struct rcie {
	unsigned long off;
	bool signal, has_row;
	struct rrow row;
};

struct oracle {
	const struct layout *l;
	const struct cfi_table *t;
	struct rcie cies[64];
	size_t ncies;
	const struct rcie *cie;		/* of the FDE being read */
	uint64_t lo, hi;		/* its range */
	bool fde_rows;			/* it printed rows */
	char cols[64][16];		/* the column header */
	size_t ncols;
	size_t rows, bad, fdes;
	uint64_t *starts;
	size_t nstarts, cstarts;
};

/* The rule readelf's row @r means at @pc (include/bpfsym.h). */
static uint32_t expected_rule(const struct oracle *o, const struct rrow *r, uint64_t pc, bool signal)
{
	uint32_t kind, off, neg = 0;
	bool fp = false;
	long v;
	char *end;

	if (signal)
		return BPFSYM_UNW_RULE(BPFSYM_UNW_SIGNAL, 0, 0, 0);
	if (!strcmp(r->ra, "u"))
		return BPFSYM_UNW_RULE(BPFSYM_UNW_END, 0, 0, 0);
	if (!strcmp(r->cfa, "exp")) {
		if (!in_plt(o->l, pc))
			return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
		kind = BPFSYM_UNW_PLT;
		off = 0;	/* 10 or 11: checked by the caller */
	} else {
		if (!strncmp(r->cfa, "rsp", 3))
			kind = BPFSYM_UNW_CFA_SP;
		else if (!strncmp(r->cfa, "rbp", 3))
			kind = BPFSYM_UNW_CFA_FP;
		else
			return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
		v = strtol(r->cfa + 3, &end, 10);
		if (*end || v < 0 || v > BPFSYM_UNW_OFF_MAX)
			return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
		off = (uint32_t)v;
	}
	if (strcmp(r->ra, "c-8"))
		return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
	if (r->rbp[0] == 'c') {
		v = strtol(r->rbp + 1, &end, 10);
		if (*end || v > 0 || -v > BPFSYM_UNW_OFF_MAX)
			return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
		fp = true;
		neg = (uint32_t)-v;
	} else if (r->rbp[0] && strcmp(r->rbp, "u") && strcmp(r->rbp, "s")) {
		return BPFSYM_UNW_RULE(BPFSYM_UNW_UNSUPPORTED, 0, 0, 0);
	}
	return BPFSYM_UNW_RULE(kind, off, fp, neg);
}

static void check_row(struct oracle *o, uint64_t loc, const struct rrow *r)
{
	const struct cfi_row *got;
	uint32_t off, want, have;

	if (loc < o->lo || loc >= o->hi || !to_off(o->l, loc, &off))
		return;
	o->rows++;
	want = expected_rule(o, r, loc, o->cie->signal);
	got = cfi_table__find(o->t, off);
	have = got ? got->rule : 0xffffffffu;
	/* The PLT's threshold depends on the stub layout: 10 or 11. */
	if (got && BPFSYM_UNW_RULE_KIND(want) == BPFSYM_UNW_PLT && BPFSYM_UNW_RULE_KIND(have) == BPFSYM_UNW_PLT &&
	    (BPFSYM_UNW_RULE_CFA_OFF(have) == 10 || BPFSYM_UNW_RULE_CFA_OFF(have) == 11))
		have &= ~(BPFSYM_UNW_OFF_MAX << BPFSYM_UNW_CFA_SHIFT);
	if (have == want)
		return;
	if (o->bad++ < 10)
		test__fail_msg(__FILE__, __LINE__,
			       "pc 0x%llx (offset 0x%x): readelf says CFA %s rbp %s ra %s%s: rule 0x%x, we have 0x%x (row at 0x%x)",
			       (unsigned long long)loc, off, r->cfa, r->rbp[0] ? r->rbp : "-", r->ra,
			       o->cie->signal ? " (signal frame)" : "", want, have, got ? got->pc : 0);
}

/* A row line "LOC CFA reg... ": its columns by the header's names. */
static bool parse_row(struct oracle *o, char *line, uint64_t *loc, struct rrow *r)
{
	char *tok, *save = NULL, *end;
	size_t i = 0;

	memset(r, 0, sizeof(*r));
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++) {
		if (i >= o->ncols)
			return false;
		if (i == 0) {
			*loc = strtoull(tok, &end, 16);
			if (*end)
				return false;
		} else if (!strcmp(o->cols[i], "CFA")) {
			test__fmt(r->cfa, sizeof(r->cfa), "%s", tok);
		} else if (!strcmp(o->cols[i], "rbp")) {
			test__fmt(r->rbp, sizeof(r->rbp), "%s", tok);
		} else if (!strcmp(o->cols[i], "ra")) {
			test__fmt(r->ra, sizeof(r->ra), "%s", tok);
		}
	}
	return i == o->ncols;
}

static void parse_header(struct oracle *o, char *line)
{
	char *tok, *save = NULL;

	o->ncols = 0;
	for (tok = strtok_r(line, " \t\n", &save); tok && o->ncols < 64; tok = strtok_r(NULL, " \t\n", &save))
		test__fmt(o->cols[o->ncols++], sizeof(o->cols[0]), "%s", tok);
}

/* The end of an FDE's block: an FDE without rows has its CIE's rules at its start. */
static void end_fde(struct oracle *o)
{
	if (o->cie && !o->fde_rows && o->cie->has_row)
		check_row(o, o->lo, &o->cie->row);
	o->cie = NULL;
}

/* One line of readelf's .eh_frame dump. */
static void oracle_line(struct oracle *o, char *line, struct rcie **cur_cie)
{
	unsigned long off, cie_off, len, id;
	unsigned long long lo, hi;
	struct rrow r;
	uint32_t off32;
	uint64_t loc;
	size_t i;

	if (strstr(line, " CIE \"") && sscanf(line, "%lx %lx %lx", &off, &len, &id) == 3) {
		end_fde(o);
		*cur_cie = o->ncies < 64 ? &o->cies[o->ncies++] : NULL;
		if (*cur_cie) {
			memset(*cur_cie, 0, sizeof(**cur_cie));
			(*cur_cie)->off = off;
			/* The augmentation string: 'S' marks a signal frame. */
			(*cur_cie)->signal = memchr(strchr(line, '"'), 'S',
						    (size_t)(strrchr(line, '"') - strchr(line, '"'))) != NULL;
		}
		return;
	}
	if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%llx..%llx", &off, &len, &id, &cie_off, &lo, &hi) == 6) {
		end_fde(o);
		*cur_cie = NULL;
		for (i = 0; i < o->ncies; i++)
			if (o->cies[i].off == cie_off)
				o->cie = &o->cies[i];
		o->lo = lo;
		o->hi = hi;
		o->fde_rows = false;
		if (o->cie && lo < hi && to_off(o->l, lo, &off32) && o->nstarts < o->cstarts) {
			o->fdes++;
			o->starts[o->nstarts++] = lo;
		}
		return;
	}
	if (strstr(line, "LOC") && strstr(line, "CFA")) {
		parse_header(o, line);
		return;
	}
	if (!parse_row(o, line, &loc, &r))
		return;
	if (*cur_cie && !(*cur_cie)->has_row) {
		(*cur_cie)->row = r;
		(*cur_cie)->has_row = true;
	} else if (o->cie) {
		o->fde_rows = true;
		check_row(o, loc, &r);
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every row readelf prints for the .eh_frame and .debug_frame of
 * @oracle_path against the table of @path (with the debug file
 * @debug_path, may be NULL): the same file, or its stripped copy.
 */
static void oracle(const char *path, const char *debug_path, const char *oracle_path, size_t min_rows)
{
	char real[PATH_MAX], cmd[PATH_MAX + 128], line[4096];
	struct oracle o = { 0 };
	struct rcie *cur_cie = NULL;
	struct cfi_table *t = NULL;
	struct layout l;
	size_t i, distinct = 0;
	int dfd = -1;
	bool in_frames = false;
	FILE *f;

	if (!have_file(path, real))
		return;
	if (!oracle_path)
		oracle_path = real;
	if (!test__have("readelf")) {
		test__skip("readelf (binutils) not found");
		return;
	}
	if (debug_path) {
		dfd = open(debug_path, O_RDONLY | O_CLOEXEC);
		if (!ASSERT_TRUE(dfd >= 0, debug_path))
			return;
	}
	t = build_path(real, dfd);
	if (dfd >= 0)
		close(dfd);
	if (!t || !read_layout(real, &l))
		goto out;
	o.l = &l;
	o.t = t;
	/* readelf's FDEs past ours (twice as many) are not counted: the count differs anyway. */
	o.cstarts = 2 * (size_t)t->stats.fdes + 1;
	o.starts = calloc(o.cstarts, sizeof(*o.starts));
	if (!ASSERT_OK_PTR(o.starts, "calloc"))
		goto out;
	/* Not the separate debug file readelf would find: only this file's sections. */
	test__fmt(cmd, sizeof(cmd),
		  "readelf -W --debug-dump=no-follow-links --debug-dump=frames-interp '%s' 2>/dev/null", oracle_path);
	f = popen(cmd, "r");
	if (!ASSERT_OK_PTR(f, "popen readelf"))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Contents of the ", 16)) {
			end_fde(&o);
			/* CIE offsets are per section. */
			in_frames = strstr(line, " .eh_frame section") || strstr(line, " .debug_frame section");
			o.ncies = 0;
			continue;
		}
		if (in_frames)
			oracle_line(&o, line, &cur_cie);
	}
	end_fde(&o);
	ASSERT_OK(pclose(f), "readelf exit status");
	qsort(o.starts, o.nstarts, sizeof(*o.starts), u64_cmp);
	for (i = 0; i < o.nstarts; i++)
		distinct += !i || o.starts[i] != o.starts[i - 1];
	printf("# %s: %zu readelf rows compared, %zu differ; %zu FDEs (%zu start PCs), ours %u; %zu rows, %u unsupported\n",
	       real, o.rows, o.bad, o.fdes, distinct, t->stats.fde_starts, t->nr, t->stats.rows_unsupported);
	ASSERT_TRUE(o.rows >= min_rows, "enough rows compared");
	ASSERT_EQ(o.bad, (size_t)0, "rows that differ from readelf");
	ASSERT_EQ((size_t)t->stats.fde_starts, distinct, "distinct FDE start PCs, ours vs readelf");
	ASSERT_EQ(t->stats.fdes_skipped, 0u, "FDEs skipped");
out:
	free(o.starts);
	cfi_table__free(t);
}

static void test_oracle_libc(void)
{
	oracle(LIBC, NULL, NULL, 10000);
}

static void test_oracle_python(void)
{
	oracle(PYTHON, NULL, NULL, 10000);
}

/* Rows strictly increasing, no equal neighbours, ending with the frame-pointer rule. */
static bool well_formed(const struct cfi_table *t)
{
	size_t i;

	if (!t->nr)
		return true;
	for (i = 1; i < t->nr; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc || t->rows[i].rule == t->rows[i - 1].rule) {
			test__fail_msg(__FILE__, __LINE__, "row %zu (pc 0x%x rule 0x%x) after pc 0x%x rule 0x%x",
				       i, t->rows[i].pc, t->rows[i].rule, t->rows[i - 1].pc, t->rows[i - 1].rule);
			return false;
		}
	return ASSERT_EQ(t->rows[t->nr - 1].rule, BPFSYM_UNW_RULE(BPFSYM_UNW_FP_RULE, 0, 0, 0), "last row");
}

/* The kind of the row at @off of @t (-1: none). */
static int kind_at(const struct cfi_table *t, uint32_t off)
{
	const struct cfi_row *r = cfi_table__find(t, off);

	return r ? (int)BPFSYM_UNW_RULE_KIND(r->rule) : -1;
}

/* The signal trampoline glibc gives the kernel (sa_restorer) is SIGNAL. */
static void on_usr2(int sig)
{
	(void)sig;
}

struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static void test_signal_trampoline(void)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	struct kernel_sigaction k = { 0 };
	char line[PATH_MAX + 128], path[PATH_MAX] = "";
	unsigned long lo, hi, pgoff, a;
	struct cfi_table *t;
	FILE *f;

	if (!ASSERT_OK(sigaction(SIGUSR2, &sa, NULL), "sigaction") ||
	    !ASSERT_OK(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, 8), "rt_sigaction") ||
	    !ASSERT_OK_PTR(k.restorer, "sa_restorer"))
		return;
	a = (unsigned long)k.restorer;
	f = fopen("/proc/self/maps", "r");
	if (!ASSERT_OK_PTR(f, "/proc/self/maps"))
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi, &pgoff, path) == 4 &&
		    a >= lo && a < hi)
			break;
		else
			path[0] = 0;
	fclose(f);
	if (!ASSERT_TRUE(path[0] == '/', "sa_restorer in a file mapping"))
		return;
	t = build_path(path, -1);
	if (!t)
		return;
	printf("# sa_restorer %#lx: %s offset %#lx\n", a, path, a - lo + pgoff);
	ASSERT_EQ(kind_at(t, (uint32_t)(a - lo + pgoff)), (int)BPFSYM_UNW_SIGNAL, "__restore_rt");
	/* The unwinder looks up the return address - 1: the FDE starts a byte early for that. */
	ASSERT_EQ(kind_at(t, (uint32_t)(a - lo + pgoff - 1)), (int)BPFSYM_UNW_SIGNAL, "__restore_rt - 1");
	well_formed(t);
	cfi_table__free(t);
}

/* python's entry point (_start) is the outermost frame; its PLT stubs are PLT. */
static void test_python_start_plt(void)
{
	char real[PATH_MAX];
	struct cfi_table *t;
	struct layout l;
	uint64_t v;
	uint32_t off;
	size_t n = 0, plt = 0;

	if (!have_file(PYTHON, real) || !read_layout(real, &l) || !(t = build_path(real, -1)))
		return;
	if (ASSERT_TRUE(to_off(&l, l.entry, &off), "entry in an executable PT_LOAD"))
		ASSERT_EQ(kind_at(t, off), (int)BPFSYM_UNW_END, "_start");
	if (ASSERT_TRUE(l.nplt > 0, ".plt")) {
		/* PLT0 (push, jmp) has rows of its own; each stub after it is PLT. */
		for (v = l.plt[0].lo + 16; v < l.plt[0].hi; v++, n++)
			if (to_off(&l, v, &off))
				plt += kind_at(t, off) == (int)BPFSYM_UNW_PLT;
		ASSERT_EQ(plt, n, "bytes of .plt stubs with the PLT rule");
	}
	well_formed(t);
	cfi_table__free(t);
}

/* The vdso: an image in memory, with rows over __vdso_clock_gettime. */
static void test_vdso(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	struct cfi_table *t = NULL, *u = NULL;
	uint64_t len = 0, sym = 0, size = 0, i;
	Elf64_Sym s;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	char err[256], *copy;
	long page = sysconf(_SC_PAGESIZE);
	Elf *elf;
	int ret;

	if (!eh) {
		test__skip("no vdso (AT_SYSINFO_EHDR is 0)");
		return;
	}
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
			len = ph[i].p_offset + ph[i].p_filesz;
	/* Cut at the PT_LOAD's end, the section headers are out: .eh_frame_hdr leads to .eh_frame. */
	ret = cfi_table__build_mem(eh, len, NULL, &u, err, sizeof(err));
	if (!ASSERT_OK(ret, err))
		return;
	/* Mapped in whole pages: the section headers past the PT_LOAD are there too. */
	len = (len + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	ret = cfi_table__build_mem(eh, len, NULL, &t, err, sizeof(err));
	if (!ASSERT_OK(ret, err))
		goto out;
	ASSERT_TRUE(u->nr == t->nr && !memcmp(u->rows, t->rows, t->nr * sizeof(*t->rows)),
		    "the same rows from the image cut at its PT_LOAD's end");
	copy = malloc(len);
	if (!ASSERT_OK_PTR(copy, "malloc"))
		goto out;
	memcpy(copy, eh, len);
	elf = elf_memory(copy, len);
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM && (d = elf_getdata(scn, NULL)))
			for (i = 0; (i + 1) * sizeof(s) <= d->d_size; i++) {
				memcpy(&s, (char *)d->d_buf + i * sizeof(s), sizeof(s));
				if (!strcmp(elf_strptr(elf, sh.sh_link, s.st_name) ?: "", "__vdso_clock_gettime")) {
					sym = s.st_value;
					size = s.st_size;
				}
			}
	elf_end(elf);
	free(copy);
	printf("# vdso: %zu rows, __vdso_clock_gettime at %#llx, %llu bytes\n", t->nr,
	       (unsigned long long)sym, (unsigned long long)size);
	if (!ASSERT_TRUE(sym && size, "__vdso_clock_gettime in .dynsym"))
		goto out;
	/* The vdso's one PT_LOAD is at offset 0 = vaddr 0. */
	for (i = sym; i < sym + size; i++) {
		ret = kind_at(t, (uint32_t)i);
		if (ret != BPFSYM_UNW_CFA_SP && ret != BPFSYM_UNW_CFA_FP) {
			ASSERT_EQ(ret, (int)BPFSYM_UNW_CFA_SP, "rule kind inside __vdso_clock_gettime");
			break;
		}
	}
	well_formed(t);
out:
	cfi_table__free(t);
	cfi_table__free(u);
}

/* Read all of @path into a new buffer. */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc((size_t)st.st_size)) &&
	    pread(fd, buf, (size_t)st.st_size, 0) == st.st_size) {
		close(fd);
		*len = (size_t)st.st_size;
		return buf;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* libc without section headers: .eh_frame through PT_GNU_EH_FRAME, the same table. */
static void test_no_section_headers(void)
{
	struct cfi_table *t = NULL, *u = NULL;
	char real[PATH_MAX], err[256];
	Elf64_Ehdr *eh;
	size_t len;
	char *img;

	if (!have_file(LIBC, real) || !(t = build_path(real, -1)))
		return;
	img = slurp(real, &len);
	if (!ASSERT_OK_PTR(img, "read libc"))
		goto out;
	eh = (Elf64_Ehdr *)img;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	if (ASSERT_OK(cfi_table__build_mem(img, len, NULL, &u, err, sizeof(err)), err) &&
	    ASSERT_EQ(u->nr, t->nr, "rows") && ASSERT_TRUE(t->nr > 1000, "libc has rows"))
		ASSERT_TRUE(!memcmp(u->rows, t->rows, t->nr * sizeof(*t->rows)), "the same rows");
	free(img);
out:
	cfi_table__free(t);
	cfi_table__free(u);
}

/* ---- .debug_frame: a program built without .eh_frame, its debug file ---- */

/*
 * -fno-asynchronous-unwind-tables -g: gcc writes the CFI to .debug_frame,
 * which --strip-debug removes from the program and --only-keep-debug
 * keeps in the debug file.  alloca gives a CFA on rbp, the early return
 * a remember_state, the many callee-saved registers long prologues.
 */
static const char fx_src[] =
"#include <alloca.h>\n#include <string.h>\n"
"#define NI __attribute__((noinline))\n"
"volatile int sink;\n"
"NI int leaf(int x) { return x * 3 + sink; }\n"
"NI int with_alloca(int n) { char *p = alloca(n); memset(p, n, n); sink = p[n / 2]; return leaf(p[0]); }\n"
"NI int early(int x) {\n"
"\tif (x > 5) { int a[64]; for (int i = 0; i < 64; i++) a[i] = leaf(i + x); sink = a[x & 63]; return a[3]; }\n"
"\treturn x;\n}\n"
"NI long regs(long a, long b, long c) {\n"
"\tlong r = 0;\n"
"\tfor (long i = 0; i < a; i++) r += leaf((int)(i * b + c)) * (r ^ i) + leaf((int)r) * b;\n"
"\treturn r;\n}\n"
"int main(int argc, char **argv) { (void)argv; return with_alloca(argc * 16) + early(argc) + (int)regs(argc, 3, 4); }\n";

/* Run @cmd in the fixture directory; false (a FAIL) when it fails. */
static bool sh(const char *what, const char *cmd)
{
	char full[PATH_MAX * 2 + 512], log[PATH_MAX + 32];

	test__fmt(log, sizeof(log), "%s/%s.log", dir, what);
	test__fmt(full, sizeof(full), "cd '%s' && (%s) > '%s' 2>&1", dir, cmd, log);
	if (system(full) == 0)
		return true;
	FAIL_BUILD(log, what);
	return false;
}

static bool build_fixture(void)
{
	static int built;
	char path[PATH_MAX + 16];

	if (built)
		return built > 0;
	built = -1;
	if (!test__have("cc") || !test__have("objcopy")) {
		test__skip("'cc' or 'objcopy' not found");
		return false;
	}
	test__fmt(path, sizeof(path), "%s/fx.c", dir);
	if (!ASSERT_OK(test__write_file(path, fx_src), path))
		return false;
	if (!sh("fx", "cc -O2 -g -fno-asynchronous-unwind-tables -fno-omit-frame-pointer -o fx fx.c") ||
	    !sh("fx.debug", "objcopy --only-keep-debug fx fx.debug") ||
	    !sh("fx.stripped", "objcopy --strip-debug fx fx.stripped") ||
	    !sh("fx.debugz", "objcopy --compress-debug-sections=zlib-gabi fx.debug fx.debugz"))
		return false;
	built = 1;
	return true;
}

/* The program's own .debug_frame (with crt's .eh_frame beside it). */
static void test_debug_frame(void)
{
	char path[PATH_MAX + 16];

	if (!build_fixture())
		return;
	test__fmt(path, sizeof(path), "%s/fx", dir);
	oracle(path, NULL, NULL, 20);
}

/* The stripped program and its debug file, compressed or not: the same rows. */
static void test_debug_file(void)
{
	char fx[PATH_MAX + 16], stripped[PATH_MAX + 16], dbg[PATH_MAX + 16], dbgz[PATH_MAX + 16];
	struct cfi_table *t, *u = NULL, *z = NULL;
	int fd;

	if (!build_fixture())
		return;
	test__fmt(fx, sizeof(fx), "%s/fx", dir);
	test__fmt(stripped, sizeof(stripped), "%s/fx.stripped", dir);
	test__fmt(dbg, sizeof(dbg), "%s/fx.debug", dir);
	test__fmt(dbgz, sizeof(dbgz), "%s/fx.debugz", dir);
	oracle(stripped, dbg, fx, 20);
	oracle(stripped, dbgz, fx, 20);
	t = build_path(stripped, -1);
	fd = open(dbg, O_RDONLY | O_CLOEXEC);
	if (t && ASSERT_TRUE(fd >= 0, dbg))
		u = build_path(stripped, fd);
	if (fd >= 0)
		close(fd);
	fd = open(dbgz, O_RDONLY | O_CLOEXEC);
	if (u && ASSERT_TRUE(fd >= 0, dbgz))
		z = build_path(stripped, fd);
	if (fd >= 0)
		close(fd);
	if (z) {
		printf("# fx.stripped: %zu rows alone, %zu with its debug file (%u FDEs from .debug_frame)\n",
		       t->nr, u->nr, u->stats.from_debug_frame);
		ASSERT_EQ(t->stats.from_debug_frame, 0u, "no .debug_frame in the stripped program");
		ASSERT_TRUE(u->stats.from_debug_frame >= 4, "FDEs from the debug file");
		ASSERT_TRUE(u->nr > t->nr, "more rows with the debug file");
		ASSERT_TRUE(z->nr == u->nr && !memcmp(z->rows, u->rows, u->nr * sizeof(*u->rows)),
			    "compressed debug file: the same rows");
		well_formed(u);
	}
	cfi_table__free(t);
	cfi_table__free(u);
	cfi_table__free(z);
}

int main(void)
{
	const char *tmp = getenv("BPFSYM_TEST_TMP");

	snprintf(dir, sizeof(dir), "%s/test_cfi.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		TEST_SETUP_FAIL("mkdtemp %s: %s", dir, strerror(errno));
		dir[0] = 0;
	}
#if !defined(__x86_64__)
	TEST_SETUP_SKIP("unwind tables are for x86-64 only");
#endif
	RUN_TEST(test_oracle_libc);
	RUN_TEST(test_oracle_python);
	RUN_TEST(test_signal_trampoline);
	RUN_TEST(test_python_start_plt);
	RUN_TEST(test_vdso);
	RUN_TEST(test_no_section_headers);
	RUN_TEST(test_debug_frame);
	RUN_TEST(test_debug_file);
	if (dir[0]) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("     (could not remove %s)\n", dir);
	}
	return TEST_EXIT();
}
