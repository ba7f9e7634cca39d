/* slices.c - samples by (object, access path, thread, time bucket), an
 * observer of the collection loop (OS_SEC_SLICES). */
#include "attacher/core/slices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/collector.h"
#include "common/grow.h"

void os_slices_init(struct os_slices *s)
{
	memset(s, 0, sizeof(*s));
	os_hmap_init(&s->tb_map);
	os_hmap_init(&s->slice_map);
}

void os_slices_destroy(struct os_slices *s)
{
	os_hmap_destroy(&s->tb_map);
	os_hmap_destroy(&s->slice_map);
	free(s->tb);
	free(s->slices);
	memset(s, 0, sizeof(*s));
}

/* Grows *arr (n used of *cap, elements of size sz) for one more; false: no memory. */
static bool room(void **arr, uint32_t n, uint32_t *cap, size_t sz)
{
	void *na = os_grow32(*arr, cap, (size_t)n + 1, sz, 1024, UINT32_MAX);

	if (!na)
		return false;
	*arr = na;
	return true;
}

/* Counts n samples of `entry` for (pid, tid, bucket). */
static void slice_count(struct os_slices *a, uint32_t entry, uint32_t pid, uint32_t tid,
			uint64_t bucket, uint64_t n)
{
	uint64_t tbkey, *tbs, *ss;

	if (bucket >= OS_SLICE_BUCKETS)
		bucket = OS_SLICE_BUCKETS - 1;
	tbkey = (uint64_t)(pid & 0x3fffff) << 42 | (uint64_t)(tid & 0x3fffff) << 20 | bucket;
	tbs = os_hmap_ref(&a->tb_map, tbkey, UINT64_MAX);
	if (!tbs)
		goto lost;
	if (*tbs == UINT64_MAX) {
		if (!room((void **)&a->tb, a->ntb, &a->tbcap, sizeof(*a->tb)))
			goto lost;
		a->tb[a->ntb] = tbkey;
		*tbs = a->ntb++;
	}
	ss = os_hmap_ref(&a->slice_map, (uint64_t)entry << 32 | *tbs, UINT64_MAX);
	if (!ss)
		goto lost;
	if (*ss == UINT64_MAX) {
		if (!room((void **)&a->slices, a->nslices, &a->slicecap, sizeof(*a->slices)))
			goto lost;
		a->slices[a->nslices] = (struct os_slice_count){ entry, (uint32_t)*tbs, 0 };
		*ss = a->nslices++;
	}
	a->slices[*ss].samples += n;
	return;
lost:
	a->lost += n;
}

/* Too many slices (a long run of many threads and paths): buckets twice
 * as wide, equal keys folded; the memory held stays bounded. */
static void slices_widen(struct os_slices *a)
{
	struct os_slice_count *old = a->slices;
	uint32_t nold = a->nslices, i;
	uint64_t *tbold = a->tb;

	a->k = (a->k ? a->k : 1) * 2;
	a->slices = NULL;
	a->nslices = a->slicecap = 0;
	a->tb = NULL;
	a->ntb = a->tbcap = 0;
	os_hmap_destroy(&a->tb_map);
	os_hmap_destroy(&a->slice_map);
	os_hmap_init(&a->tb_map);
	os_hmap_init(&a->slice_map);
	for (i = 0; i < nold; i++) {
		uint64_t tb = tbold[old[i].tb];

		slice_count(a, old[i].entry, (uint32_t)(tb >> 42), (uint32_t)(tb >> 20) & 0x3fffff,
			    (tb & (OS_SLICE_BUCKETS - 1)) / 2, old[i].samples);
	}
	free(old);
	free(tbold);
	if (a->nslices > OS_SLICE_CAP / 4 * 3) { /* not time but threads x paths: give up */
		a->off = true;
		free(a->slices);
		free(a->tb);
		a->slices = NULL;
		a->tb = NULL;
		a->nslices = a->slicecap = a->ntb = a->tbcap = 0;
		os_hmap_destroy(&a->tb_map);
		os_hmap_destroy(&a->slice_map);
		os_hmap_init(&a->tb_map);
		os_hmap_init(&a->slice_map);
	}
}

void os_slices_count(struct os_slices *a, uint32_t ctx, uint32_t acc, uint32_t pid, uint32_t tid,
		     uint64_t since_ns)
{
	if (ctx == OS_NONE || a->off)
		return;
	slice_count(a, acc != OS_NONE ? acc : OS_SLICE_CTX | ctx, pid, tid,
		    since_ns / (OS_SLICE_MS * 1000000ull * (a->k ? a->k : 1)), 1);
	if (a->nslices >= OS_SLICE_CAP)
		slices_widen(a);
}

static int cmp_slice(const void *x, const void *y)
{
	const struct os_slice *a = x, *b = y;

	if (a->context != b->context)
		return a->context < b->context ? -1 : 1;
	if (a->access != b->access)
		return a->access < b->access ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->bucket != b->bucket)
		return a->bucket < b->bucket ? -1 : 1;
	return 0;
}

/* Sorts v[0, n) and folds equal keys, buckets divided by k first (v keeps
 * raw buckets in `raw`); returns the slices left, in v. */
static uint32_t fold_slices(struct os_slice *v, const uint32_t *raw, uint32_t n, uint32_t k)
{
	uint32_t i, j, m = 0;

	for (i = 0; i < n; i++)
		v[i].bucket = raw[i] / k;
	qsort(v, n, sizeof(*v), cmp_slice);
	for (i = 0; i < n; i = j) {
		struct os_slice s = v[i];

		for (j = i + 1; j < n && cmp_slice(&v[i], &v[j]) == 0; j++)
			s.samples += v[j].samples;
		v[m++] = s;
	}
	return m;
}

/* OS_SEC_SLICES from the per-(entry, thread, bucket) counts:
 * entries mapped to the profile's contexts and accesses (ctxmap, accmap),
 * threads to the profile's (index of c->tasks.threads), buckets widened
 * (a multiple of OS_SLICE_MS) so that a run has at most MAX_BUCKETS and
 * the section at most MAX_SLICES records (24 bytes each), equal keys
 * folded. Returns 0 or -ENOMEM. */
#define MAX_BUCKETS 1000u
#define MAX_SLICES (256u * 1024)
int os_slices_build(const struct os_slices *a, const struct os_obs_build *b)
{
	const struct os_attrib *at = &b->c->attrib;
	const uint32_t *ctxmap = b->ctxmap, *accmap = b->accmap;
	struct os_hmap thr;
	struct os_slice *v, *w = NULL;
	uint32_t *raw, n = 0, m, maxb = 0, k, i;
	uint64_t idx;

	if (a->off || a->lost) {
		/* incomplete slices would make --tid/--time reports wrong: none */
		os_profile_add_note(b->p, a->off
			? "samples by thread and time not kept: too many distinct (object, access"
			  " path, thread) combinations; report --tid/--comm/--time cannot be used"
			: "samples by thread and time not kept (out of memory); report"
			  " --tid/--comm/--time cannot be used");
		return 0;
	}
	if (!a->nslices)
		return 0;
	for (i = 0; i < a->ntb; i++)
		if ((uint32_t)(a->tb[i] & (OS_SLICE_BUCKETS - 1)) > maxb)
			maxb = (uint32_t)(a->tb[i] & (OS_SLICE_BUCKETS - 1));
	k = maxb / MAX_BUCKETS + 1;
	v = calloc(a->nslices, sizeof(*v));
	raw = calloc(a->nslices, sizeof(*raw));
	if (!v || !raw)
		goto oom;
	os_hmap_init(&thr);
	for (i = 0; i < b->c->tasks.nthreads; i++) {
		const struct os_thread_info *t = &b->c->tasks.threads[i];

		os_hmap_put(&thr, (uint64_t)(t->pid & 0x3fffff) << 22 | (t->tid & 0x3fffff), i);
	}
	for (i = 0; i < a->nslices; i++) {
		const struct os_slice_count *x = &a->slices[i];
		uint64_t tb = a->tb[x->tb];
		struct os_slice *s = &v[n];

		if (!os_hmap_get(&thr, tb >> 20, &idx) || idx >= b->p->nthreads)
			continue; /* thread not in the profile: its total still counts */
		s->thread = (uint32_t)idx;
		raw[n] = (uint32_t)(tb & (OS_SLICE_BUCKETS - 1));
		s->samples = x->samples;
		if (x->entry & OS_SLICE_CTX) {
			s->context = ctxmap[x->entry & ~OS_SLICE_CTX];
			s->access = OS_NONE;
		} else {
			s->context = ctxmap[at->acc[x->entry].ctx];
			s->access = accmap[x->entry];
			if (s->access != OS_NONE && b->p->accesses[s->access].context != s->context)
				s->access = OS_NONE;
		}
		if (s->context != OS_NONE)
			n++;
	}
	os_hmap_destroy(&thr);
	w = malloc((size_t)(n ? n : 1) * sizeof(*w));
	if (!w)
		goto oom;
	/* many threads and paths over a long run: wider buckets until it fits */
	for (;;) {
		memcpy(w, v, (size_t)n * sizeof(*w));
		m = fold_slices(w, raw, n, k);
		if (m <= MAX_SLICES || k > maxb)
			break;
		k *= 2;
	}
	for (i = 0; i < m; i++)
		if (os_profile_add_slice(b->p, &w[i]) == OS_NONE)
			goto oom;
	free(v);
	free(w);
	free(raw);
	b->p->slice_ms = OS_SLICE_MS * (a->k ? a->k : 1) * k;
	b->p->analyses |= OS_AN_SLICES;
	return 0;
oom:
	free(v);
	free(w);
	free(raw);
	return -ENOMEM;
}

/* The observer. */
static int obs_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct os_slices *s = malloc(sizeof(*s));

	(void)c;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	os_slices_init(s);
	*self = s;
	return 0;
}

static void obs_sample(void *self, const struct os_obs_sample *s)
{
	os_slices_count(self, s->ctx, s->acc, s->pid, s->tid, s->since_ns);
}

static int obs_sections(void *self, const struct os_obs_build *b)
{
	return os_slices_build(self, b);
}

static void obs_destroy(void *self)
{
	if (!self)
		return;
	os_slices_destroy(self);
	free(self);
}

const struct os_observer_ops os_slices_observer = {
	.name = "slices",
	.start = obs_start,
	.sample = obs_sample,
	.profile_sections = obs_sections,
	.destroy = obs_destroy,
};
