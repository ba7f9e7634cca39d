/* stats_check.c - the statistical rule's own arithmetic (tests/e2e/stats.h),
 * against values computed independently (exact sums of binomial terms). */
#include <criterion/criterion.h>
#include <math.h>

#include "tests/e2e/stats.h"

Test(e2e_stats, binomial_tails_match_reference_values)
{
	/* binom.cdf(3, 10, 0.5) = 0.171875; binom.cdf(80, 100, 0.9) =
	 * 0.0019786...; binom.cdf(0, 50, 0.1) = 0.9^50. */
	cr_assert_float_eq(e2e_binom_cdf(3, 10, 0.5), 0.171875, 1e-12);
	cr_assert_float_eq(e2e_binom_cdf(80, 100, 0.9), 0.00197856, 1e-7);
	cr_assert_float_eq(e2e_binom_cdf(0, 50, 0.1), pow(0.9, 50), 1e-15);
	cr_assert_float_eq(e2e_binom_cdf(9, 10, 0.5), 1 - pow(0.5, 10), 1e-12);
	cr_assert_float_eq(e2e_binom_cdf(10, 10, 0.3), 1.0, 0);
	cr_assert_float_eq(e2e_binom_cdf(-1, 10, 0.3), 0.0, 0);
}

Test(e2e_stats, needed_counts_bound_the_false_failure_chance)
{
	static const double cases[][2] = { { 0.95, 0.8 }, { 0.9, 0.8 }, { 0.99, 0.9 },
					   { 0.7, 0.5 },  { 0.85, 0.8 }, { 0.6, 0.5 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double p = cases[i][0], t = cases[i][1];
		int64_t n = e2e_binom_needed(p, t, E2E_FALSE_FAIL);

		cr_assert_gt(n, 0, "p %.2f t %.2f", p, t);
		cr_assert_leq(e2e_binom_fail(n, p, t), E2E_FALSE_FAIL, "p %.2f t %.2f n %lld", p,
			      t, (long long)n);
		cr_assert_gt(e2e_binom_fail(n - 1, p, t), E2E_FALSE_FAIL * 0.5,
			     "p %.2f t %.2f: n %lld is far from the smallest", p, t, (long long)n);
	}
	/* A true share at or below the bound cannot be made reliable. */
	cr_assert_eq(e2e_binom_needed(0.8, 0.8, E2E_FALSE_FAIL), -1);
	cr_assert_gt(e2e_binom_needed_upper(0.01, 0.05, E2E_FALSE_FAIL), 0);
	cr_assert_eq(e2e_binom_needed_upper(0.05, 0.05, E2E_FALSE_FAIL), -1);
}

Test(e2e_stats, majority_and_normal_tails)
{
	/* n = 15 at p = 0.9: P(X <= 7) = 3.4e-5; n = 14 needs P(X <= 7) =
	 * 2.4e-4 > 1e-4 (odd n is the cheaper: a tie fails). */
	int64_t n = e2e_binom_needed_majority(0.9, E2E_FALSE_FAIL);

	cr_assert_gt(n, 0);
	cr_assert_leq(e2e_binom_cdf(n / 2, n, 0.9), E2E_FALSE_FAIL, "n %lld", (long long)n);
	cr_assert_gt(e2e_binom_cdf((n - 1) / 2, n - 1, 0.9), E2E_FALSE_FAIL * 0.5);
	cr_assert_eq(e2e_binom_needed_majority(0.5, E2E_FALSE_FAIL), -1);
	/* P(Z > 1.96) = 0.025; P(Z > 3.719) = 1.0e-4 */
	cr_assert_float_eq(e2e_normal_tail(1.959964), 0.025, 1e-6);
	cr_assert_float_eq(e2e_normal_tail(3.719016), 1e-4, 1e-8);
	/* (0.8 - 0.7) sqrt(R) / 0.1 >= 3.719: R = 14 (3.742), 13 gives 3.606 */
	cr_assert_eq(e2e_normal_needed(0.8, 0.1, 0.7, E2E_FALSE_FAIL), 14);
	cr_assert_eq(e2e_normal_needed(0.7, 0.1, 0.7, E2E_FALSE_FAIL), -1);
}
