// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python: runtime_ops for CPython (python.h): a frame's two slots to
 * pyrt__name(), its answer to a struct rt_name.
 *
 * Written beside the interface (runtime/runtime.h, branch seam27) before
 * both met: in a tree without it this file is a stub saying so, and the
 * guard goes once they are merged.
 */
#include <errno.h>

#include "runtime/python/python.h"

#if __has_include("runtime/runtime.h")
#include "bpfsym.h"
#include "runtime/runtime.h"

_Static_assert((int)PYRT_MISS_GONE == RT_MISS_GONE && (int)PYRT_MISS_VERSION == RT_MISS_VERSION &&
		       (int)PYRT_MISS_INVALID == RT_MISS_INVALID &&
		       (int)PYRT_MISS_READ == RT_MISS_READ &&
		       (int)PYRT_MISS_NO_ANSWER == RT_MISS_NO_ANSWER,
	       "pyrt's reasons are runtime.h's");

static int py_name_frame(void *ctx, const struct rt_frame *f, const struct proc *p,
			 struct rt_name *out)
{
	struct py_name n;
	int err;

	(void)p;	/* the interpreter is pyrt's, said at mapping time */
	err = pyrt__name(ctx, f->pid, f->pstart, f->slot0 & BPFSYM_FK_ADDR_MASK,
			 (uint32_t)(f->slot1 >> 32), (uint32_t)f->slot1, &n);
	if (err)
		return err;	/* -EAGAIN: the read is running */
	*out = (struct rt_name){ .reason = pyrt__miss(n.err) };
	if (n.err)
		return 0;
	out->func = n.func;
	out->file = n.file;
	out->line = n.line > 0 ? (uint32_t)n.line : 0;
	out->first_line = n.firstlineno > 0 ? (uint32_t)n.firstlineno : 0;
	return 0;
}

static void py_proc_gone(void *ctx, uint32_t pid, uint64_t pstart)
{
	pyrt__proc_gone(ctx, pid, pstart);
}

static void py_free(void *ctx)
{
	pyrt__free(ctx);
}

static const struct runtime_ops python_ops = {
	.name = "python",
	.frame_kind = BPFSYM_FK_PYTHON,
	.name_frame = py_name_frame,
	.proc_gone = py_proc_gone,
	.free = py_free,
};

int python_runtime__register(struct runtimes *rs, const struct pyrt_opts *o, struct pyrt **rt)
{
	int err;

	*rt = pyrt__new(o);
	if (!*rt)
		return -ENOMEM;
	err = runtimes__add(rs, &python_ops, *rt);
	if (err) {
		pyrt__free(*rt);
		*rt = NULL;
	}
	return err;
}

#else

int python_runtime__register(struct runtimes *rs, const struct pyrt_opts *o, struct pyrt **rt)
{
	(void)rs;
	(void)o;
	*rt = NULL;
	return -EOPNOTSUPP;
}

#endif
