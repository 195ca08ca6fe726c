// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kdesc: the text and ORC tables of each loaded module, for the kernel
 * unwinder's tables (korc.bpf.h, record/korc.c).  struct module is not
 * readable from userspace and the tables' sizes are needed before the
 * sampler's maps are made, so this runs first, once (BPF_PROG_TEST_RUN,
 * never attached), and is closed.  The loader puts each module's
 * `__this_module` address (kallsyms) in kdesc_in; kdesc_out gets its text
 * and tables.  6.4+ keeps the text in mem[MOD_TEXT], 6.1 in core_layout:
 * CO-RE reads whichever the kernel has.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpfsym.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define KDESC_MAX	1024

__u64 kdesc_in[KDESC_MAX] = {};
struct bpfsym_kdesc_mod kdesc_out[KDESC_MAX] = {};
__u32 kdesc_nr = 0;

struct module_layout___kdesc {
	void *base;
	unsigned int size;
	unsigned int text_size;
};

/* struct module before 6.4. */
struct module___kdesc_old {
	struct module_layout___kdesc core_layout;
};

static long describe(__u64 i, void *ctx)
{
	struct module *m;
	struct bpfsym_kdesc_mod *d;
	__u32 k = (__u32)i;

	if (k >= kdesc_nr)
		return 1;
	/* Bounded where it indexes: 6.1's verifier loses a bound clang checked on a copy. */
	asm volatile("" : "+r"(k));
	if (k >= KDESC_MAX)
		return 1;
	m = (struct module *)kdesc_in[k];
	d = &kdesc_out[k];
	if (bpf_core_field_exists(struct module___kdesc_old, core_layout)) {
		struct module___kdesc_old *o = (void *)m;

		d->base = (__u64)BPF_CORE_READ(o, core_layout.base);
		d->size = BPF_CORE_READ(o, core_layout.text_size);
	} else {
		d->base = (__u64)BPF_CORE_READ(m, mem[MOD_TEXT].base);
		d->size = BPF_CORE_READ(m, mem[MOD_TEXT].size);
	}
	d->n = BPF_CORE_READ(m, arch.num_orcs);
	d->ip_tab = (__u64)BPF_CORE_READ(m, arch.orc_unwind_ip);
	d->orc_tab = (__u64)BPF_CORE_READ(m, arch.orc_unwind);
	d->ok = d->base && d->ip_tab && d->orc_tab;
	return 0;
}

SEC("raw_tp")
int kdesc(void *ctx)
{
	bpf_loop(KDESC_MAX, describe, NULL, 0);
	return 0;
}
