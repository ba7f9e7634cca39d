/* test_diff.c - `report --diff` (report/diff.c) on synthetic profiles:
 * objects matched across profiles whose string and frame tables differ,
 * grew / shrank / new / gone, ranking by |delta|, normalisation of samples
 * taken at different periods, and the three renderings. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/profile.h"
#include "report/diff.h"

struct obj {
	const char *site; /* leaf frame of the allocation path */
	uint64_t samples, bytes;
};

/* A profile with the objects given, each allocated at SITE < main; the
 * strings are interned in the order given, so two profiles listing their
 * objects in different orders have different ids for the same frames. */
static struct os_profile *mk(uint64_t period, const struct obj *o, size_t n)
{
	struct os_profile *p = os_profile_new();
	const char *argv[] = { "prog", "--flag", NULL };
	uint64_t total = 0;

	cr_assert_not_null(p);
	cr_assert_eq(os_profile_set_argv(p, 2, (char *const *)argv), 0);
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.period = period;
	p->meta.duration_s = 2.0;
	for (size_t i = 0; i < n; i++) {
		struct os_frame f = { .kind = OS_FRAME_NATIVE,
				      .module = os_profile_string(p, "/bin/prog"),
				      .file = os_profile_string(p, "prog.c"), .line = 10,
				      .near_sym = OS_NONE, .build_id = OS_NONE };
		uint32_t ids[2];

		f.name = os_profile_string(p, o[i].site);
		ids[0] = os_profile_frame(p, &f);
		f.name = os_profile_string(p, "main");
		f.line = 99;
		ids[1] = os_profile_frame(p, &f);
		cr_assert_neq(os_profile_add_context(p, &(struct os_context){
				      .type = os_profile_string(p, "buf_t"),
				      .stack = os_profile_stack(p, ids, 2), .allocations = 1,
				      .bytes = o[i].bytes, .samples = o[i].samples }),
			      OS_NONE);
		total += o[i].samples;
	}
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = total;
	p->c.samples_attributed = total;
	return p;
}

static const struct diff_row *row_of(const struct report_diff *d, const char *site)
{
	char buf[256];

	for (uint32_t i = 0; i < d->nrows; i++) {
		const struct os_context *c = &d->m->contexts[d->rows[i].context];

		os_profile_frame_str(d->m, d->m->stacks[c->stack].frames[0], buf, sizeof(buf));
		if (strncmp(buf, site, strlen(site)) == 0 && buf[strlen(site)] == ' ')
			return &d->rows[i];
	}
	cr_assert_fail("no row for %s", site);
	return NULL;
}

static const struct obj old_objs[] = {
	{ "grows", 30, 100 }, { "shrinks", 60, 200 }, { "goes", 10, 300 },
};
/* other order, other ids; "comes" is new */
static const struct obj new_objs[] = {
	{ "comes", 20, 400 }, { "shrinks", 20, 250 }, { "grows", 60, 100 },
};

Test(diff, grew_shrank_new_gone_ranked_by_abs_delta)
{
	struct os_profile *a = mk(1000, old_objs, 3), *b = mk(1000, new_objs, 3);
	struct report_diff d;
	const struct diff_row *r;

	cr_assert_eq(report_diff_build(&d, a, "old.data", b, "new.data"), 0);
	cr_assert_eq(d.nrows, 4, "4 distinct objects, got %u", d.nrows);
	cr_assert_not(d.scaled);
	r = row_of(&d, "grows");
	cr_assert_eq(r->status, DIFF_GREW);
	cr_assert_float_eq(r->share_old, 0.3, 1e-9);
	cr_assert_float_eq(r->share_new, 0.6, 1e-9);
	cr_assert_float_eq(r->delta_pp, 30.0, 1e-9);
	cr_assert_float_eq(r->samples_old, 30.0, 1e-9);
	cr_assert_float_eq(r->samples_new, 60.0, 1e-9);
	r = row_of(&d, "shrinks");
	cr_assert_eq(r->status, DIFF_SHRANK);
	cr_assert_float_eq(r->delta_pp, -40.0, 1e-9);
	cr_assert_eq(r->bytes_old, 200);
	cr_assert_eq(r->bytes_new, 250);
	r = row_of(&d, "comes");
	cr_assert_eq(r->status, DIFF_NEW);
	cr_assert(!r->in_old && r->in_new);
	cr_assert_float_eq(r->delta_pp, 20.0, 1e-9);
	cr_assert_eq(r->bytes_old, 0);
	r = row_of(&d, "goes");
	cr_assert_eq(r->status, DIFF_GONE);
	cr_assert_float_eq(r->delta_pp, -10.0, 1e-9);
	cr_assert_eq(r->allocs_new, 0);
	/* |delta| order: shrinks 40, grows 30, comes 20, goes 10 */
	cr_assert_eq(&d.rows[0], row_of(&d, "shrinks"));
	cr_assert_eq(&d.rows[1], row_of(&d, "grows"));
	cr_assert_eq(&d.rows[2], row_of(&d, "comes"));
	cr_assert_eq(&d.rows[3], row_of(&d, "goes"));
	report_diff_free(&d);
	os_profile_free(a);
	os_profile_free(b);
}

/* NEW at twice OLD's period: its samples count double at OLD's period;
 * shares (ratios within each profile) are the same as unscaled. */
Test(diff, different_periods_normalised)
{
	struct os_profile *a = mk(1000, old_objs, 3), *b = mk(2000, new_objs, 3);
	struct report_diff d;
	const struct diff_row *r;

	cr_assert_eq(report_diff_build(&d, a, "old.data", b, "new.data"), 0);
	cr_assert(d.scaled);
	cr_assert_not(d.raw);
	cr_assert_eq(d.period, 1000);
	r = row_of(&d, "grows");
	cr_assert_float_eq(r->samples_old, 30.0, 1e-9);
	cr_assert_float_eq(r->samples_new, 120.0, 1e-9);
	cr_assert_float_eq(r->delta_pp, 30.0, 1e-9);
	report_diff_free(&d);
	/* and the other way round: OLD's counts scaled */
	cr_assert_eq(report_diff_build(&d, b, "new.data", a, "old.data"), 0);
	cr_assert_eq(d.period, 1000);
	r = row_of(&d, "grows");
	cr_assert_float_eq(r->samples_old, 120.0, 1e-9);
	cr_assert_float_eq(r->samples_new, 30.0, 1e-9);
	cr_assert_eq(r->status, DIFF_SHRANK);
	report_diff_free(&d);
	os_profile_free(a);
	os_profile_free(b);
}

static char *render(const struct report_diff *d, const char *fmt, uint32_t top, bool top_set)
{
	struct report_opts o = { .format = fmt, .top = top, .top_set = top_set };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(report_diff_render(&d->view, &o, f), 0);
	cr_assert_eq(fclose(f), 0);
	return buf;
}

Test(diff, renderings)
{
	struct os_profile *a = mk(1000, old_objs, 3), *b = mk(2000, new_objs, 3);
	struct report_diff d;
	json_object *j, *objs, *o0, *v;
	char *s;

	cr_assert_eq(report_diff_build(&d, a, "old.data", b, "new.data"), 0);
	s = render(&d, "text", 20, false);
	cr_assert(strstr(s, "# OLD old.data: prog --flag"), "%s", s);
	cr_assert(strstr(s, "samples normalised to period 1000"), "%s", s);
	cr_assert(strstr(s, " -40.0pp") && strstr(s, "shrank  buf_t at shrinks (prog.c:10) < main"),
		  "%s", s);
	cr_assert(strstr(s, "gone") && strstr(s, "new "), "%s", s);
	cr_assert(strstr(s, "shrank") < strstr(s, "grew"), "not ranked by |delta|:\n%s", s);
	free(s);
	s = render(&d, "text", 1, true);
	cr_assert_null(strstr(s, "grew"), "--top 1 shows one object:\n%s", s);
	cr_assert(strstr(s, "3 more objects"), "%s", s);
	free(s);

	s = render(&d, "json", 20, false);
	j = json_tokener_parse(s);
	cr_assert_not_null(j, "not JSON:\n%s", s);
	cr_assert(json_object_object_get_ex(j, "objects", &objs));
	cr_assert_eq(json_object_array_length(objs), 4, "json shows all without --top");
	o0 = json_object_array_get_idx(objs, 0);
	cr_assert(json_object_object_get_ex(o0, "status", &v));
	cr_assert_str_eq(json_object_get_string(v), "shrank");
	cr_assert(json_object_object_get_ex(o0, "allocation_path", &v));
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)),
			 "shrinks (prog.c:10)");
	cr_assert(json_object_object_get_ex(o0, "samples_new", &v));
	cr_assert_float_eq(json_object_get_double(v), 40.0, 1e-9);
	cr_assert(json_object_object_get_ex(j, "normalisation", &v));
	cr_assert_str_eq(json_object_get_string(v), "scaled");
	json_object_put(j);
	free(s);

	s = render(&d, "html", 20, false);
	cr_assert(strstr(s, "<table id=\"diff\""), "%s", s);
	cr_assert_eq(strstr(s, "<tr class=\"shrank\">") != NULL, 1);
	cr_assert(strstr(s, "shrinks (prog.c:10)"));
	cr_assert_null(strstr(s, "src=\""), "nothing fetched");
	free(s);
	report_diff_free(&d);
	os_profile_free(a);
	os_profile_free(b);
}

/* An object's type matters: the same path with another type is another
 * object (as the merge folds them). */
Test(diff, type_distinguishes_objects)
{
	struct os_profile *a = mk(1000, old_objs, 1), *b = mk(1000, old_objs, 1);
	struct report_diff d;

	b->contexts[0].type = os_profile_string(b, "other_t");
	cr_assert_eq(report_diff_build(&d, a, "a", b, "b"), 0);
	cr_assert_eq(d.nrows, 2);
	cr_assert(d.rows[0].status == DIFF_NEW || d.rows[0].status == DIFF_GONE);
	cr_assert(d.rows[1].status == DIFF_NEW || d.rows[1].status == DIFF_GONE);
	report_diff_free(&d);
	os_profile_free(a);
	os_profile_free(b);
}
