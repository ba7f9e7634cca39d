/* replica_math.h - the figures of OJXPerf's replica analysis from the raw
 * counts of one allocation context (struct os_replica):
 *   theta = equivalent / (equivalent + different)       replication factor
 *   alpha = full_differ_match / full_differ              chance a sampled offset
 *           matches although the objects differ (measured, not assumed)
 *   omega = theta - alpha                                lower bound
 *   gamma = 1/(2(X-1)) + sqrt(1/(4(X-1)^2) + (theta-alpha)/(1-alpha))
 *                                                        upper bound, X objects
 *   exact = exact_twins / exact_objects                  whole-content figure
 * A figure that cannot be computed (no comparisons, X < 2, alpha = 1, no
 * checks) has its has_* flag cleared; report formats print null / "-". */
#ifndef OBJSCOPE_COMMON_REPLICA_MATH_H
#define OBJSCOPE_COMMON_REPLICA_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "common/profile.h"

struct os_replica_figures {
	bool has_theta, has_alpha, has_omega, has_gamma, has_exact;
	double theta, alpha, omega, gamma, exact;
	uint64_t comparisons;  /* equivalent + different */
	uint64_t alpha_checks; /* full_differ: the checks alpha rests on */
};

/* objects: X, the number of objects of the context (its allocation count). */
void os_replica_figures(const struct os_replica *r, uint64_t objects,
			struct os_replica_figures *out);

#endif
