/* lifetime.h - object lifetimes per allocation context (ROLP for managed
 * heaps, DHAT-like for native objects): the engine behind the lifetime
 * observer (lifetime_collector.c), fed with births, ends, moves and
 * collections; it knows nothing of the collector (tests drive it directly).
 *
 * Managed objects are aged in collections survived: a collection that moved
 * an object (attrib.h os_gc_report) aged it; one that did not move it aged
 * it when the object is in the old generation (promoted earlier, or the
 * heap says so), and otherwise saw it die: a young object a collection
 * leaves behind is garbage (copying young collections move every survivor).
 * An object the index no longer holds died at the collection that found it
 * so (births over dead managed objects are not looked at: the collections
 * judge them). Native objects: time from allocation to free, the leaks
 * (live at the end), live bytes per context at their peak. docs/LIFETIMES.md.
 * Return convention: 0 / -errno.
 */
#ifndef OBJSCOPE_LIFETIME_H
#define OBJSCOPE_LIFETIME_H

#include <stdbool.h>
#include <stdint.h>

#include "attacher/core/attrib.h"
#include "attacher/core/observer.h"
#include "common/hashmap.h"
#include "common/profile.h"

/* Whether the index still holds the object [start, end) of asid. */
typedef bool (*os_lt_held_fn)(void *arg, uint32_t asid, uint64_t start, uint64_t end);
/* enum os_gen of addr of asid as the collection being reported left it. */
typedef uint32_t (*os_lt_gen_fn)(void *arg, uint32_t asid, uint64_t addr);

struct os_lt_obj;
struct os_lt_ctx;
struct os_lt_heap;

struct os_lt {
	struct os_hmap at;          /* asid << 48 | start -> index into obj */
	struct os_lt_obj *obj;
	size_t nobj, capobj;
	uint32_t *freelist;         /* unused indices of obj */
	size_t nfree, capfree;
	struct os_lt_ctx *ctx;      /* by attribution context */
	uint32_t nctx;
	struct os_lt_heap *heaps;   /* managed heaps (one per asid) */
	uint32_t nheaps;
	double live_bytes, peak_bytes; /* native objects, all contexts */
	uint64_t peak_ns;
	uint64_t collections, unjudged, unaged;
	uint64_t unseen_ends;       /* native objects ended by a birth over them */
	double survivor_bytes[OS_LT_BINS]; /* profile.h os_lifetimes.survivor_bytes */
	bool oom;                   /* some object could not be followed (a note says it) */
};

void os_lt_init(struct os_lt *t);
void os_lt_destroy(struct os_lt *t);
/* An object tracked from now: ctx its attribution context, w its weight,
 * managed: it lives in a collected heap (aged in collections). now: ns
 * from the start of the run. An object already at start ends first. */
void os_lt_born(struct os_lt *t, uint32_t asid, uint64_t start, uint64_t size, uint32_t ctx,
		double w, bool managed, uint64_t now);
/* The object at start ends (freed; managed: gone at its current age). */
void os_lt_end(struct os_lt *t, uint32_t asid, uint64_t start, uint64_t now);
/* The object at from is now at to, size bytes (mremap). */
void os_lt_move(struct os_lt *t, uint32_t asid, uint64_t from, uint64_t to, uint64_t size,
		uint64_t now);
/* A collection of asid's managed heap was applied (moves, objects found
 * dead removed from the index): held and gen answer for the heap now. */
void os_lt_collected(struct os_lt *t, const struct os_gc_report *r, os_lt_held_fn held,
		     os_lt_gen_fn gen, void *arg);
/* The run is over at now: the objects still live are counted as such;
 * native ones the index (held, may be NULL) no longer holds ended unseen. */
void os_lt_finish(struct os_lt *t, uint64_t now, os_lt_held_fn held, void *arg);
/* The figures of attribution context ctx (NULL: none); promotions are
 * marked measured when some collection of its heap knew its generations (a
 * promotion by one that did not is counted at the next one that does). */
const struct os_lifetime *os_lt_context(const struct os_lt *t, uint32_t ctx);

/* The observer: enabled by --lifetimes (attacher/analyses/analyses.c). */
extern const struct os_observer_ops os_lifetime_observer;

/* The bin of a native lifetime of ns nanoseconds (profile.h OS_LT_BINS). */
uint32_t os_lt_time_bin(uint64_t ns);

#endif
