/* hashmap.h - open-addressing hash map from uint64_t keys to uint64_t values.
 * The one hash map of the project (collector side; never used in preload).
 * Key UINT64_MAX is reserved. Return convention: 0 on success, -ENOMEM. */
#ifndef OBJSCOPE_HASHMAP_H
#define OBJSCOPE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot: key and value side by side, so a probe touches one cache line. */
struct os_hmap_slot {
	uint64_t key;
	uint64_t val;
};

struct os_hmap {
	struct os_hmap_slot *slots;
	size_t cap;    /* power of two, 0 when empty */
	size_t count;
	size_t tombs;
};

void os_hmap_init(struct os_hmap *m);
void os_hmap_destroy(struct os_hmap *m);
bool os_hmap_get(const struct os_hmap *m, uint64_t key, uint64_t *val);
int os_hmap_put(struct os_hmap *m, uint64_t key, uint64_t val);
/* Returns a pointer to the value slot, inserting `dflt` if absent; NULL on
 * out of memory. The pointer is valid until the next insertion. */
uint64_t *os_hmap_ref(struct os_hmap *m, uint64_t key, uint64_t dflt);
bool os_hmap_del(struct os_hmap *m, uint64_t key);
/* Iteration: for (i = 0; os_hmap_next(m, &i, &k, &v); ) ... */
bool os_hmap_next(const struct os_hmap *m, size_t *iter, uint64_t *key, uint64_t *val);
/* Mixing function used by the map (exposed for composite keys). */
static inline uint64_t os_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
