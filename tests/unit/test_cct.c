/* test_cct.c - calling-context tree: interning, paths, shared prefixes and
 * child-key collisions. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/cct.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

Test(cct, root_and_empty_path)
{
	struct os_cct t;
	uint64_t out[4];

	cr_assert_eq(os_cct_init(&t), 0);
	cr_assert_eq(os_cct_insert(&t, NULL, 0), 0);
	cr_assert_eq(os_cct_path(&t, 0, out, 4), 0);
	cr_assert_eq(os_cct_path(&t, 12345, out, 4), 0, "unknown node has no path");
	os_cct_destroy(&t);
}

Test(cct, same_path_same_id)
{
	const uint64_t a[] = { 0x401000, 0x402000, 0x403000 };
	const uint64_t b[] = { 0x401000, 0x402000, 0x403000 };
	const uint64_t c[] = { 0x403000, 0x402000, 0x401000 };
	struct os_cct t;
	uint32_t ia, ib, ic;

	cr_assert_eq(os_cct_init(&t), 0);
	ia = os_cct_insert(&t, a, 3);
	ib = os_cct_insert(&t, b, 3);
	ic = os_cct_insert(&t, c, 3);
	cr_assert_neq(ia, OS_CCT_NONE);
	cr_assert_eq(ia, ib);
	cr_assert_neq(ia, ic, "order of frames matters");
	cr_assert_eq(t.count, 1 + 3 + 3);
	os_cct_destroy(&t);
}

Test(cct, shared_prefixes)
{
	/* Leaf first: both paths are main -> f -> {g, h}. */
	const uint64_t p1[] = { 0x30, 0x20, 0x10 };
	const uint64_t p2[] = { 0x31, 0x20, 0x10 };
	const uint64_t p3[] = { 0x20, 0x10 };
	struct os_cct t;
	uint32_t n1, n2, n3;

	cr_assert_eq(os_cct_init(&t), 0);
	n1 = os_cct_insert(&t, p1, 3);
	n2 = os_cct_insert(&t, p2, 3);
	n3 = os_cct_insert(&t, p3, 2);
	cr_assert_neq(n1, n2);
	cr_assert_eq(t.nodes[n1].parent, n3);
	cr_assert_eq(t.nodes[n2].parent, n3);
	cr_assert_eq(t.nodes[n3].depth, 2);
	cr_assert_eq(t.nodes[n1].depth, 3);
	cr_assert_eq(t.count, 1 + 4, "root, main, f, g, h");
	os_cct_destroy(&t);
}

Test(cct, path_round_trip_random)
{
	enum { NPATHS = 20000, MAXD = 40 };
	static uint64_t paths[NPATHS][MAXD];
	static uint32_t depth[NPATHS], ids[NPATHS];
	uint64_t out[MAXD];
	struct os_cct t;
	uint32_t i, j;

	cr_assert_eq(os_cct_init(&t), 0);
	rng_state = 99;
	for (i = 0; i < NPATHS; i++) {
		/* A small alphabet of pcs: many shared prefixes. */
		depth[i] = 1 + rnd() % MAXD;
		for (j = 0; j < depth[i]; j++)
			paths[i][j] = 0x400000 + (rnd() % 8) * 16;
		ids[i] = os_cct_insert(&t, paths[i], depth[i]);
		cr_assert_neq(ids[i], OS_CCT_NONE);
	}
	for (i = 0; i < NPATHS; i++) {
		cr_assert_eq(os_cct_insert(&t, paths[i], depth[i]), ids[i], "path %u re-interned", i);
		cr_assert_eq(os_cct_path(&t, ids[i], out, MAXD), depth[i]);
		for (j = 0; j < depth[i]; j++)
			cr_assert_eq(out[j], paths[i][j], "path %u frame %u", i, j);
	}
	/* A short buffer gets the leaf end and the full depth. */
	cr_assert_eq(os_cct_path(&t, ids[0], out, 1), depth[0]);
	cr_assert_eq(out[0], paths[0][0]);
	os_cct_destroy(&t);
}

/* Inverse of os_hash64 (xorshift by 33 is its own inverse; the odd
 * multipliers are inverted modulo 2^64 by Newton's iteration). */
static uint64_t inv_mul(uint64_t c)
{
	uint64_t x = c;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - c * x;
	return x;
}

static uint64_t unhash64(uint64_t x)
{
	x ^= x >> 33;
	x *= inv_mul(0xc4ceb9fe1a85ec53ULL);
	x ^= x >> 33;
	x *= inv_mul(0xff51afd7ed558ccdULL);
	x ^= x >> 33;
	return x;
}

/* Builds pcs whose hashes differ only in the low bits that the parent id
 * flips, so (root, pc1) and (node a, pc2) hash to the same 64-bit value. The
 * tree must still keep them apart. */
Test(cct, colliding_child_keys)
{
	struct os_cct t;
	uint64_t pc_a = 0x1111, pc1 = 0x2222, pc2, out[2];
	uint32_t a, n1, n2;

	cr_assert_eq(unhash64(os_hash64(0xdeadbeef)), 0xdeadbeef);
	cr_assert_eq(os_cct_init(&t), 0);
	a = os_cct_insert(&t, &pc_a, 1);
	cr_assert_neq(a, 0);
	pc2 = unhash64(os_hash64(pc1) ^ a);
	cr_assert_eq(os_hash64(pc1) ^ 0, os_hash64(pc2) ^ a, "keys collide");

	n1 = os_cct_insert(&t, &pc1, 1);
	n2 = os_cct_insert(&t, (uint64_t[]){ pc2, pc_a }, 2);
	cr_assert_neq(n1, n2);
	cr_assert_eq(os_cct_path(&t, n1, out, 2), 1);
	cr_assert_eq(out[0], pc1);
	cr_assert_eq(os_cct_path(&t, n2, out, 2), 2);
	cr_assert(out[0] == pc2 && out[1] == pc_a);
	/* Lookups through the collision chain find the same nodes again. */
	cr_assert_eq(os_cct_insert(&t, &pc1, 1), n1);
	cr_assert_eq(os_cct_insert(&t, (uint64_t[]){ pc2, pc_a }, 2), n2);
	cr_assert_eq(t.count, 4);
	os_cct_destroy(&t);
}

/* The path cache must not change any id: a cached tree and an uncached one
 * fed the same inserts hand out the same ids and make the same nodes.
 * Streams of paths like a sampler's: several threads (more than the cache
 * has ways, so ways are evicted and taken over), each with a stack that
 * changes only at its inner end between samples, all under one shared outer
 * part; some stacks deeper than the cache keeps; some empty paths; paths
 * that are the outer part of the previous one (a return), and once in a
 * while an unrelated path. */
static void cached_vs_uncached(uint64_t seed, uint32_t nthreads, uint32_t maxd, uint32_t alpha)
{
	enum { NINS = 40000, MAXT = 32, MAXD = 400 };
	static uint64_t stk[MAXT][MAXD]; /* outermost first */
	static uint64_t path[MAXD];      /* leaf first, as os_cct_insert takes it */
	uint32_t depth[MAXT] = { 0 }, i, j, k, tid, d, a, b, used = 0;
	uint64_t out[MAXD];
	struct os_cct c, u;

	cr_assert(nthreads <= MAXT && maxd <= MAXD);
	cr_assert_eq(os_cct_init(&c), 0);
	cr_assert_eq(os_cct_init(&u), 0);
	cr_assert_eq(os_cct_set_cache(&u, 0), 0);
	cr_assert_null(u.cache);
	cr_assert_not_null(c.cache);
	rng_state = seed;
	for (tid = 0; tid < nthreads; tid++) {
		stk[tid][0] = 0xfffe000000000001ULL; /* shared marker frame */
		stk[tid][1] = 0x7000;                /* shared thread start */
		depth[tid] = 2;
	}
	for (i = 0; i < NINS; i++) {
		/* bursts of one thread, then a switch */
		tid = (rnd() % 4) ? (i / 7) % nthreads : rnd() % nthreads;
		d = depth[tid];
		switch (rnd() % 8) {
		case 0: /* unrelated path */
			d = rnd() % maxd;
			for (j = 0; j < d; j++)
				stk[tid][j] = 0x400000 + (rnd() % alpha) * 16;
			break;
		case 1: /* return: the outer part of the last path */
			d = d > 2 ? 2 + rnd() % (d - 2) : d;
			break;
		default: /* pop a few inner frames, push a few */
			k = rnd() % 6;
			d = d > k + 2 ? d - k : 2;
			k = rnd() % 8;
			for (j = 0; j < k && d < maxd; j++)
				stk[tid][d++] = 0x400000 + (rnd() % alpha) * 16;
			break;
		}
		if (rnd() % 500 == 0)
			d = 0; /* the empty path: the root */
		depth[tid] = d;
		for (j = 0; j < d; j++)
			path[j] = stk[tid][d - 1 - j];
		a = os_cct_insert(&c, path, d);
		b = os_cct_insert(&u, path, d);
		cr_assert_eq(a, b, "insert %u (thread %u, depth %u): cached %u, uncached %u", i,
			     tid, d, a, b);
		cr_assert_eq(c.count, u.count, "insert %u: node counts", i);
		/* the id names exactly this path */
		cr_assert_eq(os_cct_path(&c, a, out, MAXD), d);
		for (j = 0; j < d; j++)
			cr_assert_eq(out[j], path[j], "insert %u frame %u", i, j);
	}
	for (j = 0; j < OS_CCT_CACHE_WAYS; j++)
		used += c.cache[j].n > 2;
	cr_assert_gt(used, 0, "the cache holds paths");
	/* paths met again were served whole from the memo, with the same ids */
	cr_assert_gt(c.memo_hits, 0, "no path was found in the memo");
	cr_log_info("%u inserts: %llu from the memo, %u nodes", NINS,
		    (unsigned long long)c.memo_hits, c.count);
	cr_assert_gt(c.count, 100, "the streams made a real tree (%u nodes)", c.count);
	os_cct_destroy(&c);
	os_cct_destroy(&u);
}

Test(cct, cache_same_ids_few_threads)
{
	cached_vs_uncached(7, 3, 60, 6);
}

Test(cct, cache_same_ids_many_threads)
{
	cached_vs_uncached(11, 20, 60, 4); /* more threads than cache ways */
}

Test(cct, cache_same_ids_deep_paths)
{
	/* paths deeper than OS_CCT_CACHE_DEPTH: the cache holds their outer part */
	cr_assert_lt(OS_CCT_CACHE_DEPTH, 390);
	cached_vs_uncached(13, 5, 390, 3);
}

Test(cct, cache_same_ids_random_paths)
{
	cached_vs_uncached(17, 9, 30, 2); /* tiny alphabet: many near-equal paths */
}

/* Turning the cache off and on again in the middle keeps the ids. */
Test(cct, cache_toggle)
{
	struct os_cct t;
	uint64_t p1[] = { 0x30, 0x20, 0x10 }, p2[] = { 0x31, 0x20, 0x10 };
	uint32_t a, b;

	cr_assert_eq(os_cct_init(&t), 0);
	a = os_cct_insert(&t, p1, 3);
	b = os_cct_insert(&t, p2, 3);
	cr_assert_eq(t.count, 5);
	cr_assert_eq(os_cct_set_cache(&t, 0), 0);
	cr_assert_eq(os_cct_insert(&t, p1, 3), a);
	cr_assert_eq(os_cct_set_cache(&t, 1), 0);
	cr_assert_eq(os_cct_insert(&t, p2, 3), b);
	cr_assert_eq(os_cct_insert(&t, p1 + 1, 2), os_cct_insert(&t, p2 + 1, 2));
	cr_assert_eq(t.count, 5);
	os_cct_destroy(&t);
}
