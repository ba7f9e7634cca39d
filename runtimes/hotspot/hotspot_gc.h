/* hotspot_gc.h - following a collection in the live-object index of one
 * address space: the moves a collection logged are applied in one batch at
 * its end, then the objects that did not survive are dropped.
 *
 * Batch (os_hs_apply_moves): the moves are resolved in the order the target
 * numbered them (the sequence number in each move's bytes word; moves are
 * buffered per GC thread and arrive grouped by thread). An object is taken
 * out of the index at the source of its first move (exact start match);
 * a later move whose source range holds objects that an earlier move of
 * the same collection put there carries them along (ParallelCompact's
 * shadow regions: a worker compacts into a free region, the whole region
 * is copied back to its destination later, by any worker, and the shadow
 * region is reused). Only then are all put back at their final places:
 * sliding compaction makes destination ranges overlap other objects'
 * sources, and the index is not touched while the order is resolved. A
 * final range overwrites whatever stale object was still indexed there
 * (its memory now holds a live object). Moves of equal number (none from
 * the target, unit tests) never carry earlier ones along: their order is
 * unknown.
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

#include "runtimes/hotspot/hotspot_abi.h"

#include "runtimes/hotspot/hotspot_vm.h"
#include "common/hashmap.h"
#include "common/ivindex.h"

struct os_hs_move {
	uint64_t src, dst, bytes;
	uint32_t seq;           /* the target's number, modulo 2^24 (0: unknown) */
};

/* The bytes word of an OS_EV_MOVES triple: bytes | (sequence << 40), the
 * sequence being 24 bits that wrap (runtimes/hotspot/target/hotspot_moves.c). A batch of
 * fewer than 2^23 moves is unwrapped by os_hs_apply_moves. */

static inline void os_hs_move_decode(uint64_t word, uint64_t *bytes, uint32_t *seq)
{
	*bytes = word & ((1ULL << OS_HS_MOVE_SEQ_SHIFT) - 1);
	*seq = (uint32_t)(word >> OS_HS_MOVE_SEQ_SHIFT) & ((1U << OS_HS_MOVE_SEQ_BITS) - 1);
}

/* Applies the n moves of one collection (any order: they are sorted by
 * sequence number); the final places of the objects moved are added to
 * `moved` (key: start, value: where the object was before). Returns how many tracked objects moved. */
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
