/* cct.c - calling-context tree.
 *
 * Nodes live in one growing array; a node id is its index. Children are
 * found through the single hash map `children`, whose 64-bit key stands for
 * the pair (parent id, pc). A 32-bit parent and a 64-bit pc do not fit in
 * one 64-bit key, so the key is a hash and two pairs may share it. Such
 * collisions are resolved by probing in key space: the candidate keys of a
 * pair are k0 = os_hash64(pc) ^ parent, k1 = k0 + STEP, k2 = k1 + STEP, ...
 * A candidate key either is absent from the map (the pair is not in the
 * tree: insert it under that key), or maps to a node whose stored (parent,
 * pc) is compared: equal means found, different means a collision and the
 * next candidate is tried. Nodes are never removed, so a probe sequence
 * never has holes and lookups stay exact. STEP is odd, so the sequence
 * visits every 64-bit value; the reserved key UINT64_MAX is skipped.
 *
 * Path cache: an insert walks from the root, one map lookup per frame,
 * although consecutive paths (samples of one thread) mostly differ only in
 * their innermost frames. The last paths inserted are kept with the node
 * of every depth (struct os_cct_way); an insert finds the way sharing the
 * longest outer part with its path and continues from that node. Nodes are
 * never removed and a node id names its whole path, so the node a way holds
 * for an equal outer part is the node the walk from the root would reach:
 * the ids (and the order in which new nodes are made) are the same with
 * and without the cache.
 */
#include "common/cct.h"
#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KEY_STEP 0x9e3779b97f4a7c15ULL
#define MIN_NODES 256

static inline uint64_t child_key0(uint32_t parent, uint64_t pc)
{
	return os_hash64(pc) ^ (uint64_t)parent;
}

static inline uint64_t next_key(uint64_t k)
{
	k += KEY_STEP;
	return k == UINT64_MAX ? k + KEY_STEP : k;
}

static int grow(struct os_cct *t)
{
	struct os_cct_node *nodes;

	if (t->cap >= OS_CCT_NONE / 2)
		return -ENOMEM;
	nodes = os_grow32(t->nodes, &t->cap, (size_t)t->cap + 1, sizeof(*nodes), MIN_NODES,
			  UINT32_MAX);
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	return 0;
}

int os_cct_init(struct os_cct *t)
{
	t->nodes = NULL;
	t->count = t->cap = 0;
	os_hmap_init(&t->children);
	if (grow(t) < 0)
		return -ENOMEM;
	t->nodes[0].pc = 0;
	t->nodes[0].parent = OS_CCT_NONE;
	t->nodes[0].depth = 0;
	t->nodes[0].hint = 0;
	t->count = 1;
	t->cache = NULL;
	t->memo = NULL;
	t->memo_hits = t->inserts = 0;
	t->clock = 0;
	os_cct_set_cache(t, 1); /* without it inserts are slower, not wrong */
	return 0;
}

int os_cct_set_cache(struct os_cct *t, int on)
{
	if (!on) {
		free(t->cache);
		free(t->memo);
		t->cache = NULL;
		t->memo = NULL;
		return 0;
	}
	if (!t->cache)
		t->cache = calloc(OS_CCT_CACHE_WAYS, sizeof(*t->cache));
	if (!t->memo)
		t->memo = calloc(OS_CCT_MEMO, sizeof(*t->memo));
	if (!t->cache || !t->memo) {
		os_cct_set_cache(t, 0);
		return -ENOMEM;
	}
	return 0;
}

void os_cct_destroy(struct os_cct *t)
{
	free(t->nodes);
	t->nodes = NULL;
	t->count = t->cap = 0;
	free(t->cache);
	free(t->memo);
	t->cache = NULL;
	t->memo = NULL;
	os_hmap_destroy(&t->children);
}

/* Returns the child of `parent` for `pc`, creating it if needed. One probe
 * of the map per candidate key: os_hmap_ref either finds the key's node or
 * inserts the next id (ids handed out are below t->count, so a slot holding
 * t->count was just made). */
static uint32_t child(struct os_cct *t, uint32_t parent, uint64_t pc)
{
	uint64_t k = child_key0(parent, pc);
	uint64_t *slot;
	struct os_cct_node *n;

	uint32_t h = t->nodes[parent].hint;

	/* the child met last under this parent: a hint only ever names a child
	 * of its node, so the same pc is the same pair */
	if (h && t->nodes[h].pc == pc)
		return h;
	if (k == UINT64_MAX)
		k = next_key(k);
	if (t->count == t->cap && grow(t) < 0)
		return OS_CCT_NONE;
	for (;; k = next_key(k)) {
		slot = os_hmap_ref(&t->children, k, t->count);
		if (!slot)
			return OS_CCT_NONE;
		if (*slot == t->count)
			break;
		n = &t->nodes[*slot];
		if (n->parent == parent && n->pc == pc) {
			t->nodes[parent].hint = (uint32_t)*slot;
			return (uint32_t)*slot;
		}
	}
	n = &t->nodes[t->count];
	n->pc = pc;
	n->parent = parent;
	n->depth = t->nodes[parent].depth + 1;
	n->hint = 0;
	t->nodes[parent].hint = t->count;
	return t->count++;
}

static uint32_t insert_walk(struct os_cct *t, const uint64_t *frames, uint32_t n)
{
	uint32_t cur = 0;

	while (n-- > 0) {
		cur = child(t, cur, frames[n]);
		if (cur == OS_CCT_NONE)
			break;
	}
	return cur;
}

/* Two independent hashes of a whole path (n frames). */
static void path_hashes(const uint64_t *frames, uint32_t n, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL + n;

	for (uint32_t i = 0; i < n; i++) {
		a = (a ^ frames[i]) * 0xff51afd7ed558ccdULL;
		a ^= a >> 32;
		b = (b + frames[i]) * 0x94d049bb133111ebULL;
		b ^= b >> 29;
	}
	*h1 = os_hash64(a);
	*h2 = os_hash64(b ^ 0x2545f4914f6cdd1dULL);
}

static uint32_t insert_ways(struct os_cct *t, const uint64_t *frames, uint32_t n);

uint32_t os_cct_insert(struct os_cct *t, const uint64_t *frames, uint32_t n)
{
	struct os_cct_memo *m;
	uint64_t h1, h2;
	uint32_t id;

	if (!t->cache)
		return insert_walk(t, frames, n);
	if (!n)
		return 0;
	t->inserts++;
	path_hashes(frames, n, &h1, &h2);
	m = &t->memo[h1 & (OS_CCT_MEMO - 1)];
	if (m->node && m->h1 == h1 && m->h2 == h2 && t->nodes[m->node].depth == n &&
	    t->nodes[m->node].pc == frames[0]) {
		t->memo_hits++;
		return m->node;
	}
	id = insert_ways(t, frames, n);
	if (id != OS_CCT_NONE && id)
		*m = (struct os_cct_memo){ h1, h2, id };
	return id;
}

static uint32_t insert_ways(struct os_cct *t, const uint64_t *frames, uint32_t n)
{
	struct os_cct_way *best = NULL, *w, *lru;
	uint32_t common = 0, cur = 0, i, lim;

	/* the way sharing the longest outer part (frames[n - 1] outermost) */
	lru = &t->cache[0];
	for (w = t->cache; w < t->cache + OS_CCT_CACHE_WAYS; w++) {
		if (w->stamp < lru->stamp)
			lru = w;
		lim = w->n < n ? w->n : n;
		for (i = 0; i < lim && w->pc[i] == frames[n - 1 - i]; i++)
			;
		if (i > common) {
			common = i;
			best = w;
		}
	}
	/* Record the path in the way it continues when it shares at least half
	 * of the shorter of the two (likely the same thread), else in the
	 * least recently used way. */
	w = lru;
	if (best) {
		lim = best->n < n ? best->n : n;
		if (common * 2 >= lim)
			w = best;
		cur = best->id[common - 1];
	}
	if (w != best && common) {
		memcpy(w->pc, best->pc, common * sizeof(w->pc[0]));
		memcpy(w->id, best->id, common * sizeof(w->id[0]));
	}
	w->stamp = ++t->clock;
	if (t->clock == UINT32_MAX) { /* restart the clock; only replacement order suffers */
		for (struct os_cct_way *x = t->cache; x < t->cache + OS_CCT_CACHE_WAYS; x++)
			x->stamp = x == w;
		t->clock = 1;
	}
	for (i = common; i < n; i++) {
		cur = child(t, cur, frames[n - 1 - i]);
		if (cur == OS_CCT_NONE) {
			w->n = 0;
			return OS_CCT_NONE;
		}
		if (i < OS_CCT_CACHE_DEPTH) {
			w->pc[i] = frames[n - 1 - i];
			w->id[i] = cur;
		}
	}
	w->n = n < OS_CCT_CACHE_DEPTH ? n : OS_CCT_CACHE_DEPTH;
	return cur;
}

/* An id that was never handed out has no path: returns 0, writes nothing. */
uint32_t os_cct_path(const struct os_cct *t, uint32_t node, uint64_t *out, uint32_t max)
{
	uint32_t depth, i = 0;

	if (node >= t->count)
		return 0;
	depth = t->nodes[node].depth;
	while (node != 0 && i < max) {
		out[i++] = t->nodes[node].pc;
		node = t->nodes[node].parent;
	}
	return depth;
}
