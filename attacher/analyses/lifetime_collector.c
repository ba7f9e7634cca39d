/* lifetime_collector.c - the lifetime observer: the lifetime engine
 * (lifetime.h) as an analysis of the collection loop
 * (attacher/core/observer.h), enabled by --lifetimes
 * (attacher/analyses/analyses.c), and its part of the profile
 * (OS_SEC_LIFETIMES, docs/LIFETIMES.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/analyses/lifetime.h"
#include "attacher/core/collector.h"
#include "common/shm.h"

struct lt_obs {
	struct os_collector *c;
	struct os_lt t;
	uint64_t now;               /* the newest event's time, from the start of the run */
	uint32_t asid;              /* end_one: the address space walked */
};

/* What os_lt_collected asks about: the index and the report's heap. */
struct lt_ask {
	struct os_collector *c;
	const struct os_gc_report *r;
};

/* The object [start, end) of asid is in the index as it was born. */
static bool held_val(struct os_collector *c, uint32_t asid, uint64_t start, uint64_t end,
		     uint64_t *val)
{
	struct os_aspace *as = os_tasks_get(&c->tasks, asid);
	uint64_t s, e;

	return as && as->objects && os_iv_lookup(as->objects, start, &s, &e, val) && s == start &&
	       e == end;
}

static bool held(void *arg, uint32_t asid, uint64_t start, uint64_t end)
{
	const struct lt_ask *q = arg;
	uint64_t v;

	return held_val(q->c, asid, start, end, &v);
}

static uint32_t gen(void *arg, uint32_t asid, uint64_t addr)
{
	const struct lt_ask *q = arg;

	(void)asid;
	return q->r->gen_of ? q->r->gen_of(q->r->gen_arg, addr) : OS_GEN_UNKNOWN;
}

static int obs_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct lt_obs *o = calloc(1, sizeof(*o));

	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	o->c = c;
	os_lt_init(&o->t);
	*self = o;
	return 0;
}

static void end_one(uint64_t start, uint64_t end, uint64_t val, void *arg)
{
	struct lt_obs *o = arg;

	(void)end;
	(void)val;
	os_lt_end(&o->t, o->asid, start, o->now); /* the engine's map only: the index stays */
}

/* The objects of asid overlapping [lo, hi) end: the index is about to drop
 * them (unmapped). */
static void end_overlaps(struct lt_obs *o, uint32_t asid, uint64_t lo, uint64_t hi)
{
	struct os_aspace *as = os_tasks_get(&o->c->tasks, asid);

	if (!as || !as->objects || hi <= lo)
		return;
	o->asid = asid;
	os_iv_foreach(as->objects, lo, hi, end_one, o);
}

/* In time order, before the event is applied: ends. */
static void obs_event(void *self, const struct os_obj_event *ev, uint64_t time)
{
	struct lt_obs *o = self;

	o->now = time > o->c->start_ns ? time - o->c->start_ns : 0;
	switch (ev->type) {
	case OS_EV_FREE:
		os_lt_end(&o->t, ev->asid, ev->addr, o->now);
		break;
	case OS_EV_REALLOC:
		os_lt_end(&o->t, ev->asid, ev->aux, o->now); /* the old block */
		break;
	case OS_EV_MUNMAP:
		end_overlaps(o, ev->asid, ev->addr, ev->addr + ev->size);
		break;
	case OS_EV_MREMAP:
		os_lt_move(&o->t, ev->asid, ev->aux, ev->addr, ev->size, o->now);
		break;
	default: /* births over objects whose end was not seen: at the finish
		  * (native) or the next collection (managed); an object starting
		  * at the same place ends in os_lt_born */
		break;
	}
}

/* After the event is applied: births of the objects the index now holds. */
static void obs_applied(void *self, const struct os_obj_event *ev, uint64_t time)
{
	struct lt_obs *o = self;
	uint64_t val;

	(void)time;
	if (ev->type != OS_EV_ALLOC && ev->type != OS_EV_MMAP && ev->type != OS_EV_REALLOC &&
	    ev->type != OS_EV_JALLOC)
		return;
	if (!ev->size || !held_val(o->c, ev->asid, ev->addr, ev->addr + ev->size, &val))
		return; /* not tracked */
	os_lt_born(&o->t, ev->asid, ev->addr, ev->size, os_val_ctx(val), os_val_weight(val),
		   ev->type == OS_EV_JALLOC, o->now);
}

static void obs_collected(void *self, const struct os_gc_report *r)
{
	struct lt_obs *o = self;
	struct lt_ask q = { o->c, r };

	os_lt_collected(&o->t, r, held, gen, &q);
}

static void obs_finish(void *self)
{
	struct lt_obs *o = self;
	struct lt_ask q = { o->c, NULL };

	os_lt_finish(&o->t, o->now, held, &q);
}

static void obs_destroy(void *self)
{
	struct lt_obs *o = self;

	if (!o)
		return;
	os_lt_destroy(&o->t);
	free(o);
}

static void obs_notes(void *self, struct os_profile *p)
{
	struct lt_obs *o = self;
	const char *mode = os_profile_str(p, p->meta.mode);
	char note[512];

	p->analyses |= OS_AN_LIFETIMES;
	if (mode && !strcmp(mode, "attach"))
		p->lt.flags |= OS_LTP_F_ATTACH;
	p->lt.peak_bytes = o->t.peak_bytes;
	p->lt.peak_ns = o->t.peak_ns;
	p->lt.collections = o->t.collections;
	p->lt.collections_unjudged = o->t.unjudged;
	p->lt.unaged = o->t.unaged;
	memcpy(p->lt.survivor_bytes, o->t.survivor_bytes, sizeof(p->lt.survivor_bytes));
	if (o->t.unseen_ends) {
		snprintf(note, sizeof(note), "lifetimes: %llu native objects ended unseen (another "
			 "allocation took their place: a free not seen); not counted",
			 (unsigned long long)o->t.unseen_ends);
		os_profile_add_note(p, note);
	}
	if (o->t.oom) {
		snprintf(note, sizeof(note), "lifetimes: out of memory: some objects were not "
			 "followed (their lifetimes are missing)");
		os_profile_add_note(p, note);
	}
}

/* The figures of every attribution context, summed into the profile's
 * context it became (contexts equal once symbolized are one). */
static int obs_sections(void *self, const struct os_obs_build *b)
{
	struct lt_obs *o = self;
	const struct os_attrib *a = &b->c->attrib;

	for (uint32_t i = 0; i < a->nctx; i++) {
		const struct os_lifetime *s = os_lt_context(&o->t, i);
		struct os_lifetime *d;

		if (!s || b->ctxmap[i] == OS_NONE || b->ctxmap[i] >= b->p->ncontexts)
			continue;
		d = os_profile_lifetime(b->p, b->ctxmap[i]);
		if (!d)
			return -ENOMEM;
		os_lifetime_add(d, s);
	}
	return 0;
}

const struct os_observer_ops os_lifetime_observer = {
	.name = "lifetimes",
	.start = obs_start,
	.event = obs_event,
	.applied = obs_applied,
	.collected = obs_collected,
	.finish = obs_finish,
	.profile_notes = obs_notes,
	.profile_sections = obs_sections,
	.destroy = obs_destroy,
};
