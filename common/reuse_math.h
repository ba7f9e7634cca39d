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
 * watchpoint's age, count as longer than any s); L from the sampled
 * objects (os_kac_rate, below). Return convention: as stated per
 * function. */
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

/* The access rate from the sampled objects themselves (Kac's lemma; docs/
 * REUSE.md "Access rate"). For a stationary stream, the mean reuse time of
 * the accesses to a set of elements (weighted by access) is the number of
 * elements touched over their access rate: an object of B bytes, all of
 * them touched, whose accesses reuse after a mean of T ns is accessed at
 * B / T bytes per ns, and if it takes the share s of its thread's accesses
 * the thread accesses (B / T) / s bytes per ns. Over the objects with
 * enough reuses, L = sum(B / T) / sum(s): the objects with the larger
 * shares weigh more. One object's figures (widths as weights, so that the
 * rate is in bytes): */
struct os_kac_obj {
	double bytes;     /* the object's size */
	double span;      /* sampled offsets: highest end - lowest start (0: unknown) */
	unsigned npairs;  /* pairs attributed to it */
	unsigned ndone;   /* ... completed with a reuse time */
	unsigned nlost;   /* ... ended without one (censored, freed, moved away, ...) */
	unsigned nshort;  /* completed ones not resolved: at 0 once the trap's cost is subtracted */
	double pairs_w;   /* pairs attributed to it, width-weighted */
	double window_w;  /* pairs of its thread (all objects and none) while it was sampled, width-weighted */
	double done_w;    /* completed pairs, width-weighted */
	double rt_w;      /* sum of their reuse times (ns) x width */
};
#define OS_KAC_MIN_DONE 8  /* completed pairs an object needs */
#define OS_KAC_MAX_LOST 0.1 /* ... and at most this share of its pairs lost, */
#define OS_KAC_MAX_SHORT 0.1 /* ... and of its reuse times not resolved */
/* The bytes of the object its accesses touch: its size, or less when its
 * sampled offsets span less of it (the span of n uniform samples over B
 * bytes is B (n-1)/(n+1) on average: scaled up by (n+1)/(n-1)). */
double os_kac_touched(const struct os_kac_obj *o);
/* Bytes per ns from the objects that qualify (OS_KAC_MIN_DONE completed
 * pairs, at most OS_KAC_MAX_LOST of their pairs lost, at most
 * OS_KAC_MAX_SHORT of their reuse times not resolved: an object reused
 * faster than the trap's cost can be told has a mean reuse time made of
 * the cost's jitter); *used: how many did (may be NULL). 0 when none
 * does. */
double os_kac_rate(const struct os_kac_obj *o, size_t n, size_t *used);
/* Weights of the reuse times by the objects' access shares: mult[i] is
 * what each completed reuse time of object i weighs per byte of width in
 * P(RT > s). Within each group (group[i]: its thread), the qualifying
 * objects' completed weight (their done_w summed) is shared out in
 * proportion to their access rates os_kac_touched / mean reuse time (Kac:
 * the rate of accesses to the object) instead of their pair counts, which
 * follow the samples: time-weighted, and attributed more often in some
 * loops than others (docs/REUSE.md "Per-bin shares"); 1 for the others. */
void os_kac_weights(const struct os_kac_obj *o, size_t n, const uint32_t *group, double *mult);

#endif
