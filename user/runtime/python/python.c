// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* python: struct runtime_ops over pyattach and pyrt (python.h). */
#include <errno.h>
#include <stdlib.h>

#include "runtime/python/pyattach.h"
#include "runtime/python/pyrt.h"
#include "runtime/python/python.h"
#include "runtime/runtime.h"

_Static_assert((int)PYRT_MISS_GONE == RT_MISS_GONE && (int)PYRT_MISS_VERSION == RT_MISS_VERSION &&
		       (int)PYRT_MISS_INVALID == RT_MISS_INVALID && (int)PYRT_MISS_READ == RT_MISS_READ &&
		       (int)PYRT_MISS_NO_ANSWER == RT_MISS_NO_ANSWER,
	       "pyrt's reasons are runtime.h's");

#define PYTHON_READS	4	/* code objects read at once */
#define PYTHON_LOOKS	2	/* processes looked at at once */

struct python {
	struct pyrt *rt;
	struct pyattach *att;
};

static int name_frame(void *ctx, const struct rt_frame *f, const struct proc *p, struct rt_name *out)
{
	struct python *py = ctx;
	struct py_name nm;
	int err;

	(void)p;
	err = pyrt__name(py->rt, f->pid, f->pstart, f->slot0 & BPFSYM_FK_ADDR_MASK,
			 (uint32_t)(f->slot1 >> 32), (uint32_t)f->slot1, &nm);
	if (err)
		return err;
	if (nm.err) {
		*out = (struct rt_name){ .reason = pyrt__miss(nm.err) };
		return 0;
	}
	*out = (struct rt_name){
		.func = nm.func, .file = nm.file, .line = nm.line > 0 ? (uint32_t)nm.line : 0,
		.first_line = nm.firstlineno > 0 ? (uint32_t)nm.firstlineno : 0,
	};
	return 0;
}

static void proc_gone(void *ctx, uint32_t pid, uint64_t pstart)
{
	struct python *py = ctx;

	pyattach__gone(py->att, pid, pstart);
	pyrt__proc_gone(py->rt, pid, pstart);
}

static void mapped(void *ctx, const struct proc *p, const struct mapping *m)
{
	pyattach__mapped(((struct python *)ctx)->att, p, m);
}

static void forked(void *ctx, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart)
{
	pyattach__forked(((struct python *)ctx)->att, pid, pstart, ppid, ppstart);
}

/* The old image's names stay cached: its samples may still be in the ring. */
static void execed(void *ctx, uint32_t pid, uint64_t pstart)
{
	pyattach__gone(((struct python *)ctx)->att, pid, pstart);
}

static void poll(void *ctx, uint64_t wait_ns)
{
	pyattach__poll(((struct python *)ctx)->att, wait_ns);
}

static void python_free(void *ctx)
{
	struct python *py = ctx;

	pyattach__free(py->att);
	pyrt__free(py->rt);
	free(py);
}

static const struct runtime_ops python_ops = {
	.name = "python",
	.frame_kind = BPFSYM_FK_PYTHON,
	.name_frame = name_frame,
	.proc_gone = proc_gone,
	.mapped = mapped,
	.forked = forked,
	.execed = execed,
	.poll = poll,
	.free = python_free,
};

int python__register(struct runtimes *rs, const struct python_opts *o)
{
	struct python *py = calloc(1, sizeof(*py));
	int err;

	if (!py)
		return -ENOMEM;
	/* Reads wait for one of the pool's workers (-EAGAIN) rather than queue on it. */
	py->rt = pyrt__new(&(struct pyrt_opts){ .pool = o->pool, .max_jobs = PYTHON_READS });
	py->att = py->rt ? pyattach__new(&(struct pyattach_opts){
		.pool = o->pool, .rt = py->rt, .put = o->put, .ctx = o->ctx,
		.max_jobs = PYTHON_LOOKS }) : NULL;
	err = py->att ? runtimes__add(rs, &python_ops, py) : -ENOMEM;
	if (err)
		python_free(py);
	return err;
}
