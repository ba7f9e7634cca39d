/* Reuse distance: ViRDA's bins, the footprint model, the LRU miss ratio and
 * the exact engine, on synthetic input with known answers (docs/REUSE.md). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

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
	cr_expect_eq(q->ru.trap_ns, 47000);
	cr_expect_eq(q->ru.pairs, 3);
	cr_assert_eq(os_profile_merge(m, q), 0);
	cr_assert_eq(os_profile_merge(m, p), 0);
	cr_assert_eq(m->ncontexts, 2);
	cr_expect_eq(m->ru.ctx[1].bins[13], 6);
	cr_expect_eq(m->ru.pairs, 6);
	cr_expect_eq(m->ru.bytes_per_ns, 14.5, "the model's rate is not summed");
	os_profile_free(p);
	os_profile_free(q);
	os_profile_free(m);
	os_profile_free(old);
}
