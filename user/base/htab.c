// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* htab: the one hash table (htab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/htab.h"

uint64_t hash_secret;

void hash_secret_init(void)
{
	struct timespec ts;
	uint64_t k = 0;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 17);
	}
	/* Through the finalizer: a weak fallback's few bits spread over all 64. */
	hash_secret = hash_fin(k) | 1;
}

#define HTAB_MIN_CAP	64

static void place(struct htab_slot *slots, size_t mask, uint64_t hash, uint64_t val)
{
	size_t i;

	for (i = hash & mask; slots[i].val; i = (i + 1) & mask)
		;
	slots[i].hash = hash;
	slots[i].val = val;
}

int htab__reserve(struct htab *t, size_t more)
{
	size_t cap = t->slots ? t->mask + 1 : 0, ncap, i;
	struct htab_slot *ns;

	if (more > SIZE_MAX / 4 / sizeof(*ns) - t->nr)
		return -ENOMEM;
	if ((t->nr + more) * 2 <= cap)
		return 0;
	ncap = cap ? cap : HTAB_MIN_CAP;
	while ((t->nr + more) * 2 > ncap)
		ncap *= 2;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		if (t->slots[i].val)
			place(ns, ncap - 1, t->slots[i].hash, t->slots[i].val);
	free(t->slots);
	t->slots = ns;
	t->mask = ncap - 1;
	return 0;
}

bool htab__next(const struct htab *t, uint64_t hash, size_t *pos, uint64_t *val)
{
	size_t i;

	if (!t->slots)
		return false;
	for (i = *pos == HTAB_START ? hash & t->mask : *pos; t->slots[i].val; i = (i + 1) & t->mask) {
		if (t->slots[i].hash == hash) {
			*val = t->slots[i].val;
			*pos = (i + 1) & t->mask;
			return true;
		}
	}
	*pos = i;
	return false;
}

int htab__add(struct htab *t, uint64_t hash, uint64_t val)
{
	int err;

	if (!val)
		return -EINVAL;
	err = htab__reserve(t, 1);
	if (err)
		return err;
	place(t->slots, t->mask, hash, val);
	t->nr++;
	return 0;
}

bool htab__del(struct htab *t, uint64_t hash, uint64_t val)
{
	size_t i, j, home;

	if (!t->slots)
		return false;
	for (i = hash & t->mask; t->slots[i].val; i = (i + 1) & t->mask)
		if (t->slots[i].hash == hash && t->slots[i].val == val)
			break;
	if (!t->slots[i].val)
		return false;
	/*
	 * Backward shift: pull each later entry of the run into the hole when
	 * its home slot is not in (hole, entry], so every probe still finds it.
	 */
	for (j = (i + 1) & t->mask; t->slots[j].val; j = (j + 1) & t->mask) {
		home = t->slots[j].hash & t->mask;
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].val = 0;
	t->slots[i].hash = 0;
	t->nr--;
	return true;
}

void htab__free(struct htab *t)
{
	if (!t)
		return;
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
