/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer: turns one sampled address into a name.  User addresses go
 * through the process's mapping (procmap) to a file offset and then to the
 * ELF symbols of that file, loaded once per file identity (dev, ino) and
 * shared by every process mapping it; kernel addresses go to kallsyms.
 * A miss is data (a reason), not an error.  No libbpf here.
 */
#ifndef BPFSYM_SYMBOLIZER_H
#define BPFSYM_SYMBOLIZER_H

#include <stdint.h>

#include "procmap.h"
#include "report.h"

struct symbolizer;

struct symbolizer_opts {
	const char *proc_root;		/* "/proc" when NULL (tests point it elsewhere) */
	const char *kallsyms;		/* "/proc/kallsyms" when NULL */
	const char *debug_root;		/* "/usr/lib/debug" when NULL: build-id debug files */
	int no_kernel;			/* do not load kallsyms (user-only recordings) */
	size_t max_files;		/* ELF files kept loaded; 0: 4096 */
};

/*
 * A resolved frame.  Strings and module live as long as the symbolizer.
 * module is NULL when the address is in no mapping.
 */
struct sym_module {
	struct rpt_module rpt;		/* identity as written to reports */
	uint32_t report_id;		/* free for the caller (the recorder caches its writer id) */
	int has_report_id;
};

struct sym_frame {
	struct sym_module *module;	/* NULL: no mapping; report_id is the caller's to cache */
	uint64_t offset;		/* user: file offset; kernel: the address */
	const char *sym;		/* NULL when unnamed */
	uint64_t sym_off;
	uint32_t reason;		/* enum rpt_reason */
};

/* NULL + errno.  Loads kallsyms now (unless no_kernel) so a failure is early. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);	/* NULL is a no-op */

/*
 * Resolve user address @ip of process @pid, whose mapping model is @p
 * (p may be NULL: no mapping).  The file is opened through
 * PROC_ROOT/PID/map_files/START-END first, else PROC_ROOT/PID/root/PATH, and
 * must have the mapping's (dev, ino).  Always fills @out; returns 0.
 */
int symbolizer__user(struct symbolizer *s, uint32_t pid, const struct proc *p,
		     uint64_t ip, struct sym_frame *out);

/* Resolve kernel address @ip through kallsyms.  Always fills @out; returns 0. */
int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out);

/* The runtime _text address from kallsyms (0 if unknown or restricted). */
uint64_t symbolizer__text_addr(const struct symbolizer *s);

/* True when kallsyms addresses are all zero (kptr_restrict). */
int symbolizer__kernel_restricted(const struct symbolizer *s);

#endif /* BPFSYM_SYMBOLIZER_H */
