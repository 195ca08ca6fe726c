// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * agent: what the endpoint's URLs mean, and the windows that carry a
 * profile request across the two threads.
 *
 * A window's life: the server thread queues it (W_QUEUED) and parks the
 * connection; the recorder thread, at its next tick (<= 100 ms), opens a
 * report writer on a memfd and adds it as an ingest tap (W_ACTIVE), and
 * once the seconds are over removes it, closes it with an END record
 * (W_DONE) and signals the worker thread, which reads the memfd as a
 * report, writes the pprof into another memfd (W_MADE) and wakes the
 * server, which sends it (W_SENT: its bytes count until the connection
 * closes, a slow reader's too).  A client gone early cancels its window
 * (W_CANCELLED: the recorder drops the tap).  Only the table of windows
 * and the metrics snapshot are shared, under one mutex held for copies and
 * state changes only.  Profiles in flight are bounded in bytes, all
 * windows together (AGENT_INFLIGHT_MAX_BYTES): past the budget, open
 * windows are cut at the next tick and new requests are 503.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/httpd.h"
#include "agent/metrics.h"
#include "base/privdrop.h"
#include "base/util.h"
#include "ingest/ingest.h"
#include "model/procmap.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"
#include "view/format/report_pprof.h"
#include "view/view_opts.h"

#define NSEC_PER_SEC		1000000000ull
#define DEFAULT_SECONDS		30	/* Go's */
#define BPF_STATS_EVERY_NS	NSEC_PER_SEC	/* a syscall per counter: not every tick */

/*
 * QUEUED (server) -> ACTIVE (recorder: a tap) -> DONE (recorder: closed)
 * -> MAKING (worker: the pprof) -> MADE (worker) -> SENT (server: handed
 * to the connection, its bytes still counted) -> FREE (server: the
 * connection closed).  CANCELLED: the client left while ACTIVE; the
 * recorder drops the tap.
 */
enum win_state { W_FREE = 0, W_QUEUED, W_ACTIVE, W_DONE, W_MAKING, W_MADE, W_SENT, W_CANCELLED };

struct window {
	enum win_state st;
	uint32_t seconds;
	bool offcpu;			/* /debug/pprof/offcpu: off-CPU time, not CPU samples (issue 28) */
	struct httpd_conn *conn;	/* the server's; the recorder never touches it */
	uint64_t end_ns;		/* CLOCK_MONOTONIC */
	int memfd;
	struct report_writer *w;	/* W_ACTIVE: the tap */
	struct rpt_header h;		/* the window's header: the recording's, its own start */
	uint64_t bpf0[BPFSYM_STAT_MAX];	/* the counters when it opened */
	int err;			/* W_DONE: 0, or why there is no profile */
	int out;			/* W_MADE: the pprof's memfd, or -errno */
	size_t out_len;
	uint64_t bytes;			/* what it holds: its recording so far, then its pprof */
};

struct agent {
	struct httpd *httpd;
	struct record_hook hook;
	uint64_t inflight_max;
	pthread_mutex_t mu;
	/* Under mu. */
	struct window win[AGENT_MAX_WINDOWS];
	struct agent_metrics m;
	bool over;			/* the recording has ended */
	bool worker_stop;
	pthread_cond_t work;		/* a window is W_DONE, or worker_stop */
	pthread_t worker;
	bool worker_started;
	/* The recorder thread's own. */
	uint64_t last_bpf_ns;
	uint64_t bpf[BPFSYM_STAT_MAX];
};

/* ---- the recorder thread: windows as ingest taps ---- */

/* Open window @w as a tap on a fresh memfd.  0 or -errno. */
static int window__open(struct window *w, const struct record_tick *t, const uint64_t *bpf)
{
	char path[64];
	int err;

	w->memfd = memfd_create("bpfsym-window", MFD_CLOEXEC);
	if (w->memfd < 0)
		return -errno;
	w->h = *t->hdr;
	/*
	 * The recording's off-CPU counters so far are not the window's: its
	 * END counts the BPF side's short and lost intervals from its own
	 * open (window__close); the writer counts its OFFCPU records.
	 */
	memset(w->h.offcpu, 0, sizeof(w->h.offcpu));
	/* pprof's time_nanos; sample times stay relative to the recording's start_mono_ns. */
	w->h.start_wall_ns = clock_ns(CLOCK_REALTIME);
	memcpy(w->bpf0, bpf, sizeof(w->bpf0));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", w->memfd);
	w->w = report_writer__open(path, &w->h);
	if (!w->w)
		return -errno;
	err = ingest__add_writer(t->ing, w->w);
	if (err) {
		report_writer__abort(w->w);
		w->w = NULL;
		return err;
	}
	w->end_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)w->seconds * NSEC_PER_SEC;
	return 0;
}

/* Remove @w's tap and close it with the window's END.  0 or -errno. */
static int window__close(struct window *w, const struct record_tick *t, const uint64_t *bpf)
{
	struct rpt_header *h = &w->h;
	int err = ingest__remove_writer(t->ing, w->w), cerr;

	h->end_wall_ns = clock_ns(CLOCK_REALTIME);
	h->lost_samples = bpf[BPFSYM_STAT_LOST_SAMPLES] - w->bpf0[BPFSYM_STAT_LOST_SAMPLES];
	h->lost_events = bpf[BPFSYM_STAT_LOST_TASK_EVENTS] - w->bpf0[BPFSYM_STAT_LOST_TASK_EVENTS];
	h->idle = bpf[BPFSYM_STAT_IDLE] - w->bpf0[BPFSYM_STAT_IDLE];
	/* The BPF side's off-CPU losses in the window (records and ns are the writer's own). */
	h->offcpu[RPT_OC_SHORT] = bpf[BPFSYM_STAT_OFF_SHORT] - w->bpf0[BPFSYM_STAT_OFF_SHORT];
	h->offcpu[RPT_OC_SHORT_NS] = bpf[BPFSYM_STAT_OFF_SHORT_NS] - w->bpf0[BPFSYM_STAT_OFF_SHORT_NS];
	h->offcpu[RPT_OC_LOST] = bpf[BPFSYM_STAT_OFF_LOST] - w->bpf0[BPFSYM_STAT_OFF_LOST];
	h->offcpu[RPT_OC_LOST_NS] = bpf[BPFSYM_STAT_OFF_LOST_NS] - w->bpf0[BPFSYM_STAT_OFF_LOST_NS];
	cerr = report_writer__close(w->w, h);
	w->w = NULL;
	return err ? err : cerr;
}

/* Back to free: whatever the window holds is dropped. */
static void window__drop(struct window *w, const struct record_tick *t)
{
	if (w->w) {
		if (t)
			ingest__remove_writer(t->ing, w->w);
		report_writer__abort(w->w);
	}
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->st == W_MADE && w->out >= 0)
		close(w->out);
	*w = (struct window){ .memfd = -1, .out = -1 };
}

/* The bytes all windows hold.  Under a->mu. */
static uint64_t inflight(const struct agent *a)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		sum += a->win[i].st != W_FREE ? a->win[i].bytes : 0;
	return sum;
}

/*
 * One window's step at this tick; true when it became W_DONE.  @over:
 * the windows hold the whole budget, so an open one closes now.
 */
static bool window__step(struct agent *a, struct window *w, const struct record_tick *t, uint64_t now, bool over)
{
	switch (w->st) {
	case W_QUEUED:
		t->read_bpf_stats(t, a->bpf);
		/* Whether the recording has off-CPU time is the recorder's header's to say. */
		w->err = t->final ? -ESHUTDOWN : w->offcpu && !t->hdr->off_cpu ? -ENODATA :
			 window__open(w, t, a->bpf);
		w->st = w->err ? W_DONE : W_ACTIVE;
		return w->err != 0;
	case W_ACTIVE:
		if (!t->final && !over && now < w->end_ns && w->bytes < AGENT_WINDOW_MAX_BYTES)
			return false;
		t->read_bpf_stats(t, a->bpf);
		w->err = window__close(w, t, a->bpf);
		w->st = W_DONE;
		a->m.windows_total++;
		return true;
	case W_CANCELLED:
		window__drop(w, t);
		return false;
	default:
		return false;
	}
}

/* The snapshot /metrics serves, copied under the lock. */
static void publish(struct agent *a, const struct record_tick *t)
{
	const struct ingest_stats *is = ingest__stats(t->ing);
	struct agent_metrics *m = &a->m;
	size_t i;

	m->recording = !t->final;
	m->samples = is->symbolized;
	m->samples_written = is->samples;
	m->mev = *mapevents__stats(t->mev);
	m->bad_records = is->bad + m->mev.bad;
	m->model_misses = is->model_misses;
	memcpy(m->bpf, a->bpf, sizeof(m->bpf));
	m->procs_tracked = proc_table__nr_procs(t->procs);
	m->procs_seen = proc_table__nr_seen(t->procs);
	m->procs_sampled = proc_table__nr_sampled(t->procs);
	/* Every file's: a counter must not go back at a switch. */
	m->bytes_written = t->bytes_closed + (t->w ? report_writer__bytes(t->w) : 0);
	m->unwind_bytes = t->unwind_bytes;
	m->sym_images = symbolizer__nr_loaded(t->sym);
	m->sym_bytes = symbolizer__loaded_bytes(t->sym);
	m->index_bytes = report_writer__index_bytes(t->w);
	m->windows_active = 0;
	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		m->windows_active += a->win[i].st == W_ACTIVE;
	m->inflight_bytes = inflight(a);
}

static void agent__tick(void *ctx, const struct record_tick *t)
{
	struct agent *a = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	bool done = false, over;
	size_t i;

	if (t->final || now - a->last_bpf_ns >= BPF_STATS_EVERY_NS) {
		t->read_bpf_stats(t, a->bpf);
		a->last_bpf_ns = now;
	}
	pthread_mutex_lock(&a->mu);
	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		if (a->win[i].st == W_ACTIVE)
			a->win[i].bytes = report_writer__bytes(a->win[i].w);
	over = inflight(a) >= a->inflight_max;
	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		done |= window__step(a, &a->win[i], t, now, over);
	publish(a, t);
	a->over = t->final;
	if (done)
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->mu);
}

/* ---- the server thread: requests, answers ---- */

/*
 * Go's strconv.ParseInt(s, 10, 64): an optional sign, decimal digits,
 * nothing else, no overflow.  0, -EINVAL or -ERANGE.
 */
static int parse_int64(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	if (*s == '+' || *s == '-')
		s++;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (lim - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* Queue a window for @c; false when none is free or the recording is over (answered). */
static bool queue_window(struct agent *a, struct httpd_conn *c, uint32_t seconds, bool offcpu)
{
	const char *why = NULL;
	size_t i;

	pthread_mutex_lock(&a->mu);
	for (i = 0; i < AGENT_MAX_WINDOWS && a->win[i].st != W_FREE; i++)
		;
	if (a->over)
		why = "the recording has ended";
	else if (i == AGENT_MAX_WINDOWS)
		why = "too many profile requests at once";
	else if (inflight(a) >= a->inflight_max)
		why = "too many profile bytes in flight";
	else
		a->win[i] = (struct window){ .st = W_QUEUED, .seconds = seconds, .offcpu = offcpu, .conn = c,
					     .memfd = -1, .out = -1 };
	pthread_mutex_unlock(&a->mu);
	if (why)
		httpd_conn__error(c, 503, "Retry-After: 1\r\n", why);
	return !why;
}

/*
 * GET /debug/pprof/profile?seconds=N, as net/http/pprof's Profile; with
 * @offcpu, /debug/pprof/offcpu?seconds=N, the same for off-CPU time.
 */
static void serve_profile(struct agent *a, struct httpd_conn *c, const struct http_req *req, bool offcpu)
{
	static const char go_err[] = "X-Go-Pprof: 1\r\n";
	const char *s = http_req__param(req, "seconds");
	int64_t sec = DEFAULT_SECONDS;
	char msg[160];

	/* Go takes 30 s for a malformed value; a typo silently profiling 30 s is worse: 400. */
	if (s && s[0] && parse_int64(s, &sec)) {
		snprintf(msg, sizeof(msg), "invalid seconds value: expected a whole number of seconds, got '%.40s'", s);
		httpd_conn__error(c, 400, go_err, msg);
		return;
	}
	if (sec <= 0)
		sec = DEFAULT_SECONDS;
	if (sec >= HTTPD_WRITE_TIMEOUT_S) {
		httpd_conn__error(c, 400, go_err, "profile duration exceeds server's WriteTimeout");
		return;
	}
	if (queue_window(a, c, (uint32_t)sec, offcpu))
		httpd_conn__park(c);
}

static void serve_metrics(struct agent *a, struct httpd_conn *c)
{
	struct agent_metrics m;
	struct metrics_http h;
	char *text;
	size_t len;

	pthread_mutex_lock(&a->mu);
	m = a->m;
	pthread_mutex_unlock(&a->mu);
	httpd__counts(a->httpd, &h.codes, &h.counts, &h.nr);
	h.timeouts = httpd__timeouts(a->httpd);
	h.refused = httpd__refused(a->httpd);
	h.evicted = httpd__evicted(a->httpd);
	if (metrics__format(&m, &h, &text, &len)) {
		httpd_conn__error(c, 500, NULL, "out of memory");
		return;
	}
	httpd_conn__respond(c, 200, "Content-Type: " METRICS_CONTENT_TYPE "\r\n", text, len);
	free(text);
}

static void agent__request(void *ctx, struct httpd_conn *c, const struct http_req *req)
{
	static const char index_text[] =
		"bpfsym pull endpoint\n"
		"/debug/pprof/profile?seconds=N  CPU profile of the next N seconds (default 30), gzipped profile.proto\n"
		"/debug/pprof/offcpu?seconds=N   off-CPU profile of the next N seconds (record --off-cpu), "
		"gzipped profile.proto\n"
		"/metrics                        Prometheus metrics\n";
	struct agent *a = ctx;

	if (!strcmp(req->path, "/debug/pprof/profile"))
		serve_profile(a, c, req, false);
	else if (!strcmp(req->path, "/debug/pprof/offcpu"))
		serve_profile(a, c, req, true);
	else if (!strcmp(req->path, "/metrics"))
		serve_metrics(a, c);
	else if (!strcmp(req->path, "/"))
		httpd_conn__respond(c, 200, "Content-Type: text/plain; charset=utf-8\r\n",
				    index_text, sizeof(index_text) - 1);
	else
		httpd_conn__error(c, 404, NULL, "404 page not found");
}

/*
 * The window's recording (@memfd) as a gzipped pprof in a new memfd (with
 * @offcpu, of its off-CPU time, default sample type off_cpu): its fd, or
 * -errno.
 */
static int make_pprof(int memfd, bool offcpu, size_t *len)
{
	struct view_opts o = { .metric = offcpu ? VIEW_METRIC_OFFCPU : VIEW_METRIC_CPU };
	char path[64], err[256];
	struct report *r;
	off_t end;
	int out, e;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	r = report__open(path, err, sizeof(err));
	if (!r) {
		e = -errno;
		pr_warn("bpfsym: --listen: reading a profile window: %s\n", err);
		return e ? e : -EIO;
	}
	out = memfd_create("bpfsym-pprof", MFD_CLOEXEC);
	if (out < 0) {
		e = -errno;
		report__free(r);
		return e;
	}
	e = report_pprof__write_fd(out, r, offcpu ? &o : NULL);
	report__free(r);
	end = lseek(out, 0, SEEK_CUR);
	if (!e && end < 0)
		e = -errno;
	if (e) {
		close(out);
		return e;
	}
	*len = (size_t)end;
	return out;
}

/* ---- the worker thread: pprofs are made off both other threads ---- */

/*
 * Each W_DONE window's recording into a pprof (W_MADE), then the server
 * is woken to send it: a large profile delays neither sampling nor the
 * other clients.
 */
static void *agent__worker(void *arg)
{
	struct agent *a = arg;
	struct window *w;
	size_t i, len;
	int memfd, out;
	bool offcpu;

	/* It reads our own memfds and writes pprofs: no capability (privdrop.h). */
	privdrop__thread(0, NULL);
	pthread_mutex_lock(&a->mu);
	while (!a->worker_stop) {
		for (i = 0; i < AGENT_MAX_WINDOWS && a->win[i].st != W_DONE; i++)
			;
		if (i == AGENT_MAX_WINDOWS) {
			pthread_cond_wait(&a->work, &a->mu);
			continue;
		}
		w = &a->win[i];
		w->st = W_MAKING;
		memfd = w->memfd;
		w->memfd = -1;
		out = w->err;
		offcpu = w->offcpu;
		pthread_mutex_unlock(&a->mu);
		len = 0;
		if (!out)
			out = make_pprof(memfd, offcpu, &len);
		if (memfd >= 0)
			close(memfd);
		pthread_mutex_lock(&a->mu);
		w->out = out;
		w->out_len = len;
		w->bytes = len;
		w->st = W_MADE;
		httpd__wake(a->httpd);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/*
 * A window is made: its profile (@out, @len bytes), or why there is none
 * (-errno; -ENODATA: off-CPU time asked of a recording without it, 404).
 */
static void answer_window(struct httpd_conn *c, int out, size_t len, bool offcpu)
{
	static const char hdrs[] = "X-Content-Type-Options: nosniff\r\n"
				   "Content-Type: application/octet-stream\r\n"
				   "Content-Disposition: attachment; filename=\"profile\"\r\n";
	char msg[160];

	if (out >= 0) {
		httpd_conn__respond_fd(c, 200, hdrs, out, len);
		return;
	}
	if (out == -ENODATA) {
		httpd_conn__error(c, 404, NULL, "no off-CPU time in this recording: record with --off-cpu");
		return;
	}
	snprintf(msg, sizeof(msg), "Could not make the %s profile: %s", offcpu ? "off-CPU" : "CPU",
		 out == -ESHUTDOWN ? "the recording has ended" : strerror(-out));
	httpd_conn__error(c, out == -ESHUTDOWN ? 503 : 500, "X-Go-Pprof: 1\r\n", msg);
}

static void agent__wake(void *ctx)
{
	struct agent *a = ctx;
	struct window made[AGENT_MAX_WINDOWS];
	size_t i, n = 0;

	pthread_mutex_lock(&a->mu);
	for (i = 0; i < AGENT_MAX_WINDOWS; i++) {
		struct window *w = &a->win[i];

		if (w->st != W_MADE)
			continue;
		if (!w->conn) {
			window__drop(w, NULL);	/* its client left while it was made */
			continue;
		}
		made[n++] = *w;
		/* The pprof is the connection's now, but in flight until it closes (gone()). */
		*w = (struct window){ .st = W_SENT, .conn = w->conn, .memfd = -1, .out = -1,
				      .bytes = w->out >= 0 ? w->out_len : 0 };
	}
	pthread_mutex_unlock(&a->mu);
	for (i = 0; i < n; i++)
		answer_window(made[i].conn, made[i].out, made[i].out_len, made[i].offcpu);
}

static void agent__gone(void *ctx, struct httpd_conn *c)
{
	struct agent *a = ctx;
	size_t i;

	pthread_mutex_lock(&a->mu);
	for (i = 0; i < AGENT_MAX_WINDOWS; i++) {
		struct window *w = &a->win[i];

		if (w->st == W_FREE || w->conn != c)
			continue;
		if (w->st == W_ACTIVE || w->st == W_MAKING) {
			/* The tap is the recorder's to remove; the pprof the worker's to finish. */
			w->st = w->st == W_ACTIVE ? W_CANCELLED : W_MAKING;
			w->conn = NULL;
		} else {
			window__drop(w, NULL);	/* queued, done, made or sent: nobody else holds it */
		}
	}
	pthread_mutex_unlock(&a->mu);
}

/* ---- life ---- */

/* --listen-group: a name (the group database) or a number, resolved once at start.  0 or -errno. */
static int resolve_group(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[4096], *end;
	unsigned long v;
	int e;

	*gid = HTTPD_NO_GROUP;
	if (!name)
		return 0;
	if (name[0] >= '0' && name[0] <= '9') {
		errno = 0;
		v = strtoul(name, &end, 10);
		if (*end || errno || v >= HTTPD_NO_GROUP)
			return -EINVAL;
		*gid = (gid_t)v;
		return 0;
	}
	e = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (!res)
		return e ? -e : -ENOENT;
	*gid = gr.gr_gid;
	return 0;
}

struct agent *agent__listen(const struct agent_opts *o)
{
	struct httpd_ops ops = { .request = agent__request, .wake = agent__wake, .gone = agent__gone };
	struct httpd_listener l;
	struct agent *a;
	char err[256];
	gid_t gid;
	int e;
	size_t i;

	e = resolve_group(o->group, &gid);
	if (e) {
		pr_err("bpfsym: --listen-group '%s': %s\n", o->group, e == -ENOENT ? "no such group" : strerror(-e));
		errno = -e;
		return NULL;
	}
	e = httpd__listen(o->listen, gid, &l, err, sizeof(err));
	if (e) {
		pr_err("bpfsym: --listen '%s': %s\n", o->listen, err);
		errno = -e;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		httpd_listener__close(&l);
		pr_err("bpfsym: --listen: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	a->inflight_max = o->inflight_max ? o->inflight_max : AGENT_INFLIGHT_MAX_BYTES;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->work, NULL);
	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		a->win[i] = (struct window){ .memfd = -1, .out = -1 };
	ops.ctx = a;
	a->httpd = httpd__new(&l, &ops);
	if (!a->httpd) {
		e = errno;
		httpd_listener__close(&l);
		pr_err("bpfsym: --listen '%s': %s\n", o->listen, strerror(e));
		free(a);
		errno = e;
		return NULL;
	}
	a->hook = (struct record_hook){ .tick = agent__tick, .ctx = a };
	return a;
}

int agent__start(struct agent *a)
{
	int err;

	/* Signals are the recorder's (its poll() must be the one Ctrl-C wakes). */
	err = thread_start(&a->worker, agent__worker, a);
	a->worker_started = !err;
	err = err ? err : httpd__start(a->httpd);
	if (err)
		pr_err("bpfsym: --listen: starting the server's threads: %s\n", strerror(-err));
	return err;
}

const struct record_hook *agent__hook(struct agent *a)
{
	return &a->hook;
}

void agent__free(struct agent *a)
{
	size_t i;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->over = true;
	pthread_mutex_unlock(&a->mu);
	httpd__stop(a->httpd);
	if (a->worker_started) {
		pthread_mutex_lock(&a->mu);
		a->worker_stop = true;
		pthread_cond_signal(&a->work);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->worker, NULL);
	}
	httpd__free(a->httpd);
	/* The recorder, the server and the worker are gone: nothing holds a window any more. */
	for (i = 0; i < AGENT_MAX_WINDOWS; i++)
		window__drop(&a->win[i], NULL);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
