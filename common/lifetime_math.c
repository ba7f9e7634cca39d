/* lifetime_math.c - figures and advice of the lifetime analysis
 * (lifetime_math.h). */
#include "common/lifetime_math.h"

#include <stdio.h>
#include <string.h>

void os_lt_bin_ns(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	*lo = b ? (1ULL << (b - 1)) * 1000 : 0;
	*hi = b < OS_LT_BINS - 1 ? (1ULL << b) * 1000 : 0;
}

static const char *dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000)
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
	else if (ns < 1000000000ULL)
		snprintf(buf, len, "%llums", (unsigned long long)(ns / 1000000));
	else
		snprintf(buf, len, "%.3gs", (double)ns / 1e9);
	return buf;
}

const char *os_lt_bin_label(uint32_t b, char *buf, size_t len)
{
	uint64_t lo, hi;
	char a[24], z[24];

	os_lt_bin_ns(b, &lo, &hi);
	if (!lo)
		snprintf(buf, len, "<1us");
	else if (!hi)
		snprintf(buf, len, ">=%s", dur(lo, a, sizeof(a)));
	else
		snprintf(buf, len, "%s-%s", dur(lo, a, sizeof(a)), dur(hi, z, sizeof(z)));
	return buf;
}

const char *os_lt_advice_name(enum os_lt_advice a)
{
	switch (a) {
	case OS_LT_ADV_PRETENURE:
		return "pretenure";
	case OS_LT_ADV_DIES_YOUNG:
		return "dies-young";
	default:
		return NULL;
	}
}

double os_lt_surviving_bytes(const struct os_lifetime *l, uint32_t k)
{
	double s = 0;

	for (uint32_t b = k; b < OS_LT_BINS; b++)
		s += l->ended_bytes[b] + l->live_bytes[b];
	return s;
}

void os_lt_figures(const struct os_lifetime *l, struct os_lt_figures *f)
{
	bool managed = l->kind == OS_LT_MANAGED;
	double young = 0, known = 0, old = 0, half, run = 0;
	uint32_t ybins = 0;

	memset(f, 0, sizeof(*f));
	for (uint32_t b = 0; b < OS_LT_BINS; b++) {
		f->ended += l->ended[b];
		f->live += l->live[b];
		f->live_bytes += l->live_bytes[b];
		f->bytes += l->ended_bytes[b] + l->live_bytes[b];
		if (l->ended[b] > 0 || l->live[b] > 0)
			f->last_bin = b;
	}
	f->objects = f->ended + f->live;
	if (l->kind == OS_LT_NONE || f->objects <= 0)
		return;
	/* managed: a live object of age 0 has not met a collection yet;
	 * native: a live object is not freed (a lifetime not over) */
	if (managed) {
		young = l->ended[0];
		known = f->objects - l->live[0];
		for (uint32_t b = OS_LT_PRETENURE_AGE; b < OS_LT_BINS; b++)
			old += l->ended[b] + l->live[b];
		f->old_share = old / f->objects;
		f->has_promoted = (l->flags & OS_LT_F_PROMOTION) != 0;
	} else {
		while (ybins < OS_LT_BINS - 1) {
			uint64_t lo, hi;

			os_lt_bin_ns(ybins, &lo, &hi);
			if (hi > OS_LT_YOUNG_NS)
				break;
			ybins++;
		}
		for (uint32_t b = 0; b < ybins; b++)
			young += l->ended[b];
		known = f->ended;
	}
	if (known > 0) {
		f->has_young = true;
		f->young_share = young / known;
	}
	/* median: managed over every object (live ones at their age so far),
	 * native over the objects freed */
	half = (managed ? f->objects : f->ended) / 2;
	for (uint32_t b = 0; half > 0 && b < OS_LT_BINS; b++) {
		run += l->ended[b] + (managed ? l->live[b] : 0);
		if (run >= half) {
			f->has_median = true;
			f->median_bin = b;
			break;
		}
	}
	if (managed && f->objects >= OS_LT_PRETENURE_MIN && f->old_share >= OS_LT_PRETENURE_SHARE) {
		f->advice = OS_LT_ADV_PRETENURE;
		snprintf(f->why, sizeof(f->why),
			 "pretenure: %.0f%% of %.0f objects survived %d or more collections "
			 "(rule: >= %.0f%% of >= %.0f objects)",
			 100 * f->old_share, f->objects, OS_LT_PRETENURE_AGE,
			 100 * OS_LT_PRETENURE_SHARE, OS_LT_PRETENURE_MIN);
	} else if (f->has_young && known >= OS_LT_YOUNG_MIN && f->young_share >= OS_LT_YOUNG_SHARE) {
		f->advice = OS_LT_ADV_DIES_YOUNG;
		if (managed)
			snprintf(f->why, sizeof(f->why),
				 "dies young: %.0f%% of %.0f objects died before their first "
				 "collection (rule: >= %.0f%% of >= %.0f objects)",
				 100 * f->young_share, known, 100 * OS_LT_YOUNG_SHARE,
				 OS_LT_YOUNG_MIN);
		else
			snprintf(f->why, sizeof(f->why),
				 "dies young: %.0f%% of %.0f objects freed within 1,024 us "
				 "(rule: >= %.0f%% of >= %.0f objects)",
				 100 * f->young_share, known, 100 * OS_LT_YOUNG_SHARE,
				 OS_LT_YOUNG_MIN);
	}
}
