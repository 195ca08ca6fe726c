// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kfeatures: the running kernel's BPF features, probed, never guessed from its version. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "base/util.h"
#include "record/kfeatures.h"

#define FORCE_ENV	"BPFSYM_FORCE_FALLBACK"

/*
 * The optional features: a kfunc each, looked up in the kernel's BTF
 * (where the verifier finds kfuncs; both are generic, for every program
 * type), or a struct the kernel has only with the feature built in (the
 * ORC unwinder: the off-CPU kernel stack at the switch-in, bpf/korc.bpf.h;
 * its tables must still be found in kallsyms).  by_name: the spelling
 * BPFSYM_FORCE_FALLBACK takes.
 */
static const struct {
	unsigned int bit;
	const char *by_name, *btf, *says;
	int kind;
} optional[] = {
	{ KF_TASK_WORK, "task_work", "bpf_task_work_schedule_resume_impl", "task work", BTF_KIND_FUNC },
	{ KF_VMA_ITER, "vma_iter", "bpf_iter_task_vma_new", "VMA iterator", BTF_KIND_FUNC },
	{ KF_KORC, "korc", "orc_entry", "ORC tables", BTF_KIND_STRUCT },
};

int kfeatures__parse_forced(const char *env, unsigned int *bits)
{
	char name[32];
	size_t i, n;

	*bits = 0;
	while (env && *env) {
		n = strcspn(env, ",");
		if (n == 3 && !strncmp(env, "all", 3)) {
			for (i = 0; i < ARRAY_SIZE(optional); i++)
				*bits |= optional[i].bit;
		} else {
			for (i = 0; i < ARRAY_SIZE(optional); i++)
				if (strlen(optional[i].by_name) == n && !strncmp(env, optional[i].by_name, n))
					break;
			if (i == ARRAY_SIZE(optional)) {
				snprintf(name, sizeof(name), "%.*s", (int)(n < 31 ? n : 31), env);
				pr_err("bpfsym: %s: unknown feature '%s' (known: task_work, vma_iter, korc, all)\n",
				       FORCE_ENV, name);
				return -EINVAL;
			}
			*bits |= optional[i].bit;
		}
		env += n + (env[n] == ',');
	}
	return 0;
}

/*
 * The required features, each with the oldest mainline kernel that has
 * it (for the one line a user of an older one gets).  Helpers are probed
 * for perf_event programs, where the sampler calls them (the tracker's
 * program types have them from the same release on).
 */
enum req_kind { REQ_MAP, REQ_HELPER, REQ_BTF };

static const struct {
	enum req_kind kind;
	int id;			/* map type or helper */
	const char *btf_name;	/* REQ_BTF: a type the kernel's BTF must have */
	int btf_kind;
	const char *what, *since;
} required[] = {
	{ REQ_MAP, BPF_MAP_TYPE_RINGBUF, NULL, 0, "the BPF ring buffer", "5.8" },
	{ REQ_MAP, BPF_MAP_TYPE_TASK_STORAGE, NULL, 0, "BPF task storage", "5.11" },
	{ REQ_HELPER, BPF_FUNC_get_current_task_btf, NULL, 0, "bpf_get_current_task_btf()", "5.11" },
	{ REQ_HELPER, BPF_FUNC_task_pt_regs, NULL, 0, "bpf_task_pt_regs()", "5.15" },
	{ REQ_HELPER, BPF_FUNC_loop, NULL, 0, "bpf_loop()", "5.17" },
	{ REQ_HELPER, BPF_FUNC_find_vma, NULL, 0, "bpf_find_vma()", "5.17" },
	{ REQ_BTF, 0, "bpf_iter__task_vma", BTF_KIND_STRUCT, "iter/task_vma programs", "5.12" },
	{ REQ_BTF, 0, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF,
	  "BTF tracepoints (tp_btf/sched_process_exec)", "5.5" },
};

/* Whether required feature @i is there: 1, 0, or -errno when it could not be asked. */
static int have_required(size_t i, const struct btf *vmlinux)
{
	switch (required[i].kind) {
	case REQ_MAP:
		return libbpf_probe_bpf_map_type(required[i].id, NULL);
	case REQ_HELPER:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, required[i].id, NULL);
	case REQ_BTF:
		return btf__find_by_name_kind(vmlinux, required[i].btf_name, required[i].btf_kind) > 0;
	}
	return 0;
}

int kfeatures__probe(struct kfeatures *kf)
{
	struct btf *vmlinux;
	int err, ok;
	size_t i;

	memset(kf, 0, sizeof(*kf));
	err = kfeatures__parse_forced(getenv(FORCE_ENV), &kf->forced);
	if (err)
		return err;
	/*
	 * CO-RE needs the kernel's BTF anyway, and it names the kfuncs: a
	 * kfunc in it is one the verifier knows.
	 */
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		pr_err("bpfsym: this kernel has no BTF (/sys/kernel/btf/vmlinux: %s): "
		       "bpfsym needs CONFIG_DEBUG_INFO_BTF (Linux 5.4 on; every distribution kernel since 2021)\n",
		       strerror(errno));
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(required); i++) {
		ok = have_required(i, vmlinux);
		if (ok > 0)
			continue;
		if (ok < 0)
			pr_err("bpfsym: cannot tell whether this kernel has %s: %s\n", required[i].what,
			       strerror(-ok));
		else
			pr_err("bpfsym: this kernel lacks %s, which bpfsym needs (Linux %s and later have it)\n",
			       required[i].what, required[i].since);
		btf__free(vmlinux);
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(optional); i++)
		if (btf__find_by_name_kind(vmlinux, optional[i].btf, optional[i].kind) > 0)
			kf->have |= optional[i].bit;
	btf__free(vmlinux);
	kf->forced &= kf->have;	/* only what there was is taken away */
	kf->have &= ~kf->forced;
	return 0;
}

bool kfeatures__first_sample(const struct kfeatures *kf)
{
	return (kf->have & (KF_TASK_WORK | KF_VMA_ITER)) == (KF_TASK_WORK | KF_VMA_ITER);
}

void kfeatures__describe(const struct kfeatures *kf, bool lazy, char *buf, size_t len)
{
	size_t i, off = 0;

	/* The mapping features (the header keeps this line): the unwinder says its own (probes.c). */
	for (i = 0; i < ARRAY_SIZE(optional) && optional[i].bit != KF_KORC && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s %s", i ? ", " : "", optional[i].says,
					kf->have & optional[i].bit ? "yes" :
					kf->forced & optional[i].bit ? "no (forced)" : "no");
	if (off < len)
		snprintf(buf + off, len - off, " -> %s",
			 !lazy ? "mappings followed from exec" :
			 kfeatures__first_sample(kf) ? "mappings from each process's first sample" :
			 "mappings from each process's first sample, kept from exec");
}
