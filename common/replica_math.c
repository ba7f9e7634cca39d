/* replica_math.c - see replica_math.h. */
#include "common/replica_math.h"

#include <math.h>
#include <string.h>

static double clamp01(double v)
{
	return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

void os_replica_figures(const struct os_replica *r, uint64_t objects,
			struct os_replica_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->comparisons = r->equivalent + r->different;
	out->alpha_checks = r->full_differ;
	if (out->comparisons) {
		out->has_theta = true;
		out->theta = (double)r->equivalent / (double)out->comparisons;
	}
	if (r->full_differ) {
		out->has_alpha = true;
		out->alpha = (double)r->full_differ_match / (double)r->full_differ;
	}
	if (r->exact_objects) {
		out->has_exact = true;
		out->exact = (double)r->exact_twins / (double)r->exact_objects;
	}
	if (!out->has_theta)
		return;
	/* Without a measured alpha the bounds use alpha = 0 (no false matches
	 * known); has_alpha tells the reader which. */
	double a = out->has_alpha ? out->alpha : 0.0;
	out->has_omega = true;
	out->omega = clamp01(out->theta - a);
	if (objects >= 2 && a < 1.0) {
		double x1 = (double)(objects - 1);
		double q = (out->theta - a) / (1.0 - a);
		if (q < 0.0)
			q = 0.0;
		out->has_gamma = true;
		out->gamma = clamp01(1.0 / (2.0 * x1) + sqrt(1.0 / (4.0 * x1 * x1) + q));
	}
}
