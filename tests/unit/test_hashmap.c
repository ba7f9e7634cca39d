/* test_hashmap.c - the hash map against a direct-indexed reference. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/hashmap.h"

#define NKEYS 5000

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Key number i of the reference, spread over the whole 64-bit range; key 0
 * is included on purpose. */
static uint64_t key_of(size_t i)
{
	return i == 0 ? 0 : (uint64_t)i * 0x9e3779b97f4a7c15ULL;
}

Test(hashmap, empty)
{
	struct os_hmap m;
	size_t it = 0;
	uint64_t k, v;

	os_hmap_init(&m);
	cr_assert(!os_hmap_get(&m, 1, &v));
	cr_assert(!os_hmap_del(&m, 1));
	cr_assert(!os_hmap_next(&m, &it, &k, &v));
	os_hmap_destroy(&m);
}

Test(hashmap, reserved_key_refused)
{
	struct os_hmap m;

	os_hmap_init(&m);
	cr_assert_lt(os_hmap_put(&m, UINT64_MAX, 1), 0);
	cr_assert_null(os_hmap_ref(&m, UINT64_MAX, 1));
	cr_assert(!os_hmap_get(&m, UINT64_MAX, NULL));
	cr_assert_eq(m.count, 0);
	os_hmap_destroy(&m);
}

Test(hashmap, ref_inserts_default_once)
{
	struct os_hmap m;
	uint64_t *p, v;

	os_hmap_init(&m);
	p = os_hmap_ref(&m, 77, 5);
	cr_assert_not_null(p);
	cr_assert_eq(*p, 5);
	*p += 10;
	p = os_hmap_ref(&m, 77, 5);
	cr_assert_eq(*p, 15, "an existing value is not reset to the default");
	cr_assert(os_hmap_get(&m, 77, &v));
	cr_assert_eq(v, 15);
	cr_assert_eq(m.count, 1);
	os_hmap_destroy(&m);
}

Test(hashmap, random_ops_vs_reference)
{
	static bool present[NKEYS];
	static uint64_t vals[NKEYS];
	size_t live = 0, i, it, seen;
	struct os_hmap m;
	uint64_t k, v;
	int op;

	os_hmap_init(&m);
	rng_state = 0x12345678;
	for (op = 0; op < 300000; op++) {
		/* Phases favouring inserts then deletes: growth and tombstones. */
		unsigned put_pct = (op / 30000) % 2 ? 25 : 60;
		size_t ki = rnd() % NKEYS;
		unsigned kind = rnd() % 100;

		if (kind < put_pct) {
			v = rnd();
			cr_assert_eq(os_hmap_put(&m, key_of(ki), v), 0);
			live += !present[ki];
			present[ki] = true;
			vals[ki] = v;
		} else if (kind < put_pct + 10) {
			uint64_t *p = os_hmap_ref(&m, key_of(ki), 1000);

			cr_assert_not_null(p);
			if (!present[ki]) {
				cr_assert_eq(*p, 1000);
				vals[ki] = 1000;
				present[ki] = true;
				live++;
			}
			cr_assert_eq(*p, vals[ki]);
			(*p)++;
			vals[ki]++;
		} else if (kind < 80) {
			cr_assert_eq(os_hmap_del(&m, key_of(ki)), present[ki]);
			live -= present[ki];
			present[ki] = false;
		} else {
			bool got = os_hmap_get(&m, key_of(ki), &v);

			cr_assert_eq(got, present[ki], "key %zu", ki);
			if (got)
				cr_assert_eq(v, vals[ki]);
		}
		cr_assert_eq(m.count, live);
		cr_assert_lt((m.count + m.tombs) * 10, m.cap * 7 + 10, "load above 70%%");
	}
	/* Iteration yields every live key exactly once. */
	seen = 0;
	for (it = 0; os_hmap_next(&m, &it, &k, &v);) {
		for (i = 0; i < NKEYS && key_of(i) != k; i++)
			;
		cr_assert_lt(i, NKEYS, "unknown key %lu", k);
		cr_assert(present[i], "deleted key %lu iterated", k);
		cr_assert_eq(v, vals[i]);
		present[i] = false; /* a second visit would fail above */
		seen++;
	}
	cr_assert_eq(seen, live);
	os_hmap_destroy(&m);
}

Test(hashmap, growth_keeps_all_keys)
{
	struct os_hmap m;
	uint64_t v, i;

	os_hmap_init(&m);
	for (i = 0; i < 200000; i++)
		cr_assert_eq(os_hmap_put(&m, i << 12, i), 0);
	cr_assert_eq(m.count, 200000);
	cr_assert_geq(m.cap * 7, m.count * 10);
	cr_assert_eq(m.cap & (m.cap - 1), 0, "capacity is a power of two");
	for (i = 0; i < 200000; i++) {
		cr_assert(os_hmap_get(&m, i << 12, &v));
		cr_assert_eq(v, i);
	}
	cr_assert(!os_hmap_get(&m, 200000ULL << 12, &v));
	os_hmap_destroy(&m);
}

/* A steady population with churn must not grow the table forever: the
 * rebuild drops tombstones instead. */
Test(hashmap, churn_reuses_space)
{
	struct os_hmap m;
	uint64_t i;
	size_t cap;

	os_hmap_init(&m);
	for (i = 0; i < 1000; i++)
		cr_assert_eq(os_hmap_put(&m, i, i), 0);
	cap = m.cap;
	for (i = 1000; i < 200000; i++) {
		cr_assert(os_hmap_del(&m, i - 1000));
		cr_assert_eq(os_hmap_put(&m, i, i), 0);
	}
	cr_assert_eq(m.count, 1000);
	cr_assert_leq(m.cap, cap * 2);
	for (i = 199000; i < 200000; i++)
		cr_assert(os_hmap_get(&m, i, NULL));
	cr_assert(!os_hmap_get(&m, 198999, NULL));
	os_hmap_destroy(&m);
}

/* os_grow (common/grow.h): doubling from `first`, the old contents kept,
 * no realloc when there is room, NULL and nothing changed on overflow. */
Test(grow, doubles_keeps_contents_and_refuses_overflow)
{
	uint32_t *a = NULL, *b;
	uintptr_t before;
	size_t cap = 0;

	a = os_grow(a, &cap, 1, sizeof(*a), 4);
	cr_assert_not_null(a);
	cr_assert_eq(cap, 4);
	for (uint32_t i = 0; i < 4; i++)
		a[i] = i * 7;
	before = (uintptr_t)a;
	b = os_grow(a, &cap, 4, sizeof(*a), 4);
	cr_assert_eq((uintptr_t)b, before, "room enough: the same array");
	cr_assert_eq(cap, 4);
	a = b;
	a = os_grow(a, &cap, 9, sizeof(*a), 4);
	cr_assert_not_null(a);
	cr_assert_eq(cap, 16, "4 doubled until it holds 9");
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(a[i], i * 7);
	free(a);
	/* overflow is refused before any realloc (an array of NULL here:
	 * nothing to reallocate, the answer must still be NULL) */
	cap = 16;
	b = os_grow(NULL, &cap, SIZE_MAX / 2 + 2, sizeof(*b), 4);
	cr_assert_null(b);
	cr_assert_eq(cap, 16, "unchanged on failure");
	b = os_grow(NULL, &cap, SIZE_MAX / 4 + 1, sizeof(*b), 4);
	cr_assert_null(b, "count x element size would overflow");
	cr_assert_eq(cap, 16);
}

/* os_grow_max / os_grow32: the doubling stops at the limit, a need past it
 * is refused with nothing changed. */
Test(grow, limited_and_uint32_capacities)
{
	uint32_t *a = NULL, cap32 = 0;
	size_t cap = 0;
	char *s;

	s = os_grow_max(NULL, &cap, 5, 1, 4, 6);
	cr_assert_not_null(s);
	cr_assert_eq(cap, 6, "4 doubled is 8, cut to the limit 6");
	cr_assert_null(os_grow_max(s, &cap, 7, 1, 4, 6), "past the limit");
	cr_assert_eq(cap, 6);
	free(s);
	a = os_grow32(a, &cap32, 3, sizeof(*a), 2, UINT32_MAX);
	cr_assert_not_null(a);
	cr_assert_eq(cap32, 4);
	a[3] = 42;
	a = os_grow32(a, &cap32, 5, sizeof(*a), 2, UINT32_MAX);
	cr_assert_not_null(a);
	cr_assert_eq(cap32, 8);
	cr_assert_eq(a[3], 42);
	cap32 = 8;
	cr_assert_null(os_grow32(a, &cap32, (size_t)UINT32_MAX + 1, sizeof(*a), 2, UINT32_MAX));
	cr_assert_eq(cap32, 8);
	free(a);
}
