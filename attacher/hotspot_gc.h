/* hotspot_gc.h - following a collection in the live-object index of one
 * address space: the moves a collection logged are applied in one batch at
 * its end, then the objects that did not survive are dropped.
 *
 * Batch (os_hs_apply_moves): first every moved object is taken out at its
 * source (exact start match) with its context, then all are put back at
 * their destinations. Sliding compaction makes destination ranges overlap
 * other objects' sources; taking all out first makes the order of the
 * moves irrelevant. A destination range overwrites whatever stale object
 * was still indexed there (its memory now holds a live object).
 *
 * Survivors (os_hs_drop_dead): a tracked Java-heap object that did not move
 * is alive when its header still names the Klass* it was allocated with;
 * the klass words are read from the target in batches. The reads happen
 * when the collection's end is applied (in time order, so later than the
 * collection itself): the caller confirms that no later collection has
 * started (it would have moved objects whose moves are not applied yet),
 * else the check waits for the next collection's end. Limits: an object
 * that died and whose memory now holds a new object of the same class at
 * the same start is kept; a dead object whose header was not overwritten
 * yet (a region freed but not reused) is kept until a later collection
 * overwrites it.
 * Return convention: counts (no errors: unreadable headers mean dead).
 */
#ifndef OBJSCOPE_HOTSPOT_GC_H
#define OBJSCOPE_HOTSPOT_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attacher/hotspot_vm.h"
#include "common/hashmap.h"
#include "common/ivindex.h"

struct os_hs_move {
	uint64_t src, dst, bytes;
};

/* Applies n moves; the destinations of the objects moved are added to
 * `moved` (key: dst start). Returns how many tracked objects moved. */
size_t os_hs_apply_moves(struct os_ivindex *objects, const struct os_hs_move *mv, size_t n,
			 struct os_hmap *moved);

/* Expected Klass* of the objects of a context (its value in the index). */
typedef uint64_t (*os_hs_klass_of_fn)(void *arg, uint64_t ctx);

/* True when the headers just read show the heap as the collection left it
 * (no later collection has started meanwhile). */
typedef bool (*os_hs_confirm_fn)(void *arg);

/* Drops the objects in [lo, hi) that are not in `moved` and whose klass
 * word (read at start + klass offset of lay) does not decode to the
 * expected Klass* (or cannot be read). When confirm (may be NULL) says no
 * after the reads, nothing is dropped. Returns how many were dropped. */
size_t os_hs_drop_dead(struct os_ivindex *objects, uint64_t lo, uint64_t hi,
		       const struct os_hmap *moved, os_hs_klass_of_fn klass_of, void *arg,
		       const struct os_hs_mem *m, uint32_t pid, const struct os_hs_layout *lay,
		       os_hs_confirm_fn confirm);

#endif
