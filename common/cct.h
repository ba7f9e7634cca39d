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
	uint32_t hint; /* the child last found or made under it (0: none yet) */
};

/* A recently inserted path, outermost first: pc[i] is the frame at depth
 * i + 1 and id[i] its node. Paths of consecutive samples of one thread
 * share long outer parts; an insert starts from the longest such part
 * found in the cache and walks only the frames below it. */
#define OS_CCT_CACHE_WAYS 8
#define OS_CCT_CACHE_DEPTH 160 /* deeper frames are walked from the tree */

struct os_cct_way {
	uint32_t n;     /* valid entries; 0: unused */
	uint32_t stamp; /* last use, for replacement */
	uint64_t pc[OS_CCT_CACHE_DEPTH];
	uint32_t id[OS_CCT_CACHE_DEPTH];
};

/* Whole paths met before: a path's two 64-bit hashes -> its leaf node
 * (direct-mapped). Allocation sites repeat their exact paths: one lookup
 * then replaces the ways' scan and the walk (javac: the walk's map probes
 * were a fifth of the collector's CPU). A hit also checks the depth and
 * the innermost frame. */
#define OS_CCT_MEMO 4096 /* a power of two */

struct os_cct_memo {
	uint64_t h1, h2;
	uint32_t node; /* 0: empty */
};

struct os_cct {
	struct os_cct_node *nodes;
	uint32_t count, cap;
	struct os_hmap children;  /* (parent, pc) -> child */
	struct os_cct_way *cache; /* OS_CCT_CACHE_WAYS ways; NULL: no cache */
	struct os_cct_memo *memo; /* OS_CCT_MEMO entries, with the cache */
	uint64_t memo_hits, inserts; /* paths served from the memo; inserts with the cache */
	uint32_t clock;
};

int os_cct_init(struct os_cct *t);
void os_cct_destroy(struct os_cct *t);
/* Interns a path given leaf first (frames[0] = innermost). */
uint32_t os_cct_insert(struct os_cct *t, const uint64_t *frames, uint32_t n);
/* Turns the path cache off or on (on after init); the ids handed out are
 * the same either way (tests compare both). Returns 0 or -ENOMEM. */
int os_cct_set_cache(struct os_cct *t, int on);
/* Writes the path of `node` leaf first into out (at most max); returns its
 * full depth. */
uint32_t os_cct_path(const struct os_cct *t, uint32_t node, uint64_t *out, uint32_t max);

#endif
