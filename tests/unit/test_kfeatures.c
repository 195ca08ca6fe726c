// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel features' words (record/kfeatures.c): BPFSYM_FORCE_FALLBACK's
 * names, and the header's description of what was found and chosen.  The
 * probing itself needs root and a kernel: test_kernel_features.sh.
 */
#include <errno.h>
#include <string.h>

#include "test.h"
#include "record/kfeatures.h"
#include "report/report.h"

TEST_SUITE("kfeatures");

static void test_parse_forced(void)
{
	unsigned int bits = 99;

	ASSERT_EQ(kfeatures__parse_forced(NULL, &bits), 0, "unset");
	ASSERT_EQ(bits, 0u, "unset: nothing forced");
	ASSERT_EQ(kfeatures__parse_forced("", &bits), 0, "empty");
	ASSERT_EQ(bits, 0u, "empty: nothing forced");
	ASSERT_EQ(kfeatures__parse_forced("task_work", &bits), 0, "one");
	ASSERT_EQ(bits, (unsigned int)KF_TASK_WORK, "task_work");
	ASSERT_EQ(kfeatures__parse_forced("vma_iter,task_work", &bits), 0, "two");
	ASSERT_EQ(bits, (unsigned int)(KF_TASK_WORK | KF_VMA_ITER), "both");
	ASSERT_EQ(kfeatures__parse_forced("all", &bits), 0, "all");
	ASSERT_EQ(bits, (unsigned int)(KF_TASK_WORK | KF_VMA_ITER | KF_KORC), "all: every one");
	ASSERT_EQ(kfeatures__parse_forced("korc", &bits), 0, "the kernel unwinder");
	ASSERT_EQ(bits, (unsigned int)KF_KORC, "korc");
	ASSERT_EQ(kfeatures__parse_forced("task_work,", &bits), 0, "a trailing comma");
	ASSERT_EQ(bits, (unsigned int)KF_TASK_WORK, "a trailing comma: task_work");
	ASSERT_EQ(kfeatures__parse_forced("task", &bits), -EINVAL, "a prefix is not a name");
	ASSERT_EQ(kfeatures__parse_forced("task_workx", &bits), -EINVAL, "nor a longer word");
	ASSERT_EQ(kfeatures__parse_forced("all,bogus", &bits), -EINVAL, "one unknown name fails all");
}

static void test_describe(void)
{
	struct kfeatures kf = { .have = KF_TASK_WORK | KF_VMA_ITER };
	char buf[128];

	kfeatures__describe(&kf, true, buf, sizeof(buf));
	ASSERT_STREQ(buf, "task work yes, VMA iterator yes -> mappings from each process's first sample",
		     "6.18, -a");
	kfeatures__describe(&kf, false, buf, sizeof(buf));
	ASSERT_STREQ(buf, "task work yes, VMA iterator yes -> mappings followed from exec", "6.18, -p");
	ASSERT_TRUE(kfeatures__first_sample(&kf), "both: first samples");
	kf = (struct kfeatures){ .have = KF_VMA_ITER };
	kfeatures__describe(&kf, true, buf, sizeof(buf));
	ASSERT_STREQ(buf, "task work no, VMA iterator yes -> mappings from each process's first sample, "
		     "kept from exec", "6.8, -a");
	kfeatures__describe(&kf, false, buf, sizeof(buf));
	ASSERT_STREQ(buf, "task work no, VMA iterator yes -> mappings followed from exec", "6.8, -p");
	ASSERT_FALSE(kfeatures__first_sample(&kf), "no task work: from exec");
	kf = (struct kfeatures){ .forced = KF_TASK_WORK | KF_VMA_ITER };
	kfeatures__describe(&kf, true, buf, sizeof(buf));
	ASSERT_STREQ(buf, "task work no (forced), VMA iterator no (forced) "
		     "-> mappings from each process's first sample, kept from exec", "forced, -a");
	/* The recording's header holds it whole. */
	ASSERT_TRUE(strlen(buf) < sizeof(((struct rpt_header *)0)->kfeatures), "fits the header");
	/* A short buffer is cut, never overrun. */
	kfeatures__describe(&kf, true, buf, 10);
	ASSERT_STREQ(buf, "task work", "cut at 9 bytes");
}

int main(void)
{
	RUN_TEST(test_parse_forced);
	RUN_TEST(test_describe);
	return TEST_EXIT();
}
