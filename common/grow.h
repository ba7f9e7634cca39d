/* grow.h - growth of a malloc'ed array by doubling (collector side; never
 * used in preload, which must not allocate). */
#ifndef OBJSCOPE_GROW_H
#define OBJSCOPE_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The array arr of *cap elements of elem bytes, made to hold at least need:
 * arr itself when it does already, else a realloc'ed copy of at least
 * `first` elements, doubled as often as needed, with *cap updated. NULL on
 * out of memory or overflow; arr and *cap are then unchanged (still valid). */
static inline void *os_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap ? *cap : (first ? first : 1);
	void *n;

	if (need <= *cap)
		return arr;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return NULL;
		c *= 2;
	}
	if (c > SIZE_MAX / elem)
		return NULL;
	n = realloc(arr, c * elem);
	if (!n)
		return NULL;
	*cap = c;
	return n;
}

#endif
