// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtime: the registry of runtimes by frame kind (runtime.h).  The
 * runtimes themselves live in the folders beside this file.
 */
#include <errno.h>
#include <stdlib.h>

#include "bpfsym.h"
#include "runtime/runtime.h"

struct rt_slot {
	const struct runtime_ops *ops;	/* NULL: no runtime of this kind */
	void *ctx;
};

struct runtimes {
	struct rt_slot by_kind[BPFSYM_FK_MAX];
};

struct runtimes *runtimes__new(void)
{
	return calloc(1, sizeof(struct runtimes));
}

void runtimes__free(struct runtimes *rs)
{
	if (!rs)
		return;
	for (size_t k = 0; k < BPFSYM_FK_MAX; k++)
		if (rs->by_kind[k].ops && rs->by_kind[k].ops->free)
			rs->by_kind[k].ops->free(rs->by_kind[k].ctx);
	free(rs);
}

int runtimes__add(struct runtimes *rs, const struct runtime_ops *ops, void *ctx)
{
	if (!rs || !ops || !ops->name || !ops->name_frame || ops->frame_kind == BPFSYM_FK_NATIVE ||
	    ops->frame_kind >= BPFSYM_FK_MAX)
		return -EINVAL;
	if (rs->by_kind[ops->frame_kind].ops)
		return -EEXIST;
	rs->by_kind[ops->frame_kind] = (struct rt_slot){ ops, ctx };
	return 0;
}

int runtimes__name(struct runtimes *rs, uint32_t kind, const struct rt_frame *f,
		   const struct proc *p, struct rt_name *out)
{
	const struct rt_slot *s = rs && kind < BPFSYM_FK_MAX ? &rs->by_kind[kind] : NULL;
	int err;

	*out = (struct rt_name){ .reason = RT_MISS_VERSION };
	if (!s || !s->ops)
		return 0;
	*out = (struct rt_name){ .reason = RT_MISS_READ };
	err = s->ops->name_frame(s->ctx, f, p, out);
	if (err == -EAGAIN) {
		*out = (struct rt_name){ .reason = RT_MISS_NO_ANSWER };
		return err;
	}
	/* A runtime's contract breach is a miss, not a name we cannot trust. */
	if (err || (!out->func && out->reason == RT_MISS_NONE) || out->reason >= RT_MISS_MAX)
		*out = (struct rt_name){ .reason = RT_MISS_READ };
	else if (out->func)
		out->reason = RT_MISS_NONE;
	return 0;
}

void runtimes__proc_gone(struct runtimes *rs, uint32_t pid, uint64_t pstart)
{
	if (!rs)
		return;
	for (size_t k = 0; k < BPFSYM_FK_MAX; k++)
		if (rs->by_kind[k].ops && rs->by_kind[k].ops->proc_gone)
			rs->by_kind[k].ops->proc_gone(rs->by_kind[k].ctx, pid, pstart);
}

/* Each registered runtime with op @op set: its slot in @s. */
#define EACH_WITH(rs, s, op) \
	for (const struct rt_slot *s = (rs) ? (rs)->by_kind : NULL; \
	     s && s < (rs)->by_kind + BPFSYM_FK_MAX; s++) \
		if (s->ops && s->ops->op)

void runtimes__mapped(struct runtimes *rs, const struct proc *p, const struct mapping *m)
{
	EACH_WITH(rs, s, mapped)
		s->ops->mapped(s->ctx, p, m);
}

void runtimes__forked(struct runtimes *rs, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart)
{
	EACH_WITH(rs, s, forked)
		s->ops->forked(s->ctx, pid, pstart, ppid, ppstart);
}

void runtimes__execed(struct runtimes *rs, uint32_t pid, uint64_t pstart)
{
	EACH_WITH(rs, s, execed)
		s->ops->execed(s->ctx, pid, pstart);
}

void runtimes__poll(struct runtimes *rs, uint64_t wait_ns)
{
	EACH_WITH(rs, s, poll)
		s->ops->poll(s->ctx, wait_ns);
}

const char *runtimes__kind_name(const struct runtimes *rs, uint32_t kind)
{
	return rs && kind < BPFSYM_FK_MAX && rs->by_kind[kind].ops ? rs->by_kind[kind].ops->name : NULL;
}
