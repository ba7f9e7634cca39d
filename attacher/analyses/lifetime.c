/* lifetime.c - object lifetimes per allocation context: the engine
 * (lifetime.h). Each followed object is a slot found by its current
 * start; collections re-key the survivors and age every managed object of
 * the heap. */
#include "attacher/analyses/lifetime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

struct os_lt_obj {
	uint64_t start, size;
	uint64_t born;              /* ns from the start of the run */
	double w;                   /* weight (1 / probability it was tracked) */
	uint32_t asid, ctx;
	uint32_t age;               /* collections survived */
	uint64_t moved_in;          /* number of the heap's collection that last moved it */
	bool used, managed, old;
	bool pending;               /* its last move's generation was not known: young if
				     * the next collection moves it again */
};

struct os_lt_ctx {
	struct os_lifetime lt;
	uint32_t asid;
	double live_bytes;          /* native: now */
};

struct os_lt_heap {
	uint32_t asid;
	uint64_t collections;       /* judged */
	uint64_t gens_unknown;      /* judged without the generations known: a
				     * promotion then is counted at the next one */
	bool no_ages;               /* its collections cannot age objects */
};

static inline uint64_t key_of(uint32_t asid, uint64_t start)
{
	return (uint64_t)asid << 48 | (start & ((1ULL << 48) - 1));
}

void os_lt_init(struct os_lt *t)
{
	memset(t, 0, sizeof(*t));
	os_hmap_init(&t->at);
}

void os_lt_destroy(struct os_lt *t)
{
	os_hmap_destroy(&t->at);
	free(t->obj);
	free(t->freelist);
	free(t->ctx);
	free(t->heaps);
	memset(t, 0, sizeof(*t));
}

uint32_t os_lt_time_bin(uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint32_t b = 0;

	while (us && b < OS_LT_BINS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

static struct os_lt_ctx *ctx_get(struct os_lt *t, uint32_t ctx)
{
	if (ctx >= t->nctx) {
		uint32_t n = ctx + 1 > 2 * t->nctx ? ctx + 1 : 2 * t->nctx;
		struct os_lt_ctx *c = realloc(t->ctx, (size_t)n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + t->nctx, 0, (size_t)(n - t->nctx) * sizeof(*c));
		t->ctx = c;
		t->nctx = n;
	}
	return &t->ctx[ctx];
}

static struct os_lt_heap *heap_get(struct os_lt *t, uint32_t asid)
{
	struct os_lt_heap *h;

	for (uint32_t i = 0; i < t->nheaps; i++)
		if (t->heaps[i].asid == asid)
			return &t->heaps[i];
	h = realloc(t->heaps, (t->nheaps + 1) * sizeof(*h));
	if (!h)
		return NULL;
	t->heaps = h;
	h = &t->heaps[t->nheaps++];
	memset(h, 0, sizeof(*h));
	h->asid = asid;
	return h;
}

static void slot_free(struct os_lt *t, uint32_t i)
{
	uint32_t *f;

	t->obj[i].used = false;
	f = os_grow(t->freelist, &t->capfree, t->nfree + 1, sizeof(*f), 1024);
	if (!f)
		return; /* the slot stays unused; memory only */
	t->freelist = f;
	t->freelist[t->nfree++] = i;
}

/* The object of slot i ends at now; live: it is still there at the end. */
static void account(struct os_lt *t, uint32_t i, uint64_t now, bool live)
{
	struct os_lt_obj *o = &t->obj[i];
	struct os_lt_ctx *c = ctx_get(t, o->ctx);
	uint32_t b;

	if (!c)
		return;
	c->asid = o->asid;
	if (o->managed) {
		c->lt.kind = OS_LT_MANAGED;
		b = o->age < OS_LT_BINS ? o->age : OS_LT_BINS - 1;
	} else {
		c->lt.kind = OS_LT_NATIVE;
		b = os_lt_time_bin(now > o->born ? now - o->born : 0);
		c->live_bytes -= o->w * (double)o->size;
		t->live_bytes -= o->w * (double)o->size;
	}
	if (live) {
		c->lt.live[b] += o->w;
		c->lt.live_bytes[b] += o->w * (double)o->size;
	} else {
		c->lt.ended[b] += o->w;
		c->lt.ended_bytes[b] += o->w * (double)o->size;
	}
}

/* Ends the object of slot i and forgets it. */
static void end_slot(struct os_lt *t, uint32_t i, uint64_t now)
{
	account(t, i, now, false);
	os_hmap_del(&t->at, key_of(t->obj[i].asid, t->obj[i].start));
	slot_free(t, i);
}

/* Forgets the object of slot i without counting it: not aged. */
static void drop_slot(struct os_lt *t, uint32_t i)
{
	t->unaged++;
	os_hmap_del(&t->at, key_of(t->obj[i].asid, t->obj[i].start));
	slot_free(t, i);
}

static bool find(const struct os_lt *t, uint32_t asid, uint64_t start, uint32_t *i)
{
	uint64_t v;

	if (!os_hmap_get(&t->at, key_of(asid, start), &v))
		return false;
	*i = (uint32_t)v;
	return true;
}

void os_lt_born(struct os_lt *t, uint32_t asid, uint64_t start, uint64_t size, uint32_t ctx,
		double w, bool managed, uint64_t now)
{
	struct os_lt_ctx *c = ctx_get(t, ctx);
	struct os_lt_heap *h = managed ? heap_get(t, asid) : NULL;
	struct os_lt_obj *o;
	uint32_t i;

	if (find(t, asid, start, &i))
		end_slot(t, i, now); /* an end not seen: the place is taken now */
	if (!c || (managed && !h)) {
		t->oom = true;
		return;
	}
	if (managed && h->no_ages) {
		t->unaged++;
		return;
	}
	if (t->nfree) {
		i = t->freelist[--t->nfree];
	} else {
		o = os_grow(t->obj, &t->capobj, t->nobj + 1, sizeof(*o), 4096);
		if (!o || t->nobj >= UINT32_MAX) {
			t->oom = true;
			return;
		}
		t->obj = o;
		i = (uint32_t)t->nobj++;
	}
	if (os_hmap_put(&t->at, key_of(asid, start), i) < 0) {
		t->oom = true;
		slot_free(t, i);
		return;
	}
	o = &t->obj[i];
	*o = (struct os_lt_obj){ .start = start, .size = size, .born = now, .w = w, .asid = asid,
				 .ctx = ctx, .used = true, .managed = managed };
	if (managed) {
		o->moved_in = h->collections;
		return;
	}
	c->asid = asid;
	c->lt.kind = OS_LT_NATIVE;
	c->live_bytes += w * (double)size;
	t->live_bytes += w * (double)size;
	if (c->live_bytes > c->lt.peak_bytes) {
		c->lt.peak_bytes = c->live_bytes;
		c->lt.peak_ns = now;
	}
	if (t->live_bytes > t->peak_bytes) {
		t->peak_bytes = t->live_bytes;
		t->peak_ns = now;
	}
}

void os_lt_end(struct os_lt *t, uint32_t asid, uint64_t start, uint64_t now)
{
	uint32_t i;

	if (find(t, asid, start, &i))
		end_slot(t, i, now);
}

void os_lt_move(struct os_lt *t, uint32_t asid, uint64_t from, uint64_t to, uint64_t size,
		uint64_t now)
{
	uint32_t i, j;

	if (!find(t, asid, from, &i))
		return;
	os_hmap_del(&t->at, key_of(asid, from));
	if (find(t, asid, to, &j))
		end_slot(t, j, now); /* overwritten: an end not seen */
	t->obj[i].start = to;
	if (!t->obj[i].managed && size != t->obj[i].size) {
		struct os_lt_ctx *c = ctx_get(t, t->obj[i].ctx);
		double d = t->obj[i].w * ((double)size - (double)t->obj[i].size);

		if (c)
			c->live_bytes += d;
		t->live_bytes += d;
	}
	t->obj[i].size = size;
	if (os_hmap_put(&t->at, key_of(asid, to), i) < 0) {
		t->oom = true;
		slot_free(t, i);
	}
}

/* Every managed object of heap h: not aged (its collections cannot tell). */
static void heap_unaged(struct os_lt *t, uint32_t asid)
{
	for (size_t i = 0; i < t->nobj; i++)
		if (t->obj[i].used && t->obj[i].managed && t->obj[i].asid == asid)
			drop_slot(t, (uint32_t)i);
}

/* A collection left o in the young generation at its age: HotSpot's age
 * table counts it. */
static void left_young(struct os_lt *t, const struct os_lt_obj *o)
{
	t->survivor_bytes[o->age < OS_LT_BINS ? o->age : OS_LT_BINS - 1] += o->w * (double)o->size;
}

/* An object survived collection n of its heap (moved by it or not): one
 * more year; in the old generation for the first time: promoted. */
static void survived(struct os_lt *t, struct os_lt_obj *o, uint32_t gen, bool moved, uint64_t n)
{
	struct os_lt_ctx *c;

	/* moved again: its last move, of a generation not known, had left it
	 * young (a young collection moves no old object) */
	if (o->pending && moved)
		left_young(t, o);
	o->pending = moved && gen == OS_GEN_UNKNOWN && !o->old;
	o->age++;
	o->moved_in = n;
	if (gen == OS_GEN_YOUNG)
		left_young(t, o);
	if (gen != OS_GEN_OLD || o->old)
		return;
	o->old = true;
	c = ctx_get(t, o->ctx);
	if (c) {
		c->lt.promoted += o->w;
		c->lt.promoted_bytes += o->w * (double)o->size;
	}
}

void os_lt_collected(struct os_lt *t, const struct os_gc_report *r, os_lt_held_fn held,
		     os_lt_gen_fn gen, void *arg)
{
	struct os_lt_heap *h = heap_get(t, r->asid);
	uint32_t *mv = NULL;
	uint64_t n;

	t->collections++;
	if (!h) {
		t->oom = true;
		return;
	}
	if (r->no_ages || r->moves_lost) {
		/* survivors moved unseen: every object's place is in doubt */
		t->unjudged++;
		h->no_ages |= r->no_ages;
		heap_unaged(t, r->asid);
		return;
	}
	n = ++h->collections;
	if (!r->gens_known)
		h->gens_unknown++;
	/* 1. the survivors out of their old places (a move may land where
	 * another survivor was), 2. in at the new ones */
	if (r->nmoves) {
		mv = malloc(r->nmoves * sizeof(*mv));
		if (!mv) {
			t->unjudged++;
			heap_unaged(t, r->asid);
			return;
		}
	}
	for (size_t m = 0; m < r->nmoves; m++) {
		uint32_t i;

		mv[m] = UINT32_MAX;
		if (!find(t, r->asid, r->moves[m].from, &i) || !t->obj[i].managed)
			continue;
		os_hmap_del(&t->at, key_of(r->asid, r->moves[m].from));
		mv[m] = i;
	}
	for (size_t m = 0; m < r->nmoves; m++) {
		struct os_lt_obj *o;
		uint32_t i = mv[m], j;

		if (i == UINT32_MAX)
			continue;
		o = &t->obj[i];
		if (find(t, r->asid, r->moves[m].to, &j))
			end_slot(t, j, 0); /* a dead object's place, taken (managed: no time) */
		o->start = r->moves[m].to;
		if (os_hmap_put(&t->at, key_of(r->asid, o->start), i) < 0) {
			t->oom = true;
			slot_free(t, i);
			continue;
		}
		survived(t, o, r->gens_known ? r->moves[m].gen : OS_GEN_UNKNOWN, true, n);
	}
	free(mv);
	/* 3. the objects it did not move */
	for (size_t i = 0; i < t->nobj; i++) {
		struct os_lt_obj *o = &t->obj[i];
		uint32_t g;

		if (!o->used || !o->managed || o->asid != r->asid || o->moved_in == n)
			continue;
		if (!held(arg, o->asid, o->start, o->start + o->size)) {
			end_slot(t, (uint32_t)i, 0); /* found dead (or overwritten) */
			continue;
		}
		g = r->gens_known ? gen(arg, o->asid, o->start) : OS_GEN_UNKNOWN;
		if (g == OS_GEN_FREE) {
			end_slot(t, (uint32_t)i, 0); /* its memory is free: it died */
		} else if (g == OS_GEN_OLD_DIRECT) {
			o->old = true; /* promoted earlier, or born there: large objects */
			survived(t, o, OS_GEN_OLD, false, n);
		} else if (g == OS_GEN_OLD || (g == OS_GEN_UNKNOWN && o->old)) {
			/* promoted unmoved (a G1 full collection makes the young
			 * regions it compacts old), or by a collection whose
			 * generations were not known */
			survived(t, o, OS_GEN_OLD, false, n);
		} else {
			end_slot(t, (uint32_t)i, 0); /* left behind in the young generation */
		}
	}
}

void os_lt_finish(struct os_lt *t, uint64_t now, os_lt_held_fn held, void *arg)
{
	for (size_t i = 0; i < t->nobj; i++) {
		struct os_lt_obj *o = &t->obj[i];

		if (!o->used)
			continue;
		/* a native object the index no longer holds was ended by a birth
		 * over it (a free not seen): not a leak, its end not known */
		if (!o->managed && held && !held(arg, o->asid, o->start, o->start + o->size))
			t->unseen_ends++;
		else
			account(t, (uint32_t)i, now, true);
		os_hmap_del(&t->at, key_of(o->asid, o->start));
		o->used = false;
	}
	for (uint32_t c = 0; c < t->nctx; c++) {
		struct os_lt_ctx *x = &t->ctx[c];
		struct os_lt_heap *h = NULL;

		if (x->lt.kind != OS_LT_MANAGED)
			continue;
		for (uint32_t k = 0; k < t->nheaps; k++)
			if (t->heaps[k].asid == x->asid)
				h = &t->heaps[k];
		if (h && h->collections > h->gens_unknown)
			x->lt.flags |= OS_LT_F_PROMOTION;
	}
}

const struct os_lifetime *os_lt_context(const struct os_lt *t, uint32_t ctx)
{
	if (ctx >= t->nctx || t->ctx[ctx].lt.kind == OS_LT_NONE)
		return NULL;
	return &t->ctx[ctx].lt;
}
