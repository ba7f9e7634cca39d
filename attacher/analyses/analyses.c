/* analyses.c - the one place that maps options to the analyses observing
 * the collection loop (attacher/core/observer.h). The collector calls the
 * enabled observers in this table's order. */
#include "attacher/cli/options.h"
#include "attacher/core/observer.h"
#include "attacher/core/slices.h"
#include "attacher/analyses/memsrc.h"
#include "attacher/analyses/replica.h"
#include "attacher/analyses/lifetime.h"
#include "attacher/analyses/reuse.h"

static bool always(const struct os_opts *o, bool pmu)
{
	(void)o;
	(void)pmu;
	return true;
}

static bool replicas(const struct os_opts *o, bool pmu)
{
	(void)pmu;
	return o->replicas;
}

/* the PMU's data sources: only a PMU sampler gives them (the software
 * sampler's samples would cost two callbacks each for nothing) */
static bool pmu_sampler(const struct os_opts *o, bool pmu)
{
	(void)o;
	return pmu;
}

static bool numa(const struct os_opts *o, bool pmu)
{
	(void)pmu;
	return o->numa;
}

static bool lifetimes(const struct os_opts *o, bool pmu)
{
	(void)pmu;
	return o->lifetimes;
}

static bool reuse(const struct os_opts *o, bool pmu)
{
	(void)pmu;
	return o->reuse;
}

static const struct {
	const struct os_observer_ops *ops;
	bool (*enabled)(const struct os_opts *o, bool pmu);
} table[] = {
	{ &os_slices_observer, always },      /* OS_SEC_SLICES: report --tid/--time/... */
	{ &os_replica_observer, replicas },   /* --replicas (docs/REPLICAS.md) */
	{ &os_memsrc_observer, pmu_sampler }, /* PMU data sources: a PMU sampler only */
	{ &os_numa_observer, numa },          /* --numa (docs/PMU.md) */
	{ &os_lifetime_observer, lifetimes }, /* --lifetimes (docs/LIFETIMES.md) */
	{ &os_reuse_observer, reuse },        /* --reuse (docs/REUSE.md) */
};

size_t os_observers_enabled(const struct os_opts *o, bool pmu,
			    const struct os_observer_ops **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]) && n < max; i++)
		if (table[i].enabled(o, pmu))
			out[n++] = table[i].ops;
	return n;
}
