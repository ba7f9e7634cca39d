/* attrib.c - live objects per address space, contexts, access charging. */
#include "attacher/core/attrib.h"
#include "common/grow.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int os_attrib_init(struct os_attrib *a, struct os_tasks *tasks)
{
	memset(a, 0, sizeof(*a));
	a->tasks = tasks;
	os_hmap_init(&a->node2ctx);
	os_hmap_init(&a->acc_map);
	os_hmap_init(&a->small_vote_map);
	os_hmap_init(&a->before_maps);
	return os_cct_init(&a->cct);
}

void os_attrib_destroy(struct os_attrib *a)
{
	os_cct_destroy(&a->cct);
	os_hmap_destroy(&a->node2ctx);
	os_hmap_destroy(&a->acc_map);
	os_hmap_destroy(&a->small_vote_map);
	os_hmap_destroy(&a->before_maps);
	free(a->small_votes);
	free(a->ctx);
	free(a->acc);
	memset(a, 0, sizeof(*a));
}

uint32_t os_attrib_path(struct os_attrib *a, uint32_t asid, const uint64_t *frames, uint32_t n)
{
	uint64_t buf[OS_MAX_FRAMES + 1];

	if (n > OS_MAX_FRAMES)
		n = OS_MAX_FRAMES;
	memcpy(buf, frames, n * sizeof(*buf));
	buf[n] = OS_ASID_MARK | asid;
	return os_cct_insert(&a->cct, buf, n + 1);
}

uint32_t os_attrib_unpath(const struct os_attrib *a, uint32_t node, uint64_t *frames,
			  uint32_t max, uint32_t *asid)
{
	uint64_t buf[OS_MAX_FRAMES + 2];
	uint32_t d = os_cct_path(&a->cct, node, buf, OS_MAX_FRAMES + 2);

	if (d > OS_MAX_FRAMES + 2)
		d = OS_MAX_FRAMES + 2;
	*asid = 0;
	if (d && (buf[d - 1] & OS_ASID_MARK) == OS_ASID_MARK) {
		*asid = (uint32_t)(buf[d - 1] & 0xffffffff);
		d--;
	}
	if (d > max)
		d = max;
	memcpy(frames, buf, d * sizeof(*frames));
	return d;
}

uint32_t os_attrib_context(struct os_attrib *a, uint32_t asid, uint32_t node)
{
	uint64_t idx;

	if (os_hmap_get(&a->node2ctx, node, &idx))
		return (uint32_t)idx;
	{
		struct os_ctx *n = os_grow32(a->ctx, &a->ctxcap, (size_t)a->nctx + 1, sizeof(*n), 256,
					     UINT32_MAX);

		if (!n)
			return OS_NONE;
		a->ctx = n;
	}
	memset(&a->ctx[a->nctx], 0, sizeof(a->ctx[0]));
	a->ctx[a->nctx].asid = asid;
	a->ctx[a->nctx].node = node;
	if (os_hmap_put(&a->node2ctx, node, a->nctx) < 0)
		return OS_NONE;
	return a->nctx++;
}

/* Weight of a byte-sampled small block of `size` bytes, sampled with
 * probability 1 - exp(-size / mean), as fixed point (OS_W_ONE == 1.0). */
uint64_t os_small_weight_q(uint64_t size, uint64_t mean)
{
	double p = mean ? -expm1(-(double)size / (double)mean) : 1.0, w;

	if (!(p > 0) || p >= 1)
		return OS_W_ONE;
	w = (double)OS_W_ONE / p + 0.5;
	return w >= (double)OS_W_MAX ? OS_W_MAX : (uint64_t)w;
}

/* The parts of the intervals overlapping a range that lie outside it: at
 * most one on each side. */
struct cut {
	uint64_t lo, hi;
	uint64_t start[2], end[2], val[2];
	unsigned n;
};

static void cut_keep(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct cut *c = arg;

	if (start < c->lo && c->n < 2) {
		c->start[c->n] = start;
		c->end[c->n] = c->lo;
		c->val[c->n++] = val;
	}
	if (end > c->hi && c->n < 2) {
		c->start[c->n] = c->hi;
		c->end[c->n] = end;
		c->val[c->n++] = val;
	}
}

/* Takes [lo, hi) out of the index, keeping what the intervals it overlaps
 * hold outside it: a mapping made over part of another (a commit inside a
 * reservation, MAP_FIXED) replaces that part alone, as the kernel does. */
static void cut_range(struct os_aspace *as, uint64_t lo, uint64_t hi)
{
	struct cut c = { .lo = lo, .hi = hi };

	os_iv_remove_overlaps(as->objects, lo, hi, cut_keep, &c);
	for (unsigned i = 0; i < c.n; i++)
		os_iv_insert(as->objects, c.start[i], c.end[i], c.val[i]);
}

/* A mapping a JIT compiler thread made (its path not walked, os_slot.quiet)
 * inside a range that another path mapped: a runtime's reservation (code
 * cache, metaspace) that the compiler thread happened to commit a piece of.
 * The memory is the range's, and later readers (every thread) read it as
 * such: the piece takes the range's object, never the compiler threads'
 * pseudo-object. True when it did. */
static bool quiet_commit(struct os_attrib *a, struct os_aspace *as, const struct os_obj_event *ev)
{
	uint64_t s, e, val;
	uint32_t ci;

	if (!os_iv_lookup(as->objects, ev->addr, &s, &e, &val) || e < ev->addr + ev->size)
		return false;
	ci = os_val_ctx(val);
	if (ci >= a->nctx || a->ctx[ci].quiet)
		return false;
	cut_range(as, ev->addr, ev->addr + ev->size);
	os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, val);
	a->quiet_commits++;
	return true;
}

static void born(struct os_attrib *a, struct os_aspace *as, const struct os_obj_event *ev)
{
	uint32_t ci;
	uint64_t wq = OS_W_ONE;
	double w;

	if (!ev->size)
		return;
	/* a managed heap's own mappings (its reservation, the commits of its
	 * pieces) are no objects: the runtime's objects live in them, and a
	 * sample there that no object holds is counted as a managed-heap
	 * sample, never charged to the mapping's allocation path */
	if (ev->type == OS_EV_MMAP && a->rt && a->rt->ops->in_heap &&
	    (a->rt->ops->in_heap(a->rt, as->id, ev->addr) ||
	     a->rt->ops->in_heap(a->rt, as->id, ev->addr + ev->size - 1)))
		return;
	ci = ev->node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, as->id, ev->node);
	if (ci == OS_NONE) {
		a->c.dropped_events++;
		return;
	}
	if (ev->type == OS_EV_MMAP && a->ctx[ci].quiet && quiet_commit(a, as, ev))
		return;
	/* a byte-sampled small block stands for 1 / p blocks of its site */
	if (ev->type == OS_EV_ALLOC && OS_IS_SMALL(ev->aux)) {
		wq = os_small_weight_q(ev->size, OS_SMALL_MEAN(ev->aux));
		a->ctx[ci].small_seen++;
		a->ctx[ci].seen++;
		a->small_seen++;
		a->weighted = true;
	}
	w = (double)wq / (double)OS_W_ONE;
	a->ctx[ci].allocations++;
	a->ctx[ci].bytes += ev->size;
	a->ctx[ci].est_allocations += w;
	a->ctx[ci].est_bytes += w * (double)ev->size;
	a->c.objects_seen++;
	/* whatever was there is stale (a free we did not see); a mapping
	 * replaces the part of another it lies over */
	if (ev->type == OS_EV_MMAP)
		cut_range(as, ev->addr, ev->addr + ev->size);
	else
		os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL, NULL);
	os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, os_val_make(ci, wq));
}

bool os_attrib_prepare(struct os_attrib *a, const struct os_event *ev, struct os_obj_event *oe)
{
	struct os_aspace *as = os_tasks_aspace(a->tasks, ev->pid);

	if (ev->type == OS_EV_THREAD) {
		char name[32] = "";
		size_t n = ev->size < sizeof(name) - 1 ? ev->size : sizeof(name) - 1;

		if (n > ev->nframes * 8u)
			n = ev->nframes * 8u;
		memcpy(name, ev->frames, n);
		name[n] = 0;
		os_tasks_thread_named(a->tasks, ev->pid, ev->tid, name, ev->time);
		return false;
	}
	if (!as)
		return false;
	if (ev->type != OS_EV_ALLOC && ev->type != OS_EV_FREE && ev->type != OS_EV_REALLOC &&
	    ev->type != OS_EV_MMAP && ev->type != OS_EV_MUNMAP && ev->type != OS_EV_MREMAP)
		return a->rt && a->rt->ops->prepare ? a->rt->ops->prepare(a->rt, as, ev, oe) : false;
	if (ev->type != OS_EV_ALLOC && ev->type != OS_EV_FREE && ev->type != OS_EV_REALLOC &&
	    a->rt && a->rt->ops->mapping)
		a->rt->ops->mapping(a->rt, as, ev);
	*oe = os_obj_ev(ev->type, ev->addr, ev->size, ev->aux, as->id, OS_CCT_NONE);
	if (ev->type == OS_EV_ALLOC && OS_IS_SMALL(ev->aux2)) /* byte-sampled small block */
		oe->aux = ev->aux2;
	if (ev->type == OS_EV_ALLOC || ev->type == OS_EV_MMAP || ev->type == OS_EV_REALLOC) {
		if (os_quiet_path(ev->frames, ev->nframes)) {
			/* a JIT compiler thread's block (shm.h os_slot.quiet) */
			uint32_t ci;

			a->quiet_blocks++;
			oe->node = os_attrib_path(a, as->id, ev->frames, 1);
			ci = oe->node == OS_CCT_NONE ? OS_NONE
						     : os_attrib_context(a, as->id, oe->node);
			if (ci != OS_NONE)
				a->ctx[ci].quiet = true;
		} else if (a->rt && a->rt->ops->path_words) {
			uint64_t path[OS_MAX_FRAMES];
			uint32_t n = a->rt->ops->path_words(a->rt, as, ev->frames, ev->nframes, path,
							    OS_MAX_FRAMES);

			oe->node = os_attrib_path(a, as->id, path, n);
		} else {
			oe->node = os_attrib_path(a, as->id, ev->frames, ev->nframes);
		}
	}
	return true;
}

void os_attrib_event(struct os_attrib *a, const struct os_obj_event *ev)
{
	struct os_aspace *as = os_tasks_get(a->tasks, ev->asid);
	uint64_t end, val;

	if (!as || !as->objects)
		return;
	switch (ev->type) {
	case OS_EV_ALLOC:
	case OS_EV_MMAP:
		born(a, as, ev);
		break;
	case OS_EV_FREE:
		if (os_iv_remove(as->objects, ev->addr, NULL, NULL) == 0)
			a->c.frees++;
		break;
	case OS_EV_REALLOC:
		if (os_iv_remove(as->objects, ev->aux, NULL, NULL) == 0)
			a->c.frees++;
		born(a, as, ev);
		break;
	case OS_EV_MUNMAP:
		a->c.frees += os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size,
						    NULL, NULL);
		break;
	case OS_EV_MREMAP:
		if (os_iv_remove(as->objects, ev->aux, &end, &val) == 0) {
			os_iv_remove_overlaps(as->objects, ev->addr, ev->addr + ev->size, NULL,
					      NULL);
			os_iv_insert(as->objects, ev->addr, ev->addr + ev->size, val);
		}
		break;
	default:
		/* runtime adapters (runtimes/runtime.h) give the other types a meaning */
		if (a->rt && a->rt->ops->apply)
			a->rt->ops->apply(a->rt, as, ev);
		break;
	}
}

static uint32_t sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		       uint32_t access_node, uint32_t *acc);

uint32_t os_attrib_acc(struct os_attrib *a, uint32_t ci, uint32_t access_node)
{
	uint64_t key = (uint64_t)ci << 32 | access_node, *slot;

	slot = os_hmap_ref(&a->acc_map, key, UINT64_MAX);
	if (!slot)
		return OS_NONE;
	if (*slot == UINT64_MAX) {
		struct os_acc *n = os_grow32(a->acc, &a->acccap, (size_t)a->nacc + 1, sizeof(*n), 1024,
					     UINT32_MAX);

		if (!n) {
			os_hmap_del(&a->acc_map, key);
			return OS_NONE;
		}
		a->acc = n;
		memset(&a->acc[a->nacc], 0, sizeof(a->acc[0]));
		a->acc[a->nacc].ctx = ci;
		a->acc[a->nacc].node = access_node;
		*slot = a->nacc++;
	}
	return (uint32_t)*slot;
}

void os_attrib_time_normalize(struct os_attrib *a)
{
	double f;

	if (!a->time_weighted || a->tw_attributed <= 0)
		return;
	f = (double)a->c.samples_attributed / a->tw_attributed;
	a->tw_scale = (a->tw_scale > 0 ? a->tw_scale : 1) * f;
	for (uint32_t i = 0; i < a->nctx; i++) {
		a->ctx[i].tsamples *= f;
		a->ctx[i].est_samples *= f;
		a->ctx[i].tw_sq *= f * f;
		a->ctx[i].est_sq *= f * f;
		a->ctx[i].path_var *= f * f;
	}
	for (uint32_t i = 0; i < a->nacc; i++) {
		a->acc[i].tsamples *= f;
		a->acc[i].est_samples *= f;
	}
	for (uint32_t i = 0; i < a->nsmall_votes; i++)
		a->small_votes[i].v *= f;
	a->small_voted *= f;
	a->est_attributed *= f;
	a->tw_sq_attributed *= f * f;
	a->est_java_attributed *= f;
	a->tw_attributed *= f;
	a->tw_java_attributed *= f;
	a->weighted = true;
}

double os_evidence_n(double n, double sum, double sum_sq)
{
	double k;

	if (!(n > 0) || !(sum > 0) || !(sum_sq > 0))
		return n > 0 ? n : 0;
	k = sum * sum / sum_sq;
	return k < n ? k : n;
}

double os_share_var(double D, double Q, double q, double alpha)
{
	double vq;

	if (!(D > 0) || !(q > 0))
		return 0;
	if (q > 1)
		q = 1;
	vq = q * (1 - q) / ((alpha > 0 ? alpha : 0) + 1);
	return q * q * (Q > 0 ? Q : D) + (D * D + (Q > 0 ? Q : D)) * vq;
}

/* A context's figure: Horvitz-Thompson, or with estimated paths its
 * samples plus (or less) its estimated part (the profile's samples_est). */
static double ctx_figure(const struct os_ctx *x)
{
	double d = x->path_kind == OS_PATH_NONE ? x->est_samples : x->tsamples + x->path_est;

	return d > 0 ? d : 0;
}

double os_attrib_top_settle(const struct os_attrib *a, unsigned k, unsigned apart_k,
			    double *top, bool *apart)
{
	double best[17] = { 0 }, se = 0, w = 0, q = 0;
	uint32_t at[17];
	unsigned n = 0;

	if (top)
		*top = NAN;
	if (apart)
		*apart = false;
	if (k > 16)
		k = 16;
	if (apart_k + 1 > k)
		k = apart_k + 1 > 16 ? 16 : apart_k + 1;
	for (uint32_t i = 0; i < a->nctx; i++) {
		w += ctx_figure(&a->ctx[i]);
		q += os_ctx_var(&a->ctx[i]);
	}
	if (!(w > 0) || !(q > 0))
		return NAN;
	/* the k largest figures, by insertion (k is small) */
	for (uint32_t i = 0; i < a->nctx; i++) {
		double v = ctx_figure(&a->ctx[i]);
		unsigned j;

		if (!(v > 0) || (n == k && v <= best[k - 1]))
			continue;
		j = n < k ? n++ : k - 1;
		for (; j > 0 && best[j - 1] < v; j--) {
			best[j] = best[j - 1];
			at[j] = at[j - 1];
		}
		best[j] = v;
		at[j] = i;
	}
	for (unsigned j = 0; j < n; j++) {
		double p = best[j] / w, var;

		var = (os_ctx_var(&a->ctx[at[j]]) * (1 - 2 * p) + p * p * q) / (w * w);
		if (var > se * se)
			se = sqrt(var);
	}
	if (apart && n >= 2) {
		*apart = true;
		for (unsigned j = 0; j < apart_k && j + 1 < n; j++)
			if (best[j] - OS_Z90 * sqrt(os_ctx_var(&a->ctx[at[j]])) <=
			    best[j + 1] + OS_Z90 * sqrt(os_ctx_var(&a->ctx[at[j + 1]])))
				*apart = false;
	}
	if (top)
		*top = n ? best[0] / w : NAN;
	return se;
}

double os_attrib_top_se(const struct os_attrib *a, unsigned k, double *top)
{
	return os_attrib_top_settle(a, k, 0, top, NULL);
}

uint64_t os_attrib_estimate(struct os_attrib *a, uint64_t now)
{
	uint64_t focus = a->rt && a->rt->ops->estimate ? a->rt->ops->estimate(a->rt, now) : 0;

	os_small_estimate(a);
	return focus;
}

void os_attrib_sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		      uint32_t access_node)
{
	uint32_t acc;

	sample(a, asid, addr, sp, access_node, &acc);
}

uint32_t os_attrib_charge(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
			  uint32_t access_node, uint32_t *acc)
{
	return sample(a, asid, addr, sp, access_node, acc);
}

/* Whether a runtime adapter knows the process of as (a JVM): its memory
 * born before the attach is the adapter's to name (objects found in its
 * heap, its own regions), not a native row's. */
static bool runtime_process(struct os_attrib *a, struct os_aspace *as)
{
	return a->rt && a->rt->ops->thread_kind && a->rt->ops->thread_kind(a->rt, as->pid, "") >= 0;
}

/* Attach mode: the value (context, weight 1) for a heap sample at addr
 * that no seen block holds: memory born before the attach. The context's
 * bytes grow by the size of each anonymous mapping the first time one of
 * its samples lands there (what is known of the blocks' size: at most
 * that). OS_NONE on out of memory. */
static uint64_t before_attach(struct os_attrib *a, struct os_aspace *as, uint64_t addr)
{
	uint64_t w = OS_BEFORE_WORD, s = 0, e = 0, seen;
	uint32_t node = os_attrib_path(a, as->id, &w, 1), ci;

	ci = node == OS_CCT_NONE ? OS_NONE : os_attrib_context(a, as->id, node);
	if (ci == OS_NONE)
		return OS_NONE;
	if (os_iv_lookup(as->anon, addr, &s, &e, NULL) &&
	    !os_hmap_get(&a->before_maps, (uint64_t)as->id << 48 ^ s, &seen) &&
	    os_hmap_put(&a->before_maps, (uint64_t)as->id << 48 ^ s, e - s) == 0) {
		a->ctx[ci].allocations++;
		a->ctx[ci].bytes += e - s;
		a->ctx[ci].est_allocations += 1;
		a->ctx[ci].est_bytes += (double)(e - s);
		a->before_nmaps++;
	}
	a->before_samples++;
	return os_val_make(ci, OS_W_ONE);
}

/* Attributes one sample; returns its context (OS_NONE if not attributed)
 * and its access entry in *acc (OS_NONE if none). */
static uint32_t sample(struct os_attrib *a, uint32_t asid, uint64_t addr, uint64_t sp,
		       uint32_t access_node, uint32_t *acc)
{
	struct os_aspace *as = os_tasks_get(a->tasks, asid);
	uint64_t val, ci;
	uint32_t slot_i;
	double w, tw;
	bool managed, opaque, found;

	*acc = OS_NONE;
	if (!as)
		return OS_NONE;
	if (a->rt && a->rt->ops->sample_addr)
		addr = a->rt->ops->sample_addr(a->rt, asid, addr);
	managed = a->rt && a->rt->ops->in_heap && a->rt->ops->in_heap(a->rt, asid, addr);
	/* a heap whose objects nobody tracks: its own mappings are no objects */
	opaque = managed && a->rt->ops->heap_opaque && a->rt->ops->heap_opaque(a->rt, asid, addr);
	found = !opaque && os_iv_lookup(as->objects, addr, NULL, NULL, &val);
	/* the managed heap is the program's: a compiler thread's block there
	 * (stale, or made before the heap was known) holds none of it */
	if (found && managed && os_val_ctx(val) < a->nctx && a->ctx[os_val_ctx(val)].quiet)
		found = false;
	if (!found &&
	    (!managed || !a->heap_miss ||
	     (val = a->heap_miss(a->heap_miss_arg, as, addr)) == OS_NONE || val >= a->nctx)) {
		if (managed) {
			a->c.samples_heap++;
			a->c.samples_java_heap++;
			return OS_NONE;
		}
		if (!os_aspace_is_heap(as, addr, sp))
			return OS_NONE;
		/* a native block below --min-size that was not sampled: held for
		 * the estimated paths (os_small_estimate) */
		if (a->small_hold && (val = os_small_holder(a, asid)) != OS_NONE) {
			a->small_held++;
			os_small_vote(a, as, addr, access_node);
		} else if (!a->before_attach || runtime_process(a, as) ||
			   (val = before_attach(a, as, addr)) == OS_NONE) {
			a->c.samples_heap++;
			return OS_NONE;
		}
	}
	ci = os_val_ctx(val);
	if (ci >= a->nctx) { /* never written so: counted, not attributed */
		a->c.samples_heap++;
		if (managed)
			a->c.samples_java_heap++;
		return OS_NONE;
	}
	if (a->tw > 0 && a->tw != 1)
		a->time_weighted = true;
	tw = os_attrib_tw(a);
	w = os_val_weight(val) * tw;
	a->c.samples_heap++;
	a->c.samples_attributed++;
	a->est_attributed += w;
	a->tw_attributed += tw;
	if (managed) {
		a->c.samples_java_heap++;
		a->c.samples_java_attributed++;
		a->est_java_attributed += w;
		a->tw_java_attributed += tw;
	}
	a->ctx[ci].samples++;
	a->ctx[ci].tsamples += tw;
	a->ctx[ci].est_samples += w;
	a->ctx[ci].tw_sq += tw * tw;
	a->ctx[ci].est_sq += w * w;
	a->tw_sq_attributed += tw * tw;
	if (access_node == OS_CCT_NONE)
		return (uint32_t)ci;
	slot_i = os_attrib_acc(a, (uint32_t)ci, access_node);
	if (slot_i == OS_NONE)
		return (uint32_t)ci;
	a->acc[slot_i].samples++;
	a->acc[slot_i].tsamples += tw;
	a->acc[slot_i].est_samples += w;
	*acc = slot_i;
	return (uint32_t)ci;
}
