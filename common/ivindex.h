/* ivindex.h - address-interval index: the live-object map of the collector.
 *
 * Holds disjoint half-open intervals [start, end) with a 64-bit value each
 * and answers "which interval encloses address A" (a predecessor search on
 * start followed by an end check). Implemented as a B+ tree with wide,
 * cache-friendly nodes plus a one-entry lookup cache (samples arrive in
 * bursts on the same object).
 *
 * Return convention: 0 on success, -errno on failure (-ENOMEM, -EEXIST when
 * an interval already starts at `start`, -ENOENT when nothing matches).
 * Callers keep intervals disjoint: insert fails with -EEXIST on the same
 * start; use os_iv_remove_overlaps() first when a range may be stale.
 */
#ifndef OBJSCOPE_IVINDEX_H
#define OBJSCOPE_IVINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct os_ivindex;

typedef void (*os_iv_fn)(uint64_t start, uint64_t end, uint64_t val, void *arg);

struct os_ivindex *os_iv_new(void);
void os_iv_free(struct os_ivindex *iv);
size_t os_iv_count(const struct os_ivindex *iv);

int os_iv_insert(struct os_ivindex *iv, uint64_t start, uint64_t end, uint64_t val);
/* Removes the interval starting exactly at `start`; its end/value if non-NULL. */
int os_iv_remove(struct os_ivindex *iv, uint64_t start, uint64_t *end, uint64_t *val);
/* Finds the interval enclosing `addr`; true if found. Outputs may be NULL. */
bool os_iv_lookup(struct os_ivindex *iv, uint64_t addr, uint64_t *start, uint64_t *end,
		  uint64_t *val);
/* Changes the value of the interval starting at `start`. */
int os_iv_set(struct os_ivindex *iv, uint64_t start, uint64_t val);
/* Removes every interval overlapping [lo, hi), calling fn (may be NULL) for
 * each before removal. Returns how many were removed. */
size_t os_iv_remove_overlaps(struct os_ivindex *iv, uint64_t lo, uint64_t hi, os_iv_fn fn,
			     void *arg);
/* Calls fn for every interval overlapping [lo, hi) in address order. fn must
 * not modify the index. */
void os_iv_foreach(struct os_ivindex *iv, uint64_t lo, uint64_t hi, os_iv_fn fn, void *arg);

#endif
