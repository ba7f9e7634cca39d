/* hashmap.c - open-addressing (linear probing) uint64_t -> uint64_t map.
 *
 * Slot encoding: keys[i] == OS_HMAP_EMPTY_KEY marks a slot without a live
 * key; vals[i] then tells which kind: 0 = never used (ends a probe chain),
 * 1 = tombstone (a deleted key; probing continues past it). This is why key
 * UINT64_MAX is reserved: put/ref refuse it (-EINVAL / NULL), get/del report
 * it absent.
 *
 * The table is rebuilt when live keys plus tombstones would exceed 70% of
 * the capacity; it doubles only when live keys alone pass 35%, otherwise the
 * rebuild just drops the tombstones at the same size.
 */
#include "common/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OS_HMAP_EMPTY_KEY UINT64_MAX
#define SLOT_FREE 0
#define SLOT_TOMB 1
#define MIN_CAP 16

static inline bool slot_live(const struct os_hmap *m, size_t i)
{
	return m->keys[i] != OS_HMAP_EMPTY_KEY;
}

static inline bool slot_free(const struct os_hmap *m, size_t i)
{
	return m->keys[i] == OS_HMAP_EMPTY_KEY && m->vals[i] == SLOT_FREE;
}

void os_hmap_init(struct os_hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void os_hmap_destroy(struct os_hmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Index of `key`, or SIZE_MAX when absent. */
static size_t find(const struct os_hmap *m, uint64_t key)
{
	size_t mask, i;

	if (m->cap == 0 || key == OS_HMAP_EMPTY_KEY)
		return SIZE_MAX;
	mask = m->cap - 1;
	for (i = os_hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return i;
		if (slot_free(m, i))
			return SIZE_MAX;
	}
}

/* Rebuilds the table with `cap` slots (a power of two > count). */
static int rehash(struct os_hmap *m, size_t cap)
{
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));
	size_t i, j, mask = cap - 1;
	int ret = -ENOMEM;

	if (!keys || !vals)
		goto out;
	memset(keys, 0xff, cap * sizeof(*keys));
	for (i = 0; i < m->cap; i++) {
		if (!slot_live(m, i))
			continue;
		for (j = os_hash64(m->keys[i]) & mask; keys[j] != OS_HMAP_EMPTY_KEY; j = (j + 1) & mask)
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	keys = vals = NULL;
	m->cap = cap;
	m->tombs = 0;
	ret = 0;
out:
	free(keys);
	free(vals);
	return ret;
}

/* Makes room for one more key: after this, used slots stay under 70%. */
static int reserve_one(struct os_hmap *m)
{
	size_t cap = m->cap ? m->cap : MIN_CAP;

	if (m->cap && (m->count + m->tombs + 1) * 10 <= m->cap * 7)
		return 0;
	while ((m->count + 1) * 20 > cap * 7)
		cap *= 2;
	return rehash(m, cap);
}

uint64_t *os_hmap_ref(struct os_hmap *m, uint64_t key, uint64_t dflt)
{
	size_t i, mask, tomb = SIZE_MAX;

	if (key == OS_HMAP_EMPTY_KEY)
		return NULL;
	i = find(m, key);
	if (i != SIZE_MAX)
		return &m->vals[i];
	if (reserve_one(m) < 0)
		return NULL;
	mask = m->cap - 1;
	for (i = os_hash64(key) & mask; !slot_free(m, i); i = (i + 1) & mask) {
		if (tomb == SIZE_MAX && !slot_live(m, i))
			tomb = i;
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
		m->tombs--;
	}
	m->keys[i] = key;
	m->vals[i] = dflt;
	m->count++;
	return &m->vals[i];
}

int os_hmap_put(struct os_hmap *m, uint64_t key, uint64_t val)
{
	uint64_t *slot;

	if (key == OS_HMAP_EMPTY_KEY)
		return -EINVAL;
	slot = os_hmap_ref(m, key, val);
	if (!slot)
		return -ENOMEM;
	*slot = val;
	return 0;
}

bool os_hmap_get(const struct os_hmap *m, uint64_t key, uint64_t *val)
{
	size_t i = find(m, key);

	if (i == SIZE_MAX)
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

bool os_hmap_del(struct os_hmap *m, uint64_t key)
{
	size_t i = find(m, key), mask;

	if (i == SIZE_MAX)
		return false;
	mask = m->cap - 1;
	m->keys[i] = OS_HMAP_EMPTY_KEY;
	m->count--;
	if (!slot_free(m, (i + 1) & mask)) {
		m->vals[i] = SLOT_TOMB;
		m->tombs++;
		return true;
	}
	/* The chain ends right after i: this slot and the tombstones just
	 * before it end no probe that needs them, so they become free. */
	m->vals[i] = SLOT_FREE;
	for (i = (i - 1) & mask; !slot_live(m, i) && m->vals[i] == SLOT_TOMB; i = (i - 1) & mask) {
		m->vals[i] = SLOT_FREE;
		m->tombs--;
	}
	return true;
}

bool os_hmap_next(const struct os_hmap *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	size_t i;

	for (i = *iter; i < m->cap; i++) {
		if (!slot_live(m, i))
			continue;
		if (key)
			*key = m->keys[i];
		if (val)
			*val = m->vals[i];
		*iter = i + 1;
		return true;
	}
	*iter = m->cap;
	return false;
}
