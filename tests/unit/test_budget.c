/* Tests of the overhead budget's controller (attacher/core/budget.h) with
 * synthetic readings: a simulated target whose threads are sampled at
 * 1 kHz each while the sampling events are on, a kernel cost per sample,
 * and a collector with a cost per sample and a fixed cost per second. */
#include <criterion/criterion.h>
#include <string.h>

#include "attacher/core/budget.h"
#include "attacher/core/overhead.h"

#define TICK_NS 5000000ULL /* the collection loop's wake-up */
#define MS 1000000ULL

struct sim {
	unsigned threads;     /* busy threads of the target, one CPU each */
	double sample_ns;     /* the kernel's cost of a sample (as calibrated) */
	double coll_ns;       /* the collector's cost of a sample */
	double coll_fixed;    /* the collector's fixed cost, ns per ns */
	double drop_share;    /* share of the samples the kernel drops (JIT threads'):
			       * the collector never sees them */
	double drop_ns;       /* the kernel's cost of one of those (0: sample_ns) */
	uint64_t settle_from, settle_until; /* the answer settled in [from, until) of
					     * the run (ns from its start; 0: never) */
	/* results */
	struct os_budget b;
	struct os_budget_in in;
	uint64_t samples_first; /* in the first interval */
	double frac_on_first;
	double sw, sw2;         /* the samples' time weights: sum, sum of squares */
};

/* Runs the simulation for `ns`, from a fresh controller (budget frac). */
static void sim_run(struct sim *s, double frac, uint64_t ns)
{
	double samples = 0, coll = 0;
	uint64_t now = 1000 * MS, end = now + ns, on_first = 0;
	bool on;

	memset(&s->in, 0, sizeof(s->in));
	s->sw = s->sw2 = 0;
	os_budget_init(&s->b, frac, s->sample_ns, now);
	if (s->drop_ns > 0)
		os_budget_set_drop_ns(&s->b, s->drop_ns);
	on = s->b.on;
	while (now < end) {
		/* 1 kHz per thread while on */
		double n = on ? (double)s->threads * (double)TICK_NS / 1e6 : 0;

		if (n > 0) {
			double w = os_budget_time_weight(&s->b, now + TICK_NS / 2);

			s->sw += n * w;
			s->sw2 += n * w * w;
		}
		now += TICK_NS;
		samples += n;
		coll += s->coll_fixed * (double)TICK_NS + s->coll_ns * n * (1 - s->drop_share);
		s->in.target_cpu_ns += (uint64_t)s->threads * TICK_NS;
		s->in.samples = (uint64_t)samples;
		s->in.dropped = (uint64_t)(samples * s->drop_share);
		s->in.collector_cpu_ns = (uint64_t)coll;
		if (now - 1000 * MS <= OS_BUDGET_INTERVAL_NS) {
			s->samples_first = s->in.samples;
			on_first += on ? TICK_NS : 0;
		}
		if (s->settle_from)
			os_budget_set_need(&s->b, now - 1000 * MS >= s->settle_from &&
							  (!s->settle_until ||
							   now - 1000 * MS < s->settle_until)
							  ? 0.25
							  : 1);
		on = os_budget_tick(&s->b, now, &s->in);
	}
	s->frac_on_first = (double)on_first / (double)OS_BUDGET_INTERVAL_NS;
}

/* The cost spent as a share of the target's CPU. */
static double spent_share(const struct sim *s)
{
	return os_budget_spent_ns(&s->b) / (double)s->in.target_cpu_ns;
}

/* Samples per second of the run, after its first 10 s. */
static double rate_after(struct sim *s, double frac)
{
	uint64_t n10;

	sim_run(s, frac, 10000 * MS);
	n10 = s->in.samples;
	sim_run(s, frac, 40000 * MS);
	return (double)(s->in.samples - n10) / 30.0;
}

/* The budget is kept: what was spent over a minute is within it, and most
 * of it is used (the answers get the samples the budget pays for). */
Test(budget, keeps_the_share_it_is_given)
{
	struct sim s = { .threads = 2, .sample_ns = 8000, .coll_ns = 30000, .coll_fixed = 0.001 };

	sim_run(&s, 0.02, 60000 * MS);
	cr_assert_leq(spent_share(&s), 0.0205, "spent %.4f of a 0.02 budget", spent_share(&s));
	cr_assert_geq(spent_share(&s), 0.017, "spent %.4f: the budget left unused", spent_share(&s));
	cr_assert_lt(s.b.duty, 1.0, "steered: not sampled in full");
	cr_assert_gt(s.b.toggles, 100, "the events were switched");
	/* a larger budget buys more samples */
	{
		struct sim t = s;

		sim_run(&t, 0.03, 60000 * MS);
		cr_assert_gt(t.in.samples, s.in.samples * 1.3, "3%%: %lu samples, 2%%: %lu",
			     (unsigned long)t.in.samples, (unsigned long)s.in.samples);
	}
}

/* Samples the kernel drops (the JIT threads', by a BPF filter) are charged
 * at their own calibrated cost, not a kept sample's: the kernel's part of
 * what was spent is kept x sample_ns + dropped x drop_ns, the budget is
 * kept by that measure, and the same budget buys more samples than when
 * every sample is charged in full. */
Test(budget, dropped_samples_charged_at_their_cost)
{
	struct sim s = { .threads = 2, .sample_ns = 9000, .coll_ns = 6000, .coll_fixed = 0.001,
			 .drop_share = 0.5, .drop_ns = 2000 };
	struct sim full = s;
	struct os_budget_in in = { .samples = 10, .dropped = 4 };
	struct os_budget b;

	os_budget_init(&b, 0.02, 9000, 0);
	cr_assert_float_eq(os_budget_kernel_ns(&b, &in), 10 * 9000.0, 1e-6, "init: all at sample_ns");
	os_budget_set_drop_ns(&b, 2000);
	cr_assert_float_eq(os_budget_kernel_ns(&b, &in), 6 * 9000.0 + 4 * 2000.0, 1e-6);
	in.dropped = 20; /* more dropped than samples: all of them dropped */
	cr_assert_float_eq(os_budget_kernel_ns(&b, &in), 10 * 2000.0, 1e-6);

	/* in full, 1000/s per thread cost 0.85% of the target's CPU: a 0.5%
	 * budget steers both runs */
	sim_run(&s, 0.005, 60000 * MS);
	cr_assert_leq(spent_share(&s), 0.0052, "spent %.4f of a 0.005 budget", spent_share(&s));
	cr_assert_geq(spent_share(&s), 0.0042, "spent %.4f: the budget left unused", spent_share(&s));
	cr_assert_lt(s.b.duty, 1.0, "steered: not sampled in full");
	full.drop_ns = 0; /* every sample charged at sample_ns */
	sim_run(&full, 0.005, 60000 * MS);
	cr_assert_gt(s.in.samples, full.in.samples * 1.2,
		     "dropped at their cost: %lu samples, all charged in full: %lu",
		     (unsigned long)s.in.samples, (unsigned long)full.in.samples);
}

/* The first interval is sampled in full: a short command keeps its samples. */
Test(budget, first_interval_in_full)
{
	struct sim s = { .threads = 1, .sample_ns = 8000, .coll_ns = 30000 };

	sim_run(&s, 0.02, 300 * MS);
	cr_assert_geq(s.frac_on_first, 0.99, "first interval on %.2f", s.frac_on_first);
	cr_assert_geq(s.samples_first, 195, "first interval: %lu samples",
		      (unsigned long)s.samples_first);
}

/* Samples per second are a budget of the process: four times the threads
 * (four times the CPU, and four times the samples while on) give four
 * times the samples per second, not sixteen; per CPU-second of the target
 * the rate is the same. */
Test(budget, rate_is_per_process_cpu_not_per_thread_squared)
{
	struct sim a = { .threads = 2, .sample_ns = 8000, .coll_ns = 30000 };
	struct sim b = { .threads = 8, .sample_ns = 8000, .coll_ns = 30000 };
	double ra = rate_after(&a, 0.02), rb = rate_after(&b, 0.02);
	double per_cpu_a = ra / 2, per_cpu_b = rb / 8, expect = 0.02 / 38000e-9;

	cr_assert_float_eq(per_cpu_a, expect, expect * 0.1, "2 threads: %.0f/s per CPU", per_cpu_a);
	cr_assert_float_eq(per_cpu_b, expect, expect * 0.1, "8 threads: %.0f/s per CPU", per_cpu_b);
}

/* When the collector's fixed costs alone pass the budget, sampling goes
 * down to the floor, never to none. */
Test(budget, floor_when_fixed_costs_pass_the_budget)
{
	struct sim s = { .threads = 1, .sample_ns = 8000, .coll_ns = 30000, .coll_fixed = 0.05 };

	sim_run(&s, 0.02, 20000 * MS);
	cr_assert_float_eq(s.b.duty, OS_BUDGET_MIN_DUTY, 1e-9, "duty %.4f", s.b.duty);
	cr_assert_gt(spent_share(&s), 0.02, "overspent, as the report will say");
	cr_assert_gt(s.in.samples, 20000 * OS_BUDGET_MIN_DUTY * 0.8, "still sampled: %lu",
		     (unsigned long)s.in.samples);
}

/* Cheap samples and a large budget: sampled in full, no switching. */
Test(budget, in_full_when_the_budget_allows)
{
	struct sim s = { .threads = 2, .sample_ns = 100, .coll_ns = 100 };

	sim_run(&s, 0.03, 10000 * MS);
	cr_assert_float_eq(s.b.duty, 1.0, 1e-9);
	cr_assert_eq(s.b.toggles, 0);
	cr_assert_eq(os_budget_on_ns(&s.b, s.b.t0), s.b.t0 - s.b.start, "on the whole time");
}

/* The intervals are jittered: a program periodic at the interval is not
 * sampled at one phase only. */
Test(budget, intervals_jittered)
{
	struct sim s = { .threads = 2, .sample_ns = 8000, .coll_ns = 30000 };
	uint64_t lo = UINT64_MAX, hi = 0;
	struct os_budget_in in;

	sim_run(&s, 0.02, 5000 * MS);
	in = s.in;
	for (int i = 0; i < 50; i++) {
		uint64_t now = s.b.t0 + s.b.len, off;

		os_budget_tick(&s.b, now, &in);
		off = s.b.on_from - s.b.t0;
		lo = off < lo ? off : lo;
		hi = off > hi ? off : hi;
		cr_assert_geq(s.b.len, OS_BUDGET_INTERVAL_NS * 3 / 4);
		cr_assert_leq(s.b.len, OS_BUDGET_INTERVAL_NS * 5 / 4);
	}
	cr_assert_gt(hi - lo, 50 * MS, "sampled stretches start at %lu..%lu ns into the interval",
		     (unsigned long)lo, (unsigned long)hi);
}

/* Until the target has spent the warm-up's CPU, sampling stays in full
 * (short commands keep their answers, objscope's caches fill); what that
 * overspent is paid back afterwards. */
Test(budget, warm_up_in_full_then_paid_back)
{
	struct sim s = { .threads = 1, .sample_ns = 8000, .coll_ns = 30000 };

	sim_run(&s, 0.02, OS_BUDGET_WARMUP_CPU_NS - 100 * MS);
	cr_assert_float_eq(s.b.duty, 1.0, 1e-9, "steered during the warm-up");
	cr_assert_eq(s.b.toggles, 0);
	cr_assert_gt(spent_share(&s), 0.03, "the warm-up overspends: %.4f", spent_share(&s));
	sim_run(&s, 0.02, 60000 * MS);
	cr_assert_leq(spent_share(&s), 0.0205, "not paid back: %.4f", spent_share(&s));
}

/* Each sample is weighted by 1 / the sampled share of the interval it was
 * taken in (stretches sampled less are not under-represented):
 * the warm-up's intervals in full weigh 1, the steered ones 1 / duty, a
 * time before the remembered intervals the oldest one's weight. */
Test(budget, samples_weighted_by_their_intervals_share)
{
	struct sim s = { .threads = 1, .sample_ns = 8000, .coll_ns = 30000, .coll_fixed = 0.001 };
	uint32_t n, steered = 0;

	sim_run(&s, 0.02, 20000 * MS);
	n = s.b.nhist < OS_BUDGET_HIST ? s.b.nhist : OS_BUDGET_HIST;
	cr_assert_geq(s.b.nhist, 60u, "%u intervals in 20 s", s.b.nhist);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (s.b.nhist - 1 - k) % OS_BUDGET_HIST;
		uint64_t mid = s.b.hist[i].t0 + 1000; /* inside that interval */
		double w = os_budget_time_weight(&s.b, mid);

		cr_assert_gt(s.b.hist[i].duty, 0);
		cr_assert_float_eq(w, 1.0 / s.b.hist[i].duty, 1e-9, "interval %u: weight %f, duty %f",
				   k, w, s.b.hist[i].duty);
		steered += s.b.hist[i].duty < 1;
	}
	cr_assert_gt(steered, 0u, "after the warm-up the intervals are steered below 1");
	cr_assert_geq(s.b.min_duty, OS_BUDGET_MIN_DUTY);
	cr_assert_leq(s.b.min_duty, 0.5);
	/* before every remembered interval: the oldest one's weight */
	{
		uint32_t oldest = s.b.nhist % OS_BUDGET_HIST;

		cr_assert_float_eq(os_budget_time_weight(&s.b, 0), 1.0 / s.b.hist[oldest].duty, 1e-9);
	}
	/* a fresh controller: in full, weight 1 */
	os_budget_init(&s.b, 0.02, 8000, 1000 * MS);
	cr_assert_float_eq(os_budget_time_weight(&s.b, 1000 * MS + 5), 1.0, 1e-12);
	cr_assert_float_eq(os_budget_time_weight(&s.b, 5), 1.0, 1e-12);
}

/* The samples' weights stay even enough to be worth their number: after
 * the warm-up the overspend is paid back at half the steady share, not at
 * the floor, so a few samples of weight 40 do not carry a stretch of the
 * run. A javac-like run (2 busy threads, 97 us a sample in all, 30 s):
 * the effective number of samples (sum w)^2 / sum w^2 is 0.80 of the
 * samples taken (paid back at the floor: 0.51, smallest share 0.025). */
Test(budget, payback_keeps_the_weights_even)
{
	struct sim s = { .threads = 2, .sample_ns = 22000, .coll_ns = 75000, .coll_fixed = 0.001 };
	double neff, lo = 1;

	sim_run(&s, 0.02, 30000 * MS);
	neff = s.sw * s.sw / s.sw2;
	for (uint32_t k = 0; k < OS_BUDGET_HIST && k < s.b.nhist; k++)
		if (s.b.hist[k].duty < lo)
			lo = s.b.hist[k].duty;
	cr_log_info("samples %llu, effective %.0f (%.2f), smallest share %.3f, spent %.4f",
		    (unsigned long long)s.in.samples, neff, neff / (double)s.in.samples, s.b.min_duty,
		    spent_share(&s));
	cr_assert_geq(neff / (double)s.in.samples, 0.7, "effective %.0f of %llu samples", neff,
		      (unsigned long long)s.in.samples);
	cr_assert_gt(s.b.min_duty, 2 * OS_BUDGET_MIN_DUTY, "paid back above the floor: %.3f",
		     s.b.min_duty);
	cr_assert_leq(spent_share(&s), 0.0205, "paid back within 30 s: %.4f", spent_share(&s));
}

/* Settled answers (os_budget_set_need): from the moment the collector says
 * the answers need a quarter of the budget, a quarter is spent, and what
 * that leaves is not spent later while they stay settled; when they are
 * unsettled again the balance is spent as before. */
Test(budget, settled_answers_spend_a_share)
{
	struct sim s = { .threads = 2, .sample_ns = 8000, .coll_ns = 30000, .coll_fixed = 0.001,
			 .settle_from = 20000 * MS };
	struct sim all = s;
	double third;

	all.settle_from = 0;
	sim_run(&all, 0.02, 60000 * MS);
	sim_run(&s, 0.02, 60000 * MS);
	/* 20 s at the budget, 40 s at a quarter of it: ~0.0100 of the CPU */
	third = 0.02 / 3 + 0.25 * 0.02 * 2 / 3;
	cr_assert_leq(spent_share(&s), third * 1.15, "settled: spent %.4f, expected ~%.4f",
		      spent_share(&s), third);
	cr_assert_geq(spent_share(&s), third * 0.85, "settled: spent %.4f, expected ~%.4f",
		      spent_share(&s), third);
	cr_assert_geq(spent_share(&all), 0.017, "never settled: spent %.4f", spent_share(&all));
	cr_assert_lt(s.in.samples, all.in.samples * 0.6, "settled: %lu samples, never: %lu",
		     (unsigned long)s.in.samples, (unsigned long)all.in.samples);
	/* unsettled again at 40 s: the balance saved is spent from then on */
	s.settle_until = 40000 * MS;
	sim_run(&s, 0.02, 60000 * MS);
	cr_assert_geq(spent_share(&s), 0.015, "unsettled: the balance left unspent (%.4f)",
		      spent_share(&s));
	cr_assert_leq(spent_share(&s), 0.0205, "unsettled: over the budget (%.4f)", spent_share(&s));
}

/* The share asked for is clamped to (0, 1]: nonsense reads as "all". */
Test(budget, need_clamped)
{
	struct os_budget b;

	os_budget_init(&b, 0.02, 8000, 1000);
	cr_assert_float_eq(b.need, 1.0, 1e-12);
	os_budget_set_need(&b, 0.25);
	cr_assert_float_eq(b.need, 0.25, 1e-12);
	os_budget_set_need(&b, 0.001);
	cr_assert_float_eq(b.need, OS_BUDGET_MIN_NEED, 1e-12);
	os_budget_set_need(&b, 0);
	cr_assert_float_eq(b.need, 1.0, 1e-12);
	os_budget_set_need(&b, -1);
	cr_assert_float_eq(b.need, 1.0, 1e-12);
	os_budget_set_need(&b, 3);
	cr_assert_float_eq(b.need, 1.0, 1e-12);
	os_budget_set_need(&b, 0.0 / 0.0);
	cr_assert_float_eq(b.need, 1.0, 1e-12);
}

/* An answer settled during the warm-up ends it: from the next interval the
 * sampling is steered (a quarter of the budget, the warm-up's overspend
 * paid back) instead of on in full until the target's first 2 CPU-s. */
Test(budget, settled_answer_ends_the_warm_up)
{
	struct sim s = { .threads = 1, .sample_ns = 8000, .coll_ns = 30000,
			 .settle_from = 500 * MS };
	struct sim w = s;

	w.settle_from = 0;
	sim_run(&w, 0.02, OS_BUDGET_WARMUP_CPU_NS - 100 * MS);
	cr_assert_float_eq(w.b.duty, 1.0, 1e-9, "not settled: the warm-up in full");
	sim_run(&s, 0.02, OS_BUDGET_WARMUP_CPU_NS - 100 * MS);
	cr_assert_lt(s.b.duty, 0.5, "settled at 0.5 s: still in full (duty %.2f)", s.b.duty);
	cr_assert_lt(s.in.samples, w.in.samples * 0.6, "settled: %lu samples, in full: %lu",
		     (unsigned long)s.in.samples, (unsigned long)w.in.samples);
}

/* Whether an answer is settled (overhead.h os_overhead_answer_settled):
 * a standard error that hovers at the threshold keeps a settled answer
 * settled up to OS_OVH_UNSETTLE_SE, and settles an unsettled one only at
 * OS_OVH_SETTLE_SE; never before OS_OVH_SETTLE_MIN attributed samples,
 * never without an error to judge by. A series of errors around 0.01
 * flips 8 times without the margin and 3 times with it. */
Test(budget, settled_answer_has_a_margin)
{
	static const double se[] = { 0.02,   0.0098, 0.0104, 0.0097, 0.0112, 0.0099,
				     0.0121, 0.0130, 0.0108, 0.0095, 0.0103 };
	bool settled = false, plain = false;
	unsigned flips = 0, plain_flips = 0;

	cr_assert(OS_OVH_UNSETTLE_SE > OS_OVH_SETTLE_SE);
	cr_assert(os_overhead_answer_settled(OS_OVH_SETTLE_SE, OS_OVH_SETTLE_MIN, false, false));
	cr_assert_not(os_overhead_answer_settled(OS_OVH_SETTLE_SE * 1.01, 100000, false, false));
	cr_assert(os_overhead_answer_settled(OS_OVH_UNSETTLE_SE, 100000, true, false));
	cr_assert_not(os_overhead_answer_settled(OS_OVH_UNSETTLE_SE * 1.01, 100000, true, false));
	cr_assert_not(os_overhead_answer_settled(0.001, OS_OVH_SETTLE_MIN - 1, true, false));
	cr_assert_not(os_overhead_answer_settled(0.0 / 0.0, 100000, true, false));
	for (size_t i = 0; i < sizeof(se) / sizeof(se[0]); i++) {
		bool now = os_overhead_answer_settled(se[i], 1000, settled, false) != OS_UNSETTLED;
		bool p = se[i] <= OS_OVH_SETTLE_SE;

		flips += now != settled;
		plain_flips += p != plain;
		settled = now;
		plain = p;
	}
	cr_assert_eq(plain_flips, 8, "without the margin: %u flips", plain_flips);
	/* a ranking told apart settles with errors up to OS_OVH_APART_SE, and
	 * says so; not beyond, not before OS_OVH_SETTLE_MIN samples */
	cr_assert_eq(os_overhead_answer_settled(OS_OVH_APART_SE, 1000, false, true),
		     OS_SETTLED_APART);
	cr_assert_eq(os_overhead_answer_settled(OS_OVH_APART_SE * 1.01, 1000, false, true),
		     OS_UNSETTLED);
	cr_assert_eq(os_overhead_answer_settled(0.005, 1000, false, true), OS_SETTLED_NARROW);
	cr_assert_eq(os_overhead_answer_settled(0.001, OS_OVH_SETTLE_MIN - 1, false, true),
		     OS_UNSETTLED);
	cr_assert_eq(flips, 3, "with it: %u flips (settled at 0.0098, unsettled at 0.0130, "
			       "settled at 0.0095)", flips);
	cr_assert(settled, "settled at the end (0.0103 after 0.0095)");
}
