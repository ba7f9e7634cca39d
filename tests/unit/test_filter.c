/* test_filter.c - report filters (report/filter.c) on a synthetic profile. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "common/profile.h"
#include "report/filter.h"
#include "report/view.h"
#include "tests/unit/unit_helpers.h"

/* Two objects, two threads, buckets of 100 ms:
 *   ctx 0 "Big"   allocated in make_big, read by scan_big (access 0):
 *                 thread 0 (tid 10 "main") 40 samples in bucket 0 (0.0-0.1 s),
 *                 thread 1 (tid 11 "worker") 20 in bucket 25 (2.5 s)
 *   ctx 1 "Small" allocated in make_small, read by scan_small (access 1) on
 *                 thread 1, 30 samples in bucket 30 (3.0 s), and 10 with no
 *                 access path on thread 0 in bucket 5 (0.5 s). */
static struct os_profile *synth(void)
{
	struct os_profile *p = os_profile_new();
	uint32_t mb = ut_frame(p, OS_FRAME_NATIVE, "make_big", "/bin/t", "t.c", 10, 0x10);
	uint32_t ms = ut_frame(p, OS_FRAME_NATIVE, "make_small", "/bin/t", "t.c", 20, 0x20);
	uint32_t sb = ut_frame(p, OS_FRAME_NATIVE, "scan_big", "/bin/t", "t.c", 30, 0x30);
	uint32_t ss = ut_frame(p, OS_FRAME_NATIVE, "scan_small", "/bin/t", "t.c", 40, 0x40);
	uint32_t mn = ut_frame(p, OS_FRAME_NATIVE, "main", "/bin/t", "t.c", 50, 0x50);

	p->meta.sampler = os_profile_string(p, "pebs");
	p->c.samples_total = 120;
	p->c.samples_attributed = 100;
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Big"),
		.stack = os_profile_stack(p, (uint32_t[]){ mb, mn }, 2), .allocations = 1,
		.bytes = 1000, .samples = 60, .samples_est = 60, .metrics = { 600, 6, 0 } });
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "Small"),
		.stack = os_profile_stack(p, (uint32_t[]){ ms, mn }, 2), .allocations = 50,
		.bytes = 500, .samples = 40, .samples_est = 40 });
	os_profile_add_access(p, &(struct os_access){
		.context = 0, .stack = os_profile_stack(p, (uint32_t[]){ sb, mn }, 2),
		.samples = 60, .samples_est = 60 });
	os_profile_add_access(p, &(struct os_access){
		.context = 1, .stack = os_profile_stack(p, (uint32_t[]){ ss, mn }, 2),
		.samples = 30, .samples_est = 30 });
	os_profile_add_thread(p, &(struct os_thread){ .name = os_profile_string(p, "main"),
						      .pid = 10, .tid = 10, .samples = 55 });
	os_profile_add_thread(p, &(struct os_thread){ .name = os_profile_string(p, "worker"),
						      .pid = 10, .tid = 11, .samples = 65 });
	p->slice_ms = 100;
	os_profile_add_slice(p, &(struct os_slice){ 0, 0, 0, 0, 40 });
	os_profile_add_slice(p, &(struct os_slice){ 0, 0, 1, 25, 20 });
	os_profile_add_slice(p, &(struct os_slice){ 1, 1, 1, 30, 30 });
	os_profile_add_slice(p, &(struct os_slice){ 1, OS_NONE, 0, 5, 10 });
	return p;
}

/* Samples of the context of type `type`, or -1 when it is gone. */
static long samples_of(const struct os_profile *p, const char *type)
{
	for (uint32_t i = 0; i < p->ncontexts; i++)
		if (strcmp(os_profile_str(p, p->contexts[i].type), type) == 0)
			return (long)p->contexts[i].samples;
	return -1;
}

static void apply_ok(struct os_profile *p, struct report_filter *f)
{
	char err[256] = "";

	cr_assert_eq(report_filter_apply(p, f, err, sizeof(err)), 0, "%s", err);
}

Test(filter, tid_keeps_that_threads_samples)
{
	struct os_profile *p = synth();
	struct report_filter f = { 0 };
	char err[256];

	cr_assert_eq(report_filter_tids(&f, "11", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), 20);
	cr_assert_eq(samples_of(p, "Small"), 30);
	cr_assert_eq(p->accesses[0].samples, 20);
	cr_assert_eq(p->accesses[1].samples, 30);
	cr_assert_eq(p->c.samples_attributed, 50, "shares are of what remains");
	cr_assert_eq(p->threads[0].samples, 0);
	cr_assert_eq(p->threads[1].samples, 50);
	cr_assert_eq(os_profile_metrics(p), 0, "metrics cannot be split: not measured");
	cr_assert_str_eq(f.desc, "--tid 11");
	os_profile_free(p);
}

Test(filter, tid_list_and_comm)
{
	struct os_profile *p = synth();
	struct report_filter f = { 0 };
	char err[256];

	cr_assert_eq(report_filter_tids(&f, "10,11", err, sizeof(err)), 0);
	cr_assert_eq(f.ntids, 2);
	apply_ok(p, &f);
	cr_assert_eq(p->c.samples_attributed, 100);
	os_profile_free(p);

	p = synth();
	f = (struct report_filter){ 0 };
	report_filter_comm(&f, "main");
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), 40);
	cr_assert_eq(samples_of(p, "Small"), 10, "the samples without an access path too");
	cr_assert_eq(p->accesses[1].samples, 0);
	os_profile_free(p);
}

Test(filter, time_window_counts_buckets_starting_inside)
{
	struct os_profile *p = synth();
	struct report_filter f = { 0 };
	char err[256];

	cr_assert_eq(report_filter_time(&f, "2,3", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), 20, "bucket 25 (2.5 s)");
	cr_assert_eq(samples_of(p, "Small"), 0, "bucket 30 starts at 3.0 s: outside [2, 3)");
	cr_assert_eq(p->nslices, 1);
	os_profile_free(p);

	p = synth();
	f = (struct report_filter){ 0 };
	cr_assert_eq(report_filter_time(&f, "0,0.6", err, sizeof(err)), 0);
	cr_assert_eq(report_filter_tids(&f, "10", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), 40);
	cr_assert_eq(samples_of(p, "Small"), 10);
	cr_assert_str_eq(f.desc, "--time 0,0.6 --tid 10");
	os_profile_free(p);
}

Test(filter, bad_arguments_say_why)
{
	struct report_filter f = { 0 };
	char err[256];

	cr_assert_eq(report_filter_tids(&f, "12,x", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "12,x") != NULL, "%s", err);
	cr_assert_eq(report_filter_tids(&f, "", err, sizeof(err)), -EINVAL);
	cr_assert_eq(report_filter_time(&f, "3,1", err, sizeof(err)), -EINVAL);
	cr_assert_eq(report_filter_time(&f, "1", err, sizeof(err)), -EINVAL);
	cr_assert_eq(report_filter_time(&f, "-1,2", err, sizeof(err)), -EINVAL);
	cr_assert_eq(report_filter_regex(&f, true, "(", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bad regular expression") != NULL, "%s", err);
	cr_assert(!report_filter_active(&f));
}

Test(filter, include_and_exclude_on_frames)
{
	struct os_profile *p = synth();
	struct report_filter f = { 0 };
	char err[256];

	/* an access path frame: only Big's samples read there */
	cr_assert_eq(report_filter_regex(&f, true, "^scan_big", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), 60);
	cr_assert_eq(samples_of(p, "Small"), -1, "nothing of it matches: gone");
	cr_assert_eq(p->c.samples_attributed, 60);
	for (uint32_t i = 0; i < p->nslices; i++)
		cr_assert_eq(p->slices[i].context, 0);
	report_filter_free(&f);
	os_profile_free(p);

	/* an allocation frame excluded: the object goes, whatever read it */
	p = synth();
	f = (struct report_filter){ 0 };
	cr_assert_eq(report_filter_regex(&f, false, "make_big", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Big"), -1);
	cr_assert_eq(samples_of(p, "Small"), 40);
	cr_assert_eq(p->naccesses, 1);
	cr_assert_eq(p->accesses[0].context, 0, "renumbered");
	report_filter_free(&f);
	os_profile_free(p);

	/* an access frame excluded: that path's samples go, the rest stay */
	p = synth();
	f = (struct report_filter){ 0 };
	cr_assert_eq(report_filter_regex(&f, false, "scan_small", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Small"), 10, "its samples without an access path");
	report_filter_free(&f);
	os_profile_free(p);
}

Test(filter, without_slices_thread_filters_refuse)
{
	struct os_profile *p = synth();
	struct report_filter f = { 0 };
	char err[256] = "";

	p->analyses &= ~(uint32_t)OS_AN_SLICES;
	p->nslices = 0;
	report_filter_comm(&f, "main");
	cr_assert_eq(report_filter_apply(p, &f, err, sizeof(err)), -ENOTSUP);
	cr_assert_str_eq(err, "this profile has no per-sample threads/times (recorded by an"
			      " older objscope)");
	/* frame filters need no slices */
	f = (struct report_filter){ 0 };
	cr_assert_eq(report_filter_regex(&f, true, "make_small", err, sizeof(err)), 0);
	apply_ok(p, &f);
	cr_assert_eq(samples_of(p, "Small"), 40);
	cr_assert_eq(samples_of(p, "Big"), -1);
	report_filter_free(&f);
	os_profile_free(p);
}

Test(filter, sort_and_per_thread_view)
{
	struct os_profile *p = synth();
	struct report_view v;
	enum report_sort s;

	cr_assert_eq(report_sort_parse("allocations", &s), 0);
	cr_assert_eq(report_sort_parse("size", &s), -EINVAL);
	cr_assert_eq(report_view_build_sorted(&v, p, REPORT_SORT_ALLOCATIONS), 0);
	cr_assert_eq(v.objects[0].context, 1, "Small: 50 allocations");
	report_view_free(&v);
	cr_assert_eq(report_view_build_sorted(&v, p, REPORT_SORT_BYTES), 0);
	cr_assert_eq(v.objects[0].context, 0, "Big: 1000 bytes");
	/* Big by thread: main 40, worker 20 */
	cr_assert_eq(v.objects[0].nthreads, 2);
	cr_assert_eq(v.by_thread[v.objects[0].first_thread].thread, 0);
	cr_assert_eq(v.by_thread[v.objects[0].first_thread].samples, 40);
	cr_assert_eq(v.by_thread[v.objects[0].first_thread + 1].samples, 20);
	/* Small: worker 30, main 10 */
	cr_assert_eq(v.objects[1].nthreads, 2);
	cr_assert_eq(v.by_thread[v.objects[1].first_thread].thread, 1);
	cr_assert_eq(v.by_thread[v.objects[1].first_thread].samples, 30);
	report_view_free(&v);
	os_profile_free(p);
}
