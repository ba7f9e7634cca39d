/* sampler_soft.c - the software sampler: task-clock samples with user
 * registers; the data address comes from decoding the instruction that
 * retired just before the sampled IP (attacher/decode.h). Decoded operands
 * are cached per (address space, IP): hot loops hit the cache. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/sampler.h"
#include "common/hashmap.h"

#define SWEEP_MAX 4096  /* longest forward sweep from a function start */
#define BACK_BYTES 64   /* backward sweep window */

struct soft {
	struct os_decoder *dec;
	struct os_hmap cache;       /* (asid << 48 | ip) -> index into insns */
	struct os_mem_insn *insns;
	size_t n, cap;
	uint8_t code[SWEEP_MAX];
};

static int soft_init(struct os_sampler *s, const struct os_opts *o, char *err, size_t errlen)
{
	struct soft *st = calloc(1, sizeof(*st));

	(void)err;
	(void)errlen;
	if (!st)
		return -ENOMEM;
	st->dec = os_decoder_new();
	if (!st->dec) {
		free(st);
		return -ENOMEM;
	}
	os_hmap_init(&st->cache);
	s->priv = st;
	s->event = "task-clock";
	s->period = 1000000000ULL / o->freq; /* task-clock counts nanoseconds */
	if (!s->period)
		s->period = 1;
	return 0;
}

static void soft_setup(struct os_sampler *s, struct perf_event_attr *attr)
{
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->sample_period = s->period;
	attr->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			     PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
	attr->sample_regs_user = OS_REGS_MASK;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
}

static enum os_dec_status decode_ip(struct soft *st, uint32_t pid, uint32_t asid, uint64_t ip,
				    const struct os_code_access *ca, struct os_mem_insn *m,
				    bool *unreadable)
{
	uint64_t start = ca->func_start(ca->arg, asid, ip - 1);
	uint64_t from, boundary = 0;
	ssize_t got;

	if (start && start < ip && ip - start <= SWEEP_MAX) {
		from = start;
		boundary = start;
	} else {
		from = ip - BACK_BYTES;
	}
	got = ca->read(ca->arg, pid, from, st->code, (size_t)(ip - from));
	if (got != (ssize_t)(ip - from)) {
		memset(m, 0, sizeof(*m));
		m->status = OS_DEC_UNDECODABLE;
		*unreadable = true;
		return OS_DEC_UNDECODABLE;
	}
	return os_decode_prev(st->dec, st->code, (size_t)(ip - from), from, ip, boundary, m);
}

static enum os_dec_status soft_address(struct os_sampler *s, const struct os_perf_sample *ps,
				       uint32_t asid, const struct os_code_access *ca,
				       uint64_t *addr, uint64_t *insn)
{
	struct soft *st = s->priv;
	uint64_t key = ((uint64_t)asid << 48) | (ps->ip & ((1ULL << 48) - 1)), idx;
	struct os_mem_insn m, *mp;

	if (!(ps->has & OS_PS_REGS) || ps->ip < BACK_BYTES)
		return OS_DEC_UNDECODABLE;
	if (os_hmap_get(&st->cache, key, &idx)) {
		mp = &st->insns[idx];
	} else {
		bool unreadable = false;
		enum os_dec_status rc = decode_ip(st, ps->pid, asid, ps->ip, ca, &m, &unreadable);

		if (unreadable) /* not cached: the next sample may read it */
			return rc;
		if (st->n == st->cap) {
			size_t cap = st->cap ? st->cap * 2 : 1024;
			struct os_mem_insn *n = realloc(st->insns, cap * sizeof(*n));

			if (!n)
				return OS_DEC_UNDECODABLE;
			st->insns = n;
			st->cap = cap;
		}
		st->insns[st->n] = m;
		if (os_hmap_put(&st->cache, key, st->n) < 0)
			return OS_DEC_UNDECODABLE;
		mp = &st->insns[st->n++];
	}
	*insn = mp->insn_addr ? mp->insn_addr : ps->ip;
	if (mp->status != OS_DEC_OK)
		return (enum os_dec_status)mp->status;
	*addr = os_decode_ea(mp, ps->regs);
	return OS_DEC_OK;
}

static void soft_destroy(struct os_sampler *s)
{
	struct soft *st = s->priv;

	if (!st)
		return;
	os_decoder_free(st->dec);
	os_hmap_destroy(&st->cache);
	free(st->insns);
	free(st);
	s->priv = NULL;
}

const struct os_sampler_ops os_sampler_soft_ops = {
	.name = "soft",
	.init = soft_init,
	.setup = soft_setup,
	.address = soft_address,
	.destroy = soft_destroy,
};
