/* lifetime_math.h - the figures of the lifetime analysis from the bins of
 * one allocation context (struct os_lifetime, docs/LIFETIMES.md), and the
 * advice drawn from them as ROLP draws it:
 *   pretenure   managed: at least OS_LT_PRETENURE_SHARE of at least
 *               OS_LT_PRETENURE_MIN objects survived OS_LT_PRETENURE_AGE or
 *               more collections (the JVM copies them young for nothing)
 *   dies-young  managed: at least OS_LT_YOUNG_SHARE of at least
 *               OS_LT_YOUNG_MIN objects died before their first collection;
 *               native: as many freed within 1,024 us (allocation hot
 *               spots worth removing: reuse a buffer, keep it on the stack)
 * Live objects count at the age they reached (a lower bound of theirs). A
 * figure that cannot be computed has its has_* flag cleared (null / "-"). */
#ifndef OBJSCOPE_COMMON_LIFETIME_MATH_H
#define OBJSCOPE_COMMON_LIFETIME_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/profile.h"

#define OS_LT_PRETENURE_SHARE 0.9
#define OS_LT_PRETENURE_MIN 100.0
#define OS_LT_PRETENURE_AGE 2
#define OS_LT_YOUNG_SHARE 0.9
#define OS_LT_YOUNG_MIN 1000.0
#define OS_LT_YOUNG_NS 1024000ULL /* native: bins below 1,024 us */

enum os_lt_advice { OS_LT_ADV_NONE = 0, OS_LT_ADV_PRETENURE, OS_LT_ADV_DIES_YOUNG };

struct os_lt_figures {
	double objects, bytes;          /* ended + live */
	double ended, live, live_bytes; /* live: at the end (native: leak candidates) */
	bool has_median;
	uint32_t median_bin;            /* the bin holding the median object */
	bool has_young;
	double young_share;             /* managed: died before a first collection, of
					 * the objects whose first collection came;
					 * native: freed within OS_LT_YOUNG_NS, of
					 * those freed */
	double old_share;               /* managed: age >= OS_LT_PRETENURE_AGE, of all */
	bool has_promoted;
	uint32_t last_bin;              /* highest bin with objects (0 when none) */
	enum os_lt_advice advice;
	char why[160];                  /* the rule that fired, with its figures */
};

void os_lt_figures(const struct os_lifetime *l, struct os_lt_figures *f);
/* Bytes of the objects that survived collection k (k >= 1): age >= k. */
double os_lt_surviving_bytes(const struct os_lifetime *l, uint32_t k);
/* The span of native bin b in ns: [*lo, *hi), *hi = 0 for the last bin. */
void os_lt_bin_ns(uint32_t b, uint64_t *lo, uint64_t *hi);
/* "<1us", "2-4ms", ">=18min"-like label of native bin b into buf. */
const char *os_lt_bin_label(uint32_t b, char *buf, size_t len);
const char *os_lt_advice_name(enum os_lt_advice a);

#endif
