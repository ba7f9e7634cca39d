/* hotspot_gc.c - batch application of GC moves, removal of dead objects. */
#include "attacher/hotspot_gc.h"

#include <stdbool.h>
#include <stdlib.h>

struct taken {
	uint64_t dst, size, ctx;
};

size_t os_hs_apply_moves(struct os_ivindex *objects, const struct os_hs_move *mv, size_t n,
			 struct os_hmap *moved)
{
	struct taken *t = n ? malloc(n * sizeof(*t)) : NULL;
	size_t k = 0;

	if (!t)
		return 0;
	/* 1. out at the sources */
	for (size_t i = 0; i < n; i++) {
		uint64_t end, val;

		if (mv[i].src == mv[i].dst)
			continue;
		if (os_iv_remove(objects, mv[i].src, &end, &val) < 0)
			continue; /* not tracked (small, or allocated before we looked) */
		t[k].dst = mv[i].dst;
		t[k].size = end - mv[i].src;
		t[k].ctx = val;
		k++;
	}
	/* 2. in at the destinations */
	for (size_t i = 0; i < k; i++) {
		os_iv_remove_overlaps(objects, t[i].dst, t[i].dst + t[i].size, NULL, NULL);
		os_iv_insert(objects, t[i].dst, t[i].dst + t[i].size, t[i].ctx);
		os_hmap_put(moved, t[i].dst, 1);
	}
	free(t);
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
