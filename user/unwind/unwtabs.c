// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwtabs: the life of the unwinder's tables: ids, row space, the
 * references views hold, idle tables and their eviction.  See unwinder.h.
 *
 * Eviction: each table counts the views naming it.  A built table no
 * view names is idle, kept (most recently idle first) for idle_ttl_ms
 * and while the idle tables' rows fit in a budget, so a program started
 * again and again finds its table (rebuilding cc1's 430k rows took 20 ms
 * each time a smaller budget let it go); past either, or when row space
 * or ids run out, the oldest idle table goes: its entry back to
 * "pending", its identity out of the BPF side's file map, its rows and
 * id reused.  A walk on
 * another CPU that read the entry just before may read rows of the next
 * table for that sample: every step is checked to move up the stack, so
 * that sample's walk ends early at worst.  The BPF rule cache is keyed
 * by the table's generation as well as its id, so it never serves a rule
 * of the id's previous table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "base/hash.h"
#include "base/util.h"
#include "unwind/unwinder.h"
#include "unwind/unwinder_int.h"

uint64_t key_hash(const struct file_key *k)
{
	uint64_t h = hash_u64(0, k->dev);

	h = hash_u64(h, k->ino);
	h = hash_u64(h, (uint64_t)k->mtime_sec);
	return hash_fin(hash_u64(h, k->mtime_nsec));
}

/* Give [first, first + n) back to the row space, merging with its neighbours.  Under the lock. */
void rows_free(struct unwinder *u, uint64_t first, uint64_t n)
{
	struct extent *h;
	size_t i, cap;

	if (!n)
		return;
	if (first + n == u->next_row) {
		u->next_row = first;	/* the top: the space shrinks back */
		if (u->nr_holes && u->holes[u->nr_holes - 1].first +
				   u->holes[u->nr_holes - 1].n == u->next_row)
			u->next_row = u->holes[--u->nr_holes].first;
		return;
	}
	for (i = 0; i < u->nr_holes && u->holes[i].first < first; i++)
		;
	if (i && u->holes[i - 1].first + u->holes[i - 1].n == first) {
		u->holes[i - 1].n += n;
		if (i < u->nr_holes && first + n == u->holes[i].first) {
			u->holes[i - 1].n += u->holes[i].n;
			memmove(&u->holes[i], &u->holes[i + 1], (u->nr_holes - i - 1) * sizeof(*h));
			u->nr_holes--;
		}
		return;
	}
	if (i < u->nr_holes && first + n == u->holes[i].first) {
		u->holes[i].first = first;
		u->holes[i].n += n;
		return;
	}
	if (u->nr_holes == u->cap_holes) {
		cap = u->cap_holes ? 2 * u->cap_holes : 16;
		h = realloc(u->holes, cap * sizeof(*h));
		if (!h)
			return;	/* those rows are lost to this recording: a cap, not a fault */
		u->holes = h;
		u->cap_holes = cap;
	}
	memmove(&u->holes[i + 1], &u->holes[i], (u->nr_holes - i) * sizeof(*h));
	u->holes[i] = (struct extent){ first, n };
	u->nr_holes++;
}

/* @n rows from a hole (first fit) or the top of the space, or -1.  Under the lock. */
int64_t rows_alloc(struct unwinder *u, uint64_t n)
{
	int64_t first;
	size_t i;

	for (i = 0; i < u->nr_holes; i++) {
		if (u->holes[i].n < n)
			continue;
		first = (int64_t)u->holes[i].first;
		u->holes[i].first += n;
		u->holes[i].n -= n;
		if (!u->holes[i].n) {
			memmove(&u->holes[i], &u->holes[i + 1],
				(u->nr_holes - i - 1) * sizeof(*u->holes));
			u->nr_holes--;
		}
		return first;
	}
	if (n > u->max_rows - u->next_row)
		return -1;
	first = (int64_t)u->next_row;
	u->next_row += n;
	return first;
}

/*
 * Evict idle table @t (id @id): the BPF side stops using it (its entry
 * pending, its identity unknown), then its rows and id are free.  Under
 * the lock, so the main thread cannot give the identity a new id between
 * the two.
 */
void tab_evict(struct unwinder *u, uint32_t id)
{
	struct utab *t = &u->tabs[id];
	struct bpfsym_unw_table e = { .state = BPFSYM_UNW_PENDING };
	struct bpfsym_unw_file f = {
		.dev = (uint64_t)major(t->key.dev) << 20 | minor(t->key.dev),
		.ino = t->key.ino, .mtime_sec = t->key.mtime_sec, .mtime_nsec = t->key.mtime_nsec,
	};

	lru__unlink(&u->idle_tabs, &t->idle);
	u->idle_rows -= t->n;
	if (u->o.sink.put_table(u->o.sink.ctx, id, &e) ||
	    (u->o.sink.del_file && u->o.sink.del_file(u->o.sink.ctx, &f)))
		u->st.sink_errors++;
	htab__del(&u->ids, key_hash(&t->key), (uint64_t)id + 1);
	pr_debug("unwind: table %u (dev %llu ino %llu) evicted: %llu rows back\n", id,
		 (unsigned long long)t->key.dev, (unsigned long long)t->key.ino,
		 (unsigned long long)t->n);
	rows_free(u, t->first, t->n);
	u->st.evicted++;
	u->st.evicted_rows += t->n;
	u->st.rows_now -= t->n;
	t->first = t->n = 0;
	t->used = t->built = false;
	t->gen++;
	/* Room for every id was made when the id was given: this cannot fail. */
	u->free_ids[u->nr_free_ids++] = id;
}

/* Evict the table idle longest; false when none is idle.  Under the lock. */
bool evict_oldest(struct unwinder *u)
{
	if (!u->idle_tabs.tail)
		return false;
	tab_evict(u, (uint32_t)(lru_entry(u->idle_tabs.tail, struct utab, idle) - u->tabs));
	return true;
}

/*
 * Keep the idle tables' rows within their budget, and none idle for
 * longer than idle_ttl_ms: a program started every few minutes keeps
 * its table, a one-off's goes.  Under the lock.
 */
void idle_trim(struct unwinder *u)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), ttl = u->o.idle_ttl_ms * 1000000ull;
	const struct utab *t;

	while (u->idle_rows > u->max_idle_rows && evict_oldest(u))
		;
	while (u->idle_tabs.tail) {
		t = lru_entry(u->idle_tabs.tail, struct utab, idle);
		if (now - t->idle_since < ttl)
			break;
		evict_oldest(u);
	}
}

/* Table @id is built, or no view names it any more: idle if both.  Under the lock. */
void tab_maybe_idle(struct unwinder *u, uint32_t id)
{
	struct utab *t = &u->tabs[id];

	if (!t->built || t->refs || t->pinned)
		return;
	t->idle_since = clock_ns(CLOCK_MONOTONIC);
	lru__push_front(&u->idle_tabs, &t->idle);
	u->idle_rows += t->n;
	idle_trim(u);
}

/*
 * Row space for @n entries (rows and index), or -1 when the cap refuses
 * them even with every idle table evicted.
 */
int64_t take_rows(struct unwinder *u, uint64_t n)
{
	int64_t first;

	pthread_mutex_lock(&u->lock);
	while ((first = rows_alloc(u, n)) < 0 && evict_oldest(u))
		;
	if (first < 0)
		u->st.over_mem++;
	pthread_mutex_unlock(&u->lock);
	return first;
}

/*
 * A new table id, its entry pending: a free one, a new one, or the
 * oldest idle table's.  BPFSYM_UNW_NO_TABLE when none is left.  Under
 * the lock.
 */
uint32_t new_id(struct unwinder *u)
{
	uint32_t id;

	if (!u->nr_free_ids && u->nr_ids >= u->o.max_tables && !evict_oldest(u)) {
		u->st.over_tables++;
		return BPFSYM_UNW_NO_TABLE;
	}
	if (u->nr_free_ids) {
		id = u->free_ids[--u->nr_free_ids];
	} else {
		id = u->nr_ids++;
		memset(&u->tabs[id], 0, sizeof(u->tabs[id]));
	}
	u->tabs[id].used = true;
	u->st.tables++;
	return id;
}

/* One more view range names table @id: not idle.  Under the lock. */
void tab_ref(struct unwinder *u, uint32_t id)
{
	struct utab *t = &u->tabs[id];

	if (t->refs++ == 0 && t->built && !t->pinned) {
		lru__unlink(&u->idle_tabs, &t->idle);
		u->idle_rows -= t->n;
	}
}

/* Take back the references of @n ids.  Under the lock. */
void tabs_unref(struct unwinder *u, const uint32_t *ids, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (--u->tabs[ids[i]].refs == 0)
			tab_maybe_idle(u, ids[i]);
}

void unwinder__sizes(struct unwinder *u, struct unwind_sizes *sz)
{
	pthread_mutex_lock(&u->lock);
	*sz = (struct unwind_sizes){
		.tables = u->nr_ids - u->nr_free_ids, .idle_rows = u->idle_rows,
		.views = htab__nr(&u->procs), .holes = u->nr_holes, .rows_top = u->next_row,
	};
	for (const struct lru_node *n = u->idle_tabs.head; n; n = n->next)
		sz->idle_tables++;
	pthread_mutex_unlock(&u->lock);
}
