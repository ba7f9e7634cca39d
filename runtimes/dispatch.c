/* dispatch.c - one struct os_runtime over every runtime of the registry
 * (runtime.h os_runtimes_new): an address space belongs to the first
 * runtime that claims it, and its ops go to that runtime alone; for an
 * address space nobody owns, the runtimes are asked in registry order and
 * the first answer that is not "do not know" stands.
 */
#include "runtimes/runtime.h"

#include <stdlib.h>
#include <string.h>

#include "attacher/cli/options.h"
#include "attacher/core/attrib.h"
#include "attacher/core/tasks.h"
#include "common/grow.h"
#include "common/profile.h"

struct dispatch {
	struct os_runtime rt;
	struct os_runtime **rts;  /* the runtimes, registry order */
	size_t n;
	uint8_t *owner;           /* per asid: 0 nobody, else index + 1 */
	size_t nowner;
	struct os_attrib *a;      /* whose heap_miss is ours (os_runtimes_new) */
};

static struct dispatch *dp_of(struct os_runtime *rt)
{
	return rt->priv;
}

/* The owner of asid, or NULL. */
static struct os_runtime *owner(struct dispatch *d, uint32_t asid)
{
	return asid < d->nowner && d->owner[asid] ? d->rts[d->owner[asid] - 1] : NULL;
}

static void set_owner(struct dispatch *d, uint32_t asid, size_t i)
{
	if (asid >= d->nowner) {
		size_t was = d->nowner;
		uint8_t *o = os_grow(d->owner, &d->nowner, (size_t)asid + 1, 1, 16);

		if (!o)
			return; /* unowned: the runtimes are asked in order */
		memset(o + was, 0, d->nowner - was);
		d->owner = o;
	}
	d->owner[asid] = (uint8_t)(i + 1);
}

static bool dp_prepare(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev,
		       struct os_obj_event *oe)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, as->id);

	if (r)
		return r->ops->prepare ? r->ops->prepare(r, as, ev, oe) : false;
	for (size_t i = 0; i < d->n; i++) {
		r = d->rts[i];
		if (r->ops->claim && !r->ops->claim(r, as, ev))
			continue;
		set_owner(d, as->id, i);
		/* the others may have watched it while nobody owned it */
		for (size_t k = 0; k < d->n; k++)
			if (k != i && d->rts[k]->ops->forget)
				d->rts[k]->ops->forget(d->rts[k], as->id);
		return r->ops->prepare ? r->ops->prepare(r, as, ev, oe) : false;
	}
	return false;
}

static uint64_t dp_frame_word(struct os_runtime *rt, uint32_t asid, uint64_t pc, uint64_t fp,
			      const uint64_t *leaf_regs,
			      bool (*read)(void *arg, uint64_t addr, uint64_t *word), void *arg)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->frame_word ? r->ops->frame_word(r, asid, pc, fp, leaf_regs, read, arg)
					  : pc;
	for (size_t i = 0; i < d->n; i++) {
		uint64_t w;

		r = d->rts[i];
		if (!r->ops->frame_word)
			continue;
		w = r->ops->frame_word(r, asid, pc, fp, leaf_regs, read, arg);
		if (w != pc)
			return w;
	}
	return pc;
}

static uint32_t dp_java_walk(struct os_runtime *rt, uint32_t asid, const struct os_rt_frame *start,
			     bool leaf, os_rt_read read, void *arg, uint64_t *frames, uint32_t max)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->java_walk ? r->ops->java_walk(r, asid, start, leaf, read, arg, frames,
							     max)
					 : 0;
	for (size_t i = 0; i < d->n; i++) {
		uint32_t n;

		r = d->rts[i];
		if (!r->ops->java_walk)
			continue;
		n = r->ops->java_walk(r, asid, start, leaf, read, arg, frames, max);
		if (n)
			return n;
	}
	return 0;
}

/* The path as it is (no runtime rewrote it). */
static uint32_t path_copy(const uint64_t *frames, uint32_t n, uint64_t *out, uint32_t max)
{
	if (n > max)
		n = max;
	memcpy(out, frames, n * sizeof(*frames));
	return n;
}

static uint32_t dp_path_words(struct os_runtime *rt, struct os_aspace *as, const uint64_t *frames,
			      uint32_t n, uint64_t *out, uint32_t max)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, as->id);

	if (r)
		return r->ops->path_words ? r->ops->path_words(r, as, frames, n, out, max)
					  : path_copy(frames, n, out, max);
	for (size_t i = 0; i < d->n; i++) {
		uint32_t k;

		r = d->rts[i];
		if (!r->ops->path_words)
			continue;
		k = r->ops->path_words(r, as, frames, n, out, max);
		if (k != n || memcmp(out, frames, k * sizeof(*frames)) != 0)
			return k;
	}
	return path_copy(frames, n, out, max);
}

static void dp_sample_taken(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, as->id);

	if (r) {
		if (r->ops->sample_taken)
			r->ops->sample_taken(r, as, addr);
		return;
	}
	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->sample_taken)
			d->rts[i]->ops->sample_taken(d->rts[i], as, addr);
}

static void dp_apply(struct os_runtime *rt, struct os_aspace *as, const struct os_obj_event *oe)
{
	struct os_runtime *r = owner(dp_of(rt), as->id);

	/* only events a runtime prepared come here: their address space is owned */
	if (r && r->ops->apply)
		r->ops->apply(r, as, oe);
}

static void dp_mapping(struct os_runtime *rt, struct os_aspace *as, const struct os_event *ev)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, as->id);

	if (r) {
		if (r->ops->mapping)
			r->ops->mapping(r, as, ev);
		return;
	}
	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->mapping)
			d->rts[i]->ops->mapping(d->rts[i], as, ev);
}

static bool dp_heap_opaque(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->heap_opaque && r->ops->heap_opaque(r, asid, addr);
	for (size_t i = 0; i < d->n; i++) {
		r = d->rts[i];
		if (r->ops->heap_opaque && r->ops->heap_opaque(r, asid, addr))
			return true;
	}
	return false;
}

static uint32_t dp_heap_miss(struct os_runtime *rt, struct os_aspace *as, uint64_t addr)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, as->id);

	if (r)
		return r->ops->heap_miss ? r->ops->heap_miss(r, as, addr) : OS_NONE;
	/* a runtime known from its mappings alone owns no address space */
	for (size_t i = 0; i < d->n; i++) {
		uint32_t ci;

		r = d->rts[i];
		if (!r->ops->heap_miss)
			continue;
		ci = r->ops->heap_miss(r, as, addr);
		if (ci != OS_NONE)
			return ci;
	}
	return OS_NONE;
}

/* os_attrib.heap_miss over the dispatcher. */
static uint32_t dp_attrib_heap_miss(void *arg, struct os_aspace *as, uint64_t addr)
{
	return dp_heap_miss(arg, as, addr);
}

static uint64_t dp_sample_addr(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->sample_addr ? r->ops->sample_addr(r, asid, addr) : addr;
	for (size_t i = 0; i < d->n; i++) {
		uint64_t v;

		r = d->rts[i];
		if (!r->ops->sample_addr)
			continue;
		v = r->ops->sample_addr(r, asid, addr);
		if (v != addr)
			return v;
	}
	return addr;
}

static bool dp_in_heap(struct os_runtime *rt, uint32_t asid, uint64_t addr)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->in_heap && r->ops->in_heap(r, asid, addr);
	for (size_t i = 0; i < d->n; i++) {
		r = d->rts[i];
		if (r->ops->in_heap && r->ops->in_heap(r, asid, addr))
			return true;
	}
	return false;
}

static void dp_before_symbolize(struct os_runtime *rt)
{
	struct dispatch *d = dp_of(rt);

	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->before_symbolize)
			d->rts[i]->ops->before_symbolize(d->rts[i]);
}

static enum os_rt_word dp_name_word(struct os_runtime *rt, uint32_t asid, uint64_t word,
				    const char **name, const char **file, uint32_t *line)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r && r->ops->name_word)
		return r->ops->name_word(r, asid, word, name, file, line);
	if (r)
		return OS_RT_WORD_UNKNOWN;
	for (size_t i = 0; i < d->n; i++) {
		enum os_rt_word k;

		r = d->rts[i];
		if (!r->ops->name_word)
			continue;
		k = r->ops->name_word(r, asid, word, name, file, line);
		if (k != OS_RT_WORD_UNKNOWN)
			return k;
	}
	return OS_RT_WORD_UNKNOWN;
}

static const char *dp_jit_name(struct os_runtime *rt, uint32_t asid, const char *raw, char *buf,
			       size_t len)
{
	struct dispatch *d = dp_of(rt);
	struct os_runtime *r = owner(d, asid);

	if (r)
		return r->ops->jit_name ? r->ops->jit_name(r, asid, raw, buf, len) : NULL;
	for (size_t i = 0; i < d->n; i++) {
		const char *s;

		r = d->rts[i];
		if (!r->ops->jit_name)
			continue;
		s = r->ops->jit_name(r, asid, raw, buf, len);
		if (s)
			return s;
	}
	return NULL;
}

/* Only the adapter that owns asid names its native memory: a native
 * program's blocks are never labelled by a runtime's table. */
static const char *dp_native_type(struct os_runtime *rt, uint32_t asid, const char *const *names,
				  uint32_t n)
{
	struct os_runtime *r = owner(dp_of(rt), asid);

	return r && r->ops->native_type ? r->ops->native_type(r, asid, names, n) : NULL;
}

static int dp_thread_kind(struct os_runtime *rt, uint32_t pid, const char *name)
{
	struct dispatch *d = dp_of(rt);

	for (size_t i = 0; i < d->n; i++) {
		struct os_runtime *r = d->rts[i];
		int k;

		if (!r->ops->thread_kind)
			continue;
		k = r->ops->thread_kind(r, pid, name);
		if (k >= 0)
			return k;
	}
	return -1;
}

static void dp_notes(struct os_runtime *rt, struct os_profile *p)
{
	struct dispatch *d = dp_of(rt);

	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->notes)
			d->rts[i]->ops->notes(d->rts[i], p);
}

static uint64_t dp_estimate(struct os_runtime *rt, uint64_t now)
{
	struct dispatch *d = dp_of(rt);
	uint64_t focus = 0, k;

	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->estimate && (k = d->rts[i]->ops->estimate(d->rts[i], now)) &&
		    !focus)
			focus = k;
	return focus;
}

static void dp_destroy(struct os_runtime *rt)
{
	struct dispatch *d = dp_of(rt);

	if (d->a && d->a->heap_miss_arg == rt) {
		d->a->heap_miss = NULL;
		d->a->heap_miss_arg = NULL;
	}

	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->destroy)
			d->rts[i]->ops->destroy(d->rts[i]);
	free(d->rts);
	free(d->owner);
	free(d);
}

static const struct os_runtime_ops dispatch_ops = {
	.name = "runtimes",
	.prepare = dp_prepare,
	.frame_word = dp_frame_word,
	.java_walk = dp_java_walk,
	.path_words = dp_path_words,
	.sample_taken = dp_sample_taken,
	.apply = dp_apply,
	.heap_miss = dp_heap_miss,
	.mapping = dp_mapping,
	.heap_opaque = dp_heap_opaque,
	.sample_addr = dp_sample_addr,
	.in_heap = dp_in_heap,
	.before_symbolize = dp_before_symbolize,
	.name_word = dp_name_word,
	.jit_name = dp_jit_name,
	.native_type = dp_native_type,
	.thread_kind = dp_thread_kind,
	.notes = dp_notes,
	.estimate = dp_estimate,
	.destroy = dp_destroy,
};

struct os_runtime *os_runtimes_of(struct os_runtime *const *rts, size_t n)
{
	struct dispatch *d = calloc(1, sizeof(*d));

	if (d)
		d->rts = calloc(n ? n : 1, sizeof(*d->rts));
	if (!d || !d->rts || n > UINT8_MAX) {
		for (size_t i = 0; i < n; i++)
			if (rts[i] && rts[i]->ops->destroy)
				rts[i]->ops->destroy(rts[i]);
		if (d)
			free(d->rts);
		free(d);
		return NULL;
	}
	d->rt.ops = &dispatch_ops;
	d->rt.priv = d;
	memcpy(d->rts, rts, n * sizeof(*rts));
	d->n = n;
	return &d->rt;
}

bool os_runtime_selected(const struct os_opts *o, const char *name)
{
	return !o || !o->runtime || strcmp(o->runtime, name) == 0;
}

/* Whether options o want runtime i of the registry. */
static bool wanted(size_t i, const struct os_opts *o)
{
	return !o || !os_runtimes[i].wanted || os_runtimes[i].wanted(o);
}

uint32_t os_runtimes_shm_flags(const struct os_opts *o)
{
	uint32_t flags = 0;

	for (size_t i = 0; i < os_nruntimes; i++)
		if (wanted(i, o) && os_runtimes[i].shm_flags)
			flags |= os_runtimes[i].shm_flags(o);
	return flags;
}

struct os_runtime *os_runtimes_new(struct os_attrib *a, struct os_symbolizer *sym,
				   const struct os_opts *o)
{
	struct os_runtime **rts = calloc(os_nruntimes ? os_nruntimes : 1, sizeof(*rts));
	struct os_runtime *rt;
	size_t n = 0;

	if (!rts)
		return NULL;
	for (size_t i = 0; i < os_nruntimes; i++) {
		if (!wanted(i, o))
			continue;
		rts[n] = os_runtimes[i].create(a, sym);
		if (!rts[n]) {
			for (size_t k = 0; k < n; k++)
				if (rts[k]->ops->destroy)
					rts[k]->ops->destroy(rts[k]);
			free(rts);
			return NULL;
		}
		n++;
	}
	rt = os_runtimes_of(rts, n);
	free(rts);
	if (rt && a) { /* the runtimes' heap_miss, through the owner of the address space */
		dp_of(rt)->a = a;
		a->heap_miss = dp_attrib_heap_miss;
		a->heap_miss_arg = rt;
	}
	return rt;
}

size_t os_runtimes_render_note(const struct os_profile *p, const struct os_note_counters *g,
			       char *buf, size_t len)
{
	const char *kind = g->kind < p->nstrings ? p->strings[g->kind] : "";

	for (size_t i = 0; i < os_nruntimes; i++) {
		size_t n = strlen(os_runtimes[i].name);

		if (os_runtimes[i].render_note && strncmp(kind, os_runtimes[i].name, n) == 0 &&
		    kind[n] == '.')
			return os_runtimes[i].render_note(p, g, buf, len);
	}
	return 0;
}

struct os_runtime *os_runtime_find(struct os_runtime *rt, const char *name)
{
	struct dispatch *d;

	if (!rt)
		return NULL;
	if (rt->ops->name && strcmp(rt->ops->name, name) == 0)
		return rt;
	if (rt->ops != &dispatch_ops)
		return NULL;
	d = dp_of(rt);
	for (size_t i = 0; i < d->n; i++)
		if (d->rts[i]->ops->name && strcmp(d->rts[i]->ops->name, name) == 0)
			return d->rts[i];
	return NULL;
}
