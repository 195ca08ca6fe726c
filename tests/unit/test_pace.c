// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pace: the reader's sleep.  A sampling period clamped to [20, 100] ms
 * while mappings the fresh views miss keep coming (for 200 ms after the
 * last), 100 ms otherwise, and always 100 ms without the unwinder.
 */
#include "test.h"
#include "record/pace.h"

TEST_SUITE("pace");

#define MS 1000000ull

static void test_pace_period(void)
{
	static const struct { uint32_t freq; int ms; } cases[] = {
		{ 19, 52 }, { 49, 20 }, { 10, 100 }, { 1, 100 }, { 999, PACE_BUSY_MIN_MS },
		{ 0, PACE_QUIET_MS },
	};
	struct pace p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pace__init(&p, cases[i].freq, true);
		ASSERT_EQ(p.busy_ms, cases[i].ms, "the busy sleep: a period, clamped");
	}
}

static void test_pace_busy_window(void)
{
	uint64_t t = 1000 * MS;
	struct pace p;

	pace__init(&p, 19, true);
	ASSERT_EQ(pace__timeout_ms(&p, t, 0), PACE_QUIET_MS, "nothing wanted yet: quiet");
	ASSERT_EQ(pace__timeout_ms(&p, t + 10 * MS, 3), 52, "views wanted: a period");
	ASSERT_EQ(pace__timeout_ms(&p, t + 150 * MS, 3), 52, "within 200 ms of the last change");
	ASSERT_EQ(pace__timeout_ms(&p, t + 10 * MS + PACE_BUSY_NS, 3), PACE_QUIET_MS,
		  "200 ms without a change: quiet again");
	ASSERT_EQ(pace__timeout_ms(&p, t + 500 * MS, 4), 52, "a new one: busy again");

	pace__init(&p, 19, false);
	ASSERT_EQ(pace__timeout_ms(&p, t, 1), PACE_QUIET_MS, "without the unwinder: always quiet");
	ASSERT_EQ(pace__timeout_ms(&p, t + MS, 2), PACE_QUIET_MS, "without the unwinder: always quiet");
}

int main(void)
{
	RUN_TEST(test_pace_period);
	RUN_TEST(test_pace_busy_window);
	return TEST_EXIT();
}
