/* grow.h - growth of a malloc'ed array by doubling (collector side; never
 * used in preload, which must not allocate). The one growth of objscope:
 * every array that grows by doubling goes through os_grow_max. */
#ifndef OBJSCOPE_GROW_H
#define OBJSCOPE_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The array arr of *cap elements of elem bytes, made to hold at least need:
 * arr itself when it does already, else a realloc'ed copy of at least
 * `first` elements, doubled as often as needed (but never past max
 * elements), with *cap updated. NULL on out of memory, overflow or need >
 * max; arr and *cap are then unchanged (still valid). */
static inline void *os_grow_max(void *arr, size_t *cap, size_t need, size_t elem, size_t first,
				size_t max)
{
	size_t c = *cap ? *cap : (first ? first : 1);
	void *n;

	if (need <= *cap)
		return arr;
	if (need > max)
		return NULL;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return NULL;
		c *= 2;
	}
	if (c > max)
		c = max;
	if (c > SIZE_MAX / elem)
		return NULL;
	n = realloc(arr, c * elem);
	if (!n)
		return NULL;
	*cap = c;
	return n;
}

/* os_grow_max without a limit. */
static inline void *os_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	return os_grow_max(arr, cap, need, elem, first, SIZE_MAX);
}

/* os_grow_max for a uint32_t capacity (at most max, itself at most
 * UINT32_MAX). */
static inline void *os_grow32(void *arr, uint32_t *cap, size_t need, size_t elem, size_t first,
			      uint32_t max)
{
	size_t c = *cap;
	void *n = os_grow_max(arr, &c, need, elem, first, max);

	if (n)
		*cap = (uint32_t)c;
	return n;
}

#endif
