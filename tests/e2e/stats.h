/* stats.h - the one rule for assertions on sampled quantities (tests/README.md
 * "Statistical assertions").
 *
 * A sampled count is a binomial draw: of n samples, k land where the test
 * looks, each with a probability p the test cannot know exactly. An
 * assertion "k >= t * n" fails by luck with probability P(Binom(n, p) < t n).
 * Each assertion names p_low, the smallest true proportion the test's
 * fixture is known to give (measured, with the margin written beside it in
 * the audit table), and the threshold t it checks; e2e_binom_needed() gives
 * the smallest n for which the false-failure chance under p_low is at most
 * E2E_FALSE_FAIL (1e-4). The test gathers samples until it has that n
 * (longer or repeated runs, their profiles merged), up to a cap on time; a
 * test that reaches its cap without the counts fails with the counts it
 * had: a design fault, never retried.
 *
 * All functions are pure computations; no Criterion calls except in the
 * e2e_assert_* macros.
 */
#ifndef OBJSCOPE_TESTS_E2E_STATS_H
#define OBJSCOPE_TESTS_E2E_STATS_H

#include <stdint.h>

/* The false-failure chance allowed per assertion. */
#define E2E_FALSE_FAIL 1e-4

/* P(X <= k) for X ~ Binomial(n, p): exact sum in log space (n up to ~10^7). */
double e2e_binom_cdf(int64_t k, int64_t n, double p);

/* P(X < t * n) for X ~ Binomial(n, p): the chance that a share check
 * "k >= t * n" fails although the true share is p. */
double e2e_binom_fail(int64_t n, double p, double t);

/* The smallest n (>= 1) with e2e_binom_fail(n, p_low, t) <= alpha, or -1 when
 * none up to 10^7 (p_low <= t: the check cannot be made reliable by
 * gathering). */
int64_t e2e_binom_needed(double p_low, double t, double alpha);

/* The same for an upper bound "k <= t * n" when the true share is at most
 * p_high: P(X > t * n) <= alpha. */
int64_t e2e_binom_needed_upper(double p_high, double t, double alpha);

/* The smallest n with P(X <= n / 2) <= alpha for X ~ Binomial(n, p_low):
 * how many samples two contexts (or a context and all the others together)
 * need for the hot one to hold more than half of them, which ranks it first
 * (strictly above every other). -1 when p_low <= 0.5. */
int64_t e2e_binom_needed_majority(double p_low, double alpha);

/* P(Z > z) for a standard normal Z: the one-sided false-failure chance of a
 * check on a quantity estimated with a known standard error (an estimate
 * that sums many independent weighted samples), z standard errors from its
 * bound. */
double e2e_normal_tail(double z);

/* For a quantity whose spread comes from units larger than a sample (a
 * run's share set by which few blocks it sampled): the smallest number R of
 * independent runs whose mean, each run with standard deviation sigma,
 * fails "mean >= t" with P(Z > (mu_low - t) sqrt(R) / sigma) <= alpha when
 * the true mean is mu_low (normal, the mean of R runs); -1 when
 * mu_low <= t or none up to 10^6. */
int64_t e2e_normal_needed(double mu_low, double sigma, double t, double alpha);

/* Asserts that a share k / n is at least t, under the rule: n must be at
 * least e2e_binom_needed(p_low, t, E2E_FALSE_FAIL) (else the test gathered
 * too little: it says how much it had and needed), then k >= t * n. `what`
 * names the quantity in the failure message. */
#define e2e_assert_share_ge(k, n, t, p_low, what)                                          \
	do {                                                                               \
		int64_t k_ = (int64_t)(k), n_ = (int64_t)(n);                              \
		int64_t need_ = e2e_binom_needed((p_low), (t), E2E_FALSE_FAIL);            \
		cr_assert(need_ > 0 && n_ >= need_,                                        \
			  "%s: %lld samples gathered, %lld needed for a false-failure "   \
			  "chance <= 1e-4 (true share >= %.3f, bound %.3f)",               \
			  (what), (long long)n_, (long long)need_, (double)(p_low),         \
			  (double)(t));                                                     \
		cr_assert((double)k_ >= (t) * (double)n_,                                  \
			  "%s: %lld of %lld = %.4f, below %.3f", (what), (long long)k_,    \
			  (long long)n_, (double)k_ / (double)n_, (double)(t));             \
	} while (0)

/* The mirror: k / n at most t when the true share is at most p_high. */
#define e2e_assert_share_le(k, n, t, p_high, what)                                         \
	do {                                                                               \
		int64_t k_ = (int64_t)(k), n_ = (int64_t)(n);                              \
		int64_t need_ = e2e_binom_needed_upper((p_high), (t), E2E_FALSE_FAIL);     \
		cr_assert(need_ > 0 && n_ >= need_,                                        \
			  "%s: %lld samples gathered, %lld needed for a false-failure "   \
			  "chance <= 1e-4 (true share <= %.3f, bound %.3f)",               \
			  (what), (long long)n_, (long long)need_, (double)(p_high),        \
			  (double)(t));                                                     \
		cr_assert((double)k_ <= (t) * (double)n_,                                  \
			  "%s: %lld of %lld = %.4f, above %.3f", (what), (long long)k_,    \
			  (long long)n_, (double)k_ / (double)n_, (double)(t));             \
	} while (0)

/* Asserts that k of n samples are more than half (k > n / 2) when the true
 * share is at least p_low > 0.5: n must be at least
 * e2e_binom_needed_majority(p_low), then k > n / 2. */
#define e2e_assert_majority(k, n, p_low, what)                                             \
	do {                                                                               \
		int64_t k_ = (int64_t)(k), n_ = (int64_t)(n);                              \
		int64_t need_ = e2e_binom_needed_majority((p_low), E2E_FALSE_FAIL);        \
		cr_assert(need_ > 0 && n_ >= need_,                                        \
			  "%s: %lld samples gathered, %lld needed for a false-failure "   \
			  "chance <= 1e-4 (true share >= %.3f, more than half asserted)",  \
			  (what), (long long)n_, (long long)need_, (double)(p_low));        \
		cr_assert(2 * k_ > n_, "%s: %lld of %lld = %.4f, not more than half", (what),   \
			  (long long)k_, (long long)n_, n_ ? (double)k_ / (double)n_ : 0.0);  \
	} while (0)

/* Asserts that the mean of r runs' values is at least t, under the rule:
 * r must be at least e2e_normal_needed(mu_low, sigma, t), then mean >= t. */
#define e2e_assert_mean_ge(mean, r, t, mu_low, sigma, what)                                \
	do {                                                                               \
		double m_ = (double)(mean);                                                \
		int64_t r_ = (int64_t)(r);                                                 \
		int64_t need_ = e2e_normal_needed((mu_low), (sigma), (t), E2E_FALSE_FAIL); \
		cr_assert(need_ > 0 && r_ >= need_,                                        \
			  "%s: %lld runs, %lld needed for a false-failure chance <= 1e-4 " \
			  "(true mean >= %.3f, sd %.3f a run, bound %.3f)", (what),        \
			  (long long)r_, (long long)need_, (double)(mu_low), (double)(sigma), \
			  (double)(t));                                                     \
		cr_assert(m_ >= (t), "%s: mean of %lld runs %.4f, below %.3f", (what),     \
			  (long long)r_, m_, (double)(t));                                  \
	} while (0)

#endif
