/* bench_ivindex.c - lookups per second of the interval index (B+ tree) versus
 * a top-down splay tree keyed by start (the structure DJXPerf uses), on the
 * same live-object layout and the same address stream.
 *
 * Layout: N objects of 1 KiB..64 KiB (16-byte granules) placed one after the
 * other like a bump/size-class allocator would, with a gap of 0..4 KiB after
 * each, inserted in random order. Queries: 90% random addresses inside
 * random objects, 10% addresses in gaps (misses). Both structures must give
 * the same answers (checksum), or the bench fails.
 *
 * Usage: bench_ivindex [--quick]   (--quick: 10k objects, for the test suite)
 * Exit status: 0 on success, 1 on a mismatch or out of memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/ivindex.h"

struct obj {
	uint64_t start, end;
};

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double now_s(void)
{
	return (double)os_now_ns() * 1e-9;
}

/* ---- Top-down splay tree (Sleator & Tarjan), keyed by start ---- */

struct sp_node {
	uint64_t start, end, val;
	struct sp_node *left, *right;
};

/* Splays the node with the largest start <= key, or else the smallest
 * start > key, to the root. */
static struct sp_node *sp_splay(struct sp_node *t, uint64_t key)
{
	struct sp_node head = { 0 }, *l = &head, *r = &head, *y;

	if (!t)
		return NULL;
	for (;;) {
		if (key < t->start) {
			if (!t->left)
				break;
			if (key < t->left->start) {
				y = t->left; /* rotate right */
				t->left = y->right;
				y->right = t;
				t = y;
				if (!t->left)
					break;
			}
			r->left = t; /* link right */
			r = t;
			t = t->left;
		} else if (key > t->start) {
			if (!t->right)
				break;
			if (key > t->right->start) {
				y = t->right; /* rotate left */
				t->right = y->left;
				y->left = t;
				t = y;
				if (!t->right)
					break;
			}
			l->right = t; /* link left */
			l = t;
			t = t->right;
		} else {
			break;
		}
	}
	l->right = t->left;
	r->left = t->right;
	t->left = head.right;
	t->right = head.left;
	return t;
}

static struct sp_node *sp_insert(struct sp_node *t, struct sp_node *n)
{
	n->left = n->right = NULL;
	if (!t)
		return n;
	t = sp_splay(t, n->start);
	if (n->start < t->start) {
		n->left = t->left;
		n->right = t;
		t->left = NULL;
	} else {
		n->right = t->right;
		n->left = t;
		t->right = NULL;
	}
	return n;
}

/* Finds the interval enclosing addr; splays as DJXPerf's lookup does. */
static struct sp_node *sp_lookup(struct sp_node **root, uint64_t addr)
{
	struct sp_node *t = sp_splay(*root, addr), *p;

	*root = t;
	if (!t)
		return NULL;
	if (t->start <= addr)
		return addr < t->end ? t : NULL;
	/* The root is the successor: the predecessor is the maximum on the left. */
	for (p = t->left; p && p->right; p = p->right)
		;
	return p && addr < p->end ? p : NULL;
}

/* ---- the benchmark ---- */

static void shuffle(uint32_t *a, size_t n)
{
	size_t i;

	for (i = n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

int main(int argc, char **argv)
{
	size_t nobj = 1000000, nq = 4000000, i;
	struct obj *objs = NULL;
	uint32_t *order = NULL;
	uint64_t *q = NULL, addr = 0x7f1200000000ULL;
	struct sp_node *nodes = NULL, *root = NULL;
	struct os_ivindex *iv = NULL;
	uint64_t sum_bt = 0, sum_sp = 0;
	double t0, bt_rate = 0, sp_rate = 0, best;
	int ret = 1, rep;

	if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
		nobj = 10000;
		nq = 200000;
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
		return 2;
	}
	objs = malloc(nobj * sizeof(*objs));
	order = malloc(nobj * sizeof(*order));
	nodes = malloc(nobj * sizeof(*nodes));
	q = malloc(nq * sizeof(*q));
	iv = os_iv_new();
	if (!objs || !order || !nodes || !q || !iv) {
		fprintf(stderr, "bench_ivindex: out of memory\n");
		goto out;
	}
	for (i = 0; i < nobj; i++) {
		uint64_t size = (1024 + rnd() % (63 * 1024 + 1)) & ~15ULL;

		objs[i].start = addr;
		objs[i].end = addr + size;
		addr += size + (rnd() % 4097 & ~15ULL);
		order[i] = (uint32_t)i;
	}
	shuffle(order, nobj);
	t0 = now_s();
	for (i = 0; i < nobj; i++) {
		const struct obj *o = &objs[order[i]];

		if (os_iv_insert(iv, o->start, o->end, order[i]) < 0) {
			fprintf(stderr, "bench_ivindex: insert failed\n");
			goto out;
		}
	}
	printf("objects: %zu, B+ tree build %.3f s\n", nobj, now_s() - t0);
	t0 = now_s();
	for (i = 0; i < nobj; i++) {
		const struct obj *o = &objs[order[i]];

		nodes[i] = (struct sp_node){ .start = o->start, .end = o->end, .val = order[i] };
		root = sp_insert(root, &nodes[i]);
	}
	printf("objects: %zu, splay tree build %.3f s\n", nobj, now_s() - t0);

	for (i = 0; i < nq; i++) {
		const struct obj *o = &objs[rnd() % nobj];

		if (rnd() % 10 == 0)
			q[i] = o->end + rnd() % 16; /* in the gap after it: mostly misses */
		else
			q[i] = o->start + rnd() % (o->end - o->start);
	}

	/* Best of three runs each, alternating, on the same query stream. */
	for (rep = 0; rep < 3; rep++) {
		uint64_t s = 0, v;

		t0 = now_s();
		for (i = 0; i < nq; i++)
			s += os_iv_lookup(iv, q[i], NULL, NULL, &v) ? v + 1 : 0;
		best = (double)nq / (now_s() - t0);
		bt_rate = best > bt_rate ? best : bt_rate;
		sum_bt = s;

		s = 0;
		t0 = now_s();
		for (i = 0; i < nq; i++) {
			struct sp_node *n = sp_lookup(&root, q[i]);

			s += n ? n->val + 1 : 0;
		}
		best = (double)nq / (now_s() - t0);
		sp_rate = best > sp_rate ? best : sp_rate;
		sum_sp = s;
	}
	if (sum_bt != sum_sp) {
		fprintf(stderr, "bench_ivindex: results differ (%lu vs %lu)\n", sum_bt, sum_sp);
		goto out;
	}
	printf("lookups: %zu (90%% hits inside objects, 10%% gap addresses), best of 3\n", nq);
	printf("B+ tree (os_ivindex): %12.0f lookups/s\n", bt_rate);
	printf("splay tree:           %12.0f lookups/s\n", sp_rate);
	printf("ratio B+ / splay:     %12.2f\n", bt_rate / sp_rate);
	ret = 0;
out:
	os_iv_free(iv);
	free(q);
	free(nodes);
	free(order);
	free(objs);
	return ret;
}
