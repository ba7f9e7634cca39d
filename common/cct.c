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
 */
#include "common/cct.h"

#include <errno.h>
#include <stdlib.h>

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
	uint32_t cap = t->cap ? t->cap * 2 : MIN_NODES;
	struct os_cct_node *nodes;

	if (t->cap >= OS_CCT_NONE / 2)
		return -ENOMEM;
	nodes = realloc(t->nodes, (size_t)cap * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	t->cap = cap;
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
	t->count = 1;
	return 0;
}

void os_cct_destroy(struct os_cct *t)
{
	free(t->nodes);
	t->nodes = NULL;
	t->count = t->cap = 0;
	os_hmap_destroy(&t->children);
}

/* Returns the child of `parent` for `pc`, creating it if needed. */
static uint32_t child(struct os_cct *t, uint32_t parent, uint64_t pc)
{
	uint64_t k = child_key0(parent, pc), id;
	uint64_t *slot;
	struct os_cct_node *n;

	if (k == UINT64_MAX)
		k = next_key(k);
	for (;; k = next_key(k)) {
		if (!os_hmap_get(&t->children, k, &id))
			break;
		n = &t->nodes[id];
		if (n->parent == parent && n->pc == pc)
			return (uint32_t)id;
	}
	if (t->count == t->cap && grow(t) < 0)
		return OS_CCT_NONE;
	slot = os_hmap_ref(&t->children, k, t->count);
	if (!slot)
		return OS_CCT_NONE;
	n = &t->nodes[t->count];
	n->pc = pc;
	n->parent = parent;
	n->depth = t->nodes[parent].depth + 1;
	return t->count++;
}

uint32_t os_cct_insert(struct os_cct *t, const uint64_t *frames, uint32_t n)
{
	uint32_t cur = 0;

	while (n-- > 0) {
		cur = child(t, cur, frames[n]);
		if (cur == OS_CCT_NONE)
			break;
	}
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
