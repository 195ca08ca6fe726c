/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kfeatures: what the running kernel offers the BPF side, probed once at
 * start, never inferred from its version number.  Required features (the
 * ring buffer, bpf_loop, bpf_find_vma, ...) missing: one line naming the
 * first and the oldest kernel that has it.  Optional ones choose the
 * variant that is loaded (docs/ARCHITECTURE.md, "Kernels"):
 *
 *   task work + VMA iterator kfuncs  -> whole-system and cgroup recordings
 *                                       follow a process from its first
 *                                       sample, taken with the iterator
 *                                       (sampler.bpf.o, lazy_maps)
 *   either missing                   -> the same from the lists of
 *                                       mappings the tracker keeps from
 *                                       exec (sampler_exec.bpf.o,
 *                                       pend_maps: bpf/pend.bpf.h)
 *   -p, a command, either kernel     -> followed from exec
 *
 * ORC tables (struct orc_entry in BTF)  -> the off-CPU kernel stack taken
 *                                       at the switch-in (bpf/korc.bpf.h),
 *                                       else bpf_get_stack at the switch-out
 *
 * BPFSYM_FORCE_FALLBACK=task_work,vma_iter,korc (or "all") takes optional
 * features away on any kernel, so the older path runs and is measured on
 * a new one.
 */
#ifndef BPFSYM_KFEATURES_H
#define BPFSYM_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

/* The optional features, as bits of kfeatures.have and .forced. */
enum kfeature {
	KF_TASK_WORK = 1 << 0,	/* bpf_task_work_schedule_resume (6.18) */
	KF_VMA_ITER = 1 << 1,	/* bpf_iter_task_vma_* kfuncs (6.7) */
	KF_KORC = 1 << 2,	/* the kernel's ORC tables (struct orc_entry in BTF): bpf/korc.bpf.h */
};

struct kfeatures {
	unsigned int have;	/* enum kfeature bits found (and not forced away) */
	unsigned int forced;	/* ...taken away by BPFSYM_FORCE_FALLBACK */
};

/*
 * Probe the running kernel into @kf.  0; -EINVAL when
 * BPFSYM_FORCE_FALLBACK names an unknown feature; -ENOTSUP when a
 * required feature is missing.  Either error is printed, one line.
 */
int kfeatures__probe(struct kfeatures *kf);

/*
 * BPFSYM_FORCE_FALLBACK's value @env (NULL: unset) as enum kfeature bits
 * in *@bits: comma-separated "task_work", "vma_iter", "korc", or "all".  0, or
 * -EINVAL after one line naming the unknown name.
 */
int kfeatures__parse_forced(const char *env, unsigned int *bits);

/* Whether the first-sample path (task work walking the VMAs) can run. */
bool kfeatures__first_sample(const struct kfeatures *kf);

/*
 * Describe @kf and what it chose into @buf, e.g. "task work no, VMA
 * iterator no -> mappings from each process's first sample, kept from
 * exec"; @lazy: the recording follows a process from its first sample
 * (-a, -G), with the VMA iterator where the kernel has the first-sample
 * kfuncs, else from the lists the tracker keeps.
 */
void kfeatures__describe(const struct kfeatures *kf, bool lazy, char *buf, size_t len);

#endif /* BPFSYM_KFEATURES_H */
