/* sampler.h - access-sample sources behind one small interface.
 *
 * Every source is a perf_event configuration plus a way to get the data
 * address of a sample: the software sampler ("soft": task-clock + user
 * registers + decoding of the instruction before the IP, sampler_soft.c)
 * and the PMU samplers (PEBS load latency / precise stores, AMD IBS op,
 * encoded by libpfm4: sampler_pmu.c, pmu_event.h).
 *
 * Choice (-e): "soft"/"task-clock" the software sampler; "auto" (the
 * default) a PMU sampler when the kernel offers a PMU this processor can
 * sample addresses with, else the software sampler (and, should the PMU
 * event fail to open, the software sampler after all: os_sampler_fallback,
 * with a note); any other name a PMU event, an error where there is none.
 * Return convention: 0 on success, -errno on failure (err gets one line).
 */
#ifndef OBJSCOPE_SAMPLER_H
#define OBJSCOPE_SAMPLER_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/decode.h"
#include "attacher/cli/options.h"
#include "attacher/sampling/perf.h"
#include "attacher/sampling/pmu_event.h"

/* How a source reads the target's code and finds function starts; given by
 * the collector. asid names an address space (a process image). */
struct os_code_access {
	void *arg;
	ssize_t (*read)(void *arg, uint32_t pid, uint64_t addr, void *buf, size_t len);
	uint64_t (*func_start)(void *arg, uint32_t asid, uint64_t addr);
};

struct os_sampler;

struct os_sampler_ops {
	const char *name;   /* "soft", "pebs", ... (meta.sampler) */
	int (*init)(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen);
	/* Fills the sampling part of attr (type, config, period, sample_type...). */
	void (*setup)(struct os_sampler *s, struct perf_event_attr *attr);
	/* Data address of a sample: OS_DEC_OK with *addr and *insn (address of
	 * the accessing instruction, the leaf of the access path), or why not. */
	enum os_dec_status (*address)(struct os_sampler *s, const struct os_perf_sample *ps,
				      uint32_t asid, const struct os_code_access *ca,
				      uint64_t *addr, uint64_t *insn);
	void (*destroy)(struct os_sampler *s);
};

struct os_sampler {
	const struct os_sampler_ops *ops;
	const char *event;  /* meta.event, e.g. "task-clock" */
	uint64_t period;    /* meta.period, in event units */
	void *priv;
	bool pmu;           /* a PMU sampler (ADDR, WEIGHT, DATA_SRC with each sample) */
	bool chosen_auto;   /* picked by -e auto: may fall back to the software sampler */
	char note[256];     /* why -e auto took the software sampler; "" if it did not */
};

/* The sysfs tree os_sampler_create reads the kernel's PMUs from ("/sys";
 * tests point it at a tree of their own). */
extern const char *os_sampler_sysfs;

/* Chooses the source named by -e ("soft" or a PMU event name). */
int os_sampler_create(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen);
void os_sampler_destroy(struct os_sampler *s);
/* Whether -e `event` can be used here (option parsing: before any
 * command runs). 0, or -errno and one line in err. */
int os_sampler_check(const char *event, char *err, size_t errlen);
/* -e auto took a PMU whose event could not be opened (why: the error):
 * the software sampler instead, with a note saying so. 0 or -errno. */
int os_sampler_fallback(struct os_sampler *s, const struct os_opts *o, const char *why,
			char *err, size_t errlen);

extern const struct os_sampler_ops os_sampler_soft_ops;
/* The PMU samplers (sampler_pmu.c): meta.sampler "pebs-load", "pebs-store",
 * "pebs" (another precise memory event: address only) and "ibs-op". */
const struct os_sampler_ops *os_sampler_pmu_ops(enum os_pmu_kind k);
int os_sampler_pmu_init(struct os_sampler *s, const struct os_pmu_event *ev, char *err,
			size_t errlen);

#endif
