/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hints: the user's word for what is in anonymous memory (seed 000).
 * `--map-anon FILE@PID,START,LEN[,OFFSET]` says the bytes of FILE from
 * OFFSET were copied to [START, START+LEN) of process PID, by a loader or
 * a JIT that perf cannot see, so addresses there are named with FILE's
 * symbols.  This module parses the option; the mapping model carries the
 * hint with the process (through fork, until exec) and the symbolizer
 * reads FILE.  No libbpf here.
 */
#ifndef BPFSYM_HINTS_H
#define BPFSYM_HINTS_H

#include <stddef.h>
#include <stdint.h>

struct anon_hint {
	const char *file;	/* points into the parsed argument: NOT terminated */
	size_t file_len;	/* bytes of file, up to the '@' */
	uint32_t pid;
	uint64_t start, len, offset;
};

/*
 * Parse @arg, "FILE@PID,START,LEN[,OFFSET]" (numbers in C notation: 0x..
 * hex, 0.. octal, or decimal; FILE is everything before the last '@', so
 * it may itself hold an '@').  @arg must outlive @out: out->file points
 * into it, out->file_len bytes long.  Rejects an empty FILE, PID 0, LEN 0, and ranges that wrap
 * (START + LEN or OFFSET + LEN past 2^64).  0, or -EINVAL with a one-line
 * reason in @err (@errlen bytes).
 */
int anon_hint__parse(const char *arg, struct anon_hint *out, char *err, size_t errlen);

#endif /* BPFSYM_HINTS_H */
