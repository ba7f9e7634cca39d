/* memsrc.c - the PMU data-source observer (memsrc.h): what the PMU said
 * of each attributed sample, summed per allocation context. */
#include "attacher/analyses/memsrc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/collector.h"
#include "attacher/sampling/data_src.h"
#include "common/grow.h"

/* What take keeps with the queued sample. */
struct taken {
	uint32_t weight; /* latency in cycles, 0: none */
	uint8_t level;   /* enum os_mem_level */
	uint8_t flags;   /* OS_MS_* */
	uint8_t has;     /* the PMU said something */
	uint8_t pad;
};

struct memsrc {
	struct os_collector *c;
	struct os_memsrc *ctx; /* per attribution context (os_attrib.ctx) */
	size_t nctx, capctx;
	uint64_t samples;      /* attributed samples with a data source */
};

static int ms_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct memsrc *m = calloc(1, sizeof(*m));

	(void)err;
	(void)errlen;
	if (!m)
		return -ENOMEM;
	m->c = c;
	*self = m;
	return 0;
}

static void ms_take(void *self, const struct os_obs_take *t, void *data)
{
	struct taken *k = data;
	struct os_mem_src src;

	(void)self;
	if (!t->ps || !(t->ps->has & (OS_PS_WEIGHT | OS_PS_DATA_SRC)))
		return;
	k->has = 1;
	k->weight = t->ps->weight > UINT32_MAX ? UINT32_MAX : (uint32_t)t->ps->weight;
	if (t->ps->has & OS_PS_DATA_SRC) {
		os_data_src_decode(t->ps->data_src, &src);
		k->level = src.level;
		k->flags = src.flags;
	} else {
		k->level = OS_LVL_UNKNOWN;
	}
}

static void add_metrics(uint64_t *m, const struct taken *k)
{
	m[OS_M_LATENCY] += k->weight;
	m[OS_M_L1_MISS] += !!(k->flags & OS_MS_L1_MISS);
	m[OS_M_REMOTE] += !!(k->flags & OS_MS_REMOTE);
}

static void ms_sample(void *self, const struct os_obs_sample *s)
{
	struct memsrc *m = self;
	const struct taken *k = s->data;
	struct os_attrib *a = &m->c->attrib;
	struct os_memsrc *f;

	if (!k->has || s->ctx == OS_NONE)
		return;
	if (s->ctx >= m->nctx) {
		struct os_memsrc *n = os_grow(m->ctx, &m->capctx, (size_t)s->ctx + 1, sizeof(*n), 64);

		if (!n)
			return; /* the metric slots still get it below */
		memset(n + m->nctx, 0, ((size_t)s->ctx + 1 - m->nctx) * sizeof(*n));
		m->ctx = n;
		m->nctx = (size_t)s->ctx + 1;
	}
	m->samples++;
	add_metrics(a->ctx[s->ctx].metrics, k);
	if (s->acc != OS_NONE)
		add_metrics(a->acc[s->acc].metrics, k);
	f = &m->ctx[s->ctx];
	f->level[k->level < OS_LVL_COUNT ? k->level : OS_LVL_UNKNOWN]++;
	if (k->flags & OS_MS_TLB_KNOWN) {
		f->tlb_known++;
		f->tlb_miss += !!(k->flags & OS_MS_TLB_MISS);
	}
	if (k->weight)
		f->lat_hist[os_lat_bucket(k->weight)]++;
}

static void ms_notes(void *self, struct os_profile *p)
{
	struct memsrc *m = self;

	if (m->c->sampler.pmu) /* measured, even where no sample had a source */
		p->analyses |= OS_AN_MEMSRC;
}

static int ms_sections(void *self, const struct os_obs_build *b)
{
	struct memsrc *m = self;

	if (!(b->p->analyses & OS_AN_MEMSRC))
		return 0;
	for (size_t i = 0; i < m->nctx && i < b->c->attrib.nctx; i++) {
		struct os_memsrc *d;
		const uint64_t *sv = (const uint64_t *)&m->ctx[i];
		uint64_t *dv;

		if (b->ctxmap[i] == OS_NONE)
			continue;
		d = &b->p->contexts[b->ctxmap[i]].mem;
		dv = (uint64_t *)d;
		/* contexts of the attribution may share a profile context */
		for (size_t j = 0; j < offsetof(struct os_memsrc, numa_local) / 8; j++)
			dv[j] += sv[j];
	}
	return 0;
}

static void ms_destroy(void *self)
{
	struct memsrc *m = self;

	if (!m)
		return;
	free(m->ctx);
	free(m);
}

const struct os_observer_ops os_memsrc_observer = {
	.name = "memsrc",
	.sample_data = sizeof(struct taken),
	.start = ms_start,
	.take = ms_take,
	.sample = ms_sample,
	.profile_notes = ms_notes,
	.profile_sections = ms_sections,
	.destroy = ms_destroy,
};
