// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ingest's off-CPU side (issue 28): a stack record kept, named, under its
 * key; each sum written as an OFFCPU record with that stack to the file
 * (and again, whole, to the next file of a rotation); a sum under a key
 * not kept counted lost; the stacks kept bounded, the keys let go handed
 * back for BPF's seen set; malformed stack records skipped; a kernel stack
 * taken at the switch-in (its own record, its own key) written above the
 * switch-out's user stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "ingest_fixture.h"

TEST_SUITE("ingest_offcpu");

#define PID (FAKE_PID + 40)

/*
 * An off-CPU stack record of @pid under @key in @state, its user walk
 * ended for @uend: k_one, then ing_alpha <- ing_beta.
 */
static int feed_offstack_end(struct rec *r, uint32_t pid, uint64_t key, uint32_t state, uint64_t ts,
			     uint32_t uend)
{
	const uint64_t ips[] = { K_ONE + 1, BASE + func_value[ALPHA] + 3, BASE + func_value[BETA] + 5 };
	struct bpfsym_sample s;
	size_t len = sample(&s, pid, ts, ips, 1, 2);

	s.hdr.type = BPFSYM_EV_OFFCPU_STACK;
	s.aux = key;
	s.flags = state << BPFSYM_SF_STATE_SHIFT | uend << BPFSYM_SF_UEND_SHIFT;
	return feed(r, &s, len);
}

static int feed_offstack(struct rec *r, uint32_t pid, uint64_t key, uint32_t state, uint64_t ts)
{
	return feed_offstack_end(r, pid, key, state, ts, BPFSYM_UEND_ROOT);
}

/* The names of OFFCPU record @i's stack, leaf first, joined by ';' into @buf. */
static const char *off_names(const struct report *rpt, size_t i, char *buf, size_t len)
{
	const struct rpt_offcpu *o = report__offcpu(rpt, i);
	const uint32_t *ids;
	uint32_t nr = 0;
	size_t n = 0;

	buf[0] = '\0';
	if (!o || !(ids = report__stack(rpt, o->stack, &nr)))
		return buf;
	for (uint32_t j = 0; j < nr && n < len; j++) {
		const struct rpt_frame *f = report__frame(rpt, ids[j]);

		n += (size_t)snprintf(buf + n, len - n, "%s%s", j ? ";" : "", f && f->sym ? f->sym : "?");
	}
	return buf;
}

static void test_sums_written(void)
{
	const struct rpt_offcpu *o;
	char names[256];
	struct rec r;

	if (!rec_open(&r, "off_sums", false))
		goto out;
	task_ev(&r, BPFSYM_EV_EXEC, PID, 0, 10);
	map_lib(&r, PID, our_mnt_ns, 20);
	ASSERT_OK(feed_offstack(&r, PID, 0x1234, BPFSYM_OS_DISK, START_NS + 100), "stack record");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, 0, 7000000, 3, START_NS + 9000), "a sum");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, 0, 5000, 1, START_NS + 19000), "another sum");
	ASSERT_OK(ingest__offcpu(r.in, 0x9999, 0, 123, 2, START_NS + 19000), "a key never sent");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, 0, 0, 0, START_NS + 19000), "an empty sum: nothing");
	/* A stack whose user walk stopped at a file without its table: written, and counted as cut. */
	ASSERT_OK(feed_offstack_end(&r, PID, 0x5678, BPFSYM_OS_SLEEP, START_NS + 200, BPFSYM_UEND_NO_TABLE),
		  "a stack cut short");
	ASSERT_OK(ingest__offcpu(r.in, 0x5678, 0, 3000, 2, START_NS + 19000), "its sum");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_CUT], (uint64_t)2, "intervals under a cut stack");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_CUT_NS], (uint64_t)3000, "and their ns");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_RECORDS], (uint64_t)3, "records written");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_NS], (uint64_t)7008000, "their ns");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST], (uint64_t)2, "the unknown key's intervals, lost");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST_NS], (uint64_t)123, "and their ns");
	ASSERT_EQ(ingest__stats(r.in)->samples, (uint64_t)0, "a stack record is no CPU sample");
	if (!rec_finish(&r))
		goto out;
	if (!ASSERT_EQ(report__nr_offcpu(r.rpt), (size_t)3, "OFFCPU records read back"))
		goto out;
	o = report__offcpu(r.rpt, 0);
	ASSERT_EQ(o->ns, (uint64_t)7000000, "ns");
	ASSERT_EQ(o->count, (uint64_t)3, "count");
	ASSERT_EQ(o->state, (uint32_t)RPT_OS_DISK, "state");
	ASSERT_EQ(o->pid, PID, "pid");
	ASSERT_EQ(o->tid, PID + 1, "tid");
	ASSERT_EQ(o->cgroup, (uint64_t)77, "cgroup");
	ASSERT_EQ(o->time, (uint64_t)9000, "time: when it was read, from the file's start");
	ASSERT_STREQ(o->comm, "ingest-test-comm", "comm");
	/* A caller is looked up at ip - 1, as a sample's; the kernel leaf at its address. */
	ASSERT_STREQ(off_names(r.rpt, 0, names, sizeof(names)), "k_one;ing_alpha;ing_beta", "the stack, named");
	ASSERT_EQ(report__offcpu(r.rpt, 1)->stack, o->stack, "one stack for both sums");
	ASSERT_EQ(report__header(r.rpt)->offcpu[RPT_OC_RECORDS], (uint64_t)3, "END: records");
	ASSERT_EQ(report__header(r.rpt)->offcpu[RPT_OC_CUT_NS], (uint64_t)3000, "END: ns under cut stacks");
out:
	rec_close(&r);
}

/*
 * The kernel side apart (bpf/korc.bpf.h): the switch-out's record has the
 * user frames only, the switch-in's the kernel frames only under a tagged
 * key; a sum names both, and the stack written is the kernel's frames
 * above the user's.  A sum whose kernel key was not kept is lost, as is
 * one naming a kernel key where the whole stack's goes.
 */
static void test_kernel_apart(void)
{
	const uint64_t uips[] = { BASE + func_value[ALPHA] + 3, BASE + func_value[BETA] + 5 };
	const uint64_t kips[] = { K_TWO + 1, K_ONE + 7 };
	const uint64_t kkey = BPFSYM_OFFCPU_KTAG | 0x77;
	struct bpfsym_sample s;
	char names[256];
	struct rec r;
	size_t len;

	if (!rec_open(&r, "off_kapart", false))
		goto out;
	task_ev(&r, BPFSYM_EV_EXEC, PID, 0, 10);
	map_lib(&r, PID, our_mnt_ns, 20);
	len = sample(&s, PID, START_NS + 100, uips, 0, 2);
	s.hdr.type = BPFSYM_EV_OFFCPU_STACK;
	s.aux = 0x1234;
	s.flags = BPFSYM_OS_SLEEP << BPFSYM_SF_STATE_SHIFT | BPFSYM_UEND_ROOT << BPFSYM_SF_UEND_SHIFT;
	ASSERT_OK(feed(&r, &s, len), "the switch-out's user side");
	len = sample(&s, PID, START_NS + 150, kips, 2, 0);
	s.hdr.type = BPFSYM_EV_OFFCPU_STACK;
	s.aux = kkey;
	ASSERT_OK(feed(&r, &s, len), "the switch-in's kernel side");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, kkey, 4000, 2, START_NS + 9000), "a sum under both");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, 0, 1000, 1, START_NS + 9000), "the user side alone");
	ASSERT_OK(ingest__offcpu(r.in, 0x1234, BPFSYM_OFFCPU_KTAG | 0x99, 300, 3, START_NS + 9000),
		  "a kernel side never sent");
	ASSERT_OK(ingest__offcpu(r.in, kkey, 0, 50, 5, START_NS + 9000), "a kernel side as the whole");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_RECORDS], (uint64_t)2, "records written");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST], (uint64_t)8, "the two without their stacks, lost");
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST_NS], (uint64_t)350, "and their ns");
	if (!rec_finish(&r))
		goto out;
	if (!ASSERT_EQ(report__nr_offcpu(r.rpt), (size_t)2, "OFFCPU records read back"))
		goto out;
	ASSERT_EQ(report__offcpu(r.rpt, 0)->ns, (uint64_t)4000, "ns");
	ASSERT_EQ(report__offcpu(r.rpt, 0)->state, (uint32_t)RPT_OS_SLEEP, "the switch-out's state");
	ASSERT_EQ(report__offcpu(r.rpt, 0)->tid, PID + 1, "the switch-out's thread");
	ASSERT_STREQ(off_names(r.rpt, 0, names, sizeof(names)), "k_two;k_one;ing_alpha;ing_beta",
		     "the kernel's frames above the user's");
	ASSERT_STREQ(off_names(r.rpt, 1, names, sizeof(names)), "ing_alpha;ing_beta", "the user side alone");
out:
	rec_close(&r);
}

/* A rotation: the next file gets the kept stack again, whole, with its own ids. */
static void test_rotation(void)
{
	char path[PATH_MAX + 64], err[256], names[256];
	struct report_writer *w2;
	struct report *rpt2 = NULL;
	struct rec r;

	if (!rec_open(&r, "off_rot1", false))
		goto out;
	task_ev(&r, BPFSYM_EV_EXEC, PID, 0, 10);
	map_lib(&r, PID, our_mnt_ns, 20);
	ASSERT_OK(feed_offstack(&r, PID, 77, BPFSYM_OS_SLEEP, START_NS + 100), "stack record");
	ASSERT_OK(ingest__offcpu(r.in, 77, 0, 1000, 1, START_NS + 200), "a sum to the first file");
	snprintf(path, sizeof(path), "%s/off_rot2.data", dir);
	w2 = report_writer__open(path, &r.hdr);
	if (!ASSERT_OK_PTR(w2, "second file"))
		goto out;
	ingest__set_writer(r.in, w2);
	ASSERT_OK(report_writer__close(r.w, &r.hdr), "close the first");
	r.w = w2;
	ASSERT_OK(ingest__offcpu(r.in, 77, 0, 2000, 1, START_NS + 300), "a sum to the second file");
	ASSERT_OK(report_writer__close(w2, &r.hdr), "close the second");
	r.w = NULL;
	rpt2 = report__open(path, err, sizeof(err));
	if (!ASSERT_OK_PTR(rpt2, "the second file reads on its own") ||
	    !ASSERT_EQ(report__nr_offcpu(rpt2), (size_t)1, "its one record"))
		goto out;
	ASSERT_EQ(report__offcpu(rpt2, 0)->ns, (uint64_t)2000, "its ns");
	ASSERT_STREQ(off_names(rpt2, 0, names, sizeof(names)), "k_one;ing_alpha;ing_beta", "its stack, whole");
out:
	report__free(rpt2);
	rec_close(&r);
}

/* Past the bound, the stacks summed least lately go and their keys come back for BPF. */
static void test_bounded(void)
{
	uint64_t keys[2048], k, lost0;
	size_t n, i;
	bool old_back = true, new_kept = true;
	struct rec r;

	if (!rec_open(&r, "off_bound", false))
		goto out;
	task_ev(&r, BPFSYM_EV_EXEC, PID, 0, 10);
	map_lib(&r, PID, our_mnt_ns, 20);
	for (k = 1; k <= 8192; k++)
		feed_offstack(&r, PID, k, BPFSYM_OS_SLEEP, START_NS + 100);
	/* The newer half summed lately: the older half is what goes. */
	for (k = 4097; k <= 8192; k++)
		ingest__offcpu(r.in, k, 0, 10, 1, START_NS + 200);
	ASSERT_EQ(ingest__offcpu_forgotten(r.in, keys, 2048), (size_t)0, "at the bound: none let go yet");
	ASSERT_OK(feed_offstack(&r, PID, 9000, BPFSYM_OS_SLEEP, START_NS + 300), "one more");
	n = ingest__offcpu_forgotten(r.in, keys, 2048);
	ASSERT_TRUE(n >= 1 && n <= 1024, "an eighth or so let go");
	for (i = 0; i < n; i++)
		old_back &= keys[i] >= 1 && keys[i] <= 4096;
	ASSERT_TRUE(old_back, "only keys not summed lately");
	ASSERT_EQ(ingest__offcpu_forgotten(r.in, keys, 2048), (size_t)0, "each handed back once");
	lost0 = ingest__stats(r.in)->offcpu[RPT_OC_LOST];
	ingest__offcpu(r.in, keys[0], 0, 10, 1, START_NS + 400);
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST], lost0 + 1, "a sum under a key let go: lost");
	for (k = 4097; k <= 8192; k++) {
		uint64_t before = ingest__stats(r.in)->offcpu[RPT_OC_RECORDS];

		ingest__offcpu(r.in, k, 0, 10, 1, START_NS + 500);
		new_kept &= ingest__stats(r.in)->offcpu[RPT_OC_RECORDS] == before + 1;
	}
	ASSERT_TRUE(new_kept, "the keys summed lately are all kept");
	ASSERT_OK(ingest__offcpu(r.in, 9000, 0, 10, 1, START_NS + 600), "the newest");
out:
	rec_close(&r);
}

static void test_malformed(void)
{
	struct bpfsym_sample s;
	const uint64_t ips[] = { K_ONE };
	size_t len;
	struct rec r;

	if (!rec_open(&r, "off_bad", false))
		goto out;
	len = sample(&s, PID, START_NS, ips, 1, 0);
	s.hdr.type = BPFSYM_EV_OFFCPU_STACK;
	s.aux = 0;
	ASSERT_OK(feed(&r, &s, len), "key 0");
	s.aux = 5;
	s.nr_user = BPFSYM_MAX_FRAMES + 1;
	ASSERT_OK(feed(&r, &s, len), "too many frames");
	s.nr_user = 0;
	ASSERT_OK(feed(&r, &s, BPFSYM_SAMPLE_HDR_SIZE - 8), "cut before its counts");
	ASSERT_EQ(ingest__stats(r.in)->bad, (uint64_t)3, "each skipped, counted");
	ingest__offcpu(r.in, 5, 0, 10, 1, START_NS);
	ASSERT_EQ(ingest__stats(r.in)->offcpu[RPT_OC_LOST], (uint64_t)1, "none kept");
out:
	rec_close(&r);
}

int main(void)
{
	setup_or_report();
	RUN_TEST(test_sums_written);
	RUN_TEST(test_kernel_apart);
	RUN_TEST(test_rotation);
	RUN_TEST(test_bounded);
	RUN_TEST(test_malformed);
	cleanup();
	return TEST_EXIT();
}
