/* overhead.c - readings, steering and figures of the overhead budget
 * (overhead.h). */
#include "attacher/core/overhead.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "attacher/core/collector.h"
#include "common/grow.h"
#include "common/log.h"

#define CALIB_PAGES 16

/* The calibration's ring: room for a few samples with their stack copies
 * (it is emptied after each bit of work), a power of two of pages. */
static unsigned calib_pages(const struct perf_event_attr *attr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t need = 4 * ((size_t)attr->sample_stack_user + 8192);
	unsigned n = CALIB_PAGES;

	while ((size_t)n * page < need)
		n *= 2;
	return n;
}

/* User + system CPU of getrusage's `who` (ns). */
static uint64_t rusage_ns(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static uint64_t self_cpu_ns(void)
{
	return rusage_ns(RUSAGE_SELF);
}

/* utime + stime of process pid (ns), false when it is gone. */
static bool proc_cpu_ns(uint32_t pid, uint64_t *ns)
{
	static long tick;
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	bool ok;

	if (!tick)
		tick = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	p = ok ? strrchr(buf, ')') : NULL; /* the name may hold spaces and parentheses */
	/* fields 3..13 after the name, then utime (14) and stime (15) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return false;
	*ns = (ut + st) * (1000000000ULL / (unsigned long long)tick);
	return true;
}

static void proc_read(struct os_overhead_state *o, uint32_t pid)
{
	uint64_t ns;
	size_t i;

	for (i = 0; i < o->nprocs && o->procs[i].pid != pid; i++)
		;
	if (i == o->nprocs) {
		struct os_ovh_proc *np = os_grow(o->procs, &o->capprocs, o->nprocs + 1,
						 sizeof(*np), 16);

		if (!np)
			return;
		o->procs = np;
		np[o->nprocs++] = (struct os_ovh_proc){ pid, 0 };
	}
	if (proc_cpu_ns(pid, &ns) && ns > o->procs[i].cpu_ns)
		o->procs[i].cpu_ns = ns;
}

/* The CPU time of objscope's children that were waited for (record: the
 * command, once reaped, and what it waited for). */
static uint64_t children_cpu_ns(void)
{
	return rusage_ns(RUSAGE_CHILDREN);
}

/* The target's CPU time: its processes, those gone at their last reading;
 * a command of ours that was reaped by its whole time (RUSAGE_CHILDREN). */
static uint64_t target_cpu_ns(struct os_collector *c)
{
	struct os_overhead_state *o = &c->ovh;
	uint64_t sum = 0, kids;

	if (o->root > 0)
		proc_read(o, (uint32_t)o->root);
	for (uint32_t i = 0; i < c->tasks.npids; i++)
		proc_read(o, c->tasks.pids[i]);
	for (size_t i = 0; i < o->nprocs; i++)
		sum += o->procs[i].cpu_ns;
	kids = children_cpu_ns() - o->children0;
	return kids > sum ? kids : sum;
}

uint64_t os_overhead_thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void readings(struct os_collector *c, struct os_budget_in *in)
{
	struct os_overhead_state *o = &c->ovh;
	uint64_t self = self_cpu_ns(), tgt = target_cpu_ns(c);

	o->self_total_ns = self > o->self0 ? self - o->self0 : 0;
	in->collector_cpu_ns = o->sample_work_ns;
	in->target_cpu_ns = tgt > o->target0 ? tgt - o->target0 : 0;
	/* the samples the JIT filter dropped cost the kernel its interrupt
	 * too: counted with the others (os_collector_jit_dropped) */
	o->dropped = os_collector_jit_dropped(c);
	in->samples = c->samples_total + o->dropped;
	in->dropped = o->dropped;
}

void os_overhead_open(struct os_collector *c, pid_t pid, const struct perf_event_attr *attr)
{
	struct os_overhead_state *o = &c->ovh;
	const char *settle = getenv("OBJSCOPE_SETTLE");
	uint64_t t = self_cpu_ns();

	o->root = pid;
	o->steer = c->opts->max_overhead > 0;
	o->settle = o->steer && !c->opts->reuse && !c->opts->replicas &&
		    !(settle && !strcmp(settle, "0"));
	o->answer_se = NAN;
	o->settled_at = 0;
	o->settled_by = OS_UNSETTLED;
	o->estimated_at = 0;
	o->answer_apart = false;
	o->settled_ivals = 0;
	o->settled_spent_ns = o->settled_cpu_ns = 0;
	o->sample_ns = o->drop_ns = NAN;
	if (o->steer) { /* -F: the kernel's cost is not estimated (nothing to steer) */
		o->sample_ns = os_perf_sample_cost_ns(attr, calib_pages(attr));
		o->calibrated = o->sample_ns >= 0;
		if (!o->calibrated)
			o->sample_ns = OS_OVH_SAMPLE_NS_FALLBACK;
		o->drop_ns = o->sample_ns;
		/* the JIT threads' samples a BPF filter drops cost the interrupt
		 * and the program, not the stack copy: measured apart (on javac
		 * they are half of the samples); never more than a kept one */
		if (o->calibrated && os_bpf_filter_on(&c->jitf)) {
			double d = os_perf_dropped_cost_ns(attr, calib_pages(attr));

			if (d >= 0)
				o->drop_ns = d < o->sample_ns ? d : o->sample_ns;
		}
		o->calib_ns = (double)(self_cpu_ns() - t);
		os_debug("overhead: a sample costs %.0f ns, one dropped by the JIT filter %.0f ns "
			 "(%s, %.1f ms)", o->sample_ns, o->drop_ns,
			 o->calibrated ? "calibrated" : "not calibrated: the constant",
			 o->calib_ns / 1e6);
	}
	o->ticks0 = os_ticks();
	o->mono0 = os_now_ns();
	o->self0 = self_cpu_ns();
	o->sample_work_ns = 0;
	o->children0 = children_cpu_ns();
	o->target0 = 0;
	o->target0 = target_cpu_ns(c);
	/* the processes' readings so far are the baseline: the sums from here */
	os_budget_init(&o->b, c->opts->max_overhead / 100.0, o->steer ? o->sample_ns : 0,
		       os_now_ns());
	if (o->steer)
		os_budget_set_drop_ns(&o->b, o->drop_ns);
}

enum os_settled os_overhead_answer_settled(double se, uint64_t attributed, bool was_settled,
					   bool apart)
{
	if (isnan(se) || attributed < OS_OVH_SETTLE_MIN)
		return OS_UNSETTLED;
	if (se <= (was_settled ? OS_OVH_UNSETTLE_SE : OS_OVH_SETTLE_SE))
		return OS_SETTLED_NARROW;
	return apart && se <= OS_OVH_APART_SE ? OS_SETTLED_APART : OS_UNSETTLED;
}

/* The share of the budget the answers still need (OS_OVH_SETTLE_*). */
static double answer_need(struct os_collector *c, uint64_t now)
{
	struct os_overhead_state *o = &c->ovh;
	enum os_settled how;

	if (o->settle && now >= o->estimated_at + OS_OVH_ESTIMATE_NS) {
		/* the figures and variances of the profile; and where the top
		 * answer lacks evidence, the class to expose more (a focus) */
		uint64_t focus = os_attrib_estimate(&c->attrib, now);

		if (c->shm.hdr)
			atomic_store_explicit(&c->shm.hdr->hs_focus_klass, focus,
					      memory_order_relaxed);
		o->estimated_at = now;
	}
	o->answer_se = os_attrib_top_settle(&c->attrib, OS_OVH_SETTLE_K, OS_OVH_APART_K, NULL,
					    &o->answer_apart);
	if (!o->settle)
		return 1;
	how = os_overhead_answer_settled(o->answer_se, c->attrib.c.samples_attributed,
					 o->b.need < 1, o->answer_apart);
	if (how == OS_UNSETTLED)
		return 1;
	if (!o->settled_at) {
		o->settled_at = now;
		o->settled_by = how;
	}
	o->settled_ivals++;
	return OS_OVH_SETTLED_NEED;
}

/* The interval that ends with the readings `in` ran settled (the need it
 * was decided with is below 1): its spending and the target's CPU, apart,
 * so the report can show what a settled stretch costs (warm-up and
 * unsettled stretches spend the whole budget, and a warm-up's overspend is
 * paid back, so the run's total alone does not show it). */
static void settled_spend(struct os_overhead_state *o, const struct os_budget_in *in)
{
	const struct os_budget_in *l = &o->b.last;

	if (!o->settle || !(o->b.need < 1))
		return;
	if (in->collector_cpu_ns >= l->collector_cpu_ns && in->samples >= l->samples)
		o->settled_spent_ns += (double)(in->collector_cpu_ns - l->collector_cpu_ns) +
				       os_budget_kernel_ns(&o->b, in) - os_budget_kernel_ns(&o->b, l);
	if (in->target_cpu_ns >= l->target_cpu_ns)
		o->settled_cpu_ns += (double)(in->target_cpu_ns - l->target_cpu_ns);
}

void os_overhead_round(struct os_collector *c)
{
	struct os_overhead_state *o = &c->ovh;
	struct os_budget_in in = o->b.now;
	uint64_t now;

	if (!c->perf_ready || o->final_read)
		return;
	now = os_now_ns();
	if (!o->steer) { /* -F: the readings only, for the figures */
		if (now >= o->next_read) {
			readings(c, &o->b.now);
			o->next_read = now + OS_BUDGET_INTERVAL_NS;
		}
		return;
	}
	in.samples = c->samples_total + o->dropped;
	in.dropped = o->dropped;
	if (now >= o->b.t0 + o->b.len) { /* the controller decides: fresh clocks */
		readings(c, &in);
		settled_spend(o, &in); /* before the need and b.last change */
		os_budget_set_need(&o->b, answer_need(c, now));
	}
	os_perf_steer(c->perf, os_budget_tick(&o->b, now, &in));
}

double os_overhead_time_weight(const struct os_collector *c, uint64_t t)
{
	return c->ovh.steer ? os_budget_time_weight(&c->ovh.b, t) : 1;
}

void os_overhead_stop(struct os_collector *c)
{
	struct os_overhead_state *o = &c->ovh;
	struct os_budget_in in;
	uint64_t now = os_now_ns();

	if (o->final_read || !c->perf_ready)
		return;
	readings(c, &in);
	if (o->steer)
		settled_spend(o, &in); /* the last, partial interval */
	o->ticks1 = os_ticks();
	o->mono1 = os_now_ns();
	o->b.now = in;
	if (o->b.on) { /* the stretch sampled up to now */
		o->b.on_ns += now - o->b.on_since;
		o->b.on_since = now;
	}
	o->final_read = true;
	o->b.t0 = now; /* the end, for the figures */
}

/* The time the target's threads spent inside objscope's recording hooks
 * (os_slot_stats.hook_*: light hooks by the TSC, clipped where preempted;
 * heavy ones by the thread's CPU clock). NaN when no ring was shared or
 * the ticks' rate could not be read. */
static double hooks_s(struct os_collector *c)
{
	const struct os_overhead_state *o = &c->ovh;
	struct os_slot_stats_total t;
	double per_ns = 1, light;

	if (!c->shm_ready)
		return NAN;
	os_shm_host_totals(&c->shm, &t);
	if (!OS_TICKS_ARE_NS) {
		if (o->mono1 <= o->mono0 + 1000000 || o->ticks1 <= o->ticks0)
			return NAN; /* under a millisecond: no rate */
		per_ns = (double)(o->ticks1 - o->ticks0) / (double)(o->mono1 - o->mono0);
	}
	light = (double)t.hook_ticks / per_ns / 1e9;
	os_debug("overhead: hooks in the target: %" PRIu64 " calls; light ones %.3f s "
		 "(%" PRIu64 " clipped at %u ticks: preempted inside), heavy ones %.3f s of CPU "
		 "(%.3f ticks/ns)", t.hook_calls, light, t.hook_clipped, OS_HOOK_CLIP_TICKS,
		 (double)t.hook_cpu_ns / 1e9, per_ns);
	return light + (double)t.hook_cpu_ns / 1e9;
}

void os_overhead_profile(struct os_collector *c, struct os_profile *p)
{
	struct os_overhead_state *o = &c->ovh;
	struct os_overhead *f = &p->ovh;
	double secs, tgt, coll, work, kern;

	if (!o->final_read)
		return;
	secs = (double)(o->b.t0 - o->b.start) / 1e9;
	tgt = (double)o->b.now.target_cpu_ns / 1e9;
	coll = (double)o->self_total_ns / 1e9;
	work = (double)o->b.now.collector_cpu_ns / 1e9;
	kern = isnan(o->sample_ns) ? NAN : os_budget_kernel_ns(&o->b, &o->b.now) / 1e9;
	memset(f, 0, sizeof(*f));
	f->max_pct = o->steer ? c->opts->max_overhead : NAN;
	f->target_cpu_s = tgt;
	f->collector_cpu_s = coll;
	f->collector_sampling_s = work;
	f->kernel_s = kern;
	f->hooks_s = hooks_s(c);
	f->spent_pct = tgt > 0 && !isnan(kern) ? 100.0 * (work + kern) / tgt : NAN;
	f->fixed_pct = tgt > 0 ? 100.0 * (coll > work ? coll - work : 0) / tgt : NAN;
	f->sample_ns = o->sample_ns;
	f->drop_ns = o->drop_ns;
	f->dropped_samples = o->steer ? (double)o->b.now.dropped : NAN;
	f->calibration_s = o->steer ? o->calib_ns / 1e9 : NAN;
	f->sampled_share = secs > 0 ? (double)o->b.on_ns / 1e9 / secs : NAN;
	if (!o->steer)
		f->sampled_share = 1;
	f->samples_per_s = secs > 0 ? (double)o->b.now.samples / secs : NAN;
	f->samples_per_cpu_s = tgt > 0 ? (double)o->b.now.samples / tgt : NAN;
	f->build_s = NAN; /* set when the build ends (profile_build.c) */
	f->settled_s = o->settle && o->settled_at ? (double)(o->settled_at - o->b.start) / 1e9 : NAN;
	f->settled_share = o->settle && o->b.intervals
				   ? (double)o->settled_ivals / (double)o->b.intervals : NAN;
	{
		bool apart;

		f->answer_se = os_attrib_top_settle(&c->attrib, OS_OVH_SETTLE_K, OS_OVH_APART_K,
						    NULL, &apart);
		f->answer_apart = isnan(f->answer_se) ? NAN : apart;
		/* the profile is built: a focus ends (the target runs on as it was) */
		if (c->shm.hdr)
			atomic_store_explicit(&c->shm.hdr->hs_focus_klass, 0, memory_order_relaxed);
	}
	f->settled_by = o->settle && o->settled_at ? (double)o->settled_by : NAN;
	f->settled_spent_pct = o->settle && o->settled_cpu_ns > 0
				       ? 100.0 * o->settled_spent_ns / o->settled_cpu_ns : NAN;
	f->calibrated = o->calibrated;
	f->steered = o->steer;
	p->analyses |= OS_AN_OVERHEAD;
}

void os_overhead_free(struct os_collector *c)
{
	free(c->ovh.procs);
	memset(&c->ovh, 0, sizeof(c->ovh));
}
