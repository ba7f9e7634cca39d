/* filters.c - end-to-end tests of `objscope report --tid/--comm/--time` and
 * --per-thread on a recorded multi-threaded run (tests/fixtures/mt_readers.c:
 * the main thread fills the blocks, then two reader threads read them). */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/profile.h"
#include "tests/e2e/helpers.h"
#include "tests/e2e/stats.h"

static char *tmp;

static void setup(void)
{
	tmp = e2e_suite_setup();
}

static void teardown(void)
{
	e2e_suite_teardown(&tmp);
}

TestSuite(e2e_filters, .init = setup, .fini = teardown, .timeout = 120);

/* `objscope report --format json --per-thread OPTS... PROFILE`, parsed. */
static json_object *report(const char *profile, const char *o1, const char *o2, const char *o3,
			   const char *o4)
{
	const char *argv[] = { E2E_OBJSCOPE, "report", "--format", "json", "--per-thread",
			       profile, o1, o2, o3, o4, NULL };
	struct e2e_result res;
	json_object *j;

	cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
	cr_assert_eq(res.status, 0, "report %s %s: exit %d: %s", o1 ? o1 : "", o2 ? o2 : "",
		     res.status, res.err);
	j = json_tokener_parse(res.out);
	cr_assert_not_null(j, "report printed no JSON");
	e2e_result_free(&res);
	return j;
}

/* Samples of the object allocated in fn (0 when it is not listed). */
static int64_t obj_samples(json_object *r, const char *fn, json_object **obj)
{
	json_object *objs = e2e_get(r, "objects");

	for (size_t i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i);

		if (e2e_stack_has(o, fn, 3)) {
			if (obj)
				*obj = o;
			return e2e_get_int(o, "samples");
		}
	}
	return 0;
}

/* The object's samples on thread tid in its by_thread (0 when none). */
static int64_t on_thread(json_object *o, int64_t tid)
{
	json_object *bt = o ? e2e_get(o, "by_thread") : NULL;

	for (size_t i = 0; bt && i < json_object_array_length(bt); i++)
		if (e2e_get_int(json_object_array_get_idx(bt, i), "tid") == tid)
			return e2e_get_int(json_object_array_get_idx(bt, i), "samples");
	return 0;
}

static int64_t attributed(json_object *r)
{
	int64_t n = 0;
	json_object *objs = e2e_get(r, "objects");

	for (size_t i = 0; i < json_object_array_length(objs); i++)
		n += e2e_get_int(json_object_array_get_idx(objs, i), "samples");
	return n;
}

static double est_of(json_object *o)
{
	json_object *e = NULL;

	json_object_object_get_ex(o, "samples_estimated", &e);
	return e && !json_object_is_type(e, json_type_null) ? json_object_get_double(e) : -1;
}

/* A filter that keeps every sample gives the main ranking exactly: the
 * same objects in the same order, the same samples, estimates and shares,
 * each access path's too. */
static void same_ranking(json_object *all, json_object *r, const char *what)
{
	json_object *oa = e2e_get(all, "objects"), *ob = e2e_get(r, "objects");

	cr_assert_eq(json_object_array_length(ob), json_object_array_length(oa),
		     "%s: %zu objects, the ranking has %zu", what, json_object_array_length(ob),
		     json_object_array_length(oa));
	for (size_t i = 0; i < json_object_array_length(oa); i++) {
		json_object *a = json_object_array_get_idx(oa, i), *b = json_object_array_get_idx(ob, i);
		json_object *aa = e2e_get(a, "accesses"), *ab = e2e_get(b, "accesses");

		cr_expect_eq(e2e_get_int(b, "id"), e2e_get_int(a, "id"), "%s: rank %zu", what, i + 1);
		cr_expect_eq(e2e_get_int(b, "samples"), e2e_get_int(a, "samples"),
			     "%s: #%zu samples", what, i + 1);
		cr_expect(fabs(est_of(b) - est_of(a)) <= 1e-9 * (1 + fabs(est_of(a))),
			  "%s: #%zu estimate %.9g, the ranking's %.9g", what, i + 1, est_of(b),
			  est_of(a));
		cr_expect(fabs(e2e_get_double(b, "share") - e2e_get_double(a, "share")) <= 1e-9,
			  "%s: #%zu share %.9g, the ranking's %.9g", what, i + 1,
			  e2e_get_double(b, "share"), e2e_get_double(a, "share"));
		cr_assert_eq(json_object_array_length(ab), json_object_array_length(aa));
		for (size_t k = 0; k < json_object_array_length(aa); k++) {
			json_object *x = json_object_array_get_idx(aa, k), *y = json_object_array_get_idx(ab, k);

			cr_expect_eq(e2e_get_int(y, "samples"), e2e_get_int(x, "samples"));
			cr_expect(fabs(est_of(y) - est_of(x)) <= 1e-9 * (1 + fabs(est_of(x))),
				  "%s: #%zu access %zu estimate %.9g, the ranking's %.9g", what, i + 1,
				  k + 1, est_of(y), est_of(x));
		}
	}
}

/* No share above 100%: an object's share of what remains, and each access
 * path's estimate within its object's (a site's estimated part aside, whose
 * paths share its class's estimate). */
static void shares_bounded(json_object *r, const char *what)
{
	json_object *objs = e2e_get(r, "objects");

	for (size_t i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i), *acc = e2e_get(o, "accesses");
		json_object *path = NULL;
		double sum = 0;

		cr_expect(e2e_get_double(o, "share") <= 1 + 1e-9, "%s: #%zu share %.4f", what, i + 1,
			  e2e_get_double(o, "share"));
		json_object_object_get_ex(o, "path", &path);
		if (est_of(o) < 0 || (path && !json_object_is_type(path, json_type_null)))
			continue;
		for (size_t k = 0; k < json_object_array_length(acc); k++)
			sum += est_of(json_object_array_get_idx(acc, k));
		cr_expect(sum <= est_of(o) * (1 + 1e-9) + 1e-9,
			  "%s: #%zu's access paths estimate %.4f, the object %.4f (share > 100%%)",
			  what, i + 1, sum, est_of(o));
	}
}

Test(e2e_filters, tid_comm_and_time_select_the_samples)
{
	static const char *const scales[] = { "0.3", "0.6", "1.2", "2.4" };
	const char *argv[] = { E2E_FIXTURE("mt_readers"), NULL, NULL };
	/* a fixed rate: the budget (the default) samples the first 2 CPU-seconds
	 * in full and then little where a sample is dear (38 us on a
	 * Firecracker guest; under ASan the readers' last second had no sample
	 * in 1 run of 3, and the second half of the run none) */
	const char *opts[] = { "-F", "1000", NULL };
	char *profile = e2e_path(tmp, "mt.data");
	json_object *all, *r, *blocks = NULL, *table = NULL, *threads;
	int64_t main_tid = -1, reader_tid = -1, total = 0, a, b, on_reader = 0;
	/* Statistical assertions (tests/README.md), each false-failure chance
	 * <= 1e-4: of all attributed samples, reader-0's on the blocks >= 1/4
	 * (true share >= 0.4: two equal readers, the main thread's fill
	 * ~6%; measured 0.49-0.50), the main thread's on the blocks <= 1/4
	 * (true <= 0.05; measured 0.003), some in the run's second half (true
	 * >= 0.3: the readers run to the end); of reader-0's attributed
	 * samples, the blocks' >= 0.8 (true >= 0.95; measured 0.97). A run
	 * at SCALE 0.3 gives ~2,400 samples here; the work doubles (at most
	 * four runs) until the counts are there. */
	const int64_t need_total = e2e_binom_needed(0.4, 0.25, E2E_FALSE_FAIL),
		      need_reader = e2e_binom_needed(0.95, 0.8, E2E_FALSE_FAIL);
	double dur;
	char opt[64];
	struct e2e_result res;

	all = NULL;
	for (size_t k = 0; k < sizeof(scales) / sizeof(scales[0]); k++) {
		argv[1] = scales[k];
		cr_assert_eq(e2e_record(tmp, profile, opts, argv, &res), 0);
		cr_assert_eq(res.status, 0, "record exited %d: %s", res.status, res.err);
		e2e_result_free(&res);

		if (all)
			json_object_put(all);
		all = report(profile, NULL, NULL, NULL, NULL);
		cr_assert(json_object_is_type(e2e_get(all, "filter"), json_type_null));
		threads = e2e_get(all, "threads");
		main_tid = reader_tid = -1;
		for (size_t i = 0; i < json_object_array_length(threads); i++) {
			json_object *t = json_object_array_get_idx(threads, i);
			const char *name = json_object_get_string(e2e_get(t, "name"));

			if (e2e_get_int(t, "tid") == e2e_get_int(t, "pid"))
				main_tid = e2e_get_int(t, "tid");
			if (name && strcmp(name, "reader-0") == 0)
				reader_tid = e2e_get_int(t, "tid");
		}
		cr_assert_gt(main_tid, 0, "no main thread in the report");
		cr_assert_gt(reader_tid, 0, "no reader-0 thread in the report");
		total = attributed(all);
		on_reader = 0;
		for (size_t i = 0; i < json_object_array_length(e2e_get(all, "objects")); i++)
			on_reader += on_thread(
				json_object_array_get_idx(e2e_get(all, "objects"), i), reader_tid);
		if (total >= need_total && on_reader >= need_reader)
			break;
		e2e_diag("mt_readers %s: %lld samples attributed (%lld needed), %lld on reader-0 "
			 "(%lld needed): again, longer", scales[k], (long long)total,
			 (long long)need_total, (long long)on_reader, (long long)need_reader);
	}
	/* filters that keep every sample: the main ranking, exactly */
	r = report(profile, "--time", "0,1000000", NULL, NULL);
	same_ranking(all, r, "--time 0,1000000");
	json_object_put(r);
	r = report(profile, "--exclude", "no frame is named this", NULL, NULL);
	same_ranking(all, r, "--exclude (nothing)");
	json_object_put(r);
	for (int from = 0; from < 3; from++) {
		snprintf(opt, sizeof(opt), "%d,%d", from, from + 1);
		r = report(profile, "--time", opt, NULL, NULL);
		shares_bounded(r, opt);
		json_object_put(r);
	}
	obj_samples(all, "alloc_shared_blocks", &blocks);
	obj_samples(all, "alloc_lookup_table", &table);
	cr_assert_not_null(blocks);
	e2e_assert_share_ge(on_thread(blocks, reader_tid), total, 0.25, 0.4,
			    "reader-0's samples on the blocks, of all");

	/* --tid: each object's samples are exactly its samples on that thread */
	snprintf(opt, sizeof(opt), "%lld", (long long)reader_tid);
	r = report(profile, "--tid", opt, NULL, NULL);
	cr_assert_eq(obj_samples(r, "alloc_shared_blocks", NULL), on_thread(blocks, reader_tid));
	cr_assert_eq(obj_samples(r, "alloc_lookup_table", NULL), on_thread(table, reader_tid));
	cr_assert_eq(attributed(r), on_reader);
	e2e_assert_share_ge(on_thread(blocks, reader_tid), on_reader, 0.8, 0.95,
			    "the blocks' share of what reader-0 read");
	cr_assert_str_eq(json_object_get_string(e2e_get(r, "filter")),
			 strcat(strcpy((char[80]){ 0 }, "--tid "), opt));
	json_object_put(r);
	snprintf(opt, sizeof(opt), "%lld", (long long)main_tid);
	r = report(profile, "--tid", opt, NULL, NULL);
	cr_assert_eq(obj_samples(r, "alloc_shared_blocks", NULL), on_thread(blocks, main_tid));
	e2e_assert_share_le(obj_samples(r, "alloc_shared_blocks", NULL), total, 0.25, 0.05,
			    "the main thread's samples on the blocks (it only filled them)");
	json_object_put(r);

	/* --comm: the two readers by name */
	r = report(profile, "--comm", "reader-0", NULL, NULL);
	cr_assert_eq(obj_samples(r, "alloc_shared_blocks", NULL), on_thread(blocks, reader_tid));
	json_object_put(r);

	/* --time: two windows that split the run count every sample once */
	dur = e2e_get_double(e2e_get(all, "meta"), "duration_s");
	cr_assert_gt(dur, 0);
	snprintf(opt, sizeof(opt), "0,%.3f", dur / 2);
	r = report(profile, "--time", opt, NULL, NULL);
	a = attributed(r);
	json_object_put(r);
	snprintf(opt, sizeof(opt), "%.3f,100000", dur / 2);
	r = report(profile, "--time", opt, NULL, NULL);
	b = attributed(r);
	json_object_put(r);
	cr_assert_eq(a + b, total, "%lld + %lld samples of %lld", (long long)a, (long long)b,
		     (long long)total);
	cr_log_info("mt_readers: %lld samples attributed, reader-0 %lld (%lld on the blocks), "
		    "%lld in the second half", (long long)total, (long long)on_reader,
		    (long long)on_thread(blocks, reader_tid), (long long)b);
	/* b > 0: at least a millionth of the samples (one, below 10^6) */
	e2e_assert_share_ge(b, total, 1e-6, 0.3, "samples in the run's second half");
	r = report(profile, "--time", "100000,200000", NULL, NULL);
	cr_assert_eq(attributed(r), 0, "nothing after the end of the run");
	json_object_put(r);
	/* the main thread filled the blocks before the readers started: none of
	 * its samples is in the last half of the run */
	snprintf(opt, sizeof(opt), "%.3f,100000", dur / 2);
	{
		char tid[32];

		snprintf(tid, sizeof(tid), "%lld", (long long)main_tid);
		r = report(profile, "--time", opt, "--tid", tid);
		cr_assert_eq(attributed(r), 0, "main thread samples late in the run");
		json_object_put(r);
	}
	/* a filtered --per-thread report matches docs/report.schema.json (closed) */
	{
		char *out = e2e_path(tmp, "filtered.json"), tid[32];
		const char *rargv[] = { E2E_OBJSCOPE, "report", "--format", "json", "--per-thread",
					"--tid", tid, "--exclude", "mt_readers\\.c:88[:)]", "--sort", "bytes",
					"-o", out, profile, NULL };
		const char *vargv[] = { "python3", "tests/schema/validate_report.py",
					"docs/report.schema.json", out, NULL };

		snprintf(tid, sizeof(tid), "%lld", (long long)reader_tid);
		cr_assert_eq(e2e_run(tmp, rargv, NULL, &res), 0);
		cr_assert_eq(res.status, 0, "%s", res.err);
		e2e_result_free(&res);
		r = json_object_from_file(out);
		cr_assert_not_null(r);
		obj_samples(r, "alloc_shared_blocks", &blocks);
		cr_assert_gt(on_thread(blocks, reader_tid), 0, "by_thread written");
		json_object_put(r);
		cr_assert_eq(e2e_run(tmp, vargv, NULL, &res), 0);
		cr_assert_neq(res.status, 127, "python3 not found");
		cr_assert_neq(res.status, 2, "validator cannot run: %s", res.err);
		cr_assert_eq(res.status, 0, "filtered report does not match the schema:\n%s",
			     res.err);
		e2e_result_free(&res);
		free(out);
	}
	json_object_put(all);
	free(profile);
}

/* A profile without slices (as an older objscope wrote): thread and time
 * filters refuse in one line, the plain report still works. */
Test(e2e_filters, profile_without_slices_refuses_thread_filters)
{
	char *path = e2e_path(tmp, "old.data");
	const char *tid_argv[] = { E2E_OBJSCOPE, "report", "--tid", "1", path, NULL };
	const char *plain_argv[] = { E2E_OBJSCOPE, "report", path, NULL };
	struct os_profile *p = os_profile_new();
	struct e2e_result res;
	char err[256];

	cr_assert_not_null(p);
	os_profile_add_thread(p, &(struct os_thread){ .name = os_profile_string(p, "t"),
						      .pid = 1, .tid = 1, .samples = 5 });
	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
	cr_assert_eq(e2e_run(tmp, tid_argv, NULL, &res), 0);
	cr_expect_neq(res.status, 0, "--tid accepted a profile without slices");
	cr_expect_eq(e2e_count_lines(res.err, res.err_len), 1, "%s", res.err);
	cr_expect(strstr(res.err, "this profile has no per-sample threads/times (recorded by an"
				  " older objscope)") != NULL, "%s", res.err);
	e2e_result_free(&res);
	cr_assert_eq(e2e_run(tmp, plain_argv, NULL, &res), 0);
	cr_expect_eq(res.status, 0, "%s", res.err);
	e2e_result_free(&res);
	free(path);

	/* a real version 1 file (written before SLICES): reads; --time refuses,
	 * frame filters work */
	{
		const char *v1 = "tests/fuzz/corpus/three_sites.prof";
		const char *time_argv[] = { E2E_OBJSCOPE, "report", "--time", "0,1", v1, NULL };
		const char *inc_argv[] = { E2E_OBJSCOPE, "report", "--include", "alloc_seq_block",
					   v1, NULL };

		cr_assert_eq(e2e_run(tmp, time_argv, NULL, &res), 0);
		cr_expect_eq(res.status, 1, "%s", res.err);
		cr_expect(strstr(res.err, "recorded by an older objscope") != NULL, "%s", res.err);
		e2e_result_free(&res);
		cr_assert_eq(e2e_run(tmp, inc_argv, NULL, &res), 0);
		cr_expect_eq(res.status, 0, "%s", res.err);
		cr_expect(strstr(res.out, "# filter:      --include alloc_seq_block") != NULL, "%s",
			  res.out);
		cr_expect(strstr(res.out, "alloc_random_block") == NULL, "excluded object shown");
		e2e_result_free(&res);
	}
}

/* Estimates under filters, on a written profile with estimated allocation
 * paths and Horvitz-Thompson weights: site A of class Foo (10 exact + 6
 * estimated), site B of Foo with an estimate and no sample of its own
 * (what dropped H2's #1 object from `report --comm java`), Foo's
 * class-only row C (12 samples, 2 not shared out) and D, whose two access
 * paths weigh differently (5 samples est. 18, 3 samples est. 2: a time
 * window on the first gave it 144%). Filters that keep every sample give
 * the ranking exactly; windows and threads keep every share <= 100%. */
Test(e2e_filters, estimates_stay_one_set_of_numbers)
{
	struct os_profile *p = os_profile_new();
	char *profile = e2e_path(tmp, "est.data"), err[256];
	uint32_t f, st, st2, ctx[4], acc[5], th[2];
	json_object *all, *r;
	static const char *const windows[] = { "0,0.5", "0.5,1", "1,2", "0,1" };

	cr_assert_not_null(p);
	p->analyses |= OS_AN_ESTIMATES | OS_AN_SLICES | OS_AN_PATHEST;
	p->slice_ms = 100;
	f = os_profile_frame(p, &(struct os_frame){ .kind = OS_FRAME_JAVA,
						     .name = os_profile_string(p, "Foo.make") });
	st = os_profile_stack(p, &f, 1);
	f = os_profile_frame(p, &(struct os_frame){ .kind = OS_FRAME_JAVA,
						     .name = os_profile_string(p, "Foo.copy") });
	st2 = os_profile_stack(p, &f, 1);
	th[0] = os_profile_add_thread(p, &(struct os_thread){ .kind = OS_THR_JAVA, .pid = 7,
							      .tid = 7, .name = os_profile_string(p, "main") });
	th[1] = os_profile_add_thread(p, &(struct os_thread){ .kind = OS_THR_JAVA, .pid = 7,
							      .tid = 8, .name = os_profile_string(p, "main") });
	ctx[0] = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Foo"), .stack = st, .allocations = 10, .bytes = 640,
		.samples = 10, .samples_est = 16,
		.pe = { .kind = OS_PATH_SITE, .path_est = 6, .seen = 10, .class_seen = 12,
			.class_sites = 2 } });
	ctx[1] = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Foo"), .stack = st2, .allocations = 2, .bytes = 128,
		.samples = 0, .samples_est = 4,
		.pe = { .kind = OS_PATH_SITE, .path_est = 4, .seen = 2, .class_seen = 12,
			.class_sites = 2 } });
	ctx[2] = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Foo"), .stack = OS_NONE, .samples = 12, .samples_est = 2,
		.pe = { .kind = OS_PATH_CLASS, .path_est = -10 } });
	ctx[3] = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Bar"), .stack = st, .allocations = 3, .bytes = 4096,
		.samples = 8, .samples_est = 20 });
	acc[0] = os_profile_add_access(p, &(struct os_access){ .context = ctx[0], .stack = st,
							       .samples = 10, .samples_est = 16, .path_est = 6 });
	acc[1] = os_profile_add_access(p, &(struct os_access){ .context = ctx[1], .stack = st2,
							       .samples = 0, .samples_est = 4, .path_est = 4 });
	acc[2] = os_profile_add_access(p, &(struct os_access){ .context = ctx[2], .stack = st,
							       .samples = 12, .samples_est = 2 });
	acc[3] = os_profile_add_access(p, &(struct os_access){ .context = ctx[3], .stack = st,
							       .samples = 5, .samples_est = 18 });
	acc[4] = os_profile_add_access(p, &(struct os_access){ .context = ctx[3], .stack = st,
							       .samples = 3, .samples_est = 2 });
	/* A and C over the first second on both threads, D's paths in turn */
	for (uint32_t b = 0; b < 10; b++) {
		os_profile_add_slice(p, &(struct os_slice){ ctx[0], acc[0], th[b % 2], b, 1 });
		os_profile_add_slice(p, &(struct os_slice){ ctx[2], acc[2], th[b % 2], b,
							    b < 2 ? 2 : 1 });
	}
	for (uint32_t b = 0; b < 5; b++)
		os_profile_add_slice(p, &(struct os_slice){ ctx[3], acc[3], th[0], b, 1 });
	for (uint32_t b = 10; b < 13; b++)
		os_profile_add_slice(p, &(struct os_slice){ ctx[3], acc[4], th[1], b, 1 });
	p->threads[th[0]].samples = 5 + 6 + 5;
	p->threads[th[1]].samples = 5 + 6 + 3;
	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 30;
	p->c.samples_attributed = 30;
	p->est.samples_attributed = 16 + 4 + 2 + 20;
	p->meta.duration_s = 2.0;
	cr_assert_eq(os_profile_write(p, profile, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);

	all = report(profile, NULL, NULL, NULL, NULL);
	cr_assert_eq(json_object_array_length(e2e_get(all, "objects")), 4);
	r = report(profile, "--comm", "main", NULL, NULL);
	same_ranking(all, r, "--comm main (every thread)");
	json_object_put(r);
	r = report(profile, "--time", "0,100", NULL, NULL);
	same_ranking(all, r, "--time 0,100");
	json_object_put(r);
	r = report(profile, "--include", "Foo", NULL, NULL);
	same_ranking(all, r, "--include Foo (every path)");
	json_object_put(r);
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		r = report(profile, "--time", windows[i], NULL, NULL);
		shares_bounded(r, windows[i]);
		json_object_put(r);
	}
	r = report(profile, "--tid", "7", NULL, NULL);
	shares_bounded(r, "--tid 7");
	json_object_put(r);
	/* a filter that keeps nothing says which filter */
	{
		static const struct {
			const char *opt, *arg, *want;
		} none[] = {
			{ "--tid", "99", "--tid: no thread of the run has that id" },
			{ "--comm", "nosuch", "--comm nosuch: no thread of the run has that name" },
			{ "--time", "5,9", "--time: 5 s is past the run's end (2.00 s)" },
			{ "--include", "NoSuchFrame", "--include: no sampled allocation or access path" },
		};

		for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
			const char *argv[] = { E2E_OBJSCOPE, "report", none[i].opt, none[i].arg,
					       profile, NULL };
			struct e2e_result res;

			cr_assert_eq(e2e_run(tmp, argv, NULL, &res), 0);
			cr_expect_eq(res.status, 0, "%s", res.err);
			cr_expect(strstr(res.out, none[i].want), "%s %s: %s", none[i].opt, none[i].arg,
				  res.out);
			e2e_result_free(&res);
		}
	}
	json_object_put(all);
	free(profile);
}
