/* replica_collector.c - the replica engine's hooks in the collection loop
 * (attacher/core/collector.c calls these when --replicas is on) and its part of
 * the profile (counts per context, notes). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attacher/core/collector.h"
#include "attacher/analyses/replica.h"
#include "common/log.h"

/* Backend check: O1 is still the object the comparison was made with. */
static bool obj_alive(void *arg, uint32_t asid, uint64_t lo, uint64_t hi, uint32_t ctx)
{
	struct os_collector *c = arg;
	struct os_aspace *as = os_tasks_get(&c->tasks, asid);
	uint64_t s, e, v;

	return as && as->objects && os_iv_lookup(as->objects, lo, &s, &e, &v) && s == lo &&
	       e == hi && os_val_ctx(v) == ctx; /* weight bits above the context */
}

int os_replica_start(struct os_collector *c, char *err, size_t errlen)
{
	struct os_rep_backend be;
	struct os_rep_cfg cfg;

	c->repw = os_rep_watch_new((enum watch_route)c->opts->watch_route);
	if (!c->repw) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	os_rep_watch_backend(c->repw, &be);
	be.alive = obj_alive;
	be.alive_arg = c;
	os_rep_cfg_default(&cfg);
	c->rep = os_rep_new(&cfg, &be);
	if (!c->rep) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void os_replica_take(struct os_collector *c, pid_t pid, uint32_t asid, uint64_t ip,
		     uint64_t insn, uint64_t addr, uint8_t *width, bool *ok, uint64_t *word8)
{
	*ok = os_rep_read_access(c->rep, pid, asid, insn, ip, addr, width, word8);
}

void os_replica_drained(struct os_collector *c, const struct os_obj_event *oe, uint64_t time)
{
	if (oe->type == OS_EV_GC_BEGIN)
		os_rep_gc_seen(c->rep, oe->asid, time);
}

void os_replica_event(struct os_collector *c, const struct os_obj_event *ev, uint64_t time)
{
	struct os_aspace *as = os_tasks_get(&c->tasks, ev->asid);
	uint64_t lo = ev->addr, hi = 0;

	if (!as || !as->objects)
		return;
	switch (ev->type) {
	case OS_EV_GC_BEGIN:
		os_rep_event(c->rep, time, ev->asid, 0, 0, true);
		return;
	case OS_EV_REALLOC:
	case OS_EV_FREE:
		if (ev->type == OS_EV_REALLOC)
			lo = ev->aux; /* the old block */
		if (!os_iv_lookup(as->objects, lo, NULL, &hi, NULL))
			hi = lo + 1;
		os_rep_free_object(c->rep, time, ev->asid, lo, hi);
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
	os_rep_event(c->rep, time, ev->asid, lo, hi, false);
}

void os_replica_sample(struct os_collector *c, uint64_t time, uint32_t asid, uint64_t addr,
		       uint32_t tid, uint8_t width, bool ok, uint64_t word8)
{
	struct os_aspace *as = os_tasks_get(&c->tasks, asid);
	struct os_runtime *rt = c->attrib.rt;
	struct os_rep_sample s;
	uint64_t ci, canon = addr;

	if (!as || !as->objects)
		return;
	if (rt && rt->ops->sample_addr)
		canon = rt->ops->sample_addr(rt, asid, addr);
	memset(&s, 0, sizeof(s));
	if (!os_iv_lookup(as->objects, canon, &s.lo, &s.hi, &ci))
		return;
	s.time = time;
	s.pid = (pid_t)as->pid;
	s.tid = (pid_t)tid;
	s.asid = asid;
	s.ctx = os_val_ctx(ci);
	s.addr = canon;
	s.width = width;
	s.value_ok = ok && canon == addr; /* colored (ZGC) addresses: value of addr */
	s.word8 = word8;
	s.java = rt && rt->ops->in_heap && rt->ops->in_heap(rt, asid, canon);
	os_rep_sample(c->rep, &s);
}

void os_replica_poll(struct os_collector *c)
{
	os_rep_poll(c->rep);
}

void os_replica_flush(struct os_collector *c, uint64_t cutoff)
{
	os_rep_flush(c->rep, cutoff);
}

void os_replica_stop(struct os_collector *c)
{
	os_rep_stop(c->rep);
}

void os_replica_finish(struct os_collector *c)
{
	os_rep_finish(c->rep);
}

void os_replica_destroy(struct os_collector *c)
{
	os_rep_free(c->rep);
	c->rep = NULL;
	os_rep_watch_free(c->repw); /* watch_close: on the main thread, as here */
	c->repw = NULL;
}

void os_replica_profile(struct os_collector *c, struct os_profile *p)
{
	struct os_rep_stats st;
	struct watch_stats ws;
	const char *werr = NULL;
	char note[768];

	p->analyses |= OS_AN_REPLICAS;
	os_rep_get_stats(c->rep, &st);
	os_rep_watch_stats(c->repw, &ws, &werr);
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
		 "%llu offered after it",
		 (unsigned long long)st.not_chosen, (unsigned long long)st.replaced,
		 (unsigned long long)st.enospc, (unsigned long long)st.thread_gone,
		 (unsigned long long)st.arm_errors, (unsigned long long)st.expired,
		 (unsigned long long)st.invalidated, (unsigned long long)st.hit_unknown,
		 (unsigned long long)st.hit_no_value, (unsigned long long)st.gc_window,
		 (unsigned long long)st.no_value, (unsigned long long)st.no_ref,
		 (unsigned long long)st.width_differs, (unsigned long long)st.stopped,
		 (unsigned long long)st.after_stop);
	os_profile_add_note(p, note);
	snprintf(note, sizeof(note),
		 "replicas checks: whole-content comparisons (alpha) %llu skipped by the rate "
		 "bound, %llu first object gone, %llu unreadable; exact figure: %llu objects "
		 "hashed, %llu replaced and %llu not taken by the per-context reservoir, %llu "
		 "unreadable or larger than 1 MiB",
		 (unsigned long long)st.full_rate_skipped, (unsigned long long)st.full_skipped_gone,
		 (unsigned long long)st.full_read_fail, (unsigned long long)st.exact_hashed,
		 (unsigned long long)st.exact_replaced, (unsigned long long)st.exact_not_chosen,
		 (unsigned long long)st.exact_read_fail);
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
	if (werr)
		os_warn("--replicas: %s", werr);
}

void os_replica_counts(struct os_collector *c, uint32_t ctx, struct os_replica *out)
{
	os_rep_counts(c->rep, ctx, out);
}
