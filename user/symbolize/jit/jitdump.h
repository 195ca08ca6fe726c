/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jitdump: the jit-PID.dump files JITs write for perf (the format of
 * Linux's tools/perf/Documentation/jitdump-specification.txt), read for
 * the names of JIT code.  A file header, then records, each
 * {u32 id, u32 total_size, u64 timestamp} and a body:
 *
 *   JIT_CODE_LOAD (0)  pid, tid, vma, code_addr, code_size, code_index,
 *                      the name (NUL-terminated), code_size bytes of code
 *   JIT_CODE_MOVE (1)  pid, tid, vma, old_code_addr, new_code_addr,
 *                      code_size, code_index: the code of that index,
 *                      named as it was loaded, is now at new_code_addr
 *   DEBUG_INFO (2), CLOSE (3), UNWINDING_INFO (4), unknown: skipped
 *
 * Fields are in the byte order of the writer's machine: a file whose magic
 * reads byte-swapped comes from another and is refused.  The file grows as
 * the JIT runs: it is read incrementally, complete records only, and the
 * code bytes are skipped, never read.  Finding and opening the file is the
 * caller's business.  No libbpf here.
 */
#ifndef BPFSYM_JITDUMP_H
#define BPFSYM_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/jit/jitsyms.h"

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD" */
#define JITDUMP_VERSION		1
#define JITDUMP_HEADER_SIZE	40
#define JITDUMP_RECORD_HEADER_SIZE 16

enum jitdump_record_id {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

/* The file header's fields. */
struct jitdump_header {
	uint32_t version;
	uint32_t total_size;
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

struct jitdump_stats {
	uint64_t bytes;		/* consumed of the current file, header included */
	uint64_t loads;		/* JIT_CODE_LOAD records taken */
	uint64_t moves;		/* JIT_CODE_MOVE records taken */
	uint64_t other;		/* DEBUG_INFO, CLOSE, UNWINDING_INFO, unknown ids: skipped */
	uint64_t bad_records;	/* LOAD or MOVE records skipped: shorter than their
				 * fields, name empty, unterminated or longer than
				 * name_max, code_size past the record, range wraps */
	uint64_t unknown_moves;	/* MOVE of a code_index no LOAD named (or not kept) */
	uint64_t dropped;	/* names, symbols and code indexes refused by a cap */
	uint64_t restarts;	/* the file was truncated or rewritten: read again from 0 */
	bool closed;		/* a JIT_CODE_CLOSE was read */
	int stopped;		/* 0, or why nothing more is read: see jitdump_reader__read() */
};

struct jitdump_reader;

struct jitdump_opts {
	struct jitsyms_opts syms;	/* caps of the table */
	uint64_t max_bytes;	/* bytes of the file read at most; 0: default (256 MiB) */
	size_t name_max;	/* longest name kept, NUL excluded; 0: default (4096); at most 1 MiB */
	size_t max_indexes;	/* code indexes remembered for MOVE; 0: default (1 Mi) */
};

/*
 * A reader of one jitdump file, with an empty table; @opts may be NULL.
 * Returns NULL with errno set (EINVAL: name_max too big; ENOMEM).
 */
struct jitdump_reader *jitdump_reader__new(const struct jitdump_opts *opts);

/* jitdump_reader__free(NULL) is a no-op.  Frees the table too. */
void jitdump_reader__free(struct jitdump_reader *r);

/*
 * Read the jitdump open on @fd (borrowed; a regular file) from the record
 * after the last one read up to the size it has now, with pread() in a
 * bounded buffer, and add the symbols of its complete records to the
 * table; a partial header or last record waits for the next read.  Pass
 * the same file each time.  When the file is shorter than what was
 * consumed or its header changed, it was truncated or rewritten: a new
 * table is made and the file read from 0 (counted in restarts).
 * Returns the number of symbols added (0: nothing new), or -errno:
 *   from fstat()/pread(), or -ENOMEM: the read can be tried again;
 *   and, once reading stopped for good (the same code from every later
 *   call, kept in stats->stopped, until the file is rewritten):
 *   -EINVAL           not a jitdump: bad magic, header total_size < 40
 *   -EPROTONOSUPPORT  the magic is byte-swapped (written on a machine of
 *                     the other byte order), or a version other than 1
 *   -EBADMSG          a record's total_size is below 16: the next
 *                     record cannot be found
 *   -E2BIG            the next record ends past max_bytes (the table
 *                     keeps what was read before)
 * Any read may replace the table: get it again after each read, and do
 * not keep pointers into the old one.
 */
int jitdump_reader__read(struct jitdump_reader *r, int fd);

/* The table of what was read (never NULL); owned by @r. */
struct jitsyms *jitdump_reader__syms(const struct jitdump_reader *r);

/* The file header once one was read, else NULL. */
const struct jitdump_header *jitdump_reader__header(const struct jitdump_reader *r);

/* Counters since the reader was made (bytes: of the current table). */
const struct jitdump_stats *jitdump_reader__stats(const struct jitdump_reader *r);

#endif /* BPFSYM_JITDUMP_H */
