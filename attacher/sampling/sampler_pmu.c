/* sampler_pmu.c - the PMU samplers: Intel PEBS (load latency, precise
 * stores, other precise memory events) and AMD IBS op, encoded by libpfm4
 * (pmu_event.h). The data address, the load latency (WEIGHT), where the
 * data came from (DATA_SRC) and the CPU come with each sample from the
 * hardware: nothing is decoded, so `address` only checks that the PMU gave
 * one. The figures beyond the address are the memory observer's
 * (attacher/analyses/memsrc.c), the pages' nodes the NUMA observer's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/sampling/pmu_event.h"
#include "attacher/sampling/sampler.h"

struct pmu {
	struct os_pmu_event ev;
};

/* Set by os_sampler_create before init (the encoding was made there). */
int os_sampler_pmu_init(struct os_sampler *s, const struct os_pmu_event *ev, char *err,
			size_t errlen)
{
	struct pmu *st = calloc(1, sizeof(*st));

	(void)err;
	(void)errlen;
	if (!st)
		return -ENOMEM;
	st->ev = *ev;
	s->priv = st;
	s->event = st->ev.desc;
	s->period = st->ev.period;
	return 0;
}

static int pmu_init(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen)
{
	(void)o;
	/* os_sampler_create encodes first and calls os_sampler_pmu_init */
	if (!s->priv) {
		snprintf(err, errlen, "PMU sampler started without an event");
		return -EINVAL;
	}
	return 0;
}

static void pmu_setup(struct os_sampler *s, struct perf_event_attr *attr)
{
	const struct pmu *st = s->priv;

	attr->type = st->ev.type;
	attr->config = st->ev.config;
	attr->config1 = st->ev.config1;
	attr->precise_ip = st->ev.precise;
	attr->sample_period = st->ev.period;
	/* REGS_USER: the access path's unwinding (the leaf is the IP) */
	attr->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			     PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			     PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
	attr->sample_regs_user = OS_REGS_MASK;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
}

static enum os_dec_status pmu_address(struct os_sampler *s, const struct os_perf_sample *ps,
				      uint32_t asid, const struct os_code_access *ca,
				      uint64_t *addr, uint64_t *insn)
{
	(void)s;
	(void)asid;
	(void)ca;
	/* precise: the IP is the accessing instruction itself */
	*insn = ps->ip;
	if (!(ps->has & OS_PS_ADDR) || !ps->addr)
		return OS_DEC_UNDECODABLE; /* the PMU gave none (counted as undecodable) */
	*addr = ps->addr;
	return OS_DEC_OK;
}

static void pmu_destroy(struct os_sampler *s)
{
	free(s->priv);
	s->priv = NULL;
}

#define PMU_OPS(var, nm)                                                       \
	const struct os_sampler_ops var = {                                    \
		.name = nm,                                                    \
		.init = pmu_init,                                              \
		.setup = pmu_setup,                                            \
		.address = pmu_address,                                        \
		.destroy = pmu_destroy,                                        \
	}

PMU_OPS(os_sampler_pebs_load_ops, "pebs-load");
PMU_OPS(os_sampler_pebs_store_ops, "pebs-store");
PMU_OPS(os_sampler_pebs_ops, "pebs");
PMU_OPS(os_sampler_ibs_op_ops, "ibs-op");

const struct os_sampler_ops *os_sampler_pmu_ops(enum os_pmu_kind k)
{
	switch (k) {
	case OS_PMU_PEBS_LOAD:
		return &os_sampler_pebs_load_ops;
	case OS_PMU_PEBS_STORE:
		return &os_sampler_pebs_store_ops;
	case OS_PMU_IBS_OP:
		return &os_sampler_ibs_op_ops;
	case OS_PMU_PEBS_MEM:
		break;
	}
	return &os_sampler_pebs_ops;
}
