/* profile_merge.c - adding one profile into another, normalised to a
 * common sample period, and which metrics a profile measured (semantics in
 * profile.h). */
#include "common/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"

/* What each sampler objscope has fills in the metric slots. The software
 * sampler (attacher/sampling/sampler_soft.c) decodes the data address from the
 * instruction: no load latency, no data source (L1 miss, remote node). */
static const struct {
	const char *name;
	uint32_t metrics;
} samplers[] = {
	{ "soft", 0 },
	/* PMU samplers (attacher/sampling/sampler_pmu.c): PEBS load latency
	 * and IBS op give latency and data source, precise stores only
	 * whether L1 hit, other precise memory events the address alone */
	{ "pebs-load", (1u << OS_M_LATENCY) | (1u << OS_M_L1_MISS) | (1u << OS_M_REMOTE) },
	{ "ibs-op", (1u << OS_M_LATENCY) | (1u << OS_M_L1_MISS) | (1u << OS_M_REMOTE) },
	{ "pebs-store", 1u << OS_M_L1_MISS },
	{ "pebs", 0 },
};

uint32_t os_sampler_metrics(const char *sampler)
{
	size_t i;

	for (i = 0; sampler && i < sizeof(samplers) / sizeof(samplers[0]); i++)
		if (strcmp(samplers[i].name, sampler) == 0)
			return samplers[i].metrics;
	return 0;
}

uint32_t os_profile_metrics(const struct os_profile *p)
{
	return os_sampler_metrics(os_profile_str(p, p->meta.sampler)) & ~p->merge.unmeasured &
	       OS_M_ALL;
}

/* Scaling a sample count from one period to another: v * num / den,
 * rounded to the nearest. */
struct scale {
	uint64_t num, den;
};

static bool scale_id(const struct scale *s)
{
	return s->num == s->den;
}

static uint64_t sc(uint64_t v, const struct scale *s)
{
	unsigned __int128 x;

	if (scale_id(s))
		return v;
	x = ((unsigned __int128)v * s->num + s->den / 2) / s->den;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

static double scd(double v, const struct scale *s)
{
	return scale_id(s) ? v : v * (double)s->num / (double)s->den;
}

/* A variance of a figure scaled by s: by the square of the factor. */
static double scv(double v, const struct scale *s)
{
	return scd(scd(v, s), s);
}

static void sc_metrics(uint64_t *m, const struct scale *s)
{
	for (int i = 0; i < OS_M_COUNT; i++)
		m[i] = sc(m[i], s);
}

/* The counters that count samples (the others count events, bytes, GCs). */
static const size_t sample_counters[] = {
	offsetof(struct os_counters, samples_total),
	offsetof(struct os_counters, samples_addressed),
	offsetof(struct os_counters, samples_heap),
	offsetof(struct os_counters, samples_attributed),
	offsetof(struct os_counters, lost),
	offsetof(struct os_counters, unaddressed_nomem),
	offsetof(struct os_counters, unaddressed_clobbered),
	offsetof(struct os_counters, unaddressed_undecodable),
	offsetof(struct os_counters, samples_java_heap),
	offsetof(struct os_counters, samples_java_attributed),
	offsetof(struct os_counters, samples_jit),
};

static void sc_counters(struct os_counters *c, const struct scale *s)
{
	for (size_t i = 0; i < sizeof(sample_counters) / sizeof(sample_counters[0]); i++) {
		uint64_t *v = (uint64_t *)((char *)c + sample_counters[i]);

		*v = sc(*v, s);
	}
}

/* dst's counts, rescaled in place (its period drops to a later input's). */
/* Memory figures are sample counts (scaled as samples), the nodes a set. */
static void add_memsrc(struct os_memsrc *d, const struct os_memsrc *s)
{
	uint64_t *dv = (uint64_t *)d;
	const uint64_t *sv = (const uint64_t *)s;

	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		dv[i] += sv[i];
	d->numa_nodes = (d->numa_nodes - s->numa_nodes) | s->numa_nodes;
}

/* Estimated paths (OS_AN_PATHEST): estimated parts summed; the evidence
 * (objects seen) summed, sites the larger; the kind the stronger. */
static void add_pathest(struct os_pathest *d, const struct os_pathest *s)
{
	d->path_est += s->path_est;
	d->evidence += s->evidence;
	d->seen += s->seen;
	d->class_seen += s->class_seen;
	if (s->class_sites > d->class_sites)
		d->class_sites = s->class_sites;
	if (s->kind > d->kind)
		d->kind = s->kind;
}

static void sc_memsrc(struct os_memsrc *m, const struct scale *s)
{
	uint64_t *v = (uint64_t *)m;

	for (size_t i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
		if (&v[i] != &m->numa_nodes)
			v[i] = sc(v[i], s);
}

static void sc_profile(struct os_profile *p, const struct scale *s)
{
	uint32_t i;

	if (scale_id(s))
		return;
	sc_counters(&p->c, s);
	for (i = 0; i < p->ncontexts; i++) {
		p->contexts[i].samples = sc(p->contexts[i].samples, s);
		p->contexts[i].samples_est = scd(p->contexts[i].samples_est, s);
		p->contexts[i].samples_var = scv(p->contexts[i].samples_var, s);
		p->contexts[i].pe.path_est = scd(p->contexts[i].pe.path_est, s);
		sc_metrics(p->contexts[i].metrics, s);
		sc_memsrc(&p->contexts[i].mem, s);
	}
	for (i = 0; i < p->naccesses; i++) {
		p->accesses[i].samples = sc(p->accesses[i].samples, s);
		p->accesses[i].samples_est = scd(p->accesses[i].samples_est, s);
		p->accesses[i].path_est = scd(p->accesses[i].path_est, s);
		sc_metrics(p->accesses[i].metrics, s);
	}
	for (i = 0; i < p->nthreads; i++)
		p->threads[i].samples = sc(p->threads[i].samples, s);
	for (i = 0; i < p->nslices; i++)
		p->slices[i].samples = sc(p->slices[i].samples, s);
	p->est.samples_attributed = scd(p->est.samples_attributed, s);
	p->est.samples_java_attributed = scd(p->est.samples_java_attributed, s);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Decides how src's counts (*ss) and dst's (*ds) are scaled, and records
 * it in dst->merge. */
static void plan_periods(struct os_profile *dst, const struct os_profile *src,
			 struct scale *ss, struct scale *ds)
{
	struct os_merge_info *m = &dst->merge;
	uint64_t dp = dst->meta.period, sp = src->meta.period, common;
	bool empty = !m->inputs && !dp && dst->meta.sampler == OS_NONE && !dst->ncontexts &&
		     !dst->c.samples_total;

	*ss = (struct scale){ 1, 1 };
	*ds = (struct scale){ 1, 1 };
	if (!m->inputs && !empty) { /* a profile merged into: its first input */
		m->inputs = 1;
		m->period_min = m->period_max = dp;
		m->unmeasured = ~os_profile_metrics(dst) & OS_M_ALL;
	}
	m->unmeasured |= ~os_profile_metrics(src) & OS_M_ALL;
	if (!m->inputs++) {
		m->period_min = m->period_max = sp;
		return; /* dst takes src's meta */
	}
	if (sp < m->period_min)
		m->period_min = sp;
	if (sp > m->period_max)
		m->period_max = sp;
	if (src->meta.freq != dst->meta.freq)
		dst->meta.freq = 0; /* no one requested frequency */
	if (!same_str(os_profile_str(dst, dst->meta.event), os_profile_str(src, src->meta.event)) ||
	    ((sp != dp || m->raw) && (!sp || !dp || m->raw))) {
		m->raw = true;
		return;
	}
	if (sp == dp)
		return;
	common = sp < dp ? sp : dp;
	*ss = (struct scale){ sp, common };
	*ds = (struct scale){ dp, common };
	if (sp % common || dp % common)
		m->inexact = true;
	m->scaled = true;
	dst->meta.period = common;
}

/* The note that says how the periods were merged, replaced as inputs come. */
static int period_note(struct os_profile *dst)
{
	const struct os_merge_info *m = &dst->merge;
	const char *ev = os_profile_str(dst, dst->meta.event);
	char buf[512];
	uint32_t id, i;

	if (m->raw)
		snprintf(buf, sizeof(buf),
			 "merged %u profiles whose samples are not comparable (different events, or"
			 " a sample period unknown): sample counts summed as they are; the period"
			 " and event shown are the first profile's",
			 m->inputs);
	else if (m->scaled)
		snprintf(buf, sizeof(buf),
			 "merged %u profiles sampled at different periods (%" PRIu64 " to %" PRIu64
			 " %s): sample counts scaled to period %" PRIu64
			 " (a sample at period N counts N/%" PRIu64 "%s)",
			 m->inputs, m->period_min, m->period_max, ev ? ev : "events",
			 dst->meta.period, dst->meta.period, m->inexact ? ", rounded" : "");
	else
		return 0;
	id = os_profile_string(dst, buf);
	if (id == OS_NONE)
		return -ENOMEM;
	if (m->note && m->note <= dst->meta.nnotes) {
		dst->meta.notes[m->note - 1] = id;
		return 0;
	}
	if (os_profile_add_note(dst, buf))
		return -ENOMEM;
	for (i = 0; i < dst->meta.nnotes; i++)
		if (dst->meta.notes[i] == id)
			dst->merge.note = i + 1;
	return 0;
}

/* A lookup table from content hash to an index in dst; collisions with
 * different content move on along a fixed probe sequence of keys. */
typedef bool (*match_fn)(const struct os_profile *p, uint32_t idx, const void *key);

static uint64_t key_fix(uint64_t k)
{
	return k == UINT64_MAX ? k - 1 : k;
}

static uint32_t lookup(const struct os_hmap *m, uint64_t h, match_fn eq,
		       const struct os_profile *p, const void *key, uint64_t *slot)
{
	uint64_t k = key_fix(h), v;

	*slot = k;
	while (os_hmap_get(m, k, &v)) {
		if (eq(p, (uint32_t)v, key))
			return (uint32_t)v;
		k = key_fix(os_hash64(k + 0x9e3779b97f4a7c15ULL));
	}
	*slot = k;
	return OS_NONE;
}

/* Whether a frame's address is part of its identity when profiles merge.
 * A frame is a call site, not a line: where the DWARF gives a
 * column, (line, column) tells two calls on one line apart and stays the
 * same across builds of one source, so the address does not count; a native
 * frame of a module without a column (no DWARF, or no column info) is its
 * module offset; a frame without a name ("[unknown] 0xADDR") its address.
 * Frames of files written before columns existed (OS_COLUMN_LINE_ONLY) are
 * their line, as their writers merged them. Frames with different columns
 * never compare equal, so this is an equivalence. */
static bool frame_addr_counts(const struct os_frame *f)
{
	return f->name == OS_NONE ||
	       (f->kind == OS_FRAME_NATIVE && f->module != OS_NONE && !f->column);
}

/* Frames are "equal for merging" when their strings, line and column are,
 * and their addresses where those count (frame_addr_counts). */
static bool frame_same(const struct os_frame *a, const struct os_frame *b)
{
	return a->kind == b->kind && a->name == b->name && a->module == b->module &&
	       a->file == b->file && a->line == b->line && a->column == b->column &&
	       (!frame_addr_counts(a) || a->addr == b->addr);
}

static uint64_t frame_hash(uint64_t h, const struct os_frame *f)
{
	h = os_hash64(h ^ (((uint64_t)f->kind << 32) | f->name));
	h = os_hash64(h ^ (((uint64_t)f->module << 32) | f->file));
	h = os_hash64(h ^ ((uint64_t)f->column << 32 | f->line));
	if (frame_addr_counts(f))
		h = os_hash64(h ^ f->addr);
	return h;
}

static uint64_t stack_hash(const struct os_profile *p, uint32_t stack)
{
	const struct os_stack *s;
	uint64_t h;
	uint32_t i;

	if (stack == OS_NONE)
		return 0x5bd1e995;
	s = &p->stacks[stack];
	h = os_hash64(s->nframes + 1);
	for (i = 0; i < s->nframes; i++)
		h = frame_hash(h, &p->frames[s->frames[i]]);
	return h;
}

static bool stack_same(const struct os_profile *p, uint32_t a, uint32_t b)
{
	const struct os_stack *x, *y;
	uint32_t i;

	if (a == b)
		return true;
	if (a == OS_NONE || b == OS_NONE)
		return false;
	x = &p->stacks[a];
	y = &p->stacks[b];
	if (x->nframes != y->nframes)
		return false;
	for (i = 0; i < x->nframes; i++)
		if (!frame_same(&p->frames[x->frames[i]], &p->frames[y->frames[i]]))
			return false;
	return true;
}

/* (type, stack) for contexts; (context, stack) for accesses. */
struct pair {
	uint32_t a, stack;
};

static bool context_match(const struct os_profile *p, uint32_t idx, const void *key)
{
	const struct pair *k = key;

	return p->contexts[idx].type == k->a && stack_same(p, p->contexts[idx].stack, k->stack);
}

static bool access_match(const struct os_profile *p, uint32_t idx, const void *key)
{
	const struct pair *k = key;

	return p->accesses[idx].context == k->a && stack_same(p, p->accesses[idx].stack, k->stack);
}

static bool thread_match(const struct os_profile *p, uint32_t idx, const void *key)
{
	const struct os_thread *a = &p->threads[idx], *b = key;

	return a->pid == b->pid && a->tid == b->tid && a->kind == b->kind && a->name == b->name;
}

static uint64_t pair_hash(const struct os_profile *p, const struct pair *k)
{
	return os_hash64(stack_hash(p, k->stack) ^ k->a);
}

static uint64_t thread_hash(const struct os_thread *t)
{
	return os_hash64(os_hash64(((uint64_t)t->pid << 32) | t->tid) ^
			 (((uint64_t)t->kind << 32) | t->name));
}

struct merge_state {
	uint32_t *strmap, *framemap, *stackmap, *ctxmap;
	uint32_t *buf; /* frame ids of one stack */
	struct os_hmap contexts, accesses, threads;
	struct scale scale; /* of src's sample counts */
};

static uint32_t map_str(const struct merge_state *st, uint32_t id)
{
	return id == OS_NONE ? OS_NONE : st->strmap[id];
}

static uint32_t map_stack(const struct merge_state *st, uint32_t id)
{
	return id == OS_NONE ? OS_NONE : st->stackmap[id];
}

static int merge_tables(struct os_profile *dst, const struct os_profile *src,
			struct merge_state *st)
{
	uint32_t i, j, maxf = 0;

	st->strmap = malloc(((size_t)src->nstrings + 1) * sizeof(uint32_t));
	st->framemap = malloc(((size_t)src->nframes + 1) * sizeof(uint32_t));
	st->stackmap = malloc(((size_t)src->nstacks + 1) * sizeof(uint32_t));
	st->ctxmap = malloc(((size_t)src->ncontexts + 1) * sizeof(uint32_t));
	for (i = 0; i < src->nstacks; i++)
		if (src->stacks[i].nframes > maxf)
			maxf = src->stacks[i].nframes;
	st->buf = malloc(((size_t)maxf + 1) * sizeof(uint32_t));
	if (!st->strmap || !st->framemap || !st->stackmap || !st->ctxmap || !st->buf)
		return -ENOMEM;

	for (i = 0; i < src->nstrings; i++) {
		st->strmap[i] = os_profile_string(dst, src->strings[i]);
		if (st->strmap[i] == OS_NONE)
			return -ENOMEM;
	}
	for (i = 0; i < src->nframes; i++) {
		struct os_frame f = src->frames[i];

		f.name = map_str(st, f.name);
		f.module = map_str(st, f.module);
		f.file = map_str(st, f.file);
		f.near_sym = map_str(st, f.near_sym);
		f.build_id = map_str(st, f.build_id);
		st->framemap[i] = os_profile_frame(dst, &f);
		if (st->framemap[i] == OS_NONE)
			return -ENOMEM;
	}
	for (i = 0; i < src->nstacks; i++) {
		for (j = 0; j < src->stacks[i].nframes; j++)
			st->buf[j] = st->framemap[src->stacks[i].frames[j]];
		st->stackmap[i] = os_profile_stack(dst, st->buf, src->stacks[i].nframes);
		if (st->stackmap[i] == OS_NONE)
			return -ENOMEM;
	}
	return 0;
}

/* A figure that is no string id, as it is. */
static int note_copy(struct os_profile *dst, uint32_t g, const char *key,
		     const struct os_note_val *v)
{
	if (v->type == OS_NV_F64)
		return os_profile_note_f64(dst, g, key, os_profile_note_f64_of(v->v));
	return os_profile_note_u64(dst, g, key, v->v);
}

static int merge_meta(struct os_profile *dst, const struct os_profile *src,
		      const struct merge_state *st)
{
	const struct os_meta *s = &src->meta;
	struct os_meta *d = &dst->meta;
	struct os_counters srcc = src->c;
	uint64_t *dc = (uint64_t *)&dst->c;
	const uint64_t *scn = (const uint64_t *)&srcc;
	uint32_t i;
	int ret;

	sc_counters(&srcc, &st->scale);
	for (i = 0; i < sizeof(dst->c) / sizeof(uint64_t); i++)
		dc[i] += scn[i];
	if (s->duration_s > d->duration_s)
		d->duration_s = s->duration_s;
	if (!d->argc && s->argc) {
		d->argv = malloc((size_t)s->argc * sizeof(*d->argv));
		if (!d->argv)
			return -ENOMEM;
		for (i = 0; i < s->argc; i++)
			d->argv[i] = map_str(st, s->argv[i]);
		d->argc = s->argc;
	}
	if (d->sampler == OS_NONE)
		d->sampler = map_str(st, s->sampler);
	if (d->event == OS_NONE)
		d->event = map_str(st, s->event);
	if (d->mode == OS_NONE)
		d->mode = map_str(st, s->mode);
	if (d->hostname == OS_NONE)
		d->hostname = map_str(st, s->hostname);
	if (!d->period)
		d->period = s->period;
	if (!d->freq && dst->merge.inputs <= 1)
		d->freq = s->freq;
	if (!d->min_size)
		d->min_size = s->min_size;
	if (!d->start_time || (s->start_time && s->start_time < d->start_time))
		d->start_time = s->start_time; /* the earliest start */
	for (i = 0; i < s->npids; i++) {
		ret = os_profile_add_pid(dst, s->pids[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < s->nnotes; i++) {
		ret = os_profile_add_note(dst, src->strings[s->notes[i]]);
		if (ret)
			return ret;
	}
	/* notes kept as counters: after the notes of dst (src's own notes
	 * around them are unioned above) */
	for (i = 0; i < src->nnote_counters; i++) {
		const struct os_note_counters *g = &src->note_counters[i];
		uint32_t ng = os_profile_note_group(dst, src->strings[g->kind]);

		if (ng == OS_NONE)
			return -ENOMEM;
		for (uint32_t k = 0; k < g->nvals && !ret; k++) {
			const struct os_note_val *v = &g->vals[k];
			const char *key = src->strings[v->key];

			if (v->type == OS_NV_STR)
				ret = os_profile_note_str(dst, ng, key, src->strings[v->v]);
			else
				ret = note_copy(dst, ng, key, v);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static void add_metrics(uint64_t *d, const uint64_t *s)
{
	int i;

	for (i = 0; i < OS_M_COUNT; i++)
		d[i] += s[i];
}

/* Replica counts are raw counts: they add up (the figures are computed
 * from the sums). */
static void add_replica(struct os_replica *d, const struct os_replica *s)
{
	uint64_t *dv = (uint64_t *)d;
	const uint64_t *sv = (const uint64_t *)s;

	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		dv[i] += sv[i];
}

static int index_existing(struct os_profile *dst, struct merge_state *st)
{
	uint64_t slot;
	uint32_t i;

	for (i = 0; i < dst->ncontexts; i++) {
		struct pair k = { dst->contexts[i].type, dst->contexts[i].stack };

		if (lookup(&st->contexts, pair_hash(dst, &k), context_match, dst, &k, &slot) ==
			    OS_NONE &&
		    os_hmap_put(&st->contexts, slot, i))
			return -ENOMEM;
	}
	for (i = 0; i < dst->naccesses; i++) {
		struct pair k = { dst->accesses[i].context, dst->accesses[i].stack };

		if (lookup(&st->accesses, pair_hash(dst, &k), access_match, dst, &k, &slot) ==
			    OS_NONE &&
		    os_hmap_put(&st->accesses, slot, i))
			return -ENOMEM;
	}
	for (i = 0; i < dst->nthreads; i++)
		if (lookup(&st->threads, thread_hash(&dst->threads[i]), thread_match, dst,
			   &dst->threads[i], &slot) == OS_NONE &&
		    os_hmap_put(&st->threads, slot, i))
			return -ENOMEM;
	return 0;
}

/* Sample estimates: a profile without them had every weight 1, so its
 * samples are its estimates. dst gets them when src brings them. */
static void estimates_begin(struct os_profile *dst, const struct os_profile *src)
{
	uint32_t i;

	if (!(src->analyses & OS_AN_ESTIMATES) || (dst->analyses & OS_AN_ESTIMATES))
		return;
	for (i = 0; i < dst->ncontexts; i++) {
		dst->contexts[i].samples_est = (double)dst->contexts[i].samples;
		dst->contexts[i].samples_var = (double)dst->contexts[i].samples; /* Poisson */
	}
	for (i = 0; i < dst->naccesses; i++)
		dst->accesses[i].samples_est = (double)dst->accesses[i].samples;
	dst->est.samples_attributed = (double)dst->c.samples_attributed;
	dst->est.samples_java_attributed = (double)dst->c.samples_java_attributed;
	dst->analyses |= OS_AN_ESTIMATES;
}

/* Slices of src appended to dst's (OS_SEC_SLICES): indices mapped, samples
 * scaled, buckets widened to the wider of the two bucket widths. Slices are
 * kept only when every input has them (a profile without them cannot say
 * its samples' threads and times); a fresh dst takes src's. */
static int merge_slices(struct os_profile *dst, const struct os_profile *src,
			const struct merge_state *st, bool dst_empty, const uint32_t *amap,
			const uint32_t *tmap)
{
	bool had = (dst->analyses & OS_AN_SLICES) || dst_empty;
	uint32_t i, ms;

	if (!had || !(src->analyses & OS_AN_SLICES)) {
		free(dst->slices);
		dst->slices = NULL;
		dst->nslices = 0;
		dst->slice_ms = 0;
		dst->analyses &= ~(uint32_t)OS_AN_SLICES;
		return 0;
	}
	ms = dst->slice_ms > src->slice_ms ? dst->slice_ms : src->slice_ms;
	for (i = 0; i < dst->nslices && ms != dst->slice_ms; i++)
		dst->slices[i].bucket =
			(uint32_t)((uint64_t)dst->slices[i].bucket * dst->slice_ms / ms);
	for (i = 0; i < src->nslices; i++) {
		struct os_slice sl = src->slices[i];

		sl.context = st->ctxmap[sl.context];
		sl.access = sl.access == OS_NONE ? OS_NONE : amap[sl.access];
		sl.thread = tmap[sl.thread];
		sl.bucket = (uint32_t)((uint64_t)sl.bucket * src->slice_ms / ms);
		sl.samples = sc(sl.samples, &st->scale);
		if (os_profile_add_slice(dst, &sl) == OS_NONE)
			return -ENOMEM;
	}
	dst->slice_ms = ms;
	dst->analyses |= OS_AN_SLICES;
	return 0;
}

static int merge_records(struct os_profile *dst, const struct os_profile *src,
			 struct merge_state *st, bool dst_empty)
{
	bool est = src->analyses & OS_AN_ESTIMATES, var = src->analyses & OS_AN_EST_VAR;
	uint32_t *amap = calloc(src->naccesses + 1, sizeof(*amap));
	uint32_t *tmap = calloc(src->nthreads + 1, sizeof(*tmap));
	uint64_t slot;
	uint32_t i, idx;
	int ret = -ENOMEM;

	if (!amap || !tmap)
		goto out;

	for (i = 0; i < src->ncontexts; i++) {
		struct os_context c = src->contexts[i];
		struct pair k;

		c.samples = sc(c.samples, &st->scale);
		sc_metrics(c.metrics, &st->scale);
		sc_memsrc(&c.mem, &st->scale);
		c.samples_est = est ? scd(c.samples_est, &st->scale) : (double)c.samples;
		/* samples of weight 1 are a Poisson count: their variance is theirs */
		c.samples_var = var ? scv(c.samples_var, &st->scale) : est ? 0 : (double)c.samples;
		c.pe.path_est = scd(c.pe.path_est, &st->scale);
		c.type = map_str(st, c.type);
		c.stack = map_stack(st, c.stack);
		k = (struct pair){ c.type, c.stack };
		idx = lookup(&st->contexts, pair_hash(dst, &k), context_match, dst, &k, &slot);
		if (idx != OS_NONE) {
			struct os_context *d = &dst->contexts[idx];

			d->allocations += c.allocations;
			d->bytes += c.bytes;
			d->samples += c.samples;
			d->samples_est += c.samples_est;
			d->samples_var += c.samples_var;
			add_metrics(d->metrics, c.metrics);
			add_replica(&d->replica, &c.replica);
			add_memsrc(&d->mem, &c.mem);
			add_pathest(&d->pe, &c.pe);
		} else {
			idx = os_profile_add_context(dst, &c);
			if (idx == OS_NONE || os_hmap_put(&st->contexts, slot, idx))
				goto out;
		}
		st->ctxmap[i] = idx;
	}
	for (i = 0; i < src->naccesses; i++) {
		struct os_access a = src->accesses[i];
		struct pair k;

		a.samples = sc(a.samples, &st->scale);
		sc_metrics(a.metrics, &st->scale);
		a.samples_est = est ? scd(a.samples_est, &st->scale) : (double)a.samples;
		a.path_est = scd(a.path_est, &st->scale);
		a.context = st->ctxmap[a.context];
		a.stack = map_stack(st, a.stack);
		k = (struct pair){ a.context, a.stack };
		idx = lookup(&st->accesses, pair_hash(dst, &k), access_match, dst, &k, &slot);
		if (idx != OS_NONE) {
			dst->accesses[idx].samples += a.samples;
			dst->accesses[idx].samples_est += a.samples_est;
			dst->accesses[idx].path_est += a.path_est;
			add_metrics(dst->accesses[idx].metrics, a.metrics);
		} else {
			idx = os_profile_add_access(dst, &a);
			if (idx == OS_NONE || os_hmap_put(&st->accesses, slot, idx))
				goto out;
		}
		amap[i] = idx;
	}
	for (i = 0; i < src->nthreads; i++) {
		struct os_thread t = src->threads[i];

		t.name = map_str(st, t.name);
		t.samples = sc(t.samples, &st->scale);
		idx = lookup(&st->threads, thread_hash(&t), thread_match, dst, &t, &slot);
		if (idx != OS_NONE) {
			dst->threads[idx].samples += t.samples;
		} else {
			idx = os_profile_add_thread(dst, &t);
			if (idx == OS_NONE || os_hmap_put(&st->threads, slot, idx))
				goto out;
		}
		tmap[i] = idx;
	}
	ret = merge_slices(dst, src, st, dst_empty, amap, tmap);
out:
	free(amap);
	free(tmap);
	return ret;
}

/* Lifetimes (OS_AN_LIFETIMES) summed into the contexts src's became; a
 * peak is the larger one (processes merged ran side by side or apart: their
 * peaks are not known to coincide). */
static int merge_lifetimes(struct os_profile *dst, const struct os_profile *src,
			   const uint32_t *ctxmap)
{
	if (!(src->analyses & OS_AN_LIFETIMES))
		return 0;
	dst->analyses |= OS_AN_LIFETIMES;
	dst->lt.flags |= src->lt.flags;
	dst->lt.collections += src->lt.collections;
	dst->lt.collections_unjudged += src->lt.collections_unjudged;
	dst->lt.unaged += src->lt.unaged;
	for (uint32_t k = 0; k < OS_LT_BINS; k++)
		dst->lt.survivor_bytes[k] += src->lt.survivor_bytes[k];
	if (src->lt.peak_bytes > dst->lt.peak_bytes) {
		dst->lt.peak_bytes = src->lt.peak_bytes;
		dst->lt.peak_ns = src->lt.peak_ns;
	}
	for (uint32_t i = 0; i < src->lt.nctx && i < src->ncontexts; i++) {
		const struct os_lifetime *s = &src->lt.ctx[i];
		struct os_lifetime *d;

		if (s->kind == OS_LT_NONE)
			continue;
		d = os_profile_lifetime(dst, ctxmap[i]);
		if (!d)
			return -ENOMEM;
		os_lifetime_add(d, s);
	}
	return 0;
}

/* Reuse signatures (OS_AN_REUSE) summed into the contexts src's became;
 * the model's figures are the first profile's that has them (merged runs
 * of one machine; counts of pairs add up). */
static int merge_reuse(struct os_profile *dst, const struct os_profile *src,
		       const uint32_t *ctxmap)
{
	struct os_reuses *d = &dst->ru;
	const struct os_reuses *s = &src->ru;

	if (!(src->analyses & OS_AN_REUSE))
		return 0;
	if (!(dst->analyses & OS_AN_REUSE) || !d->bytes_per_ns) {
		memcpy(d->cache, s->cache, sizeof(d->cache));
		d->bytes_per_ns = s->bytes_per_ns;
		d->rate_source = s->rate_source;
		d->insn_per_ns = s->insn_per_ns;
		d->mem_share = s->mem_share;
		d->width = s->width;
		d->trap_ns = s->trap_ns;
		d->max_age_ns = s->max_age_ns;
	}
	dst->analyses |= OS_AN_REUSE;
	d->pairs += s->pairs;
	d->censored += s->censored;
	for (uint32_t i = 0; i < s->nctx && i < src->ncontexts; i++) {
		struct os_reuse *r;

		r = os_profile_reuse(dst, ctxmap[i]);
		if (!r)
			return -ENOMEM;
		for (unsigned k = 0; k < OS_REUSE_NBINS; k++)
			r->bins[k] += s->ctx[i].bins[k];
	}
	return 0;
}

static int merge_into(struct os_profile *dst, const struct os_profile *src, uint32_t *ctxmap)
{
	struct merge_state st = { 0 };
	struct scale ds;
	/* nothing in dst yet (a fresh os_profile_new): it takes src's slices */
	bool dst_empty = !dst->ncontexts && !dst->nthreads && !dst->c.samples_total &&
			 !dst->merge.inputs;
	/* dst's variances: stated, or its samples weigh 1 (estimates_begin) */
	bool dst_var_known = !(dst->analyses & OS_AN_ESTIMATES) || (dst->analyses & OS_AN_EST_VAR);
	int ret;

	os_hmap_init(&st.contexts);
	os_hmap_init(&st.accesses);
	os_hmap_init(&st.threads);
	plan_periods(dst, src, &st.scale, &ds);
	sc_profile(dst, &ds);
	estimates_begin(dst, src); /* before merge_meta adds src's counters */
	ret = merge_tables(dst, src, &st);
	if (ret)
		goto out;
	ret = merge_meta(dst, src, &st);
	if (ret)
		goto out;
	ret = index_existing(dst, &st);
	if (ret)
		goto out;
	ret = merge_records(dst, src, &st, dst_empty);
	if (!ret)
		ret = merge_lifetimes(dst, src, st.ctxmap);
	if (!ret)
		ret = merge_reuse(dst, src, st.ctxmap);
	if (!ret) {
		/* OS_AN_REPLICAS: counts summed above; OS_AN_SLICES: merge_slices;
		 * OS_AN_OVERHEAD: one run's figures, kept from a lone input only */
		if (dst_empty && (src->analyses & OS_AN_OVERHEAD))
			dst->ovh = src->ovh;
		dst->analyses |= src->analyses & ~(uint32_t)(OS_AN_SLICES | OS_AN_EST_VAR);
		/* variances stated when every input with estimates stated its own
		 * (one without estimates: Poisson counts, var = samples) */
		if ((dst->analyses & OS_AN_ESTIMATES) && dst_var_known &&
		    (!(src->analyses & OS_AN_ESTIMATES) || (src->analyses & OS_AN_EST_VAR)))
			dst->analyses |= OS_AN_EST_VAR;
		else
			dst->analyses &= ~(uint32_t)OS_AN_EST_VAR;
		if (!dst_empty)
			dst->analyses &= ~(uint32_t)OS_AN_OVERHEAD;
		if (src->numa_nodes > dst->numa_nodes)
			dst->numa_nodes = src->numa_nodes;
		if (src->analyses & OS_AN_ESTIMATES) {
			dst->est.samples_attributed += scd(src->est.samples_attributed, &st.scale);
			dst->est.samples_java_attributed +=
				scd(src->est.samples_java_attributed, &st.scale);
		} else {
			dst->est.samples_attributed +=
				(double)sc(src->c.samples_attributed, &st.scale);
			dst->est.samples_java_attributed +=
				(double)sc(src->c.samples_java_attributed, &st.scale);
		}
		ret = period_note(dst);
		if (!ret && ctxmap && src->ncontexts)
			memcpy(ctxmap, st.ctxmap, (size_t)src->ncontexts * sizeof(*ctxmap));
	}
out:
	os_hmap_destroy(&st.contexts);
	os_hmap_destroy(&st.accesses);
	os_hmap_destroy(&st.threads);
	free(st.strmap);
	free(st.framemap);
	free(st.stackmap);
	free(st.ctxmap);
	free(st.buf);
	return ret;
}

int os_profile_merge(struct os_profile *dst, const struct os_profile *src)
{
	return merge_into(dst, src, NULL);
}

int os_profile_merge_map(struct os_profile *dst, const struct os_profile *src, uint32_t *ctxmap)
{
	return merge_into(dst, src, ctxmap);
}
