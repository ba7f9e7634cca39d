/* Reuse distance: ViRDA's bins, the footprint model, the LRU miss ratio and
 * the exact engine, on synthetic input with known answers (docs/REUSE.md). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attacher/analyses/reuse.h"
#include "attacher/core/attrib.h"
#include "common/reuse_exact.h"
#include "common/reuse_math.h"

Test(reuse_bins, virda_bins)
{
	uint64_t lo, hi;

	cr_expect_eq(os_reuse_bin(0), 0);
	cr_expect_eq(os_reuse_bin(1), 1);
	cr_expect_eq(os_reuse_bin(2), 2);
	cr_expect_eq(os_reuse_bin(3), 2);
	cr_expect_eq(os_reuse_bin(4), 3);
	cr_expect_eq(os_reuse_bin(4095), 12);
	cr_expect_eq(os_reuse_bin(4096), 13);
	cr_expect_eq(os_reuse_bin(UINT64_MAX), OS_REUSE_COLD - 1, "huge: last finite bin");
	for (unsigned b = 1; b < OS_REUSE_COLD - 1; b++) {
		os_reuse_bin_range(b, &lo, &hi);
		cr_expect_eq(lo, 1ULL << (b - 1));
		cr_expect_eq(hi, (1ULL << b) - 1);
		cr_expect_eq(os_reuse_bin(lo), b);
		cr_expect_eq(os_reuse_bin(hi), b);
	}
}

Test(reuse_bins, median_and_miss_ratio)
{
	double bins[OS_REUSE_BINS] = { 0 };

	cr_expect(isnan(os_reuse_median(bins)), "empty: no median");
	cr_expect(isnan(os_reuse_miss_ratio(bins, 1024)));
	/* 3 reuses at [4096, 8191], 1 cold */
	bins[13] = 3;
	bins[OS_REUSE_COLD] = 1;
	cr_expect(os_reuse_median(bins) >= 4096 && os_reuse_median(bins) <= 8191);
	cr_expect_float_eq(os_reuse_miss_ratio(bins, 1024), 1.0, 1e-9, "all reuses beyond 1 KiB");
	cr_expect_float_eq(os_reuse_miss_ratio(bins, 1 << 20), 0.25, 1e-9, "only the cold one");
	cr_expect_float_eq(os_reuse_miss_ratio(bins, 8191), 0.25 + 0.75 * (log(8192.0 / 8191) / log(2)),
			   1e-9);
	bins[OS_REUSE_COLD] = 5;
	cr_expect(isinf(os_reuse_median(bins)), "mostly cold: infinite median");
}

/* A cyclic sweep of m elements of width 8 at `rate` bytes per ns: every
 * reuse time is m * 8 / rate; the model must give m * 8 bytes. */
Test(reuse_model, cyclic_sweep)
{
	enum { N = 100 };
	double t[N], w[N], rate = 4.0, m = 4096;
	struct os_fp fp;

	for (int i = 0; i < N; i++) {
		t[i] = m * 8 / rate;
		w[i] = 8;
	}
	cr_assert_eq(os_fp_build(&fp, t, w, N, 0, rate), 0);
	cr_expect_float_eq(os_fp_distance(&fp, t[0]), m * 8, 1e-6);
	cr_expect_float_eq(os_fp_distance(&fp, t[0] / 2), m * 4, 1e-6, "below every reuse: linear");
	cr_expect_float_eq(os_fp_distance(&fp, t[0] * 10), m * 8, 1e-6, "the footprint saturates");
	os_fp_destroy(&fp);
}

/* Two interleaved sweeps, one access each per step: a small set of S and a
 * large one of L elements (width 8). Reuse times (in steps of 2 accesses):
 * S and L; distinct bytes in between: 2 S * 8 and (L + S) * 8. */
Test(reuse_model, interleaved_small_and_large)
{
	enum { N = 200 };
	double t[N], w[N], rate = 8.0 / 1.0; /* one 8-byte access per ns */
	double S = 512, L = 65536;
	struct os_fp fp;

	for (int i = 0; i < N; i++) {
		t[i] = (i % 2 ? L : S) * 2; /* ns: two accesses per step */
		w[i] = 8;
	}
	cr_assert_eq(os_fp_build(&fp, t, w, N, 0, rate), 0);
	cr_expect_float_eq(os_fp_distance(&fp, S * 2), 2 * S * 8, 1e-6);
	cr_expect_float_eq(os_fp_distance(&fp, L * 2), (L + S) * 8, 1e-6);
	os_fp_destroy(&fp);
}

Test(reuse_model, censored_and_bad_input)
{
	double t = 100, w = 8;
	struct os_fp fp;

	cr_expect_eq(os_fp_build(&fp, NULL, NULL, 0, 0, 1.0), -EINVAL);
	cr_expect_eq(os_fp_build(&fp, &t, &w, 1, 0, 0), -EINVAL);
	/* one reuse of 100 ns and as much weight never reused: half survive */
	cr_assert_eq(os_fp_build(&fp, &t, &w, 1, 8, 2.0), 0);
	cr_expect_float_eq(os_fp_distance(&fp, 100), 200, 1e-9);
	cr_expect_float_eq(os_fp_distance(&fp, 200), 200 + 100, 1e-9, "half the weight left");
	os_fp_destroy(&fp);
}

/* The native fixture's pattern (tests/fixtures/reuse_sets.c) at L bytes/ns
 * of 8-byte reads: a small set of S bytes swept 4 times, then a large one
 * of 4 S once; each gets half the accesses (and of the time-uniform
 * samples). Small reuses: 3 of 4 after T = S / L (distance S), 1 of 4
 * after 5 T (2.5 MiB of data in between, the first of a round); large:
 * after 8 T (5 S). Kac's lemma: the mean reuse time of each set is its
 * size over its access rate, so the rate comes out exact, without any
 * instruction rate; the footprint then gives S and 5 S exactly. */
#define KS (512.0 * 1024)
static void two_sets(double L, double *t, double *w, size_t n, struct os_kac_obj k[2])
{
	double T = KS / L;

	memset(k, 0, 2 * sizeof(*k));
	for (size_t i = 0; i < n; i++) {
		struct os_kac_obj *x = &k[i % 2];

		t[i] = i % 2 ? 8 * T : (i / 2) % 4 == 3 ? 5 * T : T;
		w[i] = 8;
		x->npairs++;
		x->ndone++;
		x->pairs_w += 8;
		x->done_w += 8;
		x->rt_w += t[i] * 8;
	}
	k[0].bytes = KS;
	k[1].bytes = 4 * KS;
	k[0].window_w = k[1].window_w = 8.0 * (double)n;
}

Test(reuse_rate, kac_two_sets_exact)
{
	enum { N = 800 };
	double t[N], w[N], L = 10;
	struct os_kac_obj k[2];
	struct os_fp fp;
	size_t used = 9;

	two_sets(L, t, w, N, k);
	cr_expect_float_eq(os_kac_rate(k, 2, &used), L, 1e-9);
	cr_expect_eq(used, 2);
	cr_expect_float_eq(os_kac_rate(&k[0], 1, NULL), L, 1e-9, "one set alone: the same");
	cr_assert_eq(os_fp_build(&fp, t, w, N, 0, os_kac_rate(k, 2, NULL)), 0);
	cr_expect_float_eq(os_fp_distance(&fp, KS / L), KS, 1e-6, "small: S");
	cr_expect_float_eq(os_fp_distance(&fp, 8 * KS / L), 5 * KS, 1e-6, "large: 5 S");
	/* the model's own error (non-stationary rounds): the first small read of
	 * a round is at 5 S exactly, the footprint says 3.5 S; the medians (3 of
	 * 4 small reuses at S) are exact */
	cr_expect_float_eq(os_fp_distance(&fp, 5 * KS / L), 3.5 * KS, 1e-6);
	os_fp_destroy(&fp);
}

/* The samples that arm pairs are not spread over the objects by their
 * accesses (time-weighted; and the software sampler finds the address in
 * some loops more often than in others: on tests/fixtures/reuse_sets 3 of
 * 4 of them on the small set for half the time). Here the large set keeps
 * 1 pair in 3: the footprint over the pairs as they are puts its reuses
 * short of 5 S; weighted by the objects' access rates from Kac's lemma
 * (os_kac_weights, per thread) both sets come out exact again. */
Test(reuse_rate, kac_weights_undo_a_sampling_bias)
{
	enum { N = 2400 };
	double t[N], w[N], bt[N], bw[N], mult[3];
	unsigned which[N];
	struct os_kac_obj k[3];
	uint32_t grp[3] = { 7, 7, 9 };
	struct os_fp fp;
	size_t n = 0;

	two_sets(10, t, w, N, k);
	memset(k, 0, sizeof(k));
	for (size_t i = 0; i < N; i++) {
		struct os_kac_obj *x = &k[i % 2];

		if (i % 2 && (i / 2) % 3)
			continue;
		bt[n] = t[i];
		bw[n] = w[i];
		which[n] = i % 2;
		n++;
		x->npairs++;
		x->ndone++;
		x->pairs_w += 8;
		x->done_w += 8;
		x->rt_w += t[i] * 8;
	}
	k[0].bytes = KS;
	k[1].bytes = 4 * KS;
	k[0].window_w = k[1].window_w = 8.0 * (double)n;
	/* another thread's object that does not qualify (7 reuses): kept at 1 */
	k[2] = (struct os_kac_obj){ .bytes = 64, .npairs = 7, .ndone = 7, .pairs_w = 56,
				    .window_w = 56, .done_w = 56, .rt_w = 56 };
	cr_expect_float_eq(os_kac_rate(k, 3, NULL), 10, 1e-9, "the rate: exact all the same");
	cr_assert_eq(os_fp_build(&fp, bt, bw, n, 0, os_kac_rate(k, 3, NULL)), 0);
	cr_expect_lt(os_fp_distance(&fp, 8 * KS / 10), 4 * KS, "biased: large short of 5 S");
	os_fp_destroy(&fp);
	os_kac_weights(k, 3, grp, mult);
	cr_expect_float_eq(mult[2], 1, 1e-12);
	/* the weights keep the thread's total, shared out half and half */
	cr_expect_float_eq(mult[0] * k[0].done_w + mult[1] * k[1].done_w,
			   k[0].done_w + k[1].done_w, 1e-9);
	cr_expect_float_eq(mult[0] * k[0].done_w, mult[1] * k[1].done_w, 1e-9);
	for (size_t i = 0; i < n; i++)
		bw[i] *= mult[which[i]];
	cr_assert_eq(os_fp_build(&fp, bt, bw, n, 0, os_kac_rate(k, 3, NULL)), 0);
	cr_expect_float_eq(os_fp_distance(&fp, KS / 10), KS, 1e-6, "small: S");
	cr_expect_float_eq(os_fp_distance(&fp, 8 * KS / 10), 5 * KS, 1e-6, "large: 5 S");
	os_fp_destroy(&fp);
}

/* Code 3 times slower (lower IPC, cache misses) stretches every reuse time
 * by 3: the rate from the objects falls by 3 and the distances stay,
 * where a calibrated instruction rate would make them 3 times longer. */
Test(reuse_rate, distances_do_not_depend_on_the_speed)
{
	enum { N = 800 };
	double t[N], w[N], t3[N];
	struct os_kac_obj k[2], k3[2];
	struct os_fp fp, fp3;

	two_sets(12, t, w, N, k);
	two_sets(4, t3, w, N, k3);
	for (size_t i = 0; i < N; i++)
		cr_assert_float_eq(t3[i], 3 * t[i], 1e-6);
	cr_expect_float_eq(os_kac_rate(k3, 2, NULL) * 3, os_kac_rate(k, 2, NULL), 1e-9);
	cr_assert_eq(os_fp_build(&fp, t, w, N, 0, os_kac_rate(k, 2, NULL)), 0);
	cr_assert_eq(os_fp_build(&fp3, t3, w, N, 0, os_kac_rate(k3, 2, NULL)), 0);
	for (size_t i = 0; i < 8; i++)
		cr_expect_float_eq(os_fp_distance(&fp3, t3[i]), os_fp_distance(&fp, t[i]), 1e-6);
	os_fp_destroy(&fp);
	os_fp_destroy(&fp3);
}

/* Objects that do not qualify are left out: too few reuses, too many lost
 * (censored: their mean reuse time would be too short); none: 0. The
 * shares weigh: one object with half its thread's pairs at rate 2 L / 2. */
Test(reuse_rate, kac_which_objects)
{
	struct os_kac_obj k[3] = {
		/* 1 MiB reused after 1e5 ns, 10 % of its thread's pairs: 104.9 bytes/ns */
		{ .bytes = 1 << 20, .npairs = 20, .ndone = 20, .pairs_w = 160, .window_w = 1600,
		  .done_w = 160, .rt_w = 1e5 * 160 },
		/* 7 reuses only */
		{ .bytes = 1 << 10, .npairs = 7, .ndone = 7, .pairs_w = 56, .window_w = 56,
		  .done_w = 56, .rt_w = 1.0 * 56 },
		/* 20 reuses, 3 lost (> 10 %) */
		{ .bytes = 1 << 10, .npairs = 23, .ndone = 20, .nlost = 3, .pairs_w = 184,
		  .window_w = 184, .done_w = 160, .rt_w = 1.0 * 160 },
	};
	size_t used = 9;

	cr_expect_float_eq(os_kac_rate(k, 3, &used), (1 << 20) / 1e5 / 0.1, 1e-9);
	cr_expect_eq(used, 1);
	cr_expect_eq(os_kac_rate(k + 1, 2, &used), 0);
	cr_expect_eq(used, 0);
	k[2].nlost = 2; /* 2 of 22: within 10 % */
	cr_expect_float_eq(os_kac_rate(k, 3, &used),
			   ((1 << 20) / 1e5 + 1024.0 / 1.0) / (0.1 + 184.0 / 184), 1e-9);
	cr_expect_eq(used, 2);
	/* reused faster than the trap's cost tells: 3 of 20 times at 0 (the
	 * interpreter's bytecode under -Xint: its mean is the cost's jitter) */
	k[2].nshort = 3;
	cr_expect_float_eq(os_kac_rate(k, 3, &used), (1 << 20) / 1e5 / 0.1, 1e-9);
	cr_expect_eq(used, 1);
	k[2].nshort = 2;
	cr_expect_eq(os_kac_rate(&k[2], 1, &used) > 0, true, "2 of 20: within 10 %%");
}

/* An object's touched bytes: its size, or the span of its sampled offsets
 * scaled up by (n + 1) / (n - 1) when that is less (a buffer used in
 * part). */
Test(reuse_rate, touched_bytes)
{
	struct os_kac_obj o = { .bytes = 1 << 20, .span = 1 << 19, .npairs = 9 };

	cr_expect_float_eq(os_kac_touched(&o), (1 << 19) * 10.0 / 8, 1e-9);
	o.span = (1 << 20) - 8;
	cr_expect_float_eq(os_kac_touched(&o), 1 << 20, 1e-9, "never more than its size");
	o.span = 8;
	o.npairs = 2;
	cr_expect_float_eq(os_kac_touched(&o), 1 << 20, 1e-9, "2 samples say nothing");
}

/* The objects counted for the access rate follow a collection's moves:
 * a heap sliding down by one chunk (the Java fixture's), moves in no
 * particular order, the middle object's move first (a lookup that lost
 * its order after one move missed the others), two entries on one
 * object (two threads), one object not moved. */
Test(reuse_rate, entries_follow_sliding_moves)
{
	const struct os_obj_move moves[] = {
		{ .from = 0x3000, .to = 0x2000 }, { .from = 0x5000, .to = 0x4000 },
		{ .from = 0x2000, .to = 0x1000 }, { .from = 0x4000, .to = 0x3000 },
		{ .from = 0x6000, .to = 0x5000 },
	};
	uint64_t lo[] = { 0x6000, 0x2000, 0x4000, 0x9000, 0x4000, 0x3000 };
	const uint64_t want[] = { 0x5000, 0x1000, 0x3000, 0x9000, 0x3000, 0x2000 };
	bool moved[6];

	cr_assert_eq(os_ru_follow_moves(lo, moved, 6, moves, 5), 0);
	for (int i = 0; i < 6; i++) {
		cr_expect_eq(lo[i], want[i], "entry %d at 0x%llx", i, (unsigned long long)lo[i]);
		cr_expect_eq(moved[i], i != 3, "entry %d", i);
	}
	cr_expect_eq(os_ru_follow_moves(lo, moved, 0, moves, 5), 0, "no entries");
}

static uint64_t exact(struct os_rx *x, uint64_t addr, unsigned width, int want_cold)
{
	uint64_t d = 12345;
	int r = os_rx_access(x, addr, width, &d);

	cr_assert_eq(r, want_cold, "access 0x%llx: %d", (unsigned long long)addr, r);
	return d;
}

Test(reuse_exact, known_trace)
{
	struct os_rx x;

	os_rx_init(&x);
	/* a b c a: a's reuse has b and c between: 16 bytes */
	exact(&x, 0x1000, 8, 1);
	exact(&x, 0x2000, 8, 1);
	exact(&x, 0x3000, 8, 1);
	cr_expect_eq(exact(&x, 0x1000, 8, 0), 16);
	/* immediate reuse: 0 */
	cr_expect_eq(exact(&x, 0x1000, 8, 0), 0);
	/* b again: c and a between (b c a a b): distinct 16 */
	cr_expect_eq(exact(&x, 0x2000, 8, 0), 16);
	/* widths count bytes: a 4-byte access at 0x3000 after a 1-byte one elsewhere */
	exact(&x, 0x5000, 1, 1);
	cr_expect_eq(exact(&x, 0x3000, 4, 0), 8 + 8 + 1, "a, b and one byte");
	/* a partial overlap of the element counts its other bytes */
	exact(&x, 0x1004, 4, 0);
	cr_expect_eq(exact(&x, 0x1000, 8, 0), 8 + 1 + 4 + 4, "b, the byte, c's 4 and 0x1004..7");
	cr_expect_eq(os_rx_access(&x, 0x1000, 0, NULL), -EINVAL);
	os_rx_destroy(&x);
}

/* Past the tree's first capacity (2^16 times): the tree grows and keeps
 * its counts. A cyclic sweep of 1000 elements: every reuse 999 * 8 bytes. */
Test(reuse_exact, cyclic_sweep_grows)
{
	struct os_rx x;
	unsigned bad = 0;

	os_rx_init(&x);
	for (unsigned r = 0; r < 200; r++)
		for (uint64_t i = 0; i < 1000; i++) {
			uint64_t d = 0;
			int c = os_rx_access(&x, 0x10000 + i * 8, 8, &d);

			if (c != (r == 0) || (!c && d != 999 * 8))
				bad++;
		}
	cr_expect_eq(bad, 0);
	cr_expect_gt(x.cap, 1 << 16);
	os_rx_destroy(&x);
}

/* Section 15 (OS_SEC_REUSE): written, read back, merged (contexts equal
 * once symbolized become one: their signatures add up); a profile without
 * it reads as before (no OS_AN_REUSE). */
Test(reuse_profile, section_roundtrip_and_merge)
{
	struct os_profile *p = os_profile_new(), *q = NULL, *m = os_profile_new(), *old = NULL;
	struct os_context c = { .type = OS_NONE, .stack = OS_NONE };
	struct os_reuse *r;
	char err[256], path[] = "/tmp/objscope-ru-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	c.type = os_profile_string(p, "long[]");
	os_profile_add_context(p, &c);
	c.type = os_profile_string(p, "native");
	os_profile_add_context(p, &c);
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(path, &old, err, sizeof(err)), 0, "%s", err);
	cr_expect_not(old->analyses & OS_AN_REUSE, "no section: no reuse");
	cr_expect_null(os_reuse_of(old, 0));
	r = os_profile_reuse(p, 1);
	cr_assert_not_null(r);
	r->bins[13] = 3;
	r->bins[OS_REUSE_COLD] = 1;
	p->ru.cache[0] = 32768;
	p->ru.cache[2] = 1 << 25;
	p->ru.bytes_per_ns = 14.5;
	p->ru.rate_source = OS_RU_RATE_OBJECTS;
	p->ru.trap_ns = 47000;
	p->ru.pairs = 3;
	p->ru.censored = 1;
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(os_profile_read(path, &q, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert(q->analyses & OS_AN_REUSE);
	cr_expect_null(os_reuse_of(q, 0), "context 0 measured nothing");
	cr_assert_not_null(os_reuse_of(q, 1));
	cr_expect_eq(q->ru.ctx[1].bins[13], 3);
	cr_expect_eq(q->ru.ctx[1].bins[OS_REUSE_COLD], 1);
	cr_expect_eq(q->ru.cache[2], 1 << 25);
	cr_expect_eq(q->ru.bytes_per_ns, 14.5);
	cr_expect_eq(q->ru.rate_source, OS_RU_RATE_OBJECTS);
	cr_expect_eq(q->ru.trap_ns, 47000);
	cr_expect_eq(q->ru.pairs, 3);
	cr_assert_eq(os_profile_merge(m, q), 0);
	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(m->ncontexts, 2);
	cr_expect_eq(m->ru.ctx[1].bins[13], 6);
	cr_expect_eq(m->ru.pairs, 6);
	cr_expect_eq(m->ru.bytes_per_ns, 14.5, "the model's rate is not summed");
	cr_expect_eq(m->ru.rate_source, OS_RU_RATE_OBJECTS);
	os_profile_free(p);
	os_profile_free(q);
	os_profile_free(m);
	os_profile_free(old);
}
