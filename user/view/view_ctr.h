/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * view_ctr: the containers of a recording, derived from the cgroup paths
 * it names (report/container.h), for the views: each sample's container,
 * and `--container ID` turned into the cgroup ids it stands for.  No
 * libbpf here.
 */
#ifndef BPFSYM_VIEW_CTR_H
#define BPFSYM_VIEW_CTR_H

#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "base/strtab.h"
#include "report/container.h"
#include "report/report.h"
#include "view/view_opts.h"

/* Cgroup id -> container, for every cgroup of one report.  Zeroed: empty. */
struct ctr_map {
	const struct report *r;
	struct strtab ids;	/* container ids; container k (from 1) is string k - 1 */
	const char **runtimes;	/* by container, from 1 (slot 0 unused) */
	uint32_t *of_cg;	/* by report cgroup index: its container, 0: none */
	struct htab by_cg;	/* hash_fin(cgroup id) -> report cgroup index + 1 */
	uint64_t last_cg;	/* a one-entry cache: samples come in runs of one cgroup */
	uint32_t last;
};

/* Build @m over the cgroups of @r.  0 or -ENOMEM; ctr_map__free() in either case. */
int ctr_map__init(struct ctr_map *m, const struct report *r);

/* The container (1, 2...) of samples in cgroup @cg, 0 when none (or the path is unknown). */
uint32_t ctr_map__of(struct ctr_map *m, uint64_t cg);

/* Containers in @m. */
static inline size_t ctr_map__nr(const struct ctr_map *m)
{
	return strtab__nr(&m->ids);
}

/* The full id of container @k (from 1), or NULL. */
static inline const char *ctr_map__id(const struct ctr_map *m, uint32_t k)
{
	return k ? strtab__str(&m->ids, k - 1) : NULL;
}

/* Its runtime ("docker"...), or NULL. */
const char *ctr_map__runtime(const struct ctr_map *m, uint32_t k);

void ctr_map__free(struct ctr_map *m);

/*
 * `--container @prefix` over @r: the full id of the one container whose id
 * starts with @prefix (12 to 64 lowercase hex digits, container__valid_prefix)
 * and every cgroup of @r in it, into *@cgs (sorted, *@nr of them; the
 * caller frees it), *@full (CONTAINER_ID_LEN + 1 bytes) the id.  0, or
 * -EINVAL with one line in @err: no such container in the recording, or
 * more than one; -ENOMEM.
 */
int view_ctr__resolve(const struct report *r, const char *prefix, uint64_t **cgs, size_t *nr,
		      char *full, char *err, size_t errlen);

#endif /* BPFSYM_VIEW_CTR_H */
