// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Containers in the views, over a recording written with the real writer:
 * two docker containers whose ids share their first 12 digits, a podman
 * one, a process in two cgroups of one container, a systemd session and
 * a cgroup the file does not name.  --container by full id and by prefix
 * (unique, ambiguous, of nothing), the table's container lines, column
 * and --sort container, and the filter in folded, script and pprof.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "test.h"
#include "view_render.h"
#include "report/report.h"
#include "view/format/report_script.h"
#include "view/report_view.h"
#include "view/view_ctr.h"

TEST_SUITE("view_ctr");

#define DA "aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111"
#define DB "aaaaaaaaaaaa2222222222222222222222222222222222222222222222222222"
#define PC "cccccccccccc3333333333333333333333333333333333333333333333333333"

static char errbuf[512];

static const struct {
	uint64_t id;
	const char *path;	/* NULL: not named in the file */
} cgroups[] = {
	{ 11, "/system.slice/docker-" DA ".scope" },
	{ 12, "/system.slice/docker-" DA ".scope/init.scope" },	/* the same container */
	{ 21, "/docker/" DB },
	{ 31, "/machine.slice/libpod-" PC ".scope/container" },
	{ 41, "/user.slice/user-1000.slice/session-3.scope" },
	{ 51, NULL },
};

/* pid, comm, cgroup, samples */
static const struct {
	uint32_t pid;
	const char *comm;
	uint64_t cg;
	uint32_t n;
} samples[] = {
	{ 100, "web", 11, 5 }, { 101, "web", 12, 2 }, { 200, "web", 21, 7 }, { 300, "db", 31, 3 },
	{ 400, "bash", 41, 4 }, { 500, "web", 51, 6 },
};
#define TOTAL 27

static struct report *build(void)
{
	static const struct rpt_header hdr = { .hostname = "h", .event = "cpu-clock", .freq = 100 };
	struct rpt_module m = { .kind = RPT_MOD_FILE, .path = "/app", .dev = 1, .ino = 2 };
	struct rpt_frame f = { .kind = RPT_FRAME_USER, .offset = 0x10, .addr = 0x1010, .sym = "hot" };
	struct report_writer *w;
	struct report *r = NULL;
	char path[PATH_MAX];
	uint32_t fid, sid;
	size_t i, k;
	int err;

	snprintf(path, sizeof(path), "%s/test_view_ctr.%d.data",
		 getenv("BPFSYM_TEST_TMP") ? getenv("BPFSYM_TEST_TMP") : "/tmp", (int)getpid());
	w = report_writer__open(path, &hdr);
	if (!ASSERT_OK_PTR(w, "open"))
		return NULL;
	err = report_writer__module(w, &m, &f.module);
	err = err ?: report_writer__frame(w, &f, &fid);
	err = err ?: report_writer__stack(w, &fid, 1, &sid);
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]) && !err; i++) {
		for (k = 0; k < sizeof(cgroups) / sizeof(cgroups[0]); k++)
			if (cgroups[k].id == samples[i].cg && cgroups[k].path)
				err = err ?: report_writer__cgroup(w, cgroups[k].id, cgroups[k].path);
		for (k = 0; k < samples[i].n && !err; k++)
			err = report_writer__sample(w, &(struct rpt_sample){ .time = k, .pid = samples[i].pid,
					.tid = samples[i].pid, .cgroup = samples[i].cg,
					.comm = samples[i].comm, .stack = sid });
	}
	if (!ASSERT_OK(err, "write") || !ASSERT_OK(report_writer__close(w, &hdr), "close")) {
		if (err)
			report_writer__abort(w);
	} else {
		r = report__open(path, errbuf, sizeof(errbuf));
		ASSERT_OK_PTR(r, errbuf);
	}
	unlink(path);
	return r;
}

static void test_map(void)
{
	struct report *r = build();
	struct ctr_map m;
	uint32_t a;

	if (!r)
		return;
	if (ASSERT_OK(ctr_map__init(&m, r), "ctr_map__init")) {
		ASSERT_EQ(ctr_map__nr(&m), (size_t)3, "three containers");
		a = ctr_map__of(&m, 11);
		ASSERT_TRUE(a != 0, "docker A");
		ASSERT_EQ(ctr_map__of(&m, 12), a, "its sub-cgroup is the same container");
		ASSERT_STREQ(ctr_map__id(&m, a), DA, "its id");
		ASSERT_STREQ(ctr_map__runtime(&m, a), "docker", "its runtime");
		ASSERT_STREQ(ctr_map__runtime(&m, ctr_map__of(&m, 31)), "podman", "podman");
		ASSERT_EQ(ctr_map__of(&m, 41), 0u, "a session is no container");
		ASSERT_EQ(ctr_map__of(&m, 51), 0u, "an unnamed cgroup");
		ASSERT_EQ(ctr_map__of(&m, 0), 0u, "id 0");
	}
	ctr_map__free(&m);
	report__free(r);
}

static void test_resolve(void)
{
	struct report *r = build();
	char full[CONTAINER_ID_LEN + 1], err[256];
	uint64_t *cgs = NULL;
	size_t nr = 0;

	if (!r)
		return;
	if (ASSERT_OK(view_ctr__resolve(r, "aaaaaaaaaaaa1", &cgs, &nr, full, err, sizeof(err)), err)) {
		ASSERT_STREQ(full, DA, "the full id");
		if (ASSERT_EQ(nr, (size_t)2, "its two cgroups")) {
			ASSERT_EQ(cgs[0], (uint64_t)11, "sorted");
			ASSERT_EQ(cgs[1], (uint64_t)12, "sorted");
		}
	}
	free(cgs);
	ASSERT_OK(view_ctr__resolve(r, PC, &cgs, &nr, full, err, sizeof(err)), "a full id");
	ASSERT_EQ(nr, (size_t)1, "podman's one cgroup");
	free(cgs);
	ASSERT_EQ(view_ctr__resolve(r, "aaaaaaaaaaaa", &cgs, &nr, full, err, sizeof(err)), -EINVAL,
		  "a prefix of two");
	ASSERT_TRUE(strstr(err, "more than one"), err);
	ASSERT_NULL(cgs, "nothing on error");
	ASSERT_EQ(view_ctr__resolve(r, "bbbbbbbbbbbb", &cgs, &nr, full, err, sizeof(err)), -EINVAL,
		  "a prefix of nothing");
	ASSERT_TRUE(strstr(err, "no container") && strstr(err, "3 containers"), err);
	ASSERT_EQ(view_ctr__resolve(r, "aaaaaaaaaaa", &cgs, &nr, full, err, sizeof(err)), -EINVAL,
		  "11 digits");
	ASSERT_EQ(view_ctr__resolve(r, "AAAAAAAAAAAA1", &cgs, &nr, full, err, sizeof(err)), -EINVAL,
		  "uppercase");
	report__free(r);
}

/* The samples column of table rows whose container column is @ctr (12 chars or "-"), summed. */
static uint64_t rows_of(const char *out, const char *ctr, int *nrows)
{
	const char *p = out;
	uint64_t n = 0, v;
	char comm[32], c[32];

	*nrows = 0;
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p == '#' || sscanf(p, "%*s %*s %" SCNu64 " %31s %31s", &v, comm, c) != 3)
			continue;
		if (!strcmp(c, ctr)) {
			n += v;
			(*nrows)++;
		}
	}
	return n;
}

static void test_table(void)
{
	struct report *r = build();
	struct view_opts o = { .sort = { VIEW_KEY_CONTAINER }, .nr_sort = 1 };
	char full[CONTAINER_ID_LEN + 1], err[256], *out;
	uint64_t *cgs = NULL;
	const char *a, *b, *c, *none;
	int nr;

	if (!r)
		return;
	out = render(report_view__table, r, &o);
	if (!out)
		goto out;
	ASSERT_TRUE(strstr(out, "# container " DB " (docker): 7 samples, 25.93%\n"), out);
	ASSERT_TRUE(strstr(out, "# container " DA " (docker): 7 samples"), "docker A, both cgroups");
	ASSERT_TRUE(strstr(out, "# container " PC " (podman): 3 samples"), "podman");
	ASSERT_TRUE(strstr(out, "# in no container: 10 samples"), "the session and the unnamed cgroup");
	ASSERT_TRUE(strstr(out, "process  container     module"), "a container column");
	/* One row per (process, container, function): web splits in three. */
	ASSERT_EQ(rows_of(out, "aaaaaaaaaaaa", &nr), (uint64_t)14, "web and web in the two dockers");
	ASSERT_EQ(nr, 2, "two rows");
	ASSERT_EQ(rows_of(out, "-", &nr), (uint64_t)10, "no container");
	ASSERT_EQ(nr, 2, "bash and web");
	/* --sort container: A, B, podman, then none. */
	a = strstr(out, "aaaaaaaaaaaa  app");
	c = strstr(out, "cccccccccccc  app");
	none = strstr(out, "-             app");
	b = a ? strstr(a + 1, "aaaaaaaaaaaa  app") : NULL;
	ASSERT_TRUE(a && b && c && none && a < b && b < c && c < none, out);
	free(out);
	/* --container DA: its 7 samples, in one row; the filter line names it. */
	if (!ASSERT_OK(view_ctr__resolve(r, DA, &cgs, &o.nr_cgroups, full, err, sizeof(err)), err))
		goto out;
	o.container = full;
	o.cgroups = cgs;
	out = render(report_view__table, r, &o);
	if (out) {
		ASSERT_TRUE(strstr(out, "# filters: --container " DA " (2 cgroups)"), out);
		ASSERT_EQ(rows_of(out, "aaaaaaaaaaaa", &nr), (uint64_t)7, "the container's samples");
		ASSERT_EQ(nr, 1, "one row");
		ASSERT_EQ(rows_of(out, "-", &nr), (uint64_t)0, "nothing else");
		ASSERT_FALSE(strstr(out, "# container " DB), "no other container's line");
	}
	free(out);
	out = render(report_view__folded, r, &o);
	if (out)
		ASSERT_STREQ(out, "web;hot 7\n", "folded, filtered");
	free(out);
	out = render(report_script__write, r, &o);
	if (out)
		ASSERT_TRUE(strstr(out, "web   100/") && strstr(out, "web   101/") && !strstr(out, "web   200/"), out);
	free(out);
out:
	free(cgs);
	report__free(r);
}

int main(void)
{
	RUN_TEST(test_map);
	RUN_TEST(test_resolve);
	RUN_TEST(test_table);
	return TEST_EXIT();
}
