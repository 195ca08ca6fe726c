// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyrt: the Python runtime's state for one recording (pyrt.h): the
 * interpreters by process, the cache, the reads in flight.  A read is a
 * job that opens the process (pyproc), reads the code object (pycode) and
 * closes it; its answer, name or miss, goes into the cache, so each code
 * object of a process is read once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/offload.h"
#include "base/util.h"
#include "runtime/python/pyproc.h"
#include "runtime/python/pyrt.h"

#define DEFAULT_JOBS		64
#define DEFAULT_DEADLINE_NS	5000000000ull
#define MAX_PROCS		65536

struct rt_proc {
	uint32_t pid;
	uint64_t pstart;
	struct py_layout l;
	uint64_t bias;
};

/* One read: its inputs, then its answer, filled on a worker. */
struct rt_job {
	struct offload_job job;
	struct rt_job *next;	/* rt->jobs, while the caller's */
	uint32_t pid, firstlineno;
	uint64_t pstart, code, bias, started_ns;
	struct py_layout l;
	int err;
	struct py_code pc;
};

struct pyrt {
	struct pyrt_opts o;
	struct pycache *cache;
	struct htab procs;	/* hash(pid, pstart) -> struct rt_proc * */
	struct rt_job *jobs;
	size_t nr_jobs;
};

struct proc_key {
	uint32_t pid;
	uint64_t pstart;
};

static uint64_t proc_hash(uint32_t pid, uint64_t pstart)
{
	return hash_u64(hash_u64(1, pid), pstart);
}

static bool proc_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct proc_key *k = key;
	const struct rt_proc *p = (const struct rt_proc *)(uintptr_t)val;

	(void)ctx;
	return p->pid == k->pid && p->pstart == k->pstart;
}

static struct rt_proc *find_proc(const struct pyrt *rt, uint32_t pid, uint64_t pstart)
{
	struct proc_key k = { pid, pstart };

	return (struct rt_proc *)(uintptr_t)htab__find(&rt->procs, proc_hash(pid, pstart), proc_eq,
						       NULL, &k);
}

enum pyrt_miss pyrt__miss(int err)
{
	switch (err) {
	case 0:
		return PYRT_MISS_NONE;
	case -ESRCH:
		return PYRT_MISS_GONE;
	case -EPROTONOSUPPORT:
		return PYRT_MISS_VERSION;
	case -EINVAL:
		return PYRT_MISS_INVALID;
	case -ETIME:
	case -EBUSY:
		return PYRT_MISS_NO_ANSWER;
	default:
		return PYRT_MISS_READ;
	}
}

struct pyrt *pyrt__new(const struct pyrt_opts *o)
{
	struct pyrt *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return NULL;
	if (o)
		rt->o = *o;
	if (!rt->o.max_jobs)
		rt->o.max_jobs = DEFAULT_JOBS;
	if (!rt->o.deadline_ns)
		rt->o.deadline_ns = DEFAULT_DEADLINE_NS;
	rt->cache = pycache__new(rt->o.max_entries);
	if (!rt->cache) {
		free(rt);
		return NULL;
	}
	return rt;
}

static void job_free(struct rt_job *j)
{
	pycode__release(&j->pc);
	free(j);
}

static void job_run(struct offload_job *oj)
{
	struct rt_job *j = (struct rt_job *)oj;
	struct pyproc pp;

	j->err = pyproc__open(&pp, j->pid, j->pstart);
	if (j->err)
		return;
	j->err = pycode__read(pyproc__read, &pp, &j->l, j->bias, j->code, j->firstlineno, &j->pc);
	pyproc__close(&pp);
}

static void job_drop(struct offload_job *oj)
{
	job_free((struct rt_job *)oj);
}

/* Take @j out of rt->jobs. */
static void job_unlink(struct pyrt *rt, struct rt_job *j)
{
	struct rt_job **pp;

	for (pp = &rt->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			rt->nr_jobs--;
			return;
		}
}

/* Give up every read of (@pid, @pstart), or every read when @all. */
static void abandon_jobs(struct pyrt *rt, uint32_t pid, uint64_t pstart, bool all)
{
	struct rt_job *j = rt->jobs, *next;

	for (; j; j = next) {
		next = j->next;
		if (!all && (j->pid != pid || j->pstart != pstart))
			continue;
		job_unlink(rt, j);
		offload__abandon(rt->o.pool, &j->job);
	}
}

static void free_proc(uint64_t val)
{
	free((void *)(uintptr_t)val);
}

void pyrt__free(struct pyrt *rt)
{
	size_t i;

	if (!rt)
		return;
	abandon_jobs(rt, 0, 0, true);
	for (i = 0; rt->procs.slots && i <= rt->procs.mask; i++)
		if (rt->procs.slots[i].val)
			free_proc(rt->procs.slots[i].val);
	htab__free(&rt->procs);
	pycache__free(rt->cache);
	free(rt);
}

int pyrt__set_interp(struct pyrt *rt, uint32_t pid, uint64_t pstart, const struct py_layout *l,
		     uint64_t bias)
{
	struct rt_proc *p = find_proc(rt, pid, pstart);

	if (!p) {
		if (htab__nr(&rt->procs) >= MAX_PROCS)
			return -E2BIG;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		if (htab__add(&rt->procs, proc_hash(pid, pstart), (uintptr_t)p)) {
			free(p);
			return -ENOMEM;
		}
		p->pid = pid;
		p->pstart = pstart;
	}
	p->l = *l;
	p->bias = bias;
	return 0;
}

void pyrt__proc_gone(struct pyrt *rt, uint32_t pid, uint64_t pstart)
{
	struct rt_proc *p = find_proc(rt, pid, pstart);

	abandon_jobs(rt, pid, pstart, false);
	pycache__drop_proc(rt->cache, pid, pstart);
	if (p) {
		htab__del(&rt->procs, proc_hash(pid, pstart), (uintptr_t)p);
		free(p);
	}
}

/* A miss not kept in the cache (it may go: no interpreter yet, no worker free). */
static int passing_miss(struct py_name *out, int err)
{
	memset(out, 0, sizeof(*out));
	out->line = -1;
	out->err = err;
	return 0;
}

/* @j's answer into the cache, @j freed; then the name from the cache. */
static int job_done(struct pyrt *rt, struct rt_job *j, int err, uint32_t index,
		    struct py_name *out)
{
	uint32_t pid = j->pid, first = j->firstlineno;
	uint64_t pstart = j->pstart, code = j->code;

	if (!err)
		err = j->err;
	if (pycache__add(rt->cache, pid, pstart, code, first, err ? NULL : &j->pc, err))
		err = -ENOMEM;
	job_free(j);
	if (err == -ENOMEM)
		return passing_miss(out, err);
	return pycache__lookup(rt->cache, pid, pstart, code, first, index, out) ?
	       passing_miss(out, -ENOMEM) : 0;
}

/* A new read of the frame, started (or run here without a pool): NULL when refused. */
static struct rt_job *job_start(struct pyrt *rt, const struct rt_proc *p, uint64_t code,
				uint32_t firstlineno)
{
	struct rt_job *j;

	if (rt->nr_jobs >= rt->o.max_jobs) {
		errno = EBUSY;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	j->job.run = job_run;
	j->job.drop = job_drop;
	j->pid = p->pid;
	j->pstart = p->pstart;
	j->code = code;
	j->firstlineno = firstlineno;
	j->l = p->l;
	j->bias = p->bias;
	j->started_ns = clock_ns(CLOCK_MONOTONIC);
	if (!rt->o.pool) {
		job_run(&j->job);
		return j;
	}
	if (offload__submit(rt->o.pool, &j->job)) {
		free(j);
		errno = EBUSY;
		return NULL;
	}
	j->next = rt->jobs;
	rt->jobs = j;
	rt->nr_jobs++;
	return j;
}

int pyrt__name(struct pyrt *rt, uint32_t pid, uint64_t pstart, uint64_t code,
	       uint32_t firstlineno, uint32_t index, struct py_name *out)
{
	const struct rt_proc *p;
	struct rt_job *j;

	if (!pycache__lookup(rt->cache, pid, pstart, code, firstlineno, index, out))
		return 0;
	p = find_proc(rt, pid, pstart);
	if (!p)
		return passing_miss(out, -EPROTONOSUPPORT);
	for (j = rt->jobs; j; j = j->next)
		if (j->pid == pid && j->pstart == pstart && j->code == code &&
		    j->firstlineno == firstlineno)
			break;
	if (!j) {
		/*
		 * No room (its cap, or every worker busy): asked again after the
		 * next batch, the sample kept meanwhile, as for a file that has
		 * not answered (its wait is capped there: ingest/defer.c).
		 */
		j = job_start(rt, p, code, firstlineno);
		if (!j && errno != ENOMEM)
			return -EAGAIN;
		if (!j)
			return passing_miss(out, -ENOMEM);
		if (!rt->o.pool)
			return job_done(rt, j, 0, index, out);
	}
	if (!offload__wait(rt->o.pool, &j->job, 0)) {
		job_unlink(rt, j);
		return job_done(rt, j, 0, index, out);
	}
	if (clock_ns(CLOCK_MONOTONIC) - j->started_ns < rt->o.deadline_ns)
		return -EAGAIN;
	/* Past the deadline: a miss kept, the job given up (dropped when it ends). */
	job_unlink(rt, j);
	offload__abandon(rt->o.pool, &j->job);
	if (pycache__add(rt->cache, pid, pstart, code, firstlineno, NULL, -ETIME))
		return passing_miss(out, -ENOMEM);
	return pycache__lookup(rt->cache, pid, pstart, code, firstlineno, index, out) ?
	       passing_miss(out, -ENOMEM) : 0;
}
