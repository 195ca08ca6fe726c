// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: cgroup path reading (model/cgpaths.c, shared with
 * `-G`'s record/cgroup.c).  /proc/PID/cgroup names a cgroup whoever
 * created it chose (a delegated subtree, a container), and the path read
 * there is joined to the cgroup2 mount and stat'd.  The input, after a
 * first byte that picks the cgroup looked up, is:
 *  - the text of /proc/PID/cgroup given to cgpaths__proc_v2(), held to
 *    its contract by a scan of the text here;
 *  - mountinfo text for cgpaths__next_cgroup2();
 *  - the file PROC/1/cgroup of a fake /proc beside a fake cgroup2 mount (a
 *    directory tree made once: the id is the directory's inode, as in
 *    cgroup2fs), through the whole cgpaths__lookup(): a path is returned
 *    only when MOUNT/PATH is that very directory, never one outside the
 *    mount (the id of the directory above it is asked for too), and it
 *    comes from the file exactly when the file's "0::" line names it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/cgpaths.h"

#define FUZZ_NAME "fuzz_cgroup"
#include "fuzz_common.h"

/* The fake hierarchy, under MOUNT; the last id is the directory above MOUNT. */
static const char *const cg_dirs[] = { "", "/a", "/a/b", "/a/b/c", "/sp ace", "/..x", "/x..", "/0::" };
#define NR_IDS (sizeof(cg_dirs) / sizeof(cg_dirs[0]) + 1)
static char top[PATH_MAX], mnt[PATH_MAX + 8], proc[PATH_MAX + 8], file[PATH_MAX + 32];
static uint64_t ids[NR_IDS];

static void fatal(const char *what)
{
	perror(what);
	exit(1);
}

static void setup(void)
{
	char p[2 * PATH_MAX];
	struct stat st;
	size_t i;

	if (top[0])
		return;
	snprintf(top, sizeof(top), "%s", fuzz_tmpdir());
	snprintf(mnt, sizeof(mnt), "%s/cg", top);
	snprintf(proc, sizeof(proc), "%s/proc", top);
	snprintf(file, sizeof(file), "%s/1/cgroup", proc);
	snprintf(p, sizeof(p), "%s/1", proc);
	if (mkdir(proc, 0755) || mkdir(p, 0755))
		fatal("fuzz_cgroup: mkdir");
	for (i = 0; i < NR_IDS - 1; i++) {
		snprintf(p, sizeof(p), "%s%s", mnt, cg_dirs[i]);
		if (mkdir(p, 0755) || stat(p, &st))
			fatal("fuzz_cgroup: mkdir");
		ids[i] = (uint64_t)st.st_ino;
	}
	if (stat(top, &st))
		fatal("fuzz_cgroup: stat");
	ids[NR_IDS - 1] = (uint64_t)st.st_ino;
}

/* The first line of @text starting with "0::"; NULL: none. */
static const char *v2_line(const char *text)
{
	const char *l = text;

	for (;;) {
		if (!strncmp(l, "0::", 3))
			return l;
		l = strchr(l, '\n');
		if (!l)
			return NULL;
		l++;
	}
}

/* cgpaths__proc_v2 against v2_line(); the path @text names for id @id, or NULL. */
static bool check_proc_v2(const char *text, uint64_t id, char *want, size_t size)
{
	const char *line = v2_line(text), *path = NULL;
	char full[2 * PATH_MAX];
	struct stat st;
	size_t len = SIZE_MAX;
	int err = cgpaths__proc_v2(text, &path, &len);

	if (!line) {
		CHECK(err == -ENOENT);
		return false;
	}
	CHECK(err == 0 && path == line + 3);
	CHECK(!memchr(path, '\n', len) && strnlen(path, len) == len);
	CHECK(path[len] == '\n' || path[len] == '\0');
	/* What cgpaths must take from it: an absolute path of its mount, no "/..", that directory. */
	if (!len || path[0] != '/' || len > CGPATHS_PATH_MAX || len >= size)
		return false;
	memcpy(want, path, len);
	want[len] = '\0';
	snprintf(full, sizeof(full), "%s%s", mnt, want);
	return !strstr(want, "/..") && !stat(full, &st) && S_ISDIR(st.st_mode) &&
	       (uint64_t)st.st_ino == id;
}

/* @mp's whitespace escaped back as mountinfo writes it, into @out (4 bytes a byte at most). */
static void escape(const char *mp, char *out)
{
	for (; *mp; mp++) {
		if (*mp == ' ' || *mp == '\t' || *mp == '\n')
			out += sprintf(out, "\\%03o", (unsigned char)*mp);
		else
			*out++ = *mp;
	}
	*out = '\0';
}

static void check_mountinfo(const char *text)
{
	char *buf = strdup(text), *save = NULL, mp[CGPATHS_MOUNT_MAX], esc[4 * CGPATHS_MOUNT_MAX];
	size_t n = 0;

	CHECK(buf);
	while (cgpaths__next_cgroup2(buf, &save, mp)) {
		CHECK(mp[0] && strlen(mp) < CGPATHS_MOUNT_MAX);
		/* What was read is a field of the text, its whitespace escapes undone. */
		escape(mp, esc);
		CHECK(strstr(text, esc));
		n++;
	}
	CHECK(n <= strlen(text) / 12 + 1);
	free(buf);
}

/* Whether @path has a ".." component (a name like "..x" is a cgroup's own). */
static bool has_dotdot(const char *path)
{
	const char *p;

	for (p = strstr(path, "/.."); p; p = strstr(p + 1, "/.."))
		if (p[3] == '/' || p[3] == '\0')
			return true;
	return false;
}

static void write_file(const char *text, size_t len)
{
	FILE *f = fopen(file, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		fatal("fuzz_cgroup: writing the fake /proc file");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct cgpaths_opts o = { .mount = mnt, .proc = proc, .cap = 2, .rescan_ns = 1 };
	char *text, want[CGPATHS_PATH_MAX + 1], full[2 * PATH_MAX];
	const struct cgpaths_stats *st;
	bool from_file;
	const char *got;
	struct cgpaths *c;
	struct stat sb;
	uint64_t id;

	setup();
	if (!len)
		return 0;
	id = ids[data[0] % NR_IDS];
	text = malloc(len);
	CHECK(text);
	memcpy(text, data + 1, len - 1);
	text[len - 1] = '\0';
	from_file = check_proc_v2(text, id, want, sizeof(want));
	check_mountinfo(text);
	write_file((const char *)data + 1, len - 1);

	c = cgpaths__new(&o);
	CHECK(c);
	st = cgpaths__stats(c);
	got = cgpaths__lookup(c, id, 1, 1000);
	CHECK(st->lookups == 1 && st->misses == 1);
	CHECK(st->by_proc == from_file);
	if (from_file)
		CHECK(got && !strcmp(got, want));
	if (id == ids[NR_IDS - 1]) {
		CHECK(!got);	/* outside the mount */
	} else {
		/* Else the walk finds it: every directory of the fake mount is within its caps. */
		CHECK(got && got[0] == '/' && strlen(got) <= CGPATHS_PATH_MAX && !has_dotdot(got));
		snprintf(full, sizeof(full), "%s%s", mnt, got);
		CHECK(!stat(full, &sb) && (uint64_t)sb.st_ino == id);
		/* Cached: the same string, without asking again. */
		CHECK(cgpaths__lookup(c, id, 1, 2000) == got && st->misses == 1);
	}
	cgpaths__free(c);
	free(text);
	return 0;
}
