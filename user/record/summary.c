// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* summary: the recorder's closing words, by part (record/summary.h). */
#include "base/util.h"
#include "record/summary.h"

/* Files that did not answer in time: the frames that paid for it, and how the pool fared. */
void record__log_no_answer(struct offload *pool)
{
	struct offload_stats st;

	offload__stats(pool, &st);
	/*
	 * A file that answered late is a slow one (a loaded machine, a VM):
	 * its frames were named once it did, so only -v says so.  One still
	 * unanswered at the end, or jobs refused, cost names for good.
	 */
	if (st.busy || st.refused)
		pr_warn("bpfsym: %llu file opens or reads still unanswered at the end (a hung file "
			"system?) and %llu found every worker busy: their frames say 'file did not "
			"answer'\n", (unsigned long long)st.busy, (unsigned long long)st.refused);
	pr_debug("bpfsym: file jobs: %llu run, %llu timed out (%llu cut by the wait budget), "
		 "%llu refused, %llu given up (%llu ended later), %llu workers\n",
		 (unsigned long long)st.jobs, (unsigned long long)st.timeouts,
		 (unsigned long long)st.over_budget, (unsigned long long)st.refused,
		 (unsigned long long)st.abandoned, (unsigned long long)st.late,
		 (unsigned long long)st.threads);
}

void record__log_offcpu(const uint64_t *stats, const struct ingest_stats *ist)
{
	const uint64_t *o = ist->offcpu;
	uint64_t lost = stats[BPFSYM_STAT_OFF_LOST] + o[RPT_OC_LOST];

	if (!stats[BPFSYM_STAT_OFF_SWITCHES])
		return;
	if (lost)
		pr_warn("bpfsym: off-CPU: %llu intervals (%.3f s) lost: their stacks did not reach the "
			"recorder (ring buffer or map full)\n", (unsigned long long)lost,
			(double)(stats[BPFSYM_STAT_OFF_LOST_NS] + o[RPT_OC_LOST_NS]) / 1e9);
	pr_debug("bpfsym: off-CPU: %llu switch-outs taken (%llu user sides kept from the last), "
		 "%llu stacks sent; %llu intervals summed "
		 "(%.3f s), %llu under the minimum (%.3f s), %llu threads not followed (map full), "
		 "%llu CPU samples dropped in an off-CPU walk; %llu records written (%.3f s)\n",
		 (unsigned long long)stats[BPFSYM_STAT_OFF_SWITCHES],
		 (unsigned long long)stats[BPFSYM_STAT_OFF_REUSED],
		 (unsigned long long)stats[BPFSYM_STAT_OFF_STACKS],
		 (unsigned long long)stats[BPFSYM_STAT_OFF_SUMMED],
		 (double)stats[BPFSYM_STAT_OFF_SUMMED_NS] / 1e9,
		 (unsigned long long)stats[BPFSYM_STAT_OFF_SHORT],
		 (double)stats[BPFSYM_STAT_OFF_SHORT_NS] / 1e9,
		 (unsigned long long)stats[BPFSYM_STAT_OFF_UNTRACKED],
		 (unsigned long long)stats[BPFSYM_STAT_OFF_BUSY],
		 (unsigned long long)o[RPT_OC_RECORDS], (double)o[RPT_OC_NS] / 1e9);
	/* Taken by the unwinder: how many ended short.  Checked (BPFSYM_KORC_CHECK): the comparison. */
	if (!stats[BPFSYM_STAT_KORC_SAME] && !stats[BPFSYM_STAT_KORC_DIFF]) {
		if (stats[BPFSYM_STAT_KORC_NO_TABLE] + stats[BPFSYM_STAT_KORC_STOPPED])
			pr_debug("bpfsym: kernel unwinder: %llu kernel stacks ended short (%llu at a frame in no "
				 "table: a module loaded after the start, a BPF program)\n",
				 (unsigned long long)(stats[BPFSYM_STAT_KORC_NO_TABLE] +
						      stats[BPFSYM_STAT_KORC_STOPPED]),
				 (unsigned long long)stats[BPFSYM_STAT_KORC_NO_TABLE]);
	} else {
		pr_info("bpfsym: kernel unwinder check: %llu the same as the kernel's (%llu through a module), "
			"%llu not; not compared: %llu met a frame in no table, %llu stopped short\n",
			(unsigned long long)stats[BPFSYM_STAT_KORC_SAME],
			(unsigned long long)stats[BPFSYM_STAT_KORC_SAME_MOD],
			(unsigned long long)stats[BPFSYM_STAT_KORC_DIFF],
			(unsigned long long)stats[BPFSYM_STAT_KORC_NO_TABLE],
			(unsigned long long)stats[BPFSYM_STAT_KORC_STOPPED]);
	}
}
