// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_build: build the unwind table of each FILE (user/unwind/cfi.h) and
 * say what it cost.  bench/cfi_build.sh builds it against the release
 * objects and runs it once per file (so the peak RSS is that file's).
 *
 *   cfi_build [-r RUNS] [-d] [-g DEBUGFILE] FILE...
 *
 * prints one line per file:
 *   FILE rows N bytes B fdes F cies C skipped S unsupported U cpu_ms T maxrss_kb M
 * cpu_ms is CLOCK_PROCESS_CPUTIME_ID around one build (open, read,
 * evaluate, merge), the median of RUNS; maxrss_kb is the process's peak.
 * -d dumps the rows: "pc kind cfa_off fp_saved fp_neg", hex pc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bpfsym.h"
#include "unwind/cfi.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void dump(const struct cfi_table *t)
{
	size_t i;
	uint32_t r;

	for (i = 0; i < t->nr; i++) {
		r = t->rows[i].rule;
		printf("%x %u %u %u %u\n", t->rows[i].pc, BPFSYM_UNW_RULE_KIND(r),
		       BPFSYM_UNW_RULE_CFA_OFF(r), !!(r & BPFSYM_UNW_FP_SAVED), BPFSYM_UNW_RULE_FP_NEG(r));
	}
}

/* Build @path's table @runs times; 0 or 1. */
static int one(const char *path, const char *debug, int runs, int do_dump)
{
	struct cfi_opts o = { .debug_fd = -1 };
	struct cfi_table *t = NULL;
	double ms[64], t0;
	struct rusage ru;
	char err[256];
	int fd, i, ret;

	for (i = 0; i < runs; i++) {
		cfi_table__free(t);
		t = NULL;
		t0 = cpu_ms();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		o.debug_fd = debug ? open(debug, O_RDONLY | O_CLOEXEC) : -1;
		if (fd < 0 || (debug && o.debug_fd < 0)) {
			fprintf(stderr, "cfi_build: %s: %s\n", path, strerror(errno));
			return 1;
		}
		ret = cfi_table__build_fd(fd, &o, &t, err, sizeof(err));
		close(fd);
		if (o.debug_fd >= 0)
			close(o.debug_fd);
		ms[i] = cpu_ms() - t0;
		if (ret) {
			fprintf(stderr, "cfi_build: %s: %s (%s)\n", path, err, strerror(-ret));
			return 1;
		}
	}
	qsort(ms, (size_t)runs, sizeof(ms[0]), dbl_cmp);
	getrusage(RUSAGE_SELF, &ru);
	printf("%s rows %zu bytes %zu fdes %u cies %u skipped %u unsupported %u cpu_ms %.2f maxrss_kb %ld\n",
	       path, t->nr, t->nr * sizeof(struct cfi_row), t->stats.fdes, t->stats.cies,
	       t->stats.fdes_skipped, t->stats.rows_unsupported, ms[runs / 2], ru.ru_maxrss);
	if (do_dump)
		dump(t);
	cfi_table__free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *debug = NULL;
	int c, runs = 1, do_dump = 0, rc = 0;

	while ((c = getopt(argc, argv, "r:dg:")) != -1) {
		switch (c) {
		case 'r':
			runs = (int)strtol(optarg, NULL, 10);
			if (runs < 1 || runs > 64)
				runs = 1;
			break;
		case 'd':
			do_dump = 1;
			break;
		case 'g':
			debug = optarg;
			break;
		default:
			fprintf(stderr, "usage: cfi_build [-r RUNS] [-d] [-g DEBUGFILE] FILE...\n");
			return 2;
		}
	}
	for (; optind < argc; optind++)
		rc |= one(argv[optind], debug, runs, do_dump);
	return rc;
}
