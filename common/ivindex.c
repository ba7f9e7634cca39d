/* ivindex.c - B+ tree of disjoint half-open intervals keyed by start.
 *
 * Leaves hold up to IV_LEAF_CAP intervals as two parallel sorted arrays
 * (start; end and value) and are linked both ways in address order. Inner
 * nodes hold up to IV_INNER_CAP children; key[i] (i >= 1) is a lower bound
 * of every start in child i and greater than every start in child i - 1
 * (key[0] is unused). The height is stored in the index: every path from
 * the root has `height` inner nodes, then a leaf.
 *
 * Lookup of address A descends to the last child whose key is <= A. In the
 * leaf reached, the predecessor of A (largest start <= A) is either there or,
 * when every start of that leaf is above A, it is the last entry of the
 * previous leaf: separators are not tightened on deletion, so the first
 * entry of a leaf may lie above the separator that led to it.
 *
 * Deletion frees leaves that become empty and inner nodes that lose their
 * last child, and shortens the root while it has a single child; it does not
 * merge underfull nodes. Insertion splits full nodes in half; every node a
 * split may need is allocated before the tree is touched, so -ENOMEM leaves
 * the index unchanged.
 *
 * Insert also refuses (with -EEXIST) an interval overlapping one already
 * present, not only one with the same start: lookups rely on disjointness.
 */
#include "common/ivindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define IV_LEAF_CAP 32
#define IV_INNER_CAP 64
#define IV_MAX_HEIGHT 24

/* Nodes are cache-line aligned with the searched keys first, so that a key
 * array spans the fewest lines; end and value of an interval share a line. */
struct iv_ev {
	uint64_t end, val;
};

struct iv_leaf {
	uint64_t start[IV_LEAF_CAP];
	struct iv_ev ev[IV_LEAF_CAP];
	struct iv_leaf *prev, *next;
	uint32_t n;
};

struct iv_inner {
	uint64_t key[IV_INNER_CAP];
	void *child[IV_INNER_CAP];
	uint32_t n; /* children */
};

struct os_ivindex {
	void *root;
	uint32_t height;
	size_t count;
	/* One-entry cache of the last interval found by a lookup. */
	bool cached;
	uint64_t c_start, c_end, c_val;
};

/* The inner nodes visited by a descent and the child index taken in each;
 * level 0 is the root. */
struct iv_path {
	struct iv_inner *node[IV_MAX_HEIGHT];
	uint32_t idx[IV_MAX_HEIGHT];
};

/* Number of elements of the sorted array a[0..n) that are <= x. */
static inline uint32_t count_le(const uint64_t *a, uint32_t n, uint64_t x)
{
	const uint64_t *base = a;

	if (n == 0)
		return 0;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half - 1] <= x ? base + half : base;
		n -= half;
	}
	return (uint32_t)(base - a) + (*base <= x);
}

static inline uint32_t inner_slot(const struct iv_inner *in, uint64_t x)
{
	return count_le(in->key + 1, in->n - 1, x);
}

/* Asks for all cache lines of a key array at once: the binary search that
 * follows then waits for one memory latency instead of one per probe. */
static inline void prefetch_keys(const uint64_t *keys, uint32_t cap)
{
	uint32_t i;

	for (i = 0; i < cap; i += 64 / sizeof(uint64_t))
		__builtin_prefetch(&keys[i]);
}

static struct iv_leaf *descend(const struct os_ivindex *iv, uint64_t x, struct iv_path *path)
{
	void *node = iv->root;
	uint32_t lvl;

	for (lvl = 0; lvl < iv->height; lvl++) {
		struct iv_inner *in = node;
		uint32_t i = inner_slot(in, x);

		if (path) {
			path->node[lvl] = in;
			path->idx[lvl] = i;
		}
		node = in->child[i];
		if (lvl + 1 < iv->height)
			prefetch_keys(((struct iv_inner *)node)->key, IV_INNER_CAP);
		else
			prefetch_keys(((struct iv_leaf *)node)->start, IV_LEAF_CAP);
	}
	return node;
}

static void *node_alloc(size_t size)
{
	void *p;

	return posix_memalign(&p, 64, size) == 0 ? p : NULL;
}

static void free_subtree(void *node, uint32_t height)
{
	struct iv_inner *in = node;
	uint32_t i;

	if (height > 0) {
		for (i = 0; i < in->n; i++)
			free_subtree(in->child[i], height - 1);
	}
	free(node);
}

struct os_ivindex *os_iv_new(void)
{
	struct os_ivindex *iv = calloc(1, sizeof(*iv));

	if (!iv)
		return NULL;
	iv->root = node_alloc(sizeof(struct iv_leaf));
	if (!iv->root) {
		free(iv);
		return NULL;
	}
	memset(iv->root, 0, sizeof(struct iv_leaf));
	return iv;
}

void os_iv_free(struct os_ivindex *iv)
{
	if (!iv)
		return;
	free_subtree(iv->root, iv->height);
	free(iv);
}

size_t os_iv_count(const struct os_ivindex *iv)
{
	return iv->count;
}

static void leaf_put(struct iv_leaf *l, uint32_t pos, uint64_t start, uint64_t end, uint64_t val)
{
	uint32_t tail = l->n - pos;

	memmove(&l->start[pos + 1], &l->start[pos], tail * sizeof(uint64_t));
	memmove(&l->ev[pos + 1], &l->ev[pos], tail * sizeof(l->ev[0]));
	l->start[pos] = start;
	l->ev[pos].end = end;
	l->ev[pos].val = val;
	l->n++;
}

static void leaf_cut(struct iv_leaf *l, uint32_t pos)
{
	uint32_t tail = l->n - pos - 1;

	memmove(&l->start[pos], &l->start[pos + 1], tail * sizeof(uint64_t));
	memmove(&l->ev[pos], &l->ev[pos + 1], tail * sizeof(l->ev[0]));
	l->n--;
}

static void inner_put(struct iv_inner *in, uint32_t pos, uint64_t key, void *child)
{
	uint32_t tail = in->n - pos;

	memmove(&in->key[pos + 1], &in->key[pos], tail * sizeof(uint64_t));
	memmove(&in->child[pos + 1], &in->child[pos], tail * sizeof(void *));
	in->key[pos] = key;
	in->child[pos] = child;
	in->n++;
}

static void inner_cut(struct iv_inner *in, uint32_t pos)
{
	uint32_t tail = in->n - pos - 1;

	memmove(&in->key[pos], &in->key[pos + 1], tail * sizeof(uint64_t));
	memmove(&in->child[pos], &in->child[pos + 1], tail * sizeof(void *));
	in->n--;
}

/* True if [start, end) overlaps an interval of the index; `l`/`pos` is the
 * leaf reached for `start` and the number of its starts <= start. */
static bool overlaps_neighbours(const struct iv_leaf *l, uint32_t pos, uint64_t start, uint64_t end)
{
	if (pos > 0) {
		if (l->ev[pos - 1].end > start)
			return true;
	} else if (l->prev && l->prev->ev[l->prev->n - 1].end > start) {
		return true;
	}
	if (pos < l->n)
		return l->start[pos] < end;
	return l->next && l->next->start[0] < end;
}

/* Splits the full leaf `l`, moving its upper half to `r`, then inserts. */
static uint64_t leaf_split_put(struct iv_leaf *l, struct iv_leaf *r, uint32_t pos, uint64_t start,
			       uint64_t end, uint64_t val)
{
	uint32_t half = IV_LEAF_CAP / 2, moved = IV_LEAF_CAP - half;

	memcpy(r->start, &l->start[half], moved * sizeof(uint64_t));
	memcpy(r->ev, &l->ev[half], moved * sizeof(l->ev[0]));
	r->n = moved;
	l->n = half;
	r->next = l->next;
	r->prev = l;
	if (l->next)
		l->next->prev = r;
	l->next = r;
	if (pos <= half)
		leaf_put(l, pos, start, end, val);
	else
		leaf_put(r, pos - half, start, end, val);
	return r->start[0];
}

/* Splits the full inner node `in`, moving its upper half to `r`, then
 * inserts (key, child) at pos. Returns the separator for r. */
static uint64_t inner_split_put(struct iv_inner *in, struct iv_inner *r, uint32_t pos, uint64_t key,
				void *child)
{
	uint32_t half = IV_INNER_CAP / 2, moved = IV_INNER_CAP - half;

	memcpy(r->key, &in->key[half], moved * sizeof(uint64_t));
	memcpy(r->child, &in->child[half], moved * sizeof(void *));
	r->n = moved;
	in->n = half;
	if (pos <= half)
		inner_put(in, pos, key, child);
	else
		inner_put(r, pos - half, key, child);
	return r->key[0];
}

int os_iv_insert(struct os_ivindex *iv, uint64_t start, uint64_t end, uint64_t val)
{
	void *spare[IV_MAX_HEIGHT + 2];
	uint32_t nspare = 0, used = 0, pos, need, lvl;
	struct iv_path path;
	struct iv_leaf *l;
	uint64_t sep;
	void *right;
	int ret = 0;

	if (end <= start)
		return -EINVAL;
	l = descend(iv, start, &path);
	pos = count_le(l->start, l->n, start);
	if (overlaps_neighbours(l, pos, start, end))
		return -EEXIST;
	iv->cached = false;
	if (l->n < IV_LEAF_CAP) {
		leaf_put(l, pos, start, end, val);
		iv->count++;
		return 0;
	}

	/* Allocate every node the split cascade needs up front. */
	need = 1;
	for (lvl = iv->height; lvl > 0 && path.node[lvl - 1]->n == IV_INNER_CAP; lvl--)
		need++;
	if (lvl == 0)
		need++; /* a new root */
	if (lvl == 0 && iv->height + 1 >= IV_MAX_HEIGHT)
		return -ENOMEM;
	spare[nspare++] = node_alloc(sizeof(struct iv_leaf));
	while (nspare < need)
		spare[nspare++] = node_alloc(sizeof(struct iv_inner));
	for (lvl = 0; lvl < nspare; lvl++) {
		if (!spare[lvl]) {
			ret = -ENOMEM;
			goto out;
		}
	}

	right = spare[used++];
	sep = leaf_split_put(l, right, pos, start, end, val);
	iv->count++;
	for (lvl = iv->height; lvl > 0; lvl--) {
		struct iv_inner *in = path.node[lvl - 1];
		uint32_t at = path.idx[lvl - 1] + 1;

		if (in->n < IV_INNER_CAP) {
			inner_put(in, at, sep, right);
			right = NULL;
			break;
		}
		sep = inner_split_put(in, spare[used], at, sep, right);
		right = spare[used++];
	}
	if (right) {
		struct iv_inner *root = spare[used++];

		root->n = 2;
		root->key[0] = 0;
		root->child[0] = iv->root;
		root->key[1] = sep;
		root->child[1] = right;
		iv->root = root;
		iv->height++;
	}
out:
	for (lvl = used; lvl < nspare; lvl++)
		free(spare[lvl]);
	return ret;
}

/* Removes child `idx` of the inner node at `lvl` of `path`, freeing nodes
 * left without children upwards. */
static void remove_child(struct os_ivindex *iv, struct iv_path *path, uint32_t lvl)
{
	for (;;) {
		struct iv_inner *in = path->node[lvl];

		inner_cut(in, path->idx[lvl]);
		if (in->n > 0 || lvl == 0)
			break;
		free(in);
		lvl--;
	}
	while (iv->height > 0 && ((struct iv_inner *)iv->root)->n == 1) {
		struct iv_inner *old = iv->root;

		iv->root = old->child[0];
		iv->height--;
		free(old);
	}
}

int os_iv_remove(struct os_ivindex *iv, uint64_t start, uint64_t *end, uint64_t *val)
{
	struct iv_path path;
	struct iv_leaf *l = descend(iv, start, &path);
	uint32_t pos = count_le(l->start, l->n, start);

	if (pos == 0 || l->start[pos - 1] != start)
		return -ENOENT;
	pos--;
	if (end)
		*end = l->ev[pos].end;
	if (val)
		*val = l->ev[pos].val;
	leaf_cut(l, pos);
	iv->count--;
	iv->cached = false;
	if (l->n > 0 || iv->height == 0)
		return 0;
	if (iv->count == 0) {
		/* Only this leaf was left, under a chain of one-child nodes
		 * (kept as a guard: remove_child already shortens such a root). */
		while (iv->height > 0) {
			struct iv_inner *in = iv->root;

			iv->root = in->child[0];
			iv->height--;
			free(in);
		}
		return 0;
	}
	if (l->prev)
		l->prev->next = l->next;
	if (l->next)
		l->next->prev = l->prev;
	free(l);
	remove_child(iv, &path, iv->height - 1);
	return 0;
}

bool os_iv_lookup(struct os_ivindex *iv, uint64_t addr, uint64_t *start, uint64_t *end,
		  uint64_t *val)
{
	struct iv_leaf *l;
	uint32_t pos;

	if (!(iv->cached && addr - iv->c_start < iv->c_end - iv->c_start)) {
		l = descend(iv, addr, NULL);
		pos = count_le(l->start, l->n, addr);
		if (pos == 0) {
			l = l->prev;
			if (!l)
				return false;
			pos = l->n;
		}
		pos--;
		if (addr >= l->ev[pos].end)
			return false;
		iv->cached = true;
		iv->c_start = l->start[pos];
		iv->c_end = l->ev[pos].end;
		iv->c_val = l->ev[pos].val;
	}
	if (start)
		*start = iv->c_start;
	if (end)
		*end = iv->c_end;
	if (val)
		*val = iv->c_val;
	return true;
}

int os_iv_set(struct os_ivindex *iv, uint64_t start, uint64_t val)
{
	struct iv_leaf *l = descend(iv, start, NULL);
	uint32_t pos = count_le(l->start, l->n, start);

	if (pos == 0 || l->start[pos - 1] != start)
		return -ENOENT;
	l->ev[pos - 1].val = val;
	iv->cached = false;
	return 0;
}

/* Finds the first interval with end > lo: *leaf is NULL if there is none. */
static void first_ending_after(const struct os_ivindex *iv, uint64_t lo, struct iv_leaf **leaf,
			       uint32_t *idx)
{
	struct iv_leaf *l = descend(iv, lo, NULL);
	uint32_t pos = count_le(l->start, l->n, lo);

	if (pos > 0) {
		if (l->ev[pos - 1].end > lo)
			pos--;
	} else if (l->prev && l->prev->ev[l->prev->n - 1].end > lo) {
		l = l->prev;
		pos = l->n - 1;
	}
	if (pos == l->n) {
		l = l->next;
		pos = 0;
	}
	*leaf = l;
	*idx = pos;
}

size_t os_iv_remove_overlaps(struct os_ivindex *iv, uint64_t lo, uint64_t hi, os_iv_fn fn,
			     void *arg)
{
	size_t removed = 0;
	struct iv_leaf *l;
	uint32_t i;

	if (hi <= lo)
		return 0;
	for (;;) {
		uint64_t s, e, v;

		first_ending_after(iv, lo, &l, &i);
		if (!l || l->start[i] >= hi)
			break;
		s = l->start[i];
		e = l->ev[i].end;
		v = l->ev[i].val;
		if (fn)
			fn(s, e, v, arg);
		if (os_iv_remove(iv, s, NULL, NULL) < 0)
			break;
		removed++;
	}
	return removed;
}

void os_iv_foreach(struct os_ivindex *iv, uint64_t lo, uint64_t hi, os_iv_fn fn, void *arg)
{
	struct iv_leaf *l;
	uint32_t i;

	if (hi <= lo)
		return;
	first_ending_after(iv, lo, &l, &i);
	while (l && l->start[i] < hi) {
		fn(l->start[i], l->ev[i].end, l->ev[i].val, arg);
		if (++i == l->n) {
			l = l->next;
			i = 0;
		}
	}
}
