/* memsrc.h - the memory analyses (PMU data sources, NUMA) as observers of the
 * collection loop (attacher/core/observer.h):
 *
 * os_memsrc_observer (always on, inert without a PMU sampler): the PMU's
 * data source and latency of each attributed sample into the contexts'
 * metric slots (OS_M_LATENCY, OS_M_L1_MISS, OS_M_REMOTE) and their memory
 * figures (struct os_memsrc: levels, data TLB, latency histogram).
 *
 * os_numa_observer (--numa): the node of each sampled access's page, read
 * with move_pages on the target while it runs (cached per page), against
 * the node of the CPU that made the access (PERF_SAMPLE_CPU); per context
 * local / remote / unknown and the nodes its sampled pages lay on. A
 * one-node machine says "1 node: all local".
 */
#ifndef OBJSCOPE_MEMSRC_H
#define OBJSCOPE_MEMSRC_H

#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/observer.h"

extern const struct os_observer_ops os_memsrc_observer;
extern const struct os_observer_ops os_numa_observer;

/* The machine's NUMA topology as the NUMA observer reads it: libnuma and
 * move_pages normally; unit tests put one of their own in
 * os_numa_topo_override (before the observer starts). */
struct os_numa_topo {
	int nodes;
	int (*cpu_node)(void *arg, uint32_t cpu);          /* < 0: unknown */
	int (*page_node)(void *arg, pid_t pid, uint64_t page); /* < 0: unknown / absent */
	void *arg;
};
extern const struct os_numa_topo *os_numa_topo_override;

#endif
