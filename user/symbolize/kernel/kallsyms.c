// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kallsyms: parse "ADDR TYPE NAME [MODULE]" lines into a sorted array.
 *
 * Loading is on the start-up path of every recording, so it is one pass
 * over the text as it is read, names copied into one arena, and almost no
 * sorting: the kernel prints most symbols in address order already.
 *
 * Several names often share an address (_text, _stext and a real function;
 * a function and its alias).  A lookup must always give the same one, so
 * each run of equal addresses is ordered with the preferred name first,
 * the way perf chooses: non-weak before weak, global before local, fewer
 * leading underscores, then file order.  Lookups binary-search a separate
 * array holding one address per run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strtab.h"
#include "base/util.h"
#include "symbolize/kernel/kallsyms.h"

#define KSYMS_FILE_CAP	((size_t)256 << 20)
#define LOAD_BUF	((size_t)256 * 1024)
/*
 * The last symbol, and the last one before another module's, has no
 * successor that bounds it: it is given at most this many bytes.  Big
 * enough for the tail functions of a module, small enough that an address
 * in the gap between modules (or past vmlinux) is not blamed on them.
 */
#define KSYM_TAIL_SIZE	4096

/* One kept line, before sorting. */
struct kent {
	uint64_t addr;
	uint32_t name_off;	/* in the arena */
	uint32_t mod;		/* module index + 1; 0: vmlinux */
	uint32_t line;		/* file order: the last tie-break */
	uint8_t rank;		/* T, t, W, w, then RANK_END: lower is preferred */
	uint8_t under;		/* leading underscores, capped */
};

struct ksyms {
	struct ksym *syms;	/* by address; each run's preferred name first */
	size_t nr;
	uint64_t *keys;		/* the address of each run of equal addresses */
	uint32_t *heads;	/* the index in syms of each run's first symbol */
	size_t nr_keys;
	char *arena;		/* every symbol name */
	struct strtab mods;	/* every module name, once: frame_namer tells modules by pointer */
	size_t nr_bad;
	bool restricted;
};

struct parser {
	struct kent *ents;
	size_t nr, alloc;
	char *arena;
	size_t used, arena_cap;	/* bytes of arena filled, allocated */
	struct strtab mods;	/* kallsyms repeats a module's name on each of its symbols */
	size_t nr_bad, nr_lines;
	bool nonzero;		/* some address was not 0 */
};

/* Character classes, so the per-byte loops are one load and one test. */
static const uint8_t hex_val1[256] = {	/* hex digit value + 1; 0: not hex */
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};
static const bool blank[256] = { [' '] = true, ['\t'] = true, ['\r'] = true };

static bool is_blank(char c)
{
	return blank[(unsigned char)c];
}

/* The index + 1 of module @name (@len bytes), interned if new. */
static int parser_module(struct parser *ps, const char *name, size_t len, uint32_t *mod)
{
	uint32_t id;
	int err = strtab__intern_id(&ps->mods, name, len, &id);

	if (err)
		return err;
	*mod = id + 1;
	return 0;
}

/*
 * vmlinux's _etext and _einittext (and __indirect_thunk_end, which 6.1
 * puts at _etext) end a text section: what follows them,
 * up to the next text symbol, is rodata (22 MB here) or the module area.
 * Sized like a function they would name every address in there.  So they
 * rank below any function at their address, and a run they head (no
 * function there) covers nothing.
 */
#define RANK_END 4

static bool is_end_marker(const char *name, size_t len)
{
	return (len == 6 && !memcmp(name, "_etext", 6)) || (len == 10 && !memcmp(name, "_einittext", 10)) ||
	       /* 6.1 lists it, a 'T', at _etext's address: it would head that run */
	       (len == 20 && !memcmp(name, "__indirect_thunk_end", 20));
}

static int type_rank(char t)
{
	switch (t) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': return 2;
	case 'w': return 3;
	default: return -1;
	}
}

/*
 * The rest of a line after the name, [p, end): blanks, or a module in
 * brackets and blanks.  The module's name, if any, in *@mod and *@mod_len.
 * 0 or -EINVAL.
 */
static int parse_module_field(const char *p, const char *end, const char **mod, size_t *mod_len)
{
	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return 0;
	if (*p != '[')
		return -EINVAL;
	*mod = ++p;
	while (p < end && *p != ']' && !is_blank(*p))
		p++;
	*mod_len = (size_t)(p - *mod);
	if (p == end || *p != ']' || !*mod_len)
		return -EINVAL;
	for (p++; p < end && is_blank(*p); p++)
		;
	return p == end ? 0 : -EINVAL;
}

/*
 * Parse one line [p, end) (no newline).  0: kept or a well-formed line of
 * another type; -EINVAL: malformed; -ENOMEM.
 */
static int parser_line(struct parser *ps, const char *p, const char *end)
{
	const char *name, *mod = NULL;
	size_t name_len, mod_len = 0, n;
	uint64_t addr = 0;
	struct kent *e;
	uint8_t v;
	char type;
	int rank;

	for (n = 0; p < end && (v = hex_val1[(unsigned char)*p]); p++, n++)
		addr = addr << 4 | (uint64_t)(v - 1);
	if (n == 0 || n > 16 || p == end || !is_blank(*p))
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;
	if (p == end || !((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z'))
		return -EINVAL;
	type = *p++;
	if (p == end || !is_blank(*p))
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;
	name = p;
	while (p < end && !is_blank(*p))
		p++;
	name_len = (size_t)(p - name);
	if (!name_len || parse_module_field(p, end, &mod, &mod_len))
		return -EINVAL;

	/* Every well-formed line counts towards the kptr_restrict check. */
	ps->nr_lines++;
	if (addr)
		ps->nonzero = true;
	rank = type_rank(type);
	if (rank < 0)
		return 0;

	if (ps->nr == ps->alloc) {
		size_t na = ps->alloc ? ps->alloc * 2 : 4096;
		struct kent *ne = realloc(ps->ents, na * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		ps->ents = ne;
		ps->alloc = na;
	}
	e = &ps->ents[ps->nr];
	e->addr = addr;
	e->rank = !mod && is_end_marker(name, name_len) ? RANK_END : (uint8_t)rank;
	e->line = (uint32_t)(ps->nr_lines - 1);
	for (n = 0; n < name_len && n < 255 && name[n] == '_'; n++)
		;
	e->under = (uint8_t)n;
	e->mod = 0;
	if (mod && parser_module(ps, mod, mod_len, &e->mod))
		return -ENOMEM;
	e->name_off = (uint32_t)ps->used;
	memcpy(ps->arena + ps->used, name, name_len);
	ps->arena[ps->used + name_len] = '\0';
	ps->used += name_len + 1;
	ps->nr++;
	return 0;
}

/* No subtraction: addresses are u64. */
static int kent_cmp(const void *a, const void *b)
{
	const struct kent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->under != y->under)
		return x->under < y->under ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Order @ents.  The kernel prints vmlinux in address order, then modules,
 * ftrace trampolines and BPF programs, which may sit below the modules.
 * So: the longest prefix in address order stays, the short rest is sorted
 * and merged in, and only runs of equal addresses get the full comparison.
 */
static void sort_ents(struct kent *ents, size_t nr)
{
	size_t pre, i, j, k;
	struct kent *tail;

	for (pre = 1; pre < nr && ents[pre].addr >= ents[pre - 1].addr; pre++)
		;
	if (pre < nr) {
		qsort(ents + pre, nr - pre, sizeof(*ents), kent_cmp);
		tail = malloc((nr - pre) * sizeof(*tail));
		if (!tail) {	/* slower, same result */
			qsort(ents, nr, sizeof(*ents), kent_cmp);
			return;
		}
		memcpy(tail, ents + pre, (nr - pre) * sizeof(*tail));
		/* Merge from the back: the prefix's entries stay before equal ones. */
		for (i = pre, j = nr - pre, k = nr; j > 0;) {
			if (i > 0 && ents[i - 1].addr > tail[j - 1].addr)
				ents[--k] = ents[--i];
			else
				ents[--k] = tail[--j];
		}
		free(tail);
	}
	for (i = 0; i < nr; i = j) {
		for (j = i + 1; j < nr && ents[j].addr == ents[i].addr; j++)
			;
		if (j - i > 1)
			qsort(ents + i, j - i, sizeof(*ents), kent_cmp);
	}
}

/* Turn the sorted entries into @ks's symbols, run index and sizes. */
static int build(struct ksyms *ks, struct parser *ps)
{
	size_t i, j, k;

	ks->syms = malloc(ps->nr * sizeof(*ks->syms));
	ks->keys = malloc(ps->nr * sizeof(*ks->keys));
	ks->heads = malloc(ps->nr * sizeof(*ks->heads));
	if (!ks->syms || !ks->keys || !ks->heads)
		return -ENOMEM;
	for (i = 0; i < ps->nr; i++) {
		const struct kent *e = &ps->ents[i];

		ks->syms[i].addr = e->addr;
		ks->syms[i].size = 0;
		ks->syms[i].name = ks->arena + e->name_off;
		ks->syms[i].module = e->mod ? strtab__str(&ks->mods, e->mod - 1) : NULL;
	}
	ks->nr = ps->nr;
	if (ks->restricted)
		return 0;	/* every address is 0: nothing to look up */

	for (i = 0; i < ps->nr; i = j) {
		uint64_t addr = ps->ents[i].addr, size = KSYM_TAIL_SIZE;

		for (j = i + 1; j < ps->nr && ps->ents[j].addr == addr; j++)
			;
		if (ps->ents[i].rank == RANK_END)
			size = 0;
		else if (j < ps->nr) {
			uint64_t gap = ps->ents[j].addr - addr;

			/* A module's last symbol does not run into the next module. */
			if (ps->ents[j].mod == ps->ents[i].mod || gap < size)
				size = gap;
		}
		for (k = i; k < j; k++)
			ks->syms[k].size = size;
		ks->keys[ks->nr_keys] = addr;
		ks->heads[ks->nr_keys++] = (uint32_t)i;
	}
	return 0;
}

static void parser_free(struct parser *ps)
{
	free(ps->ents);
	free(ps->arena);
	strtab__free(&ps->mods);
}

/* Room for @need more arena bytes.  Growing moves it: entries hold offsets. */
static int parser_reserve(struct parser *ps, size_t need)
{
	size_t cap = ps->arena_cap ? ps->arena_cap : 64 * 1024;
	char *arena;

	if (ps->used + need <= ps->arena_cap)
		return 0;
	while (cap < ps->used + need)
		cap *= 2;
	arena = realloc(ps->arena, cap);
	if (!arena)
		return -ENOMEM;
	ps->arena = arena;
	ps->arena_cap = cap;
	return 0;
}

/* Every line of [p, end); the last one needs no newline.  0 or -ENOMEM. */
static int parser_lines(struct parser *ps, const char *p, const char *end)
{
	const char *nl;
	int err;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl == p)
			continue;	/* blank line */
		/* A name and a module name never take more than their line. */
		if (parser_reserve(ps, (size_t)(nl - p) + 2))
			return -ENOMEM;
		/*
		 * The kernel never writes a NUL in a line; one would cut a name
		 * short (even to ""), so such a line is malformed.
		 */
		err = memchr(p, '\0', (size_t)(nl - p)) ? -EINVAL : parser_line(ps, p, nl);
		if (err == -EINVAL)
			ps->nr_bad++;
		else if (err)
			return err;
	}
	return 0;
}

/* The symbols @ps gathered, or NULL + errno.  Frees @ps's content. */
static struct ksyms *parser_finish(struct parser *ps)
{
	struct ksyms *ks = NULL;
	char *arena;
	int err;

	if (!ps->nr) {
		err = -ENODATA;
		goto out;
	}
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto out;
	}
	/* Give back what the names did not use. */
	arena = realloc(ps->arena, ps->used);
	if (arena)
		ps->arena = arena;
	ks->arena = ps->arena;
	ps->arena = NULL;
	ks->mods = ps->mods;
	memset(&ps->mods, 0, sizeof(ps->mods));
	ks->nr_bad = ps->nr_bad;
	ks->restricted = !ps->nonzero;
	if (!ks->restricted)
		sort_ents(ps->ents, ps->nr);
	err = build(ks, ps);
	if (!err && ks->nr_bad)
		pr_debug("kallsyms: skipped %zu malformed lines\n", ks->nr_bad);
out:
	parser_free(ps);
	if (err) {
		ksyms__free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

struct ksyms *ksyms__parse(const char *buf, size_t len)
{
	struct parser ps = {};
	int err;

	if (len > KSYMS_FILE_CAP) {
		errno = E2BIG;
		return NULL;
	}
	err = parser_lines(&ps, buf, buf + len);
	if (err) {
		parser_free(&ps);
		errno = -err;
		return NULL;
	}
	return parser_finish(&ps);
}

/*
 * Parse @fd as it is read, a buffer at a time: the text (5 MB here) is
 * never held whole, and what is parsed stays in cache.  A line longer
 * than the buffer is malformed; it is counted and skipped.
 */
static struct ksyms *load_fd(int fd)
{
	struct parser ps = {};
	size_t have = 0, total = 0;
	bool skipping = false;
	char *buf, *nl;
	ssize_t n;
	int err = 0;

	buf = malloc(LOAD_BUF);
	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	for (;;) {
		n = read(fd, buf + have, LOAD_BUF - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		total += (size_t)n;
		if (total > KSYMS_FILE_CAP) {
			err = -E2BIG;
			break;
		}
		if (n == 0) {	/* EOF: the last line may lack its newline */
			if (!skipping)
				err = parser_lines(&ps, buf, buf + have);
			break;
		}
		have += (size_t)n;
		nl = memrchr(buf, '\n', have);
		if (!nl) {
			if (have == LOAD_BUF) {
				if (!skipping)
					ps.nr_bad++;
				skipping = true;
				have = 0;
			}
			continue;
		}
		if (skipping) {	/* the rest of the long line is the first one here */
			char *first = memchr(buf, '\n', have);

			err = parser_lines(&ps, first + 1, nl);
			skipping = false;
		} else {
			err = parser_lines(&ps, buf, nl);
		}
		if (err)
			break;
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
	}
	free(buf);
	if (err) {
		parser_free(&ps);
		errno = -err;
		return NULL;
	}
	return parser_finish(&ps);
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks;
	int fd, err;

	if (!path)
		path = "/proc/kallsyms";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		pr_debug("kallsyms: '%s': %s\n", path, strerror(err));
		errno = err;
		return NULL;
	}
	ks = load_fd(fd);
	err = errno;
	close(fd);
	if (!ks) {
		pr_debug("kallsyms: '%s': %s\n", path, strerror(err));
		errno = err;
	}
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->keys);
	free(ks->heads);
	free(ks->arena);
	strtab__free(&ks->mods);
	free(ks);
}

const struct ksym *ksyms__lookup(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi, mid;
	const struct ksym *s;

	if (!ks || !ks->nr_keys)
		return NULL;
	hi = ks->nr_keys;
	/* The last run starting at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ks->keys[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &ks->syms[ks->heads[lo - 1]];
	return addr - s->addr < s->size ? s : NULL;
}

/* Restricted: the addresses are unknown, so every name is absent. */
int ksyms__find(const struct ksyms *ks, const char *name, uint64_t *addr)
{
	size_t i;

	if (!ks || ks->restricted)
		return -ENOENT;
	for (i = 0; i < ks->nr; i++) {
		if (!strcmp(ks->syms[i].name, name)) {
			*addr = ks->syms[i].addr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct ksym *ksyms__sym(const struct ksyms *ks, size_t i)
{
	return ks && i < ks->nr ? &ks->syms[i] : NULL;
}

bool ksyms__restricted(const struct ksyms *ks)
{
	return ks && ks->restricted;
}

size_t ksyms__nr_syms(const struct ksyms *ks)
{
	return ks ? ks->nr : 0;
}

size_t ksyms__nr_bad_lines(const struct ksyms *ks)
{
	return ks ? ks->nr_bad : 0;
}
