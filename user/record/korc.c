// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * korc: the kernel's ORC tables into the sampler's maps (korc.h).
 * Userspace cannot read kernel memory without CAP_SYS_RAWIO (/proc/kcore),
 * which the recorder does not hold, so BPF copies: kdesc.bpf.c reads each
 * module's struct module, korc_copy (bpf/korc.bpf.h) the tables, a chunk
 * per BPF_PROG_TEST_RUN so that no run keeps a CPU for long.
 *
 * Modules loaded or unloaded while recording: a watcher thread looks at
 * /proc/modules each second and, when its names, sizes or addresses changed,
 * describes the modules again, copies a new one's table into the room
 * kept spare at the end of the maps (never over an entry a published
 * list names: a reader may still be on it), and publishes the whole list
 * in the other half of korc_segs (korc.bpf.h says how a reader sees it).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
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
#include "base/privdrop.h"
#include "base/util.h"

#define KORC_SEGS_MAX	1024		/* bpf/korc.bpf.h's KORC_MAX_SEGS */
#define KORC_RUN	16384		/* entries a copy run (bpf/korc.bpf.h's KORC_CHUNK caps it) */
#define KORC_BLOCK	256u
#define KORC_ENTRIES_MAX (1u << 22)	/* 64 MiB of tables: past it, a table is not believed */
#define KORC_TEXT_MAX	(1ull << 31)	/* a text range's bytes, u32 offsets with room */
#define KORC_BLOCKS_MAX	(1u << 21)	/* 16 MiB of block index: ranges past it are left out */
/* Room for modules loaded while recording: 1 MiB of entries, 512 KiB of index (16 MiB of text). */
#define KORC_SPARE_ENTRIES (1u << 16)
#define KORC_SPARE_BLOCKS (1u << 16)
#define KORC_WATCH_MS	1000		/* how often /proc/modules is looked at */
#define KORC_MODULES_MAX (1u << 20)	/* /proc/modules' bytes read at most */

/* One text range and where its table is, in the kernel and in the maps. */
struct korc_span {
	uint64_t base, end;	/* text */
	uint64_t ip_tab, orc_tab;
	uint32_t n;		/* the kernel's entries */
	uint32_t dst;		/* where they go in korc_ips/korc_ents */
	uint32_t blk;		/* its block index's first slot */
	bool ok;		/* copied and indexed: seg is its segment */
	struct bpfsym_korc_seg seg;
};

struct korc {
	struct korc_span *spans;	/* [0]: vmlinux; then modules by base */
	uint32_t nr;
	uint64_t entries, blocks;	/* the maps' sizes */
	uint64_t used_entries, used_blocks; /* filled; the rest is spare room */
	uint32_t published;		/* segments in the list in use */
	uint32_t half;			/* that list's half of korc_segs: 0 or 1 */
	struct kdesc_bpf *desc;		/* kept loaded: the privileges to load it are dropped later */
	char *mods;			/* /proc/modules' names, sizes and addresses when last described */
	/* The watcher (korc__watch): its thread, and what stops it. */
	struct sampler_bpf *s;
	pthread_t watcher;
	bool watching, stop;
	pthread_mutex_t lock;
	pthread_cond_t wake;
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

/*
 * Each module's text and tables, read in BPF (kdesc.bpf.c, loaded once in
 * k->desc): those read well are put in @out (room for f->nr_mods), their
 * number in *@nr.  0 or -errno.
 */
static int describe_modules(struct korc *k, const struct ksyms_found *f, struct korc_span *out, uint32_t *nr)
{
	struct kdesc_bpf *d = k->desc;
	uint32_t i;
	int err;

	*nr = 0;
	if (!f->nr_mods)
		return 0;
	if (!d) {
		d = kdesc_bpf__open_and_load();
		if (!d)
			return -errno;
		k->desc = d;
	}
	for (i = 0; i < f->nr_mods; i++)
		d->bss->kdesc_in[i] = f->mods[i];
	d->bss->kdesc_nr = f->nr_mods;
	{
		LIBBPF_OPTS(bpf_test_run_opts, o);

		err = bpf_prog_test_run_opts(bpf_program__fd(d->progs.kdesc), &o);
	}
	for (i = 0; !err && i < f->nr_mods; i++) {
		const struct bpfsym_kdesc_mod *m = &d->bss->kdesc_out[i];

		if (!m->ok || !m->n || m->n > KORC_ENTRIES_MAX || !m->size || m->size > KORC_TEXT_MAX ||
		    m->base + m->size < m->base)
			continue;
		out[(*nr)++] = (struct korc_span){ .base = m->base, .end = m->base + m->size, .ip_tab = m->ip_tab,
						   .orc_tab = m->orc_tab, .n = m->n };
	}
	return err;
}

/*
 * /proc/modules' names, sizes and addresses, a line each, into a new
 * string (the reference counts and users change without any text
 * moving; a size tells two builds of one module at one address apart).
 * Whole lines (getline): a long list of users must not split one into
 * pieces whose text moves with a count.  NULL with errno: no modules
 * (ENOENT: a kernel without them), ENOMEM.
 */
static char *modules_read(void)
{
	FILE *fp = fopen("/proc/modules", "re");
	char name[128], *line = NULL, *out = NULL, *t;
	size_t len = 0, cap = 0, lcap = 0;
	unsigned long long size, a;
	bool nomem = false;
	int e;

	if (!fp)
		return NULL;
	while (getline(&line, &lcap, fp) > 0) {
		/* name size refs users state address */
		e = sscanf(line, "%127s %llu %*s %*s %*s %llx", name, &size, &a);
		if (e < 1)
			continue;
		if (e < 3)
			size = a = 0;
		if (len + sizeof(name) + 42 > cap) {
			cap = cap ? 2 * cap : 4096;
			if (cap > KORC_MODULES_MAX || !(t = realloc(out, cap))) {
				free(out);
				out = NULL;
				nomem = true;
				break;
			}
			out = t;
		}
		len += (size_t)snprintf(out + len, cap - len, "%s %llu %llx\n", name, size, a);
	}
	free(line);
	fclose(fp);
	if (nomem)
		errno = ENOMEM;
	else if (!out)
		out = strdup("");
	return out;
}

static int span_cmp(const void *a, const void *b)
{
	const struct korc_span *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

/*
 * Place @sp in the maps' room past what is filled: 0, or -ENOSPC (its
 * frames will end the unwind).
 */
static int span_place(struct korc *k, struct korc_span *sp)
{
	if (k->used_entries + sp->n > k->entries || k->used_blocks + span_blocks(sp) > k->blocks)
		return -ENOSPC;
	sp->dst = (uint32_t)k->used_entries;
	sp->blk = (uint32_t)k->used_blocks;
	k->used_entries += sp->n;
	k->used_blocks += span_blocks(sp);
	return 0;
}

struct korc *korc__plan(void)
{
	struct ksyms_found f = {};
	struct korc *k;
	uint32_t i, nr = 0;
	int err;

	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	/* Before kallsyms: a module loaded between the two is described again by the watcher. */
	k->mods = modules_read();
	err = read_kallsyms(&f);
	if (!err && (!f.ip || !f.orc || f.ip_end <= f.ip || !f.text || f.etext <= f.text ||
		     f.etext - f.text > KORC_TEXT_MAX || (f.ip_end - f.ip) / 4 > KORC_ENTRIES_MAX))
		err = -ENOENT;
	if (err) {
		pr_debug("bpfsym: kernel unwinder: no ORC tables in /proc/kallsyms: %s\n", strerror(-err));
		goto fail;
	}
	k->spans = calloc(1 + (size_t)f.nr_mods, sizeof(*k->spans));
	if (!k->spans) {
		err = -ENOMEM;
		goto fail;
	}
	k->spans[0] = (struct korc_span){ .base = f.text, .end = f.etext, .ip_tab = f.ip, .orc_tab = f.orc,
					  .n = (uint32_t)((f.ip_end - f.ip) / 4) };
	err = describe_modules(k, &f, k->spans + 1, &nr);
	free(f.mods);
	f.mods = NULL;
	if (err)
		pr_debug("bpfsym: kernel unwinder: modules not described (%s): their frames end its stacks\n",
			 strerror(-err));
	k->nr = 1 + nr;
	qsort(k->spans + 1, k->nr - 1, sizeof(*k->spans), span_cmp);
	for (i = 0; i < k->nr; i++) {
		if (k->entries + k->spans[i].n > KORC_ENTRIES_MAX ||
		    k->blocks + span_blocks(&k->spans[i]) > KORC_BLOCKS_MAX) {
			k->nr = i;	/* the rest: frames in them end the unwind */
			break;
		}
		k->entries += k->spans[i].n;
		k->blocks += span_blocks(&k->spans[i]);
	}
	if (!k->nr) {
		pr_debug("bpfsym: kernel unwinder: vmlinux's tables past the caps\n");
		err = -E2BIG;
		goto fail;
	}
	/* Room for the modules loaded while recording, on a kernel that has modules. */
	if (k->mods) {
		k->entries = k->entries + KORC_SPARE_ENTRIES < KORC_ENTRIES_MAX ? k->entries + KORC_SPARE_ENTRIES :
										KORC_ENTRIES_MAX;
		k->blocks = k->blocks + KORC_SPARE_BLOCKS < KORC_BLOCKS_MAX ? k->blocks + KORC_SPARE_BLOCKS :
									      KORC_BLOCKS_MAX;
	}
	for (i = 0; i < k->nr; i++)
		span_place(k, &k->spans[i]);	/* fits: counted above */
	return k;
fail:
	free(f.mods);
	korc__free(k);
	errno = -err;
	return NULL;
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

/* The maps' mmaps index_span writes through. */
struct korc_mmaps {
	uint64_t *ips, *blk;
	size_t ips_len, blk_len;
};

static void mmaps_close(struct korc_mmaps *m)
{
	if (m->ips != MAP_FAILED)
		munmap(m->ips, m->ips_len);
	if (m->blk != MAP_FAILED)
		munmap(m->blk, m->blk_len);
}

/* Map korc_ips (read) and korc_blk (written) of @s.  0 or -errno, with nothing left mapped. */
static int mmaps_open(const struct korc *k, struct sampler_bpf *s, struct korc_mmaps *m)
{
	int err = 0;

	m->ips_len = (size_t)k->entries * 8;
	m->blk_len = (size_t)k->blocks * 8;
	m->ips = mmap(NULL, m->ips_len, PROT_READ, MAP_SHARED, bpf_map__fd(s->maps.korc_ips), 0);
	if (m->ips == MAP_FAILED)
		err = -errno;
	m->blk = mmap(NULL, m->blk_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(s->maps.korc_blk), 0);
	if (m->blk == MAP_FAILED && !err)
		err = -errno;
	if (err)
		mmaps_close(m);
	return err;
}

/* Copy and index span @sp (placed) into the maps: sp->ok and sp->seg.  0 or -errno. */
static int span_load(struct sampler_bpf *s, const struct korc_mmaps *m, struct korc_span *sp)
{
	int err = copy_span(s, sp);

	if (!err)
		err = index_span(sp, m->ips, m->blk, &sp->seg);
	sp->ok = !err;
	return err;
}

/*
 * Write the segments of k's spans that loaded into the half of korc_segs
 * not in use, then make it the one in use (korc_view).  A reader of the
 * old half goes on reading it: the next publish writes there again only
 * a watch period later, and an unwind takes microseconds.  0 or -errno.
 */
static int publish(struct korc *k, struct sampler_bpf *s)
{
	uint32_t half = k->published ? !k->half : 0, slot = half * KORC_SEGS_MAX, i, n = 0;
	int fd = bpf_map__fd(s->maps.korc_segs);

	for (i = 0; i < k->nr && n < KORC_SEGS_MAX; i++) {
		if (!k->spans[i].ok)
			continue;
		if (bpf_map_update_elem(fd, &(uint32_t){ slot + n }, &k->spans[i].seg, BPF_ANY))
			return -errno;
		n++;
	}
	__atomic_store_n(&s->bss->korc_view, (uint64_t)slot << 32 | n, __ATOMIC_RELEASE);
	k->half = half;
	k->published = n;
	return 0;
}

int korc__fill(struct korc *k, struct sampler_bpf *s)
{
	struct korc_mmaps m;
	uint32_t i;
	int err;

	err = mmaps_open(k, s, &m);
	if (err)
		goto out;
	for (i = 0; i < k->nr && !err; i++) {
		err = span_load(s, &m, &k->spans[i]);
		/* vmlinux's table is needed; a module's that cannot be read or indexed is left out. */
		if (err && i) {
			pr_debug("bpfsym: kernel unwinder: a module's table at %#" PRIx64 " not read: %s\n",
				 k->spans[i].ip_tab, strerror(-err));
			err = 0;
		}
	}
	mmaps_close(&m);
	if (!err)
		err = publish(k, s);
out:
	if (err) {
		pr_debug("bpfsym: kernel unwinder: its tables could not be made: %s\n", strerror(-err));
		return err;
	}
	k->s = s;
	__atomic_store_n(&s->bss->korc_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Span @sp as already loaded in @k (the same text and tables), or NULL. */
static const struct korc_span *span_known(const struct korc *k, const struct korc_span *sp)
{
	uint32_t i;

	for (i = 1; i < k->nr; i++)
		if (k->spans[i].base == sp->base && k->spans[i].end == sp->end && k->spans[i].ip_tab == sp->ip_tab &&
		    k->spans[i].orc_tab == sp->orc_tab && k->spans[i].n == sp->n)
			return &k->spans[i];
	return NULL;
}

/*
 * The modules again (after /proc/modules changed): those known keep
 * their room, a new one is copied into spare room, and the list is
 * published.  0 or -errno (the list in use stays).
 */
static int korc_redescribe(struct korc *k)
{
	struct ksyms_found f = {};
	struct korc_span *spans;
	struct korc_mmaps m;
	uint32_t i, nr = 0, kept = 0, added = 0, out = 0, gone;
	int err;

	err = read_kallsyms(&f);
	spans = err ? NULL : calloc(1 + (size_t)f.nr_mods, sizeof(*spans));
	if (!err && !spans)
		err = -ENOMEM;
	if (!err)
		err = describe_modules(k, &f, spans + 1, &nr);
	free(f.mods);
	if (!err)
		err = mmaps_open(k, k->s, &m);
	if (err) {
		free(spans);
		return err;
	}
	spans[0] = k->spans[0];
	for (i = 1; i <= nr; i++) {
		const struct korc_span *old = span_known(k, &spans[i]);

		if (old) {
			spans[i] = *old;
			kept++;
		} else if (span_place(k, &spans[i])) {
			out++;
		} else if (!span_load(k->s, &m, &spans[i])) {
			added++;
		}
	}
	mmaps_close(&m);
	qsort(spans + 1, nr, sizeof(*spans), span_cmp);
	gone = k->nr - 1 - kept;
	free(k->spans);
	k->spans = spans;
	k->nr = 1 + nr;
	pr_debug("bpfsym: kernel unwinder: modules changed: %u tables kept, %u added, %u gone, %u left out for "
		 "want of room (%" PRIu64 " of %" PRIu64 " entries used)\n", kept, added, gone, out,
		 k->used_entries, k->entries);
	return publish(k, k->s);
}

static void *watch(void *arg)
{
	struct korc *k = arg;
	struct timespec t;
	char *now;
	int err;

	/* The tables' work needs no more than this: kallsyms' addresses, the BPF maps and programs. */
	err = privdrop__thread((1ull << CAP_BPF) | (1ull << CAP_SYSLOG), NULL);
	if (err)
		pr_warn("bpfsym: kernel unwinder: its watcher keeps its privileges: %s\n", strerror(-err));
	pthread_mutex_lock(&k->lock);
	while (!k->stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += KORC_WATCH_MS / 1000;
		pthread_cond_timedwait(&k->wake, &k->lock, &t);
		if (k->stop)
			break;
		pthread_mutex_unlock(&k->lock);
		now = modules_read();
		if (now && strcmp(now, k->mods)) {
			err = korc_redescribe(k);
			if (err)
				pr_debug("bpfsym: kernel unwinder: modules changed, not described again: %s\n",
					 strerror(-err));
			free(k->mods);
			k->mods = now;
		} else {
			free(now);
		}
		pthread_mutex_lock(&k->lock);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

int korc__watch(struct korc *k)
{
	pthread_condattr_t ca;
	int err;

	if (!k->mods || !k->s)
		return 0;	/* a kernel without modules, or tables not filled */
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals are the recorder's: its poll() must be the one Ctrl-C wakes. */
	err = thread_start(&k->watcher, watch, k);
	if (err) {
		pthread_mutex_destroy(&k->lock);
		pthread_cond_destroy(&k->wake);
		return err;
	}
	k->watching = true;
	return 0;
}

void korc__counts(const struct korc *k, uint64_t *entries, uint32_t *segs)
{
	*entries = k ? k->used_entries : 0;
	*segs = k ? k->published : 0;
}

void korc__free(struct korc *k)
{
	if (!k)
		return;
	if (k->watching) {
		pthread_mutex_lock(&k->lock);
		k->stop = true;
		pthread_cond_signal(&k->wake);
		pthread_mutex_unlock(&k->lock);
		pthread_join(k->watcher, NULL);
		pthread_mutex_destroy(&k->lock);
		pthread_cond_destroy(&k->wake);
	}
	kdesc_bpf__destroy(k->desc);
	free(k->mods);
	free(k->spans);
	free(k);
}
