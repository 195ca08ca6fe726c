/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the debug-info tests (test_minidebug.c, test_debugfile.c) share: a
 * temp directory, shell commands run in it, files read back whole, and
 * nm's view of a binary's functions as the oracle.  The fixtures are built
 * from C at test time with cc, objcopy, strip, nm and xz.
 */
#ifndef BPFSYM_DEBUG_FIXTURE_H
#define BPFSYM_DEBUG_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char dtmp[PATH_MAX];	/* the temp directory; empty: none */
static const char *dtmp_why;	/* why there is none */
static bool dtmp_failed;	/* and that is a FAIL (not a missing tool's SKIP) */

/*
 * Create the temp directory once, if every tool is there; false if not: a
 * SKIP without a tool, a FAIL when the directory cannot be made.
 */
static bool dsetup(const char *const *tools)
{
	static char why[PATH_MAX + 64];
	const char *base;
	size_t i;

	if (dtmp[0])
		return true;
	if (!dtmp_why) {
		for (i = 0; tools[i] && !dtmp_why; i++) {
			if (!test__have(tools[i])) {
				snprintf(why, sizeof(why), "'%s' not found", tools[i]);
				dtmp_why = why;
			}
		}
	}
	if (!dtmp_why) {
		/* Under the test runner's directory when it has one (no quote: paths go in sh '...'). */
		base = getenv("BPFSYM_TEST_TMP");
		if (!base || !*base || strchr(base, '\'') || strlen(base) > PATH_MAX - 64)
			base = "/tmp";
		snprintf(dtmp, sizeof(dtmp), "%s/bpfsym-debug.XXXXXX", base);
		if (mkdtemp(dtmp))
			return true;
		snprintf(why, sizeof(why), "mkdtemp in '%s': %s", base, strerror(errno));
		dtmp[0] = 0;
		dtmp_why = why;
		dtmp_failed = true;
	}
	if (dtmp_failed)
		test__fail_msg(__FILE__, __LINE__, "%s", dtmp_why);
	else
		test__skip("%s", dtmp_why);
	return false;
}

/* The fixtures did not build, their tools being there: a FAIL naming the error. */
static __attribute__((unused)) void dbuild_failed(void)
{
	char log[PATH_MAX + 16];

	snprintf(log, sizeof(log), "%s/build.log", dtmp);
	FAIL_BUILD(log, "the fixtures");
}

/* Run a shell command in the temp directory; its output goes to build.log.  0: success. */
static int dsh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int dsh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n, st;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && (", dtmp);
	va_start(ap, fmt);
	n += vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n + 32 >= sizeof(cmd))
		return -1;
	strcat(cmd, ") >>build.log 2>&1");
	st = system(cmd);
	if (st)
		printf("     command failed (%d), see %s/build.log: %.200s\n", st, dtmp, cmd);
	return st;
}

static void dpath(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dtmp, name);
}

/* The whole file @name of the temp directory, malloc'd, or NULL. */
static __attribute__((unused)) void *dread(const char *name, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	void *buf;
	FILE *f;

	dpath(path, sizeof(path), name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || !(buf = malloc((size_t)st.st_size + 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (*len != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	return buf;
}

struct nmfunc {
	char name[128];
	uint64_t addr, size;
	char type;		/* nm's letter: t local, T global... */
};

/* `nm --defined-only -S` of @path: its function symbols (t, T, W, i), sized ones only. */
static size_t nm_funcs(const char *path, struct nmfunc *v, size_t max)
{
	char line[512], cmd[PATH_MAX + 64], name[128], type;
	unsigned long long addr, size;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only -S '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		if (sscanf(line, "%llx %llx %c %127s", &addr, &size, &type, name) != 4 || !size ||
		    !strchr("tTWi", type))
			continue;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		v[n].addr = addr;
		v[n].size = size;
		v[n].type = type;
		n++;
	}
	pclose(p);
	return n;
}

/* Remove the temp directory, unless a test failed. */
static void dcleanup(void)
{
	char cmd[PATH_MAX + 32];

	if (!dtmp[0])
		return;
	if (test__nr_fail) {
		printf("     fixtures kept in %s\n", dtmp);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dtmp);
	if (system(cmd))
		printf("     could not remove %s\n", dtmp);
}

#endif /* BPFSYM_DEBUG_FIXTURE_H */
