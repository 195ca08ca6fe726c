/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* record: the loader.  Loads the BPF sampler, records, writes the report. */
#ifndef BPFSYM_RECORD_H
#define BPFSYM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hints.h"

enum record_target {
	RECORD_ALL = 0,		/* every process */
	RECORD_PIDS = 1,	/* pids[] and all their threads */
	RECORD_COMMAND = 2,	/* argv[] and everything it forks */
	RECORD_CGROUP = 3,	/* every task in cgroup (v2) and below it */
};

/* --switch-output: when the recording moves on to a new file (record/rotate.h). */
enum rotate_mode {
	ROTATE_OFF = 0,
	ROTATE_SIGNAL = 1,	/* at each SIGUSR2 */
	ROTATE_SIZE = 2,	/* when the file has this many bytes */
	ROTATE_TIME = 3,	/* when the file is this old */
};

/* The smallest --switch-output SIZE and TIME: smaller makes files of a few samples. */
#define ROTATE_MIN_SIZE		(64ull << 10)
#define ROTATE_MIN_TIME_NS	1000000000ull

struct rotate_opts {
	enum rotate_mode mode;
	uint64_t size;			/* ROTATE_SIZE: bytes */
	uint64_t time_ns;		/* ROTATE_TIME */
	uint32_t max_files;		/* --switch-max-files: rotated files kept; 0: all */
};

struct record_opts {
	enum record_target target;
	const uint32_t *pids;
	size_t nr_pids;
	char *const *argv;		/* RECORD_COMMAND: NULL-terminated */
	const char *cgroup;		/* RECORD_CGROUP: a cgroup v2 path */
	uint32_t freq;			/* Hz per CPU */
	double duration;		/* seconds; 0: until a signal or the command exits */
	const char *output;
	uint64_t mmap_pages;		/* -m: ring-buffer pages; 0: sized by freq */
	const struct anon_hint *hints;	/* --map-anon */
	size_t nr_hints;
	bool user_only, kernel_only;
	bool quiet, verbose;
	uint32_t call_graph;		/* enum bpfsym_ustack_mode; the default: tables */
	uint64_t unwind_mem;		/* --unwind-mem: bytes of tables; 0: the default */
	struct rotate_opts rotate;	/* --switch-output, --switch-max-files */
};

/*
 * Record per @o until the duration ends, SIGINT/SIGTERM arrive, the command
 * exits, or every target process is gone; then write the END record and
 * print the summary line.  Returns the process exit status: 0 success,
 * 1 runtime failure, 2 usage or permission error (one line already printed).
 */
int record__run(const struct record_opts *o);

#endif /* BPFSYM_RECORD_H */
