/* view.c - ranking shared by every report format. */
#include "report/view.h"
#include "report/maker.h"
#include <math.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"

const char *report_str(const struct os_profile *p, uint32_t id)
{
	const char *s = os_profile_str(p, id);

	return s ? s : "";
}

const char *report_thread_kind(uint32_t kind)
{
	switch (kind) {
	case OS_THR_JAVA:
		return "java";
	case OS_THR_GC:
		return "gc";
	case OS_THR_JIT:
		return "jit";
	case OS_THR_VM:
		return "vm";
	default:
		return "native";
	}
}

double report_ratio(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

bool report_has_est(const struct os_profile *p)
{
	return (p->analyses & OS_AN_ESTIMATES) != 0;
}

uint32_t report_maker_frame(const struct report_view *v, uint32_t ci)
{
	const struct os_profile *p = v->p;
	uint32_t s = p->contexts[ci].stack, at = v->maker ? v->maker[ci] : 0;

	if (s == OS_NONE || s >= p->nstacks || !p->stacks[s].nframes)
		return OS_NONE;
	return p->stacks[s].frames[at < p->stacks[s].nframes ? at : 0];
}

bool report_context_unsampled(const struct os_profile *p, uint32_t ci)
{
	const struct os_context *c = &p->contexts[ci];

	return !c->samples && !((p->analyses & OS_AN_PATHEST) && c->samples_est >= 0.5);
}

double report_share(const struct os_profile *p, const struct os_context *c)
{
	if (report_has_est(p))
		return p->est.samples_attributed > 0 ? c->samples_est / p->est.samples_attributed
						     : 0.0;
	return report_ratio(c->samples, p->c.samples_attributed);
}

bool report_has_var(const struct os_profile *p)
{
	return (p->analyses & (OS_AN_ESTIMATES | OS_AN_EST_VAR)) ==
	       (OS_AN_ESTIMATES | OS_AN_EST_VAR);
}

double report_est_se(const struct os_profile *p, const struct os_context *c)
{
	if (!report_has_var(p) || !(c->samples_var >= 0))
		return NAN;
	return sqrt(c->samples_var);
}

double report_share_se(const struct os_profile *p, const struct os_context *c)
{
	double se = report_est_se(p, c);

	return p->est.samples_attributed > 0 ? se / p->est.samples_attributed : NAN;
}

bool report_rank_overlaps(const struct report_view *v, uint32_t r)
{
	const struct os_context *a, *b;
	double sa, sb;

	if (r + 1 >= v->nobjects || !report_has_var(v->p))
		return false;
	a = &v->p->contexts[v->objects[r].context];
	b = &v->p->contexts[v->objects[r + 1].context];
	sa = report_est_se(v->p, a);
	sb = report_est_se(v->p, b);
	if (!isfinite(sa) || !isfinite(sb) || !(b->samples_est > 0))
		return false;
	return a->samples_est - REPORT_Z90 * sa <= b->samples_est + REPORT_Z90 * sb;
}

bool report_split_by_volume(const struct os_profile *p, const struct os_context *c)
{
	const struct os_pathest *e = &c->pe;

	return (p->analyses & OS_AN_PATHEST) && e->kind == OS_PATH_SITE && c->type != OS_NONE &&
	       e->class_sites > 1 && e->evidence == 0 && e->path_est > (double)c->samples;
}

void report_why_empty(const struct os_profile *p, char *buf, size_t len)
{
	const struct os_counters *c = &p->c;

	if (!c->samples_total)
		snprintf(buf, len, "no access samples were taken (the program may have ended"
			 " before the first sample, or the sampler could not start)");
	else if (!c->samples_addressed)
		snprintf(buf, len,
			 "none of the %" PRIu64 " samples carried a data address (%" PRIu64
			 " without a memory operand, %" PRIu64 " with the address register"
			 " overwritten, %" PRIu64 " undecodable, %" PRIu64 " of JIT compiler"
			 " threads not decoded)",
			 c->samples_total, c->unaddressed_nomem, c->unaddressed_clobbered,
			 c->unaddressed_undecodable, c->samples_jit);
	else if (!c->tracked_allocs && !p->ncontexts)
		snprintf(buf, len,
			 "no allocation was tracked (%" PRIu64 " allocations were smaller than"
			 " --min-size %" PRIu64 ")",
			 c->small_allocs, p->meta.min_size);
	else if (!c->samples_heap)
		snprintf(buf, len,
			 "none of the %" PRIu64 " addressed samples fell inside a tracked heap",
			 c->samples_addressed);
	else
		snprintf(buf, len,
			 "none of the %" PRIu64 " heap samples fell inside a tracked object",
			 c->samples_heap);
}

/* qsort has no context argument: the profile being ranked, the key. */
static const struct os_profile *sort_p;
static enum report_sort sort_key;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int cmp_u32_asc(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

static int cmp_f64_desc(double a, double b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int cmp_objects(const void *x, const void *y)
{
	const struct os_context *a = &sort_p->contexts[((const struct report_object *)x)->context];
	const struct os_context *b = &sort_p->contexts[((const struct report_object *)y)->context];
	int r;

	if ((sort_key == REPORT_SORT_BYTES && (r = cmp_u64_desc(a->bytes, b->bytes))) ||
	    (sort_key == REPORT_SORT_ALLOCATIONS &&
	     (r = cmp_u64_desc(a->allocations, b->allocations))))
		return r;
	if ((report_has_est(sort_p) && (r = cmp_f64_desc(a->samples_est, b->samples_est))) ||
	    (r = cmp_u64_desc(a->samples, b->samples)) || (r = cmp_u64_desc(a->bytes, b->bytes)) ||
	    (r = cmp_u64_desc(a->allocations, b->allocations)))
		return r;
	return cmp_u32_asc(((const struct report_object *)x)->context,
			   ((const struct report_object *)y)->context);
}

/* Accesses grouped by their context's rank, then most samples first. */
static const uint32_t *sort_rank;

static int cmp_accesses(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const struct os_access *a = &sort_p->accesses[i], *b = &sort_p->accesses[j];
	int r;

	if ((r = cmp_u32_asc(sort_rank[a->context], sort_rank[b->context])) ||
	    (report_has_est(sort_p) && (r = cmp_f64_desc(a->samples_est, b->samples_est))) ||
	    (r = cmp_u64_desc(a->samples, b->samples)))
		return r;
	return cmp_u32_asc(i, j);
}

static int cmp_types(const void *x, const void *y)
{
	const struct report_type *a = x, *b = y;
	int r = 0;

	/* the same order as the objects: by estimate when there are estimates */
	if ((report_has_est(sort_p) && (r = cmp_f64_desc(a->samples_est, b->samples_est))) ||
	    (r = cmp_u64_desc(a->samples, b->samples)))
		return r;
	return strcmp(report_str(sort_p, a->type), report_str(sort_p, b->type));
}

static int cmp_threads(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int r = cmp_u64_desc(sort_p->threads[i].samples, sort_p->threads[j].samples);

	return r ? r : cmp_u32_asc(i, j);
}

int report_sort_parse(const char *name, enum report_sort *out)
{
	static const char *const names[] = { "samples", "bytes", "allocations" };

	for (int i = 0; i < 3; i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (enum report_sort)i;
			return 0;
		}
	return -EINVAL;
}

/* (object rank, thread, samples) while the per-thread split is built */
struct rts {
	uint32_t rank, thread;
	uint64_t samples;
};

static int cmp_rts_key(const void *x, const void *y)
{
	const struct rts *a = x, *b = y;
	int r;

	return (r = cmp_u32_asc(a->rank, b->rank)) ? r : cmp_u32_asc(a->thread, b->thread);
}

static int cmp_rts_samples(const void *x, const void *y)
{
	const struct rts *a = x, *b = y;
	int r;

	if ((r = cmp_u32_asc(a->rank, b->rank)) || (r = cmp_u64_desc(a->samples, b->samples)))
		return r;
	return cmp_u32_asc(a->thread, b->thread);
}

/* Each object's samples by thread, from the slices. */
static int build_by_thread(struct report_view *v, const struct os_profile *p,
			   const uint32_t *rank)
{
	struct rts *e = calloc((size_t)p->nslices + 1, sizeof(*e));
	uint32_t i, j, n = 0;

	if (!e)
		return -ENOMEM;
	for (i = 0; i < p->nslices; i++)
		e[i] = (struct rts){ rank[p->slices[i].context], p->slices[i].thread,
				     p->slices[i].samples };
	qsort(e, p->nslices, sizeof(*e), cmp_rts_key);
	for (i = 0; i < p->nslices; i = j) {
		struct rts t = e[i];

		for (j = i + 1; j < p->nslices && cmp_rts_key(&e[i], &e[j]) == 0; j++)
			t.samples += e[j].samples;
		if (t.samples)
			e[n++] = t;
	}
	qsort(e, n, sizeof(*e), cmp_rts_samples);
	v->by_thread = calloc((size_t)n + 1, sizeof(*v->by_thread));
	if (!v->by_thread) {
		free(e);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct report_object *o = &v->objects[e[i].rank];

		if (!o->nthreads)
			o->first_thread = i;
		o->nthreads++;
		v->by_thread[i] = (struct report_by_thread){ e[i].thread, e[i].samples };
	}
	v->nby_thread = n;
	free(e);
	return 0;
}

int report_view_build(struct report_view *v, const struct os_profile *p)
{
	return report_view_build_sorted(v, p, REPORT_SORT_SAMPLES);
}

int report_view_build_sorted(struct report_view *v, const struct os_profile *p,
			     enum report_sort sort)
{
	struct os_hmap types;
	uint32_t *rank = NULL;
	uint32_t i;
	int ret = -ENOMEM;

	os_hmap_init(&types);
	memset(v, 0, sizeof(*v));
	v->p = p;
	v->sort = sort;
	sort_p = p;
	sort_key = sort;
	v->objects = calloc((size_t)p->ncontexts + 1, sizeof(*v->objects));
	v->accesses = calloc((size_t)p->naccesses + 1, sizeof(*v->accesses));
	v->types = calloc((size_t)p->ncontexts + 1, sizeof(*v->types));
	v->threads = calloc((size_t)p->nthreads + 1, sizeof(*v->threads));
	rank = calloc((size_t)p->ncontexts + 1, sizeof(*rank));
	if (!v->objects || !v->accesses || !v->types || !v->threads || !rank)
		goto out;

	v->nobjects = p->ncontexts;
	for (i = 0; i < p->ncontexts; i++)
		v->objects[i].context = i;
	qsort(v->objects, v->nobjects, sizeof(*v->objects), cmp_objects);
	for (i = 0; i < v->nobjects; i++)
		rank[v->objects[i].context] = i;

	for (i = 0; i < p->naccesses; i++)
		v->accesses[i] = i;
	sort_rank = rank;
	qsort(v->accesses, p->naccesses, sizeof(*v->accesses), cmp_accesses);
	for (i = 0; i < p->naccesses; i++) {
		struct report_object *o = &v->objects[rank[p->accesses[v->accesses[i]].context]];

		if (!o->naccesses)
			o->first_access = i;
		o->naccesses++;
	}

	/* Types: in an interned profile (report merges into a fresh one) equal
	 * type strings have equal ids. */
	for (i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];
		uint64_t *slot = os_hmap_ref(&types, c->type, v->ntypes);

		if (!slot)
			goto out;
		if (*slot == v->ntypes)
			v->types[v->ntypes++] = (struct report_type){ c->type, 0, 0 };
		v->types[*slot].samples += c->samples;
		v->types[*slot].samples_est += c->samples_est;
	}
	qsort(v->types, v->ntypes, sizeof(*v->types), cmp_types);

	v->nthreads = p->nthreads;
	for (i = 0; i < p->nthreads; i++)
		v->threads[i] = i;
	qsort(v->threads, v->nthreads, sizeof(*v->threads), cmp_threads);
	ret = build_by_thread(v, p, rank);
	if (!ret && !(v->maker = report_makers_find(p)))
		ret = -ENOMEM;
out:
	os_hmap_destroy(&types);
	free(rank);
	if (ret)
		report_view_free(v);
	return ret;
}

void report_view_free(struct report_view *v)
{
	free(v->objects);
	free(v->accesses);
	free(v->types);
	free(v->threads);
	free(v->by_thread);
	free(v->maker);
	memset(v, 0, sizeof(*v));
}
