/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer_int: the symbolizer's insides, shared by its two files:
 * symbolizer.c (mapped files: modules, images, loading, kernel) and
 * symbolizer_named.c (code named from files no mapping of it points to:
 * --map-anon hints, symbolize --elf, JIT perf maps and jitdumps).
 * Not a public interface.
 */
#ifndef BPFSYM_SYMBOLIZER_INT_H
#define BPFSYM_SYMBOLIZER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/demangle.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/fileid.h"
#include "symbolize/jit/jitmap.h"
#include "symbolize/kernel/kallsyms.h"
#include "base/lru.h"
#include "base/strtab.h"
#include "symbolize/symbolizer.h"

/* A link in a chained hash table, embedded in what it links. */
struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct sym_htab {
	struct hnode **b;
	size_t nb, nr;		/* nb: power of two */
};

#define hnode_entry(n, type, member) ((type *)((char *)(n) - offsetof(type, member)))

/* The symbols of one file content. */
struct image {
	struct elfsym *es;	/* NULL: not loaded (yet, or evicted) */
	struct elfsym *dbg;	/* the separate debug file's symbols, if richer */
	struct lru_node lru;	/* in symbolizer.loaded while es is set */
	uint8_t build_id[FILEID_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: none, the image of one module only */
	struct hnode hn;	/* in symbolizer.images when it has a build-id */
	struct image *next;	/* in symbolizer.all_images */
	size_t bytes;		/* memory of es and dbg while loaded */
	/*
	 * The display name of each symbol of the table in use (dbg, else es),
	 * by elfsym__sym_index(), set on first use: interning and demangling
	 * once per symbol, not once per frame.  NULL until a first lookup.
	 */
	const char **names;
};

struct smod {
	struct sym_module pub;	/* first: frames point here */
	char *path;		/* owned; pub.rpt.path */
	size_t path_len;
	struct hnode hn;	/* in files or named */
	/* Files only. */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	struct image *img;	/* NULL: never read, the identity is not known */
	struct fd_slot fd;	/* the file, kept open since it was read */
	uint32_t fail_reason;	/* RPT_OK: the last attempt did not fail */
	int fail_err;		/* its -errno, for symbolizer__pin */
	uint32_t fail_pid;
	unsigned int attempts;	/* failed attempts since the last success */
	bool fail_final;	/* the file itself is unusable: never retried */
};

struct symbolizer {
	char *proc_root;
	char *debug_root;
	const struct proc_table *procs;	/* the model: other processes of a namespace */
	struct ksyms *ks;
	uint64_t text_addr;
	size_t max_files, nr_loaded;
	size_t max_bytes, loaded_bytes;	/* memory of the images loaded */
	struct sym_htab files;	/* smod by (dev, ino, mtime) */
	struct sym_htab named;	/* smod, kernel modules and [vdso]-like, by (kind, path) */
	struct sym_htab images;	/* image by build-id */
	struct image *all_images;
	struct lru loaded;	/* images with symbols in memory, most recent first */
	struct fd_cache fds;	/* file modules' open files */
	struct smod anon;
	struct smod *vmlinux;
	struct strtab names;
	struct demangle_cache demangled;
	bool no_demangle;
	struct jitmap *jit;	/* perf maps and jitdumps, per process */
	struct elfsym *vdso;	/* our own [vdso]'s symbols, once read */
	size_t vdso_size;
	bool vdso_tried;
	/* --map-anon files, by the id proc_hint.id holds. */
	struct hint_file {
		struct smod *m;
		struct mapping mp;	/* the whole file, as if mapped at 0 */
	} *hints;
	uint32_t nr_hints;
	/* symbolizer__elf()'s last file: asked about again and again. */
	char *elf_path;
	struct smod *elf_mod;
	struct mapping elf_map;
};

/* The chain holding hash @h (NULL when the table is empty). */
struct hnode *htab_first(const struct sym_htab *t, uint64_t h);
/* Link @n, whose hash is set, into @t; -ENOMEM only when there is no bucket at all. */
int htab_insert(struct sym_htab *t, struct hnode *n);
/* The module of the file version mapped by @mp, by (dev, ino, mtime).  NULL on ENOMEM. */
struct smod *file_module(struct symbolizer *s, const struct mapping *mp);
/* Take @fd (consumed), a checked open of @m's file: learn or check @m's identity.  0 or -errno. */
int module_adopt(struct symbolizer *s, struct smod *m, int fd);
/* A failed attempt on @m through @pid: the reason its frames get. */
uint32_t note_failure(struct smod *m, uint32_t pid, int err);
/* Make @m's symbols available: RPT_OK, or why not. */
uint32_t file_load(struct symbolizer *s, struct smod *m, uint32_t pid, const struct mapping *mp);
/* Name @ip of mapping @mp (a file's) of process @pid into @out. */
void file_frame(struct symbolizer *s, uint32_t pid, const struct mapping *mp, uint64_t ip,
		struct sym_frame *out);
/* What a symbol @name (stable, or NULL after a failed intern) is shown as. */
const char *display_name(struct symbolizer *s, const char *name);
/* Name @ip of process @p from its JIT's own files: true when they did. */
bool jit_frame(struct symbolizer *s, const struct proc *p, uint64_t ip, struct sym_frame *out);

#endif /* BPFSYM_SYMBOLIZER_INT_H */
