// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym: function symbols, PT_LOAD arithmetic and build-id of one ELF file.
 *
 * Everything is copied out at open time, so the Elf handle is released (and
 * the fd no longer needed) before elfsym__open_fd() returns: a file that is
 * truncated or replaced later cannot hurt a lookup.  Every offset and size
 * is checked against the size fstat() gave before libelf is asked to read it.
 *
 * Choices the contract in elfsym.h leaves to this file:
 *
 * - Which symbols are functions: elfsym_symtab.c.
 * - Aliases, st_size 0 and nesting are symidx's rules (symidx.h); no
 *   symbol extends past the end of its section.
 * - ET_REL (.o) files: st_value is relative to its section, so a symbol's
 *   address is its section's sh_offset + st_value, and offset_to_vaddr is
 *   the identity over the code sections' bytes.  Code copied from a .o into
 *   anonymous memory is then symbolized by its file offset, like a mapping.
 * - MiniDebugInfo (.gnu_debugdata) is read with the same reader, over the
 *   decompressed bytes, into the same candidate list: its functions are
 *   folded and sized with the file's own.  It is an extra: when it cannot
 *   be read the file keeps what it has, and one in it is not looked at.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elf/elfnote.h"
#include "symbolize/elf/elfplt.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/elf/elfsym_int.h"
#include "symbolize/elf/minidebug.h"
#include "symbolize/elf/symidx.h"
#include "base/inputcap.h"
#include "base/util.h"

#define DEFAULT_MAX_SYMS	(4UL << 20)
#define DEFAULT_MAX_STRTAB	(256UL << 20)
#define DEFAULT_MAX_DEBUGDATA	(64UL << 20)
/* A debuglink holds a file name, NUL, padding and a CRC. */
#define DEBUGLINK_MAX		(4096 + 8)
/* Real build-ids are 8 to 20 bytes; anything longer is not one we can key by. */
#define BUILD_ID_MAX		64
/* Note areas hold a few hundred bytes: do not read a hostile giant one. */
#define NOTES_MAX		(1UL << 20)

struct seg {
	uint64_t off, vaddr, filesz;
};

struct elfsym {
	struct symidx idx;
	struct seg *segs;
	size_t nr_segs;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	char *debuglink;	/* NULL: none */
	uint32_t debuglink_crc;
	int type;
};

/* [off, off + size) lies within [0, limit), without overflowing. */
static bool in_range(uint64_t off, uint64_t size, uint64_t limit)
{
	return off <= limit && size <= limit - off;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/*
 * Validate the ELF header's view of the section and program header tables.
 * libelf quietly pretends a truncated section table is absent and does not
 * look at e_shentsize at all, so both are checked here.
 */
static int elfsym__check_headers(struct reader *r)
{
	size_t shstrndx, entsz, phnum;

	if (!gelf_getehdr(r->elf, &r->eh))
		return libelf_failed(r, "gelf_getehdr");
	if (elf_getshdrnum(r->elf, &r->shnum))
		return libelf_failed(r, "elf_getshdrnum");
	if (r->eh.e_shoff == 0) {
		if (r->eh.e_shnum)
			return malformed(r, "e_shnum set without a section header table");
		r->shnum = 0;
	} else if (r->shnum == 0) {
		/* libelf's way of saying the table is past end of file. */
		return malformed(r, "section header table unreadable");
	}
	if (r->shnum) {
		entsz = gelf_fsize(r->elf, ELF_T_SHDR, 1, EV_CURRENT);
		if (!entsz || r->eh.e_shentsize != entsz)
			return malformed(r, "bad e_shentsize");
		if (r->shnum > r->fsize / entsz ||
		    !in_range(r->eh.e_shoff, r->shnum * entsz, r->fsize))
			return malformed(r, "section header table past end of file");
		if (elf_getshdrstrndx(r->elf, &shstrndx))
			return libelf_failed(r, "elf_getshdrstrndx");
		if (shstrndx >= r->shnum)
			return malformed(r, "e_shstrndx out of range");
		r->shstrndx = shstrndx;
	}

	/* elf_getphdrnum() clamps to what fits in the file: check the claim. */
	r->phnum = r->eh.e_phnum;
	if (r->phnum == PN_XNUM) {
		GElf_Shdr sh0;

		if (!r->shnum || !gelf_getshdr(elf_getscn(r->elf, 0), &sh0))
			return malformed(r, "PN_XNUM without section 0");
		r->phnum = sh0.sh_info;
	}
	if (r->phnum) {
		entsz = gelf_fsize(r->elf, ELF_T_PHDR, 1, EV_CURRENT);
		if (!entsz || r->eh.e_phentsize != entsz)
			return malformed(r, "bad e_phentsize");
		if (r->phnum > r->fsize / entsz || r->phnum > INT_MAX ||
		    !in_range(r->eh.e_phoff, r->phnum * entsz, r->fsize))
			return malformed(r, "program header table past end of file");
	}
	if (elf_getphdrnum(r->elf, &phnum))
		return libelf_failed(r, "elf_getphdrnum");
	if (phnum != r->phnum)
		return malformed(r, "program header count disagrees with libelf");
	return 0;
}

/* Keep the file-backed PT_LOAD ranges: all offset <-> vaddr arithmetic uses them. */
static int elfsym__read_segments(struct reader *r, struct elfsym *es)
{
	GElf_Phdr ph;
	size_t i;

	if (r->eh.e_type == ET_REL) {
		/* No segments: "vaddr" is the offset in a code section (see the top comment). */
		if (!r->shnum)
			return 0;
		es->segs = calloc(r->shnum, sizeof(*es->segs));
		if (!es->segs)
			return -ENOMEM;
		for (i = 1; i < r->shnum; i++) {
			const struct sec *s = &r->secs[i];

			if (!s->exec || s->end == s->start)
				continue;
			es->segs[es->nr_segs].off = s->start;
			es->segs[es->nr_segs].vaddr = s->start;
			es->segs[es->nr_segs].filesz = s->end - s->start;
			es->nr_segs++;
		}
		return 0;
	}
	if (!r->phnum)
		return 0;
	es->segs = calloc(r->phnum, sizeof(*es->segs));
	if (!es->segs)
		return -ENOMEM;
	for (i = 0; i < r->phnum; i++) {
		if (!gelf_getphdr(r->elf, (int)i, &ph))
			return libelf_failed(r, "gelf_getphdr");
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		/*
		 * Separate debug files keep the stripped original's program
		 * headers, which point past their own end: not fatal, their
		 * symbols are still good, but no offset translates there.
		 */
		if (!in_range(ph.p_offset, ph.p_filesz, r->fsize) ||
		    ph.p_vaddr > UINT64_MAX - ph.p_filesz) {
			pr_debug("elfsym: '%s': PT_LOAD %zu (offset 0x%llx, size 0x%llx) ignored: outside the file\n",
				 r->name, i, (unsigned long long)ph.p_offset,
				 (unsigned long long)ph.p_filesz);
			continue;
		}
		es->segs[es->nr_segs].off = ph.p_offset;
		es->segs[es->nr_segs].vaddr = ph.p_vaddr;
		es->segs[es->nr_segs].filesz = ph.p_filesz;
		es->nr_segs++;
	}
	return 0;
}

/* Remember where the sections pointing to more debug info are, by name. */
static void elfsym__note_section(struct reader *r, const GElf_Shdr *sh, size_t idx)
{
	const char *name;

	if (sh->sh_type != SHT_PROGBITS || !r->shstrndx)
		return;
	/* libelf checks the name lies, NUL-terminated, in the string table. */
	name = elf_strptr(r->elf, r->shstrndx, sh->sh_name);
	if (!name)
		return;
	if (!strcmp(name, ".gnu_debugdata") && !r->debugdata_idx)
		r->debugdata_idx = idx;
	else if (!strcmp(name, ".gnu_debuglink") && !r->debuglink_idx)
		r->debuglink_idx = idx;
}

/* Record every section's range and kind; reject those past end of file. */
static int elfsym__read_sections(struct reader *r)
{
	bool rel = r->eh.e_type == ET_REL;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t i;

	if (!r->shnum)
		return 0;
	r->secs = calloc(r->shnum, sizeof(*r->secs));
	if (!r->secs)
		return -ENOMEM;
	for (i = 1; i < r->shnum; i++) {
		struct sec *s = &r->secs[i];

		scn = elf_getscn(r->elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return libelf_failed(r, "gelf_getshdr");
		if (sh.sh_type != SHT_NOBITS && !in_range(sh.sh_offset, sh.sh_size, r->fsize))
			return malformed(r, "section past end of file");
		s->type = sh.sh_type;
		s->link = sh.sh_link;
		s->exec = (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
			  (SHF_ALLOC | SHF_EXECINSTR);
		elfsym__note_section(r, &sh, i);
		if (rel) {
			/* Code is what a .o holds as bytes: other sections have no offset to name it by. */
			s->exec = (sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS;
			s->start = sh.sh_offset;
		} else {
			/* Debug files' NOBITS .text keeps sh_addr/sh_size: use them. */
			s->start = sh.sh_addr;
		}
		s->end = add_sat(s->start, sh.sh_size);
	}
	return 0;
}

/*
 * Look for NT_GNU_BUILD_ID in the note area [off, off + size).  Every
 * field is checked against the area; a malformed note ends the area, a
 * build-id longer than BUILD_ID_MAX is ignored.  True when found.
 */
static bool elfsym__scan_notes(struct reader *r, struct elfsym *es,
			       uint64_t off, uint64_t size, uint64_t align)
{
	bool swap = r->eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	const uint8_t *p;
	Elf_Data *data;
	size_t len;
	long at;

	if (size > NOTES_MAX)
		inputcap__hit(INPUTCAP_NOTES);
	if (!size || size > NOTES_MAX || !in_range(off, size, r->fsize))
		return false;
	data = elf_getdata_rawchunk(r->elf, (int64_t)off, size, ELF_T_BYTE);
	if (!data || !data->d_buf || data->d_size != size) {
		libelf_failed(r, "elf_getdata_rawchunk");
		return false;
	}
	p = data->d_buf;
	at = elfnote__build_id(p, size, align, swap, BUILD_ID_MAX, &len);
	if (at == -EBADMSG)
		pr_debug("elfsym: '%s': a note at 0x%llx overruns its area\n", r->name,
			 (unsigned long long)off);
	if (at < 0)
		return false;
	memcpy(es->build_id, p + at, len);
	es->build_id_len = len;
	return true;
}

/* PT_NOTE first (what the loader maps), then SHT_NOTE sections. */
static int elfsym__read_build_id(struct reader *r, struct elfsym *es)
{
	GElf_Phdr ph;
	GElf_Shdr sh;
	size_t i;

	for (i = 0; i < r->phnum; i++) {
		if (!gelf_getphdr(r->elf, (int)i, &ph))
			return libelf_failed(r, "gelf_getphdr");
		if (ph.p_type == PT_NOTE &&
		    elfsym__scan_notes(r, es, ph.p_offset, ph.p_filesz, ph.p_align))
			return 0;
	}
	for (i = 1; i < r->shnum; i++) {
		if (r->secs[i].type != SHT_NOTE)
			continue;
		if (!gelf_getshdr(elf_getscn(r->elf, i), &sh))
			return libelf_failed(r, "gelf_getshdr");
		if (elfsym__scan_notes(r, es, sh.sh_offset, sh.sh_size, sh.sh_addralign))
			return 0;
	}
	return 0;
}

/*
 * .gnu_debuglink: the name of the separate debug file, NUL-terminated and
 * padded to 4 bytes, then the CRC32 of that file in this file's byte order.
 * A malformed one is ignored: it only points elsewhere.
 */
static int elfsym__read_debuglink(struct reader *r, struct elfsym *es)
{
	Elf_Scn *scn = elf_getscn(r->elf, r->debuglink_idx);
	size_t len, crc_off;
	const char *p;
	GElf_Shdr sh;
	Elf_Data *d;
	uint32_t crc;

	if (!r->debuglink_idx || !scn || !gelf_getshdr(scn, &sh))
		return 0;
	if (sh.sh_size > DEBUGLINK_MAX) {
		pr_debug("elfsym: '%s': .gnu_debuglink of %llu bytes ignored\n", r->name,
			 (unsigned long long)sh.sh_size);
		return 0;
	}
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size)
		return 0;
	p = d->d_buf;
	len = strnlen(p, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;	/* past the NUL, 4-byte aligned */
	if (!len || len == d->d_size || d->d_size < 4 || crc_off > d->d_size - 4) {
		pr_debug("elfsym: '%s': malformed .gnu_debuglink ignored\n", r->name);
		return 0;
	}
	memcpy(&crc, p + crc_off, sizeof(crc));
	if (r->eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
				       ELFDATA2LSB : ELFDATA2MSB))
		crc = __builtin_bswap32(crc);
	es->debuglink = strndup(p, len);
	if (!es->debuglink)
		return -ENOMEM;
	es->debuglink_crc = crc;
	return 0;
}

/* Its addresses are taken as @outer's own: it must describe that very file. */
static int elfsym__read_mini(struct reader *sub, const struct reader *outer,
			     const struct elfsym *es)
{
	struct elfsym ids = {};
	int err;

	if (elf_kind(sub->elf) != ELF_K_ELF)
		return malformed(sub, "not an ELF file");
	err = elfsym__check_headers(sub);
	if (err)
		return err;
	if (sub->eh.e_type != outer->eh.e_type || sub->eh.e_machine != outer->eh.e_machine ||
	    sub->eh.e_ident[EI_CLASS] != outer->eh.e_ident[EI_CLASS])
		return malformed(sub, "not the same kind of file as its container");
	err = elfsym__read_sections(sub);
	if (!err)
		err = elfsym__read_build_id(sub, &ids);
	if (!err && ids.build_id_len && es->build_id_len &&
	    (ids.build_id_len != es->build_id_len || memcmp(ids.build_id, es->build_id, ids.build_id_len)))
		return malformed(sub, "another file's: not its container's build-id");
	return err ? err : elfsym__read_symbols(sub);
}

/*
 * Add the functions of the MiniDebugInfo in .gnu_debugdata to r->cands,
 * under the same caps.  On success the decompressed file stays open in
 * @r (the candidates' names point into it) until the symbols are built.
 * Every failure leaves @r as it was: logged, never fatal.
 */
static void elfsym__read_debugdata(struct reader *r, const struct elfsym *es)
{
	Elf_Scn *scn = elf_getscn(r->elf, r->debugdata_idx);
	struct reader sub;
	char name[512];
	void *buf;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t len;
	int err;

	if (!r->debugdata_idx || r->eh.e_type == ET_REL || !scn ||
	    !gelf_getshdr(scn, &sh))
		return;
	snprintf(name, sizeof(name), "%s:.gnu_debugdata", r->name);
	/* Compressed, it cannot be larger than what it may expand to. */
	if (sh.sh_size > r->max_debugdata) {
		pr_debug("elfsym: '%s': %llu bytes, over the cap of %zu\n", name,
			 (unsigned long long)sh.sh_size, r->max_debugdata);
		inputcap__hit(INPUTCAP_SYMBOLS);
		return;
	}
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size) {
		libelf_failed(r, "elf_rawdata");
		return;
	}
	err = minidebug__decompress(d->d_buf, d->d_size, r->max_debugdata, &buf, &len);
	if (err) {
		pr_debug("elfsym: '%s': cannot decompress: %s\n", name, strerror(-err));
		return;
	}
	sub = (struct reader){
		.name = name, .fsize = len,
		.cands = r->cands, .nr_cands = r->nr_cands,
		.max_syms = r->max_syms, .max_strtab = r->max_strtab,
		.syms_seen = r->syms_seen, .strtab_seen = r->strtab_seen,
	};
	sub.elf = elf_memory(buf, len);
	err = sub.elf ? elfsym__read_mini(&sub, r, es) : libelf_failed(&sub, "elf_memory");
	free(sub.secs);
	/* Grown or not, the array holds r's candidates first. */
	r->cands = sub.cands;
	if (err) {
		pr_debug("elfsym: '%s': ignored: %s\n", name, strerror(-err));
		elf_end(sub.elf);
		free(buf);
		return;
	}
	pr_debug("elfsym: '%s': %zu functions\n", name, sub.nr_cands - r->nr_cands);
	r->nr_cands = sub.nr_cands;
	r->syms_seen = sub.syms_seen;
	r->strtab_seen = sub.strtab_seen;
	r->mini = sub.elf;
	r->mini_buf = buf;
}

static int elfsym__read(struct reader *r, struct elfsym *es)
{
	int err;

	if (elf_kind(r->elf) != ELF_K_ELF)
		return malformed(r, "not an ELF file");
	err = elfsym__check_headers(r);
	if (err)
		return err;
	es->type = r->eh.e_type;
	err = elfsym__read_sections(r);
	if (!err)
		err = elfsym__read_segments(r, es);
	if (!err)
		err = elfsym__read_symbols(r);
	if (!err)
		err = elfsym__read_debuglink(r, es);
	if (!err)
		err = elfsym__read_build_id(r, es);
	if (err)
		return err;
	elfsym__read_debugdata(r, es);
	/* "func@plt" stubs: the lowest rank, real symbols at an address win. */
	if (r->shstrndx && r->syms_seen < r->max_syms) {
		err = elfplt__append(r->elf, r->shstrndx, r->max_syms - r->syms_seen, &r->plt,
				     &r->cands, &r->nr_cands);
		if (err)
			return err;
	}
	err = symidx__build(&es->idx, r->cands, r->nr_cands, r->max_strtab);
	if (err == -E2BIG) {
		pr_debug("elfsym: '%s': more than %zu bytes of names\n", r->name, r->max_strtab);
		inputcap__hit(INPUTCAP_SYMBOLS);
	}
	return err;
}

/* Read @r->elf (NULL: elf_version, elf_begin or elf_memory failed) into a new elfsym; ends it. */
static struct elfsym *elfsym__load(struct reader *r, const struct elfsym_opts *opts)
{
	struct elfsym *es = calloc(1, sizeof(*es));
	int err;

	r->max_syms = opts && opts->max_syms ? opts->max_syms : DEFAULT_MAX_SYMS;
	r->max_strtab = opts && opts->max_strtab ? opts->max_strtab : DEFAULT_MAX_STRTAB;
	r->max_debugdata = opts && opts->max_debugdata ? opts->max_debugdata : DEFAULT_MAX_DEBUGDATA;
	/* libelf indexes symbols with an int. */
	if (r->max_syms > INT_MAX)
		r->max_syms = INT_MAX;
	if (!es)
		err = -ENOMEM;
	else if (!r->elf)
		err = libelf_failed(r, "elf_begin or elf_memory");
	else
		err = elfsym__read(r, es);

	free(r->cands);
	free(r->secs);
	elfplt__free(&r->plt);
	elf_end(r->mini);
	free(r->mini_buf);
	elf_end(r->elf);
	if (err) {
		elfsym__free(es);
		errno = -err;
		return NULL;
	}
	pr_debug("elfsym: '%s': %zu functions, %zu PT_LOAD, build-id of %zu bytes\n",
		 r->name, es->idx.nr_syms, es->nr_segs, es->build_id_len);
	return es;
}

struct elfsym *elfsym__open_fd(int fd, const char *name, const struct elfsym_opts *opts)
{
	struct reader r = { .name = name ? name : "(fd)" };
	struct stat st;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		pr_debug("elfsym: '%s': not a regular file\n", r.name);
		errno = ENOEXEC;
		return NULL;
	}
	r.fsize = (uint64_t)st.st_size;
	/* ELF_C_READ: libelf preads what it needs; never mmap a file we do not trust. */
	if (elf_version(EV_CURRENT) != EV_NONE)
		r.elf = elf_begin(fd, ELF_C_READ, NULL);
	return elfsym__load(&r, opts);
}

struct elfsym *elfsym__open_mem(void *buf, size_t len, const char *name,
				const struct elfsym_opts *opts)
{
	struct reader r = { .name = name ? name : "(memory)", .fsize = len };

	if (elf_version(EV_CURRENT) != EV_NONE)
		r.elf = elf_memory(buf, len);
	return elfsym__load(&r, opts);
}

struct elfsym *elfsym__open(const char *path, const struct elfsym_opts *opts)
{
	struct elfsym *es;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		pr_debug("elfsym: '%s': open: %s\n", path, strerror(err));
		errno = err;
		return NULL;
	}
	es = elfsym__open_fd(fd, path, opts);
	err = errno;
	close(fd);
	errno = err;
	return es;
}

void elfsym__free(struct elfsym *es)
{
	if (!es)
		return;
	symidx__free(&es->idx);
	free(es->segs);
	free(es->debuglink);
	free(es);
}

int elfsym__offset_to_vaddr(const struct elfsym *es, uint64_t file_off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < es->nr_segs; i++) {
		const struct seg *s = &es->segs[i];

		if (file_off >= s->off && file_off - s->off < s->filesz) {
			*vaddr = file_off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int elfsym__vaddr_to_offset(const struct elfsym *es, uint64_t vaddr, uint64_t *file_off)
{
	size_t i;

	for (i = 0; i < es->nr_segs; i++) {
		const struct seg *s = &es->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*file_off = vaddr - s->vaddr + s->off;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elfsym_sym *elfsym__lookup(const struct elfsym *es, uint64_t vaddr)
{
	return symidx__lookup(&es->idx, vaddr);
}

size_t elfsym__sym_index(const struct elfsym *es, const struct elfsym_sym *sym)
{
	return (size_t)(sym - es->idx.syms);
}

size_t elfsym__mem_bytes(const struct elfsym *es)
{
	return sizeof(*es) + symidx__mem_bytes(&es->idx) + es->nr_segs * sizeof(*es->segs);
}

size_t elfsym__nr_syms(const struct elfsym *es)
{
	return es->idx.nr_syms;
}

int elfsym__type(const struct elfsym *es)
{
	return es->type;
}

const uint8_t *elfsym__build_id(const struct elfsym *es, size_t *len)
{
	*len = es->build_id_len;
	return es->build_id_len ? es->build_id : NULL;
}

const char *elfsym__debuglink(const struct elfsym *es, uint32_t *crc)
{
	*crc = es->debuglink ? es->debuglink_crc : 0;
	return es->debuglink;
}
