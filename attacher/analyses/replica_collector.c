/* replica_collector.c - the replica observer: the replica engine
 * (replica.h) as an analysis of the collection loop (attacher/core/observer.h),
 * enabled by --replicas (attacher/analyses/analyses.c), and its part of the
 * profile (counts per context, notes). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attacher/core/collector.h"
#include "attacher/analyses/replica.h"
#include "common/log.h"

#define DYING_BITS 16
#define DYING (1u << DYING_BITS)
/* Frees are followed while a sample wanted to be hashed within this long. */
#define DYING_KEEP_NS 1000000000ULL

struct rep_obs {
	struct os_collector *c;
	struct os_rep *rep;
	struct os_rep_watch *repw;
	struct os_rep_tgt *tgt;   /* in-target comparisons (record mode), NULL if off */
	/* Frees drained, by hash bucket of (asid, block): the time of the
	 * latest (CLOCK_MONOTONIC >> 20, ~1 ms). A sampled object whose bucket
	 * holds a time at or after the sample's may be freed by now and is not
	 * hashed (a collision only skips a hash: counted). Stores only, and
	 * only while a sample wants the answer (dying_on_since: since when, 0:
	 * not; a context compared in the target never does): a count per
	 * bucket, +1 at the drain and -1 at the apply, missed the cache on
	 * every free of a churning program (perf: 5-8% of the collector on
	 * replica_churn). Frees of two threads in one bucket drained out of
	 * time order can leave the older time: rare, and only a hash of an
	 * object freed in that millisecond. */
	uint32_t dying[DYING];
	uint64_t dying_on_since;  /* wall time frees are followed since; 0: not */
	uint64_t dying_want;      /* time of the latest sample that wanted it */
	uint32_t gc_drained;      /* greatest shm gc_begun of a GC_BEGIN drained */
	struct {                  /* allocation paths whose site key was taken lately */
		uint32_t node;
		uint64_t time;
	} keyed[256];
};

/* A path's site key is taken again at most this often (a JIT compiling the
 * allocating method changes the target's words, not the context). */
#define KEY_REFRESH_NS 20000000ULL

static uint32_t *dying_at(struct rep_obs *o, uint32_t asid, uint64_t addr)
{
	uint64_t k = ((uint64_t)asid << 48 ^ addr) * 0x9e3779b97f4a7c15ULL;

	return &o->dying[k >> (64 - DYING_BITS)];
}

static void dying_mark(struct rep_obs *o, uint32_t asid, uint64_t addr, uint64_t time)
{
	if (!o->dying_on_since)
		return;
	if (time > o->dying_want + DYING_KEEP_NS) {
		o->dying_on_since = 0; /* no sample wanted it for a while */
		return;
	}
	*dying_at(o, asid, addr) = (uint32_t)(time >> 20) + 1;
}

/* What take() keeps with a queued sample: the word read at sample time
 * (bytes 0-7), the access width (8) and whether the word was read (9). */
#define REP_DATA 10

/* Backend check: O1 is still the object the comparison was made with. */
static bool obj_alive(void *arg, uint32_t asid, uint64_t lo, uint64_t hi, uint32_t ctx)
{
	struct os_collector *c = arg;
	struct os_aspace *as = os_tasks_get(&c->tasks, asid);
	uint64_t s, e, v;

	return as && as->objects && os_iv_lookup(as->objects, lo, &s, &e, &v) && s == lo &&
	       e == hi && os_val_ctx(v) == ctx; /* weight bits above the context */
}

/* Backend token: the target's collections begun (shm gc_begun), 0 while
 * one runs or the begin of one is not drained yet (common/shm.h). The
 * counters are the target's to write: wrong ones only skip reads. */
static uint64_t gc_token(void *arg)
{
	struct rep_obs *o = arg;
	const struct os_shm_header *h = o->c->shm_ready ? o->c->shm.hdr : NULL;
	uint32_t begun, ended;

	if (!h)
		return 1;
	begun = atomic_load_explicit(&h->gc_begun, memory_order_acquire);
	ended = atomic_load_explicit(&h->gc_ended, memory_order_acquire);
	if (begun != ended || (int32_t)(begun - o->gc_drained) > 0)
		return 0;
	return (uint64_t)begun + 1;
}

static int obs_start(void **self, struct os_collector *c, char *err, size_t errlen)
{
	struct rep_obs *o = calloc(1, sizeof(*o));
	struct os_rep_backend be;
	struct os_rep_cfg cfg;

	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*self = o;
	o->c = c;
	o->dying_on_since = 1; /* followed from the start */
	o->dying_want = os_now_ns();
	o->repw = os_rep_watch_new((enum watch_route)c->opts->watch_route);
	if (!o->repw) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	os_rep_watch_backend(o->repw, &be);
	be.alive = obj_alive;
	be.alive_arg = c;
	be.gc_token = gc_token;
	be.gc_arg = o;
	os_rep_cfg_default(&cfg);
	o->rep = os_rep_new(&cfg, &be);
	if (!o->rep) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* At sample time, the target alive: width and value of the access. */
static void obs_take(void *self, const struct os_obs_take *t, void *data)
{
	struct rep_obs *o = self;
	uint8_t *d = data, width = 0;
	uint64_t word8 = 0;
	bool ok;

	ok = os_rep_read_access(o->rep, t->pid, t->asid, t->insn, t->ip, t->addr, &width, &word8);
	memcpy(d, &word8, 8);
	d[8] = width;
	d[9] = ok;
}

/* Drained from the rings: content read before a GC is applied is stale. */
static void obs_drained(void *self, const struct os_obj_event *oe, uint64_t time)
{
	struct rep_obs *o = self;

	if (oe->type == OS_EV_GC_BEGIN)
		os_rep_gc_seen(o->rep, oe->asid, time);
	else if (oe->type == OS_EV_FREE)
		dying_mark(o, oe->asid, oe->addr, time);
	else if (oe->type == OS_EV_REALLOC)
		dying_mark(o, oe->asid, oe->aux, time);
}

/* The site keys of the contexts (in-target comparisons). */
static void obs_drained_raw(void *self, const struct os_event *raw, const struct os_obj_event *oe)
{
	struct rep_obs *o = self;
	unsigned h;

	if (raw->type == OS_EV_GC_BEGIN && (int32_t)((uint32_t)raw->size - o->gc_drained) > 0)
		o->gc_drained = (uint32_t)raw->size; /* the shm's gc_begun at this begin */
	if (!o->tgt || oe->node == OS_CCT_NONE ||
	    (oe->type != OS_EV_ALLOC && oe->type != OS_EV_REALLOC && oe->type != OS_EV_JALLOC))
		return;
	h = (oe->node * 2654435761u) >> 24;
	if (o->keyed[h].node == oe->node + 1 && raw->time < o->keyed[h].time + KEY_REFRESH_NS)
		return; /* the cheap common case of a program that allocates a lot */
	o->keyed[h].node = oe->node + 1;
	o->keyed[h].time = raw->time;
	os_rep_tgt_site(o->tgt, os_attrib_context(&o->c->attrib, oe->asid, oe->node), oe->asid,
			raw->pid, raw->frames, raw->nframes);
}

/* In time order, before the event is applied: frees/GCs forget their
 * comparisons (the freed object's end is still in the index). */
static void obs_event(void *self, const struct os_obj_event *ev, uint64_t time)
{
	struct rep_obs *o = self;
	struct os_collector *c = o->c;
	struct os_aspace *as = os_tasks_get(&c->tasks, ev->asid);
	uint64_t lo = ev->addr, hi = 0;

	if (!as || !as->objects)
		return;
	switch (ev->type) {
	case OS_EV_GC_BEGIN:
		os_rep_event(o->rep, time, ev->asid, 0, 0, true);
		return;
	case OS_EV_REALLOC:
	case OS_EV_FREE:
		if (ev->type == OS_EV_REALLOC)
			lo = ev->aux; /* the old block */
		/* the end only matters to an armed comparison (os_rep_free_object) */
		if (!os_rep_armed(o->rep) || !os_iv_lookup(as->objects, lo, NULL, &hi, NULL))
			hi = lo + 1;
		os_rep_free_object(o->rep, time, ev->asid, lo, hi);
		return;
	case OS_EV_MREMAP:
		lo = ev->aux; /* the old block */
		if (!os_iv_lookup(as->objects, lo, NULL, &hi, NULL))
			hi = lo + 1;
		break;
	case OS_EV_MUNMAP:
		hi = ev->addr + ev->size;
		break;
	default:
		return;
	}
	os_rep_event(o->rep, time, ev->asid, lo, hi, false);
}

/* In time order, after attribution. */
static void obs_sample(void *self, const struct os_obs_sample *x)
{
	struct rep_obs *o = self;
	struct os_collector *c = o->c;
	const uint8_t *d = x->data;
	uint32_t asid = x->asid;
	uint64_t addr = x->addr, word8;
	struct os_aspace *as = os_tasks_get(&c->tasks, asid);
	struct os_runtime *rt = c->attrib.rt;
	struct os_rep_sample s;
	uint64_t ci, canon = addr;
	uint8_t width = d[8];
	bool ok = d[9];

	if (!as || !as->objects)
		return;
	if (rt && rt->ops->sample_addr)
		canon = rt->ops->sample_addr(rt, asid, addr);
	memset(&s, 0, sizeof(s));
	if (!os_iv_lookup(as->objects, canon, &s.lo, &s.hi, &ci))
		return;
	memcpy(&word8, d, 8);
	s.time = x->time;
	s.pid = (pid_t)as->pid;
	s.tid = (pid_t)x->tid;
	s.asid = asid;
	s.ctx = os_val_ctx(ci);
	s.addr = canon;
	s.width = width;
	s.value_ok = ok && canon == addr; /* colored (ZGC) addresses: value of addr */
	s.word8 = word8;
	s.java = rt && rt->ops->in_heap && rt->ops->in_heap(rt, asid, canon);
	if (!o->dying_on_since || o->dying_on_since > x->time)
		s.frees_unknown = true;
	else
		s.dead = *dying_at(o, asid, s.lo) >= (uint32_t)(x->time >> 20) + 1;
	os_rep_sample(o->rep, &s);
	if (os_rep_exact_wanted(o->rep)) {
		o->dying_want = x->time;
		if (!o->dying_on_since)
			o->dying_on_since = os_now_ns();
	}
}

/* After the rings are drained: watchpoint hits, queued; os_rep_sample and
 * os_rep_flush take them in time order with the samples and events. */
static void obs_poll(void *self)
{
	struct rep_obs *o = self;
	struct os_collector *c = o->c;

	os_rep_poll(o->rep);
	/* --replicas (cmd_record.c sets the flag before the launch,
	 * cmd_attach.c before objscope_attach): the allocation hooks arm
	 * comparisons themselves */
	if (!o->tgt && c->shm_ready && (c->shm.hdr->flags & OS_SHM_F_REPLICAS)) {
		o->tgt = os_rep_tgt_new(c->shm.hdr, 500000000ULL); /* NULL: tried again */
		/* the target's threads arm OS_REP_PER_THREAD registers themselves */
		os_rep_set_slots(o->rep, WATCH_SLOTS - OS_REP_PER_THREAD);
	}
	if (o->tgt)
		os_rep_tgt_poll(o->tgt, o->rep);
}

/* Eager rounds (every 5 ms, not 20) only while the collector's own
 * watchpoints are armed: their hits are matched young and, with the ptrace
 * route, a thread that hit waits stopped for the poll. The in-target
 * comparisons need no haste: the value is read in the target, and a native
 * object freed before the collector reads it is hashed by its free hook. */
static bool obs_eager_now(void *self)
{
	return os_rep_armed(((struct rep_obs *)self)->rep) > 0;
}

static void obs_flush(void *self, uint64_t cutoff)
{
	os_rep_flush(((struct rep_obs *)self)->rep, cutoff);
}

/* os_collector_stop: before the target is left */
static void obs_stop(void *self)
{
	struct rep_obs *o = self;

	if (o->tgt)
		os_rep_tgt_stop(o->tgt, o->rep);
	os_rep_stop(o->rep);
}

static void obs_finish(void *self)
{
	os_rep_finish(((struct rep_obs *)self)->rep);
}

static void obs_destroy(void *self)
{
	struct rep_obs *o = self;

	if (!o)
		return;
	os_rep_free(o->rep);
	os_rep_tgt_free(o->tgt);
	os_rep_watch_free(o->repw); /* watch_close: on the main thread, as here */
	free(o);
}

/* Notes of the profile and OS_AN_REPLICAS. */
static void obs_notes(void *self, struct os_profile *p)
{
	struct rep_obs *o = self;
	struct os_collector *c = o->c;
	struct os_rep_stats st;
	struct watch_stats ws;
	const char *werr = NULL;
	char note[1024];

	p->analyses |= OS_AN_REPLICAS;
	os_rep_get_stats(o->rep, &st);
	os_rep_watch_stats(o->repw, &ws, &werr);
	snprintf(note, sizeof(note),
		 "replicas: watchpoints by the %s route (%u per thread, reservoir sampling); "
		 "%llu samples on objects, %llu comparisons offered, %llu armed, %llu hits, "
		 "%llu compared",
		 watch_route_name((enum watch_route)c->opts->watch_route), WATCH_SLOTS,
		 (unsigned long long)st.samples, (unsigned long long)st.offers,
		 (unsigned long long)st.armed, (unsigned long long)st.hits,
		 (unsigned long long)st.compared);
	os_profile_add_note(p, note);
	snprintf(note, sizeof(note),
		 "replicas skipped: %llu not chosen by the reservoir, %llu replaced, %llu no free "
		 "debug register, %llu thread gone, %llu arm errors, %llu expired unhit, %llu "
		 "forgotten (object freed / GC), %llu hits after that, %llu hits without a value, "
		 "%llu samples in a GC window, %llu without a value, %llu without a reference yet, "
		 "%llu hit widths differing, %llu disarmed unhit when the collection stopped, "
		 "%llu offered after it, %llu not offered (context compared in the target, its "
		 "objects freed before a hit 16 times in a row: one offer a second)",
		 (unsigned long long)st.not_chosen, (unsigned long long)st.replaced,
		 (unsigned long long)st.enospc, (unsigned long long)st.thread_gone,
		 (unsigned long long)st.arm_errors, (unsigned long long)st.expired,
		 (unsigned long long)st.invalidated, (unsigned long long)st.hit_unknown,
		 (unsigned long long)st.hit_no_value, (unsigned long long)st.gc_window,
		 (unsigned long long)st.no_value, (unsigned long long)st.no_ref,
		 (unsigned long long)st.width_differs, (unsigned long long)st.stopped,
		 (unsigned long long)st.after_stop, (unsigned long long)st.own_futile);
	os_profile_add_note(p, note);
	snprintf(note, sizeof(note),
		 "replicas checks: whole-content comparisons (alpha) %llu skipped by the rate "
		 "bound, %llu first object gone, %llu unreadable; exact figure: %llu objects "
		 "hashed, %llu replaced and %llu not taken by the per-context reservoir, %llu "
		 "unreadable or larger than 1 MiB, %llu not while frees were not followed; "
		 "%llu Java objects not read or their content dropped: a collection ran or "
		 "was not drained yet",
		 (unsigned long long)st.full_rate_skipped, (unsigned long long)st.full_skipped_gone,
		 (unsigned long long)st.full_read_fail, (unsigned long long)st.exact_hashed,
		 (unsigned long long)st.exact_replaced, (unsigned long long)st.exact_not_chosen,
		 (unsigned long long)st.exact_read_fail, (unsigned long long)st.exact_unfollowed,
		 (unsigned long long)st.gc_unsettled);
	os_profile_add_note(p, note);
	snprintf(note, sizeof(note),
		 "replicas watch: %llu armed, %llu hits, %llu ENOSPC, %llu lost to thread exit, "
		 "%llu expired, %llu SIGTRAPs consumed, %llu signals passed on, %llu errors%s%s",
		 (unsigned long long)ws.armed, (unsigned long long)ws.hits,
		 (unsigned long long)ws.enospc, (unsigned long long)ws.thread_gone,
		 (unsigned long long)ws.expired, (unsigned long long)ws.sigtraps_consumed,
		 (unsigned long long)ws.signals_passed, (unsigned long long)ws.errors,
		 werr ? "; watch_open failed: " : "", werr ? werr : "");
	os_profile_add_note(p, note);
	if (o->tgt) {
		struct os_rep_tgt_stats ts;

		os_rep_tgt_get_stats(o->tgt, &ts);
		snprintf(note, sizeof(note),
			 "replicas in target (allocation hooks arm the next object of a "
			 "context): %llu published (%llu of them as their context allocated), %llu compared, %llu references taken; not "
			 "compared: %llu withdrawn (no object of the site in 1 s; the site then "
			 "waits 1-32 s), %llu expired unhit, %llu object freed or collected before "
			 "a hit, %llu no free debug register, %llu arm errors (last errno %d), "
			 "%llu still in flight at the end; %llu rounds with a context waiting for "
			 "a free entry, %llu for the bound of 64 per second (and 100 ms per "
			 "context); exact figure: %llu hit objects read alive (offered to its "
			 "reservoir), %llu hashed by their free hook (freed before the read), "
			 "%llu freed unhashed, %llu unreadable or larger "
			 "than 1 MiB; %llu sampled objects freed before they could be hashed, "
			 "%llu not hashed (their context's objects are hashed in the target)",
			 (unsigned long long)ts.published, (unsigned long long)ts.after_alloc,
			 (unsigned long long)ts.hits,
			 (unsigned long long)ts.calibrated, (unsigned long long)ts.withdrawn,
			 (unsigned long long)ts.expired, (unsigned long long)ts.dead,
			 (unsigned long long)ts.enospc, (unsigned long long)ts.failed, ts.last_err,
			 (unsigned long long)ts.left_in_flight, (unsigned long long)ts.table_full,
			 (unsigned long long)ts.rate_bound, (unsigned long long)ts.exact_hashed,
			 (unsigned long long)ts.exact_at_free, (unsigned long long)ts.exact_dead, (unsigned long long)ts.exact_fail,
			 (unsigned long long)st.exact_dead, (unsigned long long)st.exact_by_target);
		os_profile_add_note(p, note);
	}
	if (werr)
		os_warn("--replicas: %s", werr);
}

/* The counts of every attribution context, summed into the profile's
 * context it became (contexts equal once symbolized are one). */
static int obs_sections(void *self, const struct os_obs_build *b)
{
	struct rep_obs *o = self;
	const struct os_attrib *a = &b->c->attrib;

	for (uint32_t i = 0; i < a->nctx; i++) {
		struct os_replica r, *d;

		if (b->ctxmap[i] == OS_NONE || b->ctxmap[i] >= b->p->ncontexts)
			continue;
		d = &b->p->contexts[b->ctxmap[i]].replica;
		os_rep_counts(o->rep, i, &r);
		d->equivalent += r.equivalent;
		d->different += r.different;
		d->full_checks += r.full_checks;
		d->full_differ += r.full_differ;
		d->full_differ_match += r.full_differ_match;
		d->exact_objects += r.exact_objects;
		d->exact_twins += r.exact_twins;
		d->full_match += r.full_match;
	}
	return 0;
}

const struct os_observer_ops os_replica_observer = {
	.name = "replicas",
	.sample_data = REP_DATA,
	/* every round drained and applied while own watchpoints are armed:
	 * hits matched while their comparisons are young */
	.eager = true,
	.eager_now = obs_eager_now,
	.start = obs_start,
	.take = obs_take,
	.drained = obs_drained,
	.drained_raw = obs_drained_raw,
	.poll = obs_poll,
	.event = obs_event,
	.sample = obs_sample,
	.flush = obs_flush,
	.finish = obs_finish,
	.stop = obs_stop,
	.profile_notes = obs_notes,
	.profile_sections = obs_sections,
	.destroy = obs_destroy,
};
