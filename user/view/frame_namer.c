// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * frame_namer: recorded names, or kernel names re-resolved from another
 * kallsyms text, and user names from a symfs.  Frames name modules by
 * struct rpt_module, so the
 * kernel modules of that text get modules of their own here ("[ext4]",
 * "[bpf]", and "[kernel.kallsyms]" for vmlinux): every view prints them the
 * way it prints a recorded kernel module.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/frame_namer.h"

/* One kernel module of the kallsyms text, found by its interned name. */
struct kmod {
	const char *key;	/* struct ksym.module: kallsyms interns names */
	struct rpt_module mod;	/* path "[key]", owned */
};

struct frame_namer {
	const struct ksyms *ks;	/* NULL: kernel frames as recorded */
	struct symfs *fs;	/* NULL: user frames as recorded */
	uint64_t delta;
	struct rpt_module vmlinux;
	struct kmod *mods;	/* sorted by key address */
	size_t nr_mods;
	char *source;
};

static int kmod_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct kmod *)a)->key;
	uintptr_t y = (uintptr_t)((const struct kmod *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * Every module name of @n->ks, each once.  Symbols of one module are
 * mostly adjacent, so only changes are collected before sorting.
 */
static int collect_modules(struct frame_namer *n)
{
	size_t i, k, nr = ksyms__nr_syms(n->ks), cap = 0;
	const char *last = NULL;
	struct kmod *mods = NULL, *tmp;

	for (i = 0; i < nr; i++) {
		const char *m = ksyms__sym(n->ks, i)->module;

		if (!m || m == last)
			continue;
		last = m;
		if (n->nr_mods == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(mods, cap * sizeof(*mods));
			if (!tmp)
				goto nomem;
			mods = tmp;
		}
		mods[n->nr_mods++] = (struct kmod){ .key = m };
	}
	if (n->nr_mods)
		qsort(mods, n->nr_mods, sizeof(*mods), kmod_cmp);
	for (i = k = 0; i < n->nr_mods; i++)
		if (!k || mods[k - 1].key != mods[i].key)
			mods[k++] = mods[i];
	n->nr_mods = k;
	n->mods = mods;
	for (i = 0; i < n->nr_mods; i++) {
		size_t len = strlen(mods[i].key) + 3;
		char *path = malloc(len);

		if (!path)
			return -ENOMEM;	/* frame_namer__free() frees the others */
		snprintf(path, len, "[%s]", mods[i].key);
		mods[i].mod = (struct rpt_module){ .kind = RPT_MOD_KERNEL, .path = path };
	}
	return 0;
nomem:
	free(mods);
	n->nr_mods = 0;
	return -ENOMEM;
}

struct frame_namer *frame_namer__new(const struct report *r, const struct ksyms *ks,
				     const char *source, char *err, size_t errlen)
{
	uint64_t recorded = r ? report__header(r)->text_addr : 0, text;
	struct frame_namer *n;
	int e;

	if (!ks) {
		n = calloc(1, sizeof(*n));
		if (!n)
			snprintf(err, errlen, "out of memory");
		return n;
	}
	if (!recorded) {
		snprintf(err, errlen, "the recording has no kernel _text address "
			 "(recorded without kernel symbols?): cannot relocate");
		errno = EINVAL;
		return NULL;
	}
	if (ksyms__restricted(ks)) {
		snprintf(err, errlen, "every address is 0 (saved while kptr_restrict hid them?): "
			 "cannot resolve kernel frames from it");
		errno = EPERM;
		return NULL;
	}
	if (ksyms__find(ks, "_text", &text)) {
		snprintf(err, errlen, "no _text symbol in it: cannot relocate");
		errno = ENOENT;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		goto nomem;
	n->ks = ks;
	n->delta = text - recorded;
	n->vmlinux = (struct rpt_module){ .kind = RPT_MOD_KERNEL, .path = "[kernel.kallsyms]" };
	n->source = strdup(source ? source : "kallsyms");
	if (!n->source)
		goto nomem;
	e = collect_modules(n);
	if (!e)
		return n;
nomem:
	frame_namer__free(n);
	snprintf(err, errlen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

void frame_namer__free(struct frame_namer *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nr_mods; i++)
		free((char *)n->mods[i].mod.path);
	free(n->mods);
	free(n->source);
	free(n);
}

void frame_namer__set_symfs(struct frame_namer *n, struct symfs *fs)
{
	n->fs = fs;
}

const struct symfs *frame_namer__symfs(const struct frame_namer *n)
{
	return n ? n->fs : NULL;
}

static const struct rpt_module *kernel_module(const struct frame_namer *n, const char *name)
{
	struct kmod key = { .key = name };
	const struct kmod *m;

	if (!name)
		return &n->vmlinux;
	m = bsearch(&key, n->mods, n->nr_mods, sizeof(*n->mods), kmod_cmp);
	return m ? &m->mod : NULL;
}

/*
 * Whether a frame recorded in module @was may be named from module @now.
 * KASLR moves the module area apart from _text: relocated by _text's
 * delta, a module's frame from another boot lands anywhere, and naming it
 * after whatever is there would be a wrong name presented as a right one.
 * A frame recorded without a module (not found at the time: a BPF program
 * loaded later, say) takes whatever the text says.
 */
static bool same_module(const struct rpt_module *was, const struct rpt_module *now)
{
	if (!was || was->kind != RPT_MOD_KERNEL || !was->path || !was->path[0])
		return true;
	return now && !strcmp(was->path, now->path);
}

void frame_namer__name(const struct frame_namer *n, const struct report *r,
		       const struct rpt_frame *f, struct frame_name *out)
{
	const struct rpt_module *was = f->module == RPT_NONE ? NULL : report__module(r, f->module);
	const struct rpt_module *now;
	struct symfs_name sn;
	const struct ksym *s;
	uint64_t addr;

	if (!n || f->kind != RPT_FRAME_KERNEL || !n->ks) {
		*out = (struct frame_name){
			.sym = f->sym,
			.sym_off = f->sym_off,
			.module = was,
			.offset = f->offset,
			.reason = f->reason,
		};
		if (n && n->fs && symfs__name(n->fs, f, &sn)) {
			out->sym = sn.sym;
			out->sym_off = sn.sym_off;
			out->reason = sn.reason;
		}
		return;
	}
	addr = f->offset + n->delta;
	s = ksyms__lookup(n->ks, addr);
	now = s ? kernel_module(n, s->module) : NULL;
	if (!s || !same_module(was, now)) {
		*out = (struct frame_name){ .offset = addr, .reason = RPT_NO_MAPPING };
		return;
	}
	*out = (struct frame_name){
		.sym = s->name,
		.sym_off = addr - s->addr,
		.module = now,
		.offset = addr,
		.reason = RPT_OK,
	};
}

uint64_t frame_namer__delta(const struct frame_namer *n)
{
	return n ? n->delta : 0;
}

const char *frame_namer__source(const struct frame_namer *n)
{
	return n ? n->source : NULL;
}
