// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * korc: the kernel's ORC tables into the sampler's maps (korc.h).
 * Userspace cannot read kernel memory without CAP_SYS_RAWIO (/proc/kcore),
 * which the recorder does not hold, so BPF copies: kdesc.bpf.c reads each
 * module's struct module, korc_copy (bpf/korc.bpf.h) the tables, a chunk
 * per BPF_PROG_TEST_RUN so that no run keeps a CPU for long.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfsym.h"
#include "kdesc.skel.h"
#include "record/korc.h"
#include "sampler.skel.h"
#include "base/util.h"

#define KORC_SEGS_MAX	1024		/* bpf/korc.bpf.h's KORC_MAX_SEGS */
#define KORC_RUN	16384		/* entries a copy run (bpf/korc.bpf.h's KORC_CHUNK caps it) */
#define KORC_BLOCK	256u
#define KORC_ENTRIES_MAX (1u << 22)	/* 64 MiB of tables: past it, a table is not believed */
#define KORC_TEXT_MAX	(1ull << 31)	/* a text range's bytes, u32 offsets with room */
#define KORC_BLOCKS_MAX	(1u << 21)	/* 16 MiB of block index: ranges past it are left out */

/* One text range and where its table is, in the kernel and in the maps. */
struct korc_span {
	uint64_t base, end;	/* text */
	uint64_t ip_tab, orc_tab;
	uint32_t n;		/* the kernel's entries */
	uint32_t dst;		/* where they go in korc_ips/korc_ents */
	uint32_t blk;		/* its block index's first slot */
};

struct korc {
	struct korc_span *spans;	/* [0]: vmlinux; then modules by base */
	uint32_t nr;
	uint64_t entries, blocks;	/* the maps' sizes */
	uint32_t published;		/* segments in korc_segs */
};

static uint32_t span_blocks(const struct korc_span *s)
{
	return (uint32_t)((s->end - s->base + KORC_BLOCK - 1) / KORC_BLOCK) + 1;
}

struct ksyms_found {
	uint64_t ip, ip_end, orc, text, etext;
	uint64_t *mods;		/* __this_module addresses */
	uint32_t nr_mods, cap_mods;
};

/* The symbols korc needs from /proc/kallsyms.  0 or -errno. */
static int read_kallsyms(struct ksyms_found *f)
{
	FILE *fp = fopen("/proc/kallsyms", "re");
	char line[512], name[256], type;
	unsigned long long a;
	int err = 0;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		/* Most lines are neither: a cheap test before the parse. */
		if (!strstr(line, "orc_unwind") && !strstr(line, "_stext") && !strstr(line, "_etext") &&
		    !strstr(line, "__this_module"))
			continue;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "__start_orc_unwind_ip"))
			f->ip = a;
		else if (!strcmp(name, "__stop_orc_unwind_ip"))
			f->ip_end = a;
		else if (!strcmp(name, "__start_orc_unwind"))
			f->orc = a;
		else if (!strcmp(name, "_stext"))
			f->text = a;
		else if (!strcmp(name, "_etext"))
			f->etext = a;
		else if (!strcmp(name, "__this_module") && a && f->nr_mods < KORC_SEGS_MAX - 1) {
			if (f->nr_mods == f->cap_mods) {
				uint32_t cap = f->cap_mods ? 2 * f->cap_mods : 64;
				uint64_t *m = realloc(f->mods, cap * sizeof(*m));

				if (!m) {
					err = -ENOMEM;
					break;
				}
				f->mods = m;
				f->cap_mods = cap;
			}
			f->mods[f->nr_mods++] = a;
		}
	}
	fclose(fp);
	return err;
}

/* Each module's text and tables, read in BPF (kdesc.bpf.c); those read well become spans. */
static int describe_modules(struct korc *k, const struct ksyms_found *f)
{
	struct kdesc_bpf *d;
	uint32_t i;
	int err;

	if (!f->nr_mods)
		return 0;
	d = kdesc_bpf__open_and_load();
	if (!d)
		return -errno;
	for (i = 0; i < f->nr_mods; i++)
		d->bss->kdesc_in[i] = f->mods[i];
	d->bss->kdesc_nr = f->nr_mods;
	{
		LIBBPF_OPTS(bpf_test_run_opts, o);

		err = bpf_prog_test_run_opts(bpf_program__fd(d->progs.kdesc), &o);
	}
	for (i = 0; !err && i < f->nr_mods; i++) {
		const struct bpfsym_kdesc_mod *m = &d->bss->kdesc_out[i];
		struct korc_span *s = &k->spans[k->nr];

		if (!m->ok || !m->n || m->n > KORC_ENTRIES_MAX || !m->size || m->size > KORC_TEXT_MAX ||
		    m->base + m->size < m->base)
			continue;
		*s = (struct korc_span){ .base = m->base, .end = m->base + m->size, .ip_tab = m->ip_tab,
					 .orc_tab = m->orc_tab, .n = m->n };
		k->nr++;
	}
	kdesc_bpf__destroy(d);
	return err;
}

static int span_cmp(const void *a, const void *b)
{
	const struct korc_span *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

struct korc *korc__plan(void)
{
	struct ksyms_found f = {};
	struct korc *k;
	uint32_t i;
	int err;

	err = read_kallsyms(&f);
	if (!err && (!f.ip || !f.orc || f.ip_end <= f.ip || !f.text || f.etext <= f.text ||
		     f.etext - f.text > KORC_TEXT_MAX || (f.ip_end - f.ip) / 4 > KORC_ENTRIES_MAX))
		err = -ENOENT;
	if (err) {
		pr_debug("bpfsym: kernel unwinder: no ORC tables in /proc/kallsyms: %s\n", strerror(-err));
		free(f.mods);
		errno = -err;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (k)
		k->spans = calloc(1 + (size_t)f.nr_mods, sizeof(*k->spans));
	if (!k || !k->spans) {
		free(k);
		free(f.mods);
		errno = ENOMEM;
		return NULL;
	}
	k->spans[0] = (struct korc_span){ .base = f.text, .end = f.etext, .ip_tab = f.ip, .orc_tab = f.orc,
					  .n = (uint32_t)((f.ip_end - f.ip) / 4) };
	k->nr = 1;
	err = describe_modules(k, &f);
	free(f.mods);
	if (err)
		pr_debug("bpfsym: kernel unwinder: modules not described (%s): their frames end its stacks\n",
			 strerror(-err));
	qsort(k->spans + 1, k->nr - 1, sizeof(*k->spans), span_cmp);
	for (i = 0; i < k->nr; i++) {
		if (k->entries + k->spans[i].n > KORC_ENTRIES_MAX ||
		    k->blocks + span_blocks(&k->spans[i]) > KORC_BLOCKS_MAX) {
			k->nr = i;	/* the rest: frames in them end the unwind */
			break;
		}
		k->spans[i].dst = (uint32_t)k->entries;
		k->spans[i].blk = (uint32_t)k->blocks;
		k->entries += k->spans[i].n;
		k->blocks += span_blocks(&k->spans[i]);
	}
	if (!k->nr) {
		pr_debug("bpfsym: kernel unwinder: vmlinux's tables past the caps\n");
		korc__free(k);
		errno = E2BIG;
		return NULL;
	}
	return k;
}

void korc__size(const struct korc *k, struct sampler_bpf *s)
{
	s->rodata->korc_on = k != NULL;
	bpf_program__set_autoload(s->progs.korc_copy, k != NULL);
	bpf_map__set_max_entries(s->maps.korc_ips, k ? (uint32_t)k->entries : 1);
	bpf_map__set_max_entries(s->maps.korc_ents, k ? (uint32_t)k->entries : 1);
	bpf_map__set_max_entries(s->maps.korc_blk, k ? (uint32_t)k->blocks : 1);
	if (!k)
		bpf_map__set_max_entries(s->maps.korc_segs, 1);
}

/* Copy span @sp's entries into the maps, a run at a time.  0 or -errno. */
static int copy_span(struct sampler_bpf *s, const struct korc_span *sp)
{
	int fd = bpf_program__fd(s->progs.korc_copy), err;
	uint32_t at;

	for (at = 0; at < sp->n; at += KORC_RUN) {
		LIBBPF_OPTS(bpf_test_run_opts, o);
		uint32_t n = sp->n - at < KORC_RUN ? sp->n - at : KORC_RUN;

		s->bss->korc_req.ip_tab = sp->ip_tab + 4ull * at;
		s->bss->korc_req.orc_tab = sp->orc_tab + 6ull * at;
		s->bss->korc_req.base = sp->base;
		s->bss->korc_req.dst = sp->dst + at;
		s->bss->korc_req.n = n;
		err = bpf_prog_test_run_opts(fd, &o);
		if (err)
			return err;
		if (s->bss->korc_req.done != n)
			return -EFAULT;	/* a table the kernel would not let be read */
	}
	return 0;
}

/*
 * Index span @sp from the copied ips (@ips: the map's mmap, a u32 each 8
 * bytes) into @blk, and say which of its entries are its text's: those
 * below zero (init text, freed) wrap past the text's size.  The segment in
 * *@seg, or -ERANGE when the entries in the text are not one sorted run.
 */
static int index_span(const struct korc_span *sp, const uint64_t *ips, uint64_t *blk, struct bpfsym_korc_seg *seg)
{
	uint64_t size = sp->end - sp->base;
	uint32_t i, lo = sp->n, hi = sp->n, b, nblk = span_blocks(sp) - 1;

	for (i = 0; i < sp->n; i++)
		if ((uint32_t)ips[sp->dst + i] < size) {
			lo = i;
			break;
		}
	for (i = lo; i < sp->n; i++) {
		uint32_t v = (uint32_t)ips[sp->dst + i];

		if (v >= size) {
			hi = i;
			break;
		}
		if (i > lo && v < (uint32_t)ips[sp->dst + i - 1])
			return -ERANGE;
	}
	for (i = hi; i < sp->n; i++)
		if ((uint32_t)ips[sp->dst + i] < size)
			return -ERANGE;
	if (lo == hi)
		return -ERANGE;
	i = lo;
	for (b = 0; b <= nblk; b++) {
		while (i < hi && (uint32_t)ips[sp->dst + i] < (uint64_t)b * KORC_BLOCK)
			i++;
		blk[sp->blk + b] = i - lo;
	}
	*seg = (struct bpfsym_korc_seg){ .base = sp->base, .end = sp->end, .first = sp->dst + lo, .n = hi - lo,
				    .blk = sp->blk, .nblk = nblk };
	return 0;
}

int korc__fill(struct korc *k, struct sampler_bpf *s)
{
	size_t ips_len = (size_t)k->entries * 8, blk_len = (size_t)k->blocks * 8;
	uint64_t *ips = MAP_FAILED, *blk = MAP_FAILED;
	struct bpfsym_korc_seg seg;
	uint32_t i, nseg = 0;
	int err = 0;

	for (i = 0; i < k->nr && !err; i++) {
		err = copy_span(s, &k->spans[i]);
		/* vmlinux's table is needed; a module's that cannot be read is left out. */
		if (err && i) {
			pr_debug("bpfsym: kernel unwinder: a module's table at %#" PRIx64 " not read: %s\n",
				 k->spans[i].ip_tab, strerror(-err));
			k->spans[i].n = 0;
			err = 0;
		}
	}
	if (!err) {
		ips = mmap(NULL, ips_len, PROT_READ, MAP_SHARED, bpf_map__fd(s->maps.korc_ips), 0);
		blk = mmap(NULL, blk_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(s->maps.korc_blk), 0);
		if (ips == MAP_FAILED || blk == MAP_FAILED)
			err = -errno;
	}
	for (i = 0; i < k->nr && !err; i++) {
		if (!k->spans[i].n)
			continue;
		if (index_span(&k->spans[i], ips, blk, &seg)) {
			if (!i) {
				err = -ERANGE;
				break;
			}
			continue;
		}
		err = bpf_map_update_elem(bpf_map__fd(s->maps.korc_segs), &nseg, &seg, BPF_ANY);
		nseg++;
	}
	if (ips != MAP_FAILED)
		munmap(ips, ips_len);
	if (blk != MAP_FAILED)
		munmap(blk, blk_len);
	if (err) {
		pr_debug("bpfsym: kernel unwinder: its tables could not be made: %s\n", strerror(-err));
		return err;
	}
	k->published = nseg;
	s->bss->korc_nsegs = nseg;
	__atomic_store_n(&s->bss->korc_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

void korc__counts(const struct korc *k, uint64_t *entries, uint32_t *segs)
{
	*entries = k ? k->entries : 0;
	*segs = k ? k->published : 0;
}

void korc__free(struct korc *k)
{
	if (!k)
		return;
	free(k->spans);
	free(k);
}
