/* reuse_math.c - bins, footprint model and LRU miss ratio (reuse_math.h). */
#include "common/reuse_math.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned os_reuse_bin(uint64_t bytes)
{
	unsigned b;

	if (!bytes)
		return 0;
	b = 64u - (unsigned)__builtin_clzll(bytes); /* floor(log2) + 1 */
	return b < OS_REUSE_COLD ? b : OS_REUSE_COLD - 1;
}

void os_reuse_bin_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	if (!b) {
		*lo = *hi = 0;
		return;
	}
	*lo = 1ULL << (b - 1);
	*hi = b == OS_REUSE_COLD - 1 ? UINT64_MAX : (1ULL << b) - 1;
}

static double total(const double *bins)
{
	double s = 0;

	for (unsigned i = 0; i < OS_REUSE_BINS; i++)
		s += bins[i];
	return s;
}

/* The byte count at fraction f (0..1) of finite bin b, log-uniform. */
static double inside(unsigned b, double f)
{
	double lo, hi;

	if (!b)
		return 0;
	lo = ldexp(1.0, (int)b - 1);
	hi = ldexp(1.0, (int)b);
	return lo * pow(hi / lo, f);
}

double os_reuse_median(const double *bins)
{
	double n = total(bins), half, acc = 0;

	if (n <= 0)
		return NAN;
	half = n / 2;
	for (unsigned b = 0; b < OS_REUSE_COLD; b++) {
		if (bins[b] > 0 && acc + bins[b] >= half)
			return inside(b, (half - acc) / bins[b]);
		acc += bins[b];
	}
	return INFINITY;
}

double os_reuse_miss_ratio(const double *bins, uint64_t cache)
{
	double n = total(bins), miss = bins[OS_REUSE_COLD];
	unsigned cb = os_reuse_bin(cache);

	if (n <= 0)
		return NAN;
	for (unsigned b = cb + 1; b < OS_REUSE_COLD; b++)
		miss += bins[b];
	if (cb && bins[cb] > 0) {
		/* the part of bin cb at or above cache (log-uniform) */
		double lo = ldexp(1.0, (int)cb - 1), hi = ldexp(1.0, (int)cb);

		miss += bins[cb] * (log(hi / (double)cache) / log(hi / lo));
	} else if (!cb) {
		miss += bins[0]; /* a cache of 0 bytes misses every reuse */
	}
	return miss / n;
}

const char *const os_reuse_cache_names[3] = { "L1d", "L2", "LLC" };

const struct os_reuse *os_reuse_of(const struct os_profile *p, uint32_t ci)
{
	const struct os_reuse *r;

	if (!(p->analyses & OS_AN_REUSE) || ci >= p->ru.nctx)
		return NULL;
	r = &p->ru.ctx[ci];
	return total(r->bins) > 0 ? r : NULL;
}

void os_reuse_figures(const struct os_profile *p, const struct os_reuse *r,
		      struct os_reuse_figures *f)
{
	f->reuses = total(r->bins);
	f->censored = r->bins[OS_REUSE_COLD];
	f->median = os_reuse_median(r->bins);
	for (int k = 0; k < 3; k++)
		f->miss[k] = p->ru.cache[k] ? os_reuse_miss_ratio(r->bins, p->ru.cache[k]) : NAN;
}

struct pair {
	double t, w;
};

static int by_time(const void *a, const void *b)
{
	double x = ((const struct pair *)a)->t, y = ((const struct pair *)b)->t;

	return x < y ? -1 : x > y;
}

int os_fp_build(struct os_fp *fp, const double *times, const double *w, size_t n, double cold_w,
		double rate)
{
	struct pair *p;
	double all = cold_w, left, prev = 0, integ = 0;

	memset(fp, 0, sizeof(*fp));
	if ((!n && cold_w <= 0) || !(rate > 0))
		return -EINVAL;
	p = malloc((n ? n : 1) * sizeof(*p));
	fp->t = malloc((n ? n : 1) * sizeof(double));
	fp->integ = malloc((n ? n : 1) * sizeof(double));
	fp->surv = malloc((n + 1) * sizeof(double));
	if (!p || !fp->t || !fp->integ || !fp->surv) {
		free(p);
		os_fp_destroy(fp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		p[i].t = times[i] > 0 ? times[i] : 0;
		p[i].w = w[i];
		all += w[i];
	}
	qsort(p, n, sizeof(*p), by_time);
	left = all;
	fp->surv[0] = 1; /* below the shortest reuse everything is longer */
	for (size_t i = 0; i < n; i++) {
		integ += (p[i].t - prev) * (left / all);
		prev = p[i].t;
		fp->t[i] = p[i].t;
		fp->integ[i] = integ;
		left -= p[i].w;
		fp->surv[i + 1] = left > 0 ? left / all : 0;
	}
	fp->n = n;
	fp->rate = rate;
	free(p);
	return 0;
}

double os_fp_distance(const struct os_fp *fp, double t)
{
	size_t lo = 0, hi = fp->n;

	if (t <= 0)
		return 0;
	/* the last i with t[i] <= t */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (fp->t[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return fp->rate * t; /* P(RT > s) = 1 below the shortest reuse */
	return fp->rate * (fp->integ[lo - 1] + (t - fp->t[lo - 1]) * fp->surv[lo]);
}

void os_fp_destroy(struct os_fp *fp)
{
	free(fp->t);
	free(fp->integ);
	free(fp->surv);
	memset(fp, 0, sizeof(*fp));
}

double os_kac_touched(const struct os_kac_obj *o)
{
	double b = o->bytes;

	if (o->span > 0 && o->npairs >= 3) {
		double est = o->span * (o->npairs + 1.0) / (o->npairs - 1.0);

		if (est < b)
			b = est;
	}
	return b;
}

double os_kac_rate(const struct os_kac_obj *o, size_t n, size_t *used)
{
	double lambda = 0, share = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct os_kac_obj *x = &o[i];
		unsigned all = x->ndone + x->nlost;

		if (x->ndone < OS_KAC_MIN_DONE || (double)x->nlost > OS_KAC_MAX_LOST * all ||
		    (double)x->nshort > OS_KAC_MAX_SHORT * x->ndone ||
		    !(x->rt_w > 0) || !(x->done_w > 0) || !(x->window_w > 0) || !(x->bytes > 0))
			continue;
		lambda += os_kac_touched(x) / (x->rt_w / x->done_w);
		share += x->pairs_w / x->window_w;
		k++;
	}
	if (used)
		*used = k;
	return k && share > 0 ? lambda / share : 0;
}

void os_kac_weights(const struct os_kac_obj *o, size_t n, const uint32_t *group, double *mult)
{
	for (size_t i = 0; i < n; i++)
		mult[i] = -1; /* not yet seen */
	for (size_t i = 0; i < n; i++) {
		double done = 0, rates = 0;

		if (mult[i] >= 0)
			continue;
		if (!(os_kac_rate(&o[i], 1, NULL) > 0)) {
			mult[i] = 1;
			continue;
		}
		/* i is its group's first qualifying object: the group's sums */
		for (size_t j = i; j < n; j++)
			if (group[j] == group[i] && mult[j] < 0 && os_kac_rate(&o[j], 1, NULL) > 0) {
				done += o[j].done_w;
				rates += os_kac_touched(&o[j]) / (o[j].rt_w / o[j].done_w);
			}
		for (size_t j = i; j < n; j++)
			if (group[j] == group[i] && mult[j] < 0 && os_kac_rate(&o[j], 1, NULL) > 0)
				mult[j] = done * (os_kac_touched(&o[j]) / (o[j].rt_w / o[j].done_w)) /
					  rates / o[j].done_w;
	}
}
