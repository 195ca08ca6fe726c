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
};

/*
 * Record per @o until the duration ends, SIGINT/SIGTERM arrive, the command
 * exits, or every target process is gone; then write the END record and
 * print the summary line.  Returns the process exit status: 0 success,
 * 1 runtime failure, 2 usage or permission error (one line already printed).
 */
int record__run(const struct record_opts *o);

#endif /* BPFSYM_RECORD_H */
