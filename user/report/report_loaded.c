// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_loaded: a report in memory, as the reader (report_read.c) or the
 * merge (report_merge.c) built it: its getters and its free.  Apart from
 * both, so that the reader can merge a file with itself (report__dedupe)
 * without the two depending on each other.
 */
#include <stdlib.h>

#include "report/report_int.h"

void report__free(struct report *r)
{
	struct chunk *ch, *next;

	if (!r)
		return;
	for (ch = r->chunks; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(r->source);
	free(r->strs);
	free(r->mods);
	free(r->frames);
	free(r->stack_data);
	free(r->stacks);
	free(r->samples);
	free(r->offcpu);
	rpt_cgtab__free(&r->cgroups);
	free(r);
}

size_t report__mem(const struct report *r)
{
	return r->mem;
}

size_t report__mem_max(const struct report *r)
{
	return r->mem_max;
}

uint64_t report__file_bytes(const struct report *r)
{
	return r->file_bytes;
}

const struct rpt_header *report__header(const struct report *r)
{
	return &r->hdr;
}

size_t report__nr_samples(const struct report *r)
{
	return r->nr_samples;
}

const struct rpt_sample *report__sample(const struct report *r, size_t i)
{
	return i < r->nr_samples ? &r->samples[i] : NULL;
}

size_t report__nr_offcpu(const struct report *r)
{
	return r->nr_offcpu;
}

const struct rpt_offcpu *report__offcpu(const struct report *r, size_t i)
{
	return i < r->nr_offcpu ? &r->offcpu[i] : NULL;
}

size_t report__nr_modules(const struct report *r)
{
	return r->nr_mods;
}

const struct rpt_module *report__module(const struct report *r, uint32_t id)
{
	return id < r->nr_mods ? &r->mods[id] : NULL;
}

size_t report__nr_frames(const struct report *r)
{
	return r->nr_frames;
}

const struct rpt_frame *report__frame(const struct report *r, uint32_t id)
{
	return id < r->nr_frames ? &r->frames[id] : NULL;
}

const uint32_t *report__stack(const struct report *r, uint32_t id, uint32_t *nr)
{
	static const uint32_t empty[1];

	if (id >= r->nr_stacks)
		return NULL;
	*nr = r->stacks[id].nr;
	/* An empty stack is valid: give it a pointer that is not the NULL of "out of range". */
	return r->stack_data ? r->stack_data + r->stacks[id].off : empty;
}

const char *report__source(const struct report *r)
{
	return r->source;
}
