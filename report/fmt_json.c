/* fmt_json.c - `report --format json`, version 1 (INTERFACE.md). Fields
 * beyond the contract: meta.freq/min_size/mode/hostname/start_time/notes,
 * meta.counters (every os_counters field), meta.unaddressed, objects_total,
 * per-access metrics, thread pid/tid. */
#include <errno.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "report/formats.h"

#define MAX_FRAME 1024

static json_object *jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static json_object *ju64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static json_object *jstack(const struct os_profile *p, uint32_t stack)
{
	json_object *a = json_object_new_array();
	char buf[MAX_FRAME];
	uint32_t i;

	if (!a || stack == OS_NONE)
		return a;
	for (i = 0; i < p->stacks[stack].nframes; i++) {
		os_profile_frame_str(p, p->stacks[stack].frames[i], buf, sizeof(buf));
		json_object_array_add(a, jstr(buf));
	}
	return a;
}

static json_object *jmetrics(const uint64_t *m)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "latency_cycles", ju64(m[OS_M_LATENCY]));
	json_object_object_add(o, "l1_miss", ju64(m[OS_M_L1_MISS]));
	json_object_object_add(o, "remote", ju64(m[OS_M_REMOTE]));
	return o;
}

static json_object *jcounters(const struct os_counters *c)
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
		F(samples_java_heap), F(samples_java_attributed),
#undef F
	};
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		json_object_object_add(
			o, fields[i].name,
			ju64(*(const uint64_t *)((const char *)c + fields[i].off)));
	return o;
}

static json_object *jmeta(const struct os_profile *p)
{
	const struct os_meta *m = &p->meta;
	const struct os_counters *c = &p->c;
	json_object *o = json_object_new_object(), *a, *u;
	uint32_t i;

	a = json_object_new_array();
	for (i = 0; i < m->argc; i++)
		json_object_array_add(a, jstr(report_str(p, m->argv[i])));
	json_object_object_add(o, "command", a);
	a = json_object_new_array();
	for (i = 0; i < m->npids; i++)
		json_object_array_add(a, json_object_new_int64(m->pids[i]));
	json_object_object_add(o, "pids", a);
	json_object_object_add(o, "duration_s", json_object_new_double(m->duration_s));
	json_object_object_add(o, "sampler", jstr(report_str(p, m->sampler)));
	json_object_object_add(o, "event", jstr(report_str(p, m->event)));
	json_object_object_add(o, "period", ju64(m->period));
	json_object_object_add(o, "samples_total", ju64(c->samples_total));
	json_object_object_add(o, "samples_addressed", ju64(c->samples_addressed));
	json_object_object_add(o, "samples_heap", ju64(c->samples_heap));
	json_object_object_add(o, "samples_attributed", ju64(c->samples_attributed));
	json_object_object_add(o, "samples_java_heap", ju64(c->samples_java_heap));
	json_object_object_add(o, "samples_java_attributed", ju64(c->samples_java_attributed));
	json_object_object_add(o, "lost", ju64(c->lost));
	json_object_object_add(o, "dropped_events", ju64(c->dropped_events));
	json_object_object_add(o, "gc_count", ju64(c->gc_count));
	/* Beyond the contract. */
	json_object_object_add(o, "freq", ju64(m->freq));
	json_object_object_add(o, "min_size", ju64(m->min_size));
	json_object_object_add(o, "mode", jstr(report_str(p, m->mode)));
	json_object_object_add(o, "hostname", jstr(report_str(p, m->hostname)));
	json_object_object_add(o, "start_time", ju64(m->start_time));
	a = json_object_new_array();
	for (i = 0; i < m->nnotes; i++)
		json_object_array_add(a, jstr(report_str(p, m->notes[i])));
	json_object_object_add(o, "notes", a);
	u = json_object_new_object();
	json_object_object_add(u, "no_memory_operand", ju64(c->unaddressed_nomem));
	json_object_object_add(u, "register_clobbered", ju64(c->unaddressed_clobbered));
	json_object_object_add(u, "undecodable", ju64(c->unaddressed_undecodable));
	json_object_object_add(o, "unaddressed", u);
	json_object_object_add(o, "counters", jcounters(c));
	return o;
}

static json_object *jobject(const struct report_view *v, uint32_t rank)
{
	const struct os_profile *p = v->p;
	const struct report_object *ro = &v->objects[rank];
	const struct os_context *c = &p->contexts[ro->context];
	json_object *o = json_object_new_object(), *acc;
	uint32_t i;

	json_object_object_add(o, "id", json_object_new_int64((int64_t)rank + 1));
	json_object_object_add(o, "type", jstr(report_str(p, c->type)));
	json_object_object_add(o, "alloc_stack", jstack(p, c->stack));
	json_object_object_add(o, "allocations", ju64(c->allocations));
	json_object_object_add(o, "bytes", ju64(c->bytes));
	json_object_object_add(o, "samples", ju64(c->samples));
	json_object_object_add(o, "share",
			       json_object_new_double(
				       report_ratio(c->samples, p->c.samples_attributed)));
	json_object_object_add(o, "metrics", jmetrics(c->metrics));
	acc = json_object_new_array();
	for (i = 0; i < ro->naccesses; i++) {
		const struct os_access *a = &p->accesses[v->accesses[ro->first_access + i]];
		json_object *x = json_object_new_object();

		json_object_object_add(x, "stack", jstack(p, a->stack));
		json_object_object_add(x, "samples", ju64(a->samples));
		json_object_object_add(x, "metrics", jmetrics(a->metrics));
		json_object_array_add(acc, x);
	}
	json_object_object_add(o, "accesses", acc);
	/* Analyses not run yet. */
	json_object_object_add(o, "replica", NULL);
	json_object_object_add(o, "lifetime", NULL);
	json_object_object_add(o, "reuse", NULL);
	json_object_object_add(o, "numa", NULL);
	return o;
}

int report_render_json(const struct report_view *v, const struct report_opts *o, FILE *out)
{
	const struct os_profile *p = v->p;
	json_object *root = json_object_new_object(), *a;
	const char *text;
	uint32_t i, n;

	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "format", jstr("objscope-report"));
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "meta", jmeta(p));

	n = v->nobjects;
	if (o->top_set && o->top && o->top < n)
		n = o->top;
	json_object_object_add(root, "objects_total", json_object_new_int64(v->nobjects));
	a = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(a, jobject(v, i));
	json_object_object_add(root, "objects", a);

	a = json_object_new_array();
	for (i = 0; i < v->ntypes; i++) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "type", jstr(report_str(p, v->types[i].type)));
		json_object_object_add(t, "samples", ju64(v->types[i].samples));
		json_object_array_add(a, t);
	}
	json_object_object_add(root, "types", a);

	a = json_object_new_array();
	for (i = 0; i < v->nthreads; i++) {
		const struct os_thread *t = &p->threads[v->threads[i]];
		json_object *x = json_object_new_object();

		json_object_object_add(x, "kind", jstr(report_thread_kind(t->kind)));
		json_object_object_add(x, "name", jstr(report_str(p, t->name)));
		json_object_object_add(x, "pid", json_object_new_int64(t->pid));
		json_object_object_add(x, "tid", json_object_new_int64(t->tid));
		json_object_object_add(x, "samples", ju64(t->samples));
		json_object_array_add(a, x);
	}
	json_object_object_add(root, "threads", a);

	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_SPACED |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		json_object_put(root);
		return -ENOMEM;
	}
	fputs(text, out);
	fputc('\n', out);
	json_object_put(root);
	return 0;
}
