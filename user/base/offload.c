// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * offload: a job per worker, handed over directly (no queue: a job behind
 * a stuck one would wait for ever), one mutex for the pool's state and
 * one condition the waiters share.  See offload.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/offload.h"
#include "base/util.h"

#define NSEC_PER_SEC	1000000000ull

enum job_state {
	J_IDLE = 0,	/* the caller's: not started, or done and taken back */
	J_RUNNING,	/* on a worker, the caller may wait for it */
	J_DONE,		/* run() returned, the caller has not looked yet */
	J_ABANDONED,	/* on a worker, to be dropped when run() returns */
};

struct offload_worker {
	struct offload *p;
	pthread_t thread;
	pthread_cond_t wake;		/* a job was handed over, or the pool stops */
	struct offload_job *job;	/* the one being run; NULL: idle */
	struct offload_worker *next_idle;
	struct offload_worker *next;	/* in offload.all */
	bool detached;			/* busy when the pool was freed: frees itself */
};

struct offload {
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a job ended (CLOCK_MONOTONIC) */
	struct offload_worker *idle, *all;
	unsigned int max_threads;
	void (*thread_start)(void);
	uint64_t budget_ns, window_start, window_used;
	bool stopping;
	unsigned int refs;		/* the owner, and each detached worker */
	struct offload_stats st;
};

static void pool_destroy(struct offload *p)
{
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->done);
	free(p);
}

/* Unlink @w from @p->all.  Under the lock. */
static void unlink_worker(struct offload *p, struct offload_worker *w)
{
	struct offload_worker **pp;

	for (pp = &p->all; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	p->st.threads--;
}

static void *worker_main(void *arg)
{
	struct offload_worker *w = arg;
	struct offload *p = w->p;
	struct offload_job *j;
	bool last;

	if (p->thread_start)
		p->thread_start();
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!w->job && !p->stopping)
			pthread_cond_wait(&w->wake, &p->lock);
		j = w->job;
		if (!j)
			break;
		pthread_mutex_unlock(&p->lock);
		j->run(j);
		pthread_mutex_lock(&p->lock);
		if (j->state == J_ABANDONED) {
			p->st.late++;
			pthread_mutex_unlock(&p->lock);
			j->drop(j);
			pthread_mutex_lock(&p->lock);
		} else {
			j->state = J_DONE;
		}
		w->job = NULL;
		p->st.busy--;
		pthread_cond_broadcast(&p->done);
		if (p->stopping)
			break;
		w->next_idle = p->idle;
		p->idle = w;
	}
	if (!w->detached) {
		pthread_mutex_unlock(&p->lock);
		return NULL;	/* offload__free() joins and frees it */
	}
	unlink_worker(p, w);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	pthread_cond_destroy(&w->wake);
	free(w);
	if (last)
		pool_destroy(p);
	return NULL;
}

/* A new worker, idle, or NULL with *@err.  Under the lock. */
static struct offload_worker *worker_new(struct offload *p, int *err)
{
	struct offload_worker *w = calloc(1, sizeof(*w));

	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	w->p = p;
	pthread_cond_init(&w->wake, NULL);
	/* Born with every signal blocked: SIGINT and SIGTERM go to the caller's thread. */
	*err = thread_start(&w->thread, worker_main, w);
	if (*err) {
		pthread_cond_destroy(&w->wake);
		free(w);
		return NULL;
	}
	w->next = p->all;
	p->all = w;
	p->st.threads++;
	return w;
}

struct offload *offload__new(const struct offload_opts *o)
{
	static const struct offload_opts defaults;
	pthread_condattr_t ca;
	struct offload *p;

	if (!o)
		o = &defaults;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->max_threads = o->max_threads ? o->max_threads : OFFLOAD_DEFAULT_THREADS;
	p->budget_ns = o->budget_ns ? o->budget_ns : OFFLOAD_DEFAULT_BUDGET_NS;
	p->thread_start = o->thread_start;
	p->refs = 1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->done, &ca);
	pthread_condattr_destroy(&ca);
	return p;
}

void offload__free(struct offload *p)
{
	struct offload_worker *w, *next, *join = NULL;
	bool last;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	for (w = p->all; w; w = next) {
		next = w->next;
		if (w->job) {
			/* Stuck, maybe for ever: it frees itself, and the last one @p. */
			w->detached = true;
			p->refs++;
			pthread_detach(w->thread);
			continue;
		}
		unlink_worker(p, w);
		w->next = join;
		join = w;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&p->lock);
	for (w = join; w; w = next) {
		next = w->next;
		pthread_join(w->thread, NULL);
		pthread_cond_destroy(&w->wake);
		free(w);
	}
	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		pool_destroy(p);
}

int offload__submit(struct offload *p, struct offload_job *j)
{
	struct offload_worker *w;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	w = p->idle;
	if (w) {
		p->idle = w->next_idle;
	} else if (p->st.threads < p->max_threads) {
		w = worker_new(p, &err);
	} else {
		p->st.refused++;
		err = -EAGAIN;
	}
	if (w) {
		j->state = J_RUNNING;
		j->w = w;
		w->job = j;
		p->st.jobs++;
		p->st.busy++;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

/*
 * How long a wait of @want may take now, within the budget but never less
 * than OFFLOAD_MIN_WAIT_NS: a wait that only looked would leave a file that
 * answers in a few ms unnamed, and in a recording a frame's first name
 * stays (the writer's dedupe).  What stuck jobs can add past the budget is
 * bounded by the workers.  *@cut when less than @want.  Under the lock.
 */
static uint64_t budgeted(struct offload *p, uint64_t now, uint64_t want, bool *cut)
{
	uint64_t left;

	if (now - p->window_start >= NSEC_PER_SEC) {
		p->window_start = now;
		p->window_used = 0;
	}
	left = p->budget_ns > p->window_used ? p->budget_ns - p->window_used : 0;
	if (left < OFFLOAD_MIN_WAIT_NS)
		left = OFFLOAD_MIN_WAIT_NS;
	*cut = want > left;
	return *cut ? left : want;
}

static int job_wait(struct offload *p, struct offload_job *j, uint64_t timeout_ns, bool budget)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), t, end;
	struct timespec ts;
	bool cut = false;

	pthread_mutex_lock(&p->lock);
	t = timeout_ns && budget ? budgeted(p, start, timeout_ns, &cut) : timeout_ns;
	end = start + t;
	ts.tv_sec = (time_t)(end / NSEC_PER_SEC);
	ts.tv_nsec = (long)(end % NSEC_PER_SEC);
	while (j->state == J_RUNNING && t) {
		if (pthread_cond_timedwait(&p->done, &p->lock, &ts) == ETIMEDOUT)
			break;
	}
	if (j->state == J_DONE) {
		j->state = J_IDLE;
		j->w = NULL;
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	/* A look (timeout 0) is no wait: only a wait in vain costs the budget. */
	if (timeout_ns) {
		if (budget)
			p->window_used += clock_ns(CLOCK_MONOTONIC) - start;
		p->st.timeouts++;
		p->st.over_budget += cut;
	}
	pthread_mutex_unlock(&p->lock);
	return -ETIMEDOUT;
}

int offload__wait(struct offload *p, struct offload_job *j, uint64_t timeout_ns)
{
	return job_wait(p, j, timeout_ns, true);
}

int offload__wait_long(struct offload *p, struct offload_job *j, uint64_t timeout_ns)
{
	return job_wait(p, j, timeout_ns, false);
}

bool offload__stalled(struct offload *p, const struct offload_job *j, struct offload_watch *w,
		      uint64_t now_ns, uint64_t stall_ns)
{
	struct timespec ts = {};
	clockid_t cid;
	uint64_t cpu;
	bool running;

	pthread_mutex_lock(&p->lock);
	/* A running job's worker cannot end under the lock: its thread id is good. */
	running = j->state == J_RUNNING && j->w;
	if (running && (pthread_getcpuclockid(j->w->thread, &cid) || clock_gettime(cid, &ts)))
		running = false;
	pthread_mutex_unlock(&p->lock);
	if (!running)
		return false;
	cpu = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	if (!w->moved_ns || cpu != w->cpu_ns) {
		w->cpu_ns = cpu;
		w->moved_ns = now_ns;
		return false;
	}
	return now_ns - w->moved_ns >= stall_ns;
}

void offload__abandon(struct offload *p, struct offload_job *j)
{
	pthread_mutex_lock(&p->lock);
	if (j->state == J_DONE) {
		j->state = J_IDLE;
		pthread_mutex_unlock(&p->lock);
		j->drop(j);
		return;
	}
	j->state = J_ABANDONED;
	p->st.abandoned++;
	pthread_mutex_unlock(&p->lock);
}

int offload__run(struct offload *p, struct offload_job *j, uint64_t timeout_ns)
{
	int err;

	if (!p) {
		j->run(j);
		return 0;
	}
	err = offload__submit(p, j);
	return err ? err : offload__wait(p, j, timeout_ns);
}

void offload__stats(struct offload *p, struct offload_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}
