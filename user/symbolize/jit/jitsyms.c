// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jitsyms: entries in the order they were added, and an index of the
 * address space they name: sorted pieces that do not overlap, each naming
 * the latest entry covering it.
 *
 * Entries and names live in chunks that never move, so the pointers handed
 * out stay valid as the table grows.  The index is rebuilt lazily on the
 * first lookup after adds: the new entries are swept into pieces of their
 * own (later wins among them), then merged over the old pieces (the new
 * ones win), one linear pass.  A perf map read again adds only its new
 * lines, so the cost follows what was added.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/jit/jitsyms.h"

#define DEF_MAX_SYMS		((size_t)1 << 20)
#define DEF_MAX_NAME_BYTES	((size_t)64 << 20)
#define ENT_CHUNK		1024	/* entries per chunk */
#define NAME_BLOCK		((size_t)64 * 1024)

/* A range of the index: [start, end) is named by @sym. */
struct piece {
	uint64_t start, end;
	const struct jitsym *sym;
};

struct jitsyms {
	size_t max_syms, max_name_bytes;

	struct jitsym **chunks;	/* entry i: chunks[i / ENT_CHUNK][i % ENT_CHUNK] */
	size_t nr_chunks, chunks_alloc;
	size_t nr;		/* entries */

	char **blocks;		/* name storage */
	size_t nr_blocks, blocks_alloc;
	char *cur;		/* free space in the last block */
	size_t left;
	size_t name_bytes;	/* stored, towards max_name_bytes */

	struct piece *pieces;	/* the index of entries [0, nr_indexed) */
	size_t nr_pieces;
	size_t nr_indexed;

	size_t nr_dropped;
};

struct jitsyms *jitsyms__new(const struct jitsyms_opts *opts)
{
	struct jitsyms *js = calloc(1, sizeof(*js));

	if (!js) {
		errno = ENOMEM;
		return NULL;
	}
	js->max_syms = opts && opts->max_syms ? opts->max_syms : DEF_MAX_SYMS;
	js->max_name_bytes = opts && opts->max_name_bytes ? opts->max_name_bytes : DEF_MAX_NAME_BYTES;
	return js;
}

void jitsyms__free(struct jitsyms *js)
{
	size_t i;

	if (!js)
		return;
	for (i = 0; i < js->nr_chunks; i++)
		free(js->chunks[i]);
	free(js->chunks);
	for (i = 0; i < js->nr_blocks; i++)
		free(js->blocks[i]);
	free(js->blocks);
	free(js->pieces);
	free(js);
}

static int check_name(const char *name, size_t name_len)
{
	if (!name || !name_len || memchr(name, '\0', name_len))
		return -EINVAL;
	return 0;
}

/* Room in js->blocks for one more block.  0 or -ENOMEM. */
static int grow_blocks(struct jitsyms *js)
{
	size_t n = js->blocks_alloc ? js->blocks_alloc * 2 : 16;
	char **nb;

	if (js->nr_blocks < js->blocks_alloc)
		return 0;
	nb = realloc(js->blocks, n * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	js->blocks = nb;
	js->blocks_alloc = n;
	return 0;
}

/* Room in js->chunks for one more chunk.  0 or -ENOMEM. */
static int grow_chunks(struct jitsyms *js)
{
	size_t n = js->chunks_alloc ? js->chunks_alloc * 2 : 16;
	struct jitsym **nc;

	if (js->nr_chunks < js->chunks_alloc)
		return 0;
	nc = realloc(js->chunks, n * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	js->chunks = nc;
	js->chunks_alloc = n;
	return 0;
}

const char *jitsyms__store_name(struct jitsyms *js, const char *name, size_t name_len)
{
	size_t need;
	char *s;
	int err;

	err = check_name(name, name_len);
	if (err) {
		errno = -err;
		return NULL;
	}
	need = name_len + 1;
	if (name_len >= js->max_name_bytes || js->name_bytes > js->max_name_bytes - need) {
		js->nr_dropped++;
		errno = E2BIG;
		return NULL;
	}
	if (need > js->left) {
		/* A long name gets a block of its own; the current one stays open. */
		size_t size = need > NAME_BLOCK / 4 ? need : NAME_BLOCK;
		char *block;

		if (grow_blocks(js)) {
			errno = ENOMEM;
			return NULL;
		}
		block = malloc(size);
		if (!block) {
			errno = ENOMEM;
			return NULL;
		}
		js->blocks[js->nr_blocks++] = block;
		if (size == need) {
			s = block;
			goto copy;
		}
		js->cur = block;
		js->left = size;
	}
	s = js->cur;
	js->cur += need;
	js->left -= need;
copy:
	memcpy(s, name, name_len);
	s[name_len] = '\0';
	js->name_bytes += need;
	return s;
}

int jitsyms__add_stored(struct jitsyms *js, uint64_t start, uint64_t size, const char *name)
{
	struct jitsym *e;

	if (!name || size > UINT64_MAX - start)
		return -EINVAL;
	if (!size)
		return 0;
	if (js->nr >= js->max_syms) {
		js->nr_dropped++;
		return -E2BIG;
	}
	if (js->nr % ENT_CHUNK == 0) {
		struct jitsym *chunk;

		if (grow_chunks(js))
			return -ENOMEM;
		chunk = malloc(ENT_CHUNK * sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		js->chunks[js->nr_chunks++] = chunk;
	}
	e = &js->chunks[js->nr / ENT_CHUNK][js->nr % ENT_CHUNK];
	e->start = start;
	e->size = size;
	e->name = name;
	js->nr++;
	return 0;
}

int jitsyms__add(struct jitsyms *js, uint64_t start, uint64_t size, const char *name,
		 size_t name_len)
{
	const char *s;
	int err;

	err = check_name(name, name_len);
	if (err)
		return err;
	if (size > UINT64_MAX - start)
		return -EINVAL;
	if (!size)
		return 0;
	/* Checked first, so a full table does not fill the name storage. */
	if (js->nr >= js->max_syms) {
		js->nr_dropped++;
		return -E2BIG;
	}
	s = jitsyms__store_name(js, name, name_len);
	if (!s)
		return -errno;
	return jitsyms__add_stored(js, start, size, s);
}

/* ---- the index ---- */

/* A new entry, for the sweep. */
struct bent {
	uint64_t start, end;
	size_t seq;		/* order of addition: later wins */
	const struct jitsym *sym;
};

static int bent_cmp(const void *a, const void *b)
{
	const struct bent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Append [start, end) -> sym to @p (*@n pieces), joining it to an equal neighbour. */
static void emit(struct piece *p, size_t *n, uint64_t start, uint64_t end, const struct jitsym *sym)
{
	if (*n && p[*n - 1].end == start && p[*n - 1].sym == sym) {
		p[*n - 1].end = end;
		return;
	}
	p[*n].start = start;
	p[*n].end = end;
	p[*n].sym = sym;
	(*n)++;
}

/* A max-heap of indices into @b, by seq: the entry that names the current position on top. */
static void heap_push(size_t *h, size_t *nh, const struct bent *b, size_t v)
{
	size_t i = (*nh)++, parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (b[h[parent]].seq >= b[v].seq)
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *nh, const struct bent *b)
{
	size_t i = 0, c, v = h[--(*nh)];

	for (;;) {
		c = 2 * i + 1;
		if (c >= *nh)
			break;
		if (c + 1 < *nh && b[h[c + 1]].seq > b[h[c]].seq)
			c++;
		if (b[v].seq >= b[h[c]].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

/*
 * The @k entries of @b (sorted by start) as at most 2k pieces in @out:
 * a sweep over their starts and ends, the latest live entry naming each
 * stretch.  Entries that have ended leave the heap when they reach its top.
 * Returns the number of pieces.
 */
static size_t sweep(const struct bent *b, size_t k, size_t *heap, struct piece *out)
{
	size_t i = 0, nh = 0, np = 0, top;
	uint64_t pos = 0, next;

	while (i < k || nh) {
		if (!nh)
			pos = b[i].start;
		while (i < k && b[i].start <= pos)
			heap_push(heap, &nh, b, i++);
		while (nh && b[heap[0]].end <= pos)
			heap_pop(heap, &nh, b);
		if (!nh)
			continue;
		top = heap[0];
		next = b[top].end;
		if (i < k && b[i].start < next)
			next = b[i].start;
		emit(out, &np, pos, next, b[top].sym);
		pos = next;
	}
	return np;
}

/*
 * @old (@no pieces) overlaid with @new (@nn pieces, which win), into @out
 * (room for no + 2 nn: each new piece splits at most one old piece).
 * Returns the number of pieces.
 */
static size_t overlay(const struct piece *old, size_t no, const struct piece *new, size_t nn,
		      struct piece *out)
{
	size_t i = 0, j = 0, n = 0;
	uint64_t os = 0, oe = 0;	/* what is left of old[i] */

	if (no) {
		os = old[0].start;
		oe = old[0].end;
	}
	while (i < no || j < nn) {
		bool next_old = false;

		if (i == no) {
			emit(out, &n, new[j].start, new[j].end, new[j].sym);
			j++;
		} else if (j == nn || oe <= new[j].start) {
			emit(out, &n, os, oe, old[i].sym);
			next_old = true;
		} else if (os < new[j].start) {
			emit(out, &n, os, new[j].start, old[i].sym);
			os = new[j].start;
		} else {
			uint64_t e = new[j].end;

			emit(out, &n, new[j].start, e, new[j].sym);
			j++;
			if (oe <= e)
				next_old = true;
			else if (os < e)
				os = e;
		}
		/* Old pieces the new one covered whole are gone; one it cut is trimmed. */
		while (next_old) {
			next_old = false;
			if (++i == no)
				break;
			os = old[i].start;
			oe = old[i].end;
			if (j > 0 && os < new[j - 1].end) {
				if (oe <= new[j - 1].end)
					next_old = true;
				else
					os = new[j - 1].end;
			}
		}
	}
	return n;
}

/* Bring the index up to date with every entry.  0 or -ENOMEM (the old index stays). */
static int reindex(struct jitsyms *js)
{
	size_t k = js->nr - js->nr_indexed, nb, n, i;
	struct piece *bp = NULL, *merged = NULL;
	struct bent *b = NULL;
	size_t *heap = NULL;
	int err = -ENOMEM;

	b = malloc(k * sizeof(*b));
	heap = malloc(k * sizeof(*heap));
	bp = malloc(2 * k * sizeof(*bp));
	if (!b || !heap || !bp)
		goto out;
	for (i = 0; i < k; i++) {
		size_t idx = js->nr_indexed + i;
		const struct jitsym *e = &js->chunks[idx / ENT_CHUNK][idx % ENT_CHUNK];

		b[i].start = e->start;
		b[i].end = e->start + e->size;
		b[i].seq = idx;
		b[i].sym = e;
	}
	qsort(b, k, sizeof(*b), bent_cmp);
	nb = sweep(b, k, heap, bp);

	if (!js->nr_pieces) {
		merged = bp;
		bp = NULL;
		n = nb;
	} else {
		merged = malloc((js->nr_pieces + 2 * nb) * sizeof(*merged));
		if (!merged)
			goto out;
		n = overlay(js->pieces, js->nr_pieces, bp, nb, merged);
	}
	free(js->pieces);
	js->pieces = merged;
	js->nr_pieces = n;
	js->nr_indexed = js->nr;
	err = 0;
out:
	free(b);
	free(heap);
	free(bp);
	return err;
}

const struct jitsym *jitsyms__lookup(struct jitsyms *js, uint64_t addr)
{
	size_t lo = 0, hi, mid;
	int err;

	if (!js) {
		errno = ENOENT;
		return NULL;
	}
	if (js->nr_indexed < js->nr) {
		err = reindex(js);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	/* The last piece starting at or below addr. */
	hi = js->nr_pieces;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (js->pieces[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= js->pieces[lo - 1].end) {
		errno = ENOENT;
		return NULL;
	}
	return js->pieces[lo - 1].sym;
}

size_t jitsyms__nr_syms(const struct jitsyms *js)
{
	return js ? js->nr : 0;
}

size_t jitsyms__nr_dropped(const struct jitsyms *js)
{
	return js ? js->nr_dropped : 0;
}
