/* sampler.h - access-sample sources behind one small interface.
 *
 * Every source is a perf_event configuration plus a way to get the data
 * address of a sample: the software sampler ("soft": task-clock + user
 * registers + decoding of the instruction before the IP) now; PMU sources
 * (PEBS load latency, AMD IBS through libpfm4) slot in beside it as
 * sampler_pebs.c / sampler_ibs.c with their own ops.
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
};

/* Chooses the source named by -e ("soft" or a PMU event name). */
int os_sampler_create(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen);
void os_sampler_destroy(struct os_sampler *s);

extern const struct os_sampler_ops os_sampler_soft_ops;

#endif
