/* stats.c - binomial tails and the counts a statistical assertion needs. */
#include "tests/e2e/stats.h"

#include <math.h>

/* log of the binomial probability mass at i. */
static double log_pmf(int64_t i, int64_t n, double lp, double lq)
{
	return lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) +
	       (double)i * lp + (double)(n - i) * lq;
}

double e2e_binom_cdf(int64_t k, int64_t n, double p)
{
	double lp, lq, sum = 0, mode_log, mean;

	if (k < 0)
		return 0;
	if (k >= n)
		return 1;
	if (p <= 0)
		return 1;
	if (p >= 1)
		return 0;
	lp = log(p);
	lq = log1p(-p);
	mean = (double)n * p;
	/* Sum from the end nearer the bulk outwards is not needed for the
	 * tails the tests ask about; sum the smaller side relative to the
	 * largest term, which keeps every term representable. */
	if ((double)k < mean) {
		mode_log = log_pmf(k, n, lp, lq);
		for (int64_t i = k; i >= 0; i--) {
			double t = exp(log_pmf(i, n, lp, lq) - mode_log);

			sum += t;
			if (t < 1e-17 * sum)
				break;
		}
		return fmin(1.0, exp(mode_log) * sum);
	}
	/* k at or above the mean: 1 - P(X >= k + 1). */
	mode_log = log_pmf(k + 1, n, lp, lq);
	for (int64_t i = k + 1; i <= n; i++) {
		double t = exp(log_pmf(i, n, lp, lq) - mode_log);

		sum += t;
		if (t < 1e-17 * sum)
			break;
	}
	return fmax(0.0, 1.0 - exp(mode_log) * sum);
}

double e2e_binom_fail(int64_t n, double p, double t)
{
	/* k >= t n fails when k <= ceil(t n) - 1. */
	double need = ceil(t * (double)n - 1e-9);

	return e2e_binom_cdf((int64_t)need - 1, n, p);
}

/* The smallest n in [1, 10^7] with fail(n) <= alpha. fail falls as n grows,
 * up to the lattice of t n (a step of one in k moves it a little): doubling
 * to an n that passes, a binary search below it, then a step up past any n
 * of the next 64 that the lattice makes fail again. */
static int64_t needed(double (*fail)(int64_t, double, double), double p, double t,
		      double alpha)
{
	int64_t hi = 1, lo, n;

	while (fail(hi, p, t) > alpha) {
		if (hi >= 10000000)
			return -1;
		hi *= 2;
	}
	lo = hi / 2; /* fails (or 0) */
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (fail(mid, p, t) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	n = hi;
	for (int64_t m = n + 1; m <= n + 64; m++)
		if (fail(m, p, t) > alpha)
			n = m + 1;
	return n;
}

static double fail_upper(int64_t n, double p, double t)
{
	/* k <= t n fails when k >= floor(t n) + 1. */
	double most = floor(t * (double)n + 1e-9);

	return 1.0 - e2e_binom_cdf((int64_t)most, n, p);
}

int64_t e2e_binom_needed(double p_low, double t, double alpha)
{
	if (!(p_low > t) || !(t > 0))
		return -1;
	return needed(e2e_binom_fail, p_low, t, alpha);
}

int64_t e2e_binom_needed_upper(double p_high, double t, double alpha)
{
	if (!(p_high < t) || !(t < 1))
		return -1;
	return needed(fail_upper, p_high, t, alpha);
}

static double fail_majority(int64_t n, double p, double t)
{
	(void)t;
	return e2e_binom_cdf(n / 2, n, p);
}

int64_t e2e_binom_needed_majority(double p_low, double alpha)
{
	if (!(p_low > 0.5))
		return -1;
	return needed(fail_majority, p_low, 0.5, alpha);
}

double e2e_normal_tail(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

int64_t e2e_normal_needed(double mu_low, double sigma, double t, double alpha)
{
	if (!(mu_low > t) || !(sigma > 0))
		return -1;
	for (int64_t r = 1; r <= 1000000; r++)
		if (e2e_normal_tail((mu_low - t) * sqrt((double)r) / sigma) <= alpha)
			return r;
	return -1;
}
