/* test_ivindex.c - the interval index against a sorted-array reference. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/ivindex.h"
#include "common/search.h"

struct ref_iv {
	uint64_t start, end, val;
};

/* Reference: a sorted array of disjoint intervals. */
struct ref {
	struct ref_iv *a;
	size_t n, cap;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Index of the first interval with start > x. */
static size_t ref_upper(const struct ref *r, uint64_t x)
{
	return os_lower_bound(r->n, i, r->a[i].start <= x);
}

static int ref_insert(struct ref *r, uint64_t s, uint64_t e, uint64_t v)
{
	size_t pos = ref_upper(r, s);

	if (e <= s)
		return -EINVAL;
	if (pos > 0 && r->a[pos - 1].end > s)
		return -EEXIST;
	if (pos < r->n && r->a[pos].start < e)
		return -EEXIST;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->a = realloc(r->a, r->cap * sizeof(*r->a));
		cr_assert_not_null(r->a);
	}
	memmove(&r->a[pos + 1], &r->a[pos], (r->n - pos) * sizeof(*r->a));
	r->a[pos] = (struct ref_iv){ s, e, v };
	r->n++;
	return 0;
}

static void ref_cut(struct ref *r, size_t pos)
{
	memmove(&r->a[pos], &r->a[pos + 1], (r->n - pos - 1) * sizeof(*r->a));
	r->n--;
}

/* Index of the interval starting at s, or SIZE_MAX. */
static size_t ref_find(const struct ref *r, uint64_t s)
{
	size_t pos = ref_upper(r, s);

	return pos > 0 && r->a[pos - 1].start == s ? pos - 1 : SIZE_MAX;
}

static const struct ref_iv *ref_lookup(const struct ref *r, uint64_t addr)
{
	size_t pos = ref_upper(r, addr);

	if (pos == 0 || r->a[pos - 1].end <= addr)
		return NULL;
	return &r->a[pos - 1];
}

/* Collected callback results. */
struct seen {
	struct ref_iv *a;
	size_t n, cap;
};

static void collect(uint64_t s, uint64_t e, uint64_t v, void *arg)
{
	struct seen *seen = arg;

	if (seen->n == seen->cap) {
		seen->cap = seen->cap ? seen->cap * 2 : 64;
		seen->a = realloc(seen->a, seen->cap * sizeof(*seen->a));
		cr_assert_not_null(seen->a);
	}
	seen->a[seen->n++] = (struct ref_iv){ s, e, v };
}

/* Expected intervals overlapping [lo, hi), in order: [first, last). */
static void ref_overlaps(const struct ref *r, uint64_t lo, uint64_t hi, size_t *first, size_t *last)
{
	size_t f = ref_upper(r, lo), l;

	if (f > 0 && r->a[f - 1].end > lo)
		f--;
	for (l = f; l < r->n && r->a[l].start < hi; l++)
		;
	*first = f;
	*last = hi > lo ? l : f;
}

static void check_same(const struct ref *r, size_t first, size_t last, const struct seen *seen)
{
	size_t i;

	cr_assert_eq(seen->n, last - first, "expected %zu intervals, got %zu", last - first, seen->n);
	for (i = 0; i < seen->n; i++) {
		cr_assert_eq(seen->a[i].start, r->a[first + i].start);
		cr_assert_eq(seen->a[i].end, r->a[first + i].end);
		cr_assert_eq(seen->a[i].val, r->a[first + i].val);
	}
}

static void check_all(struct os_ivindex *iv, const struct ref *r)
{
	struct seen seen = { 0 };

	cr_assert_eq(os_iv_count(iv), r->n);
	os_iv_foreach(iv, 0, UINT64_MAX, collect, &seen);
	check_same(r, 0, r->n, &seen);
	free(seen.a);
}

Test(ivindex, empty_index)
{
	struct os_ivindex *iv = os_iv_new();
	struct seen seen = { 0 };
	uint64_t e = 1, v = 2;

	cr_assert_not_null(iv);
	cr_assert_eq(os_iv_count(iv), 0);
	cr_assert(!os_iv_lookup(iv, 0, NULL, NULL, NULL));
	cr_assert(!os_iv_lookup(iv, 12345, NULL, NULL, NULL));
	cr_assert_eq(os_iv_remove(iv, 0, &e, &v), -ENOENT);
	cr_assert_eq(e, 1);
	cr_assert_eq(os_iv_set(iv, 5, 1), -ENOENT);
	cr_assert_eq(os_iv_remove_overlaps(iv, 0, UINT64_MAX, collect, &seen), 0);
	os_iv_foreach(iv, 0, UINT64_MAX, collect, &seen);
	cr_assert_eq(seen.n, 0);
	os_iv_free(iv);
}

Test(ivindex, adjacent_and_end_exclusive)
{
	struct os_ivindex *iv = os_iv_new();
	uint64_t s, e, v;

	cr_assert_eq(os_iv_insert(iv, 100, 200, 1), 0);
	cr_assert_eq(os_iv_insert(iv, 200, 300, 2), 0);
	cr_assert_eq(os_iv_insert(iv, 50, 100, 3), 0);
	cr_assert(os_iv_lookup(iv, 199, &s, &e, &v));
	cr_assert(s == 100 && e == 200 && v == 1);
	cr_assert(os_iv_lookup(iv, 200, &s, &e, &v));
	cr_assert(s == 200 && e == 300 && v == 2);
	cr_assert(os_iv_lookup(iv, 99, &s, NULL, &v));
	cr_assert(s == 50 && v == 3);
	cr_assert(!os_iv_lookup(iv, 300, NULL, NULL, NULL), "end is exclusive");
	cr_assert(!os_iv_lookup(iv, 49, NULL, NULL, NULL));
	/* Overlaps and same starts are refused; empty intervals are invalid. */
	cr_assert_eq(os_iv_insert(iv, 100, 101, 9), -EEXIST);
	cr_assert_eq(os_iv_insert(iv, 299, 400, 9), -EEXIST);
	cr_assert_eq(os_iv_insert(iv, 10, 51, 9), -EEXIST);
	cr_assert_eq(os_iv_insert(iv, 0, 1000, 9), -EEXIST);
	cr_assert_eq(os_iv_insert(iv, 400, 400, 9), -EINVAL);
	cr_assert_eq(os_iv_insert(iv, 300, 301, 4), 0);
	cr_assert_eq(os_iv_count(iv), 4);
	os_iv_free(iv);
}

Test(ivindex, cache_follows_changes)
{
	struct os_ivindex *iv = os_iv_new();
	uint64_t v;

	cr_assert_eq(os_iv_insert(iv, 0x1000, 0x2000, 7), 0);
	cr_assert(os_iv_lookup(iv, 0x1800, NULL, NULL, &v));
	cr_assert_eq(v, 7);
	cr_assert_eq(os_iv_set(iv, 0x1000, 8), 0);
	cr_assert(os_iv_lookup(iv, 0x1800, NULL, NULL, &v));
	cr_assert_eq(v, 8, "lookup after set must see the new value");
	cr_assert_eq(os_iv_remove(iv, 0x1000, NULL, &v), 0);
	cr_assert_eq(v, 8);
	cr_assert(!os_iv_lookup(iv, 0x1800, NULL, NULL, NULL), "stale cache after remove");
	os_iv_free(iv);
}

Test(ivindex, extreme_addresses)
{
	struct os_ivindex *iv = os_iv_new();
	uint64_t s;

	cr_assert_eq(os_iv_insert(iv, 0, 1, 1), 0);
	cr_assert_eq(os_iv_insert(iv, UINT64_MAX - 16, UINT64_MAX, 2), 0);
	cr_assert(os_iv_lookup(iv, 0, &s, NULL, NULL));
	cr_assert_eq(s, 0);
	cr_assert(os_iv_lookup(iv, UINT64_MAX - 1, &s, NULL, NULL));
	cr_assert_eq(s, UINT64_MAX - 16);
	cr_assert(!os_iv_lookup(iv, UINT64_MAX, NULL, NULL, NULL));
	cr_assert_eq(os_iv_remove_overlaps(iv, 1, UINT64_MAX, NULL, NULL), 1);
	cr_assert_eq(os_iv_count(iv), 1);
	os_iv_free(iv);
}

/* 100k random operations on ~thousands of live intervals, compared with the
 * reference after every operation that returns something. */
Test(ivindex, differential_random)
{
	struct os_ivindex *iv = os_iv_new();
	struct ref r = { 0 };
	const uint64_t space = 1u << 22;
	int op;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (op = 0; op < 100000; op++) {
		/* Alternate growing and shrinking phases so that nodes split
		 * and are emptied and freed many times over. */
		int grow = (op / 20000) % 2 == 0;
		unsigned kind = rnd() % 100;
		uint64_t s = rnd() % space, len = 1 + rnd() % 256, v = rnd();

		if (kind < (grow ? 45u : 15u)) {
			cr_assert_eq(os_iv_insert(iv, s, s + len, v), ref_insert(&r, s, s + len, v),
				     "insert [%lu,%lu)", s, s + len);
		} else if (kind < 60) {
			uint64_t e = 0, got = 0;
			size_t i = r.n && rnd() % 4 ? rnd() % r.n : SIZE_MAX;
			uint64_t key = i == SIZE_MAX ? s : r.a[i].start;
			size_t at = ref_find(&r, key);
			int ret = os_iv_remove(iv, key, &e, &got);

			if (at == SIZE_MAX) {
				cr_assert_eq(ret, -ENOENT);
			} else {
				cr_assert_eq(ret, 0);
				cr_assert_eq(e, r.a[at].end);
				cr_assert_eq(got, r.a[at].val);
				ref_cut(&r, at);
			}
		} else if (kind < 85) {
			const struct ref_iv *want;
			uint64_t a = rnd() % 2 && r.n ? r.a[rnd() % r.n].start + rnd() % 300 : s;
			uint64_t gs, ge, gv;
			bool found = os_iv_lookup(iv, a, &gs, &ge, &gv);

			want = ref_lookup(&r, a);
			cr_assert_eq(found, want != NULL, "lookup %lu", a);
			if (want)
				cr_assert(gs == want->start && ge == want->end && gv == want->val);
		} else if (kind < 90) {
			size_t at = r.n ? rnd() % r.n : SIZE_MAX;
			uint64_t key = at == SIZE_MAX ? s : r.a[at].start;

			if (at == SIZE_MAX) {
				cr_assert_eq(os_iv_set(iv, key, v), -ENOENT);
			} else {
				cr_assert_eq(os_iv_set(iv, key, v), 0);
				r.a[at].val = v;
			}
		} else if (kind < 95) {
			struct seen seen = { 0 };
			uint64_t hi = s + rnd() % 4096;
			size_t first, last, n;

			ref_overlaps(&r, s, hi, &first, &last);
			n = os_iv_remove_overlaps(iv, s, hi, collect, &seen);
			cr_assert_eq(n, last - first);
			check_same(&r, first, last, &seen);
			while (last > first)
				ref_cut(&r, --last);
			free(seen.a);
		} else {
			struct seen seen = { 0 };
			uint64_t hi = s + rnd() % 65536;
			size_t first, last;

			ref_overlaps(&r, s, hi, &first, &last);
			os_iv_foreach(iv, s, hi, collect, &seen);
			check_same(&r, first, last, &seen);
			free(seen.a);
		}
		cr_assert_eq(os_iv_count(iv), r.n);
		if (op % 10000 == 0)
			check_all(iv, &r);
	}
	check_all(iv, &r);
	/* Drain everything, then the index must be usable again. */
	cr_assert_eq(os_iv_remove_overlaps(iv, 0, UINT64_MAX, NULL, NULL), r.n);
	cr_assert_eq(os_iv_count(iv), 0);
	cr_assert(!os_iv_lookup(iv, r.n ? r.a[0].start : 0, NULL, NULL, NULL));
	cr_assert_eq(os_iv_insert(iv, 10, 20, 1), 0);
	cr_assert(os_iv_lookup(iv, 15, NULL, NULL, NULL));
	free(r.a);
	os_iv_free(iv);
}

/* One million live intervals inserted in random order, all found, then all
 * removed in another random order. */
Test(ivindex, million_intervals, .timeout = 60)
{
	const size_t n = 1000000;
	struct os_ivindex *iv = os_iv_new();
	uint32_t *perm = malloc(n * sizeof(*perm));
	size_t i;

	cr_assert_not_null(perm);
	rng_state = 42;
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/* Object i is [base + 4096 i, base + 4096 i + 1024 + i % 2048). */
	for (i = 0; i < n; i++) {
		uint64_t s = 0x7f0000000000ULL + (uint64_t)perm[i] * 4096;

		cr_assert_eq(os_iv_insert(iv, s, s + 1024 + perm[i] % 2048, perm[i]), 0);
	}
	cr_assert_eq(os_iv_count(iv), n);
	for (i = 0; i < n; i += 7) {
		uint64_t s = 0x7f0000000000ULL + (uint64_t)i * 4096, gs, gv;

		cr_assert(os_iv_lookup(iv, s + 1023, &gs, NULL, &gv));
		cr_assert(gs == s && gv == i);
		cr_assert(!os_iv_lookup(iv, s + 1024 + i % 2048, NULL, NULL, NULL));
	}
	for (i = 0; i < n; i++) {
		uint64_t s = 0x7f0000000000ULL + (uint64_t)perm[(i * 7919) % n] * 4096;

		cr_assert_eq(os_iv_remove(iv, s, NULL, NULL), 0);
	}
	cr_assert_eq(os_iv_count(iv), 0);
	cr_assert(!os_iv_lookup(iv, 0x7f0000000000ULL, NULL, NULL, NULL));
	free(perm);
	os_iv_free(iv);
}

/* os_lower_bound (common/search.h): the first index where the condition
 * fails, n when none does, 0 on an empty array; lower and upper bounds. */
Test(search, lower_bound)
{
	const uint64_t a[] = { 10, 20, 20, 20, 30 };
	size_t n = sizeof(a) / sizeof(a[0]);

	cr_assert_eq(os_lower_bound(0, i, a[i] < 20), 0);
	cr_assert_eq(os_lower_bound(n, i, a[i] < 20), 1, "first 20");
	cr_assert_eq(os_lower_bound(n, i, a[i] <= 20), 4, "first after the 20s");
	cr_assert_eq(os_lower_bound(n, i, a[i] < 5), 0);
	cr_assert_eq(os_lower_bound(n, i, a[i] < 99), n);
	for (uint64_t k = 0; k < 40; k++) {
		size_t want = 0;

		while (want < n && a[want] < k)
			want++;
		cr_assert_eq(os_lower_bound(n, i, a[i] < k), want, "key %llu",
			     (unsigned long long)k);
	}
}
