/* budget.c - the overhead budget's controller (budget.h). */
#include "attacher/core/budget.h"

#include <string.h>

#define SMOOTH 0.5    /* weight of the newest interval in the smoothed figures */
#define PAYBACK 0.25  /* share of the budget's balance spent or paid back per interval */
/* ... but an interval paying back keeps this share of what it would be
 * given with no balance: the samples are weighted by 1 / the share sampled
 * (os_budget_time_weight), and a payback at the floor would make a few
 * samples of weight 40 carry a stretch of the run (their variance); at
 * half the steady share the warm-up is paid back over about twice as long */
#define PAYBACK_KEEP 0.5

static double uniform(struct os_budget *b)
{
	b->rng = b->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(b->rng >> 11) / (double)(1ULL << 53);
}

static double smooth(double old, double v)
{
	return old > 0 ? old + SMOOTH * (v - old) : v;
}

static void hist_push(struct os_budget *b, uint64_t t0, double duty)
{
	uint32_t i = b->nhist++ % OS_BUDGET_HIST;

	b->hist[i].t0 = t0;
	b->hist[i].duty = duty;
	if (b->nhist == 1 || duty < b->min_duty)
		b->min_duty = duty;
}

double os_budget_time_weight(const struct os_budget *b, uint64_t t)
{
	uint32_t n = b->nhist < OS_BUDGET_HIST ? b->nhist : OS_BUDGET_HIST;
	double duty = 1;

	for (uint32_t k = 0; k < n; k++) { /* newest first */
		uint32_t i = (b->nhist - 1 - k) % OS_BUDGET_HIST;

		duty = b->hist[i].duty;
		if (b->hist[i].t0 <= t)
			break;
	}
	return duty > 0 ? 1.0 / duty : 1;
}

void os_budget_init(struct os_budget *b, double frac, double sample_ns, uint64_t now)
{
	memset(b, 0, sizeof(*b));
	b->frac = frac;
	b->need = 1;
	b->sample_ns = sample_ns;
	b->drop_ns = sample_ns;
	b->warmup_cpu_ns = OS_BUDGET_WARMUP_CPU_NS;
	b->on = true;
	b->duty = 1;
	b->start = b->t0 = b->on_since = now;
	b->len = OS_BUDGET_INTERVAL_NS;
	b->on_from = now;
	b->on_until = now + b->len;
	b->rng = now | 1;
	hist_push(b, now, 1);
}

void os_budget_set_need(struct os_budget *b, double need)
{
	b->need = need > 1 || !(need > 0) ? 1 : need < OS_BUDGET_MIN_NEED ? OS_BUDGET_MIN_NEED : need;
}

void os_budget_set_drop_ns(struct os_budget *b, double ns)
{
	if (ns >= 0)
		b->drop_ns = ns;
}

double os_budget_kernel_ns(const struct os_budget *b, const struct os_budget_in *in)
{
	uint64_t dropped = in->dropped < in->samples ? in->dropped : in->samples;

	return (double)(in->samples - dropped) * b->sample_ns + (double)dropped * b->drop_ns;
}

uint64_t os_budget_on_ns(const struct os_budget *b, uint64_t now)
{
	return b->on_ns + (b->on && now > b->on_since ? now - b->on_since : 0);
}

double os_budget_spent_ns(const struct os_budget *b)
{
	return (double)b->now.collector_cpu_ns + os_budget_kernel_ns(b, &b->now);
}

/* The next interval's duty from the one that ended at now. */
static void decide(struct os_budget *b, uint64_t now, const struct os_budget_in *in)
{
	uint64_t on = os_budget_on_ns(b, now), don = on - b->last_on_ns;
	uint64_t dn = in->samples - b->last.samples, elapsed = now - b->t0;
	double dcpu = (double)(in->target_cpu_ns - b->last.target_cpu_ns);
	double dcoll = (double)(in->collector_cpu_ns - b->last.collector_cpu_ns);
	double credit, allowed, base, per_sample, want, on_len;

	b->intervals++;
	if (dn && don)
		b->rate_on = smooth(b->rate_on, (double)dn / (double)don);
	if (dn) /* all the collector's time laid on the samples: its fixed
		 * costs too, so the figure the steering settles on keeps them in */
		b->coll_per_sample = smooth(b->coll_per_sample, dcoll / (double)dn);
	if (dn) /* the kernel's, as the interval mixed kept and dropped samples */
		b->kern_per_sample = smooth(b->kern_per_sample,
					    (os_budget_kernel_ns(b, in) - os_budget_kernel_ns(b, &b->last)) /
						    (double)dn);
	b->len = (uint64_t)((double)OS_BUDGET_INTERVAL_NS * (0.75 + 0.5 * uniform(b)));
	per_sample = (b->kern_per_sample > 0 ? b->kern_per_sample : b->sample_ns) + b->coll_per_sample;
	/* a settled answer (need < 1) ends the warm-up: it has its samples */
	if ((in->target_cpu_ns >= b->warmup_cpu_ns || b->need < 1) && in->samples && b->rate_on > 0 &&
	    per_sample > 0 && elapsed) {
		/* the balance since the start, and the next interval's share */
		credit = b->frac * (double)in->target_cpu_ns -
			 ((double)in->collector_cpu_ns + os_budget_kernel_ns(b, in));
		/* settled answers (need < 1): what they leave is not spent later */
		if (b->need < 1 && credit > 0)
			credit = 0;
		base = b->need * b->frac * dcpu / (double)elapsed * (double)b->len;
		allowed = base + PAYBACK * credit;
		if (allowed < PAYBACK_KEEP * base)
			allowed = PAYBACK_KEEP * base;
		want = allowed > 0 ? allowed / per_sample : 0; /* samples */
		on_len = want / b->rate_on;
		b->duty = on_len / (double)b->len;
		if (b->duty > 1)
			b->duty = 1;
		if (b->duty < OS_BUDGET_MIN_DUTY)
			b->duty = OS_BUDGET_MIN_DUTY;
	} /* else nothing sampled yet, or nothing known of the rate: as before */
	b->t0 = now;
	on_len = b->duty * (double)b->len;
	{
		/* the sampled stretch at a random place in the interval */
		uint64_t from = now + (uint64_t)(uniform(b) * ((double)b->len - on_len));

		b->on_from = b->duty >= 1 ? now : from;
		b->on_until = b->duty >= 1 ? now + b->len : from + (uint64_t)on_len;
	}
	b->last = *in;
	b->last_on_ns = on;
	hist_push(b, now, b->duty);
}

bool os_budget_tick(struct os_budget *b, uint64_t now, const struct os_budget_in *in)
{
	bool want;

	b->now = *in;
	if (now >= b->t0 + b->len)
		decide(b, now, in);
	want = now >= b->on_from && now < b->on_until;
	if (want != b->on) {
		if (b->on)
			b->on_ns += now - b->on_since;
		else
			b->on_since = now;
		b->on = want;
		b->toggles++;
	}
	return b->on;
}
