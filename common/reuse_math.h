/* reuse_math.h - reuse distance signatures (ViRDA's bins), the footprint
 * model that turns sampled reuse TIMES into reuse DISTANCES, and the LRU
 * miss ratio of a signature (docs/REUSE.md).
 *
 * Bins (ViRDA): bin 0 = distance 0, bin n (1 <= n < OS_REUSE_COLD) =
 * [2^(n-1), 2^n - 1] bytes (distances from 2^(OS_REUSE_COLD-2) on fall in
 * the last finite bin), bin OS_REUSE_COLD = no reuse seen (cold / infinite).
 *
 * Model (footprint theory, Xiang et al., ASPLOS'13; the same formula as
 * StatStack's expected stack distance): for a stationary access stream with
 * access rate L (bytes per ns of the thread's CPU time) and P(RT > s) the
 * share of accessed bytes whose next reuse comes more than s ns later, the
 * distinct bytes touched in a window of t ns are
 *     fp(t) = L * integral_0^t P(RT > s) ds
 * and a reuse of time t has distance fp(t). P(RT > s) comes from the
 * sampled reuse times themselves (censored ones, never reused within the
 * watchpoint's age, count as longer than any s). Return convention: as
 * stated per function. */
#ifndef OBJSCOPE_COMMON_REUSE_MATH_H
#define OBJSCOPE_COMMON_REUSE_MATH_H

#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

#define OS_REUSE_BINS OS_REUSE_NBINS
#define OS_REUSE_COLD (OS_REUSE_BINS - 1)

/* The bin of a finite distance in bytes. */
unsigned os_reuse_bin(uint64_t bytes);
/* Bytes [*lo, *hi] of finite bin b (< OS_REUSE_COLD). */
void os_reuse_bin_range(unsigned b, uint64_t *lo, uint64_t *hi);

/* Median distance of a signature (bins[OS_REUSE_BINS], counts or weights):
 * interpolated inside its bin (log-uniform); INFINITY when the median
 * reuse is cold; NAN when the signature is empty. */
double os_reuse_median(const double *bins);
/* Expected miss ratio of a fully associative LRU cache of `cache` bytes:
 * the share of reuses whose distance is >= cache (cold ones included),
 * interpolated inside the bin holding `cache`; NAN when empty. */
double os_reuse_miss_ratio(const double *bins, uint64_t cache);

/* What the reports show of one context's signature. */
struct os_reuse_figures {
	double reuses;         /* all of the signature, censored included */
	double censored;       /* the last bin: no reuse within the watchpoint's age */
	double median;         /* bytes; INFINITY: mostly censored */
	double miss[3];        /* LRU miss ratio for L1d, L2, LLC (NAN: size unknown) */
};
extern const char *const os_reuse_cache_names[3]; /* "L1d", "L2", "LLC" */

/* The signature of context ci, NULL when none was measured. */
const struct os_reuse *os_reuse_of(const struct os_profile *p, uint32_t ci);
void os_reuse_figures(const struct os_profile *p, const struct os_reuse *r,
		      struct os_reuse_figures *f);

/* The footprint of one access stream, built from its sampled reuse times. */
struct os_fp {
	size_t n;
	double *t;      /* reuse times, ascending (ns) */
	double *integ;  /* integral_0^t[i] P(RT > s) ds */
	double *surv;   /* P(RT > s) for t[i] <= s < t[i+1] */
	double rate;    /* bytes per ns */
};

/* times[i] with weights w[i] (> 0; bytes of the access), plus cold_w
 * weight censored (no reuse seen); rate: bytes accessed per ns. 0, -EINVAL
 * (n == 0 and cold_w == 0, or rate <= 0), -ENOMEM. */
int os_fp_build(struct os_fp *fp, const double *times, const double *w, size_t n, double cold_w,
		double rate);
/* Estimated distance in bytes of a reuse of time t ns. */
double os_fp_distance(const struct os_fp *fp, double t);
void os_fp_destroy(struct os_fp *fp);

#endif
