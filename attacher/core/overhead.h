/* overhead.h - the collector's side of the overhead budget:
 * the readings the controller (budget.h) steers by, the switching of the
 * sampling events, and the figures the profile reports (os_overhead in
 * common/profile.h, section OVERHEAD).
 *
 * Readings: the collector's CPU time spent reading and addressing samples
 * (its thread's CPU clock around steps 1-2 of each round: perf's rings,
 * side-band, decoding, unwinding: what the rate moves), the target's CPU
 * time (utime + stime of each of its processes in /proc, a process that
 * ended keeping its last reading, a reaped command by RUSAGE_CHILDREN),
 * and the samples read. The budget steers what sampling costs; objscope's
 * fixed costs (hooks' rings drained, runtime adapters, start-up: its whole
 * CPU by getrusage less the sampling work) do not move with the rate and
 * are reported beside it, not steered (a floor of samples would not bring
 * them down). The clocks are taken from the moment the sampling opens
 * (after the calibration, reported on its own).
 */
#ifndef OBJSCOPE_OVERHEAD_H
#define OBJSCOPE_OVERHEAD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attacher/core/budget.h"

/* The cost of a sample taken when calibration fails (ns): the software
 * sampler's with an 8 KiB stack copy as bench/ measured it on the
 * development VM (docs/BENCHMARKS.md). */
#define OS_OVH_SAMPLE_NS_FALLBACK 10000.0

/* Settled answers (budget.h os_budget_set_need): once the OS_OVH_SETTLE_K
 * contexts with the most samples all have a share whose standard error
 * (os_attrib_top_se) is at most OS_OVH_SETTLE_SE, from OS_OVH_SETTLE_MIN
 * attributed samples on, the budget is spent at OS_OVH_SETTLED_NEED of
 * itself, until the error rises above OS_OVH_UNSETTLE_SE. 0.01 is a quarter of
 * the agreement asked of the top objects' shares against a 1 kHz
 * run (0.05: two standard errors of each run's share, 0.02 each, with
 * room for the program's own run-to-run variation; docs/BENCHMARKS.md).
 * Not with --reuse or --replicas, whose evidence is taken at the samples,
 * nor with -F (a fixed rate). */
#define OS_OVH_SETTLE_SE 0.01
#define OS_OVH_SETTLE_K 10
#define OS_OVH_SETTLE_MIN 400
#define OS_OVH_SETTLED_NEED 0.25
/* A settled answer unsettles only above this: the largest standard error
 * of a top share hovers at OS_OVH_SETTLE_SE once there, and without a
 * margin about half of the decisions after the first settle went back to
 * the whole budget (javac, H2). 0.0125 keeps two standard errors at
 * 0.025, half the agreement asked (docs/BENCHMARKS.md "Java: answers
 * against a 1 kHz run"). */
#define OS_OVH_UNSETTLE_SE 0.0125

/* An answer whose ranking is told apart also settles: the 90% intervals
 * of the OS_OVH_APART_K largest figures (and the next) do not overlap
 * (os_attrib_top_settle), with the top shares' errors at most
 * OS_OVH_APART_SE (two of them inside the 0.05 agreement above). */
#define OS_OVH_APART_K 3
#define OS_OVH_APART_SE 0.02
/* The estimators of allocation paths run while recording at most this
 * often (os_attrib_estimate), for the intervals the rule reads. */
#define OS_OVH_ESTIMATE_NS 1000000000ULL

struct os_collector;
struct os_profile;

/* How an answer is settled at a decision (os_overhead_answer_settled). */
enum os_settled { OS_UNSETTLED = 0, OS_SETTLED_NARROW = 1, OS_SETTLED_APART = 2 };

/* A checkpoint's child reaped after ns of CPU (checkpoint.h): objscope's
 * cost (collector_cpu_s, fixed costs), taken out of RUSAGE_CHILDREN's
 * reading of a reaped command (the target's). */
void os_overhead_checkpoint(struct os_collector *c, uint64_t ns);

/* Whether the answer is settled at a decision: se, the largest standard
 * error of a top share (os_attrib_top_settle, NaN: none), is at most
 * OS_OVH_SETTLE_SE, or OS_OVH_UNSETTLE_SE when the last decision was
 * settled (narrow); or the top objects' intervals are apart (apart) and
 * se is at most OS_OVH_APART_SE; from OS_OVH_SETTLE_MIN attributed samples
 * on. */
enum os_settled os_overhead_answer_settled(double se, uint64_t attributed, bool was_settled,
					   bool apart);

struct os_ovh_proc {
	uint32_t pid;
	uint64_t cpu_ns; /* its last reading */
};

struct os_overhead_state {
	bool steer;               /* the budget steers the sampling (no -F) */
	bool calibrated;          /* sample_ns was measured here */
	double sample_ns;         /* the kernel's cost of one sample (estimate) */
	double drop_ns;           /* ... of one the JIT filter drops (estimate) */
	double calib_ns;          /* the calibration's CPU time (objscope's) */
	pid_t root;               /* the target's first process */
	uint64_t self0, target0;  /* the clocks when the sampling opened */
	uint64_t children0;       /* objscope's reaped children's CPU then */
	uint64_t ckpt_ns;         /* of those reaped since: checkpoints' (checkpoint.h),
				   * objscope's own CPU, not the target's */
	uint64_t next_read;       /* -F: the next readings */
	struct os_ovh_proc *procs;
	size_t nprocs, capprocs;
	struct os_budget b;
	bool final_read;
	uint64_t sample_work_ns;  /* collector CPU in steps 1-2 of its rounds */
	uint64_t self_total_ns;   /* objscope's whole CPU while sampling (at the stop) */
	uint64_t ticks0, mono0;   /* os_ticks() and CLOCK_MONOTONIC at the open ... */
	uint64_t ticks1, mono1;   /* ... and at the stop: the ticks' rate */
	uint64_t dropped;         /* samples dropped in the kernel, at the last readings */
	bool settle;              /* settled answers lower the spending (OS_OVH_SETTLE_*) */
	double answer_se;         /* os_attrib_top_settle at the last decision (NaN: none) */
	bool answer_apart;        /* ... and whether the top intervals were apart */
	int settled_by;           /* enum os_settled of the first settled decision */
	uint64_t estimated_at;    /* CLOCK_MONOTONIC of the last os_attrib_estimate */
	uint64_t settled_at;      /* CLOCK_MONOTONIC when the answer first settled, 0: never */
	uint64_t settled_ivals;   /* decisions taken with the answer settled */
	double settled_spent_ns;  /* the budget's measure spent in the intervals run
				   * settled (collector's sampling work + samples x
				   * sample_ns) ... */
	double settled_cpu_ns;    /* ... and the target's CPU in them */
	bool calib_pending;       /* the calibration waits for os_overhead_calibrate */
	struct perf_event_attr calib_attr; /* ... with the sampler's event as opened */
};

/* The calling thread's CPU clock (ns). */
uint64_t os_overhead_thread_ns(void);

/* After the sampler's events are open on pid (attr: how): calibrates and
 * starts the budget (--max-overhead), or only the readings (-F). With
 * `defer` the calibration waits for os_overhead_calibrate (record: the
 * command starts first, so a short one does not wait for it; until then
 * the budget counts a sample at OS_OVH_SAMPLE_NS_FALLBACK). */
void os_overhead_open(struct os_collector *c, pid_t pid, const struct perf_event_attr *attr,
		      bool defer);
/* The deferred calibration (nothing when none is pending). */
void os_overhead_calibrate(struct os_collector *c);
/* Each round: switches the sampling events as the budget says. */
void os_overhead_round(struct os_collector *c);
/* The weight of a sample taken at t (CLOCK_MONOTONIC ns) under the budget:
 * 1 / the sampled share of its interval (os_budget_time_weight); 1 with -F
 * or before the sampling opened. */
double os_overhead_time_weight(const struct os_collector *c, uint64_t t);
/* Sampling stops: the last readings. */
void os_overhead_stop(struct os_collector *c);
/* The figures into the profile (p->ovh, OS_AN_OVERHEAD). */
void os_overhead_profile(struct os_collector *c, struct os_profile *p);
void os_overhead_free(struct os_collector *c);

#endif
