/* reuse.h - the reuse distance analysis (--reuse; docs/REUSE.md).
 *
 * Measure: on a sampled access (observer stage `take`, while the target
 * runs) of a watchable width, a watchpoint PAIR (watch_arm_pair, perf
 * route) is armed on that element on the sampling thread: the kernel
 * reports the next two accesses to it and the thread's CPU time between
 * them, one reuse time (minus the calibrated cost of the first trap). The
 * element is identified by its object (attribution at stage `sample`) and
 * its offset: when a collection moves the object (`collected`), the pair is
 * moved in place to the new address (watch_move) and keeps its first
 * access; a free, an unmap or a death ends it (counted). At most
 * OS_RU_PER_THREAD pairs per thread at a time, at most OS_RU_RATE pairs per second in all.
 *
 * Model: reuse times become distances by the footprint formula
 * (common/reuse_math.h) with an access rate, an ESTIMATE (docs/REUSE.md
 * "Access rate"): from the sampled objects (os_kac_rate: each object with
 * enough reuse times gives its size over its mean reuse time, Kac's lemma;
 * over them, divided by their shares of their threads' pairs), else the
 * calibrated one
 *     bytes/ns = instructions/ns (calibrated at start on this CPU)
 *              * share of sampled instructions that access memory
 *              * mean width of the watched accesses,
 * whose error is the target's instruction rate against the calibration
 * loop's. With a PMU, counted memory operations would replace both. */
#ifndef OBJSCOPE_REUSE_H
#define OBJSCOPE_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_RU_RATE 100                   /* pairs armed per second, at most */
#define OS_RU_MAX_AGE_NS 2000000000ULL   /* a pair without its reuse by then: censored */
#define OS_RU_MAX_ARMED 64
#define OS_RU_PER_THREAD 3               /* pairs armed on one thread at once (of 4 registers) */

/* Instructions per ns of this CPU on a loop of L1-resident loads and adds
 * (8 instructions, 2 loads per iteration), the best of a few runs. */
double os_ru_calibrate_ips(void);
/* The CPU time a watchpoint pair's first trap adds to its reuse time, once:
 * a pair on two back-to-back accesses of the calling thread, through
 * `self` (a perf-route watch_set of our own process); ns, or -errno. The
 * observer takes OS_RU_TRAP_START of them at the start and one every
 * OS_RU_TRAP_EVERY_NS, and subtracts their median (the cost drifts with
 * the machine's load). */
struct watch_set;
double os_ru_trap_once(struct watch_set *self, uint64_t cookie);
#define OS_RU_TRAP_START 15
#define OS_RU_TRAP_EVERY_NS 250000000ULL
#define OS_RU_TRAP_MAX 1024
/* Median of v[n] (sorts v); NAN when n == 0. */
double os_ru_median(double *v, size_t n);
/* This machine's cache sizes in bytes (sysfs: L1d, L2, LLC; 0 unknown). */
void os_ru_cache_sizes(uint64_t out[3]);

/* Addresses lo[n] of objects before a collection, after its moves: each
 * lo[i] that is a move's `from` becomes its `to` and moved[i] is set, the
 * others unset (a chain A -> B, B -> C moves each object once; O(moves x
 * log n)). 0, -ENOMEM. */
struct os_obj_move;
int os_ru_follow_moves(uint64_t *lo, bool *moved, size_t n, const struct os_obj_move *moves,
		       size_t nmoves);

struct os_observer_ops;
extern const struct os_observer_ops os_reuse_observer;

#endif
