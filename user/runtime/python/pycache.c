// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pycache: code objects read, by (pid, pstart, address, firstlineno)
 * (pycache.h).  One htab for the entries, one for the processes (each
 * holding a list of its entries, so an exit costs its own entries, not
 * a walk of them all), one LRU for eviction, one strtab for the names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/lru.h"
#include "base/strtab.h"
#include "runtime/python/pycache.h"

#define DEFAULT_MAX 65536

struct pc_proc {
	uint32_t pid;
	uint64_t pstart;
	struct lru entries;	/* its entries, by their by_proc node */
};

struct pc_entry {
	struct lru_node lru;	/* the cache's recency list */
	struct lru_node by_proc;
	struct pc_proc *proc;
	uint64_t code, hash;
	uint32_t firstlineno;
	int err;
	const char *func, *file;
	int32_t first;
	uint8_t *linetable;
	size_t linetable_len;
};

struct pycache {
	struct htab entries, procs;
	struct lru lru;
	struct strtab strs;
	size_t nr, max;
};

struct pc_key {
	uint32_t pid;
	uint64_t pstart, code;
	uint32_t firstlineno;
};

static uint64_t proc_hash(uint32_t pid, uint64_t pstart)
{
	return hash_u64(hash_u64(0, pid), pstart);
}

static uint64_t entry_hash(const struct pc_key *k)
{
	return hash_u64(hash_u64(proc_hash(k->pid, k->pstart), k->code), k->firstlineno);
}

static bool entry_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct pc_key *k = key;
	const struct pc_entry *e = (const struct pc_entry *)(uintptr_t)val;

	(void)ctx;
	return e->code == k->code && e->firstlineno == k->firstlineno && e->proc->pid == k->pid &&
	       e->proc->pstart == k->pstart;
}

static bool proc_eq(const void *ctx, const void *key, uint64_t val)
{
	const struct pc_key *k = key;
	const struct pc_proc *p = (const struct pc_proc *)(uintptr_t)val;

	(void)ctx;
	return p->pid == k->pid && p->pstart == k->pstart;
}

struct pycache *pycache__new(size_t max)
{
	struct pycache *c = calloc(1, sizeof(*c));

	if (c)
		c->max = max ? max : DEFAULT_MAX;
	return c;
}

/* Take @e out of every table and free it; its process goes with its last entry. */
static void entry_del(struct pycache *c, struct pc_entry *e)
{
	struct pc_proc *p = e->proc;

	htab__del(&c->entries, e->hash, (uintptr_t)e);
	lru__unlink(&c->lru, &e->lru);
	lru__unlink(&p->entries, &e->by_proc);
	free(e->linetable);
	free(e);
	c->nr--;
	if (!p->entries.head) {
		htab__del(&c->procs, proc_hash(p->pid, p->pstart), (uintptr_t)p);
		free(p);
	}
}

void pycache__free(struct pycache *c)
{
	if (!c)
		return;
	while (c->lru.head)
		entry_del(c, lru_entry(c->lru.head, struct pc_entry, lru));
	htab__free(&c->entries);
	htab__free(&c->procs);
	strtab__free(&c->strs);
	free(c);
}

size_t pycache__nr(const struct pycache *c)
{
	return c->nr;
}

int pycache__lookup(struct pycache *c, uint32_t pid, uint64_t pstart, uint64_t code,
		    uint32_t firstlineno, uint32_t index, struct py_name *out)
{
	struct pc_key k = { pid, pstart, code, firstlineno };
	struct pc_entry *e;
	int32_t line = -1;

	e = (struct pc_entry *)(uintptr_t)htab__find(&c->entries, entry_hash(&k), entry_eq, NULL,
						      &k);
	if (!e)
		return -ENOENT;
	lru__touch(&c->lru, &e->lru);
	out->err = e->err;
	out->func = e->func;
	out->file = e->file;
	if (index == PY_INDEX_BEFORE)
		line = e->first;
	else if (e->linetable &&
		 pylinetable__line(e->linetable, e->linetable_len, e->first, index, &line))
		line = -1;
	out->line = e->err ? -1 : line;
	out->firstlineno = e->err ? 0 : e->first;
	return 0;
}

/* The process entry of @k, made when there is none: NULL on -ENOMEM. */
static struct pc_proc *proc_get(struct pycache *c, const struct pc_key *k)
{
	uint64_t h = proc_hash(k->pid, k->pstart);
	struct pc_proc *p = (struct pc_proc *)(uintptr_t)htab__find(&c->procs, h, proc_eq, NULL, k);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = k->pid;
	p->pstart = k->pstart;
	if (htab__add(&c->procs, h, (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Intern @pc's names into @e. */
static int entry_names(struct pycache *c, struct pc_entry *e, const struct py_code *pc)
{
	e->func = strtab__intern(&c->strs, pc->func);
	e->file = e->func ? strtab__intern(&c->strs, pc->file) : NULL;
	return e->file ? 0 : -ENOMEM;
}

int pycache__add(struct pycache *c, uint32_t pid, uint64_t pstart, uint64_t code,
		 uint32_t firstlineno, struct py_code *pc, int err)
{
	struct pc_key k = { pid, pstart, code, firstlineno };
	struct pc_entry *e, *old;
	struct pc_proc *p;

	e = calloc(1, sizeof(*e));
	if (!e || (!err && entry_names(c, e, pc)) || htab__reserve(&c->entries, 1)) {
		free(e);
		return -ENOMEM;
	}
	old = (struct pc_entry *)(uintptr_t)htab__find(&c->entries, entry_hash(&k), entry_eq,
							NULL, &k);
	if (old)
		entry_del(c, old);
	p = proc_get(c, &k);
	if (!p) {
		free(e);
		return -ENOMEM;
	}
	e->proc = p;
	e->code = code;
	e->firstlineno = firstlineno;
	e->hash = entry_hash(&k);
	e->err = err;
	if (!err) {
		e->first = pc->firstlineno;
		e->linetable = pc->linetable;
		e->linetable_len = pc->linetable_len;
		pc->linetable = NULL;
		pc->linetable_len = 0;
	}
	htab__add(&c->entries, e->hash, (uintptr_t)e);	/* reserved above */
	lru__push_front(&c->lru, &e->lru);
	lru__push_front(&p->entries, &e->by_proc);
	c->nr++;
	while (c->nr > c->max)
		entry_del(c, lru_entry(c->lru.tail, struct pc_entry, lru));
	return 0;
}

void pycache__drop_proc(struct pycache *c, uint32_t pid, uint64_t pstart)
{
	struct pc_key k = { .pid = pid, .pstart = pstart };
	struct pc_proc *p;

	p = (struct pc_proc *)(uintptr_t)htab__find(&c->procs, proc_hash(pid, pstart), proc_eq,
						     NULL, &k);
	/* The last entry frees the process: stop before touching it again. */
	while (p) {
		struct pc_entry *e = lru_entry(p->entries.head, struct pc_entry, by_proc);
		bool last = !e->by_proc.next;

		entry_del(c, e);
		if (last)
			break;
	}
}
