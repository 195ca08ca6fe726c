// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pull endpoint's windows (agent/agent.c) without root or BPF: the
 * ingest fixture's recording, ticked by hand as record.c's loop ticks it,
 * and real HTTP clients on loopback.  A window holds exactly the samples
 * fed while it was open (counted in the pprof itself, unpacked with
 * protobuf-c), with its duration; a client gone early frees its window;
 * the recording's end cuts an open window short and serves it, and later
 * requests get 503.  The budget of bytes in flight: a window past it is
 * cut, and while its pprof is still held (until its connection closes) a
 * new request is 503.  /debug/pprof/offcpu: 404 without --off-cpu; with
 * it, the off-CPU profile's sample types and default.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <zlib.h>

#include "test.h"
#include "ingest_fixture.h"
#include "agent/agent.h"
#include "profile.pb-c.h"

TEST_SUITE("agent");

#define PID (FAKE_PID + 30)

static uint16_t port;

/* A client on its own thread: one request, the whole answer. */
struct client {
	pthread_t th;
	char req[256];
	char *resp;
	size_t len;
	int fd;
	bool hang_up_early;	/* close 300 ms after sending */
	bool joined;
};

static void tick(struct agent *ag, struct rec *r, bool final);

static void *client_run(void *arg)
{
	struct client *c = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	size_t cap = 1 << 20;
	ssize_t n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->resp = calloc(1, cap);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!c->resp || c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(c->fd, c->req, strlen(c->req)) < 0)
		return NULL;
	if (c->hang_up_early) {
		usleep(300000);
		close(c->fd);
		c->fd = -1;
		return NULL;
	}
	while (c->len + 1 < cap && (n = read(c->fd, c->resp + c->len, cap - 1 - c->len)) > 0)
		c->len += (size_t)n;
	return NULL;
}

static bool client_start(struct client *c, const char *path, bool early)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->hang_up_early = early;
	snprintf(c->req, sizeof(c->req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", path, port);
	return ASSERT_OK(pthread_create(&c->th, NULL, client_run, c), "client thread");
}

/* Wait for @c's thread, ticking @ag every 20 ms (when given) as the recorder would; false after 10 s. */
static bool client_wait(struct client *c, struct agent *ag, struct rec *r)
{
	int i;

	for (i = 0; !c->joined && i < 1000; i++) {
		if (!pthread_tryjoin_np(c->th, NULL)) {
			c->joined = true;
			break;
		}
		if (ag)
			tick(ag, r, false);
		usleep(10000);
	}
	return ASSERT_TRUE(c->joined, "the client is done within 10 s");
}

static void client_end(struct client *c)
{
	if (!c->joined)
		pthread_join(c->th, NULL);
	c->joined = true;
	if (c->fd >= 0)
		close(c->fd);
	free(c->resp);
}

static void no_bpf_stats(const struct record_tick *t, uint64_t *out)
{
	memset(out, 0, sizeof(*out) * BPFSYM_STAT_MAX);
}

static void tick(struct agent *ag, struct rec *r, bool final)
{
	struct record_tick t = {
		.ing = r->in, .hdr = &r->hdr, .procs = r->pt, .mev = r->mev, .sym = r->sym, .w = r->w,
		.final = final, .read_bpf_stats = no_bpf_stats,
	};
	const struct record_hook *h = agent__hook(ag);

	h->tick(h->ctx, &t);
}

/* A sample of PID: k_one, then ing_alpha <- ing_beta (the fixture's feed_chain has ing_gamma too). */
static int feed_pair(struct rec *r)
{
	const uint64_t ips[] = { K_ONE, BASE + func_value[ALPHA] + 4, BASE + func_value[BETA] + 5 };

	return feed_sample(r, PID, START_NS + 100, ips, 1, 2);
}

/* Tick until /metrics says @want windows are being recorded (one tick a try: none while asking). */
static bool windows_become(struct agent *ag, struct rec *r, int want)
{
	char line[64];
	int i;

	snprintf(line, sizeof(line), "\nbpfsym_profile_windows %d\n", want);
	for (i = 0; i < 100; i++) {
		struct client m;
		bool ok;

		tick(ag, r, false);
		if (!client_start(&m, "/metrics", false))
			return false;
		client_wait(&m, NULL, r);
		ok = m.resp && strstr(m.resp, line);
		client_end(&m);
		if (ok)
			return true;
	}
	return ASSERT_TRUE(false, line + 1);
}

/* The gzipped pprof after the head of @c's answer (free_unpacked by the caller), or NULL (a failure). */
static Perftools__Profiles__Profile *unpack_profile(const struct client *c)
{
	const char *body = c->resp ? strstr(c->resp, "\r\n\r\n") : NULL;
	Perftools__Profiles__Profile *p;
	uLongf cap = 1 << 22;
	unsigned char *out;
	z_stream z = { 0 };
	int zr;

	if (!ASSERT_OK_PTR(body, "an answer") ||
	    !ASSERT_TRUE(!strncmp(c->resp, "HTTP/1.1 200 ", 13), c->resp) ||
	    !ASSERT_TRUE(strstr(c->resp, "Content-Type: application/octet-stream\r\n") != NULL, "content type"))
		return NULL;
	body += 4;
	out = malloc(cap);
	if (!out || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		ASSERT_TRUE(false, "zlib");
		return NULL;
	}
	z.next_in = (unsigned char *)body;
	z.avail_in = (uInt)(c->len - (size_t)(body - c->resp));
	z.next_out = out;
	z.avail_out = (uInt)cap;
	zr = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (!ASSERT_EQ(zr, Z_STREAM_END, "a whole gzip stream")) {
		free(out);
		return NULL;
	}
	p = perftools__profiles__profile__unpack(NULL, z.total_out, out);
	free(out);
	ASSERT_OK_PTR(p, "a profile.proto");
	return p;
}

/* The gzipped pprof after the head of @c's answer: sample count and duration. */
static bool unpack(const struct client *c, uint64_t *count, int64_t *dur_ns)
{
	Perftools__Profiles__Profile *p = unpack_profile(c);
	size_t i;

	if (!p)
		return false;
	*count = 0;
	for (i = 0; i < p->n_sample; i++)
		*count += p->sample[i]->n_value ? (uint64_t)p->sample[i]->value[0] : 0;
	*dur_ns = p->duration_nanos;
	perftools__profiles__profile__free_unpacked(p, NULL);
	return true;
}

static struct agent *start_agent(uint64_t inflight_max)
{
	struct agent_opts o = { .inflight_max = inflight_max };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	struct agent *ag;
	char spec[32];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* A free port: the kernel's pick, given back just before the agent binds it. */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &alen)) {
		test__skip("no loopback TCP socket");
		return NULL;
	}
	port = ntohs(a.sin_port);
	close(fd);
	snprintf(spec, sizeof(spec), "%u", port);
	o.listen = spec;
	ag = agent__listen(&o);
	if (!ASSERT_OK_PTR(ag, "agent__listen") || !ASSERT_OK(agent__start(ag), "agent__start")) {
		agent__free(ag);
		return NULL;
	}
	return ag;
}

/*
 * Samples fed before the window and after it are not in it; the ones fed
 * while it is open all are; its duration is the seconds asked.
 */
static void test_window(void)
{
	struct agent *ag = start_agent(0);
	struct client c;
	uint64_t count = 0;
	int64_t dur = 0;
	struct rec r;
	int i;

	if (!ag || !rec_open(&r, "window", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	for (i = 0; i < 3; i++)
		ASSERT_OK(feed_pair(&r), "before the window");
	tick(ag, &r, false);
	if (!client_start(&c, "/debug/pprof/profile?seconds=1", false))
		goto out;
	if (windows_become(ag, &r, 1)) {
		for (i = 0; i < 5; i++)
			ASSERT_OK(feed_pair(&r), "in the window");
		client_wait(&c, ag, &r);
		for (i = 0; i < 4; i++)
			ASSERT_OK(feed_pair(&r), "after the window");
		if (unpack(&c, &count, &dur)) {
			ASSERT_EQ(count, (uint64_t)5, "the window's samples, only");
			ASSERT_TRUE(dur >= 1000000000 && dur < 1500000000, "duration: the seconds asked");
		}
	}
	client_end(&c);
	rec_close(&r);
out:
	agent__free(ag);
}

/* A client gone early: its window closes at the next tick, not when its seconds are over. */
static void test_gone_early(void)
{
	struct agent *ag = start_agent(0);
	struct client c;
	struct rec r;

	if (!ag || !rec_open(&r, "gone", false))
		goto out;
	if (client_start(&c, "/debug/pprof/profile?seconds=60", true)) {
		if (windows_become(ag, &r, 1) && client_wait(&c, NULL, &r))
			windows_become(ag, &r, 0);
		client_end(&c);
	}
	rec_close(&r);
out:
	agent__free(ag);
}

/* The recording ends: an open window is cut there and served; later requests get 503. */
static void test_final_cut(void)
{
	struct agent *ag = start_agent(0);
	struct client c, late;
	uint64_t count = 0;
	int64_t dur = 0;
	struct rec r;
	int i;

	if (!ag || !rec_open(&r, "final", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	if (!client_start(&c, "/debug/pprof/profile?seconds=60", false))
		goto close;
	if (windows_become(ag, &r, 1)) {
		for (i = 0; i < 2; i++)
			ASSERT_OK(feed_pair(&r), "in the window");
		tick(ag, &r, true);
		if (client_wait(&c, NULL, &r) && unpack(&c, &count, &dur)) {
			ASSERT_EQ(count, (uint64_t)2, "the samples until the end");
			ASSERT_TRUE(dur < 10000000000ll, "cut short");
		}
		if (client_start(&late, "/debug/pprof/profile?seconds=1", false)) {
			client_wait(&late, NULL, &r);
			ASSERT_TRUE(late.resp && !strncmp(late.resp, "HTTP/1.1 503 ", 13), "after the end: 503");
			client_end(&late);
		}
	}
	client_end(&c);
close:
	rec_close(&r);
out:
	agent__free(ag);
}

/*
 * A budget of one byte: the window closes at the first tick that sees its
 * recording, well before its 30 s; while its client holds the answer's
 * connection open, the pprof is in flight and a second request is 503;
 * once it closes, the next is taken.
 */
static void test_budget(void)
{
	struct agent *ag = start_agent(1);
	struct client c, second, third;
	uint64_t count = 0;
	int64_t dur = 0;
	struct rec r;
	int i;

	if (!ag || !rec_open(&r, "budget", false))
		goto out;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	if (!client_start(&c, "/debug/pprof/profile?seconds=30", false))
		goto close;
	if (windows_become(ag, &r, 1)) {
		for (i = 0; i < 2; i++)
			ASSERT_OK(feed_pair(&r), "in the window");
		if (client_wait(&c, ag, &r) && unpack(&c, &count, &dur)) {
			ASSERT_EQ(count, (uint64_t)2, "the samples until the cut");
			ASSERT_TRUE(dur < 5000000000ll, "cut at the budget, not after 30 s");
		}
		/* c read to the end but keeps its socket: the server lingers, the pprof is in flight. */
		if (client_start(&second, "/debug/pprof/profile?seconds=1", false)) {
			client_wait(&second, NULL, &r);
			ASSERT_TRUE(second.resp && !strncmp(second.resp, "HTTP/1.1 503 ", 13) &&
				    strstr(second.resp, "bytes in flight"), second.resp ? second.resp : "no answer");
			client_end(&second);
		}
	}
	client_end(&c);
	/* Closed: the server sees it at once (or at its 2 s linger), and the bytes are let go. */
	for (i = 0; i < 30; i++) {
		bool ok;

		usleep(100000);
		if (!client_start(&third, "/debug/pprof/profile?seconds=1", false))
			break;
		client_wait(&third, ag, &r);
		ok = third.resp && !strncmp(third.resp, "HTTP/1.1 200 ", 13);
		client_end(&third);
		if (ok)
			break;
	}
	ASSERT_TRUE(i < 30, "taken again once the answer's connection closed");
close:
	rec_close(&r);
out:
	agent__free(ag);
}

/* The name of @p's string @i. */
static const char *pstr(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "?";
}

/* /debug/pprof/offcpu of a recording without --off-cpu: 404, saying how to get one; the index lists it. */
static void test_offcpu_none(void)
{
	struct agent *ag = start_agent(0);
	struct client c;
	struct rec r;

	if (!ag || !rec_open(&r, "offnone", false))
		goto out;
	if (client_start(&c, "/debug/pprof/offcpu?seconds=1", false)) {
		client_wait(&c, ag, &r);
		ASSERT_TRUE(c.resp && !strncmp(c.resp, "HTTP/1.1 404 ", 13) &&
			    strstr(c.resp, "record with --off-cpu"), c.resp ? c.resp : "no answer");
		client_end(&c);
	}
	if (client_start(&c, "/", false)) {
		client_wait(&c, NULL, &r);
		ASSERT_TRUE(c.resp && strstr(c.resp, "\n/debug/pprof/offcpu?seconds=N "), "on the index");
		client_end(&c);
	}
	rec_close(&r);
out:
	agent__free(ag);
}

/*
 * A recording with --off-cpu: /debug/pprof/offcpu is a pprof of three
 * sample types, off_cpu the default, holding the window's off-CPU time
 * only (none here: the recorder's OFFCPU records are the lead's ingest's;
 * its CPU samples are not in it); /debug/pprof/profile the same types,
 * cpu the default, the CPU samples in it.
 */
static void test_offcpu_window(void)
{
	struct agent *ag = start_agent(0);
	const char *const paths[] = { "/debug/pprof/offcpu?seconds=1", "/debug/pprof/profile?seconds=1" };
	struct client c;
	struct rec r;
	int i, k;

	if (!ag || !rec_open(&r, "offwin", false))
		goto out;
	r.hdr.off_cpu = 1;
	r.hdr.off_cpu_states = RPT_OS_ALL;
	task_ev(&r, BPFSYM_EV_FORK, PID, 1, 1);
	map_lib(&r, PID, our_mnt_ns, 2);
	for (k = 0; k < 2; k++) {
		Perftools__Profiles__Profile *p;
		uint64_t samples = 0;
		size_t j;

		if (!client_start(&c, paths[k], false))
			break;
		if (windows_become(ag, &r, 1)) {
			for (i = 0; i < 3; i++)
				ASSERT_OK(feed_pair(&r), "in the window");
			client_wait(&c, ag, &r);
			p = unpack_profile(&c);
			if (p && ASSERT_EQ(p->n_sample_type, (size_t)3, "samples, cpu, off_cpu")) {
				ASSERT_STREQ(pstr(p, p->sample_type[2]->type), "off_cpu", "the third type");
				ASSERT_STREQ(pstr(p, p->default_sample_type), k ? "cpu" : "off_cpu", "the default");
				for (j = 0; j < p->n_sample; j++)
					samples += (uint64_t)p->sample[j]->value[0];
				ASSERT_EQ(samples, k ? (uint64_t)3 : 0, "CPU samples: in the CPU profile only");
			}
			if (p)
				perftools__profiles__profile__free_unpacked(p, NULL);
		}
		client_end(&c);
		windows_become(ag, &r, 0);
	}
	rec_close(&r);
out:
	agent__free(ag);
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_window);
	RUN_TEST(test_gone_early);
	RUN_TEST(test_final_cut);
	RUN_TEST(test_budget);
	RUN_TEST(test_offcpu_none);
	RUN_TEST(test_offcpu_window);
	cleanup();
	return TEST_EXIT();
}
