/* search.h - the one binary search of objscope: a lower bound over a sorted
 * array, given as a condition on an index. Header only (a macro), so any
 * element type and key work without callbacks, in the collector and in the
 * in-target library alike. */
#ifndef OBJSCOPE_SEARCH_H
#define OBJSCOPE_SEARCH_H

#include <stddef.h>

/* The first index i of [0, n) at which `below` (an expression in the index
 * variable named i) is false, or n when it holds everywhere. `below` must be
 * true on a prefix of [0, n) and false after it, as "a[i].key < key" is on
 * an array sorted by key (lower bound) and "a[i].key <= key" (upper bound:
 * the first element after key, so the one before it is the last <= key). */
#define os_lower_bound(n, i, below)                                 \
	__extension__({                                             \
		size_t os_lo_ = 0, os_hi_ = (n);                    \
		while (os_lo_ < os_hi_) {                           \
			size_t i = os_lo_ + (os_hi_ - os_lo_) / 2;  \
			if (below)                                  \
				os_lo_ = i + 1;                     \
			else                                        \
				os_hi_ = i;                         \
		}                                                   \
		os_lo_;                                             \
	})

#endif
