/* cct.h - calling-context tree: interns call paths of raw addresses.
 *
 * Every distinct path (outermost frame at the root) is one node; a node id
 * names the whole path from the root to it. Node 0 is the root (empty path).
 * Used by the collector for allocation paths and access paths of one
 * address space: ids are stable for the tree's lifetime.
 * Return convention: ids >= 0; OS_CCT_NONE on out of memory.
 */
#ifndef OBJSCOPE_CCT_H
#define OBJSCOPE_CCT_H

#include <stddef.h>
#include <stdint.h>
#include "hashmap.h"

#define OS_CCT_NONE UINT32_MAX

struct os_cct_node {
	uint64_t pc;
	uint32_t parent;
	uint32_t depth;
};

struct os_cct {
	struct os_cct_node *nodes;
	uint32_t count, cap;
	struct os_hmap children; /* (parent, pc) -> child */
};

int os_cct_init(struct os_cct *t);
void os_cct_destroy(struct os_cct *t);
/* Interns a path given leaf first (frames[0] = innermost). */
uint32_t os_cct_insert(struct os_cct *t, const uint64_t *frames, uint32_t n);
/* Writes the path of `node` leaf first into out (at most max); returns its
 * full depth. */
uint32_t os_cct_path(const struct os_cct *t, uint32_t node, uint64_t *out, uint32_t max);

#endif
