/* filter.c - report filters on threads, time and frames (report/filter.h). */
#include "report/filter.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void desc_add(struct report_filter *f, const char *opt, const char *arg)
{
	size_t n = strlen(f->desc);

	snprintf(f->desc + n, sizeof(f->desc) - n, "%s%s %s", n ? " " : "", opt, arg);
}

int report_filter_tids(struct report_filter *f, const char *arg, char *err, size_t len)
{
	const char *s = arg;
	uint32_t n0 = f->ntids; /* nothing kept from a bad list */

	do {
		char *end;
		unsigned long v;

		if (*s < '0' || *s > '9') {
			f->ntids = n0;
			snprintf(err, len, "--tid wants thread ids separated by commas, not '%s'",
				 arg);
			return -EINVAL;
		}
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || v > UINT32_MAX || (*end && *end != ',') || (*end && !end[1])) {
			f->ntids = n0;
			snprintf(err, len, "--tid wants thread ids separated by commas, not '%s'",
				 arg);
			return -EINVAL;
		}
		if (f->ntids == sizeof(f->tids) / sizeof(f->tids[0])) {
			f->ntids = n0;
			snprintf(err, len, "--tid: at most %zu thread ids",
				 sizeof(f->tids) / sizeof(f->tids[0]));
			return -EINVAL;
		}
		f->tids[f->ntids++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	} while (*s);
	desc_add(f, "--tid", arg);
	return 0;
}

int report_filter_time(struct report_filter *f, const char *arg, char *err, size_t len)
{
	char *end, *mid;

	errno = 0;
	f->from = strtod(arg, &mid);
	if (mid != arg && *mid == ',') {
		f->to = strtod(mid + 1, &end);
		if (!errno && end != mid + 1 && !*end && isfinite(f->from) && isfinite(f->to) &&
		    f->from >= 0 && f->to > f->from) {
			f->time = true;
			desc_add(f, "--time", arg);
			return 0;
		}
	}
	snprintf(err, len, "--time wants FROM,TO in seconds from the start (FROM < TO), not '%s'",
		 arg);
	return -EINVAL;
}

int report_filter_regex(struct report_filter *f, bool include, const char *arg, char *err,
			size_t len)
{
	regex_t *re = include ? &f->include_re : &f->exclude_re;
	bool *set = include ? &f->include : &f->exclude;
	int r;

	if (*set) {
		snprintf(err, len, "--%s given twice: join the expressions with '|'",
			 include ? "include" : "exclude");
		return -EINVAL;
	}
	r = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
	if (r) {
		char why[128];

		regerror(r, re, why, sizeof(why));
		snprintf(err, len, "--%s: bad regular expression '%s': %s",
			 include ? "include" : "exclude", arg, why);
		return -EINVAL;
	}
	*set = true;
	desc_add(f, include ? "--include" : "--exclude", arg);
	return 0;
}

void report_filter_comm(struct report_filter *f, const char *name)
{
	f->comm = name;
	desc_add(f, "--comm", name);
}

bool report_filter_active(const struct report_filter *f)
{
	return f->ntids || f->comm || f->time || f->include || f->exclude;
}

void report_filter_why_none(const struct os_profile *p, const struct report_filter *f,
			    char *buf, size_t len)
{
	bool tid = false, comm = false;
	uint32_t i, k;

	for (i = 0; i < p->nthreads; i++) {
		const char *name = os_profile_str(p, p->threads[i].name);

		for (k = 0; k < f->ntids; k++)
			tid |= p->threads[i].tid == f->tids[k];
		comm |= f->comm && name && strcmp(name, f->comm) == 0;
	}
	if (f->ntids && !tid)
		snprintf(buf, len, "--tid: no thread of the run has %s (report --per-thread "
			 "lists them)", f->ntids > 1 ? "any of those ids" : "that id");
	else if (f->comm && !comm)
		snprintf(buf, len, "--comm %s: no thread of the run has that name", f->comm);
	else if (f->time && f->from >= p->meta.duration_s && p->meta.duration_s > 0)
		snprintf(buf, len, "--time: %g s is past the run's end (%.2f s)", f->from,
			 p->meta.duration_s);
	else if (f->include || f->exclude)
		snprintf(buf, len, "%s: no sampled allocation or access path is left by the "
			 "pattern%s", f->include && f->exclude ? "--include/--exclude"
				      : f->include ? "--include" : "--exclude",
			 f->ntids || f->comm || f->time ? " with the other filters" : "");
	else
		snprintf(buf, len, "the filter (%s) kept none of the attributed samples", f->desc);
}

void report_filter_free(struct report_filter *f)
{
	if (f->include)
		regfree(&f->include_re);
	if (f->exclude)
		regfree(&f->exclude_re);
	f->include = f->exclude = false;
}

static bool thread_ok(const struct os_profile *p, const struct report_filter *f, uint32_t t)
{
	const struct os_thread *th = &p->threads[t];
	uint32_t i;

	if (f->comm) {
		const char *name = os_profile_str(p, th->name);

		if (!name || strcmp(name, f->comm) != 0)
			return false;
	}
	if (!f->ntids)
		return true;
	for (i = 0; i < f->ntids; i++)
		if (f->tids[i] == th->tid)
			return true;
	return false;
}

static bool bucket_ok(const struct os_profile *p, const struct report_filter *f, uint32_t b)
{
	double start = (double)b * p->slice_ms / 1000.0;

	return !f->time || (start >= f->from && start < f->to);
}

/* Some frame of stack `id` matches re (frames as the text report shows them). */
static bool stack_matches(const struct os_profile *p, uint32_t id, const regex_t *re)
{
	char buf[1024];

	if (id == OS_NONE)
		return false;
	for (uint32_t i = 0; i < p->stacks[id].nframes; i++) {
		os_profile_frame_str(p, p->stacks[id].frames[i], buf, sizeof(buf));
		if (regexec(re, buf, 0, NULL, 0) == 0)
			return true;
	}
	return false;
}

/* Whether samples of context c from access stack `acc` (OS_NONE: no path)
 * pass the frame filters. */
static bool path_ok(const struct os_profile *p, const struct report_filter *f, uint32_t c,
		    uint32_t acc)
{
	uint32_t alloc = p->contexts[c].stack;

	if (f->include && !stack_matches(p, alloc, &f->include_re) &&
	    !stack_matches(p, acc, &f->include_re))
		return false;
	if (f->exclude && (stack_matches(p, alloc, &f->exclude_re) ||
			   stack_matches(p, acc, &f->exclude_re)))
		return false;
	return true;
}

static double scale_est(double est, uint64_t now, uint64_t was)
{
	return was ? est * (double)now / (double)was : 0;
}

/* Estimated allocation paths (OS_AN_PATHEST): a context's estimate is its
 * exact samples plus a part estimated from the samples of its class that
 * were not seen at allocation (the class-only contexts). Under a filter the
 * exact part is what remains of its own samples, the estimated part keeps
 * the share of the class-only samples that remain: per context, that ratio
 * (the class-only contexts of its type; without one, of all samples). A
 * filter that keeps every sample keeps every estimate, so it gives the
 * main ranking; a context with an estimate and no sample of its own keeps
 * its share of what remains instead of dropping to 0. NULL: no such
 * estimates, or no memory (*err set). */
static double *class_ratios(const struct os_profile *p, const uint64_t *csam, int *err)
{
	uint64_t all_was = 0, all_now = 0;
	double *r, g;
	uint32_t i, j;

	*err = 0;
	if (!(p->analyses & OS_AN_PATHEST))
		return NULL;
	r = malloc(((size_t)p->ncontexts + 1) * sizeof(*r));
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < p->ncontexts; i++) {
		all_was += p->contexts[i].samples;
		all_now += csam[i];
	}
	g = all_was ? (double)all_now / (double)all_was : 1.0;
	for (i = 0; i < p->ncontexts; i++) {
		const struct os_context *c = &p->contexts[i];
		uint64_t was = 0, now = 0;

		r[i] = g;
		if (c->pe.kind == OS_PATH_NONE)
			continue;
		for (j = 0; j < p->ncontexts; j++)
			if (p->contexts[j].pe.kind == OS_PATH_CLASS && p->contexts[j].type == c->type) {
				was += p->contexts[j].samples;
				now += csam[j];
			}
		if (was)
			r[i] = (double)now / (double)was;
	}
	return r;
}

/* The estimate of what remains: of a site (OS_PATH_SITE), the exact part as
 * counted and the estimated part by the class ratio (class_ratios); of
 * anything else (a class-only row, whose estimate is what it did not share
 * out; Horvitz-Thompson figures), scaled as its own samples are. */
static double filtered_est(double est, uint64_t now, uint64_t was, const double *ratio,
			   uint32_t ctx, bool site)
{
	if (!ratio || !site)
		return scale_est(est, now, was);
	return (double)now + (est - (double)was) * ratio[ctx];
}

/* Removes the contexts not kept (keep[i] false): accesses and slices of
 * them go, indices are renumbered. */
static void compact(struct os_profile *p, const bool *keep, uint32_t *cmap, const bool *akeep,
		    uint32_t *amap)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->ncontexts; i++) {
		cmap[i] = keep[i] ? n : OS_NONE;
		if (keep[i])
			p->contexts[n++] = p->contexts[i];
	}
	p->ncontexts = n;
	for (i = n = 0; i < p->naccesses; i++) {
		bool k = akeep[i] && cmap[p->accesses[i].context] != OS_NONE;

		amap[i] = k ? n : OS_NONE;
		if (k) {
			p->accesses[n] = p->accesses[i];
			p->accesses[n++].context = cmap[p->accesses[i].context];
		}
	}
	p->naccesses = n;
	for (i = n = 0; i < p->nslices; i++) {
		struct os_slice s = p->slices[i];

		if (cmap[s.context] == OS_NONE || (s.access != OS_NONE && amap[s.access] == OS_NONE))
			continue;
		s.context = cmap[s.context];
		s.access = s.access == OS_NONE ? OS_NONE : amap[s.access];
		p->slices[n++] = s;
	}
	p->nslices = n;
}

int report_filter_apply(struct os_profile *p, const struct report_filter *f, char *err,
			size_t len)
{
	bool slices = f->ntids || f->comm || f->time;
	uint64_t *csam = calloc(p->ncontexts + 1, sizeof(*csam));
	uint64_t *asam = calloc(p->naccesses + 1, sizeof(*asam));
	uint64_t *tsam = calloc(p->nthreads + 1, sizeof(*tsam));
	uint32_t *cmap = calloc(p->ncontexts + 1, sizeof(*cmap));
	uint32_t *amap = calloc(p->naccesses + 1, sizeof(*amap));
	bool *keep = calloc(p->ncontexts + 1, sizeof(*keep));
	bool *akeep = calloc(p->naccesses + 1, sizeof(*akeep));
	uint64_t was = p->c.samples_attributed, now = 0;
	double *ratio = NULL, *aold = calloc(p->ncontexts + 1, sizeof(*aold));
	double *anew = calloc(p->ncontexts + 1, sizeof(*anew));
	uint64_t *aold_n = calloc(p->ncontexts + 1, sizeof(*aold_n));
	uint64_t *anew_n = calloc(p->ncontexts + 1, sizeof(*anew_n));
	uint32_t i, n;
	int ret = -ENOMEM, rerr;

	if (!csam || !asam || !tsam || !cmap || !amap || !keep || !akeep || !aold || !anew ||
	    !aold_n || !anew_n) {
		snprintf(err, len, "%s", strerror(ENOMEM));
		goto out;
	}
	if (slices && !(p->analyses & OS_AN_SLICES)) {
		snprintf(err, len, "this profile has no per-sample threads/times (recorded by an"
				   " older objscope)");
		ret = -ENOTSUP;
		goto out;
	}
	/* Frame filters: which accesses, and which contexts' samples without an
	 * access path, remain. */
	for (i = 0; i < p->naccesses; i++)
		akeep[i] = path_ok(p, f, p->accesses[i].context, p->accesses[i].stack);
	for (i = 0; i < p->ncontexts; i++)
		keep[i] = path_ok(p, f, i, OS_NONE); /* its samples with no access path */
	if (slices) {
		/* counts from the slices of the threads and buckets chosen */
		for (i = n = 0; i < p->nslices; i++) {
			const struct os_slice *s = &p->slices[i];
			bool ok = thread_ok(p, f, s->thread) && bucket_ok(p, f, s->bucket) &&
				  (s->access == OS_NONE ? keep[s->context] : akeep[s->access]);

			if (!ok)
				continue;
			csam[s->context] += s->samples;
			if (s->access != OS_NONE)
				asam[s->access] += s->samples;
			tsam[s->thread] += s->samples;
			p->slices[n++] = *s;
		}
		p->nslices = n;
	} else {
		/* counts of the accesses kept, and the samples without an access path */
		for (i = 0; i < p->naccesses; i++) /* csam: samples with an access path */
			csam[p->accesses[i].context] += p->accesses[i].samples;
		for (i = 0; i < p->ncontexts; i++)
			csam[i] = keep[i] && p->contexts[i].samples > csam[i]
					  ? p->contexts[i].samples - csam[i]
					  : 0;
		for (i = 0; i < p->naccesses; i++)
			if (akeep[i]) {
				asam[i] = p->accesses[i].samples;
				csam[p->accesses[i].context] += asam[i];
			}
		for (i = n = 0; i < p->nslices; i++) {
			const struct os_slice *s = &p->slices[i];

			if (s->access == OS_NONE ? keep[s->context] : akeep[s->access]) {
				tsam[s->thread] += s->samples;
				p->slices[n++] = *s;
			}
		}
		p->nslices = n;
	}
	ratio = class_ratios(p, csam, &rerr);
	if (rerr) {
		snprintf(err, len, "%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < p->naccesses; i++) {
		struct os_access *a = &p->accesses[i];

		aold[a->context] += a->samples_est;
		aold_n[a->context] += a->samples;
		anew_n[a->context] += asam[i];
		a->samples_est = filtered_est(a->samples_est, asam[i], a->samples, ratio, a->context,
					      p->contexts[a->context].pe.kind == OS_PATH_SITE);
		a->samples = asam[i];
		anew[a->context] += a->samples_est;
		a->path_est = a->samples_est - (double)a->samples; /* estimated paths: the rest */
		memset(a->metrics, 0, sizeof(a->metrics));
		if (slices)
			akeep[i] = true; /* an access with no samples left is shown as such */
	}
	for (i = 0; i < p->ncontexts; i++) {
		struct os_context *c = &p->contexts[i];

		/* --include / --exclude: a context goes when none of its samples
		 * remain and its allocation path is not what was asked for */
		if (f->include || f->exclude)
			keep[i] = csam[i] ||
				  ((!f->exclude || !stack_matches(p, c->stack, &f->exclude_re)) &&
				   (!f->include || stack_matches(p, c->stack, &f->include_re)));
		else
			keep[i] = true;
		if (c->pe.kind == OS_PATH_SITE)
			c->samples_est = filtered_est(c->samples_est, csam[i], c->samples, ratio, i,
						      true);
		else /* its access paths' estimates, and the rest scaled as its samples
		      * without an access path: never below what its paths show */
			c->samples_est = anew[i] +
					 scale_est(fmax(0.0, c->samples_est - aold[i]),
						   csam[i] > anew_n[i] ? csam[i] - anew_n[i] : 0,
						   c->samples > aold_n[i] ? c->samples - aold_n[i] : 0);
		/* a kept share of the samples: a thinned stream, var times the
		 * share (at least the share squared of the split's own part) */
		c->samples_var = scale_est(c->samples_var, csam[i], c->samples);
		c->samples = csam[i];
		if (c->pe.kind != OS_PATH_NONE)
			c->pe.path_est = c->samples_est - (double)c->samples;
		memset(c->metrics, 0, sizeof(c->metrics));
		now += csam[i];
	}
	if (p->analyses & OS_AN_SLICES || slices)
		for (i = 0; i < p->nthreads; i++)
			p->threads[i].samples = tsam[i];
	compact(p, keep, cmap, akeep, amap);
	now = 0;
	p->est.samples_attributed = 0;
	for (i = 0; i < p->ncontexts; i++) {
		now += p->contexts[i].samples;
		p->est.samples_attributed += p->contexts[i].samples_est;
	}
	p->c.samples_java_attributed =
		was ? (uint64_t)llround((double)p->c.samples_java_attributed * now / was) : 0;
	p->est.samples_java_attributed = scale_est(p->est.samples_java_attributed, now, was);
	p->c.samples_attributed = now;
	p->merge.unmeasured |= OS_M_ALL; /* metrics cannot be split: not measured */
	p->analyses &= ~(uint32_t)(OS_AN_MEMSRC | OS_AN_NUMA); /* nor the memory figures */
	ret = 0;
out:
	free(ratio);
	free(aold);
	free(anew);
	free(aold_n);
	free(anew_n);
	free(csam);
	free(asam);
	free(tsam);
	free(cmap);
	free(amap);
	free(keep);
	free(akeep);
	return ret;
}
