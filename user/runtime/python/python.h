/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python: the Python runtime behind runtime/runtime.h (issue 27), its
 * parts put together: pyattach finds each process's interpreter at mapping
 * time and hands its layout to the BPF walker (bpf/python.bpf.h, through
 * the put callback) and to pyrt, which names the frames the walker
 * sampled from the process's memory.  Everything slow is on the pool.
 */
#ifndef BPFSYM_PYTHON_H
#define BPFSYM_PYTHON_H

#include <stdint.h>

#include "bpfsym.h"

struct offload;
struct runtimes;

struct python_opts {
	struct offload *pool;	/* reads and looks; NULL: on the caller's thread (tests) */
	/* The BPF walker's entry for @pid, or NULL to drop it (pyattach.h). */
	int (*put)(void *ctx, uint32_t pid, const struct bpfsym_py_proc *e);
	void *ctx;
};

/* Register the Python runtime in @rs, for BPFSYM_FK_PYTHON frames.  0 or -errno. */
int python__register(struct runtimes *rs, const struct python_opts *o);

#endif /* BPFSYM_PYTHON_H */
