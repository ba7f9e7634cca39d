/* hotspot_gc.c - batch application of GC moves, removal of dead objects. */
#include "runtimes/hotspot/hotspot_gc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define SEQ_SPAN (1U << OS_HS_MOVE_SEQ_BITS)

/* An object in flight: where the moves resolved so far put it. */
struct flight {
	uint64_t at, size, ctx;
	uint64_t src;           /* where the collection found it */
	uint64_t key;           /* unwrapped number of the move that put it there */
};

struct resolve {
	struct os_ivindex *where; /* [at, at + 1) -> index in fl */
	struct flight *fl;
	size_t nfl;
	size_t *hit;              /* scratch: flights found in a source range */
	size_t nhit;
	uint64_t *key;            /* unwrapped sequence number per move */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* key[i] = the moves' sequence numbers unwrapped: the wrap point is the
 * largest gap between the numbers present, on the circle of 2^24. The
 * index breaks ties, so sorting by key keeps the arrival order of equal
 * numbers. Returns 0 or -ENOMEM. */
static int unwrap(const struct os_hs_move *mv, size_t n, uint64_t *key)
{
	uint64_t *s = malloc(n * sizeof(*s)), base = 0, gap = 0;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i] = mv[i].seq;
	qsort(s, n, sizeof(*s), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? s[i + 1] : s[0] + SEQ_SPAN;

		if (next - s[i] > gap) {
			gap = next - s[i];
			base = next % SEQ_SPAN;
		}
	}
	for (size_t i = 0; i < n; i++)
		key[i] = ((mv[i].seq - base + SEQ_SPAN) % SEQ_SPAN) << 32 | i;
	free(s);
	return 0;
}

static void hit_one(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct resolve *r = arg;

	(void)start;
	(void)end;
	r->hit[r->nhit++] = val;
}

/* Puts flight f at `at`; a flight already there was stale (its memory was
 * overwritten) and is forgotten. */
static void place(struct resolve *r, size_t f, uint64_t at, uint64_t key)
{
	uint64_t old;

	if (os_iv_remove(r->where, at, NULL, &old) == 0)
		r->fl[old].size = 0;
	r->fl[f].at = at;
	r->fl[f].key = key;
	if (os_iv_insert(r->where, at, at + 1, f) < 0)
		r->fl[f].size = 0;
}

/* One move, in order: carries along the flights that earlier moves put in
 * its source range, else takes the tracked object starting at its source
 * out of the index. */
static void resolve_one(struct resolve *r, struct os_ivindex *objects, const struct os_hs_move *m,
			uint64_t key)
{
	uint64_t end, val, seq = key >> 32;
	size_t carried = 0;

	r->nhit = 0;
	os_iv_foreach(r->where, m->src, m->src + m->bytes, hit_one, r);
	for (size_t i = 0; i < r->nhit; i++) {
		size_t f = r->hit[i];

		if ((r->fl[f].key >> 32) >= seq)
			continue; /* not known to be earlier */
		os_iv_remove(r->where, r->fl[f].at, NULL, NULL);
		r->hit[carried++] = f;
	}
	for (size_t i = 0; i < carried; i++) {
		size_t f = r->hit[i];

		place(r, f, r->fl[f].at - m->src + m->dst, key);
	}
	if (carried || os_iv_remove(objects, m->src, &end, &val) < 0)
		return; /* or not tracked (small, or allocated before we looked) */
	r->fl[r->nfl].size = end - m->src;
	r->fl[r->nfl].ctx = val;
	r->fl[r->nfl].src = m->src;
	place(r, r->nfl++, m->dst, key);
}

size_t os_hs_apply_moves(struct os_ivindex *objects, const struct os_hs_move *mv, size_t n,
			 struct os_hmap *moved)
{
	struct resolve r = { 0 };
	size_t k = 0;

	if (!n)
		return 0;
	r.where = os_iv_new();
	r.fl = malloc(n * sizeof(*r.fl));
	r.hit = malloc(n * sizeof(*r.hit));
	r.key = malloc(n * sizeof(*r.key));
	if (!r.where || !r.fl || !r.hit || !r.key || unwrap(mv, n, r.key) < 0)
		goto out;
	qsort(r.key, n, sizeof(*r.key), cmp_u64);
	/* 1. resolve the final place of every object moved */
	for (size_t i = 0; i < n; i++) {
		const struct os_hs_move *m = &mv[r.key[i] & 0xffffffff];

		if (m->src != m->dst && m->bytes)
			resolve_one(&r, objects, m, r.key[i]);
	}
	/* 2. in at the final places */
	for (size_t f = 0; f < r.nfl; f++) {
		struct flight *t = &r.fl[f];

		if (!t->size)
			continue; /* overwritten while in flight */
		os_iv_remove_overlaps(objects, t->at, t->at + t->size, NULL, NULL);
		os_iv_insert(objects, t->at, t->at + t->size, t->ctx);
		os_hmap_put(moved, t->at, t->src);
		k++;
	}
out:
	if (r.where)
		os_iv_free(r.where);
	free(r.fl);
	free(r.hit);
	free(r.key);
	return k;
}

struct collect {
	const struct os_hmap *moved;
	uint64_t *start, *ctx;
	size_t n, cap;
	bool oom;
};

static void collect_one(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct collect *c = arg;
	uint64_t dummy;

	(void)end;
	if (c->oom || os_hmap_get(c->moved, start, &dummy))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		uint64_t *s = realloc(c->start, cap * sizeof(*s)), *x;

		if (!s) {
			c->oom = true;
			return;
		}
		c->start = s;
		x = realloc(c->ctx, cap * sizeof(*x));
		if (!x) {
			c->oom = true;
			return;
		}
		c->ctx = x;
		c->cap = cap;
	}
	c->start[c->n] = start;
	c->ctx[c->n] = val;
	c->n++;
}

size_t os_hs_drop_dead(struct os_ivindex *objects, uint64_t lo, uint64_t hi,
		       const struct os_hmap *moved, os_hs_klass_of_fn klass_of, void *arg,
		       const struct os_hs_mem *m, uint32_t pid, const struct os_hs_layout *lay,
		       os_hs_confirm_fn confirm)
{
	struct collect c = { .moved = moved };
	int64_t off = os_hs_klass_word_offset(lay);
	uint64_t *addrs = NULL, *words = NULL;
	bool *ok = NULL;
	size_t dropped = 0;

	if (off < 0 || lay->compressed_klass < 0 || lo >= hi)
		return 0;
	os_iv_foreach(objects, lo, hi, collect_one, &c);
	if (!c.n)
		goto out;
	addrs = malloc(c.n * sizeof(*addrs));
	words = malloc(c.n * sizeof(*words));
	ok = malloc(c.n * sizeof(*ok));
	if (!addrs || !words || !ok)
		goto out;
	for (size_t i = 0; i < c.n; i++)
		addrs[i] = c.start[i] + (uint64_t)off;
	os_hs_mem_words(m, pid, addrs, c.n, words, ok);
	if (confirm && !confirm(arg))
		goto out;
	for (size_t i = 0; i < c.n; i++) {
		uint64_t want = klass_of(arg, c.ctx[i]);

		if (!want)
			continue; /* no expectation: keep */
		if (ok[i] && os_hs_decode_klass(lay, words[i]) == want)
			continue;
		if (os_iv_remove(objects, c.start[i], NULL, NULL) == 0)
			dropped++;
	}
out:
	free(c.start);
	free(c.ctx);
	free(addrs);
	free(words);
	free(ok);
	return dropped;
}
