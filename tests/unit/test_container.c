// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * container__from_cgroup(): cgroup v2 paths as the runtimes make them,
 * each with the container id it names, or none.  The paths are the shapes
 * found in the runtimes' docs and issues (docker's two cgroup drivers,
 * containerd's CRI plugin and its namespaces, CRI-O, podman rootful and
 * rootless, Kubernetes' systemd and cgroupfs drivers, docker-in-docker),
 * plain systemd units, and hostile ones: 63/65 digits, uppercase, "..",
 * over-long paths.
 */
#include <string.h>

#include "test.h"
#include "report/container.h"

#define A "4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970"
#define B "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"
#define C "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define D "d1b2e9f1c0a24b3e8f7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817"

static const struct {
	const char *path;
	const char *id;		/* NULL: no container */
	const char *runtime;
} table[] = {
	/* docker, systemd driver (Debian, Fedora, Ubuntu 22.04+) */
	{ "/system.slice/docker-" A ".scope", A, "docker" },
	{ "0::/system.slice/docker-" A ".scope", A, "docker" },
	/* docker, cgroupfs driver; and a process in a sub-cgroup of its container */
	{ "/docker/" B, B, "docker" },
	{ "/docker/" B "/init.scope", B, "docker" },
	/* docker-in-docker: the innermost container wins */
	{ "/docker/" A "/docker/" B, B, "docker" },
	{ "/system.slice/docker-" A ".scope/docker/" B, B, "docker" },
	{ "/system.slice/docker-" A ".scope/system.slice/docker-" C ".scope", C, "docker" },
	/* Kubernetes, systemd driver, each runtime */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5e9a5f56_3b2f_4f3a_9c38_4a3c2c8d7e11.slice/cri-containerd-" C ".scope", C, "containerd" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/crio-" D ".scope", D, "cri-o" },
	{ "/kubepods.slice/kubepods-pod2d6a4b3c_1e0f_4d9a_8b7c_6e5f4d3c2b1a.slice/docker-" A ".scope", A, "docker" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5e9a5f56_3b2f_4f3a_9c38_4a3c2c8d7e11.slice", NULL, NULL },
	/* Kubernetes, cgroupfs driver */
	{ "/kubepods/burstable/pod5e9a5f56-3b2f-4f3a-9c38-4a3c2c8d7e11/" C, C, "unknown" },
	{ "/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/" D, D, "unknown" },
	{ "/kubepods/pod2d6a4b3c-1e0f-4d9a-8b7c-6e5f4d3c2b1a/" A, A, "unknown" },
	{ "/kubepods/burstable/pod5e9a5f56-3b2f-4f3a-9c38-4a3c2c8d7e11/crio-" D, D, "cri-o" },
	{ "/kubepods/burstable/pod5e9a5f56-3b2f-4f3a-9c38-4a3c2c8d7e11", NULL, NULL },
	/* containerd without Kubernetes: /NAMESPACE/ID */
	{ "0::/k8s.io/" C, C, "containerd" },
	{ "/default/" B, B, "unknown" },
	/* containerd on the cgroupfs driver given a systemd-style cgroupsPath (kind, k3s) */
	{ "/system.slice/containerd.service/kubepods-burstable-pod5e9a5f56_3b2f_4f3a_9c38_4a3c2c8d7e11.slice:cri-containerd:" C, C, "containerd" },
	{ "/system.slice/containerd.service", NULL, NULL },
	/* CRI-O: the container, and conmon beside it (not a container) */
	{ "/machine.slice/crio-" D ".scope", D, "cri-o" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5e9a5f56_3b2f_4f3a_9c38_4a3c2c8d7e11.slice/crio-conmon-" D ".scope", NULL, NULL },
	/* podman: rootful, rootless (with its "container" sub-cgroup), cgroupfs, conmon */
	{ "/machine.slice/libpod-" B ".scope", B, "podman" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" B ".scope/container", B, "podman" },
	{ "/libpod_parent/libpod-" B, B, "podman" },
	{ "/machine.slice/libpod-conmon-" B ".scope", NULL, NULL },
	{ "/machine.slice/machine-libpod_pod_" A ".slice/libpod-" C ".scope", C, "podman" },
	/* plain systemd units: no container, the path alone is recorded */
	{ "/user.slice/user-1000.slice/session-3.scope", NULL, NULL },
	{ "/user.slice/user-1000.slice/user@1000.service/init.scope", NULL, NULL },
	{ "/system.slice/run-r6e5b0d3a1f2c4e8b9a7d6c5b4a3f2e1d.scope", NULL, NULL },
	{ "/system.slice/sshd.service", NULL, NULL },
	{ "/machine.slice/machine-debian.scope", NULL, NULL },
	{ "/init.scope", NULL, NULL },
	{ "/", NULL, NULL },
	{ "0::/", NULL, NULL },
	/* hostile */
	{ "/docker/" "4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c3842814297", NULL, NULL },	/* 63 */
	{ "/docker/" A "0", NULL, NULL },						/* 65 */
	{ "/system.slice/docker-" A "0.scope", NULL, NULL },
	{ "/system.slice/docker-4F797C539E6C745DE61A93CA3FF892358ECBCACCD8414D5DB545C38428142970.scope", NULL, NULL },
	{ "/system.slice/docker-" "4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c3842814297g" ".scope", NULL, NULL },
	{ "/system.slice/docker-" A ".scope.bak", NULL, NULL },
	{ "/system.slice/docker-" A ".scope/..", NULL, NULL },
	{ "/docker/../docker/" A, NULL, NULL },
	{ "/docker/./" A, NULL, NULL },
	{ "/docker//" A, NULL, NULL },
	{ "docker/" A, NULL, NULL },
	{ "", NULL, NULL },
	{ "/system.slice/docker-.scope", NULL, NULL },
	{ "/system.slice/kubepods.slice:cri-containerd:" A "0", NULL, NULL },
	{ "/x/:cri-containerd:" A, A, "containerd" },
	{ "/x/:bogus:" A, NULL, NULL },
};

static void test_table(void)
{
	size_t i;

	ASSERT_TRUE(sizeof(table) / sizeof(table[0]) >= 30, "at least 30 paths");
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct container_id c = {};
		bool got = container__from_cgroup(table[i].path, &c);
		char what[128];

		test__fmt(what, sizeof(what), "path %zu '%.60s'", i, table[i].path);
		if (!ASSERT_EQ(got, table[i].id != NULL, what))
			continue;
		if (got) {
			ASSERT_STREQ(c.id, table[i].id, what);
			ASSERT_STREQ(c.runtime, table[i].runtime, what);
		}
	}
}

/* Longer than CONTAINER_PATH_MAX: refused whatever it ends with. */
static void test_long(void)
{
	size_t n = CONTAINER_PATH_MAX + 100, i;
	struct container_id c;
	char *p = malloc(n + 1);

	if (!ASSERT_OK_PTR(p, "malloc"))
		return;
	for (i = 0; i < n; i++)
		p[i] = i % 8 == 0 ? '/' : 'a';
	memcpy(p + n - 72, "/docker-" A, 72);
	p[n] = '\0';
	ASSERT_FALSE(container__from_cgroup(p, &c), "over-long path");
	/* The same id at the end of a path just under the cap is found. */
	memmove(p, p + n - CONTAINER_PATH_MAX + 7, CONTAINER_PATH_MAX - 7 + 1);
	p[0] = '/';
	ASSERT_TRUE(container__from_cgroup(p, &c), "path under the cap");
	ASSERT_FALSE(container__from_cgroup(NULL, &c), "NULL path");
	free(p);
}

static void test_prefix(void)
{
	ASSERT_TRUE(container__valid_prefix("4f797c539e6c"), "12 digits");
	ASSERT_TRUE(container__valid_prefix(A), "64 digits");
	ASSERT_FALSE(container__valid_prefix("4f797c539e6"), "11 digits");
	ASSERT_FALSE(container__valid_prefix(A "0"), "65 digits");
	ASSERT_FALSE(container__valid_prefix("4F797C539E6C"), "uppercase");
	ASSERT_FALSE(container__valid_prefix("4f797c539e6g"), "not hex");
	ASSERT_FALSE(container__valid_prefix(""), "empty");
	ASSERT_FALSE(container__valid_prefix(NULL), "NULL");
}

int main(void)
{
	RUN_TEST(test_table);
	RUN_TEST(test_long);
	RUN_TEST(test_prefix);
	return TEST_EXIT();
}
