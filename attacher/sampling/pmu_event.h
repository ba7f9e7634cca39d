/* pmu_event.h - PMU address-sampling events: names as users know them
 * (perf's mem-loads / mem-stores, libpfm4 names such as
 * MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30), encoded by libpfm4 into a
 * perf_event_attr, and whether the running kernel offers a PMU at all.
 *
 * Intel: PEBS load latency (a load-latency event, ldlat threshold in
 * config1) and precise stores (MEM_INST_RETIRED:ALL_STORES), precise_ip 2.
 * AMD: libpfm4 knows the core events of Zen but not IBS, and AMD's core
 * events carry no data address: address sampling there is IBS op, the
 * kernel's dynamic "ibs_op" PMU (its type read from sysfs).
 *
 * LIBPFM_FORCE_PMU (libpfm4's own variable, e.g. skl, icl,
 * amd64_fam17h_zen2) makes the encoding that of another processor: how the
 * unit tests check both vendors on any machine.
 * Return convention: 0, or -errno with one line in err.
 */
#ifndef OBJSCOPE_PMU_EVENT_H
#define OBJSCOPE_PMU_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum os_pmu_kind {
	OS_PMU_PEBS_LOAD = 1, /* load latency: address, latency, data source */
	OS_PMU_PEBS_STORE,    /* precise stores: address, L1 hit/miss */
	OS_PMU_PEBS_MEM,      /* another precise memory event: address only */
	OS_PMU_IBS_OP,        /* AMD IBS op: address, latency, data source */
};

struct os_pmu_event {
	enum os_pmu_kind kind;
	char pmu[48];         /* libpfm4's PMU ("skl", "amd64_fam17h_zen2") */
	char desc[400];       /* meta.event: what was asked, the encoding and precise level */
	uint32_t type;        /* perf_event_attr fields */
	uint64_t config, config1;
	unsigned precise;     /* precise_ip */
	uint64_t period;      /* sample_period, in event units */
	unsigned ldlat;       /* load-latency threshold in cycles, 0: none */
	bool needs_ibs_type;  /* type is the kernel's ibs_op type (os_pmu_kernel) */
};

/* What the kernel offers, from sysfs (root: "/sys" normally; tests give
 * a tree of their own). */
struct os_pmu_kernel {
	bool cpu;             /* a core PMU: event_source/devices/cpu (or cpu_core) */
	bool ibs_op;          /* AMD IBS op */
	uint32_t ibs_op_type; /* its perf type */
	bool ibs_cnt_ctl;     /* IBS op can count ops (format/cnt_ctl) */
};
void os_pmu_kernel(const char *root, struct os_pmu_kernel *k);

/* Whether `name` is a PMU event request rather than the software sampler
 * ("soft", "task-clock") or "auto". */
bool os_pmu_is_event(const char *name);

/* Encodes `name` for the processor libpfm4 finds (or is forced to). A
 * period given in the name (libpfm4's :period=N) is kept, else the kind's
 * default. k: the kernel's PMUs (IBS type); may be NULL (then the IBS type
 * is left 0 for the caller). */
int os_pmu_encode(const char *name, const struct os_pmu_kernel *k, struct os_pmu_event *ev,
		  char *err, size_t errlen);

/* For -e auto: the event to use when the kernel offers a PMU this
 * processor can sample addresses with ("mem-loads"), else NULL and why
 * (one line) in why. */
const char *os_pmu_auto(const struct os_pmu_kernel *k, char *why, size_t whylen);

#endif
