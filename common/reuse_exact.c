/* reuse_exact.c - exact reuse distances (reuse_exact.h). */
#include "common/reuse_exact.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void os_rx_init(struct os_rx *x)
{
	memset(x, 0, sizeof(*x));
	os_hmap_init(&x->last);
}

void os_rx_destroy(struct os_rx *x)
{
	os_hmap_destroy(&x->last);
	free(x->tree);
	memset(x, 0, sizeof(*x));
}

static void add(struct os_rx *x, uint64_t i, int64_t d)
{
	for (; i <= x->cap; i += i & -i)
		x->tree[i] = (uint32_t)((int64_t)x->tree[i] + d);
}

static uint64_t prefix(const struct os_rx *x, uint64_t i)
{
	uint64_t s = 0;

	for (; i; i -= i & -i)
		s += x->tree[i];
	return s;
}

/* Doubles the tree: the raw count at each time is recovered and the tree
 * rebuilt over the larger range. */
static int grow(struct os_rx *x)
{
	uint64_t cap = x->cap ? x->cap * 2 : 1 << 16;
	uint32_t *t = calloc(cap + 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint64_t i = 1; i <= x->cap; i++)
		t[i] = (uint32_t)(prefix(x, i) - prefix(x, i - 1));
	for (uint64_t i = 1; i <= cap; i++) {
		uint64_t j = i + (i & -i);

		if (j <= cap)
			t[j] += t[i];
	}
	free(x->tree);
	x->tree = t;
	x->cap = cap;
	return 0;
}

int os_rx_access(struct os_rx *x, uint64_t addr, unsigned width, uint64_t *dist)
{
	uint64_t prev = 0;
	int cold;

	if (!width || width > 64 || addr + width < addr)
		return -EINVAL;
	if (x->now + 1 > x->cap && grow(x))
		return -ENOMEM;
	x->now++;
	cold = !os_hmap_get(&x->last, addr, &prev);
	if (!cold)
		*dist = prefix(x, x->now - 1) - prefix(x, prev);
	for (unsigned k = 0; k < width; k++) {
		uint64_t *slot = os_hmap_ref(&x->last, addr + k, 0);

		if (!slot)
			return -ENOMEM;
		if (*slot)
			add(x, *slot, -1);
		*slot = x->now;
		add(x, x->now, 1);
	}
	return cold;
}
