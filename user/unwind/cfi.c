// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi: the ELF side of the table builder, and its public API (cfi.h).
 *
 * Keys are file offsets, so the executable PT_LOADs decide which FDEs
 * count and what their PCs become.  .eh_frame is found by its section
 * header, else (stripped section headers) through PT_GNU_EH_FRAME: the
 * .eh_frame_hdr's eh_frame_ptr, with the section running to the end of
 * its segment (its zero terminator ends it first).  .debug_frame comes
 * from the file itself and from the separate debug file, whose
 * addresses are the main file's: it has no PT_LOAD of its own to trust.
 * Files are read through libelf with pread (ELF_C_READ), never mmap'd:
 * a file truncated under us must give an error, not a SIGBUS.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/inputcap.h"
#include "unwind/cfi_int.h"

#ifndef SHT_X86_64_UNWIND
#define SHT_X86_64_UNWIND 0x70000001	/* lld's type for .eh_frame */
#endif

/* A compressed .debug_frame may inflate this much over its size, no more. */
#define MAX_INFLATE	64

/* The sections a file offers. */
struct cfi_scns {
	Elf_Scn *eh_frame, *debug_frame;
	GElf_Shdr eh_sh, debug_sh;
};

static int libelf_fail(struct cfi_builder *b, const char *what)
{
	return cfi_fail(b, -EINVAL, "%s: %s", what, elf_errmsg(-1));
}

/* An x86-64 ELF file, or -ENOEXEC. */
static int check_elf(struct cfi_builder *b, Elf *elf, const char *what)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return cfi_fail(b, -ENOEXEC, "%s: not an ELF file", what);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return cfi_fail(b, -ENOEXEC, "%s: not an x86-64 ELF file", what);
	return 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct cfi_seg *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta;
}

/* The executable PT_LOADs into *@segs (freed by the caller), and PT_GNU_EH_FRAME. */
static int load_segs(struct cfi_builder *b, Elf *elf, struct cfi_seg **segs, GElf_Phdr *hdr,
		     bool *has_hdr)
{
	struct cfi_seg *s;
	GElf_Phdr ph;
	size_t i, n;

	*has_hdr = false;
	if (elf_getphdrnum(elf, &n))
		return libelf_fail(b, "program headers");
	s = calloc(n ? n : 1, sizeof(*s));
	if (!s)
		return cfi_fail(b, -ENOMEM, "out of memory");
	*segs = s;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return libelf_fail(b, "program headers");
		if (ph.p_type == PT_GNU_EH_FRAME) {
			*hdr = ph;
			*has_hdr = true;
		}
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_memsz ||
		    ph.p_memsz > UINT64_MAX - ph.p_vaddr || ph.p_offset > INT64_MAX ||
		    ph.p_vaddr > INT64_MAX)
			continue;
		s[b->nsegs].vaddr = ph.p_vaddr;
		s[b->nsegs].end = ph.p_vaddr + ph.p_memsz;
		s[b->nsegs].delta = (int64_t)ph.p_offset - (int64_t)ph.p_vaddr;
		b->nsegs++;
	}
	/* Sorted for find_seg(); PT_LOADs are in order already in any sane file. */
	qsort(s, b->nsegs, sizeof(*s), seg_cmp);
	b->segs = s;
	return 0;
}

/* Find .eh_frame, .debug_frame, and the textrel/datarel bases. */
static void find_scns(struct cfi_builder *b, Elf *elf, struct cfi_scns *f)
{
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	size_t shstrndx;

	memset(f, 0, sizeof(*f));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") &&
		    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND)) {
			f->eh_frame = scn;
			f->eh_sh = sh;
		} else if (!strcmp(name, ".debug_frame") && sh.sh_type == SHT_PROGBITS) {
			f->debug_frame = scn;
			f->debug_sh = sh;
		} else if (!strcmp(name, ".text") && b) {
			b->text = sh.sh_addr;
		} else if (!strcmp(name, ".got") && b) {
			b->got = sh.sh_addr;
		}
	}
}

/*
 * -EFBIG, counted, when @size bytes of @what are more than any real
 * file's: the size is the file's word, and libelf reads it whole (a
 * sparse file declaring a 1 GiB .eh_frame costs 1 GiB of memory).
 */
static int over_cap(struct cfi_builder *b, const char *what, uint64_t size)
{
	if (size <= CFI_MAX_SECTION)
		return 0;
	inputcap__hit(INPUTCAP_CFI_SECTION);
	return cfi_fail(b, -EFBIG, "%s: 0x%llx bytes, over the cap of 0x%llx", what,
			(unsigned long long)size, (unsigned long long)CFI_MAX_SECTION);
}

/* The bytes of section @scn as @s (decompressed, within bounds). */
static int scn_data(struct cfi_builder *b, Elf_Scn *scn, const GElf_Shdr *sh, struct cfi_sec *s)
{
	Elf_Data *d;
	GElf_Chdr ch;
	int err;

	if (sh->sh_flags & SHF_COMPRESSED) {
		if (!gelf_getchdr(scn, &ch))
			return libelf_fail(b, s->name);
		err = over_cap(b, s->name, ch.ch_size);
		if (err)
			return err;
		if (ch.ch_size / MAX_INFLATE > sh->sh_size)
			return cfi_fail(b, -E2BIG, "%s: compressed to 0x%llx bytes from 0x%llx: a bomb?",
					s->name, (unsigned long long)sh->sh_size,
					(unsigned long long)ch.ch_size);
		if (elf_compress(scn, 0, 0) < 0)
			return libelf_fail(b, s->name);
	} else if ((err = over_cap(b, s->name, sh->sh_size))) {
		return err;
	}
	d = elf_getdata(scn, NULL);
	if (!d || (!d->d_buf && d->d_size))
		return libelf_fail(b, s->name);
	s->data = d->d_buf;
	s->len = d->d_size;
	s->vaddr = sh->sh_addr;
	return 0;
}

/*
 * .eh_frame found through the program headers: .eh_frame_hdr's
 * eh_frame_ptr, then the PT_LOAD that holds it (to its end).
 */
static int eh_frame_from_hdr(struct cfi_builder *b, Elf *elf, const GElf_Phdr *hdr, struct cfi_sec *s)
{
	struct cfi_sec hs = { ".eh_frame_hdr", NULL, 0, hdr->p_vaddr, CFI_EH_FRAME };
	struct cfi_cur c;
	const char *what = "truncated";
	uint64_t v, at, len;
	Elf_Data *d;
	GElf_Phdr ph;
	size_t i, n;
	uint8_t enc;
	int err;

	err = over_cap(b, ".eh_frame_hdr", hdr->p_filesz);
	if (err)
		return err;
	d = elf_getdata_rawchunk(elf, (int64_t)hdr->p_offset, hdr->p_filesz, ELF_T_BYTE);
	if (!d || !d->d_buf)
		return libelf_fail(b, ".eh_frame_hdr");
	hs.data = d->d_buf;
	hs.len = d->d_size;
	c.p = hs.data;
	c.end = hs.data + hs.len;
	if (hs.len < 4 || hs.data[0] != 1)
		return cfi_fail(b, -EINVAL, ".eh_frame_hdr: not version 1");
	enc = hs.data[1];
	c.p += 4;
	/* datarel, in .eh_frame_hdr, is relative to its start. */
	if ((enc & 0x70) == 0x30) {
		if (cfi_read_ptr(b, &hs, &c, enc & 0x0f, false, &v, &what))
			return cfi_fail(b, -EINVAL, ".eh_frame_hdr: eh_frame_ptr: %s", what);
		v += hdr->p_vaddr;
	} else if (cfi_read_ptr(b, &hs, &c, enc, false, &v, &what)) {
		return cfi_fail(b, -EINVAL, ".eh_frame_hdr: eh_frame_ptr: %s", what);
	}
	if (elf_getphdrnum(elf, &n))
		return libelf_fail(b, "program headers");
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || v < ph.p_vaddr ||
		    v - ph.p_vaddr >= ph.p_filesz)
			continue;
		at = v - ph.p_vaddr;
		/*
		 * The section runs to the end of its segment at most; what
		 * follows it there (.gcc_except_table) is small in real files.
		 */
		len = ph.p_filesz - at;
		err = over_cap(b, ".eh_frame (from .eh_frame_hdr)", len);
		if (err)
			return err;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + at), len, ELF_T_BYTE);
		if (!d || !d->d_buf)
			return libelf_fail(b, ".eh_frame (from .eh_frame_hdr)");
		s->data = d->d_buf;
		s->len = d->d_size;
		s->vaddr = v;
		return 0;
	}
	return cfi_fail(b, -EINVAL, ".eh_frame_hdr: eh_frame_ptr 0x%llx is in no PT_LOAD",
			(unsigned long long)v);
}

/* Walk .eh_frame (section or program headers), then the file's own .debug_frame. */
static int walk_main(struct cfi_builder *b, Elf *elf, const GElf_Phdr *hdr, bool has_hdr)
{
	struct cfi_sec s = { .name = ".eh_frame", .kind = CFI_EH_FRAME };
	struct cfi_scns f;
	int err = 0;

	find_scns(b, elf, &f);
	if (f.eh_frame)
		err = scn_data(b, f.eh_frame, &f.eh_sh, &s);
	else if (has_hdr)
		err = eh_frame_from_hdr(b, elf, hdr, &s);
	if (!err && s.data)
		err = cfi_walk(b, &s);
	b->neh = b->nfdes;
	if (err || !f.debug_frame)
		return err;
	s = (struct cfi_sec){ .name = ".debug_frame", .kind = CFI_DEBUG_FRAME };
	err = scn_data(b, f.debug_frame, &f.debug_sh, &s);
	return err ? err : cfi_walk(b, &s);
}

/* The separate debug file's .debug_frame, at the main file's addresses. */
static int walk_debug(struct cfi_builder *b, int fd)
{
	struct cfi_sec s = { .name = "debug file .debug_frame", .kind = CFI_DEBUG_FRAME };
	struct cfi_scns f;
	Elf *elf;
	int err;

	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = check_elf(b, elf, "debug file");
	if (!err) {
		find_scns(NULL, elf, &f);
		if (f.debug_frame)
			err = scn_data(b, f.debug_frame, &f.debug_sh, &s);
		if (!err && f.debug_frame)
			err = cfi_walk(b, &s);
	}
	elf_end(elf);
	return err;
}

/* Build the table of @elf (ended by the caller). */
/*
 * Build the table of @elf.  @elf is ended, and @img (its bytes, or NULL)
 * freed, once every section is evaluated: the merge, which needs as much
 * memory again as the rows, runs without the sections' bytes.
 */
static int build(Elf *elf, char *img, const struct cfi_opts *o, struct cfi_table **out,
		 char *errbuf, size_t errlen)
{
	struct cfi_builder b = { .err = errbuf, .errlen = errlen };
	struct cfi_seg *segs = NULL;
	struct cfi_row *shrunk;
	struct cfi_table *t;
	GElf_Phdr hdr = { 0 };
	bool has_hdr;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		elf_end(elf);
		free(img);
		return cfi_fail(&b, -ENOMEM, "out of memory");
	}
	b.st = &t->stats;
	b.max_rows = o && o->max_rows ? o->max_rows : CFI_DEFAULT_MAX_ROWS;
	err = check_elf(&b, elf, "file");
	if (!err)
		err = load_segs(&b, elf, &segs, &hdr, &has_hdr);
	if (!err)
		err = walk_main(&b, elf, &hdr, has_hdr);
	if (!err && o && o->debug_fd >= 0)
		err = walk_debug(&b, o->debug_fd);
	elf_end(elf);
	free(img);
	/* Give back what doubling left unused: the merge allocates the table beside. */
	if (!err && b.nraw && b.nraw < b.craw && (shrunk = realloc(b.raw, b.nraw * sizeof(*shrunk))))
		b.raw = shrunk;
	if (!err)
		err = cfi_merge(&b, t);
	free(segs);
	free(b.raw);
	free(b.fdes);
	free(b.cies);
	htab__free(&b.cie_idx);
	if (err) {
		cfi_table__free(t);
		return err;
	}
	*out = t;
	return 0;
}

/* libelf ready, the reason emptied: 0 or -EINVAL. */
static int start(char *err, size_t errlen)
{
	struct cfi_builder b = { .err = err, .errlen = errlen };

	if (err && errlen)
		err[0] = 0;
	return elf_version(EV_CURRENT) == EV_NONE ? libelf_fail(&b, "libelf") : 0;
}

int cfi_table__build_fd(int fd, const struct cfi_opts *o, struct cfi_table **out, char *err,
			size_t errlen)
{
	Elf *elf;
	int ret;

	*out = NULL;
	ret = start(err, errlen);
	if (ret)
		return ret;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	return build(elf, NULL, o, out, err, errlen);
}

int cfi_table__build_mem(const void *img, size_t len, const struct cfi_opts *o,
			 struct cfi_table **out, char *err, size_t errlen)
{
	struct cfi_builder b = { .err = err, .errlen = errlen };
	Elf *elf;
	char *copy;
	int ret;

	*out = NULL;
	ret = start(err, errlen);
	if (ret)
		return ret;
	/* elf_memory() may write into its image (decompression): a copy of ours. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return cfi_fail(&b, -ENOMEM, "out of memory");
	memcpy(copy, img, len);
	elf = elf_memory(copy, len);
	return build(elf, copy, o, out, err, errlen);
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct cfi_row *cfi_table__find(const struct cfi_table *t, uint32_t pc)
{
	size_t lo = 0, hi = t ? t->nr : 0, mid;

	/* The last row with rows[i].pc <= pc: hi is one past it. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
