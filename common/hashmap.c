/* hashmap.c - open-addressing (linear probing) uint64_t -> uint64_t map.
 *
 * Keys and values are interleaved in one slot array (one cache line per
 * probe). Slot encoding: slots[i].key == OS_HMAP_EMPTY_KEY marks a slot
 * without a live key; slots[i].val then tells which kind: 0 = never used (ends a probe chain),
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
	return m->slots[i].key != OS_HMAP_EMPTY_KEY;
}

static inline bool slot_free(const struct os_hmap *m, size_t i)
{
	return m->slots[i].key == OS_HMAP_EMPTY_KEY && m->slots[i].val == SLOT_FREE;
}

void os_hmap_init(struct os_hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void os_hmap_destroy(struct os_hmap *m)
{
	free(m->slots);
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
		const struct os_hmap_slot *s = &m->slots[i];

		if (s->key == key)
			return i;
		if (s->key == OS_HMAP_EMPTY_KEY && s->val == SLOT_FREE)
			return SIZE_MAX;
	}
}

/* Rebuilds the table with `cap` slots (a power of two > count). */
static int rehash(struct os_hmap *m, size_t cap)
{
	struct os_hmap_slot *slots = malloc(cap * sizeof(*slots));
	size_t i, j, mask = cap - 1;

	if (!slots)
		return -ENOMEM;
	for (j = 0; j < cap; j++) {
		slots[j].key = OS_HMAP_EMPTY_KEY;
		slots[j].val = SLOT_FREE;
	}
	for (i = 0; i < m->cap; i++) {
		if (!slot_live(m, i))
			continue;
		for (j = os_hash64(m->slots[i].key) & mask; slots[j].key != OS_HMAP_EMPTY_KEY;
		     j = (j + 1) & mask)
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->tombs = 0;
	return 0;
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
	if (m->cap) {
		/* one probe finds the key or where it goes (first tombstone or the
		 * free slot ending the chain) */
		mask = m->cap - 1;
		for (i = os_hash64(key) & mask;; i = (i + 1) & mask) {
			struct os_hmap_slot *s = &m->slots[i];

			if (s->key == key)
				return &s->val;
			if (s->key != OS_HMAP_EMPTY_KEY)
				continue;
			if (s->val == SLOT_FREE)
				break;
			if (tomb == SIZE_MAX)
				tomb = i;
		}
		if ((m->count + m->tombs + 1) * 10 <= m->cap * 7)
			goto insert;
	}
	if (reserve_one(m) < 0)
		return NULL;
	tomb = SIZE_MAX;
	mask = m->cap - 1;
	for (i = os_hash64(key) & mask; !slot_free(m, i); i = (i + 1) & mask) {
		if (tomb == SIZE_MAX && !slot_live(m, i))
			tomb = i;
	}
insert:
	if (tomb != SIZE_MAX) {
		i = tomb;
		m->tombs--;
	}
	m->slots[i].key = key;
	m->slots[i].val = dflt;
	m->count++;
	return &m->slots[i].val;
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
		*val = m->slots[i].val;
	return true;
}

bool os_hmap_del(struct os_hmap *m, uint64_t key)
{
	size_t i = find(m, key), mask;

	if (i == SIZE_MAX)
		return false;
	mask = m->cap - 1;
	m->slots[i].key = OS_HMAP_EMPTY_KEY;
	m->count--;
	if (!slot_free(m, (i + 1) & mask)) {
		m->slots[i].val = SLOT_TOMB;
		m->tombs++;
		return true;
	}
	/* The chain ends right after i: this slot and the tombstones just
	 * before it end no probe that needs them, so they become free. */
	m->slots[i].val = SLOT_FREE;
	for (i = (i - 1) & mask; !slot_live(m, i) && m->slots[i].val == SLOT_TOMB;
	     i = (i - 1) & mask) {
		m->slots[i].val = SLOT_FREE;
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
			*key = m->slots[i].key;
		if (val)
			*val = m->slots[i].val;
		*iter = i + 1;
		return true;
	}
	*iter = m->cap;
	return false;
}
