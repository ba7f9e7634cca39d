/* sampler_soft.c - the software sampler: task-clock samples with user
 * registers; the data address comes from decoding the instruction that
 * retired just before the sampled IP (attacher/core/decode.h). Decoded operands
 * are cached per (address space, IP): hot loops hit the cache.
 *
 * Known boundaries. capstone costs about 1 us per instruction here, and a
 * miss used to sweep forward from the function start (hundreds of
 * instructions in libjvm's compiler functions) or to decode the 64
 * candidates of a backward sweep: most of the collector's time. Every
 * sampled IP is an instruction boundary (execution resumes there). These
 * are kept per function (sorted offsets from its start), and a miss sweeps
 * forward from the nearest known boundary below the IP instead: the same
 * instructions as the sweep from the function start, minus the prefix. Code
 * without a function start (JIT code, stubs, the interpreter) keeps its
 * boundaries per 4 KiB page and uses one only when it lies at most
 * BACK_BYTES below the IP: a forward sweep of a few instructions instead of
 * the backward sweep's 64 decodes.
 *
 * Learned boundaries. A forward sweep of a function that lands on the IP
 * steps on instruction starts as certain as the boundary it began at: the
 * first one of each LEARN_LINE bytes is kept too (decoder path, at most one
 * per line, so 4 bytes per 64 bytes of swept code), and a later miss in the
 * function starts its sweep from the nearest one below the IP whenever it
 * would have swept forward from a sampled IP or the function start. That
 * sweep steps on the same instructions as the one from farther back (x86
 * decoding from a boundary is deterministic), so the answer is the same.
 * They are never used where the backward sweep would decide (no sampled IP
 * within SWEEP_MAX), nor kept for code without a function start (JIT code
 * may be rewritten under the same address), and a backward sweep's answer
 * never becomes a boundary: it is a vote, not a certainty. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/sampling/sampler.h"
#include "common/grow.h"
#include "common/hashmap.h"
#include "common/search.h"

#define SWEEP_MAX 4096  /* longest forward sweep from a function start */
#define BACK_BYTES 64   /* backward sweep window */
#define LEARN_LINE 64   /* at most one learned boundary per this many bytes */
#define ADDR_MASK ((1ULL << 48) - 1)
#define PAGE_KEY (1ULL << 47) /* bounds key of code without a function start */

/* Sorted offsets from the base of a function (or page). */
struct offs {
	uint32_t *off;
	uint32_t n, cap;
};

/* Known instruction boundaries of one function (or page): the sampled IPs,
 * and (functions only) starts learned from forward sweeps, at most one per
 * LEARN_LINE bytes of code. */
struct bounds {
	struct offs ips, learned;
};

struct soft {
	struct os_decoder *dec;
	struct os_hmap cache;       /* (asid << 48 | ip) -> index into insns */
	struct os_mem_insn *insns;
	size_t n, cap;
	struct os_hmap bidx;        /* (asid << 48 | start [| PAGE_KEY]) -> index into bnd */
	struct bounds *bnd;
	size_t nb, capb;
	uint8_t code[SWEEP_MAX];
};

/* The boundary set of (asid, base); created when `create`. NULL if absent
 * or out of memory (the sampler then just sweeps from farther away). */
static struct bounds *bounds_of(struct soft *st, uint32_t asid, uint64_t key_addr, bool create)
{
	uint64_t key = ((uint64_t)asid << 48) | key_addr, idx;

	if (os_hmap_get(&st->bidx, key, &idx))
		return &st->bnd[idx];
	if (!create)
		return NULL;
	{
		struct bounds *n = os_grow(st->bnd, &st->capb, st->nb + 1, sizeof(*n), 256);

		if (!n)
			return NULL;
		st->bnd = n;
	}
	if (os_hmap_put(&st->bidx, key, st->nb) < 0)
		return NULL;
	memset(&st->bnd[st->nb], 0, sizeof(st->bnd[0]));
	return &st->bnd[st->nb++];
}

/* Index of the first offset >= off. */
static uint32_t offs_lower(const struct offs *b, uint32_t off)
{
	return (uint32_t)os_lower_bound(b->n, i, b->off[i] < off);
}

static void offs_add(struct offs *b, uint32_t off)
{
	uint32_t i = offs_lower(b, off);

	if (i < b->n && b->off[i] == off)
		return;
	{
		uint32_t *n = os_grow32(b->off, &b->cap, (size_t)b->n + 1, sizeof(*n), 8, UINT32_MAX);

		if (!n)
			return;
		b->off = n;
	}
	memmove(b->off + i + 1, b->off + i, (b->n - i) * sizeof(*b->off));
	b->off[i] = off;
	b->n++;
}

/* The greatest known boundary in [lo, ip) of the set based at base; 0 if none. */
static uint64_t offs_below(const struct offs *b, uint64_t base, uint64_t lo, uint64_t ip)
{
	uint32_t i;

	if (!b || ip <= base || ip - base > UINT32_MAX)
		return 0;
	i = offs_lower(b, (uint32_t)(ip - base));
	if (i == 0 || base + b->off[i - 1] < lo)
		return 0;
	return base + b->off[i - 1];
}

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
	os_hmap_init(&st->bidx);
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

/* Remembers, of the certain instruction starts a forward sweep from a
 * boundary of function `base` stepped on, the first one of each LEARN_LINE
 * bytes (counted from base) that the sweep entered at its line start: the
 * same one whichever sweep passes there, so a function keeps at most one per
 * line. The start in the sweep's first (partial) line is skipped. */
static void learn_path(struct bounds *b, uint64_t base, const uint64_t *path, unsigned n)
{
	uint64_t line = (path[0] - base) / LEARN_LINE;

	for (unsigned i = 1; i < n; i++) {
		uint64_t off = path[i] - base;

		if (off / LEARN_LINE == line)
			continue;
		line = off / LEARN_LINE;
		if (off <= UINT32_MAX)
			offs_add(&b->learned, (uint32_t)off);
	}
}

static enum os_dec_status decode_ip(struct soft *st, uint32_t pid, uint32_t asid, uint64_t ip,
				    const struct os_code_access *ca, struct os_mem_insn *m,
				    bool *unreadable)
{
	uint64_t start = ca->func_start(ca->arg, asid, ip - 1);
	uint64_t from, boundary = 0, base, known, learned = 0;
	const uint64_t *path;
	struct bounds *b;
	enum os_dec_status rc;
	unsigned np;
	ssize_t got;
	bool func = start && start < ip;

	if (func) {
		base = start;
		b = bounds_of(st, asid, start & ADDR_MASK & ~PAGE_KEY, true);
		known = offs_below(b ? &b->ips : NULL, base, ip > SWEEP_MAX ? ip - SWEEP_MAX : 0,
				   ip);
		if (!known && ip - start <= SWEEP_MAX)
			known = start;
		/* A learned start only shortens a forward sweep that would be
		 * made anyway (the same instructions, minus a prefix): where
		 * the backward sweep decides, it still does. */
		if (known && b)
			learned = offs_below(&b->learned, base, known + 1, ip);
	} else {
		base = ip & ~4095ULL;
		b = bounds_of(st, asid, (base & ADDR_MASK) | PAGE_KEY, true);
		known = offs_below(b ? &b->ips : NULL, base, ip - BACK_BYTES, ip);
	}
	if (known && known < ip) {
		from = learned ? learned : known;
		boundary = from;
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
	rc = os_decode_prev(st->dec, st->code, (size_t)(ip - from), from, ip, boundary, m);
	if (func && b && (np = os_decoder_path(st->dec, &path)) > 1)
		learn_path(b, base, path, np);
	/* Only the IP: the start found may come from the backward sweep,
	 * which is a vote, not a certainty. */
	if (b && ip - base <= UINT32_MAX)
		offs_add(&b->ips, (uint32_t)(ip - base));
	return rc;
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
		struct os_mem_insn *n = os_grow(st->insns, &st->cap, st->n + 1, sizeof(*n), 1024);

		if (!n)
			return OS_DEC_UNDECODABLE;
		st->insns = n;
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
	os_hmap_destroy(&st->bidx);
	for (size_t i = 0; i < st->nb; i++) {
		free(st->bnd[i].ips.off);
		free(st->bnd[i].learned.off);
	}
	free(st->bnd);
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
