// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer_frame: the entries that name a sampled address.  A user
 * address goes through the process's --map-anon hints, its JIT's files
 * (for anonymous memory) and its mapping: a file's (symbolizer.c), [vdso]
 * from our own, anonymous memory or none as a reason.  A kernel address
 * goes to kallsyms.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "base/util.h"
#include "symbolize/elf/elfsym.h"
#include "symbolize/imgcache.h"
#include "symbolize/kernel/kallsyms.h"
#include "symbolize/symbolizer_int.h"

/*
 * The vdso's symbols, from our own: the kernel maps one image into every
 * process of an ABI, and it is a whole ELF file in memory (perf reads it
 * the same way).  Read once; NULL when there is none to read.
 */
static const struct elfsym *own_vdso(struct symbolizer *s)
{
	unsigned long base;
	char *buf = NULL, *line, *save = NULL, *copy;
	unsigned long long start, end;
	size_t len;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base || read_file_capped("/proc/self/maps", 16u << 20, &buf, &len))
		goto out;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "[vdso]") || sscanf(line, "%llx-%llx", &start, &end) != 2 ||
		    start != base || end <= start || end - start > (16u << 20))
			continue;
		copy = malloc(end - start);	/* elf_memory() wants to own writable bytes */
		if (!copy)
			break;
		memcpy(copy, (const void *)base, end - start);
		s->vdso = elfsym__open_mem(copy, end - start, "[vdso]", NULL);
		s->vdso_size = end - start;
		free(copy);
		break;
	}
out:
	free(buf);
	return s->vdso;
}

/* Name a [vdso] frame from our own vdso, when @mp's is the same size (the same image). */
static void vdso_frame(struct symbolizer *s, const struct mapping *mp, struct sym_frame *out)
{
	const struct elfsym *vdso = own_vdso(s);
	const struct elfsym_sym *sym;
	uint64_t vaddr;
	const char *name;

	if (!vdso || mp->end - mp->start != s->vdso_size)
		return;
	if (elfsym__offset_to_vaddr(vdso, out->offset, &vaddr) || !(sym = elfsym__lookup(vdso, vaddr))) {
		out->reason = RPT_OUTSIDE_SYMBOL;
		return;
	}
	name = imgcache__name(&s->images, sym->name);
	if (!name)
		return;
	out->sym = name;
	out->sym_off = vaddr - sym->addr;
	out->reason = RPT_OK;
}

int symbolizer__user_mapping(struct symbolizer *s, uint32_t pid, const struct mapping *mp,
			     uint64_t ip, struct sym_frame *out)
{
	struct smod *m;

	memset(out, 0, sizeof(*out));
	if (!mp) {
		out->offset = ip;
		out->reason = RPT_NO_MAPPING;
		return 0;
	}
	switch (mp->kind) {
	case MAPPING_ANON:
		out->module = &s->anon.pub;
		out->offset = ip;
		out->reason = RPT_ANON;
		break;
	case MAPPING_SPECIAL:
		m = mp->path ? named_module(s, RPT_MOD_SPECIAL, mp->path, false) : NULL;
		out->module = m ? &m->pub : NULL;
		out->offset = ip - mp->start;
		out->reason = RPT_NO_SYMBOLS;
		if (mp->path && !strcmp(mp->path, "[vdso]"))
			vdso_frame(s, mp, out);
		break;
	default:
		file_frame(s, pid, mp, ip, out);
		break;
	}
	return 0;
}

int symbolizer__user(struct symbolizer *s, uint32_t pid, const struct proc *p,
		     uint64_t ip, struct sym_frame *out)
{
	const struct proc_hint *h = proc__find_hint(p, ip);
	const struct mapping *mp;

	/* The user's word first, as perf's maps_anon: it may cover a file mapping too. */
	if (h && h->id < s->nr_hints) {
		memset(out, 0, sizeof(*out));
		file_frame(s, 0, &s->hints[h->id].mp, h->file_off + (ip - h->start), out);
		return 0;
	}
	mp = proc__find_mapping(p, ip);
	/* JIT code: anonymous, or where the model knows no mapping (a missed record). */
	if ((!mp || mp->kind == MAPPING_ANON) && jit_frame(s, p, ip, out))
		return 0;
	return symbolizer__user_mapping(s, pid, mp, ip, out);
}

int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out)
{
	struct kcache_ent *ke;
	const struct ksym *ks;
	struct smod *m;

	memset(out, 0, sizeof(*out));
	out->offset = ip;
	if (!symbolizer_ksyms(s)) {
		out->reason = RPT_NO_MAPPING;	/* kernel symbols not loaded */
		return 0;
	}
	if (ksyms__restricted(s->ks)) {
		out->module = &s->vmlinux->pub;
		out->reason = RPT_KALLSYMS_RESTRICTED;
		return 0;
	}
	ke = &s->kcache[(ip * 0x9e3779b97f4a7c15ull) >> 54 & (SYMBOLIZER_KCACHE - 1)];
	if (ke->ks && ke->ip == ip) {
		ks = ke->ks;
	} else {
		ks = ksyms__lookup(s->ks, ip);
		if (!ks) {
			out->reason = RPT_NO_MAPPING;
			return 0;
		}
		*ke = (struct kcache_ent){ ip, ks };
	}
	m = ks->module ? named_module(s, RPT_MOD_KERNEL, ks->module, true) : s->vmlinux;
	out->module = m ? &m->pub : NULL;
	/* Rust in the kernel has mangled names too. */
	out->sym = imgcache__display(&s->images, ks->name);
	if (!out->sym) {
		out->reason = RPT_NO_SYMBOLS;	/* ENOMEM: nothing better to say */
		return 0;
	}
	out->sym_off = ip - ks->addr;
	out->reason = RPT_OK;
	return 0;
}
