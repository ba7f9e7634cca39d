/* fmt_text.c - the default text report, in the spirit of `perf report`:
 * a header saying what was measured and how well, then the objects ranked by
 * access samples, each with its allocation path and its top access paths. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "report/formats.h"

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

/* A command argument, shell-quoted when it holds anything but plain characters. */
static void print_arg(const char *arg, const char *sep, FILE *out)
{
	const char *c;

	if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789-_+=/.,:@%") == strlen(arg)) {
		fprintf(out, "%s%s", sep, arg);
		return;
	}
	fprintf(out, "%s'", sep);
	for (c = arg; *c; c++) {
		if (*c == '\'')
			fputs("'\\''", out);
		else
			fputc(*c, out);
	}
	fputc('\'', out);
}

static double pct(uint64_t part, uint64_t whole)
{
	return 100.0 * report_ratio(part, whole);
}

static void print_header(const struct os_profile *p, FILE *out)
{
	const struct os_meta *m = &p->meta;
	const struct os_counters *c = &p->c;
	char b1[32], b2[32];
	uint32_t i;

	fprintf(out, "# objscope report\n");
	fprintf(out, "# command:     ");
	for (i = 0; i < m->argc; i++)
		print_arg(report_str(p, m->argv[i]), i ? " " : "", out);
	fprintf(out, "%s\n", m->argc ? "" : "(unknown)");
	fprintf(out, "# pids:        ");
	for (i = 0; i < m->npids && i < PIDS_SHOWN; i++)
		fprintf(out, "%s%" PRIu32, i ? ", " : "", m->pids[i]);
	if (m->npids > PIDS_SHOWN)
		fprintf(out, ", ... (%" PRIu32 " processes)", m->npids);
	fprintf(out, "%s\n", m->npids ? "" : "(none)");
	fprintf(out, "# duration:    %.2f s", m->duration_s);
	if (m->mode != OS_NONE)
		fprintf(out, " (%s)", report_str(p, m->mode));
	if (m->hostname != OS_NONE)
		fprintf(out, " on %s", report_str(p, m->hostname));
	if (m->start_time) {
		time_t t = (time_t)m->start_time;
		struct tm tm;
		char when[32];

		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
			fprintf(out, ", started %s", when);
	}
	fprintf(out, "\n");
	fprintf(out, "# sampler:     %s, event %s", m->sampler != OS_NONE ? report_str(p, m->sampler) : "(unknown)",
		m->event != OS_NONE ? report_str(p, m->event) : "(unknown)");
	if (m->period)
		fprintf(out, ", period %" PRIu64, m->period);
	if (m->freq)
		fprintf(out, ", %" PRIu64 " samples/s per thread requested", m->freq);
	fprintf(out, "\n");
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
	if (c->samples_total > c->samples_addressed)
		fprintf(out, "# no address:  %" PRIu64 " no memory operand, %" PRIu64
			     " address register overwritten, %" PRIu64 " undecodable\n",
			c->unaddressed_nomem, c->unaddressed_clobbered, c->unaddressed_undecodable);
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
	if (c->truncated_paths)
		fprintf(out, "#              %" PRIu64 " allocation paths cut at the frame limit\n",
			c->truncated_paths);
	fprintf(out, "# gc:          %" PRIu64 " collections, %" PRIu64 " object moves applied\n",
		c->gc_count, c->moves);
	for (i = 0; i < m->nnotes; i++)
		fprintf(out, "# note:        %s\n", report_str(p, m->notes[i]));
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
		fprintf(out, "%s%s\n", indent, buf);
	}
	if (n > max)
		fprintf(out, "%s... %" PRIu32 " more frame%s\n", indent, n - max,
			n - max == 1 ? "" : "s");
}

static void print_object(const struct report_view *v, uint32_t rank, FILE *out)
{
	const struct os_profile *p = v->p;
	const struct report_object *ro = &v->objects[rank];
	const struct os_context *c = &p->contexts[ro->context];
	const char *type = report_str(p, c->type);
	uint64_t rest = 0;
	char bytes[32];
	uint32_t i;

	human_bytes(c->bytes, bytes, sizeof(bytes));
	fprintf(out, "%6" PRIu32 "  %6.2f%%  %9" PRIu64 "  %11" PRIu64 "  %10s  %s\n", rank + 1,
		pct(c->samples, p->c.samples_attributed), c->samples, c->allocations, bytes,
		*type ? type : "(unknown type)");
	fprintf(out, "        allocated at:\n");
	print_stack(p, c->stack, ALLOC_FRAMES, "            ", out);
	if (!ro->naccesses)
		return;
	fprintf(out, "        accessed from:\n");
	for (i = 0; i < ro->naccesses; i++) {
		const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];

		if (i >= ACCESS_PATHS) {
			rest += a->samples;
			continue;
		}
		fprintf(out, "            %6.2f%%  %" PRIu64 " sample%s\n", pct(a->samples, c->samples),
			a->samples, a->samples == 1 ? "" : "s");
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
	fprintf(out, "\n# Threads by access samples (%" PRIu32 " threads):\n", v->nthreads);
	fprintf(out, "#  samples  kind        pid       tid  name\n");
	for (i = 0; i < v->nthreads && i < THREADS_SHOWN; i++) {
		const struct os_thread *t = &p->threads[v->threads[i]];

		fprintf(out, "%10" PRIu64 "  %-6s %8" PRIu32 "  %8" PRIu32 "  %s\n", t->samples,
			report_thread_kind(t->kind), t->pid, t->tid, report_str(p, t->name));
	}
	if (v->nthreads > THREADS_SHOWN)
		fprintf(out, "           ... %" PRIu32 " more threads\n",
			v->nthreads - THREADS_SHOWN);
}

int report_render_text(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct os_profile *p = v->p;
	uint32_t i, n = v->nobjects;
	char why[512];

	if (o->top && o->top < n)
		n = o->top;
	print_header(p, out);
	fprintf(out, "\n");
	if (!p->c.samples_attributed) {
		report_why_empty(p, why, sizeof(why));
		fprintf(out, "no samples were attributed to objects: %s\n", why);
	}
	if (v->nobjects) {
		fprintf(out, "%s# Objects (allocation contexts) ranked by access samples, %" PRIu32
			     " of %" PRIu32 " shown:\n",
			p->c.samples_attributed ? "" : "\n", n, v->nobjects);
		fprintf(out, "# rank    share    samples  allocations       bytes  type\n");
		for (i = 0; i < n; i++) {
			fprintf(out, "\n");
			print_object(v, i, out);
		}
	}
	print_threads(v, out);
	return 0;
}
