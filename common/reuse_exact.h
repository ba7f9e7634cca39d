/* reuse_exact.h - exact reuse distances of a complete address trace, the
 * reference the sampled measurement is checked against (docs/REUSE.md).
 *
 * Definition (ViRDA): the reuse distance of an access to [addr, addr+width)
 * is the number of distinct bytes touched since the previous access to the
 * element (the last access to byte addr); none: cold (infinite). A Fenwick
 * tree over access times holds, at each time, how many bytes had their
 * last access then; the distance is its sum over (previous, now). Addresses
 * are taken as given: a trace of a moving collector would need identities
 * (the fixtures it is fed with are native). Return convention: 0 / -errno. */
#ifndef OBJSCOPE_COMMON_REUSE_EXACT_H
#define OBJSCOPE_COMMON_REUSE_EXACT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hashmap.h"

struct os_rx {
	struct os_hmap last;     /* byte address -> time of its last access (1-based) */
	uint32_t *tree;          /* Fenwick tree over times 1..cap */
	uint64_t cap, now;
};

void os_rx_init(struct os_rx *x);
void os_rx_destroy(struct os_rx *x);
/* One access of width bytes (1..64): 1 (cold) or 0 with *dist in bytes;
 * -EINVAL, -ENOMEM. */
int os_rx_access(struct os_rx *x, uint64_t addr, unsigned width, uint64_t *dist);

#endif
