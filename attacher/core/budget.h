/* budget.h - the overhead budget (--max-overhead PCT).
 *
 * objscope's cost is kept to a share of what the target itself spends on
 * the CPU. What is spent is measured or estimated from measurements:
 *  - the collector's CPU time spent on the samples (reading, decoding,
 *    unwinding: its thread's CPU clock around that work; measured);
 *  - the kernel's cost of taking the samples: samples x the cost of one
 *    sample, calibrated on this machine at start (budget_calibrate in
 *    collector.c: the same event on a thread of objscope's, with and
 *    without sampling; an estimate);
 *  - the in-target hooks' time: not measured yet (reported as null).
 * The knob is the sampling event's duty: in each control interval
 * (OS_BUDGET_INTERVAL_NS, jittered by up to a quarter either way so a
 * periodic program is not sampled in step with it) the sampling events
 * are on for a share of the interval and off for the rest (os_perf_steer:
 * the kernel's ENABLE/DISABLE reaches the copies the target's threads and
 * children inherited, which a new sampling period does not). The rate
 * asked for is therefore a number of samples per second for the whole
 * process, whatever its number of threads: the budget divided by the cost
 * of one sample (kernel + collector, measured), times the target's CPU.
 *
 * Warm-up: until the target has spent OS_BUDGET_WARMUP_CPU_NS of CPU the
 * sampling stays on in full (1000 samples/s per thread, the rate before
 * the budget): a short command keeps the samples its answer needs, and
 * objscope's own warm-up (decoded instructions, CFI, symbols, JIT code
 * are cached as they are first met: the first samples of a JVM cost the
 * collector ~10x the later ones) is paid there. From then on the sampling
 * is steered so that the cost since the start stays inside the budget:
 * the warm-up's overspend is paid back over the next intervals, down to a
 * floor (OS_BUDGET_MIN_DUTY: never no samples at all).
 *
 * Settled answers: the collector tells the controller what share of the
 * budget the answers still need (os_budget_set_need, from the standard
 * errors of the top objects' shares: overhead.c). Below 1 the intervals
 * are given that share of the steady budget, and what that leaves unspent
 * is not spent later while it stays below 1 (an overspend is still paid
 * back); back at 1 the balance is spent as before. A settled answer also
 * ends the warm-up early: it has the samples the warm-up is there for. A program whose answer
 * has settled then costs a fraction of the budget, and the samples taken
 * at the lower rate keep their time weights, so the shares stay unbiased.
 *
 * Pure logic over the readings it is given (unit-tested with synthetic
 * input: tests/unit/test_budget.c); the collector reads the clocks.
 */
#ifndef OBJSCOPE_BUDGET_H
#define OBJSCOPE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define OS_BUDGET_INTERVAL_NS 200000000ULL /* control interval, before jitter */
#define OS_BUDGET_MIN_DUTY 0.025           /* one 5 ms loop tick of 200 ms */
#define OS_BUDGET_DEFAULT_PCT 2.0          /* --max-overhead default (docs/BENCHMARKS.md) */
#define OS_BUDGET_WARMUP_CPU_NS 2000000000ULL /* the target's first 2 CPU-s in full */
#define OS_BUDGET_MIN_NEED 0.05            /* os_budget_set_need's floor */
#define OS_BUDGET_HIST 64                  /* intervals remembered for the samples' weights */

/* Cumulative readings since the start (ns, samples). */
struct os_budget_in {
	uint64_t target_cpu_ns;    /* the target's CPU time (its processes) */
	uint64_t collector_cpu_ns; /* the collector's CPU on the samples (overhead.h) */
	uint64_t samples;          /* samples read, and those dropped in the kernel */
	uint64_t dropped;          /* of them: dropped in the kernel (bpf_filter.h) */
};

struct os_budget {
	double frac;               /* the budget: share of the target's CPU */
	double sample_ns;          /* the kernel's cost of one sample (calibrated) */
	double drop_ns;            /* ... of one it drops (a BPF filter's; init: sample_ns) */
	uint64_t warmup_cpu_ns;    /* in full until the target spent this (init: the default) */
	/* state */
	bool on;                   /* sampling events on now */
	double duty;               /* share of the current interval sampled */
	uint64_t start, t0, len;   /* start; current interval: [t0, t0 + len) */
	uint64_t on_from, on_until; /* this interval is sampled in [on_from, on_until) */
	uint64_t on_ns;            /* time sampled, all intervals */
	uint64_t on_since;         /* when the events were last switched on */
	struct os_budget_in last;  /* readings at the start of the interval */
	uint64_t last_on_ns;       /* on_ns at the start of the interval */
	double coll_per_sample;    /* the collector's ns per sample (smoothed), 0: unknown */
	double kern_per_sample;    /* the kernel's ns per sample, the mix of kept and
				    * dropped ones (smoothed), 0: unknown */
	double rate_on;            /* samples per ns while on (smoothed), 0: unknown */
	uint64_t rng;              /* jitter */
	uint64_t intervals, toggles;
	struct os_budget_in now;   /* latest readings */
	/* the last OS_BUDGET_HIST intervals: start and sampled share, for the
	 * weights of the samples taken in them (os_budget_time_weight) */
	struct { uint64_t t0; double duty; } hist[OS_BUDGET_HIST];
	uint32_t nhist;            /* intervals begun (hist is a ring) */
	double min_duty;           /* the smallest share an interval was given */
	double need;               /* share of the budget the answers still need (1: all) */
};

/* frac: the budget (0.02 for 2%); sample_ns: the calibrated cost of a
 * sample; now: CLOCK_MONOTONIC ns. Sampling starts on. */
void os_budget_init(struct os_budget *b, double frac, double sample_ns, uint64_t now);
/* Called on each loop round with the cumulative readings; returns whether
 * the sampling events should be on now. At an interval's end the next
 * duty is decided from the readings. */
bool os_budget_tick(struct os_budget *b, uint64_t now, const struct os_budget_in *in);
/* The share of the budget the answers still need, in (0, 1] (1 at init;
 * other values are clamped): taken at the next interval's decision. */
void os_budget_set_need(struct os_budget *b, double need);
/* The calibrated cost of a sample the kernel drops (a BPF filter's, e.g.
 * a JIT compiler thread's: no stack copy, no record); ns >= 0. */
void os_budget_set_drop_ns(struct os_budget *b, double ns);
/* The kernel's estimated cost of the samples in `in` (ns): kept ones at
 * sample_ns, dropped ones at drop_ns. */
double os_budget_kernel_ns(const struct os_budget *b, const struct os_budget_in *in);
/* The cost spent so far, estimated: collector + samples x sample_ns (ns). */
double os_budget_spent_ns(const struct os_budget *b);
/* The weight of a sample taken at t (CLOCK_MONOTONIC ns): 1 / the share
 * of its interval that was sampled, so that a stretch sampled at a fifth of
 * the time counts as much as one sampled in full (the warm-up's, the
 * payback's and the steady intervals' samples are then of one scale).
 * A time before the intervals remembered: the oldest one's. */
double os_budget_time_weight(const struct os_budget *b, uint64_t t);
/* The time sampled so far (ns), the current on-stretch included. */
uint64_t os_budget_on_ns(const struct os_budget *b, uint64_t now);

#endif
