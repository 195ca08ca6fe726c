/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * korc: the kernel's ORC tables copied into the sampler's maps, for the
 * BPF kernel unwinder of tasks off the CPU (bpf/korc.bpf.h says why and
 * how it unwinds).  Three steps around the sampler's load:
 *
 *   korc__plan   before it: vmlinux's tables from kallsyms, each module's
 *                through kdesc.bpf.c; the sizes of the maps
 *   korc__size   on the opened skeleton: those sizes, the copy program
 *   korc__fill   after its load: the copy (BPF_PROG_TEST_RUN a chunk at a
 *                time), the block index through the maps' mmap, the
 *                segments, then korc_ready
 *   korc__watch  then: modules loaded later get their tables, those
 *                unloaded lose theirs
 *
 * Memory: 16 bytes a table entry in the kernel (vmlinux has ~480k on
 * 6.18: 7.7 MiB) plus 8 a 256-byte block of text, only when asked for;
 * with modules, 1.5 MiB more of room for those loaded while recording.
 */
#ifndef BPFSYM_RECORD_KORC_H
#define BPFSYM_RECORD_KORC_H

#include <stdint.h>

struct korc;
struct sampler_bpf;

/*
 * Find the tables of the running kernel.  NULL with errno: ENOENT when
 * kallsyms has no ORC tables (another unwinder, or its addresses hidden),
 * ENOMEM; the reason is printed at debug level.
 */
struct korc *korc__plan(void);

/* Size the opened (not loaded) skeleton @s's tables for @k; @k NULL: the smallest, no copy program. */
void korc__size(const struct korc *k, struct sampler_bpf *s);

/*
 * Copy the tables into loaded @s, index them and publish them
 * (korc_ready).  0 or -errno (printed at debug level): the unwinder then
 * stays off.
 */
int korc__fill(struct korc *k, struct sampler_bpf *s);

/*
 * Keep @k's modules' tables as modules load and unload: a thread that
 * looks at /proc/modules each second (korc.c says how it publishes).
 * After korc__fill; stopped by korc__free.  The thread keeps only
 * CAP_BPF and CAP_SYSLOG.  0 (also when the kernel has no modules) or
 * -errno: the tables stay as filled.
 */
int korc__watch(struct korc *k);

/* Entries and segments the tables hold once filled (for -v, before korc__watch). */
void korc__counts(const struct korc *k, uint64_t *entries, uint32_t *segs);

void korc__free(struct korc *k);

#endif /* BPFSYM_RECORD_KORC_H */
