// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* offcpu: off-CPU sums from BPF to ingest (record/offcpu.h). */
#include "record/offcpu.h"

struct read_ctx {
	struct ingest *in;
	uint64_t now;
};

static int on_sum(void *ctx, const struct bpfsym_offcpu_key *k, const struct bpfsym_offcpu_sum *v)
{
	struct read_ctx *c = ctx;

	return ingest__offcpu(c->in, k->key, k->kkey, v->ns, v->count, c->now);
}

int offcpu__read(struct probes *p, struct ingest *in, uint64_t now, bool final)
{
	struct read_ctx c = { .in = in, .now = now };
	uint64_t keys[256];
	size_t n;
	int err;

	err = probes__offcpu_drain(p, final, on_sum, &c);
	while ((n = ingest__offcpu_forgotten(in, keys, sizeof(keys) / sizeof(keys[0]))))
		probes__offcpu_forget(p, keys, n);
	return err;
}

void offcpu__fill_end(const uint64_t *stats, struct rpt_header *h)
{
	/* ingest__fill_header gave ingest's; BPF's losses add to its own. */
	h->offcpu[RPT_OC_SHORT] = stats[BPFSYM_STAT_OFF_SHORT];
	h->offcpu[RPT_OC_SHORT_NS] = stats[BPFSYM_STAT_OFF_SHORT_NS];
	h->offcpu[RPT_OC_LOST] += stats[BPFSYM_STAT_OFF_LOST];
	h->offcpu[RPT_OC_LOST_NS] += stats[BPFSYM_STAT_OFF_LOST_NS];
}
