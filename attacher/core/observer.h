/* observer.h - analyses as observers of the collection loop.
 *
 * The collector (attacher/core/collector.c) reads samples and object
 * events, orders them and attributes samples to objects; everything an
 * analysis adds on top (time slices, replicas; later lifetimes, reuse
 * distance, NUMA) plugs in through one struct of optional callbacks. The
 * collector calls every enabled observer, in the order of the table in
 * attacher/analyses/analyses.c (os_observers_enabled: the one place that
 * maps options to observers), and names none of them.
 *
 * The stages of a round, and the callbacks at each (every one optional):
 *
 *  1. take      A sample is addressed (os_collector_round step 2) while the
 *               target still runs and holds the values it touched: an
 *               observer may read the target now (replicas: the accessed
 *               word) and keep up to `sample_data` bytes with the queued
 *               sample; they come back in `sample` (os_obs_sample.data).
 *  2. drained   An object event is read from the target's rings, before it
 *               is queued (it is applied later, in time order). The newest
 *               thing the collector knows of the target: a GC begin seen
 *               here says that content read for anything older is stale.
 *     drained_raw  Right after: the ring event as the target wrote it.
 *  3. poll      After the rings are drained, before the queue is applied:
 *               the observer's own sources (replicas: watchpoint hits).
 *               What it gathers it takes in time order itself, between the
 *               events and samples given to it (the times of step 4).
 *  4. event     Object events in time order, each BEFORE the live objects
 *               are changed by it (the object a free ends is still in its
 *               address space's index). GC begin and end, object moves and
 *               move batches come here too, by type (OS_EV_GC_BEGIN,
 *               OS_EV_GC_END, OS_EV_MOVE, OS_EV_MOVES; common/shm.h).
 *     applied   The same event AFTER the live objects were changed by it
 *               (an allocation is in the index now, if it is tracked).
 *     collected A runtime adapter applied a collection of a managed heap
 *               (during the GC end's application, between `event` and
 *               `applied`): the survivors' moves and generations
 *               (attrib.h os_gc_report); objects found dead are gone from
 *               the index already.
 *     sample    Addressed samples in time order, AFTER attribution, with
 *               the attributed context and access entry (or OS_NONE).
 *  5. flush     Everything up to `cutoff` has been given (UINT64_MAX on the
 *               final round).
 *     finish    After the final round's flush: nothing more comes.
 *
 * Besides the rounds: `stop` (os_collector_stop: sampling ends, the target
 * is about to be left: let go of it), `profile_notes` (os_collector_profile,
 * before symbolization: the profile's notes and analysis bits),
 * `profile_sections` (os_collector_profile, once the contexts, accesses and
 * threads are in the profile: per-context figures, own sections) and
 * `destroy`.
 *
 * Cadence: the collector drains the rings and applies the queue at most
 * every 20 ms (APPLY_EVERY_NS) unless an enabled observer sets `eager` and
 * its `eager_now` (if any) says yes: then on every round (replicas: while
 * the collector's own watchpoints are armed, a hit must be matched while its
 * comparison is young, and a thread seized by the ptrace route waits for
 * the poll).
 *
 * All callbacks run on the collector's thread (the main loop: ptrace
 * requires it). Return convention: 0 / -errno; err receives one line.
 */
#ifndef OBJSCOPE_OBSERVER_H
#define OBJSCOPE_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/profile.h"

struct os_collector;
struct os_gc_report;
struct os_obj_event;
struct os_event;
struct os_opts;

#define OS_OBS_MAX 8          /* observers enabled at once */
#define OS_OBS_SAMPLE_DATA 32 /* bytes per queued sample, all observers together */

struct os_perf_sample;

/* A sample being addressed (stage 1); the target is running. */
struct os_obs_take {
	pid_t pid;
	uint32_t tid;
	uint32_t asid;
	uint64_t ip;           /* sampled ip */
	uint64_t insn;         /* the accessing instruction: [insn, ip) */
	uint64_t addr;         /* data address as decoded */
	/* the sample as perf gave it: cpu, and from PMU samplers weight,
	 * data_src, phys_addr (ps->has says which) */
	const struct os_perf_sample *ps;
};

/* An addressed sample applied in time order (stage 4), after attribution. */
struct os_obs_sample {
	uint64_t time;         /* CLOCK_MONOTONIC ns */
	uint64_t since_ns;     /* from the start of the collection (0 if before) */
	uint32_t asid, pid, tid;
	uint64_t addr, sp;     /* data address as decoded; stack pointer */
	uint32_t access_node;  /* access path in the attribution's CCT */
	uint32_t ctx;          /* attributed context (os_attrib.ctx), OS_NONE: none */
	uint32_t acc;          /* ... and access entry (os_attrib.acc), OS_NONE: none */
	const void *data;      /* this observer's sample_data bytes from `take` */
};

/* What profile_sections gets: the profile being built and the maps from
 * the attribution's indices to the profile's (entries OS_NONE: none).
 * Threads: index i of c->tasks.threads is the profile's thread i. */
struct os_obs_build {
	struct os_collector *c;
	struct os_profile *p;
	const uint32_t *ctxmap; /* os_attrib.ctx index -> profile context */
	const uint32_t *accmap; /* os_attrib.acc index -> profile access */
};

struct os_observer_ops {
	const char *name;
	unsigned sample_data; /* bytes kept per queued sample (stage 1 -> 4) */
	bool eager;           /* drain and apply on every round */
	/* With `eager`: whether this round must be (NULL: always). Called
	 * before the round's drain; false lets the 20 ms cadence stand. */
	bool (*eager_now)(void *self);

	/* When the collector opens its events (os_collector_open*), once the
	 * sampler is decided: *self is the observer's state. */
	int (*start)(void **self, struct os_collector *c, char *err, size_t errlen);
	void (*take)(void *self, const struct os_obs_take *t, void *data);
	void (*drained)(void *self, const struct os_obj_event *ev, uint64_t time);
	/* Right after `drained`: the ring event as the target wrote it (its
	 * path words before any reduction; replicas: the target's site key) */
	void (*drained_raw)(void *self, const struct os_event *raw, const struct os_obj_event *ev);
	void (*poll)(void *self);
	void (*event)(void *self, const struct os_obj_event *ev, uint64_t time);
	void (*applied)(void *self, const struct os_obj_event *ev, uint64_t time);
	void (*collected)(void *self, const struct os_gc_report *r);
	void (*sample)(void *self, const struct os_obs_sample *s);
	void (*flush)(void *self, uint64_t cutoff);
	void (*finish)(void *self);
	void (*stop)(void *self);
	void (*profile_notes)(void *self, struct os_profile *p);
	/* 0, or -ENOMEM: the profile is given up */
	int (*profile_sections)(void *self, const struct os_obs_build *b);
	void (*destroy)(void *self);
};

/* An enabled observer in the collector. */
struct os_obs {
	const struct os_observer_ops *ops;
	void *self;
	unsigned data_off; /* its sample_data in the queued sample's data */
};

/* The registration table (attacher/analyses/analyses.c): the observers the
 * options enable, in the order they are called; returns how many (<= max).
 * pmu: the sampler finally chosen is a PMU sampler (os_sampler.pmu, after
 * any fallback of -e auto), which the data-source observer needs. */
size_t os_observers_enabled(const struct os_opts *o, bool pmu,
			    const struct os_observer_ops **out, size_t max);

#endif
