/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lru: an intrusive recency list, most recently used first, for the caches
 * that must stay bounded (processes, loaded ELF files).  Embed a struct
 * lru_node in the cached object and get back to it with lru_entry().
 */
#ifndef BPFSYM_LRU_H
#define BPFSYM_LRU_H

#include <stddef.h>

struct lru_node {
	struct lru_node *prev, *next;
};

struct lru {
	struct lru_node *head, *tail;	/* most and least recently used */
};

#define lru_entry(node, type, member) \
	((type *)((char *)(node) - offsetof(type, member)))

/* Take @n out of @l (it must be in it). */
static inline void lru__unlink(struct lru *l, struct lru_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

/* Put @n (not in any list) first in @l. */
static inline void lru__push_front(struct lru *l, struct lru_node *n)
{
	n->prev = NULL;
	n->next = l->head;
	if (l->head)
		l->head->prev = n;
	else
		l->tail = n;
	l->head = n;
}

/* @n (in @l) was just used: move it first. */
static inline void lru__touch(struct lru *l, struct lru_node *n)
{
	if (l->head != n) {
		lru__unlink(l, n);
		lru__push_front(l, n);
	}
}

#endif /* BPFSYM_LRU_H */
