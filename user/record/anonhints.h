/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * anonhints: the --map-anon hints of a recording.  Each FILE is opened
 * before anything is loaded (a bad one is a usage error, not unnamed
 * frames later); each hint goes to its process once the start-up
 * snapshot has filled the model, and follows it from there (fork, exit).
 * Errors are printed here, one line naming the hint.
 */
#ifndef BPFSYM_ANONHINTS_H
#define BPFSYM_ANONHINTS_H

#include <stdint.h>

#include "record/record.h"

struct proc_table;
struct symbolizer;

/*
 * Open each --map-anon FILE of @o in @sym; *@ids gets an array of the
 * symbolizer's id of each (the caller frees it, also on error).  0 or
 * -errno.
 */
int anonhints__load(const struct record_opts *o, struct symbolizer *sym, uint32_t **ids);

/* Give each hint of @o, file @ids[i], to its process in @procs.  0 or -errno. */
int anonhints__attach(const struct record_opts *o, struct proc_table *procs, const uint32_t *ids);

#endif /* BPFSYM_ANONHINTS_H */
