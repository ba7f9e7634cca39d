/* test_report.c - `objscope report`: JSON field by field, the text golden
 * file, merging several inputs, errors. Set OBJSCOPE_UPDATE_GOLDEN=1 to
 * rewrite tests/golden/report_small.txt from the current output. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/profile.h"
#include "report/fmt_json.h"
#include "report/report.h"
#include "report/view.h"
#include "tests/unit/unit_helpers.h"


static char rdir[64];

static void mk_rdir(void)
{
	ut_mkdtemp(rdir, sizeof(rdir), "report");
}

static void rm_rdir(void)
{
	ut_rmtree(rdir);
}

static char *rpath(const char *name)
{
	return ut_path(rdir, name);
}

static uint32_t java(struct os_profile *p, const char *m, const char *file, uint32_t line)
{
	return ut_frame(p, OS_FRAME_JAVA, m, NULL, file, line, 0);
}

static void thread(struct os_profile *p, uint32_t kind, const char *name, uint32_t tid,
		   uint64_t samples)
{
	os_profile_add_thread(p, &(struct os_thread){ .kind = kind,
						      .name = os_profile_string(p, name),
						      .pid = 4242, .tid = tid, .samples = samples });
}

/* The fixed profile of the golden file: 4 contexts added out of rank order. */
static struct os_profile *build_small(void)
{
	struct os_profile *p = os_profile_new();
	char *argv[] = { "java", "-XX:+PreserveFramePointer", "Bench" };
	uint32_t main_f, fb[10], sa, sb, sc, sd, s_kernel, s_sum, ca, cb, cc;
	uint64_t acc_b[] = { 100, 20, 10, 8, 6, 4, 2 };
	char name[32];
	int i;

	os_profile_set_argv(p, 3, argv);
	os_profile_add_pid(p, 4242);
	os_profile_add_note(p, "no PMU: software sampler, no load latency");
	p->meta.duration_s = 2.5;
	p->meta.sampler = os_profile_string(p, "soft");
	p->meta.event = os_profile_string(p, "task-clock");
	p->meta.period = 1000000;
	p->meta.freq = 1000;
	p->meta.min_size = 256;
	p->meta.mode = os_profile_string(p, "record");
	p->meta.hostname = os_profile_string(p, "testhost");
	p->meta.start_time = 1700000000;
	p->c = (struct os_counters){
		.samples_total = 1000, .samples_addressed = 800, .samples_heap = 600,
		.samples_attributed = 500, .lost = 2, .dropped_events = 1,
		.unaddressed_nomem = 150, .unaddressed_clobbered = 40,
		.unaddressed_undecodable = 10, .small_allocs = 5000, .small_bytes = 320000,
		.tracked_allocs = 301, .tracked_bytes = 3001000, .frees = 100, .gc_count = 3,
		.moves = 50,
	};

	main_f = java(p, "Bench.main", "Bench.java", 40);
	sa = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.makeData", "Bench.java", 12), main_f },
			      2);
	fb[0] = ut_frame(p, OS_FRAME_NATIVE, "malloc", "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, 0x9a0f0);
	fb[1] = ut_frame(p, OS_FRAME_UNKNOWN, NULL, NULL, NULL, 0, 0x7f0012345678);
	fb[2] = ut_frame(p, OS_FRAME_NATIVE, "fill", "/opt/app/bin/app", "/src/app/fill.c", 33, 0x1140);
	fb[3] = ut_frame(p, OS_FRAME_NATIVE, NULL, "/opt/app/lib/libfoo.so", NULL, 0, 0x1a2b);
	for (i = 4; i < 10; i++) {
		snprintf(name, sizeof(name), "level%d", i);
		fb[i] = ut_frame(p, OS_FRAME_NATIVE, name, "/opt/app/bin/app", NULL, 0, 0x2000 + i);
	}
	sb = os_profile_stack(p, fb, 10);
	sc = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.readAll", "Bench.java", 70), main_f },
			      2);
	sd = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.header", NULL, 0) }, 1);
	s_kernel = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.kernel", "Bench.java", 30),
						     main_f }, 2);
	s_sum = os_profile_stack(p, (uint32_t[]){ java(p, "Bench.sum", "Bench.java", 50) }, 1);

	cc = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "byte[]"), .stack = sc, .allocations = 50,
		.bytes = 200000, .samples = 50 });
	ca = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "double[]"), .stack = sa, .allocations = 100,
		.bytes = 800000, .samples = 300, .metrics = { 0, 30, 0 } });
	cb = os_profile_add_context(p, &(struct os_context){
		.type = OS_NONE, .stack = sb, .allocations = 150, .bytes = 2000000, .samples = 150 });
	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "byte[]"), .stack = sd, .allocations = 1, .bytes = 1000 });
	(void)cc;

	os_profile_add_access(p, &(struct os_access){ .context = ca, .stack = s_sum, .samples = 60 });
	os_profile_add_access(p, &(struct os_access){ .context = ca, .stack = s_kernel,
						      .samples = 240, .metrics = { 0, 25, 0 } });
	for (i = 0; i < 7; i++) {
		uint32_t f = ut_frame(p, OS_FRAME_NATIVE, "consume", "/opt/app/bin/app", "/src/app/use.c",
				100 + i, 0x3000 + i);
		uint32_t s = os_profile_stack(p, (uint32_t[]){ f, fb[2] }, 2);

		os_profile_add_access(p, &(struct os_access){ .context = cb, .stack = s,
							      .samples = acc_b[i] });
	}

	thread(p, OS_THR_JAVA, "main", 4243, 700);
	thread(p, OS_THR_GC, "GC Thread#0", 4244, 100);
	thread(p, OS_THR_JIT, "C2 CompilerThread0", 4245, 50);
	thread(p, OS_THR_VM, "VM Thread", 4246, 20);
	thread(p, OS_THR_NATIVE, "worker", 4250, 130);
	return p;
}

static void write_profile(struct os_profile *p, const char *path)
{
	char err[256];

	cr_assert_eq(os_profile_write(p, path, err, sizeof(err)), 0, "%s", err);
	os_profile_free(p);
}

/* Runs `objscope report ARGS...`; returns its exit status. */
#define REPORT(...)                                                                  \
	({                                                                           \
		char *av_[] = { "report", __VA_ARGS__, NULL };                       \
		cmd_report((int)(sizeof(av_) / sizeof(av_[0])) - 1, av_);            \
	})

static char *slurp_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, n + 1);
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* `objscope report` of p (freed) in text, its short header: written as
 * NAME.data, reported into NAME.txt; the text (free it). */
static char *short_text(struct os_profile *p, const char *name)
{
	char data[64], txt[64];

	snprintf(data, sizeof(data), "%s.data", name);
	snprintf(txt, sizeof(txt), "%s.txt", name);
	write_profile(p, rpath(data));
	cr_assert_eq(REPORT("-o", rpath(txt), rpath(data)), 0);
	return slurp_text(rpath(txt));
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, key, &v), "missing field %s", key);
	return v;
}

static const char *sget(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	cr_assert(json_object_is_type(v, json_type_string), "%s is not a string", key);
	return json_object_get_string(v);
}

static int64_t iget(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	cr_assert(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

static void assert_strings(json_object *arr, const char *const *want, size_t n)
{
	size_t i;

	cr_assert(json_object_is_type(arr, json_type_array));
	cr_assert_eq(json_object_array_length(arr), n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(arr, i)), want[i]);
}

/* A JSON frame's "text" (version 2 frames are objects). */
static const char *frame_text(json_object *stack, size_t i)
{
	json_object *f = json_object_array_get_idx(stack, i), *t;

	cr_assert(json_object_is_type(f, json_type_object), "frame %zu is not an object", i);
	cr_assert(json_object_object_get_ex(f, "text", &t), "frame %zu has no text", i);
	return json_object_get_string(t);
}

static void assert_frames(json_object *arr, const char *const *want, size_t n)
{
	size_t i;

	cr_assert(json_object_is_type(arr, json_type_array));
	cr_assert_eq(json_object_array_length(arr), n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(frame_text(arr, i), want[i]);
}

static json_object *load_json(const char *path)
{
	json_object *root = json_object_from_file(path);

	cr_assert_not_null(root, "%s is not valid JSON", path);
	return root;
}

TestSuite(report, .init = mk_rdir, .fini = rm_rdir);

Test(report, json_fields)
{
	json_object *root, *meta, *objs, *o, *acc, *types, *threads, *t, *fr;
	static const char *const stack_a[] = { "Bench.makeData(Bench.java:12)",
					       "Bench.main(Bench.java:40)" };
	static const char *const stack_b[] = {
		"malloc", "[unknown] 0x7f0012345678", "fill (fill.c:33)", "libfoo.so+0x1a2b",
		"level4", "level5", "level6", "level7", "level8", "level9",
	};
	static const char *const kernel[] = { "Bench.kernel(Bench.java:30)",
					      "Bench.main(Bench.java:40)" };
	static const char *const command[] = { "java", "-XX:+PreserveFramePointer", "Bench" };
	struct stat st;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("out.json"), rpath("small.data")), 0);
	cr_assert_neq(stat(rpath("out.json.tmp"), &st), 0, "temporary output left behind");
	root = load_json(rpath("out.json"));

	cr_assert_str_eq(sget(root, "format"), "objscope-report");
	cr_assert_eq(iget(root, "version"), 2);

	meta = get(root, "meta");
	assert_strings(get(meta, "command"), command, 3);
	cr_assert_eq(json_object_array_length(get(meta, "pids")), 1);
	cr_assert_eq(json_object_get_int64(json_object_array_get_idx(get(meta, "pids"), 0)), 4242);
	cr_assert_float_eq(json_object_get_double(get(meta, "duration_s")), 2.5, 1e-9);
	cr_assert_str_eq(sget(meta, "sampler"), "soft");
	cr_assert_str_eq(sget(meta, "event"), "task-clock");
	cr_assert_eq(iget(meta, "period"), 1000000);
	cr_assert_eq(iget(meta, "samples_total"), 1000);
	cr_assert_eq(iget(meta, "samples_addressed"), 800);
	cr_assert_eq(iget(meta, "samples_heap"), 600);
	cr_assert_eq(iget(meta, "samples_attributed"), 500);
	cr_assert_eq(iget(meta, "lost"), 2);
	cr_assert_eq(iget(meta, "dropped_events"), 1);
	cr_assert_eq(iget(meta, "gc_count"), 3);
	cr_assert_eq(iget(meta, "min_size"), 256);
	cr_assert_eq(iget(get(meta, "counters"), "small_allocs"), 5000);
	cr_assert_eq(iget(get(meta, "unaddressed"), "no_memory_operand"), 150);
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(get(meta, "notes"), 0)),
			 "no PMU: software sampler, no load latency");

	objs = get(root, "objects");
	cr_assert_eq(json_object_array_length(objs), 4);
	cr_assert_eq(iget(root, "objects_total"), 4);

	/* Rank 1: double[] with 300 of the 500 attributed samples. */
	o = json_object_array_get_idx(objs, 0);
	cr_assert_eq(iget(o, "id"), 1);
	cr_assert_str_eq(sget(o, "type"), "double[]");
	assert_frames(get(o, "alloc_stack"), stack_a, 2);
	cr_assert_eq(iget(o, "allocations"), 100);
	cr_assert_eq(iget(o, "bytes"), 800000);
	cr_assert_eq(iget(o, "samples"), 300);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.6, 1e-9);
	/* the soft sampler measures no metric: null, even where a slot holds 30 */
	cr_assert_null(get(get(o, "metrics"), "l1_miss"));
	cr_assert_null(get(get(o, "metrics"), "latency_cycles"));
	cr_assert_null(get(get(o, "metrics"), "remote"));
	acc = get(o, "accesses");
	cr_assert_eq(json_object_array_length(acc), 2);
	assert_frames(get(json_object_array_get_idx(acc, 0), "stack"), kernel, 2);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 0), "samples"), 240);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 1), "samples"), 60);
	cr_assert_null(get(o, "replica"));
	cr_assert_null(get(o, "lifetime"));
	cr_assert_null(get(o, "reuse"));
	cr_assert_null(get(o, "numa"));

	/* Rank 2: unknown type, native and unresolved frames, all kept. */
	o = json_object_array_get_idx(objs, 1);
	cr_assert_eq(iget(o, "id"), 2);
	cr_assert_str_eq(sget(o, "type"), "");
	assert_frames(get(o, "alloc_stack"), stack_b, 10);
	/* each frame's parts, null for what the profile does not hold */
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 0);
	cr_assert_str_eq(sget(fr, "function"), "malloc");
	cr_assert_str_eq(sget(fr, "module"), "/lib/x86_64-linux-gnu/libc.so.6");
	cr_assert_str_eq(sget(fr, "kind"), "native");
	cr_assert_eq(iget(fr, "offset"), 0x9a0f0);
	cr_assert_null(get(fr, "file"));
	cr_assert_null(get(fr, "line"));
	cr_assert_null(get(fr, "address"));
	cr_assert_null(get(fr, "nearest_export"));
	cr_assert_null(get(fr, "build_id"));
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 1);
	cr_assert_str_eq(sget(fr, "kind"), "unknown");
	cr_assert_null(get(fr, "function"));
	cr_assert_null(get(fr, "module"));
	cr_assert_null(get(fr, "offset"));
	cr_assert_eq(json_object_get_uint64(get(fr, "address")), 0x7f0012345678);
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 2);
	cr_assert_str_eq(sget(fr, "function"), "fill");
	cr_assert_str_eq(sget(fr, "file"), "/src/app/fill.c");
	cr_assert_eq(iget(fr, "line"), 33);
	cr_assert_eq(iget(fr, "offset"), 0x1140);
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 3);
	cr_assert_null(get(fr, "function"));
	cr_assert_str_eq(sget(fr, "module"), "/opt/app/lib/libfoo.so");
	cr_assert_eq(iget(fr, "offset"), 0x1a2b);
	fr = json_object_array_get_idx(get(json_object_array_get_idx(objs, 0), "alloc_stack"), 0);
	cr_assert_str_eq(sget(fr, "kind"), "java");
	cr_assert_str_eq(sget(fr, "function"), "Bench.makeData");
	cr_assert_eq(iget(fr, "line"), 12);
	cr_assert_null(get(fr, "module"));
	cr_assert_null(get(fr, "offset"));
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.3, 1e-9);
	acc = get(o, "accesses");
	cr_assert_eq(json_object_array_length(acc), 7);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 0), "samples"), 100);
	cr_assert_eq(iget(json_object_array_get_idx(acc, 6), "samples"), 2);
	cr_assert_str_eq(frame_text(get(json_object_array_get_idx(acc, 0), "stack"), 0),
			 "consume (use.c:100)");

	/* Ranks 3 and 4: byte[] with samples, then the one without. */
	o = json_object_array_get_idx(objs, 2);
	cr_assert_str_eq(sget(o, "type"), "byte[]");
	cr_assert_eq(iget(o, "samples"), 50);
	cr_assert_eq(json_object_array_length(get(o, "accesses")), 0);
	o = json_object_array_get_idx(objs, 3);
	cr_assert_eq(iget(o, "id"), 4);
	cr_assert_eq(iget(o, "samples"), 0);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.0, 1e-12);
	cr_assert_str_eq(frame_text(get(o, "alloc_stack"), 0), "Bench.header");

	types = get(root, "types");
	cr_assert_eq(json_object_array_length(types), 3);
	t = json_object_array_get_idx(types, 0);
	cr_assert_str_eq(sget(t, "type"), "double[]");
	cr_assert_eq(iget(t, "samples"), 300);
	t = json_object_array_get_idx(types, 1);
	cr_assert_str_eq(sget(t, "type"), "");
	cr_assert_eq(iget(t, "samples"), 150);
	t = json_object_array_get_idx(types, 2);
	cr_assert_str_eq(sget(t, "type"), "byte[]");
	cr_assert_eq(iget(t, "samples"), 50);

	threads = get(root, "threads");
	cr_assert_eq(json_object_array_length(threads), 5);
	t = json_object_array_get_idx(threads, 0);
	cr_assert_str_eq(sget(t, "kind"), "java");
	cr_assert_str_eq(sget(t, "name"), "main");
	cr_assert_eq(iget(t, "samples"), 700);
	cr_assert_eq(iget(t, "tid"), 4243);
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 1), "kind"), "native");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 2), "kind"), "gc");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 3), "kind"), "jit");
	cr_assert_str_eq(sget(json_object_array_get_idx(threads, 4), "kind"), "vm");
	json_object_put(root);
}

/* Renders the golden profile with `report [flag] -o OUT` and compares OUT
 * with tests/golden/NAME (rewritten with OBJSCOPE_UPDATE_GOLDEN=1). */
static void check_golden(const char *name, char *flag)
{
	const char *src = getenv("OBJSCOPE_SRCDIR");
	char golden[512];
	char *got, *want;

	snprintf(golden, sizeof(golden), "%s/tests/golden/%s", src ? src : ".", name);
	write_profile(build_small(), rpath("small.data"));
	if (flag)
		cr_assert_eq(REPORT(flag, "-o", rpath("out.txt"), rpath("small.data")), 0);
	else
		cr_assert_eq(REPORT("-o", rpath("out.txt"), rpath("small.data")), 0);
	got = slurp_text(rpath("out.txt"));
	if (getenv("OBJSCOPE_UPDATE_GOLDEN")) {
		FILE *f = fopen(golden, "w");

		cr_assert_not_null(f);
		fputs(got, f);
		cr_assert_eq(fclose(f), 0);
	}
	want = slurp_text(golden);
	cr_assert_str_eq(got, want, "text report differs from %s", golden);
	free(got);
	free(want);
}

/* The default text report: the short header (the loss counters that are
 * not zero, the number of hidden notes), then the objects with samples. */
Test(report, text_matches_golden)
{
	check_golden("report_small.txt", NULL);
}

/* -v: every header line and note, and the object without samples. */
Test(report, text_verbose_matches_golden)
{
	check_golden("report_small_verbose.txt", (char *)"-v");
}

Test(report, several_files_are_merged)
{
	json_object *root, *o;

	write_profile(build_small(), rpath("a.data"));
	write_profile(build_small(), rpath("b.data"));
	cr_assert_eq(REPORT("--format=json", "-o", rpath("m.json"), rpath("a.data"),
			    rpath("b.data")), 0);
	root = load_json(rpath("m.json"));
	cr_assert_eq(iget(get(root, "meta"), "samples_total"), 2000);
	cr_assert_eq(json_object_array_length(get(root, "objects")), 4);
	o = json_object_array_get_idx(get(root, "objects"), 0);
	cr_assert_eq(iget(o, "samples"), 600);
	cr_assert_eq(iget(o, "bytes"), 1600000);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 0.6, 1e-9);
	cr_assert_eq(iget(json_object_array_get_idx(get(o, "accesses"), 0), "samples"), 480);
	cr_assert_eq(json_object_array_length(get(root, "threads")), 5);
	json_object_put(root);
}

Test(report, top_limits_objects)
{
	json_object *root;
	char *txt;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "json", "--top", "1", "-o", rpath("t.json"),
			    rpath("small.data")), 0);
	root = load_json(rpath("t.json"));
	cr_assert_eq(json_object_array_length(get(root, "objects")), 1);
	cr_assert_eq(iget(root, "objects_total"), 4);
	json_object_put(root);

	cr_assert_eq(REPORT("--top", "2", "-o", rpath("t.txt"), rpath("small.data")), 0);
	txt = slurp_text(rpath("t.txt"));
	cr_assert(strstr(txt, "2 of 4 shown") != NULL);
	cr_assert(strstr(txt, "byte[]") == NULL, "rank 3 shown despite --top 2");
	free(txt);
}


/* With estimates (Java hybrid mode) objects AND types are ranked by the
 * estimate, so a type whose few seen objects stand for many ranks first
 * in both lists; raw samples stay as they are. */
Test(report, types_ranked_by_estimate)
{
	struct os_profile *p = build_small();
	json_object *root, *types, *t, *o;

	/* contexts in build_small's order: byte[] (50), double[] (300),
	 * untyped (150), byte[] (0) */
	p->contexts[0].samples_est = 900;
	p->contexts[1].samples_est = 300;
	p->contexts[2].samples_est = 150;
	p->contexts[3].samples_est = 0;
	p->est.samples_attributed = 1350;
	p->analyses |= OS_AN_ESTIMATES;
	write_profile(p, rpath("est.data"));
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("est.json"), rpath("est.data")), 0);
	root = load_json(rpath("est.json"));
	o = json_object_array_get_idx(get(root, "objects"), 0);
	cr_assert_str_eq(sget(o, "type"), "byte[]");
	types = get(root, "types");
	cr_assert_eq(json_object_array_length(types), 3);
	t = json_object_array_get_idx(types, 0);
	cr_assert_str_eq(sget(t, "type"), "byte[]");
	cr_assert_eq(iget(t, "samples"), 50);
	cr_assert_float_eq(json_object_get_double(get(t, "samples_estimated")), 900.0, 1e-9);
	t = json_object_array_get_idx(types, 1);
	cr_assert_str_eq(sget(t, "type"), "double[]");
	cr_assert_eq(iget(t, "samples"), 300);
	t = json_object_array_get_idx(types, 2);
	cr_assert_str_eq(sget(t, "type"), "");
	json_object_put(root);

	/* without estimates: raw samples, and samples_estimated is null */
	write_profile(build_small(), rpath("plain.data"));
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("plain.json"), rpath("plain.data")), 0);
	root = load_json(rpath("plain.json"));
	t = json_object_array_get_idx(get(root, "types"), 0);
	cr_assert_str_eq(sget(t, "type"), "double[]");
	cr_assert(json_object_is_type(get(t, "samples_estimated"), json_type_null));
	json_object_put(root);
}
Test(report, empty_profile_says_why)
{
	struct os_profile *p = os_profile_new();
	char *txt;

	p->c.samples_total = 100;
	p->c.unaddressed_nomem = 100;
	write_profile(p, rpath("empty.data"));
	cr_assert_eq(REPORT("-o", rpath("e.txt"), rpath("empty.data")), 0);
	txt = slurp_text(rpath("e.txt"));
	cr_assert(strstr(txt, "no samples were attributed to objects: none of the 100 samples"
			      " carried a data address (100 without a memory operand") != NULL,
		  "%s", txt);
	free(txt);
}

Test(report, errors_exit_non_zero_without_output)
{
	struct stat st;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(REPORT("--format", "svg", "-o", rpath("x.svg"), rpath("small.data")), 2);
	cr_assert_neq(stat(rpath("x.svg"), &st), 0);
	cr_assert_eq(REPORT("--format", "", rpath("small.data")), 2);
	cr_assert_eq(REPORT("--top", "many", rpath("small.data")), 2);
	cr_assert_eq(REPORT("--bogus", rpath("small.data")), 2);
	cr_assert_eq(REPORT("-o", rpath("y.txt"), rpath("missing.data")), 1);
	cr_assert_neq(stat(rpath("y.txt"), &st), 0);

	/* A corrupt second input: nothing written. */
	cr_assert_eq(REPORT("-o", rpath("z.txt"), rpath("small.data"), "/dev/null"), 1);
	cr_assert_neq(stat(rpath("z.txt"), &st), 0);
	cr_assert_neq(stat(rpath("z.txt.tmp"), &st), 0);

	/* Output directory missing. */
	cr_assert_eq(REPORT("-o", "/nonexistent/dir/r.txt", rpath("small.data")), 1);
}

Test(report, default_input_is_objscope_data)
{
	char cwd[512];
	json_object *root;

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	write_profile(build_small(), rpath("objscope.data"));
	cr_assert_eq(chdir(rdir), 0);
	cr_assert_eq(REPORT("--format", "json", "-o", "d.json"), 0);
	root = load_json("d.json");
	cr_assert_eq(iget(get(root, "meta"), "samples_attributed"), 500);
	json_object_put(root);
	cr_assert_eq(chdir(cwd), 0);
}

/* ---- the streamed JSON: strict validity, exact strings and numbers ---- */

/* Strings that exercise every escaping rule; all valid UTF-8. */
static const char *const tricky[] = {
	"quote \" and backslash \\ and slash /",
	"ctl \x01\x02\x1f del \x7f tab\t nl\n cr\r bs\b ff\f",
	"utf8 \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 U+FFFF \xef\xbf\xbf",
	"</script><!-- \\u0041 {\"k\": [1, 2]}",
	"",
};
#define NTRICKY (sizeof(tricky) / sizeof(tricky[0]))

/* Renders p as JSON into memory (html_safe as asked); the caller frees. */
static char *render_mem(const struct os_profile *p, bool html_safe, size_t *len)
{
	struct report_opts o = { .format = "json" };
	struct report_view v;
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);

	cr_assert_not_null(mem);
	cr_assert_eq(report_view_build(&v, p), 0);
	if (html_safe)
		cr_assert_eq(report_json_write(&v, &o, mem, true), 0);
	else
		cr_assert_eq(report_render_json(&v, &o, mem), 0);
	cr_assert_eq(fclose(mem), 0);
	report_view_free(&v);
	return buf;
}

/* Strict RFC 8259 parse with UTF-8 validation: the whole text, one value. */
static json_object *parse_strict(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *root;

	cr_assert_not_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	cr_assert_not_null(root, "invalid JSON: %s at offset %zu",
			   json_tokener_error_desc(json_tokener_get_error(tok)),
			   json_tokener_get_parse_end(tok));
	cr_assert(json_tokener_get_parse_end(tok) + 1 >= len, "trailing text after the JSON value");
	json_tokener_free(tok);
	return root;
}

/* A profile whose every kind of string is one of `tricky`, plus a bad byte. */
static struct os_profile *build_tricky(void)
{
	struct os_profile *p = os_profile_new();
	uint32_t f[NTRICKY], s, c;
	size_t i;

	os_profile_set_argv(p, (int)NTRICKY, (char **)tricky);
	os_profile_add_note(p, "bad byte \xff here, cut sequence \xe6\x97 end, overlong \xc0\xaf");
	p->meta.sampler = os_profile_string(p, tricky[0]);
	p->meta.duration_s = 0.1 + 0.2; /* 0.30000000000000004: needs 17 digits */
	p->c.samples_attributed = 3;
	p->c.lost = UINT64_MAX; /* beyond int64: printed exactly all the same */
	for (i = 0; i < NTRICKY; i++)
		f[i] = ut_frame(p, OS_FRAME_SYNTHETIC, tricky[i][0] ? tricky[i] : "empty", NULL,
				NULL, 0, 0);
	s = os_profile_stack(p, f, NTRICKY);
	c = os_profile_add_context(p, &(struct os_context){ .type = os_profile_string(p, tricky[3]),
							    .stack = s, .allocations = 7,
							    .samples = 1 });
	os_profile_add_access(p, &(struct os_access){ .context = c, .stack = s, .samples = 1 });
	thread(p, OS_THR_NATIVE, tricky[1], 4243, 1);
	return p;
}

static void check_tricky(json_object *root)
{
	json_object *meta = get(root, "meta"), *o, *st;
	const char *note;
	size_t i;

	assert_strings(get(meta, "command"), tricky, NTRICKY);
	cr_assert_str_eq(sget(meta, "sampler"), tricky[0]);
	cr_assert(json_object_get_double(get(meta, "duration_s")) == 0.1 + 0.2,
		  "duration_s not exact: %.17g", json_object_get_double(get(meta, "duration_s")));
	cr_assert_eq(json_object_get_uint64(get(meta, "lost")), UINT64_MAX);
	note = json_object_get_string(json_object_array_get_idx(get(meta, "notes"), 0));
	cr_assert_str_eq(note, "bad byte \xef\xbf\xbd here, cut sequence \xef\xbf\xbd\xef\xbf\xbd"
			       " end, overlong \xef\xbf\xbd\xef\xbf\xbd");
	o = json_object_array_get_idx(get(root, "objects"), 0);
	cr_assert_str_eq(sget(o, "type"), tricky[3]);
	st = get(o, "alloc_stack");
	cr_assert_eq(json_object_array_length(st), NTRICKY);
	for (i = 0; i + 1 < NTRICKY; i++)
		cr_assert_str_eq(frame_text(st, i), tricky[i]);
	cr_assert_float_eq(json_object_get_double(get(o, "share")), 1.0 / 3, 1e-15);
	cr_assert(json_object_is_type(get(o, "share"), json_type_double));
	cr_assert_str_eq(sget(json_object_array_get_idx(get(root, "threads"), 0), "name"),
			 tricky[1]);
}

Test(report, json_escaping_is_exact)
{
	struct os_profile *p = build_tricky();
	size_t len, i;
	char *text = render_mem(p, false, &len);
	json_object *root;

	cr_assert_gt(len, 0);
	cr_assert_eq(text[len - 1], '\n');
	for (i = 0; i < len; i++)
		cr_assert((unsigned char)text[i] >= 0x20 || text[i] == '\n',
			  "raw control character 0x%02x at %zu", text[i], i);
	cr_assert(strstr(text, "\\u0001\\u0002\\u001f") != NULL);
	root = parse_strict(text, len);
	check_tricky(root);
	json_object_put(root);
	free(text);

	/* html_safe: the same document without a single '<'. */
	text = render_mem(p, true, &len);
	cr_assert_null(memchr(text, '<', len), "'<' left in the html-safe JSON");
	root = parse_strict(text, len);
	check_tricky(root);
	json_object_put(root);
	free(text);
	os_profile_free(p);
}

/* The replica field: null without --replicas, else the figures of
 * replica_math.h, each null when it cannot be computed. */
Test(report, json_replica_field)
{
	struct os_profile *p = build_small();
	json_object *root, *objs, *r;
	double theta = 9.0 / 10, alpha = 1.0 / 4, q = (theta - alpha) / (1 - alpha), x1 = 100 - 1;
	double gamma = 1 / (2 * x1) + sqrt(1 / (4 * x1 * x1) + q);
	size_t len, i;
	char *text;

	text = render_mem(p, false, &len);
	root = parse_strict(text, len);
	objs = get(root, "objects");
	for (i = 0; i < json_object_array_length(objs); i++)
		cr_assert_null(get(json_object_array_get_idx(objs, i), "replica"));
	json_object_put(root);
	free(text);

	/* Rank 1 is the double[] context (100 allocations): everything measured;
	 * rank 2 (150 allocations): comparisons only; the others: nothing. */
	p->analyses |= OS_AN_REPLICAS;
	for (i = 0; i < p->ncontexts; i++) {
		if (p->contexts[i].allocations == 100)
			p->contexts[i].replica = (struct os_replica){
				.equivalent = 9, .different = 1, .full_checks = 6,
				.full_differ = 4, .full_differ_match = 1, .exact_objects = 8,
				.exact_twins = 3 };
		if (p->contexts[i].allocations == 150)
			p->contexts[i].replica = (struct os_replica){ .equivalent = 1,
								      .different = 2 };
	}
	text = render_mem(p, false, &len);
	root = parse_strict(text, len);
	objs = get(root, "objects");

	r = get(json_object_array_get_idx(objs, 0), "replica");
	cr_assert(json_object_is_type(r, json_type_object));
	cr_assert(json_object_get_double(get(r, "theta")) == theta);
	cr_assert(json_object_get_double(get(r, "alpha")) == alpha);
	cr_assert(json_object_get_double(get(r, "omega")) == theta - alpha);
	cr_assert(json_object_get_double(get(r, "gamma")) == gamma, "gamma %.17g, want %.17g",
		  json_object_get_double(get(r, "gamma")), gamma);
	cr_assert(json_object_get_double(get(r, "exact")) == 3.0 / 8);
	cr_assert_eq(iget(r, "comparisons"), 10);
	cr_assert_eq(iget(r, "alpha_checks"), 4);
	cr_assert_eq(iget(r, "exact_objects"), 8);

	r = get(json_object_array_get_idx(objs, 1), "replica");
	cr_assert(json_object_get_double(get(r, "theta")) == 1.0 / 3);
	cr_assert_null(get(r, "alpha"));
	cr_assert(json_object_get_double(get(r, "omega")) == 1.0 / 3);
	cr_assert(json_object_is_type(get(r, "gamma"), json_type_double));
	cr_assert_null(get(r, "exact"));
	cr_assert_eq(iget(r, "comparisons"), 3);
	cr_assert_eq(iget(r, "alpha_checks"), 0);

	for (i = 2; i < 4; i++) {
		r = get(json_object_array_get_idx(objs, i), "replica");
		cr_assert(json_object_is_type(r, json_type_object));
		cr_assert_null(get(r, "theta"));
		cr_assert_null(get(r, "alpha"));
		cr_assert_null(get(r, "omega"));
		cr_assert_null(get(r, "gamma"));
		cr_assert_null(get(r, "exact"));
		cr_assert_eq(iget(r, "comparisons"), 0);
		cr_assert_eq(iget(r, "exact_objects"), 0);
	}
	json_object_put(root);
	free(text);
	os_profile_free(p);
}

/* A full disk: the writer stops and says so; nothing claims success. */
Test(report, json_write_error_is_returned)
{
	struct os_profile *p = build_small();
	struct report_opts o = { .format = "json" };
	struct report_view v;
	FILE *full = fopen("/dev/full", "w");

	if (!full)
		cr_skip_test("no /dev/full here");
	cr_assert_eq(report_view_build(&v, p), 0);
	cr_assert_eq(report_json_write(&v, &o, full, false), -ENOSPC);
	cr_assert_eq(report_render_json(&v, &o, full), 0, "write errors are left to the caller");
	cr_assert(ferror(full));
	fclose(full);
	report_view_free(&v);
	os_profile_free(p);
}

/* -o naming something that is not a regular file (/dev/null, a FIFO) is
 * written directly: a file renamed over it would replace it (a bench run
 * with -o /dev/null once turned /dev/null into a regular file). */
Test(report, output_to_a_fifo_keeps_the_fifo)
{
	char *fifo = rpath("fifo"), buf[65536];
	json_object *root;
	struct stat st;
	ssize_t n;
	int fd;

	write_profile(build_small(), rpath("small.data"));
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK); /* the report (< 64 KiB) fits the pipe */
	cr_assert_geq(fd, 0);
	cr_assert_eq(REPORT("--format", "json", "-o", fifo, rpath("small.data")), 0);
	cr_assert_eq(lstat(fifo, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file");
	cr_assert_neq(stat(rpath("fifo.tmp"), &st), 0, "a temporary file was made");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0, "nothing came through the FIFO");
	buf[n] = 0;
	root = parse_strict(buf, (size_t)n);
	cr_assert_eq(iget(get(root, "meta"), "samples_total"), 1000);
	json_object_put(root);
}

/* A symlink planted at the old temporary name or at the output
 * (by another user) is replaced, never written through; the report gets
 * 0666 & ~umask; a device or a directory is refused before loading. */
Test(report, planted_links_not_written_through)
{
	char victim[160], out[160], buf[16] = "";
	struct stat st;
	mode_t um;
	int fd;

	snprintf(victim, sizeof(victim), "%s", rpath("victim"));
	snprintf(out, sizeof(out), "%s", rpath("r.json"));
	write_profile(build_small(), rpath("small.data"));
	fd = open(victim, O_WRONLY | O_CREAT, 0644);
	cr_assert_eq(write(fd, "precious", 8), 8);
	close(fd);
	cr_assert_eq(symlink(victim, rpath("r.json.tmp")), 0);
	cr_assert_eq(symlink(victim, out), 0);
	cr_assert_eq(lchown(out, 65534, 65534), 0);
	um = umask(027);
	cr_assert_eq(REPORT("--format", "json", "-o", out, rpath("small.data")), 0);
	umask(um);
	fd = open(victim, O_RDONLY);
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 8);
	close(fd);
	cr_assert_str_eq(buf, "precious");
	cr_assert_eq(lstat(out, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the planted link was not replaced");
	cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", st.st_mode & 0777);
	json_object_put(load_json(out));
	cr_assert_eq(lstat(rpath("r.json.tmp"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_neq(REPORT("--format", "json", "-o", "/dev/zero", rpath("small.data")), 0);
	cr_assert_neq(REPORT("--format", "json", "-o", rpath(""), rpath("small.data")), 0);
}

/* The text header shows a hostile command line quoted the way a shell reads
 * it back: one line, no raw control or invalid bytes, and bash turns it into
 * the same arguments again. */
Test(report, text_command_line_is_escaped)
{
	static const char *const hostile[] = {
		"prog", "two words", "it's", "line1\nline2", "tab\there\x01\x7f",
		"bad\xff\xc3(", "quote'and\\back\r", "\x1b[31mred", "caf\xc3\xa9", "",
		"csi\xc2\x9b", "a\xed\xa0\x80", "$HOME;`id`",
	};
	const size_t n = sizeof(hostile) / sizeof(hostile[0]);
	const char *want = "# command:     prog 'two words' 'it'\\''s' $'line1\\nline2' "
			   "$'tab\\there\\x01\\x7f' $'bad\\xff\\xc3(' $'quote\\'and\\\\back\\r' "
			   "$'\\e[31mred' 'caf\xc3\xa9' '' $'csi\\xc2\\x9b' $'a\\xed\\xa0\\x80' "
			   "'$HOME;`id`'\n";
	struct os_profile *p = os_profile_new();
	char *txt, *line, *end, *script, cmd[512];
	const char *at;
	size_t i, len;
	FILE *f;
	int st;

	os_profile_set_argv(p, (int)n, (char **)hostile);
	write_profile(p, rpath("hostile.data"));
	cr_assert_eq(REPORT("-v", "-o", rpath("h.txt"), rpath("hostile.data")), 0);
	txt = slurp_text(rpath("h.txt"));
	line = strstr(txt, "# command:");
	cr_assert_not_null(line, "%s", txt);
	end = strchr(line, '\n');
	cr_assert_not_null(end);
	cr_assert_eq(strncmp(end + 1, "# pids:", 7), 0, "the command line was split:\n%s", txt);
	for (at = line; at < end; at++)
		cr_assert((unsigned char)*at >= 0x20 && *at != 0x7f,
			  "raw control byte 0x%02x in the command line", (unsigned char)*at);
	len = (size_t)(end - line) + 1;
	cr_assert_eq(len, strlen(want), "got:\n%.*s", (int)len, line);
	cr_assert_eq(memcmp(line, want, len), 0, "got:\n%.*swant:\n%s", (int)len, line, want);

	/* Read back by bash: each argument, NUL-terminated, byte for byte. */
	script = rpath("args.sh");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "printf '%%s\\0' %.*s\n", (int)(end - line - 15), line + 15);
	cr_assert_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "bash %s > %s 2>/dev/null", script, rpath("args.out"));
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		cr_skip_test("no bash to read the command line back");
	cr_assert_eq(WEXITSTATUS(st), 0, "bash could not read the command line back");
	f = fopen(rpath("args.out"), "r");
	cr_assert_not_null(f);
	for (i = 0; i < n; i++) {
		char arg[64];
		size_t k = 0;
		int c;

		while ((c = fgetc(f)) != EOF && c && k < sizeof(arg) - 1)
			arg[k++] = (char)c;
		cr_assert_eq(c, 0, "argument %zu not read back", i);
		arg[k] = 0;
		cr_assert_str_eq(arg, hostile[i], "argument %zu read back differently", i);
	}
	cr_assert_eq(fgetc(f), EOF, "bash read more arguments than there were");
	fclose(f);
	free(txt);
}

/* Names that come from the target (thread names, frames, types) and notes
 * are printed with control characters and bad UTF-8 as \xNN: no report line
 * is split and no escape sequence reaches the terminal. */
Test(report, text_free_text_is_escaped)
{
	struct os_profile *p = os_profile_new();
	uint32_t f, s, ctx;
	char *txt;
	size_t lines = 0;

	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 10;
	p->c.samples_attributed = 10;
	f = ut_frame(p, OS_FRAME_NATIVE, "evil\nframe\x1b[2J", "/opt/app/bin/app", NULL, 0, 0x10);
	s = os_profile_stack(p, &f, 1);
	ctx = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "T\rype\xff"), .stack = s, .allocations = 1,
		.bytes = 4096, .samples = 10 });
	os_profile_add_access(p, &(struct os_access){ .context = ctx, .stack = s, .samples = 10 });
	thread(p, OS_THR_NATIVE, "thr\n\x07name", 7, 10);
	os_profile_add_note(p, "note with\na newline");
	write_profile(p, rpath("free.data"));
	cr_assert_eq(REPORT("-v", "-o", rpath("free.txt"), rpath("free.data")), 0);
	txt = slurp_text(rpath("free.txt"));
	for (const char *c = txt; *c; c++) {
		cr_assert((unsigned char)*c >= 0x20 || *c == '\n',
			  "raw control byte 0x%02x in:\n%s", (unsigned char)*c, txt);
		cr_assert((unsigned char)*c != 0xff, "raw invalid UTF-8 in:\n%s", txt);
		lines += *c == '\n';
	}
	cr_assert_not_null(strstr(txt, "evil\\x0aframe\\x1b[2J"), "%s", txt);
	cr_assert_not_null(strstr(txt, "T\\x0dype\\xff"), "%s", txt);
	cr_assert_not_null(strstr(txt, "thr\\x0a\\x07name"), "%s", txt);
	cr_assert_not_null(strstr(txt, "# note:        note with\\x0aa newline\n"), "%s", txt);
	cr_assert_gt(lines, 5);
	free(txt);
}

/* The short header names every loss counter that is not zero, and no other;
 * notes are counted, shown with -v. */
Test(report, text_short_header_keeps_losses)
{
	struct os_profile *p = build_small();
	char *txt;

	p->c.lost = 0;
	p->c.dropped_events = 0;
	p->c.bad_events = 3;
	p->c.truncated_paths = 1;
	os_profile_add_note(p, "second note");
	write_profile(p, rpath("loss.data"));
	cr_assert_eq(REPORT("-o", rpath("loss.txt"), rpath("loss.data")), 0);
	txt = slurp_text(rpath("loss.txt"));
	cr_assert_not_null(strstr(txt, "\n# lost:        3 malformed events, 1 allocation path"
				       " cut at the frame limit\n"), "%s", txt);
	cr_assert_null(strstr(txt, "note:"), "a note in the short header:\n%s", txt);
	cr_assert_not_null(strstr(txt, "# -v shows 2 notes,"), "%s", txt);
	free(txt);

	p = build_small();
	p->c.lost = p->c.dropped_events = 0;
	txt = short_text(p, "noloss");
	cr_assert_null(strstr(txt, "# lost:"), "a loss line without a loss:\n%s", txt);
	free(txt);

	/* hybrid mode's small Java allocations outside TLABs (never sampled):
	 * a loss from 1% of them and the objects estimated, not below (HotSpot
	 * makes a few on its own) */
	for (int many = 0; many < 2; many++) {
		p = build_small();
		p->c.lost = p->c.dropped_events = 0;
		p->c.objects_estimated = 9900;
		p->c.small_outside_tlab = many ? 150 : 99;
		txt = short_text(p, many ? "many" : "few");
		if (many)
			cr_assert_not_null(strstr(txt, "\n# lost:        150 small Java allocations "
						       "outside TLABs, never sampled (-v: the notes "
						       "say why)\n"), "%s", txt);
		else
			cr_assert_null(strstr(txt, "# lost:"), "99 of 9,999 outside TLABs said as a "
				       "loss:\n%s", txt);
		free(txt);
	}

	/* with estimates, the estimated total, which ranks the objects */
	p = build_small();
	p->contexts[1].samples_est = 1000;
	p->est.samples_attributed = 1350;
	p->analyses |= OS_AN_ESTIMATES;
	write_profile(p, rpath("est.data"));
	cr_assert_eq(REPORT("-o", rpath("est.txt"), rpath("est.data")), 0);
	txt = slurp_text(rpath("est.txt"));
	cr_assert_not_null(strstr(txt, "# samples:     500 of 1000 attributed to objects (50.0%); 1350"
				       " estimated (Horvitz-Thompson), which rank the objects\n"),
			   "%s", txt);
	cr_assert_not_null(strstr(txt, "# -v shows 2 notes,"), "the estimates' note not counted:\n%s",
			   txt);
	free(txt);
}

/* A context found at samples only (a synthetic first frame, no allocation
 * counted: objects smaller than --min-size, or born before an attach) shows
 * "-" for allocations and bytes in the text report: unknown, not zero. */
Test(report, text_unknown_allocations_are_dashes)
{
	struct os_profile *p = build_small();
	uint32_t f = ut_frame(p, OS_FRAME_SYNTHETIC,
			      "[smaller than --min-size: not tracked, found at the sample]", NULL,
			      NULL, 0, 0);
	char *txt, *row;

	os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "pkg.Node"), .stack = os_profile_stack(p, &f, 1),
		.samples = 400 });
	write_profile(p, rpath("dash.data"));
	cr_assert_eq(REPORT("-o", rpath("dash.txt"), rpath("dash.data")), 0);
	txt = slurp_text(rpath("dash.txt"));
	row = strstr(txt, "pkg.Node");
	cr_assert_not_null(row, "no pkg.Node row:\n%s", txt);
	while (row > txt && row[-1] != '\n')
		row--;
	cr_assert(strncmp(row, "     1 ", 7) == 0, "pkg.Node does not rank first:\n%s", txt);
	cr_assert_not_null(strstr(row, "400            -           -  pkg.Node"),
			   "allocations and bytes not shown as unknown: %.120s", row);
	/* a context with a real allocation path keeps its figures */
	cr_assert_not_null(strstr(txt, "300          100   781.2 KiB  double[]"),
			   "double[] row changed:\n%s", txt);
	free(txt);
}

/* --no-lines: frames without their lines (and named native frames without
 * their addresses), so contexts and access paths that differed only by a
 * line are one: a site called from two lines of its caller, and two
 * accesses at two lines of one function. */
Test(report, no_lines_merges_contexts_that_differ_by_lines)
{
	struct os_profile *p = os_profile_new();
	uint32_t make = java(p, "F.make", "F.java", 12);
	uint32_t s1 = os_profile_stack(p, (uint32_t[]){ make, java(p, "F.build", "F.java", 20) }, 2);
	uint32_t s2 = os_profile_stack(p, (uint32_t[]){ make, java(p, "F.build", "F.java", 22) }, 2);
	uint32_t g1 = ut_frame(p, OS_FRAME_NATIVE, "get", "/opt/app", "/src/get.c", 7, 0x1010);
	uint32_t g2 = ut_frame(p, OS_FRAME_NATIVE, "get", "/opt/app", "/src/get.c", 9, 0x1040);
	uint32_t a1 = os_profile_stack(p, (uint32_t[]){ g1 }, 1);
	uint32_t a2 = os_profile_stack(p, (uint32_t[]){ g2 }, 1);
	uint32_t c1, c2;
	json_object *root, *o, *acc;

	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 40;
	p->c.samples_attributed = 40;
	c1 = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "long[]"), .stack = s1, .allocations = 3, .bytes = 300,
		.samples = 30 });
	c2 = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "long[]"), .stack = s2, .allocations = 1, .bytes = 100,
		.samples = 10 });
	os_profile_add_access(p, &(struct os_access){ .context = c1, .stack = a1, .samples = 20 });
	os_profile_add_access(p, &(struct os_access){ .context = c1, .stack = a2, .samples = 10 });
	os_profile_add_access(p, &(struct os_access){ .context = c2, .stack = a1, .samples = 10 });
	write_profile(p, rpath("l.data"));

	cr_assert_eq(REPORT("--format", "json", "-o", rpath("l.json"), rpath("l.data")), 0);
	root = load_json(rpath("l.json"));
	cr_assert_eq(json_object_array_length(get(root, "objects")), 2, "lines kept apart");
	o = json_object_array_get_idx(get(root, "objects"), 0);
	assert_frames(get(o, "alloc_stack"), (const char *[]){ "F.make(F.java:12)",
							      "F.build(F.java:20)" }, 2);
	json_object_put(root);

	cr_assert_eq(REPORT("--format", "json", "--no-lines", "-o", rpath("n.json"),
			    rpath("l.data")), 0);
	root = load_json(rpath("n.json"));
	cr_assert_eq(json_object_array_length(get(root, "objects")), 1, "contexts not merged");
	o = json_object_array_get_idx(get(root, "objects"), 0);
	cr_expect_eq(iget(o, "samples"), 40);
	cr_expect_eq(iget(o, "allocations"), 4);
	cr_expect_eq(iget(o, "bytes"), 400);
	assert_frames(get(o, "alloc_stack"), (const char *[]){ "F.make", "F.build" }, 2);
	acc = get(o, "accesses");
	cr_assert_eq(json_object_array_length(acc), 1, "access paths not merged");
	cr_expect_eq(iget(json_object_array_get_idx(acc, 0), "samples"), 40);
	assert_frames(get(json_object_array_get_idx(acc, 0), "stack"), (const char *[]){ "get" },
		       1);
	json_object_put(root);
}

/* JSON frames (version 2) of the other kinds: a stripped module's frame
 * with its nearest export and build-id, libjvm.so code ("jvm"), a kernel
 * and a synthetic frame; each object on one line, and the same text in an
 * allocation path and an access path (the cached form). */
Test(report, json_frame_objects)
{
	struct os_profile *p = os_profile_new();
	struct os_frame sf = {
		.kind = OS_FRAME_NATIVE, .name = OS_NONE, .file = OS_NONE,
		.module = os_profile_string(p, "/usr/lib/liblzma.so.5"), .addr = 0x158e2,
		.near_sym = os_profile_string(p, "lzma_crc64"), .near_off = 0x1ac2,
		.build_id = os_profile_string(p, "0123abcd"),
	};
	uint32_t stripped = os_profile_frame(p, &sf);
	uint32_t jvm = ut_frame(p, OS_FRAME_NATIVE, "JVM_Alloc", "/jdk/lib/server/libjvm.so", NULL,
				0, 0x4000);
	uint32_t kern = ut_frame(p, OS_FRAME_KERNEL, "clear_page_erms", NULL, NULL, 0, 0);
	uint32_t syn = ut_frame(p, OS_FRAME_SYNTHETIC, "[allocated before attach]", NULL, NULL, 0,
				0);
	uint32_t st = os_profile_stack(p, (uint32_t[]){ stripped, jvm, kern, syn }, 4);
	uint32_t c;
	json_object *root, *o, *fr, *ne, *acc;
	char *txt, *line;

	p->c.samples_total = p->c.samples_addressed = p->c.samples_heap = 10;
	p->c.samples_attributed = 10;
	c = os_profile_add_context(p, &(struct os_context){
		.type = os_profile_string(p, "buf"), .stack = st, .allocations = 1, .bytes = 64,
		.samples = 10 });
	os_profile_add_access(p, &(struct os_access){ .context = c, .stack = st, .samples = 10 });
	write_profile(p, rpath("k.data"));
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("k.json"), rpath("k.data")), 0);
	root = load_json(rpath("k.json"));
	o = json_object_array_get_idx(get(root, "objects"), 0);
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 0);
	cr_assert_null(get(fr, "function"));
	cr_assert_str_eq(sget(fr, "module"), "/usr/lib/liblzma.so.5");
	cr_assert_str_eq(sget(fr, "kind"), "native");
	cr_assert_eq(iget(fr, "offset"), 0x158e2);
	cr_assert_null(get(fr, "address"));
	ne = get(fr, "nearest_export");
	cr_assert_str_eq(sget(ne, "symbol"), "lzma_crc64");
	cr_assert_eq(iget(ne, "offset"), 0x1ac2);
	cr_assert_str_eq(sget(fr, "build_id"), "0123abcd");
	cr_assert_str_eq(sget(fr, "text"), "liblzma.so.5+0x158e2 (nearest export: lzma_crc64+0x1ac2)");
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 1);
	cr_assert_str_eq(sget(fr, "kind"), "jvm");
	cr_assert_str_eq(sget(fr, "function"), "JVM_Alloc");
	cr_assert_eq(iget(fr, "offset"), 0x4000);
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 2);
	cr_assert_str_eq(sget(fr, "kind"), "kernel");
	cr_assert_str_eq(sget(fr, "text"), "clear_page_erms [kernel]");
	cr_assert_null(get(fr, "module"));
	cr_assert_null(get(fr, "offset"));
	fr = json_object_array_get_idx(get(o, "alloc_stack"), 3);
	cr_assert_str_eq(sget(fr, "kind"), "synthetic");
	cr_assert_str_eq(sget(fr, "function"), "[allocated before attach]");
	acc = get(json_object_array_get_idx(get(o, "accesses"), 0), "stack");
	cr_assert(json_object_equal(get(o, "alloc_stack"), acc), "access path frames differ");
	json_object_put(root);

	/* one line per frame, written alike at both depths */
	txt = slurp_text(rpath("k.json"));
	line = strstr(txt, "{\"function\": null, \"file\": null, \"line\": null, \"column\": null, "
			   "\"module\": \"/usr/lib/liblzma.so.5\", \"kind\": \"native\", "
			   "\"offset\": 88290, ");
	cr_assert_not_null(line, "stripped frame not on one line:\n%s", txt);
	cr_assert_not_null(strstr(line + 1, "{\"function\": null, \"file\": null, \"line\": null, "
					    "\"column\": null, \"module\": \"/usr/lib/liblzma.so.5\""),
			   "access path frame not written alike:\n%s", txt);
	free(txt);
}

/* Estimates with their variances (OS_AN_EST_VAR): the ranking's figure
 * with its 90% interval ("±"), the top rows whose intervals overlap say
 * so, a split of a class's samples resting on allocation volume alone
 * says so and what would settle it; the JSON the same (interval,
 * path.evidence_samples, path.split_by_volume). double[] 400 (se 200,
 * 300 exact) and byte[] 380 (se 190, 50 exact, the rest estimated), both
 * sites of their class with no evidence; the native block 40 (se 6.3). */
Test(report, estimates_with_intervals)
{
	struct os_profile *p = build_small();
	json_object *root, *o0, *o1, *iv;
	char *txt;

	/* contexts: 0 byte[] (50 samples), 1 double[] (300), 2 native (150), 3 byte[] */
	p->contexts[1].samples_est = 400;
	p->contexts[1].samples_var = 200 * 200;
	p->contexts[0].samples_est = 380;
	p->contexts[0].samples_var = 190 * 190;
	p->contexts[2].samples_est = 40;
	p->contexts[2].samples_var = 40;
	for (int i = 0; i < 2; i++)
		p->contexts[i].pe = (struct os_pathest){ .kind = OS_PATH_SITE, .class_sites = 2,
							 .path_est = p->contexts[i].samples_est -
								     (double)p->contexts[i].samples,
							 .seen = 3, .class_seen = 6, .evidence = 0 };
	p->est.samples_attributed = 820;
	p->analyses |= OS_AN_ESTIMATES | OS_AN_EST_VAR | OS_AN_PATHEST;
	write_profile(p, rpath("iv.data"));
	cr_assert_eq(REPORT("-o", rpath("iv.txt"), rpath("iv.data")), 0);
	txt = slurp_text(rpath("iv.txt"));
	cr_assert_not_null(strstr(txt, "(est. 400 ±329)"), "no interval on the figure:\n%s", txt);
	cr_assert_not_null(strstr(txt, "        interval: share 48.78% ±40.12 (90%); cannot be told "
				       "apart from rank 2 (intervals overlap)\n"), "%s", txt);
	cr_assert_not_null(strstr(txt, "        uncertain: the split between this class's "
				       "allocation sites rests on allocation volume alone"),
			   "%s", txt);
	cr_assert_not_null(strstr(txt, "--java-objects exact, or a longer run, would settle it"),
			   "%s", txt);
	free(txt);
	cr_assert_eq(REPORT("--format", "json", "-o", rpath("iv.json"), rpath("iv.data")), 0);
	root = load_json(rpath("iv.json"));
	o0 = json_object_array_get_idx(get(root, "objects"), 0);
	o1 = json_object_array_get_idx(get(root, "objects"), 1);
	iv = get(o0, "interval");
	cr_assert(json_object_get_boolean(get(iv, "overlaps_next")));
	cr_assert_float_eq(json_object_get_double(get(iv, "samples_estimated_se")), 200, 1e-9);
	cr_assert_float_eq(json_object_get_double(get(iv, "samples_estimated_high")),
			   400 + 1.6448536269514722 * 200, 1e-6);
	/* double[]: 300 of its 400 exact, not mostly estimated; byte[]: 330 of 380 */
	cr_assert_not(json_object_get_boolean(get(get(o0, "path"), "split_by_volume")));
	cr_assert(json_object_get_boolean(get(get(o1, "path"), "split_by_volume")));
	cr_assert_float_eq(json_object_get_double(get(get(o1, "path"), "evidence_samples")), 0,
			   1e-12);
	cr_assert_not(json_object_get_boolean(get(get(o1, "interval"), "overlaps_next")),
		      "380 ±313 and 40 ±10 are apart");
	json_object_put(root);
}
