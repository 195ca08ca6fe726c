/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * container: the container a cgroup v2 path names, by the conventions of
 * the runtimes that make those paths (docker, containerd/CRI, CRI-O,
 * podman, Kubernetes with either cgroup driver).  A pure function of the
 * path: no I/O, so a recording's paths can be read on any machine, and a
 * newer bpfsym recognizes more in an old file.  No libbpf here.
 */
#ifndef BPFSYM_CONTAINER_H
#define BPFSYM_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LEN	64	/* hex digits of a full id */
#define CONTAINER_SHORT_LEN	12	/* docker's short id, the shortest prefix --container takes */
#define CONTAINER_PATH_MAX	4096	/* longer paths name no container */

struct container_id {
	char id[CONTAINER_ID_LEN + 1];	/* lowercase hex */
	const char *runtime;		/* "docker", "containerd", "cri-o", "podman", or "unknown" */
};

/*
 * The container of cgroup @path ("/a/b", or a /proc/PID/cgroup line
 * "0::/a/b"): the innermost path component that names one wins (a
 * container in a container is the inner one).  A component names a
 * container when it is PREFIX-<64 hex>[.scope] for the prefixes docker,
 * cri-containerd, crio and libpod, or exactly 64 hex digits (docker's and
 * Kubernetes' cgroupfs driver, containerd's /NAMESPACE/ID); the digits
 * must be lowercase, as every runtime writes them.  conmon's scopes
 * (crio-conmon-, libpod-conmon-) and plain systemd units (session-3.scope,
 * user@1000.service, run-r....scope) name none.  A path that is not
 * absolute, longer than CONTAINER_PATH_MAX, or holds an empty, "." or ".."
 * component names none.  Fills @out and returns true, or returns false.
 */
bool container__from_cgroup(const char *path, struct container_id *out);

/*
 * Whether @s is what `--container` takes: CONTAINER_SHORT_LEN to
 * CONTAINER_ID_LEN lowercase hex digits.
 */
bool container__valid_prefix(const char *s);

#endif /* BPFSYM_CONTAINER_H */
