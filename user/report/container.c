// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * container: cgroup v2 path -> container id (container.h).  Each path
 * component is tried from the innermost out; the first that names a
 * container wins.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "report/container.h"

/* The prefixes a runtime puts before the id in a unit or directory name. */
static const struct {
	const char *prefix;
	const char *runtime;
} prefixes[] = {
	{ "docker-", "docker" },		/* docker, systemd driver: docker-ID.scope */
	{ "cri-containerd-", "containerd" },	/* containerd's CRI, systemd driver */
	{ "crio-", "cri-o" },			/* crio-ID.scope; crio-conmon-ID.scope fails the hex */
	{ "libpod-", "podman" },		/* libpod-ID.scope, /libpod_parent/libpod-ID */
};

static bool all_hex(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

/* Whether the @n bytes at @p are 64 hex digits, optionally followed by ".scope". */
static bool id_part(const char *p, size_t n)
{
	if (n == CONTAINER_ID_LEN + strlen(".scope") &&
	    !memcmp(p + CONTAINER_ID_LEN, ".scope", strlen(".scope")))
		n = CONTAINER_ID_LEN;
	return n == CONTAINER_ID_LEN && all_hex(p, n);
}

/*
 * The runtime a bare 64-hex directory belongs to, from its parent
 * component @par (@plen bytes): docker's cgroupfs driver puts it under
 * /docker, containerd under its namespace (/k8s.io, /default...).
 */
static const char *bare_runtime(const char *par, size_t plen)
{
	if (plen == strlen("docker") && !memcmp(par, "docker", plen))
		return "docker";
	if (plen == strlen("k8s.io") && !memcmp(par, "k8s.io", plen))
		return "containerd";
	return "unknown";
}

/* Component @c (@n bytes, parent @par of @plen) as a container id into @out: true if it is one. */
static bool component(const char *c, size_t n, const char *par, size_t plen,
		      struct container_id *out)
{
	size_t i, k;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		k = strlen(prefixes[i].prefix);
		if (n > k && !memcmp(c, prefixes[i].prefix, k) && id_part(c + k, n - k)) {
			memcpy(out->id, c + k, CONTAINER_ID_LEN);
			out->id[CONTAINER_ID_LEN] = '\0';
			out->runtime = prefixes[i].runtime;
			return true;
		}
	}
	/*
	 * "SLICE:PREFIX:ID", a systemd cgroupsPath taken literally by a runtime
	 * on the cgroupfs driver (containerd under containerd.service).
	 */
	k = n;
	while (k > 0 && c[k - 1] != ':')
		k--;
	if (k > 0 && n - k == CONTAINER_ID_LEN && all_hex(c + k, CONTAINER_ID_LEN)) {
		for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t pl = strlen(prefixes[i].prefix) - 1;	/* without its '-' */

			if (k > pl + 1 && c[k - pl - 2] == ':' && !memcmp(c + k - pl - 1, prefixes[i].prefix, pl)) {
				memcpy(out->id, c + k, CONTAINER_ID_LEN);
				out->id[CONTAINER_ID_LEN] = '\0';
				out->runtime = prefixes[i].runtime;
				return true;
			}
		}
	}
	if (n != CONTAINER_ID_LEN || !all_hex(c, n))
		return false;
	memcpy(out->id, c, CONTAINER_ID_LEN);
	out->id[CONTAINER_ID_LEN] = '\0';
	out->runtime = bare_runtime(par, plen);
	return true;
}

/* Whether every component of @p (@n bytes, after the leading '/') is a real name. */
static bool sane_path(const char *p, size_t n)
{
	const char *c = p, *end = p + n, *slash;
	size_t len;

	if (n == 0)
		return true;	/* the root */
	while (c <= end) {
		slash = memchr(c, '/', (size_t)(end - c));
		len = slash ? (size_t)(slash - c) : (size_t)(end - c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!slash)
			break;
		c = slash + 1;
	}
	return true;
}

bool container__from_cgroup(const char *path, struct container_id *out)
{
	const char *p, *c, *par;
	size_t n, len, plen;

	if (!path || !out)
		return false;
	if (!strncmp(path, "0::", 3))
		path += 3;
	n = strnlen(path, CONTAINER_PATH_MAX + 1);
	if (n > CONTAINER_PATH_MAX || path[0] != '/' || !sane_path(path + 1, n - 1))
		return false;
	/* From the innermost component out: the last '/' starts it. */
	p = path + n;
	while (p > path) {
		c = p;
		while (c[-1] != '/')
			c--;
		len = (size_t)(p - c);
		par = c - 1;
		while (par > path && par[-1] != '/')
			par--;
		plen = (size_t)(c - 1 - par);
		if (component(c, len, par, plen, out))
			return true;
		p = c - 1;
	}
	return false;
}

bool container__valid_prefix(const char *s)
{
	size_t n = s ? strnlen(s, CONTAINER_ID_LEN + 1) : 0;

	return n >= CONTAINER_SHORT_LEN && n <= CONTAINER_ID_LEN && all_hex(s, n);
}
