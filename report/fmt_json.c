/* fmt_json.c - `report --format json`, version 2 (docs/INTERFACE.md). Fields
 * beyond the contract: meta.freq/min_size/mode/hostname/start_time/notes,
 * meta.counters (every os_counters field), meta.unaddressed, objects_total,
 * per-access metrics, thread pid/tid, replica.exact/alpha_checks/
 * exact_objects, samples_estimated (objects, accesses, types) and
 * meta.samples_[java_]attributed_estimated (null without estimates), every
 * lifetime field but age_histogram and median_age, and the top-level
 * lifetime (docs/LIFETIMES.md; null without --lifetimes).
 *
 * The document is streamed through report/json_writer.h as it is produced:
 * memory stays constant whatever the number of objects (a json-c tree of a
 * 100,000-context profile took 2.3 GiB). */
#include <math.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/lifetime_math.h"
#include "common/replica_math.h"
#include "common/reuse_math.h"
#include "report/fmt_json.h"
#include "report/json_writer.h"

#define MAX_FRAME 1024
#define CACHE_CAP (64u << 20) /* bytes of formatted frame objects kept */

/* Frames recur in many stacks: each one's object (on one line, so the same
 * text wherever it appears) is formatted once and kept, up to CACHE_CAP
 * bytes; beyond, frames are formatted each time. */
struct frame_cache {
	const struct os_profile *p;
	char **text;          /* per frame id, NULL until formatted */
	uint32_t *len;
	size_t bytes;
	struct json_writer scratch;
	/* tables (--tables, html): a stack is written as its index in the
	 * document's "stacks" table, each stack there as indices in "frames";
	 * both tables hold what the document uses, in the order first used */
	bool tables;
	uint32_t *stack_ix, *frame_ix;   /* profile id -> table index, UINT32_MAX */
	uint32_t *stacks, nstacks;       /* table index -> profile id */
	uint32_t *frames, nframes;
};

static int cache_init(struct frame_cache *fc, const struct os_profile *p, bool html_safe)
{
	fc->p = p;
	fc->bytes = 0;
	fc->text = calloc((size_t)p->nframes + 1, sizeof(*fc->text));
	fc->len = calloc((size_t)p->nframes + 1, sizeof(*fc->len));
	jw_init(&fc->scratch, NULL, html_safe);
	if (!fc->text || !fc->len)
		return -ENOMEM;
	if (!fc->tables)
		return 0;
	fc->stack_ix = malloc(((size_t)p->nstacks + 1) * sizeof(*fc->stack_ix));
	fc->stacks = malloc(((size_t)p->nstacks + 1) * sizeof(*fc->stacks));
	fc->frame_ix = malloc(((size_t)p->nframes + 1) * sizeof(*fc->frame_ix));
	fc->frames = malloc(((size_t)p->nframes + 1) * sizeof(*fc->frames));
	if (!fc->stack_ix || !fc->stacks || !fc->frame_ix || !fc->frames)
		return -ENOMEM;
	memset(fc->stack_ix, 0xff, ((size_t)p->nstacks + 1) * sizeof(*fc->stack_ix));
	memset(fc->frame_ix, 0xff, ((size_t)p->nframes + 1) * sizeof(*fc->frame_ix));
	return 0;
}

static void cache_free(struct frame_cache *fc)
{
	if (fc->text)
		for (uint32_t i = 0; i < fc->p->nframes; i++)
			free(fc->text[i]);
	free(fc->text);
	free(fc->len);
	free(fc->stack_ix);
	free(fc->stacks);
	free(fc->frame_ix);
	free(fc->frames);
}

/* "java", "jvm" (native code of libjvm.so), "native", "kernel", "unknown"
 * or "synthetic" (report/html/app.js colours frames by it). */
static const char *frame_kind(const struct os_profile *p, const struct os_frame *f)
{
	const char *module, *base;

	switch (f->kind) {
	case OS_FRAME_JAVA:
		return "java";
	case OS_FRAME_KERNEL:
		return "kernel";
	case OS_FRAME_UNKNOWN:
		return "unknown";
	case OS_FRAME_SYNTHETIC:
		return "synthetic";
	default:
		module = report_str(p, f->module);
		base = strrchr(module, '/');
		base = base ? base + 1 : module;
		return strncmp(base, "libjvm.so", 9) == 0 ? "jvm" : "native";
	}
}

/* A string member, null when the profile has none (or an empty one). */
static void jstr_or_null(struct json_writer *w, const char *key, const struct os_profile *p,
			 uint32_t id)
{
	const char *s = os_profile_str(p, id);

	if (s && *s)
		jw_string(w, key, s);
	else
		jw_null(w, key);
}

/* One frame as an object (docs/report.schema.json $defs/frame): what the
 * profile knows of it, null for the rest, and "text", the frame as the text
 * report prints it. */
static void jframe_object(struct json_writer *w, const struct os_profile *p, uint32_t id)
{
	char buf[MAX_FRAME];
	const struct os_frame *f = id < p->nframes ? &p->frames[id] : NULL;
	const char *module = f ? os_profile_str(p, f->module) : NULL;
	bool has_module = module && *module;
	bool native = f && f->kind != OS_FRAME_JAVA && f->kind != OS_FRAME_UNKNOWN &&
		      f->kind != OS_FRAME_KERNEL && f->kind != OS_FRAME_SYNTHETIC;

	os_profile_frame_str(p, id, buf, sizeof(buf));
	jw_begin_object_flat(w, NULL);
	if (!f) {
		jw_null(w, "function");
		jw_null(w, "file");
		jw_null(w, "line");
		jw_null(w, "column");
		jw_null(w, "module");
		jw_string(w, "kind", "unknown");
		jw_null(w, "offset");
		jw_null(w, "address");
		jw_null(w, "nearest_export");
		jw_null(w, "build_id");
	} else {
		jstr_or_null(w, "function", p, f->name);
		jstr_or_null(w, "file", p, f->file);
		if (f->line)
			jw_u64(w, "line", f->line);
		else
			jw_null(w, "line");
		if (os_frame_column(f)) /* a call site: two calls on one line differ */
			jw_u64(w, "column", f->column);
		else
			jw_null(w, "column");
		jstr_or_null(w, "module", p, f->module);
		jw_string(w, "kind", frame_kind(p, f));
		/* native frames keep their offset in the module; an unresolved
		 * frame only its absolute (per-run) address */
		if (native && has_module)
			jw_u64(w, "offset", f->addr);
		else
			jw_null(w, "offset");
		if (f->kind == OS_FRAME_UNKNOWN && f->addr)
			jw_u64(w, "address", f->addr);
		else
			jw_null(w, "address");
		if (native && os_profile_str(p, f->near_sym) && *os_profile_str(p, f->near_sym)) {
			jw_begin_object(w, "nearest_export");
			jw_string(w, "symbol", os_profile_str(p, f->near_sym));
			jw_u64(w, "offset", f->near_off);
			jw_end_object(w);
		} else {
			jw_null(w, "nearest_export");
		}
		jstr_or_null(w, "build_id", p, f->build_id);
	}
	jw_string(w, "text", buf);
	jw_end_object(w);
}

static void jframe(struct json_writer *w, struct frame_cache *fc, uint32_t id)
{
	const char *text;
	size_t n;

	if (id < fc->p->nframes && fc->text[id]) {
		jw_value_raw(w, NULL, fc->text[id], fc->len[id]);
		return;
	}
	jw_fragment_begin(&fc->scratch);
	jframe_object(&fc->scratch, fc->p, id);
	text = jw_fragment_end(&fc->scratch, &n);
	if (!text) { /* too long for the scratch buffer */
		jframe_object(w, fc->p, id);
		return;
	}
	jw_value_raw(w, NULL, text, n);
	if (id < fc->p->nframes && fc->bytes + n <= CACHE_CAP) {
		fc->text[id] = malloc(n ? n : 1);
		if (fc->text[id]) {
			memcpy(fc->text[id], text, n);
			fc->len[id] = (uint32_t)n;
			fc->bytes += n;
		}
	}
}

/* tables: the stack's index in "stacks", given at first use; null for no
 * stack. */
static void jstack_ref(struct json_writer *w, struct frame_cache *fc, const char *key,
		       uint32_t stack)
{
	const struct os_profile *p = fc->p;

	if (stack == OS_NONE || stack >= p->nstacks) {
		jw_null(w, key);
		return;
	}
	if (fc->stack_ix[stack] == UINT32_MAX) {
		fc->stack_ix[stack] = fc->nstacks;
		fc->stacks[fc->nstacks++] = stack;
		for (uint32_t i = 0; i < p->stacks[stack].nframes; i++) {
			uint32_t f = p->stacks[stack].frames[i];

			if (f < p->nframes && fc->frame_ix[f] == UINT32_MAX) {
				fc->frame_ix[f] = fc->nframes;
				fc->frames[fc->nframes++] = f;
			}
		}
	}
	jw_u64(w, key, fc->stack_ix[stack]);
}

/* tables: "stacks" (each the indices of its frames in "frames", leaf first)
 * and "frames" (frame objects, $defs/frame); an id beyond the profile's
 * frames (a damaged stack) is written as the unknown frame's object. */
static void jtables(struct json_writer *w, struct frame_cache *fc)
{
	const struct os_profile *p = fc->p;
	uint32_t unknown = UINT32_MAX;

	jw_begin_array(w, "stacks");
	for (uint32_t s = 0; s < fc->nstacks && !w->err; s++) {
		const struct os_stack *st = &p->stacks[fc->stacks[s]];

		jw_begin_array(w, NULL);
		for (uint32_t i = 0; i < st->nframes; i++) {
			uint32_t f = st->frames[i];

			if (f < p->nframes) {
				jw_u64(w, NULL, fc->frame_ix[f]);
				continue;
			}
			if (unknown == UINT32_MAX)
				unknown = fc->nframes++;
			jw_u64(w, NULL, unknown);
		}
		jw_end_array(w);
	}
	jw_end_array(w);
	jw_begin_array(w, "frames");
	for (uint32_t i = 0; i < fc->nframes && !w->err; i++)
		jframe(w, fc, i == unknown ? UINT32_MAX : fc->frames[i]);
	jw_end_array(w);
}

static void jstack(struct json_writer *w, struct frame_cache *fc, const char *key,
		   uint32_t stack)
{
	const struct os_profile *p = fc->p;
	uint32_t i;

	if (fc->tables) {
		jstack_ref(w, fc, key, stack);
		return;
	}
	jw_begin_array(w, key);
	if (stack != OS_NONE)
		for (i = 0; i < p->stacks[stack].nframes; i++)
			jframe(w, fc, p->stacks[stack].frames[i]);
	jw_end_array(w);
}

/* A metric the sampler did not measure is null, not 0 (os_profile_metrics). */
static void jmetric(struct json_writer *w, const char *key, uint32_t measured, int which,
		    const uint64_t *m)
{
	if (measured & (1u << which))
		jw_u64(w, key, m[which]);
	else
		jw_null(w, key);
}

static void jmetrics(struct json_writer *w, uint32_t measured, const uint64_t *m)
{
	jw_begin_object(w, "metrics");
	jmetric(w, "latency_cycles", measured, OS_M_LATENCY, m);
	jmetric(w, "l1_miss", measured, OS_M_L1_MISS, m);
	jmetric(w, "remote", measured, OS_M_REMOTE, m);
	jw_end_object(w);
}

/* Beyond the contract too (docs/INTERFACE.md lists them): meta.merge, how
 * the inputs were merged (null for one profile), and meta.metrics_measured. */
static void jmerge(struct json_writer *w, const struct os_profile *p)
{
	const struct os_merge_info *m = &p->merge;

	if (m->inputs < 2) {
		jw_null(w, "merge");
		return;
	}
	jw_begin_object(w, "merge");
	jw_u64(w, "profiles", m->inputs);
	jw_u64(w, "period_min", m->period_min);
	jw_u64(w, "period_max", m->period_max);
	/* "scaled": counts of each input scaled to meta.period; "raw": periods
	 * differ and could not be normalised; "same": one period */
	jw_string(w, "normalisation", m->raw ? "raw" : m->scaled ? "scaled" : "same");
	jw_bool(w, "rounded", m->inexact);
	jw_end_object(w);
}

static void jcounters(struct json_writer *w, const struct os_counters *c)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
#define F(x) { #x, offsetof(struct os_counters, x) }
		F(samples_total), F(samples_addressed), F(samples_heap), F(samples_attributed),
		F(lost), F(dropped_events), F(bad_events), F(unaddressed_nomem),
		F(unaddressed_clobbered), F(unaddressed_undecodable), F(small_allocs),
		F(small_bytes), F(tracked_allocs), F(tracked_bytes), F(frees), F(gc_count),
		F(moves), F(objects_seen), F(objects_estimated), F(truncated_paths),
		F(samples_java_heap), F(samples_java_attributed), F(samples_jit),
		F(small_outside_tlab),
#undef F
	};
	size_t i;

	jw_begin_object(w, "counters");
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		jw_u64(w, fields[i].name, *(const uint64_t *)((const char *)c + fields[i].off));
	jw_end_object(w);
}

static void jfinite(struct json_writer *w, const char *key, double v)
{
	if (isfinite(v))
		jw_double(w, key, v);
	else
		jw_null(w, key);
}

/* meta.overhead: what objscope cost and the budget; null when
 * not measured (merged profiles, older files). Estimates say so. */
static void joverhead(struct json_writer *w, const struct os_profile *p)
{
	const struct os_overhead *o = &p->ovh;

	if (!(p->analyses & OS_AN_OVERHEAD)) {
		jw_null(w, "overhead");
		return;
	}
	jw_begin_object(w, "overhead");
	jw_string(w, "mode", o->steered ? "budget" : "fixed_rate");
	jfinite(w, "max_overhead_pct", o->max_pct);
	jfinite(w, "spent_pct_estimated", o->spent_pct);
	jfinite(w, "target_cpu_s", o->target_cpu_s);
	jfinite(w, "collector_cpu_s", o->collector_cpu_s);
	jfinite(w, "collector_sampling_s", o->collector_sampling_s);
	jfinite(w, "fixed_pct", o->fixed_pct);
	jfinite(w, "kernel_sampling_s_estimated", o->kernel_s);
	jfinite(w, "hooks_s", o->hooks_s);
	jfinite(w, "profile_build_s", o->build_s);
	jfinite(w, "sample_cost_ns", o->sample_ns);
	jfinite(w, "dropped_sample_cost_ns", o->drop_ns);
	jfinite(w, "kernel_dropped_samples", o->dropped_samples);
	jw_string(w, "sample_cost_source", !o->steered ? "none"
					   : o->calibrated ? "calibrated" : "constant");
	jfinite(w, "calibration_s", o->calibration_s);
	jfinite(w, "sampled_share", o->sampled_share);
	jfinite(w, "samples_per_s", o->samples_per_s);
	jfinite(w, "samples_per_cpu_s", o->samples_per_cpu_s);
	jfinite(w, "settled_s", o->settled_s);
	jfinite(w, "settled_share", o->settled_share);
	jfinite(w, "answer_se_estimated", o->answer_se);
	if (isfinite(o->settled_by))
		jw_string(w, "settled_by", o->settled_by == 2 ? "intervals_apart" : "narrow");
	else
		jw_null(w, "settled_by");
	if (isfinite(o->answer_apart))
		jw_bool(w, "answer_intervals_apart", o->answer_apart != 0);
	else
		jw_null(w, "answer_intervals_apart");
	jfinite(w, "settled_spent_pct_estimated", o->settled_spent_pct);
	jw_end_object(w);
}

static void jmeta(struct json_writer *w, const struct os_profile *p)
{
	const struct os_meta *m = &p->meta;
	const struct os_counters *c = &p->c;
	uint32_t i;

	jw_begin_object(w, "meta");
	jw_begin_array(w, "command");
	for (i = 0; i < m->argc; i++)
		jw_string(w, NULL, report_str(p, m->argv[i]));
	jw_end_array(w);
	jw_begin_array(w, "pids");
	for (i = 0; i < m->npids; i++)
		jw_u64(w, NULL, m->pids[i]);
	jw_end_array(w);
	jw_double(w, "duration_s", m->duration_s);
	jw_string(w, "sampler", report_str(p, m->sampler));
	jw_string(w, "event", report_str(p, m->event));
	jw_u64(w, "period", m->period);
	jw_u64(w, "samples_total", c->samples_total);
	jw_u64(w, "samples_addressed", c->samples_addressed);
	jw_u64(w, "samples_heap", c->samples_heap);
	jw_u64(w, "samples_attributed", c->samples_attributed);
	jw_u64(w, "samples_java_heap", c->samples_java_heap);
	jw_u64(w, "samples_java_attributed", c->samples_java_attributed);
	/* Horvitz-Thompson estimates (Java hybrid / sampled modes), null without */
	if (report_has_est(p)) {
		jw_double(w, "samples_attributed_estimated", p->est.samples_attributed);
		jw_double(w, "samples_java_attributed_estimated", p->est.samples_java_attributed);
	} else {
		jw_null(w, "samples_attributed_estimated");
		jw_null(w, "samples_java_attributed_estimated");
	}
	jw_u64(w, "lost", c->lost);
	jw_u64(w, "dropped_events", c->dropped_events);
	jw_u64(w, "gc_count", c->gc_count);
	/* Beyond the contract. */
	jw_u64(w, "freq", m->freq);
	jw_u64(w, "min_size", m->min_size);
	jw_string(w, "mode", report_str(p, m->mode));
	jw_string(w, "hostname", report_str(p, m->hostname));
	jw_u64(w, "start_time", m->start_time);
	jw_bool(w, "unfinished", p->unfinished); /* a checkpoint: the run's end is missing */
	jmerge(w, p);
	joverhead(w, p);
	jw_begin_array(w, "metrics_measured");
	if (os_profile_metrics(p) & (1u << OS_M_LATENCY))
		jw_string(w, NULL, "latency_cycles");
	if (os_profile_metrics(p) & (1u << OS_M_L1_MISS))
		jw_string(w, NULL, "l1_miss");
	if (os_profile_metrics(p) & (1u << OS_M_REMOTE))
		jw_string(w, NULL, "remote");
	jw_end_array(w);
	jw_begin_array(w, "notes");
	for (i = 0; i < m->nnotes; i++)
		jw_string(w, NULL, report_str(p, m->notes[i]));
	if (report_has_est(p))
		jw_string(w, NULL, REPORT_EST_NOTE);
	if (p->analyses & OS_AN_PATHEST)
		jw_string(w, NULL, REPORT_PATHEST_NOTE);
	jw_end_array(w);
	jw_begin_object(w, "unaddressed");
	jw_u64(w, "no_memory_operand", c->unaddressed_nomem);
	jw_u64(w, "register_clobbered", c->unaddressed_clobbered);
	jw_u64(w, "undecodable", c->unaddressed_undecodable);
	jw_u64(w, "jit_threads", c->samples_jit);
	jw_end_object(w);
	jcounters(w, c);
	jw_end_object(w);
}

static void jfigure(struct json_writer *w, const char *key, bool has, double v)
{
	if (has)
		jw_double(w, key, v);
	else
		jw_null(w, key);
}

/* null unless the replica analysis ran (replica_math.h has the figures). */
static void jreplica(struct json_writer *w, const struct os_profile *p,
		     const struct os_context *c)
{
	struct os_replica_figures f;

	if (!(p->analyses & OS_AN_REPLICAS)) {
		jw_null(w, "replica");
		return;
	}
	os_replica_figures(&c->replica, c->allocations, &f);
	jw_begin_object(w, "replica");
	jfigure(w, "theta", f.has_theta, f.theta);
	jfigure(w, "alpha", f.has_alpha, f.alpha);
	jfigure(w, "omega", f.has_omega, f.omega);
	jfigure(w, "gamma", f.has_gamma, f.gamma);
	jfigure(w, "exact", f.has_exact, f.exact);
	jw_u64(w, "comparisons", f.comparisons);
	jw_u64(w, "alpha_checks", f.alpha_checks);
	jw_u64(w, "exact_objects", c->replica.exact_objects);
	jw_end_object(w);
}

/* null unless recorded with --numa: where the object's sampled pages lay
 * against the accessing CPUs' nodes. */
static void jnuma(struct json_writer *w, const struct os_profile *p, const struct os_context *c)
{
	if (!(p->analyses & OS_AN_NUMA)) {
		jw_null(w, "numa");
		return;
	}
	jw_begin_object(w, "numa");
	jw_u64(w, "local", c->mem.numa_local);
	jw_u64(w, "remote", c->mem.numa_remote);
	jw_u64(w, "unknown", c->mem.numa_unknown);
	jw_u64(w, "machine_nodes", p->numa_nodes);
	jw_begin_array(w, "nodes");
	for (unsigned n = 0; n < 64; n++)
		if (c->mem.numa_nodes & (1ULL << n))
			jw_u64(w, NULL, n);
	jw_end_array(w);
	jw_end_object(w);
}

/* The lifetime entry of context ci, NULL when none was measured. */
static const struct os_lifetime *jlt_of(const struct os_profile *p, uint32_t ci)
{
	if (!(p->analyses & OS_AN_LIFETIMES) || ci >= p->lt.nctx ||
	    p->lt.ctx[ci].kind == OS_LT_NONE)
		return NULL;
	return &p->lt.ctx[ci];
}

static void jadvice(struct json_writer *w, const struct os_lt_figures *f)
{
	if (!f->advice) {
		jw_null(w, "advice");
		return;
	}
	jw_begin_object(w, "advice");
	jw_string(w, "rule", os_lt_advice_name(f->advice));
	jw_string(w, "why", f->why);
	jw_end_object(w);
}

/* null unless lifetimes were measured for the context (lifetime_math.h). */
static void jlifetime(struct json_writer *w, const struct os_profile *p, uint32_t ci)
{
	const struct os_lifetime *l = jlt_of(p, ci);
	bool managed = l && l->kind == OS_LT_MANAGED;
	struct os_lt_figures f;
	uint64_t lo, hi;

	if (!l) {
		jw_null(w, "lifetime");
		return;
	}
	os_lt_figures(l, &f);
	jw_begin_object(w, "lifetime");
	jw_string(w, "kind", managed ? "managed" : "native");
	jw_double(w, "objects", f.objects);
	jw_double(w, "bytes", f.bytes);
	jw_double(w, "ended", f.ended);
	jw_double(w, "live_at_end", f.live);
	jw_double(w, "live_at_end_bytes", f.live_bytes);
	jw_begin_array(w, "histogram");
	for (uint32_t k = 0; k <= f.last_bin; k++) {
		if (l->ended[k] <= 0 && l->live[k] <= 0)
			continue;
		jw_begin_object_flat(w, NULL);
		jw_u64(w, "bin", k);
		if (managed) {
			jw_u64(w, "age", k);
			jw_null(w, "lo_ns");
			jw_null(w, "hi_ns");
		} else {
			os_lt_bin_ns(k, &lo, &hi);
			jw_null(w, "age");
			jw_u64(w, "lo_ns", lo);
			if (hi)
				jw_u64(w, "hi_ns", hi);
			else
				jw_null(w, "hi_ns");
		}
		jw_bool(w, "open_ended", k == OS_LT_BINS - 1);
		jw_double(w, "ended", l->ended[k]);
		jw_double(w, "ended_bytes", l->ended_bytes[k]);
		jw_double(w, "live_at_end", l->live[k]);
		jw_double(w, "live_at_end_bytes", l->live_bytes[k]);
		jw_end_object(w);
	}
	jw_end_array(w);
	/* docs/INTERFACE.md: objects by age (died and live at the end) */
	if (managed) {
		jw_begin_array(w, "age_histogram");
		for (uint32_t k = 0; k <= f.last_bin; k++)
			jw_double(w, NULL, l->ended[k] + l->live[k]);
		jw_end_array(w);
	} else {
		jw_null(w, "age_histogram");
	}
	if (managed && f.has_median)
		jw_u64(w, "median_age", f.median_bin);
	else
		jw_null(w, "median_age");
	if (!managed && f.has_median) {
		os_lt_bin_ns(f.median_bin, &lo, &hi);
		jw_u64(w, "median_lo_ns", lo);
		if (hi)
			jw_u64(w, "median_hi_ns", hi);
		else
			jw_null(w, "median_hi_ns");
	} else {
		jw_null(w, "median_lo_ns");
		jw_null(w, "median_hi_ns");
	}
	if (f.has_young)
		jw_double(w, "young_share", f.young_share);
	else
		jw_null(w, "young_share");
	if (managed) {
		jw_begin_array(w, "surviving_bytes");
		for (uint32_t k = 1; k <= f.last_bin + 1 && k < OS_LT_BINS; k++)
			jw_double(w, NULL, os_lt_surviving_bytes(l, k));
		jw_end_array(w);
	} else {
		jw_null(w, "surviving_bytes");
	}
	if (managed && f.has_promoted) {
		jw_double(w, "promoted", l->promoted);
		jw_double(w, "promoted_bytes", l->promoted_bytes);
	} else {
		jw_null(w, "promoted");
		jw_null(w, "promoted_bytes");
	}
	if (!managed) {
		jw_double(w, "peak_bytes", l->peak_bytes);
		jw_double(w, "peak_s", (double)l->peak_ns / 1e9);
	} else {
		jw_null(w, "peak_bytes");
		jw_null(w, "peak_s");
	}
	jadvice(w, &f);
	jw_end_object(w);
}

/* The run's lifetime figures and every advice that fired; null without
 * the analysis. */
static void jnum_or_null(struct json_writer *w, const char *key, double d)
{
	if (isfinite(d))
		jw_double(w, key, d);
	else
		jw_null(w, key);
}

/* A reuse signature (--reuse, docs/REUSE.md): null when none. */
static void jreuse_sig(struct json_writer *w, const struct os_profile *p, const struct os_reuse *r)
{
	struct os_reuse_figures f;

	if (!r) {
		jw_null(w, "reuse");
		return;
	}
	os_reuse_figures(p, r, &f);
	jw_begin_object(w, "reuse");
	jw_bool(w, "estimate", true);
	jw_string(w, "unit", "bytes");
	jw_begin_array(w, "bins");
	for (unsigned k = 0; k < OS_REUSE_BINS; k++)
		jw_double(w, NULL, r->bins[k]);
	jw_end_array(w);
	jw_double(w, "reuses", f.reuses);
	jw_double(w, "censored", f.censored);
	jnum_or_null(w, "median_bytes", f.median);
	jw_bool(w, "median_censored", isinf(f.median));
	jw_begin_object(w, "miss_ratio");
	for (int k = 0; k < 3; k++)
		jnum_or_null(w, os_reuse_cache_names[k], f.miss[k]);
	jw_end_object(w);
	jw_end_object(w);
}

static void jreuse(struct json_writer *w, const struct os_profile *p, uint32_t ci)
{
	jreuse_sig(w, p, os_reuse_of(p, ci));
}

/* The signatures of every context of one type, summed (Java: per class). */
static void jreuse_type(struct json_writer *w, const struct os_profile *p, uint32_t type)
{
	struct os_reuse sum = { { 0 } };
	bool any = false;

	for (uint32_t ci = 0; ci < p->ncontexts; ci++) {
		const struct os_reuse *r = p->contexts[ci].type == type ? os_reuse_of(p, ci) : NULL;

		for (unsigned k = 0; r && k < OS_REUSE_BINS; k++)
			sum.bins[k] += r->bins[k];
		any |= r != NULL;
	}
	jreuse_sig(w, p, any ? &sum : NULL);
}

/* The reuse model's figures (--reuse): null when not run. */
static void jreuse_model(struct json_writer *w, const struct os_profile *p)
{
	const struct os_reuses *m = &p->ru;

	if (!(p->analyses & OS_AN_REUSE)) {
		jw_null(w, "reuse");
		return;
	}
	jw_begin_object(w, "reuse");
	jw_string(w, "model", "footprint (Xiang et al.) over sampled reuse times; estimates");
	jnum_or_null(w, "bytes_per_ns", m->bytes_per_ns > 0 ? m->bytes_per_ns : NAN);
	jw_string(w, "rate_source",
		  m->rate_source == OS_RU_RATE_OBJECTS ? "objects" : "calibration");
	jnum_or_null(w, "insn_per_ns", m->insn_per_ns > 0 ? m->insn_per_ns : NAN);
	jw_double(w, "mem_share", m->mem_share);
	jnum_or_null(w, "width", m->width > 0 ? m->width : NAN);
	jw_double(w, "trap_ns", m->trap_ns);
	jw_u64(w, "pairs", m->pairs);
	jw_u64(w, "censored", m->censored);
	jw_u64(w, "max_age_ns", m->max_age_ns);
	jw_begin_object(w, "cache_bytes");
	for (int k = 0; k < 3; k++)
		if (m->cache[k])
			jw_u64(w, os_reuse_cache_names[k], m->cache[k]);
		else
			jw_null(w, os_reuse_cache_names[k]);
	jw_end_object(w);
	jw_end_object(w);
}

static void jlifetimes(struct json_writer *w, const struct report_view *v)
{
	const struct os_profile *p = v->p;

	if (!(p->analyses & OS_AN_LIFETIMES)) {
		jw_null(w, "lifetime");
		return;
	}
	jw_begin_object(w, "lifetime");
	jw_bool(w, "from_attach", (p->lt.flags & OS_LTP_F_ATTACH) != 0);
	jw_bool(w, "incomplete", p->c.dropped_events > 0);
	jw_u64(w, "collections", p->lt.collections);
	jw_u64(w, "collections_unaged", p->lt.collections_unjudged);
	jw_u64(w, "objects_unaged", p->lt.unaged);
	{
		uint32_t last = 0;

		for (uint32_t k = 0; k < OS_LT_BINS; k++)
			if (p->lt.survivor_bytes[k] > 0)
				last = k;
		if (last) {
			jw_begin_array(w, "survivor_bytes_by_age");
			for (uint32_t k = 0; k <= last; k++)
				jw_double(w, NULL, p->lt.survivor_bytes[k]);
			jw_end_array(w);
		} else {
			jw_null(w, "survivor_bytes_by_age");
		}
	}
	if (p->lt.peak_bytes > 0) {
		jw_double(w, "native_peak_bytes", p->lt.peak_bytes);
		jw_double(w, "native_peak_s", (double)p->lt.peak_ns / 1e9);
	} else {
		jw_null(w, "native_peak_bytes");
		jw_null(w, "native_peak_s");
	}
	jw_begin_array(w, "advice");
	for (uint32_t r = 0; r < v->nobjects; r++) {
		const struct os_lifetime *l = jlt_of(p, v->objects[r].context);
		struct os_lt_figures f;

		if (!l)
			continue;
		os_lt_figures(l, &f);
		if (!f.advice)
			continue;
		jw_begin_object_flat(w, NULL);
		jw_u64(w, "id", (uint64_t)r + 1);
		jw_string(w, "rule", os_lt_advice_name(f.advice));
		jw_string(w, "why", f.why);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

/* An upper bound of a latency quantile: null when there is none (no
 * latency, or it lies in the last, open bucket). */
static void jlat_max(struct json_writer *w, const char *key, const uint64_t *hist, double q)
{
	uint64_t v = os_lat_quantile_max(hist, q);

	if (v && v != UINT64_MAX)
		jw_u64(w, key, v);
	else
		jw_null(w, key);
}

/* null unless a PMU sampler gave data sources: samples by memory level,
 * data TLB, the latency's mean and quantiles (bucket bounds, estimates). */
static void jmemory(struct json_writer *w, const struct os_profile *p,
		    const struct os_context *c)
{
	const struct os_memsrc *m = &c->mem;
	uint64_t nlat = 0;

	if (!(p->analyses & OS_AN_MEMSRC)) {
		jw_null(w, "memory");
		return;
	}
	jw_begin_object(w, "memory");
	jw_begin_object(w, "levels");
	for (unsigned i = 0; i < OS_LVL_COUNT; i++)
		jw_u64(w, os_mem_level_key[i], m->level[i]);
	jw_end_object(w);
	jw_u64(w, "tlb_known", m->tlb_known);
	jw_u64(w, "tlb_miss", m->tlb_miss);
	for (unsigned b = 0; b < OS_LAT_BUCKETS; b++)
		nlat += m->lat_hist[b];
	jw_u64(w, "latency_samples", nlat);
	if (nlat && (os_profile_metrics(p) & (1u << OS_M_LATENCY)))
		jw_double(w, "latency_mean_cycles", (double)c->metrics[OS_M_LATENCY] / (double)nlat);
	else
		jw_null(w, "latency_mean_cycles");
	jlat_max(w, "latency_p50_max_cycles", m->lat_hist, 0.5);
	jlat_max(w, "latency_p90_max_cycles", m->lat_hist, 0.9);
	jlat_max(w, "latency_p99_max_cycles", m->lat_hist, 0.99);
	jw_end_object(w);
}

/* --per-thread: the object's samples by thread, most first. */
static void jby_thread(struct json_writer *w, const struct report_view *v,
		       const struct report_object *ro)
{
	const struct os_profile *p = v->p;

	jw_begin_array(w, "by_thread");
	for (uint32_t i = 0; i < ro->nthreads; i++) {
		const struct report_by_thread *b = &v->by_thread[ro->first_thread + i];
		const struct os_thread *t = &p->threads[b->thread];

		jw_begin_object(w, NULL);
		jw_u64(w, "pid", t->pid);
		jw_u64(w, "tid", t->tid);
		jw_string(w, "name", report_str(p, t->name));
		jw_u64(w, "samples", b->samples);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* "path": which of the object's figures are exact and which estimated
 * (OS_AN_PATHEST, docs/JAVA.md); null where paths were not estimated. */
static void jpath_est(struct json_writer *w, const struct os_profile *p,
		      const struct os_context *c)
{
	const struct os_pathest *e = &c->pe;

	if (!(p->analyses & OS_AN_PATHEST) || e->kind == OS_PATH_NONE) {
		jw_null(w, "path");
		return;
	}
	jw_begin_object(w, "path");
	jw_string(w, "kind", e->kind == OS_PATH_SITE ? "site" : "class_only");
	/* site: samples on objects seen allocated here; class-only: samples
	 * of objects found by their header, before sharing */
	jw_u64(w, "samples_exact", e->kind == OS_PATH_SITE ? c->samples : 0);
	jw_double(w, "samples_path_estimated", e->path_est);
	jw_u64(w, "objects_seen", e->seen);
	jw_u64(w, "class_objects_seen", e->class_seen);
	jw_u64(w, "class_sites", e->class_sites);
	jfinite(w, "evidence_samples", e->evidence);
	jw_bool(w, "split_by_volume", report_split_by_volume(p, c));
	jw_end_object(w);
}

/* "interval": the 90% interval of samples_estimated and of share, from
 * the estimator's own variance, and whether the next object's overlaps;
 * null where the profile states no variance. */
static void jinterval(struct json_writer *w, const struct report_view *v, uint32_t rank)
{
	const struct os_profile *p = v->p;
	const struct os_context *c = &p->contexts[v->objects[rank].context];
	double se = report_est_se(p, c), sse = report_share_se(p, c), sh = report_share(p, c);
	double lo = c->samples_est - REPORT_Z90 * se, slo = sh - REPORT_Z90 * sse;

	if (!isfinite(se)) {
		jw_null(w, "interval");
		return;
	}
	jw_begin_object(w, "interval");
	jw_double(w, "level", 0.9);
	jw_double(w, "samples_estimated_se", se);
	jw_double(w, "samples_estimated_low", lo > 0 ? lo : 0);
	jw_double(w, "samples_estimated_high", c->samples_est + REPORT_Z90 * se);
	jfinite(w, "share_se", sse);
	jfinite(w, "share_low", slo > 0 ? slo : 0);
	jfinite(w, "share_high", sh + REPORT_Z90 * sse < 1 ? sh + REPORT_Z90 * sse : 1);
	jw_bool(w, "overlaps_next", report_rank_overlaps(v, rank));
	jw_end_object(w);
}

static void jobject(struct json_writer *w, struct frame_cache *fc, const struct report_view *v,
		    uint32_t rank, bool per_thread)
{
	const struct os_profile *p = v->p;
	const struct report_object *ro = &v->objects[rank];
	const struct os_context *c = &p->contexts[ro->context];
	uint32_t i;

	jw_begin_object(w, NULL);
	jw_u64(w, "id", (uint64_t)rank + 1);
	jw_string(w, "type", report_str(p, c->type));
	jstack(w, fc, "alloc_stack", c->stack);
	/* report/maker.h: the frame of alloc_stack that names the object */
	jw_u64(w, "maker", v->maker ? v->maker[ro->context] : 0);
	jw_u64(w, "allocations", c->allocations);
	jw_u64(w, "bytes", c->bytes);
	jw_u64(w, "samples", c->samples);
	if (report_has_est(p))
		jw_double(w, "samples_estimated", c->samples_est);
	else
		jw_null(w, "samples_estimated");
	jw_double(w, "share", report_share(p, c));
	jinterval(w, v, rank);
	jpath_est(w, p, c);
	jmetrics(w, os_profile_metrics(p), c->metrics);
	jw_begin_array(w, "accesses");
	for (i = 0; i < ro->naccesses; i++) {
		const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];

		jw_begin_object(w, NULL);
		jstack(w, fc, "stack", a->stack);
		jw_u64(w, "samples", a->samples);
		if (report_has_est(p))
			jw_double(w, "samples_estimated", a->samples_est);
		else
			jw_null(w, "samples_estimated");
		if (p->analyses & OS_AN_PATHEST)
			jw_double(w, "samples_path_estimated", a->path_est);
		else
			jw_null(w, "samples_path_estimated");
		jmetrics(w, os_profile_metrics(p), a->metrics);
		jw_end_object(w);
	}
	jw_end_array(w);
	if (per_thread)
		jby_thread(w, v, ro);
	jreplica(w, p, c);
	jlifetime(w, p, ro->context);
	jreuse(w, p, ro->context);
	jnuma(w, p, c);
	jmemory(w, p, c);
	jw_end_object(w);
}

/* tables: an object without samples (report_context_unsampled) and without
 * lifetime figures is left out unless -v, as the text report leaves it out;
 * under --sort bytes/allocations every object is kept. */
static bool omitted(const struct report_view *v, const struct report_opts *o, uint32_t rank)
{
	uint32_t ci = v->objects[rank].context;

	return o->tables && !o->verbose && v->sort == REPORT_SORT_SAMPLES &&
	       report_context_unsampled(v->p, ci) && !jlt_of(v->p, ci);
}

int report_json_write(const struct report_view *v, const struct report_opts *o, FILE *out,
		      bool html_safe)
{
	const struct os_profile *p = v->p;
	struct json_writer *w = malloc(sizeof(*w));
	struct frame_cache *fc = calloc(1, sizeof(*fc));
	uint32_t i, n, shown, left_out = 0;
	int ret = -ENOMEM;

	if (!w || !fc)
		goto out;
	fc->tables = o->tables;
	if (cache_init(fc, p, html_safe))
		goto out;
	jw_init(w, out, html_safe);
	jw_begin_object(w, NULL);
	jw_string(w, "format", "objscope-report");
	jw_u64(w, "version", 2);
	jmeta(w, p);

	n = v->nobjects;
	if (o->top_set && o->top && o->top < n)
		n = o->top;
	jw_u64(w, "objects_total", v->nobjects);
	/* report --tid/--comm/--time/--include/--exclude: the options; null: none */
	if (o->filter.desc[0])
		jw_string(w, "filter", o->filter.desc);
	else
		jw_null(w, "filter");
	jw_begin_array(w, "objects");
	/* Stop early on a write error (disk full): the caller reports it. */
	for (i = 0, shown = 0; i < v->nobjects && shown < n && !w->err; i++) {
		if (omitted(v, o, i)) {
			left_out++;
			continue;
		}
		jobject(w, fc, v, i, o->per_thread);
		shown++;
	}
	for (; i < v->nobjects; i++)
		left_out += omitted(v, o, i);
	jw_end_array(w);
	/* tables: objects without samples left out (unless -v), counted */
	if (o->tables)
		jw_u64(w, "objects_without_samples_left_out", left_out);
	jlifetimes(w, v);
	jreuse_model(w, p);

	jw_begin_array(w, "types");
	for (i = 0; i < v->ntypes; i++) {
		jw_begin_object(w, NULL);
		jw_string(w, "type", report_str(p, v->types[i].type));
		jw_u64(w, "samples", v->types[i].samples);
		if (report_has_est(p))
			jw_double(w, "samples_estimated", v->types[i].samples_est);
		else
			jw_null(w, "samples_estimated");
		jreuse_type(w, p, v->types[i].type);
		jw_end_object(w);
	}
	jw_end_array(w);

	jw_begin_array(w, "threads");
	for (i = 0; i < v->nthreads; i++) {
		const struct os_thread *t = &p->threads[v->threads[i]];

		jw_begin_object(w, NULL);
		jw_string(w, "kind", report_thread_kind(t->kind));
		jw_string(w, "name", report_str(p, t->name));
		jw_u64(w, "pid", t->pid);
		jw_u64(w, "tid", t->tid);
		jw_u64(w, "samples", t->samples);
		jw_end_object(w);
	}
	jw_end_array(w);
	if (fc->tables)
		jtables(w, fc);
	jw_end_object(w);
	ret = jw_finish(w);
out:
	if (fc)
		cache_free(fc);
	free(fc);
	free(w);
	return ret;
}

int report_render_json(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	int ret = report_json_write(v, o, out, false);

	/* A write error is the caller's to report (it checks the stream). */
	if (ret && ferror(out))
		return 0;
	if (!ret)
		fputc('\n', out);
	return ret;
}
