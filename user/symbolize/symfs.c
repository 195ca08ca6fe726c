// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symfs: finding a recording's files under a directory, and naming user
 * frames from them.
 *
 * Finding is done for every file module at open, reading only headers
 * and notes (fileid), so the report header can say what DIR held.  The
 * symbols are read when a frame first needs them, one file per module
 * (modules of one build-id share it), into an image cache (imgcache.h)
 * that bounds the loaded ones in number and bytes and keeps the names, so
 * they outlive an evicted file.  Each (module, offset) is resolved once.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/util.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuginfod.h"
#include "symbolize/fileid.h"
#include "symbolize/imgcache.h"
#include "symbolize/symfs.h"

#define DEFAULT_MAX_LOADED	64
#define DEFAULT_MAX_BYTES	(512UL << 20)
#define NO_MOD			UINT32_MAX

/* What DIR holds for a module (struct symfs_stats has one counter each). */
enum where {
	W_NOT_FILE,	/* not a file module: DIR is not asked */
	W_NOT_FOUND,
	W_BUILD_ID,
	W_PATH,
	W_DEBUG_ONLY,
	W_MISMATCH,
	W_NO_OFFSETS,
};

struct smod {
	uint8_t where;
	uint32_t canon;		/* the module holding the state below (itself, or the first of its build-id) */
	uint32_t next;		/* the next module of its build-id, NO_MOD: none */
	char *file;		/* W_BUILD_ID, W_PATH, W_DEBUG_ONLY: the file to read, inside DIR */
	struct image *img;	/* its symbols (and its debug file's); NULL: never read */
	struct symfs_seg *segs;	/* W_DEBUG_ONLY: the debug file's PT_LOADs (elfsym drops them) */
	size_t nr_segs;
	uint32_t fail;		/* RPT_OK, or why reading it failed (not tried again) */
	bool dinfod_asked;	/* its debug file was asked of debuginfod (once) */
};

/* One resolved (module, offset). */
struct memo {
	uint64_t offset;
	uint32_t mod;
	uint32_t reason;
	const char *sym;
	uint64_t sym_off;
};

struct symfs {
	const struct report *r;
	char *dir;
	int root_fd;		/* O_PATH of DIR: every path is resolved inside it */
	struct smod *mods;	/* per module id of the report */
	size_t nr_mods;
	struct elfsym_opts elf;
	bool have_elf_opts;
	struct imgcache images;	/* by build-id, else by the identity of the file in DIR */
	size_t loads;
	struct htab memo_tab;	/* hash of (module, offset) -> index in memo + 1 */
	struct memo *memo;
	size_t memo_cap, memo_nr;
};

/* ROOT/.build-id/xx/rest SUFFIX for @m's build-id into @buf; false if none or no room. */
static bool build_id_path(char *buf, size_t size, const char *root, const struct rpt_module *m,
			  const char *suffix)
{
	size_t i, len = m->build_id_len;
	int off;

	if (len < 2 || len > RPT_BUILD_ID_MAX)
		return false;
	off = snprintf(buf, size, "%s/.build-id/%02x/", root, m->build_id[0]);
	for (i = 1; i < len && off > 0 && (size_t)off < size; i++)
		off += snprintf(buf + off, size - (size_t)off, "%02x", m->build_id[i]);
	if (off <= 0 || (size_t)off >= size)
		return false;
	return (size_t)snprintf(buf + off, size - (size_t)off, "%s", suffix) < size - (size_t)off;
}

int symfs__read_segments(int fd, struct symfs_seg **segs, size_t *nr)
{
	size_t n = 0, i, k = 0;
	bool code = false;
	struct symfs_seg *v;
	GElf_Phdr ph;
	Elf *e;
	int err = -EDOM;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EDOM;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -EDOM;
	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n) || !n || n > INT_MAX)
		goto out;
	v = calloc(n, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		v[k++] = (struct symfs_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
		code |= (ph.p_flags & PF_X) != 0;
	}
	if (code) {
		*segs = v;
		*nr = k;
		err = 0;
	} else {
		free(v);
	}
out:
	elf_end(e);
	return err;
}

/*
 * Check the file at @path inside DIR for module @m: 0 when it is an ELF
 * file with @m's build-id (none when @m has none), -ESTALE when it has
 * another, -ENOENT when it is not there or not a regular ELF file,
 * -ENOMEM.  With @sm, a debug file used alone: its segments go to @sm,
 * -EDOM when they give no file offsets.
 */
static int check_file(const struct symfs *fs, const char *path, const struct rpt_module *m,
		      struct smod *sm)
{
	uint8_t id[FILEID_BUILD_ID_MAX];
	struct stat st;
	size_t len;
	int fd, e;

	fd = fileid__open_in_root(fs->root_fd, path, &st);
	if (fd < 0) {
		pr_debug("symfs: '%s%s': %s\n", fs->dir, path,
			 fd == -ENOEXEC ? "not a non-empty regular file" : strerror(-fd));
		return fd == -ENOMEM ? fd : -ENOENT;
	}
	e = fileid__build_id(fd, id, &len);
	if (e)
		e = e == -ENOMEM ? e : -ENOENT;
	else if (len != m->build_id_len || memcmp(id, m->build_id, len))
		e = -ESTALE;
	else if (sm)
		e = symfs__read_segments(fd, &sm->segs, &sm->nr_segs);
	close(fd);
	pr_debug("symfs: '%s%s': %s\n", fs->dir, path, !e ? "found" : e == -ESTALE ? "another build-id" :
		 e == -EDOM ? "a debug file without file offsets" : "not an ELF file we can read");
	return e;
}

/* Look for canonical module @ci (and the other paths of its build-id); 0 or -ENOMEM. */
static int locate(struct symfs *fs, uint32_t ci)
{
	struct smod *m = &fs->mods[ci];
	const struct rpt_module *rm = report__module(fs->r, ci);
	static const char *const debug_dirs[] = { "", "/usr/lib/debug" };
	bool mismatch = false, no_offsets = false;
	char path[PATH_MAX];
	uint32_t j;
	size_t i;
	int e;

	m->where = W_NOT_FOUND;
	if (build_id_path(path, sizeof(path), "", rm, "")) {
		e = check_file(fs, path, rm, NULL);
		if (e == -ENOMEM)
			return e;
		if (!e) {
			m->where = W_BUILD_ID;
			goto found;
		}
	}
	for (j = ci; j != NO_MOD; j = fs->mods[j].next) {
		const char *p = report__module(fs->r, j)->path;

		if (!p || p[0] != '/')
			continue;
		e = check_file(fs, p, rm, NULL);
		if (e == -ENOMEM)
			return e;
		mismatch |= e == -ESTALE;
		if (!e) {
			snprintf(path, sizeof(path), "%s", p);
			m->where = W_PATH;
			goto found;
		}
	}
	for (i = 0; i < sizeof(debug_dirs) / sizeof(debug_dirs[0]); i++) {
		if (!build_id_path(path, sizeof(path), debug_dirs[i], rm, ".debug"))
			break;
		e = check_file(fs, path, rm, m);
		if (e == -ENOMEM)
			return e;
		no_offsets |= e == -EDOM;
		if (!e) {
			m->where = W_DEBUG_ONLY;
			goto found;
		}
	}
	m->where = mismatch ? W_MISMATCH : no_offsets ? W_NO_OFFSETS : W_NOT_FOUND;
	return 0;
found:
	m->file = strdup(path);
	return m->file ? 0 : -ENOMEM;
}

/* The last module so far of @rm's build-id (hash @h) in @last, + 1; 0: none. */
static uint64_t last_of(const struct symfs *fs, const struct htab *last, uint64_t h,
			const struct rpt_module *rm)
{
	const struct rpt_module *o;
	size_t pos = HTAB_START;
	uint64_t v;

	while (htab__next(last, h, &pos, &v)) {
		o = report__module(fs->r, (uint32_t)(v - 1));
		if (o->build_id_len == rm->build_id_len && !memcmp(o->build_id, rm->build_id, rm->build_id_len))
			return v;
	}
	return 0;
}

/*
 * Link the file modules of one build-id (copies of a file at other paths,
 * in other containers), in id order: the first one holds the state of all.
 */
static int group_by_build_id(struct symfs *fs)
{
	struct htab last = {};	/* hash of a build-id -> the last module of its chain + 1 */
	uint64_t h, v;
	size_t i;
	int err = 0;

	for (i = 0; i < fs->nr_mods && !err; i++) {
		const struct rpt_module *rm = report__module(fs->r, (uint32_t)i);

		fs->mods[i].canon = (uint32_t)i;
		fs->mods[i].next = NO_MOD;
		if (fs->mods[i].where == W_NOT_FILE || !rm->build_id_len || rm->build_id_len > RPT_BUILD_ID_MAX)
			continue;
		h = hash_bytes(0, rm->build_id, rm->build_id_len);
		v = last_of(fs, &last, h, rm);
		if (v) {
			htab__del(&last, h, v);
			fs->mods[i].canon = fs->mods[v - 1].canon;
			fs->mods[v - 1].next = (uint32_t)i;
		}
		err = htab__add(&last, h, i + 1);
	}
	htab__free(&last);
	return err;
}

struct symfs *symfs__open(const char *dir, const struct report *r, const struct symfs_opts *opts,
			  char *err, size_t errlen)
{
	struct symfs *fs;
	size_t i;
	int e = -ENOMEM;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		goto nomem;
	fs->root_fd = -1;
	fs->r = r;
	imgcache__init(&fs->images, opts && opts->max_loaded ? opts->max_loaded : DEFAULT_MAX_LOADED,
		       opts && opts->max_loaded_bytes ? opts->max_loaded_bytes : DEFAULT_MAX_BYTES, false);
	if (opts && opts->elf) {
		fs->elf = *opts->elf;
		fs->have_elf_opts = true;
	}
	fs->dir = strdup(dir);
	if (!fs->dir)
		goto nomem;
	/* Trailing slashes would double in the paths we log. */
	for (i = strlen(fs->dir); i > 1 && fs->dir[i - 1] == '/'; i--)
		fs->dir[i - 1] = '\0';
	fs->root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		symfs__free(fs);
		errno = e;
		return NULL;
	}
	fs->nr_mods = report__nr_modules(r);
	fs->mods = calloc(fs->nr_mods ? fs->nr_mods : 1, sizeof(*fs->mods));
	if (!fs->mods)
		goto nomem;
	for (i = 0; i < fs->nr_mods; i++)
		fs->mods[i].where = report__module(r, (uint32_t)i)->kind == RPT_MOD_FILE ? W_NOT_FOUND :
				    W_NOT_FILE;
	e = group_by_build_id(fs);
	for (i = 0; i < fs->nr_mods && !e; i++)
		if (fs->mods[i].where != W_NOT_FILE && fs->mods[i].canon == i)
			e = locate(fs, (uint32_t)i);
	if (!e)
		return fs;
nomem:
	symfs__free(fs);
	snprintf(err, errlen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

void symfs__free(struct symfs *fs)
{
	size_t i;

	if (!fs)
		return;
	for (i = 0; i < fs->nr_mods; i++) {
		free(fs->mods[i].file);
		free(fs->mods[i].segs);
	}
	free(fs->mods);
	imgcache__free(&fs->images);
	htab__free(&fs->memo_tab);
	free(fs->memo);
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	free(fs->dir);
	free(fs);
}

/*
 * The debug file of binary @es (open on fd @st), where the recorder looks,
 * inside DIR: by build-id in DIR itself, then in DIR/usr/lib/debug, then
 * by debuglink next to the recorded path @path.
 */
static struct elfsym *debug_file(const struct symfs *fs, const struct elfsym *es, const struct stat *st,
				 const char *path)
{
	struct debugfile_query q = {
		.es = es, .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
		.root_fd = fs->root_fd, .debug_root = "", .debug_root_in_root = true,
		.opts = fs->have_elf_opts ? &fs->elf : NULL,
		.owner = geteuid(),	/* the directory of whoever runs report */
	};
	struct elfsym *dbg;

	dbg = debugfile__open(&q);
	if (dbg || errno == ENOMEM)
		return dbg;
	q.path = path && path[0] == '/' ? path : NULL;
	q.debug_root = "/usr/lib/debug";
	return debugfile__open(&q);
}

/*
 * The image of canonical module @ci, whose file in DIR has the fstat @st:
 * by the recorded build-id, else by that file's identity.  NULL on ENOMEM.
 */
static struct image *module_image(struct symfs *fs, uint32_t ci, const struct stat *st)
{
	const struct rpt_module *rm = report__module(fs->r, ci);
	struct image_key key = {
		.build_id = rm->build_id, .build_id_len = rm->build_id_len,
		.dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
		.mtime_sec = st->st_mtim.tv_sec, .mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
	};

	if (!fs->mods[ci].img)
		fs->mods[ci].img = imgcache__get(&fs->images, &key);
	return fs->mods[ci].img;
}

/* Read canonical module @ci's file: RPT_OK, or why not (-ENOMEM as is: not remembered). */
static int load(struct symfs *fs, uint32_t ci)
{
	struct smod *m = &fs->mods[ci];
	const struct rpt_module *rm = report__module(fs->r, ci);
	struct elfsym *es, *dbg;
	struct image *img;
	struct stat st;
	int fd, e;

	fd = fileid__open_in_root(fs->root_fd, m->file, &st);
	if (fd < 0) {
		pr_warn("symfs: '%s%s': %s\n", fs->dir, m->file, strerror(-fd));
		return fd == -ENOMEM ? fd : RPT_FILE_UNREADABLE;
	}
	img = module_image(fs, ci, &st);
	if (!img || img->es) {
		/* Loaded already: the same file in DIR as another module's. */
		close(fd);
		if (img)
			imgcache__touch(&fs->images, img);
		return img ? RPT_OK : -ENOMEM;
	}
	es = elfsym__open_fd(fd, m->file, fs->have_elf_opts ? &fs->elf : NULL);
	if (!es) {
		e = errno;
		close(fd);
		pr_warn("symfs: '%s%s': %s\n", fs->dir, m->file, strerror(e));
		return e == ENOMEM ? -ENOMEM : RPT_FILE_UNREADABLE;
	}
	/* Checked when found; a file replaced since then is not the same build. */
	if (!image__matches(img, es)) {
		close(fd);
		elfsym__free(es);
		pr_warn("symfs: '%s%s': the file changed: another build-id now\n", fs->dir, m->file);
		return RPT_BUILD_ID_MISMATCH;
	}
	dbg = m->where == W_DEBUG_ONLY ? NULL : debug_file(fs, es, &st, rm->path);
	close(fd);
	imgcache__attach(&fs->images, img, es, dbg);
	fs->loads++;
	return RPT_OK;
}

/* elfsym__offset_to_vaddr() over @m's own segments. */
static int seg_vaddr(const struct smod *m, uint64_t offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < m->nr_segs; i++) {
		if (offset >= m->segs[i].off && offset - m->segs[i].off < m->segs[i].filesz) {
			*vaddr = offset - m->segs[i].off + m->segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Name @offset of module @m, loaded, from its image: RPT_OK with @out set, or why not. */
static uint32_t image_lookup(struct symfs *fs, const struct smod *m, uint64_t offset,
			     struct symfs_name *out)
{
	const struct elfsym *syms = image__syms(m->img);
	const struct elfsym_sym *sym;
	const char *name;
	uint64_t vaddr;

	if (!elfsym__nr_syms(syms))
		return RPT_NO_SYMBOLS;
	/* The program headers of the file that was mapped, never a debug file's beside it. */
	if ((m->segs ? seg_vaddr(m, offset, &vaddr) : elfsym__offset_to_vaddr(m->img->es, offset, &vaddr)) ||
	    !(sym = elfsym__lookup(syms, vaddr)))
		return RPT_OUTSIDE_SYMBOL;
	name = imgcache__sym_name(&fs->images, m->img, sym);
	if (!name)
		return RPT_FILE_UNREADABLE;	/* ENOMEM */
	out->sym = name;
	out->sym_off = vaddr - sym->addr;
	return RPT_OK;
}

/*
 * Module @m's binary in DIR could not name a frame, and DIR holds no debug
 * file of it: ask debuginfod (DEBUGINFOD_URLS) once for its build-id's.
 * Report waits for the answer: no ring buffer to drain here.  Whether one
 * was attached.
 */
static bool ask_dinfod(struct symfs *fs, struct smod *m)
{
	struct image *img = m->img;
	struct elfsym *dbg;
	char *path;
	int err;

	if (m->dinfod_asked || m->where == W_DEBUG_ONLY || img->dbg || !img->build_id_len ||
	    !dinfod__enabled())
		return false;
	m->dinfod_asked = true;
	dbg = dinfod__fetch(img->build_id, img->build_id_len, NULL,
			    fs->have_elf_opts ? &fs->elf : NULL, &path, &err);
	free(path);
	if (!dbg)
		return false;
	imgcache__attach_debug(&fs->images, img, dbg);
	return true;
}

/*
 * Name @offset of canonical module @ci from its file: 0 with @out set
 * (a name, or RPT_OK's absence: why none), or -ENOMEM.
 */
static int resolve(struct symfs *fs, uint32_t ci, uint64_t offset, struct symfs_name *out)
{
	struct smod *m = &fs->mods[ci];
	int e;

	*out = (struct symfs_name){ .reason = RPT_OK };
	if (m->fail) {
		out->reason = m->fail;
		return 0;
	}
	if (!m->img || !m->img->es) {
		e = load(fs, ci);
		if (e < 0)
			return e;
		if (e != RPT_OK) {
			m->fail = (uint32_t)e;
			out->reason = m->fail;
			return 0;
		}
	} else {
		imgcache__touch(&fs->images, m->img);
	}
	out->reason = image_lookup(fs, m, offset, out);
	if ((out->reason == RPT_NO_SYMBOLS || out->reason == RPT_OUTSIDE_SYMBOL) && ask_dinfod(fs, m))
		out->reason = image_lookup(fs, m, offset, out);
	return out->reason == RPT_FILE_UNREADABLE ? -ENOMEM : 0;
}

static uint64_t memo_hash(uint32_t mod, uint64_t offset)
{
	return hash_u64(hash_u64(0, mod), offset);
}

/* The answer kept for (@mod, @offset), or NULL. */
static const struct memo *memo_find(const struct symfs *fs, uint32_t mod, uint64_t offset)
{
	size_t pos = HTAB_START;
	uint64_t v;

	while (htab__next(&fs->memo_tab, memo_hash(mod, offset), &pos, &v))
		if (fs->memo[v - 1].mod == mod && fs->memo[v - 1].offset == offset)
			return &fs->memo[v - 1];
	return NULL;
}

/* Room for one more answer, so that memo_add() cannot fail.  0 or -ENOMEM. */
static int memo_reserve(struct symfs *fs)
{
	struct memo *v;
	size_t cap;

	if (fs->memo_nr == fs->memo_cap) {
		cap = fs->memo_cap ? fs->memo_cap * 2 : 128;
		v = realloc(fs->memo, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		fs->memo = v;
		fs->memo_cap = cap;
	}
	return htab__reserve(&fs->memo_tab, 1);
}

/* Keep @m, after memo_reserve(). */
static const struct memo *memo_add(struct symfs *fs, const struct memo *m)
{
	fs->memo[fs->memo_nr] = *m;
	if (htab__add(&fs->memo_tab, memo_hash(m->mod, m->offset), fs->memo_nr + 1))
		return NULL;
	return &fs->memo[fs->memo_nr++];
}

bool symfs__name(struct symfs *fs, const struct rpt_frame *f, struct symfs_name *out)
{
	const struct memo *slot;
	struct symfs_name got;
	uint32_t ci;

	if (!fs || f->kind != RPT_FRAME_USER || f->module >= fs->nr_mods)
		return false;
	ci = fs->mods[f->module].canon;
	switch (fs->mods[ci].where) {
	case W_BUILD_ID:
	case W_PATH:
	case W_DEBUG_ONLY:
		break;
	case W_MISMATCH:
		if (f->sym)
			return false;
		*out = (struct symfs_name){ .reason = RPT_BUILD_ID_MISMATCH };
		return true;
	default:
		return false;
	}
	slot = memo_find(fs, ci, f->offset);
	if (!slot) {
		if (memo_reserve(fs) || resolve(fs, ci, f->offset, &got))
			return false;
		slot = memo_add(fs, &(struct memo){ f->offset, ci, got.reason, got.sym, got.sym_off });
		if (!slot)
			return false;
	}
	if (!slot->sym && f->sym)
		return false;
	*out = (struct symfs_name){ slot->sym, slot->sym_off, slot->reason };
	return true;
}

void symfs__stats(const struct symfs *fs, struct symfs_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!fs)
		return;
	for (i = 0; i < fs->nr_mods; i++) {
		if (fs->mods[i].where == W_NOT_FILE)
			continue;
		st->modules++;
		switch (fs->mods[fs->mods[i].canon].where) {
		case W_BUILD_ID:
			st->by_build_id++;
			break;
		case W_PATH:
			st->by_path++;
			break;
		case W_DEBUG_ONLY:
			st->debug_only++;
			break;
		case W_MISMATCH:
			st->mismatch++;
			break;
		case W_NO_OFFSETS:
			st->no_offsets++;
			break;
		default:
			st->not_found++;
			break;
		}
	}
	st->loads = fs->loads;
	st->loaded = imgcache__nr_loaded(&fs->images);
}

const char *symfs__dir(const struct symfs *fs)
{
	return fs ? fs->dir : NULL;
}

/* "N what" after *@sep, when N is not 0. */
static void put_count(FILE *out, const char **sep, size_t n, const char *what)
{
	if (!n)
		return;
	fprintf(out, "%s%zu %s", *sep, n, what);
	*sep = ", ";
}

void symfs__print_header(const struct symfs *fs, FILE *out)
{
	struct symfs_stats st;
	const char *sep = "", *p;

	symfs__stats(fs, &st);
	/* A path the user typed, but still nothing a terminal would act on. */
	fprintf(out, "# user symbols: from --symfs ");
	for (p = fs->dir; *p; p++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, out);
	fprintf(out, ": %zu of %zu file modules (", st.by_build_id + st.by_path + st.debug_only, st.modules);
	put_count(out, &sep, st.by_build_id, "by build-id");
	put_count(out, &sep, st.by_path, "by path");
	put_count(out, &sep, st.debug_only, "debug file only");
	fprintf(out, "%s)", sep[0] ? "" : "none");
	if (st.not_found)
		fprintf(out, "; not there, recorded names kept: %zu", st.not_found);
	if (st.mismatch)
		fprintf(out, "; refused, another build-id: %zu", st.mismatch);
	if (st.no_offsets)
		fprintf(out, "; a debug file without file offsets, its binary needed: %zu", st.no_offsets);
	if (dinfod__count(DINFOD_ASKED))
		fprintf(out, "; debuginfod: %llu of %llu build-ids found",
			(unsigned long long)dinfod__count(DINFOD_FOUND),
			(unsigned long long)dinfod__count(DINFOD_ASKED));
	fputc('\n', out);
}
