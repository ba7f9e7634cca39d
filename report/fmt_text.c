/* fmt_text.c - the default text report, in the spirit of `perf report`:
 * a header saying what was measured and how well, then the objects ranked by
 * access samples, each with its allocation path and its top access paths. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/lifetime_math.h"
#include "common/reuse_math.h"
#include "common/replica_math.h"
#include "report/formats.h"
#include "report/text_escape.h"

/* Below this much CPU time of the target, its overhead figures are not
 * shown: a few ms weighed against objscope's start-up say nothing. */
#define OVERHEAD_MIN_CPU_S 0.1

#define MAX_FRAME 1024
#define ALLOC_FRAMES 8    /* allocation frames shown per object */
#define ACCESS_PATHS 5    /* access paths shown per object */
#define ACCESS_FRAMES 4   /* frames shown per access path */
#define THREADS_SHOWN 10
#define PIDS_SHOWN 8

static void human_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

static bool needs_escapes(const unsigned char *s)
{
	return report_needs_escapes((const char *)s);
}

/* A command argument, quoted as a shell would need it, so that the command
 * line stays on one line and shows every byte: plain ones as they are,
 * others in '...', and those with control characters or bytes that are not
 * printable UTF-8 in bash's $'...' with \n, \t, \xNN (as `ls` and GNU
 * quoting do). */
static void print_arg(const char *arg, const char *sep, FILE *out)
{
	static const char esc[] = "\a\b\t\n\v\f\r\x1b", name[] = "abtnvfre";
	const unsigned char *c;
	const char *e;
	size_t n;

	if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789-_+=/.,:@%") == strlen(arg)) {
		fprintf(out, "%s%s", sep, arg);
		return;
	}
	if (!needs_escapes((const unsigned char *)arg)) {
		fprintf(out, "%s'", sep);
		for (c = (const unsigned char *)arg; *c; c++) {
			if (*c == '\'')
				fputs("'\\''", out);
			else
				fputc(*c, out);
		}
		fputc('\'', out);
		return;
	}
	fprintf(out, "%s$'", sep);
	for (c = (const unsigned char *)arg; *c;) {
		if (*c == '\'' || *c == '\\') {
			fprintf(out, "\\%c", *c++);
		} else if (*c >= 0x20 && *c < 0x7f) {
			fputc(*c++, out);
		} else if (*c < 0x80 && (e = memchr(esc, *c, sizeof(esc) - 1))) {
			fprintf(out, "\\%c", name[e - esc]);
			c++;
		} else if (*c >= 0x80 && (n = report_utf8_len(c))) {
			fwrite(c, 1, n, out);
			c += n;
		} else {
			fprintf(out, "\\x%02x", *c++);
		}
	}
	fputc('\'', out);
}

/* Free text from the profile (host name, notes, thread names, frames,
 * types), escaped (report/text_escape.h). */
static void print_text(const char *text, FILE *out)
{
	report_put_text(text, out);
}

static double pct(uint64_t part, uint64_t whole)
{
	return 100.0 * report_ratio(part, whole);
}

/* The short header's line on what was lost: the non-zero loss counters
 * (a profile that lost nothing prints no line), so that nothing is lost
 * silently even without -v. */
static void print_lost(const struct os_counters *c, FILE *out)
{
	const char *sep = "";
	bool outside = os_counters_outside_tlab_many(c);

	if (!c->lost && !c->dropped_events && !c->bad_events && !c->truncated_paths && !outside)
		return;
	fputs("# lost:        ", out);
	if (c->lost) {
		fprintf(out, "%" PRIu64 " sample%s lost", c->lost, c->lost == 1 ? "" : "s");
		sep = ", ";
	}
	if (c->dropped_events) {
		fprintf(out, "%s%" PRIu64 " allocation event%s dropped", sep, c->dropped_events,
			c->dropped_events == 1 ? "" : "s");
		sep = ", ";
	}
	if (c->bad_events) {
		fprintf(out, "%s%" PRIu64 " malformed event%s", sep, c->bad_events,
			c->bad_events == 1 ? "" : "s");
		sep = ", ";
	}
	if (c->truncated_paths) {
		fprintf(out, "%s%" PRIu64 " allocation path%s cut at the frame limit", sep,
			c->truncated_paths, c->truncated_paths == 1 ? "" : "s");
		sep = ", ";
	}
	if (outside)
		fprintf(out, "%s%" PRIu64 " small Java allocations outside TLABs, never sampled "
			     "(-v: the notes say why)", sep, c->small_outside_tlab);
	fputc('\n', out);
}

static void print_pids(const struct os_meta *m, FILE *out)
{
	uint32_t i;

	fprintf(out, "# pids:        ");
	for (i = 0; i < m->npids && i < PIDS_SHOWN; i++)
		fprintf(out, "%s%" PRIu32, i ? ", " : "", m->pids[i]);
	if (m->npids > PIDS_SHOWN)
		fprintf(out, ", ... (%" PRIu32 " processes)", m->npids);
	fprintf(out, "%s\n", m->npids ? "" : "(none)");
}

/* Duration, where and when; the sampler, its event and period or rate. */
static void print_run(const struct os_profile *p, FILE *out)
{
	const struct os_meta *m = &p->meta;

	fprintf(out, "# duration:    %.2f s", m->duration_s);
	if (m->mode != OS_NONE) {
		fputs(" (", out);
		print_text(report_str(p, m->mode), out);
		fputc(')', out);
	}
	if (m->hostname != OS_NONE) {
		fputs(" on ", out);
		print_text(report_str(p, m->hostname), out);
	}
	if (m->start_time) {
		time_t t = (time_t)m->start_time;
		struct tm tm;
		char when[32];

		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
			fprintf(out, ", started %s", when);
	}
	fprintf(out, "\n");
	fputs("# sampler:     ", out);
	print_text(m->sampler != OS_NONE ? report_str(p, m->sampler) : "(unknown)", out);
	fputs(", event ", out);
	print_text(m->event != OS_NONE ? report_str(p, m->event) : "(unknown)", out);
	if (m->period)
		fprintf(out, ", period %" PRIu64, m->period);
	if (m->freq && !(p->analyses & OS_AN_OVERHEAD && p->ovh.steered))
		fprintf(out, ", %" PRIu64 " samples/s per thread requested", m->freq);
	fprintf(out, "\n");
	if ((p->analyses & OS_AN_OVERHEAD) && !(p->ovh.target_cpu_s >= OVERHEAD_MIN_CPU_S)) {
		/* a run that failed at once, or an idle target: the fixed costs
		 * over a few ms of CPU are no measurement of anything */
		fprintf(out, "# overhead:    not measured: the target ran %.0f ms of CPU, too little "
			"to weigh objscope's costs against\n", 1000 * p->ovh.target_cpu_s);
	} else if (p->analyses & OS_AN_OVERHEAD) {
		const struct os_overhead *o = &p->ovh;

		if (o->steered)
			fprintf(out, "# overhead:    sampling budget %.1f%% of the target's CPU, spent "
				"~%.1f%% (estimated), %.0f samples/s (%.0f%% of the time sampled); "
				"fixed costs %.1f%%",
				o->max_pct, o->spent_pct, o->samples_per_s, 100 * o->sampled_share,
				o->fixed_pct);
		else
			fprintf(out, "# overhead:    fixed rate (-F): the collector spent %.1f%% of the "
				"target's CPU on samples, %.1f%% fixed; %.0f samples/s",
				100 * o->collector_sampling_s /
					(o->target_cpu_s > 0 ? o->target_cpu_s : 1),
				o->fixed_pct, o->samples_per_s);
		if (isfinite(o->hooks_s) && o->target_cpu_s > 0)
			fprintf(out, "; hooks in the target %.1f%%",
				100 * o->hooks_s / o->target_cpu_s);
		if (isfinite(o->build_s) && o->target_cpu_s > 0)
			fprintf(out, "; building this profile %.1f%%",
				100 * o->build_s / o->target_cpu_s);
		fprintf(out, "\n");
		if (o->steered && isfinite(o->settled_s))
			fprintf(out, "# settled:     the top objects' shares settled after %.1f s "
				"(%s): the budget was then spent at a quarter, "
				"%.0f%% of the time (spent %.2f%% there, estimated); standard error at "
				"the end ~%.3f (estimated)%s\n",
				o->settled_s,
				o->settled_by == 2 ? "their 90% intervals apart: the ranking told apart"
						   : "standard error <= 0.01",
				100 * o->settled_share, o->settled_spent_pct, o->answer_se,
				o->answer_apart == 0 ? "; the top intervals overlapped at the end" : "");
		else if (o->steered && isfinite(o->settled_share) && isfinite(o->answer_se))
			fprintf(out, "# settled:     no: the top objects' shares had a standard error of "
				"~%.3f at the end (estimated)%s; the whole budget was spent\n",
				o->answer_se,
				o->answer_apart == 0 ? " and their 90% intervals overlapped" : "");
	}
}

/* The header: command, duration, sampler, samples attributed and what was
 * lost (answer first); -v adds the pids, the sample breakdown, allocations,
 * GC and the notes (a Java profile has 7 notes of up to 600 characters,
 * which pushed the first object below a screen). */
static void print_header(const struct os_profile *p, bool verbose, FILE *out)
{
	const struct os_meta *m = &p->meta;
	const struct os_counters *c = &p->c;
	char b1[32], b2[32];
	uint32_t i;

	fprintf(out, "# objscope report\n");
	if (p->unfinished)
		fprintf(out, "# UNFINISHED:  a checkpoint written while recording: objscope ended "
			     "before its final profile (killed?); the run's last seconds are "
			     "missing\n");
	fprintf(out, "# command:     ");
	for (i = 0; i < m->argc; i++)
		print_arg(report_str(p, m->argv[i]), i ? " " : "", out);
	fprintf(out, "%s\n", m->argc ? "" : "(unknown)");
	if (verbose)
		print_pids(m, out);
	print_run(p, out);
	if (!verbose) {
		uint32_t notes = m->nnotes + (report_has_est(p) ? 1 : 0) +
				 ((p->analyses & OS_AN_PATHEST) ? 1 : 0);

		fprintf(out, "# samples:     %" PRIu64 " of %" PRIu64
			     " attributed to objects (%.1f%%)",
			c->samples_attributed, c->samples_total,
			pct(c->samples_attributed, c->samples_total));
		if (report_has_est(p))
			fprintf(out, "; %.0f estimated (%s), which rank the objects",
				p->est.samples_attributed, REPORT_EST_KIND(p));
		fputc('\n', out);
		print_lost(c, out);
		fputs("# -v shows ", out);
		if (notes)
			fprintf(out, "%" PRIu32 " note%s, ", notes, notes == 1 ? "" : "s");
		fputs("the pids, the sample breakdown, allocations and GC\n", out);
		return;
	}
	fprintf(out, "# samples:     %" PRIu64 " taken, %" PRIu64 " with a data address (%.1f%%),\n",
		c->samples_total, c->samples_addressed, pct(c->samples_addressed, c->samples_total));
	fprintf(out, "#              %" PRIu64 " in a tracked heap (%.1f%%), %" PRIu64
		     " attributed to objects (%.1f%%)\n",
		c->samples_heap, pct(c->samples_heap, c->samples_total), c->samples_attributed,
		pct(c->samples_attributed, c->samples_total));
	if (c->samples_java_heap)
		fprintf(out, "#              of which %" PRIu64 " in the Java heap, %" PRIu64
			     " attributed to Java objects (%.1f%% of Java-heap samples)\n",
			c->samples_java_heap, c->samples_java_attributed,
			pct(c->samples_java_attributed, c->samples_java_heap));
	if (report_has_est(p) && c->samples_java_heap)
		fprintf(out, "#              estimated (%s): %.0f attributed to objects, "
			     "%.0f to Java objects (%.1f%% of Java-heap samples)\n",
			REPORT_EST_KIND(p), p->est.samples_attributed, p->est.samples_java_attributed,
			100.0 * p->est.samples_java_attributed / (double)c->samples_java_heap);
	else if (report_has_est(p))
		fprintf(out, "#              estimated (%s): %.0f attributed to objects\n",
			REPORT_EST_KIND(p), p->est.samples_attributed);
	if (c->samples_total > c->samples_addressed)
		fprintf(out, "# no address:  %" PRIu64 " no memory operand, %" PRIu64
			     " address register overwritten, %" PRIu64 " undecodable\n",
			c->unaddressed_nomem, c->unaddressed_clobbered, c->unaddressed_undecodable);
	if (c->samples_jit)
		fprintf(out, "# JIT threads: %" PRIu64 " samples of JIT compiler threads not decoded"
			     " (record/attach --jit-threads to include them)\n",
			c->samples_jit);
	fprintf(out, "# lost:        %" PRIu64 " samples lost, %" PRIu64
		     " allocation events dropped, %" PRIu64 " malformed events\n",
		c->lost, c->dropped_events, c->bad_events);
	human_bytes(c->tracked_bytes, b1, sizeof(b1));
	fprintf(out, "# allocations: %" PRIu64 " tracked (%s), %" PRIu64 " freed\n",
		c->tracked_allocs, b1, c->frees);
	human_bytes(c->small_bytes, b1, sizeof(b1));
	human_bytes(m->min_size, b2, sizeof(b2));
	fprintf(out, "#              %" PRIu64 " smaller than --min-size %s counted, not tracked (%s)\n",
		c->small_allocs, b2, b1);
	if (c->small_outside_tlab)
		fprintf(out, "#              %" PRIu64 " of them outside TLABs in hybrid mode: never"
			     " sampled\n", c->small_outside_tlab);
	if (c->truncated_paths)
		fprintf(out, "#              %" PRIu64 " allocation paths cut at the frame limit\n",
			c->truncated_paths);
	fprintf(out, "# gc:          %" PRIu64 " collections, %" PRIu64 " object moves applied\n",
		c->gc_count, c->moves);
	for (i = 0; i < m->nnotes; i++) {
		fputs("# note:        ", out);
		print_text(report_str(p, m->notes[i]), out);
		fputc('\n', out);
	}
	if (report_has_est(p))
		fprintf(out, "# note:        %s\n", REPORT_EST_NOTE);
	if (p->analyses & OS_AN_PATHEST)
		fprintf(out, "# note:        %s\n", REPORT_PATHEST_NOTE);
}

/* Prints at most `max` frames of `stack`, then "... N more frames". */
static void print_stack(const struct os_profile *p, uint32_t stack, uint32_t max,
			const char *indent, FILE *out)
{
	char buf[MAX_FRAME];
	uint32_t i, n;

	if (stack == OS_NONE || !p->stacks[stack].nframes) {
		fprintf(out, "%s(no frames recorded)\n", indent);
		return;
	}
	n = p->stacks[stack].nframes;
	for (i = 0; i < n && i < max; i++) {
		os_profile_frame_str(p, p->stacks[stack].frames[i], buf, sizeof(buf));
		fputs(indent, out);
		print_text(buf, out);
		fputc('\n', out);
	}
	if (n > max)
		fprintf(out, "%s... %" PRIu32 " more frame%s\n", indent, n - max,
			n - max == 1 ? "" : "s");
}

/* "0.93" or "-" when the figure could not be computed. */
static const char *fig(bool has, double v, char *buf, size_t len)
{
	if (!has)
		return "-";
	snprintf(buf, len, "%.2f", v);
	return buf;
}

/* The replica figures of context c (--replicas) on one line. */
static void print_replica_line(const struct os_context *c, FILE *out)
{
	struct os_replica_figures f;
	char t[16], a[16], w[16], g[16], e[16];

	os_replica_figures(&c->replica, c->allocations, &f);
	fprintf(out,
		"        replicas: theta %s (%" PRIu64 " comparisons)  alpha %s (%" PRIu64
		" checks)  omega %s  gamma %s  exact %s (%" PRIu64 " objects)\n",
		fig(f.has_theta, f.theta, t, sizeof(t)), f.comparisons,
		fig(f.has_alpha, f.alpha, a, sizeof(a)), c->replica.full_checks,
		fig(f.has_omega, f.omega, w, sizeof(w)), fig(f.has_gamma, f.gamma, g, sizeof(g)),
		fig(f.has_exact, f.exact, e, sizeof(e)), c->replica.exact_objects);
}

struct rep_rank {
	uint32_t ctx;
	double cost_samples, cost_bytes;
};

static int cmp_rep_rank(const void *x, const void *y)
{
	const struct rep_rank *a = x, *b = y;

	if (a->cost_samples != b->cost_samples)
		return a->cost_samples > b->cost_samples ? -1 : 1;
	if (a->cost_bytes != b->cost_bytes)
		return a->cost_bytes > b->cost_bytes ? -1 : 1;
	return a->ctx < b->ctx ? -1 : a->ctx > b->ctx;
}

/* Contexts with comparisons, ranked by replica cost: theta x samples (the
 * accesses that go to replicated data), then theta x bytes. */
static void print_replicas(const struct os_profile *p, uint32_t top, FILE *out)
{
	struct rep_rank *r = calloc(p->ncontexts ? p->ncontexts : 1, sizeof(*r));
	uint32_t n = 0, i;

	if (!r)
		return;
	for (i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];
		struct os_replica_figures f;

		os_replica_figures(&c->replica, c->allocations, &f);
		if (!f.has_theta)
			continue;
		r[n].ctx = i;
		r[n].cost_samples = f.theta * (double)c->samples;
		r[n].cost_bytes = f.theta * (double)c->bytes;
		n++;
	}
	qsort(r, n, sizeof(*r), cmp_rep_rank);
	fprintf(out, "\n# Replicas (--replicas): contexts ranked by replica cost, theta x samples "
		     "then theta x bytes; %" PRIu32 " with comparisons\n", n);
	fprintf(out, "# theta: share of watchpoint comparisons equal; alpha: share of whole-content "
		     "checks of differing pairs whose\n# compared offset matched anyway; omega = "
		     "theta - alpha (lower bound); gamma: upper bound; exact: share of\n# hashed "
		     "objects with an identical twin in the context (docs/REPLICAS.md)\n");
	fprintf(out, "# rank  theta*smpl  theta*bytes  theta  comps  alpha checks  omega  gamma  "
		     "exact  hashed  object\n");
	for (i = 0; i < n && (!top || i < top); i++) {
		const struct os_context *c = &p->contexts[r[i].ctx];
		struct os_replica_figures f;
		char t[16], a[16], w[16], g[16], e[16], b[32], frame[MAX_FRAME] = "";
		const char *type = report_str(p, c->type);

		os_replica_figures(&c->replica, c->allocations, &f);
		human_bytes((uint64_t)r[i].cost_bytes, b, sizeof(b));
		if (c->stack != OS_NONE && p->stacks[c->stack].nframes)
			os_profile_frame_str(p, p->stacks[c->stack].frames[0], frame, sizeof(frame));
		fprintf(out,
			"%6" PRIu32 "  %10.1f  %11s  %5s  %5" PRIu64 "  %5s %6" PRIu64
			"  %5s  %5s  %5s  %6" PRIu64 "  %s%s%s\n",
			i + 1, r[i].cost_samples, b, fig(f.has_theta, f.theta, t, sizeof(t)),
			f.comparisons, fig(f.has_alpha, f.alpha, a, sizeof(a)),
			c->replica.full_checks, fig(f.has_omega, f.omega, w, sizeof(w)),
			fig(f.has_gamma, f.gamma, g, sizeof(g)),
			fig(f.has_exact, f.exact, e, sizeof(e)), c->replica.exact_objects,
			*type ? type : "", *type ? " at " : "", frame);
	}
	free(r);
}

/* The lifetime entry of context ci, NULL when none was measured. */
static const struct os_lifetime *lt_of(const struct os_profile *p, uint32_t ci)
{
	if (!(p->analyses & OS_AN_LIFETIMES) || ci >= p->lt.nctx ||
	    p->lt.ctx[ci].kind == OS_LT_NONE)
		return NULL;
	return &p->lt.ctx[ci];
}

/* The lifetime column: the median age (managed) or lifetime (native). */
static const char *lt_column(const struct os_profile *p, uint32_t ci, char *buf, size_t len)
{
	const struct os_lifetime *l = lt_of(p, ci);
	struct os_lt_figures f;

	if (!l)
		return "-";
	os_lt_figures(l, &f);
	if (!f.has_median)
		return "-";
	if (l->kind == OS_LT_MANAGED)
		snprintf(buf, len, "age %u%s", f.median_bin,
			 f.median_bin == OS_LT_BINS - 1 ? "+" : "");
	else
		os_lt_bin_label(f.median_bin, buf, len);
	return buf;
}

static void human_d(double n, char *buf, size_t len)
{
	human_bytes(n > 0 ? (uint64_t)(n + 0.5) : 0, buf, len);
}

/* The reuse column (--reuse): the median distance, "-" when none,
 * "cold" when most reuses were not seen within the watchpoints' age. */
static const char *ru_column(const struct os_profile *p, uint32_t ci, char *buf, size_t len)
{
	const struct os_reuse *r = os_reuse_of(p, ci);
	struct os_reuse_figures f;

	if (!r)
		return "-";
	os_reuse_figures(p, r, &f);
	if (isinf(f.median))
		return "cold";
	if (!isfinite(f.median))
		return "-";
	human_d(f.median, buf, len);
	return buf;
}

/* The reuse signature of context ci on one line (--reuse): an estimate. */
static void print_reuse_line(const struct os_profile *p, uint32_t ci, FILE *out)
{
	const struct os_reuse *r = os_reuse_of(p, ci);
	struct os_reuse_figures f;
	char med[32], miss[3][32];

	if (!r)
		return;
	os_reuse_figures(p, r, &f);
	for (int k = 0; k < 3; k++)
		if (isfinite(f.miss[k]))
			snprintf(miss[k], sizeof(miss[k]), "%.0f%%", 100 * f.miss[k]);
		else
			snprintf(miss[k], sizeof(miss[k]), "?");
	fprintf(out, "        reuse (estimated): %.0f reuses (%.0f not seen within %.1f s), "
		     "median %s; LRU miss ratio L1d %s, L2 %s, LLC %s\n",
		f.reuses, f.censored, (double)p->ru.max_age_ns / 1e9,
		ru_column(p, ci, med, sizeof(med)), miss[0], miss[1], miss[2]);
}

/* The lifetime figures of context ci on one line (--lifetimes). */
static void print_lifetime_line(const struct os_profile *p, uint32_t ci, FILE *out)
{
	const struct os_lifetime *l = lt_of(p, ci);
	struct os_lt_figures f;
	char a[32], b[32];

	if (!l)
		return;
	os_lt_figures(l, &f);
	if (l->kind == OS_LT_MANAGED) {
		fprintf(out, "        lifetime: %.0f objects, median age %s collections, ", f.objects,
			lt_column(p, ci, a, sizeof(a)) + (f.has_median ? 4 : 0));
		if (f.has_young)
			fprintf(out, "%.1f%% died before their first collection, ",
				100 * f.young_share);
		else
			fprintf(out, "no collection yet, ");
		if (f.has_promoted) {
			human_d(l->promoted_bytes, b, sizeof(b));
			fprintf(out, "%.0f promoted (%s)", l->promoted, b);
		} else {
			fprintf(out, "promotions not known");
		}
	} else {
		human_d(f.live_bytes, a, sizeof(a));
		human_d(l->peak_bytes, b, sizeof(b));
		fprintf(out, "        lifetime: %.0f objects, median %s, %.0f never freed (%s), "
			     "peak %s at %.3f s",
			f.objects, lt_column(p, ci, (char[32]){ 0 }, 32), f.live, a, b,
			(double)l->peak_ns / 1e9);
	}
	if (f.advice)
		fprintf(out, "  [%s]", os_lt_advice_name(f.advice));
	fputc('\n', out);
}

/* The lifetime section: contexts with lifetimes, most objects first, their
 * histograms and the advice that fired. */
static int cmp_lt(const void *x, const void *y, void *arg)
{
	const struct os_profile *p = arg;
	const struct os_lifetime *a = &p->lt.ctx[*(const uint32_t *)x];
	const struct os_lifetime *b = &p->lt.ctx[*(const uint32_t *)y];
	struct os_lt_figures fa, fb;

	os_lt_figures(a, &fa);
	os_lt_figures(b, &fb);
	return fa.objects < fb.objects ? 1 : fa.objects > fb.objects ? -1 : 0;
}

static void print_lt_hist(const struct os_lifetime *l, FILE *out)
{
	struct os_lt_figures f;
	char lab[32], by[32];

	os_lt_figures(l, &f);
	for (uint32_t k = 0; k <= f.last_bin; k++) {
		if (l->ended[k] <= 0 && l->live[k] <= 0)
			continue;
		if (l->kind == OS_LT_MANAGED) {
			snprintf(lab, sizeof(lab), "age %u%s", k, k == OS_LT_BINS - 1 ? "+" : "");
			human_d(os_lt_surviving_bytes(l, k + 1), by, sizeof(by));
			fprintf(out, "            %-10s %10.0f died %10.0f live at the end; "
				     "%s survived collection %u\n",
				lab, l->ended[k], l->live[k], by, k + 1);
		} else {
			os_lt_bin_label(k, lab, sizeof(lab));
			fprintf(out, "            %-12s %10.0f freed %10.0f never freed\n", lab,
				l->ended[k], l->live[k]);
		}
	}
}

static void print_lifetimes(const struct report_view *v, uint32_t top, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t *idx, n = 0;
	char a[32];

	idx = malloc(((size_t)p->lt.nctx + 1) * sizeof(*idx));
	if (!idx)
		return;
	for (uint32_t i = 0; i < p->lt.nctx && i < p->ncontexts; i++)
		if (p->lt.ctx[i].kind != OS_LT_NONE)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_lt, (void *)p);
	fprintf(out, "\n# Lifetimes (--lifetimes): %" PRIu32 " contexts, most objects first",
		n);
	if (p->lt.collections)
		fprintf(out, "; %" PRIu64 " collections seen (%" PRIu64 " could not age objects), "
			     "%" PRIu64 " managed objects not aged",
			p->lt.collections, p->lt.collections_unjudged, p->lt.unaged);
	fputc('\n', out);
	if (p->lt.survivor_bytes[1] > 0) {
		fprintf(out, "# left in the young generation, by age, over all collections:");
		for (uint32_t k = 1; k < OS_LT_BINS; k++)
			if (p->lt.survivor_bytes[k] > 0) {
				human_d(p->lt.survivor_bytes[k], a, sizeof(a));
				fprintf(out, " %u:%s", k, a);
			}
		fputc('\n', out);
	}
	if (p->lt.flags & OS_LTP_F_ATTACH)
		fprintf(out, "# attach mode: ages and times count from the attach\n");
	if (p->c.dropped_events)
		fprintf(out, "# incomplete: %" PRIu64 " allocation events were dropped (the collector "
			     "fell behind; a larger --ring-kb helps): their objects, and deaths and "
			     "moves among them, are missing from these figures\n",
			p->c.dropped_events);
	if (p->lt.peak_bytes > 0) {
		human_d(p->lt.peak_bytes, a, sizeof(a));
		fprintf(out, "# native objects tracked: %s live at the peak, %.3f s from the start\n",
			a, (double)p->lt.peak_ns / 1e9);
	}
	for (uint32_t i = 0; i < n && i < top; i++) {
		const struct os_context *c = &p->contexts[idx[i]];
		const char *type = report_str(p, c->type);
		struct os_lt_figures f;
		uint32_t rank = 0;

		for (uint32_t r = 0; r < v->nobjects; r++)
			if (v->objects[r].context == idx[i])
				rank = r + 1;
		os_lt_figures(&p->lt.ctx[idx[i]], &f);
		fprintf(out, "\n  object %" PRIu32 "  ", rank);
		print_text(*type ? type : "(unknown type)", out);
		fputc('\n', out);
		print_lifetime_line(p, idx[i], out);
		if (f.advice) {
			fprintf(out, "        advice: ");
			print_text(f.why, out);
			fputc('\n', out);
		}
		fprintf(out, "        allocated at:\n");
		print_stack(p, c->stack, 3, "            ", out);
		print_lt_hist(&p->lt.ctx[idx[i]], out);
	}
	free(idx);
}

/* A context whose objects were found at samples, never seen allocated
 * (a synthetic first frame and no allocation counted): its allocations and
 * bytes are unknown, not zero. */
static bool allocs_unknown(const struct os_profile *p, const struct os_context *c)
{
	const struct os_stack *st = c->stack == OS_NONE ? NULL : &p->stacks[c->stack];

	return !c->allocations && st && st->nframes &&
	       p->frames[st->frames[0]].kind == OS_FRAME_SYNTHETIC;
}

/* --per-thread: the object's samples by thread. */
static void print_by_thread(const struct report_view *v, const struct report_object *ro,
			    FILE *out)
{
	const struct os_profile *p = v->p;
	const struct os_context *c = &p->contexts[ro->context];

	fprintf(out, "        by thread:\n");
	if (!ro->nthreads && report_has_est(p))
		fprintf(out, "            no sample of its own: its estimate (est. %.0f) is a share of "
			     "samples on objects of its class, not split by thread\n", c->samples_est);
	for (uint32_t i = 0; i < ro->nthreads; i++) {
		const struct report_by_thread *b = &v->by_thread[ro->first_thread + i];
		const struct os_thread *t = &p->threads[b->thread];
		char est[40] = "";

		/* the object's estimate split as its samples are: the ranking's
		 * figure, shown beside the exact count */
		if (report_has_est(p) && c->samples)
			snprintf(est, sizeof(est), " (est. %.0f)",
				 c->samples_est * (double)b->samples / (double)c->samples);
		fprintf(out, "            %6.2f%%  %" PRIu64 " sample%s%s  tid %" PRIu32 "  ",
			pct(b->samples, c->samples), b->samples, b->samples == 1 ? "" : "s", est,
			t->tid);
		print_text(report_str(p, t->name), out);
		fputc('\n', out);
	}
}

/* What the PMU said of context c's samples (OS_AN_MEMSRC), on one line:
 * only what was measured. */
static void print_memory_line(const struct os_profile *p, const struct os_context *c, FILE *out)
{
	const struct os_memsrc *m = &c->mem;
	uint32_t measured = os_profile_metrics(p);
	uint64_t n = 0, nlat = 0, q;
	const char *sep = "";

	for (unsigned i = 0; i < OS_LVL_COUNT; i++)
		n += m->level[i];
	for (unsigned b = 0; b < OS_LAT_BUCKETS; b++)
		nlat += m->lat_hist[b];
	if (!n)
		return;
	fprintf(out, "        memory:");
	if (n > m->level[OS_LVL_UNKNOWN]) {
		for (unsigned i = 0; i < OS_LVL_COUNT; i++) {
			if (!m->level[i])
				continue;
			fprintf(out, "%s %s %.0f%%", sep, os_mem_level_name[i],
				pct(m->level[i], n));
			sep = ",";
		}
		sep = ";";
	}
	if (measured & (1u << OS_M_L1_MISS)) {
		fprintf(out, "%s L1 misses %" PRIu64, sep, c->metrics[OS_M_L1_MISS]);
		sep = ";";
	}
	if (measured & (1u << OS_M_REMOTE)) {
		fprintf(out, "%s remote %" PRIu64, sep, c->metrics[OS_M_REMOTE]);
		sep = ";";
	}
	if (m->tlb_known) {
		fprintf(out, "%s TLB misses %" PRIu64 " of %" PRIu64, sep, m->tlb_miss, m->tlb_known);
		sep = ";";
	}
	if (nlat && (measured & (1u << OS_M_LATENCY))) {
		fprintf(out, "%s latency mean %.0f cycles", sep,
			(double)c->metrics[OS_M_LATENCY] / (double)nlat);
		q = os_lat_quantile_max(m->lat_hist, 0.99);
		if (q != UINT64_MAX)
			fprintf(out, ", p99 <= %" PRIu64, q);
		else
			fprintf(out, ", p99 >= %" PRIu64, os_lat_bucket_lo(OS_LAT_BUCKETS - 1));
	}
	fputc('\n', out);
}

/* --numa: where context c's sampled pages lay against the accessing CPUs'
 * nodes, on one line. */
static void print_numa_line(const struct os_profile *p, const struct os_context *c, FILE *out)
{
	const struct os_memsrc *m = &c->mem;

	if (!(m->numa_local + m->numa_remote + m->numa_unknown))
		return;
	if (p->numa_nodes == 1) {
		fprintf(out, "        numa: 1 node: all local");
		if (m->numa_unknown)
			fprintf(out, " (%" PRIu64 " samples on pages not present)", m->numa_unknown);
		fputc('\n', out);
		return;
	}
	fprintf(out, "        numa: %" PRIu64 " local, %" PRIu64 " remote, %" PRIu64
		     " unknown; pages on node",
		m->numa_local, m->numa_remote, m->numa_unknown);
	for (unsigned n = 0, first = 1; n < 64; n++)
		if (m->numa_nodes & (1ULL << n)) {
			fprintf(out, "%s %u", first ? "" : ",", n);
			first = 0;
		}
	fputc('\n', out);
}

/* Estimated allocation paths (OS_AN_PATHEST): what is exact, what estimated. */
static void print_path_line(const struct os_context *c, FILE *out)
{
	const struct os_pathest *e = &c->pe;

	/* native: blocks below --min-size sampled by bytes (docs/NATIVE.md) */
	if (c->type == OS_NONE && e->kind == OS_PATH_SITE)
		fprintf(out,
			"        path: %" PRIu64 " samples exact (blocks seen allocated here), est. %.1f "
			"shared from samples on small blocks not sampled at allocation (evidence: %"
			PRIu64 " small blocks sampled by bytes, at %" PRIu32 " site%s)\n",
			c->samples, e->path_est, e->class_seen, e->class_sites,
			e->class_sites == 1 ? "" : "s");
	else if (c->type == OS_NONE && e->kind == OS_PATH_CLASS)
		fprintf(out,
			"        path: not known: %" PRIu64 " heap samples outside any block seen "
			"allocated, %.1f of them shared out to the sites of small blocks sampled by "
			"bytes (evidence: %" PRIu64 " sampled, at %" PRIu32 " site%s), est. %.1f "
			"kept here\n",
			c->samples, -e->path_est, e->class_seen, e->class_sites,
			e->class_sites == 1 ? "" : "s", c->samples_est);
	else if (e->kind == OS_PATH_SITE)
		fprintf(out,
			"        path: %" PRIu64 " samples exact (objects seen allocated here), est. %.1f "
			"shared from samples on objects of its class not seen at allocation "
			"(evidence: %" PRIu64 " objects of the class seen allocated, at %" PRIu32
			" site%s)\n",
			c->samples, e->path_est, e->class_seen, e->class_sites,
			e->class_sites == 1 ? "" : "s");
	else if (e->kind == OS_PATH_CLASS && !e->class_sites)
		fprintf(out,
			"        path: not known: %" PRIu64 " samples on objects found by their header; "
			"no object of this class was seen allocated\n",
			c->samples);
	else if (e->kind == OS_PATH_CLASS)
		fprintf(out,
			"        path: not known: %" PRIu64 " samples on objects found by their header, "
			"%.1f of them shared out to the sites of the class (evidence: %" PRIu64
			" objects of the class seen allocated, at %" PRIu32 " site%s), est. %.1f "
			"kept here\n",
			c->samples, -e->path_est, e->class_seen, e->class_sites,
			e->class_sites == 1 ? "" : "s", c->samples_est);
}

#define INTERVAL_RANKS 5

/* The object's 90% interval, where it cannot be told from its neighbour
 * or rests on allocation volume alone. */
static void print_interval_line(const struct report_view *v, uint32_t rank, FILE *out)
{
	const struct os_profile *p = v->p;
	const struct os_context *c = &p->contexts[v->objects[rank].context];
	double se = report_share_se(p, c);
	bool up = rank > 0 && report_rank_overlaps(v, rank - 1), down = report_rank_overlaps(v, rank);

	if (!isfinite(se))
		return;
	/* the top of the ranking, which is read as the answer (JSON: every row) */
	if (rank >= INTERVAL_RANKS)
		up = down = false;
	else if (rank + 1 >= INTERVAL_RANKS)
		down = false;
	if (up || down) {
		fprintf(out, "        interval: share %.2f%% ±%.2f (90%%); cannot be told apart from ",
			100.0 * report_share(p, c), 100.0 * REPORT_Z90 * se);
		if (up && down)
			fprintf(out, "ranks %" PRIu32 " and %" PRIu32, rank, rank + 2);
		else
			fprintf(out, "rank %" PRIu32, up ? rank : rank + 2);
		fprintf(out, " (intervals overlap)\n");
	}
	if (report_split_by_volume(p, c))
		fprintf(out, "        uncertain: %s\n", REPORT_VOLUME_NOTE);
}

static void print_object(const struct report_view *v, uint32_t rank, bool per_thread, FILE *out)
{
	const struct os_profile *p = v->p;
	const struct report_object *ro = &v->objects[rank];
	const struct os_context *c = &p->contexts[ro->context];
	const char *type = report_str(p, c->type);
	uint64_t rest = 0;
	char bytes[32], allocs[32];
	uint32_t i;

	human_bytes(c->bytes, bytes, sizeof(bytes));
	snprintf(allocs, sizeof(allocs), "%" PRIu64, c->allocations);
	if (allocs_unknown(p, c)) {
		strcpy(allocs, "-");
		strcpy(bytes, "-");
	}
	if (report_has_est(p)) {
		char est[40];

		double se = report_est_se(p, c);
		int n = isfinite(se) && se >= 0.5
				? snprintf(est, sizeof(est), "(est. %.0f ±%.0f)", c->samples_est,
					   REPORT_Z90 * se)
				: snprintf(est, sizeof(est), "(est. %.0f)", c->samples_est);

		/* "±" is two bytes in one column: padded by hand */
		n -= isfinite(se) && se >= 0.5;
		fprintf(out, "%6" PRIu32 "  %6.2f%%  %9" PRIu64 " %s%*s  %11s  %10s  ", rank + 1,
			100.0 * report_share(p, c), c->samples, est, n < 16 ? 16 - n : 0, "",
			allocs, bytes);
	} else
		fprintf(out, "%6" PRIu32 "  %6.2f%%  %9" PRIu64 "  %11s  %10s  ", rank + 1,
			pct(c->samples, p->c.samples_attributed), c->samples, allocs, bytes);
	if (p->analyses & OS_AN_LIFETIMES) {
		char lt[32];

		fprintf(out, "%-10s  ", lt_column(p, ro->context, lt, sizeof(lt)));
	}
	if (p->analyses & OS_AN_REUSE) {
		char ru[32];

		fprintf(out, "%10s  ", ru_column(p, ro->context, ru, sizeof(ru)));
	}
	print_text(*type ? type : "(unknown type)", out);
	fputc('\n', out);
	if (p->analyses & OS_AN_PATHEST)
		print_path_line(c, out);
	print_interval_line(v, rank, out);
	if (p->analyses & OS_AN_REPLICAS)
		print_replica_line(c, out);
	print_lifetime_line(p, ro->context, out);
	print_reuse_line(p, ro->context, out);
	if (p->analyses & OS_AN_MEMSRC)
		print_memory_line(p, c, out);
	if (p->analyses & OS_AN_NUMA)
		print_numa_line(p, c, out);
	if (v->maker && v->maker[ro->context]) {
		/* report/maker.h: the first frame outside the allocator */
		char made[1024];

		os_profile_frame_str(p, report_maker_frame(v, ro->context), made, sizeof(made));
		fprintf(out, "        made by:  ");
		print_text(made, out);
		fprintf(out, "  (below it %" PRIu32 " allocator frame%s)\n", v->maker[ro->context],
			v->maker[ro->context] == 1 ? "" : "s");
	}
	fprintf(out, "        allocated at:\n");
	print_stack(p, c->stack, ALLOC_FRAMES, "            ", out);
	if (per_thread && (ro->nthreads || (report_has_est(p) && c->samples_est >= 0.5)))
		print_by_thread(v, ro, out);
	if (!ro->naccesses)
		return;
	fprintf(out, "        accessed from:\n");
	for (i = 0; i < ro->naccesses; i++) {
		const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];

		if (i >= ACCESS_PATHS) {
			rest += a->samples;
			continue;
		}
		if (report_has_est(p))
			fprintf(out, "            %6.2f%%  %" PRIu64 " sample%s (est. %.0f)\n",
				c->samples_est > 0 ? 100.0 * a->samples_est / c->samples_est : 0.0,
				a->samples, a->samples == 1 ? "" : "s", a->samples_est);
		else
			fprintf(out, "            %6.2f%%  %" PRIu64 " sample%s\n",
				pct(a->samples, c->samples), a->samples, a->samples == 1 ? "" : "s");
		print_stack(p, a->stack, ACCESS_FRAMES, "                ", out);
	}
	if (ro->naccesses > ACCESS_PATHS)
		fprintf(out, "            ... %" PRIu32 " more access paths (%.2f%%, %" PRIu64
			     " samples)\n",
			ro->naccesses - ACCESS_PATHS, pct(rest, c->samples), rest);
}

static void print_threads(const struct report_view *v, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t i;

	if (!v->nthreads)
		return;
	fprintf(out, "\n# Threads by access samples (%" PRIu32 " thread%s):\n", v->nthreads,
		v->nthreads == 1 ? "" : "s");
	fprintf(out, "#  samples  kind        pid       tid  name\n");
	for (i = 0; i < v->nthreads && i < THREADS_SHOWN; i++) {
		const struct os_thread *t = &p->threads[v->threads[i]];

		fprintf(out, "%10" PRIu64 "  %-6s %8" PRIu32 "  %8" PRIu32 "  ", t->samples,
			report_thread_kind(t->kind), t->pid, t->tid);
		print_text(report_str(p, t->name), out);
		fputc('\n', out);
	}
	if (v->nthreads > THREADS_SHOWN)
		fprintf(out, "           ... %" PRIu32 " more threads\n",
			v->nthreads - THREADS_SHOWN);
}

/* Neither a sample nor an estimated share of samples (a site whose blocks
 * were sampled at allocation but whose samples are all estimated has the
 * latter only). */
static bool no_samples(const struct os_profile *p, uint32_t ci)
{
	return report_context_unsampled(p, ci);
}

/* A runtime's own memory: the runtime adapter gives such contexts a
 * category as their type, in brackets ("[... code cache ...]"), where a
 * program's objects have a class or no type. */
static bool runtime_category(const struct os_profile *p, uint32_t ci)
{
	const char *t = report_str(p, p->contexts[ci].type);
	size_t n = strlen(t);

	return n > 2 && t[0] == '[' && t[n - 1] == ']';
}

static double ranked(const struct os_profile *p, const struct os_context *c)
{
	return report_has_est(p) ? c->samples_est : (double)c->samples;
}

/* After the program's objects: the runtime's own memory, one row per
 * category (the view's types are summed per type already), most first. */
static void print_categories(const struct report_view *v, FILE *out)
{
	const struct os_profile *p = v->p;
	double whole = report_has_est(p) ? p->est.samples_attributed
					 : (double)p->c.samples_attributed;
	uint32_t i, k, n = 0;

	for (i = 0; i < v->ntypes; i++) {
		const char *t = report_str(p, v->types[i].type);
		size_t len = strlen(t);
		uint64_t bytes = 0, objs = 0;

		if (len < 3 || t[0] != '[' || t[len - 1] != ']')
			continue;
		for (k = 0; k < p->ncontexts; k++)
			if (p->contexts[k].type == v->types[i].type) {
				bytes += p->contexts[k].bytes;
				objs++;
			}
		if (!n++)
			fprintf(out, "\n# The runtime's own memory, by category (-v lists its objects "
				     "among the program's):\n# %6s  %9s %-16s  %8s  %10s  category\n",
				"share", "samples", report_has_est(p) ? "(estimated)" : "", "objects",
				"bytes");
		{
			char b[32], est[40] = "";
			double fig = report_has_est(p) ? v->types[i].samples_est
						       : (double)v->types[i].samples;

			human_bytes(bytes, b, sizeof(b));
			if (report_has_est(p))
				snprintf(est, sizeof(est), "(est. %.0f)", v->types[i].samples_est);
			fprintf(out, "  %6.2f%%  %9" PRIu64 " %-16s  %8" PRIu64 "  %10s  ",
				whole > 0 ? 100.0 * fig / whole : 0.0, v->types[i].samples, est, objs, b);
			print_text(t, out);
			fputc('\n', out);
		}
	}
}

int report_render_text(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t i, shown = 0, max = v->nobjects, silent = 0;
	char why[512];

	/* Objects without a sample (a JVM's heap and code cache reservations,
	 * buffers never read while sampled) are counted, not listed, unless
	 * -v: they filled ranks 6-20 of a Java top 20. */
	static const char *const by[] = { "access samples", "bytes", "allocations" };
	bool hide = !o->verbose && v->sort == REPORT_SORT_SAMPLES;

	double prog = 0, rt = 0;
	uint32_t grouped = 0;

	for (i = 0; i < v->nobjects; i++) {
		uint32_t ci = v->objects[i].context;

		silent += hide && no_samples(p, ci);
		grouped += hide && !no_samples(p, ci) && runtime_category(p, ci);
		if (runtime_category(p, ci))
			rt += ranked(p, &p->contexts[ci]);
		else
			prog += ranked(p, &p->contexts[ci]);
	}
	if (o->top && o->top < max)
		max = o->top;
	if (max > v->nobjects - silent - grouped)
		max = v->nobjects - silent - grouped;
	print_header(p, o->verbose, out);
	if (rt > 0 && prog + rt > 0)
		fprintf(out, "# program:     %.1f%% of the attributed samples%s on the program's "
			     "objects, %.1f%% on the runtime's own memory (its categories after the "
			     "objects)\n", 100.0 * prog / (prog + rt),
			report_has_est(p) ? " (estimated)" : "", 100.0 * rt / (prog + rt));
	if (o->filter.desc[0]) {
		fputs("# filter:      ", out);
		print_text(o->filter.desc, out);
		fputs(" (shares are of the samples that remain)\n", out);
	}
	fprintf(out, "\n");
	if (!p->c.samples_attributed && o->filter.desc[0] && report_filter_active(&o->filter)) {
		report_filter_why_none(p, &o->filter, why, sizeof(why));
		fprintf(out, "no samples were attributed to objects after the filter: %s\n", why);
	} else if (!p->c.samples_attributed) {
		report_why_empty(p, why, sizeof(why));
		fputs("no samples were attributed to objects: ", out);
		print_text(why, out);
		fputc('\n', out);
	}
	if (v->nobjects) {
		fprintf(out, "%s# Objects (allocation contexts) ranked by %s%s, %" PRIu32
			     " of %" PRIu32 " shown:\n",
			p->c.samples_attributed ? "" : "\n", by[v->sort],
			report_has_est(p) && v->sort == REPORT_SORT_SAMPLES ? " (estimated)" : "",
			max, v->nobjects);
		if (silent)
			fprintf(out, "# (%" PRIu32 " without samples left out, -v lists %s)\n",
				silent, silent == 1 ? "it" : "them");
		const char *ltcol = p->analyses & OS_AN_LIFETIMES ? "lifetime    " : "";
		/* reuse: the median distance, an estimate (docs/REUSE.md) */
		const char *rucol = p->analyses & OS_AN_REUSE ? "~reuse med  " : "";

		if (max && report_has_est(p))
			fprintf(out, "# rank    share    samples %-16s  %11s  %10s  %s%stype\n",
				"(estimated)", "allocations", "bytes", ltcol, rucol);
		else if (max)
			fprintf(out, "# rank    share    samples  allocations       bytes  %s%stype\n",
				ltcol, rucol);
		for (i = 0; i < v->nobjects && shown < max; i++) {
			if (hide && (no_samples(p, v->objects[i].context) ||
				     runtime_category(p, v->objects[i].context)))
				continue;
			fprintf(out, "\n");
			print_object(v, i, o->per_thread, out);
			shown++;
		}
	}
	if (grouped)
		print_categories(v, out);
	if (p->analyses & OS_AN_REPLICAS)
		print_replicas(p, o->top ? o->top : 20, out);
	if (p->analyses & OS_AN_LIFETIMES)
		print_lifetimes(v, o->top ? o->top : 20, out);
	if (p->analyses & OS_AN_REUSE)
		fprintf(out, "\n# Reuse distances (--reuse) are ESTIMATES: the footprint model over "
			     "%" PRIu64 " sampled reuse times at %.2f bytes/ns (%s; docs/REUSE.md; "
			     "the notes, -v, say what was lost)\n",
			p->ru.pairs, p->ru.bytes_per_ns,
			p->ru.rate_source == OS_RU_RATE_OBJECTS ? "from the sampled objects"
								 : "calibrated");
	print_threads(v, out);
	return 0;
}
