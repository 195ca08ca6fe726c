// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyattach: processes running a CPython, found at mapping time (pyattach.h).
 * A process is looked at once per image: a look is a job that finds its
 * interpreter (pyproc__find_interp); its answer is kept per process, so a
 * process mapping many python-named files (extension modules live under
 * lib/python3.X/, not named so; the interpreter and libpython are) costs
 * one look.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/offload.h"
#include "base/util.h"
#include "runtime/python/pyattach.h"
#include "runtime/python/pyproc.h"
#include "runtime/python/pyrt.h"

#define DEFAULT_JOBS		32
#define DEFAULT_DEADLINE_NS	5000000000ull
/* Processes kept: past it, new ones are not looked at (counted as given up). */
#define MAX_PROCS		65536
/* Processes waiting for a look (a burst of interpreters starting): past it, given up. */
#define MAX_QUEUED		4096

enum att_state {
	ATT_QUEUED = 0,		/* waits for room among the looks in flight */
	ATT_LOOKING = 1,	/* a job is on it */
	ATT_FOUND = 2,		/* runs an interpreter: l, bias */
	ATT_NONE = 3,		/* looked at: none we walk */
};

struct att_proc {
	uint32_t pid, state;
	uint64_t pstart;
	uint64_t bias;
	struct py_layout l;
};

struct proc_key {
	uint32_t pid;
	uint64_t pstart;
};

/* One look: its inputs, then its answer, filled on a worker. */
struct att_job {
	struct offload_job job;
	uint32_t pid;
	uint64_t pstart, started_ns;
	int err;
	enum py_miss why;
	struct py_layout l;
	uint64_t bias;
};

struct pyattach {
	struct pyattach_opts o;
	struct htab procs;		/* hash(pid, pstart) -> struct att_proc * */
	struct att_job **jobs;		/* in flight, o.max_jobs of room */
	size_t nr_jobs;
	struct proc_key *queue;		/* ATT_QUEUED processes, oldest first, MAX_QUEUED of room */
	size_t q_head, nr_queued;
	struct pyattach_stats st;
};

static uint64_t proc_hash(uint32_t pid, uint64_t pstart)
{
	return hash_u64(hash_u64(2, pid), pstart);
}

static bool proc_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct proc_key *k = key;
	const struct att_proc *p = (const struct att_proc *)(uintptr_t)val;

	(void)ctx;
	return p->pid == k->pid && p->pstart == k->pstart;
}

static struct att_proc *find_proc(const struct pyattach *a, uint32_t pid, uint64_t pstart)
{
	struct proc_key k = { pid, pstart };

	return (struct att_proc *)(uintptr_t)htab__find(&a->procs, proc_hash(pid, pstart), proc_eq, NULL, &k);
}

static struct att_proc *add_proc(struct pyattach *a, uint32_t pid, uint64_t pstart)
{
	struct att_proc *p;

	if (htab__nr(&a->procs) >= MAX_PROCS || htab__reserve(&a->procs, 1))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->pstart = pstart;
	htab__add(&a->procs, proc_hash(pid, pstart), (uintptr_t)p);
	return p;
}

static void del_proc(struct pyattach *a, struct att_proc *p)
{
	htab__del(&a->procs, proc_hash(p->pid, p->pstart), (uintptr_t)p);
	free(p);
}

struct pyattach *pyattach__new(const struct pyattach_opts *o)
{
	struct pyattach *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->o = *o;
	if (!a->o.deadline_ns)
		a->o.deadline_ns = DEFAULT_DEADLINE_NS;
	if (!a->o.max_jobs)
		a->o.max_jobs = DEFAULT_JOBS;
	a->jobs = calloc(a->o.max_jobs, sizeof(*a->jobs));
	a->queue = calloc(MAX_QUEUED, sizeof(*a->queue));
	if (!a->jobs || !a->queue) {
		free(a->jobs);
		free(a->queue);
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

void pyattach__free(struct pyattach *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nr_jobs; i++) {
		if (a->o.pool)
			offload__abandon(a->o.pool, &a->jobs[i]->job);
		else
			free(a->jobs[i]);
	}
	for (i = 0; a->procs.slots && i <= a->procs.mask; i++)
		free((void *)(uintptr_t)a->procs.slots[i].val);
	htab__free(&a->procs);
	free(a->jobs);
	free(a->queue);
	free(a);
}

bool pyattach__looks_like(const char *path)
{
	return path && pyproc__interp_name(path, strlen(path));
}

/* The look, on a worker: the process is still the one, and its interpreter. */
static void job_run(struct offload_job *oj)
{
	struct att_job *j = (struct att_job *)oj;
	char path[PATH_MAX];
	struct pyproc pp;

	j->why = PY_MISS_NONE;
	/* Held open while looking: a pid reused meanwhile is not this process. */
	j->err = pyproc__open(&pp, j->pid, j->pstart);
	if (j->err)
		return;
	j->err = pyproc__find_interp(j->pid, &j->l, &j->bias, path, sizeof(path), &j->why);
	pyproc__close(&pp);
}

static void job_drop(struct offload_job *oj)
{
	free(oj);
}

/* Tell BPF and the names that @p runs its interpreter (or, with @p->state NONE, none). */
static void publish(struct pyattach *a, const struct att_proc *p)
{
	struct bpfsym_py_proc e;
	int err = 0;

	if (p->state == ATT_FOUND) {
		if (pyattach__entry(&p->l, p->bias, &e)) {
			a->st.put_errors++;
			return;
		}
		if (a->o.rt && pyrt__set_interp(a->o.rt, p->pid, p->pstart, &p->l, p->bias))
			a->st.put_errors++;
		if (a->o.put)
			err = a->o.put(a->o.ctx, p->pid, &e);
	} else if (a->o.put) {
		err = a->o.put(a->o.ctx, p->pid, NULL);
	}
	if (err)
		a->st.put_errors++;
}

/* Take ended job @j's answer into its process, if it is still kept. */
static void job_take(struct pyattach *a, struct att_job *j)
{
	struct att_proc *p = find_proc(a, j->pid, j->pstart);

	if (!p || p->state != ATT_LOOKING)
		return;
	if (!j->err) {
		p->state = ATT_FOUND;
		p->l = j->l;
		p->bias = j->bias;
		a->st.found++;
		pr_debug("python: pid %u runs CPython %u.%u\n", p->pid, j->l.version >> 24,
			 (j->l.version >> 16) & 0xff);
		publish(a, p);
		return;
	}
	p->state = ATT_NONE;
	a->st.missed[j->err == -ENOENT && j->why < PY_MISS__NR ? j->why : PY_MISS_NONE]++;
}

/* Start a look at @p: 0, or -EBUSY (no room in flight, or no worker now). */
static int look_start(struct pyattach *a, struct att_proc *p)
{
	struct att_job *j;

	if (a->nr_jobs == a->o.max_jobs)
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -EBUSY;
	j->job.run = job_run;
	j->job.drop = job_drop;
	j->pid = p->pid;
	j->pstart = p->pstart;
	j->started_ns = clock_ns(CLOCK_MONOTONIC);
	p->state = ATT_LOOKING;
	a->st.looked++;
	if (!a->o.pool) {
		job_run(&j->job);
		job_take(a, j);
		free(j);
		return 0;
	}
	if (offload__submit(a->o.pool, &j->job)) {
		free(j);
		p->state = ATT_QUEUED;
		a->st.looked--;
		return -EBUSY;
	}
	a->jobs[a->nr_jobs++] = j;
	return 0;
}

void pyattach__mapped(struct pyattach *a, const struct proc *pr, const struct mapping *m)
{
	uint32_t pid = proc__pid(pr);
	uint64_t pstart = proc__pstart(pr);
	struct att_proc *p;

	if (!(m->prot & PROT_EXEC) || !pyattach__looks_like(m->path))
		return;
	if (find_proc(a, pid, pstart))
		return;		/* looked at, being, or waiting */
	p = add_proc(a, pid, pstart);
	if (!p) {
		a->st.given_up++;
		return;
	}
	if (!look_start(a, p))
		return;
	if (a->nr_queued == MAX_QUEUED) {
		del_proc(a, p);
		a->st.given_up++;
		return;
	}
	a->queue[(a->q_head + a->nr_queued++) % MAX_QUEUED] = (struct proc_key){ pid, pstart };
}

/* Start the queued looks there is room for now, oldest first. */
static void queue_run(struct pyattach *a)
{
	struct proc_key k;
	struct att_proc *p;

	while (a->nr_queued) {
		k = a->queue[a->q_head];
		p = find_proc(a, k.pid, k.pstart);
		if (p && p->state == ATT_QUEUED && look_start(a, p))
			return;		/* no room: it stays first */
		a->q_head = (a->q_head + 1) % MAX_QUEUED;
		a->nr_queued--;
	}
}

void pyattach__forked(struct pyattach *a, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart)
{
	struct att_proc *pp = find_proc(a, ppid, ppstart), *p;

	if (!pp || pp->state != ATT_FOUND || find_proc(a, pid, pstart))
		return;
	p = add_proc(a, pid, pstart);
	if (!p) {
		a->st.given_up++;
		return;
	}
	p->state = ATT_FOUND;
	p->l = pp->l;
	p->bias = pp->bias;
	a->st.forked++;
	publish(a, p);
}

void pyattach__gone(struct pyattach *a, uint32_t pid, uint64_t pstart)
{
	struct att_proc *p = find_proc(a, pid, pstart);

	if (!p)
		return;
	/* A look still running finds no process when it ends (job_take). */
	if (p->state == ATT_FOUND && a->o.put && a->o.put(a->o.ctx, pid, NULL))
		a->st.put_errors++;
	del_proc(a, p);
}

/* Take the looks that ended, waiting for each up to what is left of @wait_ns from @t0. */
static void take_ended(struct pyattach *a, uint64_t t0, uint64_t wait_ns)
{
	struct att_proc *p;
	struct att_job *j;
	uint64_t now;
	size_t i = 0;
	int err;

	while (i < a->nr_jobs) {
		j = a->jobs[i];
		now = clock_ns(CLOCK_MONOTONIC);
		err = offload__wait(a->o.pool, &j->job, now - t0 < wait_ns ? wait_ns - (now - t0) : 0);
		if (err == -ETIMEDOUT && now - j->started_ns < a->o.deadline_ns) {
			i++;
			continue;
		}
		a->jobs[i] = a->jobs[--a->nr_jobs];
		if (err) {
			p = find_proc(a, j->pid, j->pstart);
			offload__abandon(a->o.pool, &j->job);
			if (p && p->state == ATT_LOOKING)
				p->state = ATT_NONE;
			a->st.given_up++;
			continue;
		}
		job_take(a, j);
		free(j);
	}
}

void pyattach__poll(struct pyattach *a, uint64_t wait_ns)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	do {
		take_ended(a, t0, wait_ns);
		queue_run(a);
	} while (wait_ns && a->nr_jobs && clock_ns(CLOCK_MONOTONIC) - t0 < wait_ns);
}

/* Whether the walker's reads of @l's frame and code fields stay within what it reads. */
static bool fits(const struct py_layout *l)
{
	bool owner = l->fr_is_entry == PY_OFF_NONE;

	return l->fr_code + 8 <= BPFSYM_PY_READ && l->fr_previous + 8 <= BPFSYM_PY_READ &&
	       l->fr_instr + 8 <= BPFSYM_PY_READ &&
	       (owner ? l->fr_owner : l->fr_is_entry) < BPFSYM_PY_READ &&
	       l->co_firstlineno + 4 <= BPFSYM_PY_READ && l->ob_type + 8 <= BPFSYM_PY_READ &&
	       (!owner || l->owner_cstack != PY_OFF_NONE);
}

int pyattach__entry(const struct py_layout *l, uint64_t bias, struct bpfsym_py_proc *e)
{
	bool cframe = l->ts_cframe != PY_OFF_NONE;
	bool owner = l->fr_is_entry == PY_OFF_NONE;

	memset(e, 0, sizeof(*e));
	e->runtime = l->runtime + bias;
	e->eval_start = l->eval_start + bias;
	e->eval_end = l->eval_start + l->eval_size + bias;
	e->code_type = l->code_type + bias;
	e->flags = (cframe ? BPFSYM_PY_CFRAME : 0) | (owner ? BPFSYM_PY_OWNER : 0);
	e->interp_head = l->rt_interp_head;
	e->threads_head = l->interp_threads_head;
	e->ts_next = l->ts_next;
	e->ts_thread_id = l->ts_thread_id;
	e->ts_frame = cframe ? l->ts_cframe : l->ts_frame;
	e->cframe_frame = cframe ? l->cframe_frame : 0;
	e->fr_code = l->fr_code;
	e->fr_previous = l->fr_previous;
	e->fr_instr = l->fr_instr;
	e->fr_entry = owner ? l->fr_owner : l->fr_is_entry;
	e->co_code = l->co_code_adaptive;
	e->co_firstlineno = l->co_firstlineno;
	e->ob_type = l->ob_type;
	e->owner_cstack = owner ? l->owner_cstack : 0;
	return fits(l) ? 0 : -ERANGE;
}

void pyattach__stats(const struct pyattach *a, struct pyattach_stats *st)
{
	*st = a->st;
}
